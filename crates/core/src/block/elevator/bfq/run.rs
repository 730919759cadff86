//! When the kernel asks bfq for a request (block/bfq-iosched.c): the
//! hardware-queue runs of [`crate::block::elevator::queue_run`], and bfq's
//! own.
//!
//! bfq returns no request while it idles for the queue in service, and what
//! it does on the next call — inject another queue's request — depends on
//! *when* that call comes. Besides an insertion's run, the delayed re-run
//! and a full device's restart, bfq asks for runs itself:
//! `bfq_schedule_dispatch` (requests queued) at the end of
//! `bfq_completed_request` when nothing is left in the drive — but not when
//! the completed request's queue is in service and must idle, which returns
//! before that line — and after the idle-slice timer
//! (`bfq_idle_slice_timer`).
//!
//! So while the queue in service idles, another group's queued request is
//! injected at the next insertion or at the 3 ms re-run, not at every
//! completion. [`Bfq::may_run`] keeps a dispatch offered at any other moment
//! from reaching bfq. A request held while the queue in service keeps coming
//! back waits for the end of that queue's slot, not for the next 3 ms mark,
//! because each asynchronous run replaces the pending re-run (switch
//! `blk_mq.insert_run = kblockd`).

use super::*;

impl Bfq {
    /// A hardware-queue run starts after an insertion.
    pub(super) fn run_hw_queue(&mut self) {
        self.run.insertion();
    }

    /// `bfq_schedule_dispatch`: run the queue if requests are queued.
    pub(super) fn schedule_dispatch(&mut self) {
        if self.held > 0 {
            self.run.async_run();
        }
    }

    /// Whether the dispatch offered now is one the kernel makes.
    pub(super) fn may_run(&mut self) -> bool {
        self.run.may_run(self.now)
    }

    /// The run dispatched a request.
    pub(super) fn run_dispatched(&mut self) {
        self.run.dispatched(self.held);
    }

    /// The run got no request: it ends, and the delayed re-run is armed if
    /// bfq still holds requests.
    pub(super) fn run_ended_empty(&mut self) {
        self.run.ended_empty(self.held > 0, self.hz, self.now);
    }
}
