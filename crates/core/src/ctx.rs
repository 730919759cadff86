//! What a controller sees of the world when the block layer calls into it.

use crate::cgroup::CgroupTree;
use crate::device::DeviceInfo;
use crate::switches::Switches;
use crate::time::{Hz, Ns};
use crate::trace::Tracer;

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
