//! When the kernel asks bfq for a request: the hardware-queue runs that
//! reach `bfq_dispatch_request` (block/blk-mq.c, block/blk-mq-sched.c,
//! block/bfq-iosched.c).
//!
//! The simulator's blk-mq offers the scheduler a dispatch after every
//! insertion, every completion and every timer the scheduler asked for.
//! For most schedulers that is what the kernel does in effect (a request
//! that could go out went out at its insertion; a full device restarts the
//! queue on completion, `blk_mq_sched_restart`). bfq is different: it
//! returns no request while it idles for the queue in service, and what it
//! does on the next call — inject another queue's request — depends on
//! *when* that call comes. In the kernel the calls come from:
//!
//! - an insertion (`blk_mq_run_hw_queue` after `bfq_insert_requests`);
//! - `bfq_schedule_dispatch` (requests queued): at the end of
//!   `bfq_completed_request` when nothing is left in the drive — but not
//!   when the completed request's queue is in service and must idle, which
//!   returns before that line — and after the idle-slice timer
//!   (`bfq_idle_slice_timer`);
//! - the delayed re-run of `__blk_mq_do_dispatch_sched`: a pass that got no
//!   request while the scheduler has work (`bfq_has_work`: requests queued)
//!   re-runs the queue `BLK_MQ_BUDGET_DELAY` (3 ms, in jiffies) later, as
//!   the timer wheel runs a delayed work's timer: one tick after that (4-8
//!   ms at HZ 250, 3-4 ms at HZ 1000; [`Bfq::run_ended_empty`]), through
//!   `blk_mq_delay_run_hw_queues`, which leaves an already pending delayed
//!   run where it is (David Jeffery's January 2022 "blk-mq: avoid extending
//!   delays of active hctx from blk_mq_delay_run_hw_queues", before v6.1,
//!   so in every kernel profile here);
//! - a completion while the device was full (`blk_mq_sched_restart`).
//!
//! So while the queue in service idles, another group's queued request is
//! injected at the next insertion or at the 3 ms re-run, not at every
//! completion. [`Bfq::may_run`] keeps a dispatch offered at any other moment
//! from reaching bfq.
//!
//! The insertion's run and `bfq_schedule_dispatch`'s are asynchronous
//! (`blk_mq_run_hw_queue(hctx, true)` / `blk_mq_run_hw_queues(q, true)`):
//! `__blk_mq_delay_run_hw_queue` (6.1) / `blk_mq_delay_run_hw_queue` (6.12)
//! queue `hctx->run_work` on kblockd with delay 0 through
//! `kblockd_mod_delayed_work_on`, i.e. `mod_delayed_work`, which moves a
//! pending delayed re-run to now: the 3 ms re-run is *replaced* by the
//! immediate run, and re-armed 3 ms after that run's empty pass. So a
//! request held while the queue in service keeps coming back waits for
//! the end of that queue's slot, not for the next 3 ms mark. With switch
//! `blk_mq.insert_run = inline` (the earlier simplification) the pending
//! re-run stays where it is.
//!
//! Where `__submit_bio` holds a plug around every bio (switch
//! `blk_mq.submit_bio_plug = on`: 060406c61c7c, v6.10, in 6.12.y; removed
//! again by 9cbbac29d752 for v7.2), the insertion's run is not that
//! asynchronous one: `blk_finish_plug` flushes the plug and runs the queue
//! synchronously (`blk_mq_dispatch_plug_list` → `blk_mq_run_hw_queue(hctx,
//! false)` → `blk_mq_sched_dispatch_requests`), which does not touch
//! `hctx->run_work`: the pending re-run stays, and fires 3 ms after the
//! empty pass that armed it, as under `inline`. `bfq_schedule_dispatch`'s
//! run stays asynchronous.

use super::*;
use crate::sim::timer;

/// `BLK_MQ_BUDGET_DELAY`, in ms.
const BUDGET_DELAY_MS: u64 = 3;

/// Whether a hardware-queue run is under way, and the delayed re-run.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct QueueRun {
    /// A run was started by an event that runs the queue in the kernel,
    /// and has not ended (bfq has not yet returned "no request").
    pub pending: bool,
    /// When the delayed re-run (`hctx->run_work`) fires, if armed.
    pub delayed_at: Option<Ns>,
}

impl Bfq {
    /// A hardware-queue run starts (`blk_mq_run_hw_queue` after an
    /// insertion): asynchronous without a plug, the plug's synchronous
    /// flush with one (switch `blk_mq.submit_bio_plug`).
    pub(super) fn run_hw_queue(&mut self) {
        if self.sw_submit_plug {
            self.run.pending = true;
        } else {
            self.async_run();
        }
    }

    /// `bfq_schedule_dispatch`: run the queue if requests are queued.
    pub(super) fn schedule_dispatch(&mut self) {
        if self.held > 0 {
            self.async_run();
        }
    }

    /// An asynchronous run with no delay: `kblockd_mod_delayed_work_on(cpu,
    /// &hctx->run_work, 0)` (block/blk-core.c → `mod_delayed_work_on`,
    /// kernel/workqueue.c) takes a pending delayed re-run's timer off and
    /// queues the work at once, so the delayed re-run is gone (switch
    /// `blk_mq.insert_run = kblockd`); `inline` keeps it. Also the block
    /// layer's own asynchronous run (the synchronous run's hand-off to
    /// kblockd, `blk_mq_do_dispatch_sched`, through `Elevator::run_async`).
    pub(super) fn async_run(&mut self) {
        self.run.pending = true;
        if self.sw_kblockd {
            self.run.delayed_at = None;
        }
    }

    /// Whether the dispatch offered now is one the kernel makes: a run is
    /// under way, or the delayed re-run is due (it then starts a run).
    pub(super) fn may_run(&mut self) -> bool {
        if let Some(t) = self.run.delayed_at {
            if self.now >= t {
                self.run.delayed_at = None;
                self.run.pending = true;
            }
        }
        self.run.pending
    }

    /// The run dispatched a request: it goes on while requests are queued
    /// (`bfq_has_work`), and ends without a re-run otherwise.
    pub(super) fn run_dispatched(&mut self) {
        if self.held == 0 {
            self.run.pending = false;
        }
    }

    /// `__blk_mq_do_dispatch_sched` got no request: the run ends; if bfq
    /// still holds requests, re-run the queue `BLK_MQ_BUDGET_DELAY` later
    /// unless a re-run is already pending (`blk_mq_delay_run_hw_queues`).
    ///
    /// The delay is `msecs_to_jiffies(3)` jiffies (1 at HZ=250, 3 at
    /// HZ=1000), and the delayed work's timer is a `timer_list`
    /// (`__queue_delayed_work` → `add_timer_on`), so it runs when the timer
    /// wheel runs it: one tick later than `jiffies + delay`, since the
    /// wheel rounds every expiry up (`calc_index`, [`timer::fires_at`]). At
    /// HZ=250 the re-run therefore comes 4-8 ms after the empty pass, never
    /// at the very next tick: a run that finds nothing to dispatch every few
    /// µs (and is replaced by the next insertion's immediate run) never
    /// lets it fire.
    pub(super) fn run_ended_empty(&mut self) {
        self.run.pending = false;
        if self.held > 0 && self.run.delayed_at.is_none() {
            let delay = self.hz.msecs_to_jiffies(BUDGET_DELAY_MS);
            self.run.delayed_at = Some(timer::fires_at(self.hz, self.now, delay));
        }
    }

    /// The delayed re-run, for `next_run`.
    pub(super) fn delayed_run(&self) -> Option<Ns> {
        self.run.delayed_at
    }
}
