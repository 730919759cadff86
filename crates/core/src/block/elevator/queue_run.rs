//! When the kernel asks a scheduler for a request: the hardware-queue runs
//! that reach its `dispatch_request` (block/blk-mq.c, block/blk-mq-sched.c).
//!
//! The simulator's blk-mq offers the scheduler a dispatch after every
//! insertion, every completion and every timer the scheduler asked for. For
//! a scheduler that hands out a request whenever it holds one, that is what
//! the kernel does in effect: a request that could go out went out at its
//! insertion's run, and a run that stopped on a full device is restarted by
//! a completion (`blk_mq_sched_restart`). A scheduler that may *hold* a
//! request while it has work is different, because what it does on the next
//! call depends on *when* that call comes: bfq idling for its queue in
//! service, and mq-deadline holding lower-priority requests while a higher
//! class has requests queued or in flight (`dd_dispatch_request`'s
//! `dd_queued` check). In the kernel the calls come from:
//!
//! - an insertion: `blk_mq_submit_bio` inserts a request that uses the
//!   scheduler and runs the queue asynchronously (`blk_mq_run_hw_queue(hctx,
//!   true)`), or, under a plug, `blk_finish_plug` runs it synchronously;
//! - the scheduler's own request (bfq's `bfq_schedule_dispatch`);
//! - the delayed re-run of `__blk_mq_do_dispatch_sched`: a pass that got no
//!   request while the scheduler has work (`has_work`) re-runs the queue
//!   `BLK_MQ_BUDGET_DELAY` (3 ms, in jiffies) later through
//!   `blk_mq_delay_run_hw_queues`, which leaves an already pending delayed
//!   run where it is (David Jeffery's January 2022 "blk-mq: avoid extending
//!   delays of active hctx from blk_mq_delay_run_hw_queues", before v6.1, so
//!   in every kernel profile here). The delayed work's timer is a
//!   `timer_list`, run one tick after its expiry by the timer wheel: 4-8 ms
//!   after the empty pass at HZ 250, 3-4 ms at HZ 1000;
//! - a completion while a run was cut short by a full device
//!   (`blk_mq_sched_restart`): here the run stays pending until it ends.
//!
//! A completion alone does not run the queue (`__blk_mq_free_request` calls
//! `blk_mq_sched_restart`, which does nothing unless a run set
//! `BLK_MQ_S_SCHED_RESTART`). So a held request goes out at the next
//! insertion or at the 3 ms re-run, not at the completion that would let it.
//!
//! The asynchronous runs (`blk_mq_run_hw_queue(hctx, true)`,
//! `blk_mq_run_hw_queues(q, true)`) queue `hctx->run_work` on kblockd with
//! delay 0 through `kblockd_mod_delayed_work_on`, i.e. `mod_delayed_work`,
//! which moves a pending delayed re-run to now: the 3 ms re-run is
//! *replaced* by the immediate run, and re-armed 3 ms after that run's empty
//! pass (switch `blk_mq.insert_run = kblockd`; `inline`, the earlier
//! simplification, leaves the pending re-run where it is). Where
//! `__submit_bio` holds a plug around every bio (switch
//! `blk_mq.submit_bio_plug = on`: 060406c61c7c, v6.10, in 6.12.y; removed
//! again by 9cbbac29d752 for v7.2), the insertion's run is the plug's
//! synchronous flush (`blk_mq_dispatch_plug_list` → `blk_mq_run_hw_queue(hctx,
//! false)`), which does not touch `hctx->run_work`: the pending re-run stays.

use crate::block::ctx::Ctx;
use crate::sim::time::{Hz, Ns};
use crate::sim::timer;

/// `BLK_MQ_BUDGET_DELAY`, in ms.
const BUDGET_DELAY_MS: u64 = 3;

