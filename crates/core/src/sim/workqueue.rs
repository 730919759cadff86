//! An unbound workqueue's worker pool (kernel/workqueue.c), as the loop
//! driver's workqueues use it (`alloc_workqueue("loop%d", WQ_UNBOUND |
//! WQ_FREEZABLE, 0)`): work items wait in one FIFO worklist and a shared
//! set of kworkers executes them. Only the pool's bookkeeping is here
//! (which kworker takes which item, which kworker is woken, when one is
//! created); the CPU time and the events are `machine::loop_worker`'s.
//!
//! The rules mirrored, the same in v6.1 and v6.12:
//!
//! * Queueing (`queue_work` → `__queue_work` → `insert_work`): an item
//!   already pending (queued, not yet started) is not queued again; else
//!   it goes to the tail of the worklist and the pool is kicked
//!   (`wake_up_worker` in 6.1, `kick_pool` in 6.12).
//! * Kicking: when the worklist is not empty and no worker of the pool is
//!   counted running (`need_more_worker`), the first idle kworker is
//!   woken. An unbound pool's workers carry `WORKER_UNBOUND`, one of the
//!   `WORKER_NOT_RUNNING` flags, so its `nr_running` stays 0: every kick
//!   with work waiting wakes the first idle kworker. The idle list is LIFO
//!   (`worker_enter_idle` adds at the head): the kworker that went idle
//!   last is woken first. Waking one already woken (still on the idle list,
//!   not yet run) does nothing (`wake_up_process` on a runnable task).
//! * A woken kworker (`worker_thread`, after `worker_leave_idle`) goes back
//!   to sleep when the worklist is empty (`need_more_worker`); if it left
//!   the pool with no idle kworker (`may_start_working`), it first creates
//!   one (`manage_workers` → `maybe_create_worker` → `create_worker`, which
//!   puts the new kworker on the idle list).
//! * Executing (`process_one_work`): the item leaves the worklist, its
//!   pending state is cleared (`set_work_pool_and_clear_pending`: queueing
//!   it again from now on queues it anew), and the pool is kicked again
//!   when more work waits (the chaining for `WORKER_NOT_RUNNING` workers).
//!   An item that another kworker of the pool is executing is not run
//!   beside it: it moves to that kworker's `scheduled` list, which that
//!   kworker runs after its current item (`find_worker_executing_work`;
//!   `move_linked_works` in 6.1's `process_one_work`, `assign_work` in
//!   6.12).
//! * A kworker done with an item takes its scheduled items, then the
//!   worklist's head while the worklist is not empty (`keep_working`: an
//!   unbound pool's `nr_running` is 0), without sleeping; else it goes
//!   idle.
//!
//! Simplified (docs/fidelity/devices.md, "The loop worker"): one pool for
//! the whole host (the kernel has one per NUMA node in 6.1 and per
//! affinity-scope pod, by default the last-level cache, in 6.12: one on the
//! one-vCPU guests); creating a kworker is free and instant, and the new one
//! only goes idle (the kernel wakes the new thread, which finds the work
//! taken and sleeps); idle kworkers are never culled (`IDLE_WORKER_TIMEOUT`
//! is 300 s); no `max_active` limit (the loop workqueue's is far above the
//! items there are); no rescuer.

use std::collections::VecDeque;

/// A work item of the pool (`struct work_struct`).
pub(crate) type WorkId = u32;
/// A kworker of the pool (`struct worker`).
pub(crate) type KworkerId = u32;

/// A work item's state.
#[derive(Clone, Copy, Debug, Default)]
struct Work {
    /// Queued and not yet started (`WORK_STRUCT_PENDING`).
    pending: bool,
    /// The kworker executing it (the pool's `busy_hash`).
    on: Option<KworkerId>,
}

/// A kworker's state.
#[derive(Clone, Debug, Default)]
struct Kworker {
    /// The item it is executing (`current_work`).
    current: Option<WorkId>,
    /// Items it runs after the current one (`worker->scheduled`).
    scheduled: VecDeque<WorkId>,
    /// On the idle list (`WORKER_IDLE`).
    idle: bool,
    /// Idle, and woken already: it has not run since.
    woken: bool,
}

/// What a kworker with nothing in hand does next ([`WorkerPool::next`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Step {
    /// The item it starts executing; None: it went idle (sleeps).
    pub(crate) run: Option<WorkId>,
    /// A kworker to wake (the kick of `process_one_work`).
    pub(crate) wake: Option<KworkerId>,
}

