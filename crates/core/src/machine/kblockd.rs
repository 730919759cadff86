//! kblockd's run of a hardware queue (block/blk-mq.c `blk_mq_run_work_fn`,
//! block/blk-core.c `kblockd_mod_delayed_work_on`): on a host with CPUs and
//! switch `blk_mq.insert_run = kblockd`, an asynchronous queue run of a
//! device with an I/O scheduler is a work item, `hctx->run_work`, executed
//! by a kernel thread (the WQ_HIGHPRI kblockd workqueue's kworker) that
//! must get a CPU first. The submitter's `blk_mq_run_hw_queue(hctx, true)`
//! only queues it (and wakes the kworker, which with `[host]
//! wakeup_preempt` preempts the submitter at the end of its burst, as the
//! 6.1 guest's trace shows kblockd doing 99.6-99.8 % of the time); the
//! dispatch (`blk_mq_sched_dispatch_requests` → the scheduler's
//! `dispatch_request` → the driver's `queue_rq`) happens when the kworker
//! runs, `[host] kblockd_ns` after its wake-up.
//!
//! The asynchronous runs modelled here: the insertion's
//! (`blk_mq_submit_bio` without a plug: `blk_mq_sched_insert_request(rq,
//! false, true, true)` in 6.1, `blk_mq_run_hw_queue(hctx, true)` in 6.12;
//! where `__submit_bio` holds a plug around every bio, switch
//! `blk_mq.submit_bio_plug = on`, 6.12, the insertion's run is the plug's
//! synchronous flush in the submitter's context and is not one of these),
//! the completion's (`blk_mq_sched_restart`, `bfq_schedule_dispatch` →
//! `blk_mq_run_hw_queues(q, true)`) and the scheduler's timers (the
//! `BLK_MQ_BUDGET_DELAY` re-run is `hctx->run_work` itself; bfq's idle-slice
//! timer calls `bfq_schedule_dispatch`).
//!
//! Simplified (docs/fidelity/cpus.md, "kblockd"): one kworker per device
//! (the kernel's kblockd pool has one high-priority kworker per CPU and
//! runs `run_work` on a CPU of the hctx's mask); a run queued while the work
//! is pending is the same run (`queue_work` finds it pending); the whole
//! run costs `kblockd_ns` and dispatches at its end.

use super::kernel::{Kernel, Running};
use crate::block::blk_mq::BlkMq;
use crate::block::kblockd::{RunWork, NOT_DUE};
use crate::sim::cpus::{TaskId, Woken};
use crate::sim::engine::{DevId, Ev};
use crate::sim::time::Ns;

/// kblockd's work function for a queue run (block/blk-mq.c).
const RUN_WORK_FN: &str = "blk_mq_run_work_fn";

impl Kernel {
    /// Whether an asynchronous run of `dev`'s queue is a kblockd work item
    /// here: a host with CPUs, switch `blk_mq.insert_run = kblockd`, and an
    /// I/O scheduler (without one, `blk_mq_submit_bio` issues directly in
    /// the submitter's context, `blk_mq_try_issue_directly`).
    ///
    /// Asked at every request's insertion: the host's test is inlined into
    /// the caller, the switch and the scheduler's name are read out of line
    /// (the free host never reads them).
    #[inline]
    pub(crate) fn runs_on_kblockd(&self, dev: DevId) -> bool {
        self.cpus.enabled() && self.kblockd_inserts(dev)
    }

    /// The rest of [`Self::runs_on_kblockd`] on a host with CPUs.
    #[inline(never)]
    fn kblockd_inserts(&self, dev: DevId) -> bool {
        self.blk.switches.is("blk_mq.insert_run", "kblockd")
            && self.blk.devs[dev as usize].st.elv.name() != "none"
    }

    /// The kworker of `dev` runs until `end`: its event is due then.
    pub(crate) fn kblockd_runs(&mut self, dev: DevId, end: Ns) {
        if let Some(w) = self.kblockd.by_dev.get_mut(&dev) {
            w.due = end;
            self.clk.q.push(end, Ev::Kblockd(dev));
        }
    }

    /// Mirrors `kblockd_mod_delayed_work_on(cpu, &hctx->run_work, 0)`:
    /// queue `dev`'s run work and wake its kworker, unless the work is
    /// already queued (`queue_work` finds it pending).
    pub(crate) fn kblockd_queue(&mut self, dev: DevId) {
        let w = match self.kblockd.by_dev.get(&dev) {
            Some(w) => *w,
            None => {
                let task = self.add_kworker(
                    crate::sim::eevdf::NICE_M20_WEIGHT,
                    crate::sim::sched_tracepoints::TaskName::kblockd(dev as u32),
                );
                let w = RunWork {
                    task,
                    queued: false,
                    due: NOT_DUE,
                };
                *self.kblockd.add(dev, task, w)
            }
        };
        if w.queued {
            return;
        }
        self.kblockd
            .by_dev
            .get_mut(&dev)
            .expect("made above")
            .queued = true;
        match self.cpu_wake(w.task, self.cpu.cpus.kblockd_ns) {
            Woken::Runs(end) => self.kblockd_runs(dev, end),
            Woken::Queued => {}
        }
    }
}

impl Running<'_> {
    /// Mirrors `blk_mq_run_work_fn`: `dev`'s kworker is done with its
    /// wake-up and the run's cost (`Ev::Kblockd`): the queue is run now
    /// (`blk_mq_sched_dispatch_requests`), then the kworker sleeps.
    pub(crate) fn kblockd_work(&mut self, dev: DevId) {
        let now = self.k.clk.now;
        let Some(w) = self.k.kblockd.by_dev.get(&dev).copied() else {
            return;
        };
        if w.due != now || !w.queued {
            return; // superseded
        }
        // interrupts took time from it: the run ends later
        if let Some(end) = self.k.cpus.burst_end(w.task, now) {
            self.k.kblockd_runs(dev, end);
            return;
        }
        if let Some(w) = self.k.kblockd.by_dev.get_mut(&dev) {
            w.queued = false;
            w.due = NOT_DUE;
        }
        // simplified: the item's start and end are traced around the run,
        // its cost (`kblockd_ns`) before them, as the kworker's own
        let trace = |k: &mut Kernel, start: bool| {
            k.blk
                .trace
                .workqueue_execute(now, dev as u32, RUN_WORK_FN, start)
        };
        trace(self.k, true);
        self.run_queue(dev);
        trace(self.k, false);
        let k = &mut *self.k;
        // the scheduler's lock is held until then: the kworker keeps its
        // CPU and makes its next pass (`blk_mq_do_dispatch_sched`'s loop)
        if let Some(t) = k.blk.devs[dev as usize].st.elv.run_resumes_at() {
            if let Some(w) = k.kblockd.by_dev.get_mut(&dev) {
                w.queued = true;
            }
            let end = k.cpus.continue_burst(w.task, now, t - now);
            k.kblockd_runs(dev, end);
            return;
        }
        k.release_task(self.tasks, w.task);
    }
}

/// The task given a CPU is a kblockd kworker: its run is due at `end`.
pub(crate) fn task_runs(k: &mut Kernel, t: TaskId, end: Ns) -> bool {
    match k.kblockd.of_task(t) {
        Some(dev) => {
            k.kblockd_runs(dev, end);
            true
        }
        None => false,
    }
}