/// Whether a hardware-queue run is under way, and the delayed re-run.
#[derive(Clone, Copy, Debug, Default)]
pub struct QueueRun {
    /// A run was started by an event that runs the queue in the kernel, and
    /// has not ended (the scheduler has not yet returned "no request").
    pub pending: bool,
    /// When the delayed re-run (`hctx->run_work`) fires, if armed.
    pub delayed_at: Option<Ns>,
    /// Switch `blk_mq.insert_run = kblockd`.
    sw_kblockd: bool,
    /// Switch `blk_mq.submit_bio_plug = on`.
    sw_submit_plug: bool,
}

impl QueueRun {
    /// Read the block layer's switches, before [`QueueRun::insertion`] and
    /// [`QueueRun::async_run`], the only calls that use them (a scenario's
    /// switches are fixed for its run).
    pub fn sync(&mut self, ctx: &Ctx) {
        self.sw_kblockd = ctx.switches.is("blk_mq.insert_run", "kblockd");
        self.sw_submit_plug = ctx.switches.is("blk_mq.submit_bio_plug", "on");
    }

    /// A run starts after an insertion (`blk_mq_run_hw_queue` in
    /// `blk_mq_submit_bio`): asynchronous without a plug, the plug's
    /// synchronous flush with one.
    pub fn insertion(&mut self) {
        if self.sw_submit_plug {
            self.pending = true;
        } else {
            self.async_run();
        }
    }

    /// An asynchronous run with no delay (`kblockd_mod_delayed_work_on(cpu,
    /// &hctx->run_work, 0)` → `mod_delayed_work_on`): a pending delayed
    /// re-run is taken off and the work queued at once under switch
    /// `blk_mq.insert_run = kblockd`; `inline` keeps it. Also the block
    /// layer's own asynchronous run (the synchronous run's hand-off to
    /// kblockd, `blk_mq_do_dispatch_sched`, through `Elevator::run_async`).
    pub fn async_run(&mut self) {
        self.pending = true;
        if self.sw_kblockd {
            self.delayed_at = None;
        }
    }

    /// Whether the dispatch offered at `now` is one the kernel makes: a run
    /// is under way, or the delayed re-run is due (it then starts a run).
    pub fn may_run(&mut self, now: Ns) -> bool {
        if let Some(t) = self.delayed_at {
            if now >= t {
                self.delayed_at = None;
                self.pending = true;
            }
        }
        self.pending
    }

    /// The run dispatched a request: it goes on while the scheduler holds
    /// requests (`held`), and ends without a re-run otherwise.
    pub fn dispatched(&mut self, held: usize) {
        if held == 0 {
            self.pending = false;
        }
    }

    /// `__blk_mq_do_dispatch_sched` got no request: the run ends; if the
    /// scheduler still has work (`has_work`), the queue is re-run
    /// `BLK_MQ_BUDGET_DELAY` later unless a re-run is already pending
    /// (`blk_mq_delay_run_hw_queues`).
    ///
    /// The delay is `msecs_to_jiffies(3)` jiffies (1 at HZ=250, 3 at
    /// HZ=1000), and the delayed work's timer is a `timer_list`
    /// (`__queue_delayed_work` → `add_timer_on`), so it runs when the timer
    /// wheel runs it: one tick later than `jiffies + delay`, since the wheel
    /// rounds every expiry up (`calc_index`, [`timer::fires_at`]). At HZ=250
    /// the re-run therefore comes 4-8 ms after the empty pass, never at the
    /// very next tick: a run that finds nothing to dispatch every few µs
    /// (and is replaced by the next insertion's immediate run) never lets
    /// it fire.
    pub fn ended_empty(&mut self, has_work: bool, hz: Hz, now: Ns) {
        self.pending = false;
        if has_work && self.delayed_at.is_none() {
            let delay = hz.msecs_to_jiffies(BUDGET_DELAY_MS);
            self.delayed_at = Some(timer::fires_at(hz, now, delay));
        }
    }

    /// The delayed re-run, if armed (for `Elevator::next_run`).
    pub fn delayed(&self) -> Option<Ns> {
        self.delayed_at
    }

    /// A run is under way, or the delayed re-run is due at `now`
    /// (`Elevator::wants_run`).
    pub fn wants_run(&self, now: Ns) -> bool {
        self.pending || self.delayed_at.is_some_and(|t| now >= t)
    }
}
