//! I/O schedulers (the blk-mq elevator interface, `struct elevator_mq_ops`).
//!
//! The block layer inserts requests and asks for the next one to dispatch
//! whenever the device can take more. `none` is a FIFO; mq-deadline is its own
//! module.

pub mod bfq;
pub mod mq_deadline;
pub mod none;
pub mod queue_run;

use crate::block::bio::{Bio, BioId};
use crate::block::ctx::Ctx;
use crate::block::request::{ReqId, Request};
use crate::sim::slab::Slab;

pub trait Elevator {
    /// The name in /sys/block/DEV/queue/scheduler.
    fn name(&self) -> &'static str;
    /// `bio_merge` (blk_mq_sched_bio_merge): merge `bio` into a request the
    /// scheduler holds; on success the request is grown in `reqs` and returned.
    fn bio_merge(
        &mut self,
        _ctx: &mut Ctx,
        _reqs: &mut Slab<Request>,
        _id: BioId,
        _bio: &Bio,
    ) -> Option<ReqId> {
        None
    }
    /// Whether `bio_merge` can merge anything: false lets the block layer
    /// skip the call (and the look for requests it merged away) on every
    /// bio. True by default; only a scheduler whose `bio_merge` is the
    /// default's says false.
    fn merges_bios(&self) -> bool {
        true
    }
    /// `insert_requests`
    fn insert(&mut self, ctx: &mut Ctx, reqs: &mut Slab<Request>, rq: ReqId);
    /// `dispatch_request`: the next request for the driver, if any.
    fn dispatch(&mut self, ctx: &mut Ctx, reqs: &mut Slab<Request>) -> Option<ReqId>;
    /// `has_work`
    fn has_work(&self) -> bool;
    /// `finish_request` / `completed_request`
    fn completed(&mut self, _ctx: &mut Ctx, _reqs: &Slab<Request>, _rq: ReqId) {}
    /// Whether `completed` does anything: false lets the completion path
    /// skip the call ([`ElvHooks`]). True by default; only a scheduler
    /// that keeps the default `completed` says false.
    fn sees_completions(&self) -> bool {
        true
    }
    /// Requests the scheduler merged away into others (request-request and
    /// insert merges): their bios now belong to the survivor, and the block
    /// layer frees them as `blk_mq_free_request` does.
    fn take_freed(&mut self, _out: &mut Vec<ReqId>) {}
    /// Whether `take_freed` can ever give a request: false lets the block
    /// layer skip the call on every request (read once, at the device's
    /// set-up, into [`ElvHooks`]). True by default; only a
    /// scheduler that keeps the default `take_freed` says false.
    fn frees_merged(&self) -> bool {
        true
    }
    /// Requests held by the scheduler (not yet dispatched).
    fn queued(&self) -> usize;
    /// When the scheduler wants the queue run again even without a new
    /// insertion or completion (e.g. a delayed dispatch), if ever.
    fn next_run(&self) -> Option<crate::sim::time::Ns> {
        None
    }
    /// Whether `next_run` can ever be `Some`: false lets a queue run that
    /// has nothing to dispatch return before it asks (read once, at the
    /// device's set-up, into [`ElvHooks`]). True by default; only
    /// a scheduler that keeps the default `next_run` says false.
    fn arms_runs(&self) -> bool {
        true
    }
    /// Whether a queue run now would reach the scheduler's dispatch: the
    /// completion path asks before it runs the queue asynchronously
    /// through kblockd (machine/kblockd.rs), where a run the kernel does
    /// not make costs a kernel thread's wake-up. True by default.
    fn wants_run(&self, _now: crate::sim::time::Ns) -> bool {
        true
    }
    /// The run under way goes on at this instant (the scheduler's lock is
    /// held until then): a kblockd run holds its CPU until then and makes
    /// its next pass, instead of ending. None by default.
    fn run_resumes_at(&self) -> Option<crate::sim::time::Ns> {
        None
    }
    /// The block layer queued an asynchronous run of the hardware queue
    /// (`blk_mq_delay_run_hw_queue(hctx, 0)`) outside the scheduler's own
    /// calls. Nothing by default.
    fn run_async(&mut self) {}
    /// Write a tunable (/sys/block/DEV/queue/iosched/NAME).
    fn set_tunable(&mut self, name: &str, _value: &str) -> Result<(), String> {
        Err(format!(
            "scheduler '{}' has no tunable '{name}'",
            self.name()
        ))
    }
    /// Tunables and their current values, sorted by name.
    fn tunables(&self) -> Vec<(String, String)> {
        Vec::new()
    }
    /// The minimum shallow depth the scheduler sets on its tags
    /// (`sbitmap_queue_min_shallow_depth`), which `wake_batch` counts with;
    /// `NO_SHALLOW_LIMIT` for a scheduler that sets none.
    fn min_shallow_depth(&self) -> u32 {
        crate::block::sbitmap::NO_SHALLOW_LIMIT
    }
    /// `limit_depth`: the shallow depth (`data->shallow_depth`, bits per
    /// word of the `nr_requests`-tag bitmap) allocation `a` is limited to,
    /// or None for no limit.
    fn limit_depth(&self, _a: &Alloc, _nr_requests: u32) -> Option<u32> {
        None
    }
    /// Whether `limit_depth` can limit anything: false lets the block
    /// layer skip describing the allocation (its submitter looked up
    /// through the bio's origin) on every request. True by default; only
    /// a scheduler whose `limit_depth` is the default's says false.
    fn limits_depth(&self) -> bool {
        true
    }
}