/// One worker pool of unbound workqueues (`struct worker_pool`).
#[derive(Clone, Debug)]
pub(crate) struct WorkerPool {
    /// Items queued and not yet taken (`pool->worklist`), head first.
    worklist: VecDeque<WorkId>,
    works: Vec<Work>,
    workers: Vec<Kworker>,
    /// The idle kworkers (`pool->idle_list`), its head last.
    idle: Vec<KworkerId>,
}

impl Default for WorkerPool {
    /// A new pool has one idle kworker (`get_unbound_pool` → `create_worker`).
    fn default() -> WorkerPool {
        let mut p = WorkerPool {
            worklist: VecDeque::new(),
            works: Vec::new(),
            workers: Vec::new(),
            idle: Vec::new(),
        };
        p.create_worker();
        p
    }
}

impl WorkerPool {
    /// A new work item (`INIT_WORK`), idle.
    pub(crate) fn add_work(&mut self) -> WorkId {
        self.works.push(Work::default());
        (self.works.len() - 1) as WorkId
    }

    /// How many kworkers the pool has made so far (numbered from 0).
    pub(crate) fn nr_workers(&self) -> usize {
        self.workers.len()
    }

    /// The item kworker `k` is executing.
    pub(crate) fn current(&self, k: KworkerId) -> Option<WorkId> {
        self.workers[k as usize].current
    }

    /// Whether item `w` is pending (queued, not started).
    #[cfg(test)]
    fn pending(&self, w: WorkId) -> bool {
        self.works[w as usize].pending
    }

    /// Mirrors `create_worker`: a new kworker, on the idle list.
    fn create_worker(&mut self) {
        self.workers.push(Kworker::default());
        self.enter_idle((self.workers.len() - 1) as KworkerId);
    }

    /// Mirrors `worker_enter_idle`: `k` goes to the head of the idle list.
    fn enter_idle(&mut self, k: KworkerId) {
        let kw = &mut self.workers[k as usize];
        kw.idle = true;
        kw.woken = false;
        self.idle.push(k);
    }

    /// Mirrors `worker_leave_idle`.
    fn leave_idle(&mut self, k: KworkerId) {
        let kw = &mut self.workers[k as usize];
        kw.idle = false;
        kw.woken = false;
        self.idle.retain(|&i| i != k);
    }

    /// Mirrors `kick_pool` (`wake_up_worker` in 6.1) for an unbound pool:
    /// with work waiting, the first idle kworker is woken, unless it was
    /// woken already. Returns the kworker to wake.
    fn kick(&mut self) -> Option<KworkerId> {
        if self.worklist.is_empty() {
            return None;
        }
        let &k = self.idle.last()?;
        let kw = &mut self.workers[k as usize];
        if kw.woken {
            return None;
        }
        kw.woken = true;
        Some(k)
    }

    /// Mirrors `queue_work` → `__queue_work` → `insert_work`: item `w` goes
    /// to the worklist's tail unless it is pending already; returns the
    /// kworker the kick wakes.
    pub(crate) fn queue_work(&mut self, w: WorkId) -> Option<KworkerId> {
        let work = &mut self.works[w as usize];
        if work.pending {
            return None;
        }
        work.pending = true;
        self.worklist.push_back(w);
        self.kick()
    }

    /// Mirrors the start of `process_one_work`: kworker `k` executes `w`
    /// (no longer pending), and the pool is kicked if more work waits.
    fn start(&mut self, k: KworkerId, w: WorkId) -> Step {
        let work = &mut self.works[w as usize];
        work.pending = false;
        work.on = Some(k);
        self.workers[k as usize].current = Some(w);
        Step {
            run: Some(w),
            wake: self.kick(),
        }
    }

    /// Mirrors the end of `process_one_work`: kworker `k`'s item returned.
    pub(crate) fn done(&mut self, k: KworkerId) {
        if let Some(w) = self.workers[k as usize].current.take() {
            self.works[w as usize].on = None;
        }
    }

