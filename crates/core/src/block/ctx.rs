//! What a controller sees of the world when the block layer calls into it.

use crate::block::blk_cgroup::CgroupTree;
use crate::block::disk::DeviceInfo;
use crate::sim::switches::Switches;
use crate::sim::time::{Hz, Ns};
use crate::sim::trace::Tracer;

pub struct Ctx<'a> {
    pub now: Ns,
    pub hz: Hz,
    pub dev: &'a DeviceInfo,
    pub cgroups: &'a CgroupTree,
    pub switches: &'a Switches,
    pub trace: &'a mut Tracer,
}

impl Ctx<'_> {
    pub fn jiffies(&self) -> u64 {
        self.hz.jiffies(self.now)
    }
}
