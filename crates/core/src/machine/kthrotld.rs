//! blk-throttle's dispatch work on the host's CPUs (block/blk-throttle.c,
//! the same in v6.1 and v6.12): `throtl_pending_timer_fn` moves the bios
//! the limits now allow up the service-queue tree within the timer call,
//! but the ones that reach the top (`td->service_queue`) are not issued
//! there: the timer queues `td->dispatch_work` on `kthrotld_workqueue`
//! (`alloc_workqueue("kthrotld", WQ_MEM_RECLAIM, 0)`: per-CPU, not
//! WQ_HIGHPRI, so a nice-0 kworker of the timer CPU's pool), and
//! `blk_throtl_dispatch_work_fn`, when that kworker runs it, takes every bio
//! then at the top level off it (under the queue lock) and issues them with
//! `submit_bio_noacct_nocheck` inside a plug (`blk_start_plug` ..
//! `blk_finish_plug`). Bios that reach the top after it took them wait for
//! the next execution.
//!
//! On a host with CPUs and `[host] kthrotld = true` the throttle is told
//! so (`Throttle::issue_by_work`) and this file runs the item: the timer
//! queues it (once while pending); the kworker is woken once the tick's
//! other expired timers have run (as the kernel's timer softirq runs them
//! all before the scheduler picks: a nice −20 kblockd run queued by a timer
//! of the same tick gets the CPU first); when it has a CPU and has paid
//! its wake-up (`wake_ns`) it takes the top level's bios, then spends
//! `[host] throtl_dispatch_ns_per_bio` per bio and issues them at the
//! plug's flushes: every `BLK_MAX_REQUEST_COUNT` (32) requests
//! (`blk_add_rq_to_plug`) and at the end. A timer queueing the item while
//! it executes makes the same kworker run it again when done.
//!
//! Simplified (docs/fidelity/throttle.md, "kthrotld"): one kworker per
//! device (the kernel's per-CPU pool runs it on the timer's CPU, beside
//! that pool's other items); the whole cost is paid per bio, the
//! execution's own overhead inside it; the plug holds each request only
//! for its own insertion and queue run, as `blk_mq.submit_bio_plug = on`
//! does (the kernel inserts a flush's requests together, then runs the
//! queue once), synchronous in both kernels (`blk_finish_plug` →
//! `blk_mq_flush_plug_list(plug, false)`); a request's submitter stays the
//! fio task whose bio it is (its completion interrupt goes to that task's
//! CPU, not the kworker's). The free host, and a host without the key,
//! issue the bios in the timer call (the earlier simplification, still
//! the default: docs/fidelity/throttle.md, "kthrotld", says why).

use super::kernel::{Kernel, Running};
use crate::block::bio::BioId;
use crate::block::blk_mq::BlkMq;
use crate::block::kthrotld::{DispatchWork, Phase, NOT_DUE, PLUG_FLUSH_RQS};
use crate::sim::cpus::{TaskId, Woken};
use crate::sim::engine::{DevId, Ev};
use crate::sim::time::Ns;

/// blk-throttle's work function (block/blk-throttle.c).
const DISPATCH_WORK_FN: &str = "blk_throtl_dispatch_work_fn";
/// The traced work items of the kthrotld kworkers are numbered from here
/// (kblockd's are the device numbers, the loop workers' from 0x100).
const TRACE_ITEM_BASE: u32 = 0x200;

impl Kernel {
    /// Mirrors `queue_work(kthrotld_workqueue, &td->dispatch_work)` at the
    /// end of `throtl_pending_timer_fn`: unless the item is pending, it is
    /// queued; a sleeping kworker is woken at the end of the tick's timers
    /// (an `Ev::Kthrotld` now, after the events already due now), a busy
    /// one runs it again when done.
    pub(crate) fn kthrotld_queue(&mut self, dev: DevId) {
        let now = self.clk.now;
        if !self.kthrotld.by_dev.contains_key(&dev) {
            let task = self.add_kworker(
                crate::sim::fair::NICE_0_WEIGHT,
                crate::sim::sched_tracepoints::TaskName::kthrotld(dev as u32),
            );
            self.kthrotld.add(dev, task, DispatchWork::new(task));
        }
        let w = self.kthrotld.by_dev.get_mut(&dev).expect("made above");
        if w.pending {
            return;
        }
        w.pending = true;
        if w.phase == Phase::Idle {
            w.phase = Phase::ToWake;
            w.due = now;
            self.clk.q.push(now, Ev::Kthrotld(dev));
        }
    }

    /// The kworker of `dev` holds its CPU until `end`: its event is due then.
    fn kthrotld_runs(&mut self, dev: DevId, end: Ns) {
        if let Some(w) = self.kthrotld.by_dev.get_mut(&dev) {
            w.due = end;
            self.clk.q.push(end, Ev::Kthrotld(dev));
        }
    }
}

