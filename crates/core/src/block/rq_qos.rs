//! The rq_qos chain (block/blk-rq-qos.h): controllers that sit between bio
//! submission and request allocation (iocost, iolatency, wbt) and are told about
//! merges, issues and completions. The block layer calls every member in order;
//! blk-iocost is first, as in the kernel (it registers with RQ_QOS_COST).

use std::any::Any;

use crate::block::bio::{Bio, BioId};
use crate::block::blk_cgroup::CgId;
use crate::block::ctx::Ctx;
use crate::block::request::Request;
use crate::sim::time::Ns;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QosVerdict {
    /// The bio may allocate a request now.
    Proceed,
    /// The controller keeps the bio (its submitter sleeps, as in `rq_qos_throttle`);
    /// it hands the id back later through a `released` list.
    Wait,
}

pub trait RqQos {
    fn name(&self) -> &'static str;

    /// `rq_qos_throttle`: before request allocation, in the submitter's context.
    fn throttle(&mut self, _ctx: &mut Ctx, _id: BioId, _bio: &mut Bio) -> QosVerdict {
        QosVerdict::Proceed
    }
    /// `rq_qos_merge`: `bio` is being merged into the queued request `rq`.
    fn merge(&mut self, _ctx: &mut Ctx, _rq: &Request, _bio: &mut Bio) {}
    /// `rq_qos_track`: `bio` got its own request `rq`.
    fn track(&mut self, _ctx: &mut Ctx, _rq: &Request, _bio: &Bio) {}
    /// `rq_qos_issue`: `rq` is issued to the driver.
    fn issue(&mut self, _ctx: &mut Ctx, _rq: &Request) {}
    /// `rq_qos_done`: `rq` completed. Bios the controller releases go to `released`.
    fn done(&mut self, _ctx: &mut Ctx, _rq: &Request, _released: &mut Vec<BioId>) {}
    /// `rq_qos_done_bio`: a bio completed (called for every bio, with its Q/D stamps).
    fn done_bio(&mut self, _ctx: &mut Ctx, _bio: &Bio, _released: &mut Vec<BioId>) {}
    /// The controller's timer fired (it asked for `next_timer`).
    fn timer(&mut self, _ctx: &mut Ctx, _released: &mut Vec<BioId>) {}
    /// When the controller wants `timer` called next, if at all.
    fn next_timer(&self) -> Option<Ns> {
        None
    }
    /// `blkcg_maybe_throttle_current`: a delay the submitting task serves on its
    /// way back to user space (iocost's use_delay), in ns from now.
    fn return_delay(&mut self, _ctx: &mut Ctx, _cg: CgId) -> Ns {
        0
    }
    /// This controller's fields in the cgroup's io.stat line for the device
    /// (e.g. iocost's ` cost.vrate=… cost.usage=…`), leading space included.
    fn io_stat(&self, _cg: CgId) -> String {
        String::new()
    }
    /// A cgroup file write mid-run (io.weight, io.cost.qos…); Err if not this controller's.
    fn write_file(
        &mut self,
        _ctx: &mut Ctx,
        _cg: CgId,
        _file: &str,
        _value: &str,
    ) -> Option<Result<(), crate::sim::kerr::KernelError>> {
        None
    }
    /// Whether any per-I/O hook above (throttle to done_bio, return_delay)
    /// or the timer can do something now. When no member of a device's chain
    /// can, the block layer skips the chain on that device's I/Os
    /// (`DevState::qos_idle`). The answer may change only through a call the
    /// machine follows with `DevState::note_qos_members` (today
    /// `Sim::set_iotrack_counting`).
    fn per_io(&self) -> bool {
        true
    }
    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
}
