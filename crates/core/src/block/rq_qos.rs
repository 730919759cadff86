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

/// A set of rq_qos hooks, as bits: what [`RqQos::hooks`] answers. A member
/// leaves a hook out only where its implementation of that hook does
/// nothing (the trait's default, or a body switched off); leaving out
/// `TIMER_ON_DONE` says that nothing but `throttle`, `timer` and a cgroup
/// file write moves its `next_timer`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QosHooks(u8);

impl QosHooks {
    pub const NONE: QosHooks = QosHooks(0);
    pub const THROTTLE: QosHooks = QosHooks(1);
    pub const MERGE: QosHooks = QosHooks(1 << 1);
    pub const TRACK: QosHooks = QosHooks(1 << 2);
    pub const ISSUE: QosHooks = QosHooks(1 << 3);
    pub const DONE: QosHooks = QosHooks(1 << 4);
    pub const DONE_BIO: QosHooks = QosHooks(1 << 5);
    pub const RETURN_DELAY: QosHooks = QosHooks(1 << 6);
    /// `merge`, `done`, `done_bio` or `return_delay` may move the member's
    /// `next_timer`: the block layer re-arms its timer after each completion
    /// (a member without it is re-armed after `throttle`, its timer and a
    /// file write only).
    pub const TIMER_ON_DONE: QosHooks = QosHooks(1 << 7);
    pub const ALL: QosHooks = QosHooks(u8::MAX);

    /// Whether every hook of `h` is in the set.
    #[inline]
    pub const fn has(self, h: QosHooks) -> bool {
        self.0 & h.0 == h.0
    }

    #[inline]
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }
}

impl std::ops::BitOr for QosHooks {
    type Output = QosHooks;
    fn bitor(self, o: QosHooks) -> QosHooks {
        QosHooks(self.0 | o.0)
    }
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
    /// Which of the hooks above this member acts in ([`QosHooks`]). The
    /// block layer calls a member only in the hooks it names, and skips a
    /// hook's walk altogether on a device where no member names it (a chain
    /// of blk-iotrack alone with its counting off is not walked at all).
    /// The answer may change only through a call the machine follows with
    /// `DevState::note_qos_members` (today `Sim::set_iotrack_counting`).
    /// The default, every hook, is always safe.
    fn hooks(&self) -> QosHooks {
        QosHooks::ALL
    }
    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
}