impl Running<'_> {
    /// `dev`'s `Ev::Kthrotld`: the deferred wake-up, the end of the
    /// kworker's wake-up (the execution starts), or the end of a plug's
    /// worth of its issuing (the plug is flushed).
    pub(crate) fn kthrotld_event(&mut self, dev: DevId) {
        let now = self.k.clk.now;
        let Some(w) = self.k.kthrotld.by_dev.get(&dev) else {
            return;
        };
        if w.due != now {
            return; // superseded
        }
        let (task, phase) = (w.task, w.phase);
        match phase {
            Phase::Idle => return,
            Phase::ToWake => {
                self.set_phase(dev, Phase::Waking, NOT_DUE);
                // from the timer's softirq: no task's context (sched.rs)
                match self.k.cpu_wake(task, 0) {
                    Woken::Runs(end) => self.k.kthrotld_runs(dev, end),
                    Woken::Queued => {}
                }
                return;
            }
            Phase::Waking | Phase::Issuing => {}
        }
        // interrupts took time from the burst that ends now: it goes on
        if let Some(end) = self.k.cpus.burst_end(task, now) {
            self.k.kthrotld_runs(dev, end);
            return;
        }
        if phase == Phase::Issuing {
            self.flush_batch(dev);
        } else {
            self.start_execution(dev);
        }
        self.next_batch(dev, task);
    }

    fn set_phase(&mut self, dev: DevId, phase: Phase, due: Ns) {
        if let Some(w) = self.k.kthrotld.by_dev.get_mut(&dev) {
            w.phase = phase;
            w.due = due;
        }
    }

    /// Mirrors the start of `blk_throtl_dispatch_work_fn` (after
    /// `process_one_work` cleared the item's pending bit): every bio at
    /// the device level now is taken.
    fn start_execution(&mut self, dev: DevId) {
        let now = self.k.clk.now;
        self.trace_item(dev, true);
        let mut taken = Vec::new();
        {
            let (mut ctx, st) = self.k.blk.ctx_parts(now, dev);
            st.throttle.dispatch_work_fn(&mut ctx, &mut taken);
        }
        if let Some(w) = self.k.kthrotld.by_dev.get_mut(&dev) {
            w.pending = false;
            w.taken.extend(taken);
        }
    }

    /// The next plug's worth of the taken bios costs the kworker
    /// `throtl_dispatch_ns_per_bio` each; with none left the execution
    /// ends, and the kworker runs the item again if a timer queued it
    /// meanwhile (`process_one_work` found it on the worklist), else sleeps.
    fn next_batch(&mut self, dev: DevId, task: TaskId) {
        let now = self.k.clk.now;
        let per_bio_ns = self.k.cpu.cpus.throtl_dispatch_ns_per_bio;
        loop {
            let Some(w) = self.k.kthrotld.by_dev.get_mut(&dev) else {
                return;
            };
            let n = w.taken.len().min(PLUG_FLUSH_RQS);
            if n > 0 {
                w.batch = n;
                w.phase = Phase::Issuing;
                let end = self.k.cpus.continue_burst(task, now, n as Ns * per_bio_ns);
                self.k.kthrotld_runs(dev, end);
                return;
            }
            let again = w.pending;
            self.trace_item(dev, false);
            if !again {
                self.set_phase(dev, Phase::Idle, NOT_DUE);
                self.k.release_task(self.tasks, task);
                return;
            }
            self.start_execution(dev);
        }
    }

    /// The plug is flushed: the batch's bios go on down the block layer
    /// (`submit_bio_noacct_nocheck` each, their requests inserted and the
    /// queue run synchronously, `blk_mq_flush_plug_list(plug, false)`).
    fn flush_batch(&mut self, dev: DevId) {
        let ids: Vec<BioId> = match self.k.kthrotld.by_dev.get_mut(&dev) {
            Some(w) => {
                let n = std::mem::take(&mut w.batch);
                w.taken.drain(..n).collect()
            }
            None => return,
        };
        // the work's own plug: what `blk_mq.submit_bio_plug = on` models
        // for every bio, for these bios whatever the kernel profile
        let b = &mut self.k.blk;
        let was_plug = std::mem::replace(&mut b.submit_bio_plug, true);
        let was_switches = b.switches.clone();
        b.switches
            .set("blk_mq.submit_bio_plug", "on")
            .expect("a registered switch and value");
        self.throttle_issue(ids);
        let b = &mut self.k.blk;
        b.submit_bio_plug = was_plug;
        b.switches = was_switches;
    }

    /// `workqueue_execute_start` / `_end` of `dev`'s item.
    fn trace_item(&mut self, dev: DevId, start: bool) {
        let now = self.k.clk.now;
        self.k.blk.trace.workqueue_execute(
            now,
            TRACE_ITEM_BASE + dev as u32,
            DISPATCH_WORK_FN,
            start,
        );
    }
}

/// The task given a CPU is a kthrotld kworker: its wake-up ends at `end`.
pub(crate) fn task_runs(k: &mut Kernel, t: TaskId, end: Ns) -> bool {
    match k.kthrotld.of_task(t) {
        Some(dev) => {
            k.kthrotld_runs(dev, end);
            true
        }
        None => false,
    }
}
