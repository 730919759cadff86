//! What a controller sees of the world when the block layer calls into it,
//! and what it tells the block layer back.

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
    /// Told back by an rq_qos member's `throttle`: whether its `next_timer`
    /// may have moved, so that the block layer re-arms its timer. True
    /// before every call: a member that never clears it is re-armed after
    /// each one.
    pub timer_moved: bool,
}

impl Ctx<'_> {
    pub fn jiffies(&self) -> u64 {
        self.hz.jiffies(self.now)
    }
}