/// What a scheduler's `limit_depth` knows of a request allocation: the
/// bio's `blk_opf_t` and the submitting task (its blkcg, its I/O context
/// and I/O priority), as `blk_mq_alloc_data` and `current` give them.
#[derive(Clone, Copy, Debug)]
pub struct Alloc {
    pub op: crate::block::bio::Op,
    pub sync: bool,
    pub cg: crate::block::blk_cgroup::CgId,
    pub submitter: crate::block::request::Submitter,
    pub ioprio: crate::block::ioprio::Ioprio,
}

/// Which of a scheduler's optional calls can do anything, asked once when
/// the device is built (its scheduler does not change afterwards), so
/// that the block layer skips the others on every request without a
/// virtual call. Not in the kernel, whose `elevator_mq_ops` leaves the
/// missing ones NULL and tests the pointer: the same skip.
#[derive(Clone, Copy, Debug)]
pub struct ElvHooks {
    /// [`Elevator::merges_bios`]: a bio is offered for a merge.
    pub merges: bool,
    /// [`Elevator::limits_depth`]: an allocation asks for its depth.
    pub limits: bool,
    /// [`Elevator::arms_runs`]: a queue run asks for the next delayed run
    /// even when it dispatches nothing.
    pub timed: bool,
    /// [`Elevator::frees_merged`]: requests merged away are taken back.
    pub frees: bool,
    /// [`Elevator::sees_completions`]: a completion is reported.
    pub completes: bool,
}

impl ElvHooks {
    pub fn of(e: &dyn Elevator) -> ElvHooks {
        ElvHooks {
            merges: e.merges_bios(),
            limits: e.limits_depth(),
            timed: e.arms_runs(),
            frees: e.frees_merged(),
            completes: e.sees_completions(),
        }
    }
}

/// Build a scheduler by its sysfs name.
pub fn build(
    name: &str,
    dev: &crate::block::disk::DeviceInfo,
) -> Result<Box<dyn Elevator>, String> {
    match name {
        "none" => Ok(Box::new(none::NoneSched::default())),
        // "deadline" is the kernel's elevator_alias for mq-deadline.
        "mq-deadline" | "deadline" => Ok(Box::new(mq_deadline::MqDeadline::new(dev))),
        "bfq" => Ok(Box::new(bfq::Bfq::new(dev))),
        other => Err(format!(
            "unknown I/O scheduler '{other}' (available: none, mq-deadline, bfq)"
        )),
    }
}