    /// Kworker `k`, holding its CPU with no item in hand, decides what to
    /// do: woken from idle, it mirrors `worker_thread` from `woke_up`
    /// (`worker_leave_idle`, `need_more_worker`, `may_start_working` →
    /// `manage_workers`); done with an item, `process_scheduled_works` and
    /// `keep_working`. Then it takes the worklist's head, moving an item
    /// another kworker executes to that one's scheduled list, until it has
    /// one or the worklist is empty; with none it goes idle.
    pub(crate) fn next(&mut self, k: KworkerId) -> Step {
        debug_assert!(self.workers[k as usize].current.is_none());
        if self.workers[k as usize].idle {
            self.leave_idle(k);
            if !self.worklist.is_empty() && self.idle.is_empty() {
                self.create_worker();
            }
        } else if let Some(w) = self.workers[k as usize].scheduled.pop_front() {
            return self.start(k, w);
        }
        while let Some(w) = self.worklist.pop_front() {
            match self.works[w as usize].on {
                Some(other) => self.workers[other as usize].scheduled.push_back(w),
                None => return self.start(k, w),
            }
        }
        self.enter_idle(k);
        Step {
            run: None,
            wake: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SLEEP: Step = Step {
        run: None,
        wake: None,
    };

    fn runs(w: WorkId) -> Step {
        Step {
            run: Some(w),
            wake: None,
        }
    }

    #[test]
    fn a_queued_item_wakes_the_idle_kworker_which_creates_a_spare() {
        let mut p = WorkerPool::default();
        assert_eq!(p.nr_workers(), 1, "a pool starts with one idle kworker");
        let a = p.add_work();
        assert_eq!(p.queue_work(a), Some(0));
        // woken, it leaves the pool with none idle: it makes one first
        assert_eq!(p.next(0), runs(a));
        assert_eq!(p.nr_workers(), 2);
        assert_eq!(p.current(0), Some(a));
        p.done(0);
        assert_eq!(p.next(0), SLEEP);
        // kworker 0 went idle last: it is the one woken next
        assert_eq!(p.queue_work(a), Some(0));
        assert_eq!(p.next(0), runs(a));
        assert_eq!(p.nr_workers(), 2, "kworker 1 is still idle");
    }

    #[test]
    fn a_pending_item_is_not_queued_twice() {
        let mut p = WorkerPool::default();
        let a = p.add_work();
        assert_eq!(p.queue_work(a), Some(0));
        assert_eq!(p.queue_work(a), None, "pending: queue_work is a no-op");
        assert!(p.pending(a));
        assert_eq!(p.next(0), runs(a));
        assert!(!p.pending(a), "started: pending cleared");
        p.done(0);
        assert_eq!(p.next(0), SLEEP, "it was in the worklist once");
    }

    #[test]
    fn a_kworker_runs_two_blkcgs_items_back_to_back() {
        let mut p = WorkerPool::default();
        let (a, b) = (p.add_work(), p.add_work());
        assert_eq!(p.queue_work(a), Some(0));
        assert_eq!(p.next(0), runs(a));
        // b is queued while a runs: the spare is woken for it ...
        assert_eq!(p.queue_work(b), Some(1));
        // ... but kworker 0 is done first and keeps working: b is its next
        p.done(0);
        assert_eq!(p.next(0), runs(b));
        // the spare, run late, finds nothing and sleeps again
        assert_eq!(p.next(1), SLEEP);
        p.done(0);
        assert_eq!(p.next(0), SLEEP);
        assert_eq!(p.nr_workers(), 2);
    }

    #[test]
    fn starting_an_item_with_more_waiting_kicks_another_kworker() {
        let mut p = WorkerPool::default();
        let (a, b) = (p.add_work(), p.add_work());
        assert_eq!(p.queue_work(a), Some(0));
        assert_eq!(p.queue_work(b), None, "kworker 0 is woken already");
        // kworker 0 takes a and, b waiting, wakes the spare it made
        assert_eq!(
            p.next(0),
            Step {
                run: Some(a),
                wake: Some(1)
            }
        );
        // the spare takes b, making another spare
        assert_eq!(p.next(1), runs(b));
        assert_eq!(p.nr_workers(), 3);
    }

    #[test]
    fn an_item_executing_elsewhere_runs_after_on_the_same_kworker() {
        let mut p = WorkerPool::default();
        let a = p.add_work();
        assert_eq!(p.queue_work(a), Some(0));
        assert_eq!(p.next(0), runs(a));
        // queued again while it executes (pending was cleared): the spare
        // is woken, finds it executing on kworker 0 and leaves it there
        assert_eq!(p.queue_work(a), Some(1));
        assert_eq!(p.next(1), SLEEP);
        assert_eq!(p.nr_workers(), 3, "kworker 1 left the pool with none idle");
        // kworker 0 runs it again after the current execution
        p.done(0);
        assert_eq!(p.next(0), runs(a));
        p.done(0);
        assert_eq!(p.next(0), SLEEP);
    }
}
