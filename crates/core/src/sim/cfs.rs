//! The fair class's choice of task under CFS with virtual runtimes (switch
//! `sched.fair = cfs-vruntime`: v6.5 and earlier; kernel/sched/fair.c as in
//! Debian's 6.1.176): which runnable task a CPU runs next, whether a woken
//! task preempts the running one, and when a running task has had its
//! share.
//!
//! Each task is an entity with a weight (nice 0: 1024; kblockd's
//! high-priority kworkers, nice -20: 88761) and a virtual runtime that grows
//! by its CPU time × 1024 / weight. Mirrored:
//! - `update_curr` / `update_min_vruntime`: the queue's `min_vruntime`
//!   follows the smallest virtual runtime of the running and the waiting
//!   tasks, and never goes back.
//! - `place_entity` on a wake-up (not `initial`): a woken task goes to
//!   `min_vruntime` less half of `sysctl_sched_latency` (GENTLE_FAIR_SLEEPERS;
//!   6 ms on one CPU, so 3 ms), or stays where it was if that is later. This
//!   sleeper credit is what lets a task that sleeps between short bursts
//!   (a QD1 fio job and the loop workers serving it) run ahead of tasks that
//!   stay runnable, for up to 3 ms of their CPU.
//! - `pick_next_entity`: the waiting task with the smallest virtual runtime
//!   (the rbtree's leftmost), or the running one if it is smaller still.
//! - `check_preempt_wakeup` → `wakeup_preempt_entity`: a woken task preempts
//!   when the running one's virtual runtime is ahead of it by more than the
//!   wake-up granularity (`sysctl_sched_wakeup_granularity`, 1 ms on one CPU,
//!   in the woken task's virtual time).
//! - `check_preempt_tick`: a running task is rescheduled once it has run its
//!   `sched_slice` (the 6 ms period, or `nr_running` × 0.75 ms above eight
//!   tasks, shared by weight) since it got the CPU, or, after the 0.75 ms
//!   minimum granularity, when it is more than that slice ahead of the
//!   leftmost waiting task. The check runs at the scheduler tick only.
//!
//! Simplified (docs/fidelity/cpus.md, "CFS with virtual runtimes"): one queue
//! for the host (the kernel has one per CPU); no cgroup hierarchy (the
//! harness's groups enable only the io controller); the tick's check is
//! made when the first burst after a tick ends (the kernel makes it at the
//! tick and preempts at the next preemption point); no buddies (NEXT_BUDDY is off,
//! LAST_BUDDY acts only with `sched_nr_latency` = 8 tasks runnable); no
//! START_DEBIT for a new task (every task starts at virtual runtime 0 and
//! is placed on its first wake-up like any sleeper); the 60 s long-sleeper
//! rule of `place_entity` is left out (runs are shorter).

use crate::sim::fair::{charge_to, vdelta, NICE_0_WEIGHT};
use crate::sim::sched_features::{Feature, SchedFeatures};
use crate::sim::time::Ns;

/// `sysctl_sched_latency` on a 1-CPU machine (6 ms × (1 + ilog2(1))).
pub const LATENCY_NS: Ns = 6_000_000;
/// `sysctl_sched_min_granularity` on a 1-CPU machine.
pub const MIN_GRANULARITY_NS: Ns = 750_000;
/// `sysctl_sched_wakeup_granularity` on a 1-CPU machine.
pub const WAKEUP_GRANULARITY_NS: Ns = 1_000_000;
/// `sched_nr_latency`: above this many runnable tasks the period grows.
const NR_LATENCY: u64 = 8;

/// One task's scheduling entity.
#[derive(Clone, Copy, Debug)]
struct Entity {
    weight: u64,
    vruntime: i64,
    /// On the queue: running or waiting.
    on_rq: bool,
    /// Holds a CPU (the CPU's `curr`).
    running: bool,
    /// Its virtual runtime is charged up to then.
    exec_start: Ns,
    /// When it got its CPU (`prev_sum_exec_runtime`'s instant).
    picked_at: Ns,
    /// The last tick whose check it has had (tick number).
    tick_seen: u64,
}

/// The fair class's queue (one for the host).
#[derive(Clone, Debug)]
pub struct Cfs {
    ents: Vec<Entity>,
    /// `cfs_rq->min_vruntime`.
    min_vruntime: i64,
    /// `TICK_NSEC`: `check_preempt_tick` runs once per tick.
    tick_ns: Ns,
    /// The `sched_feat()` toggles (GENTLE_FAIR_SLEEPERS, WAKEUP_PREEMPTION).
    feat: SchedFeatures,
}

impl Entity {
    /// A task of `weight` that has not run: virtual runtime 0, asleep.
    fn new(weight: u64) -> Entity {
        Entity {
            weight,
            vruntime: 0,
            on_rq: false,
            running: false,
            exec_start: 0,
            picked_at: 0,
            tick_seen: 0,
        }
    }
}

impl Cfs {
    /// `nr` nice-0 tasks (the fio jobs) on a kernel of `tick_ns` ticks,
    /// with features `feat`.
    pub fn new(nr: usize, tick_ns: Ns, feat: SchedFeatures) -> Cfs {
        Cfs {
            ents: vec![Entity::new(NICE_0_WEIGHT); nr],
            min_vruntime: 0,
            tick_ns: tick_ns.max(1),
            feat,
        }
    }

    /// The running tasks' CPU time up to `now`, charged to their virtual
    /// runtimes, then `update_min_vruntime`.
    fn charge(&mut self, now: Ns) {
        for e in self.ents.iter_mut().filter(|e| e.running) {
            charge_to(&mut e.vruntime, &mut e.exec_start, e.weight, now);
        }
        let smallest = self
            .ents
            .iter()
            .filter(|e| e.on_rq)
            .map(|e| e.vruntime)
            .min();
        if let Some(v) = smallest {
            self.min_vruntime = self.min_vruntime.max(v);
        }
    }

    /// The waiting task with the smallest virtual runtime (ties: the lower
    /// task number).
    fn leftmost(&self) -> Option<u32> {
        (0..self.ents.len() as u32)
            .filter(|&i| {
                let e = &self.ents[i as usize];
                e.on_rq && !e.running
            })
            .min_by_key(|&i| (self.ents[i as usize].vruntime, i))
    }

    /// Mirrors `sched_slice`: task `t`'s share of the period.
    fn slice_ns(&self, t: u32) -> Ns {
        let (nr, load) = self
            .ents
            .iter()
            .filter(|e| e.on_rq)
            .fold((0u64, 0u64), |(n, w), e| (n + 1, w + e.weight));
        let period = if nr > NR_LATENCY {
            nr * MIN_GRANULARITY_NS
        } else {
            LATENCY_NS
        };
        let w = self.ents[t as usize].weight;
        ((period as u128 * w as u128) / load.max(w) as u128) as Ns
    }
}

impl crate::sim::fair::FairClass for Cfs {
    fn clone_box(&self) -> Box<dyn crate::sim::fair::FairClass> {
        Box::new(self.clone())
    }
    #[cfg(test)]
    fn vruntime(&self, t: u32) -> i64 {
        self.ents[t as usize].vruntime
    }
    fn add(&mut self, weight: u64) {
        self.ents.push(Entity::new(weight));
    }

    /// Mirrors `update_curr`, then, the first time after each tick
    /// (`entity_tick`), `check_preempt_tick`'s two tests.
    fn update_curr(&mut self, t: u32, now: Ns) -> bool {
        self.charge(now);
        let tick = now / self.tick_ns;
        let e = self.ents[t as usize];
        if !e.running || tick == e.tick_seen {
            return false;
        }
        self.ents[t as usize].tick_seen = tick;
        let Some(left) = self.leftmost() else {
            return false;
        };
        let ran = now.saturating_sub(e.picked_at);
        let ideal = self.slice_ns(t);
        if ran > ideal {
            return true;
        }
        if ran < MIN_GRANULARITY_NS {
            return false;
        }
        e.vruntime - self.ents[left as usize].vruntime > ideal as i64
    }

    /// Mirrors `enqueue_entity` with ENQUEUE_WAKEUP → `place_entity`: the
    /// credit is half the latency with GENTLE_FAIR_SLEEPERS, all of it
    /// without.
    fn enqueue(&mut self, t: u32, now: Ns) {
        self.charge(now);
        let gentle = self.feat.on(Feature::GentleFairSleepers);
        let e = &mut self.ents[t as usize];
        if e.on_rq {
            return;
        }
        let credit = if gentle { LATENCY_NS / 2 } else { LATENCY_NS } as i64;
        e.vruntime = e.vruntime.max(self.min_vruntime - credit);
        e.on_rq = true;
    }

    /// `dequeue_entity` with DEQUEUE_SLEEP: the task leaves the queue and
    /// keeps its virtual runtime.
    fn dequeue_sleep(&mut self, t: u32) {
        let e = &mut self.ents[t as usize];
        e.running = false;
        e.on_rq = false;
    }

    fn put_prev(&mut self, t: u32) {
        self.ents[t as usize].running = false;
    }

    /// Mirrors `set_next_entity`: the slice is counted from `now`.
    fn set_next(&mut self, t: u32, now: Ns) {
        let e = &mut self.ents[t as usize];
        e.running = true;
        e.exec_start = now;
        e.picked_at = now;
        // a tick before it got the CPU was not its tick
        e.tick_seen = now / self.tick_ns;
    }

    /// Mirrors `check_preempt_wakeup` → `wakeup_preempt_entity` (never
    /// without WAKEUP_PREEMPTION).
    fn wakeup_preempts(&mut self, t: u32, curr: u32, now: Ns) -> bool {
        if !self.feat.on(Feature::WakeupPreemption) {
            return false;
        }
        self.charge(now);
        let woken = self.ents[t as usize];
        let vdiff = self.ents[curr as usize].vruntime - woken.vruntime;
        vdiff > vdelta(WAKEUP_GRANULARITY_NS, woken.weight)
    }

    /// Mirrors `pick_next_entity`: the leftmost waiting task, or None to
    /// keep `curr` when it is before it.
    fn pick_next(&mut self, curr: Option<u32>) -> Option<u32> {
        let left = self.leftmost()?;
        match curr {
            Some(c)
                if self.ents[c as usize].on_rq
                    && self.ents[c as usize].vruntime < self.ents[left as usize].vruntime =>
            {
                None
            }
            _ => Some(left),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::fair::FairClass;

    #[test]
    fn a_woken_sleeper_gets_the_sleeper_credit_and_preempts_a_hog() {
        let mut q = Cfs::new(2, 1, SchedFeatures::default());
        q.enqueue(0, 0);
        assert_eq!(q.pick_next(None), Some(0));
        q.set_next(0, 0);
        // task 0 runs 10 ms alone: min_vruntime follows it
        assert!(!q.update_curr(0, 10_000_000));
        assert_eq!(q.min_vruntime, 10_000_000);
        // task 1 wakes: placed 3 ms before min_vruntime, not at its own 0
        q.enqueue(1, 10_000_000);
        assert_eq!(q.ents[1].vruntime, 7_000_000);
        // 3 ms ahead is more than the 1 ms wake-up granularity
        assert!(q.wakeup_preempts(1, 0, 10_000_000));
        assert_eq!(q.pick_next(Some(0)), Some(1));
    }

    #[test]
    fn a_short_sleep_gives_no_credit_beyond_the_own_vruntime() {
        let mut q = Cfs::new(2, 1, SchedFeatures::default());
        q.enqueue(0, 0);
        q.enqueue(1, 0);
        q.set_next(0, 0);
        q.update_curr(0, 2_000_000);
        q.dequeue_sleep(0);
        q.set_next(1, 2_000_000);
        // task 1 runs 0.5 ms; task 0 wakes: max(2 ms, 0 − 3 ms) keeps 2 ms
        q.enqueue(0, 2_500_000);
        assert_eq!(q.ents[0].vruntime, 2_000_000);
        // 1.5 ms ahead of task 1 (0.5 ms): no preemption of task 1
        assert!(!q.wakeup_preempts(0, 1, 2_500_000));
    }

    #[test]
    fn the_slice_is_checked_only_after_a_tick() {
        // HZ 250: two tasks, 3 ms slices
        let mut q = Cfs::new(2, 4_000_000, SchedFeatures::default());
        q.enqueue(0, 0);
        q.enqueue(1, 0);
        q.set_next(0, 0);
        // past its slice at 3.5 ms, but no tick since it got the CPU
        assert!(!q.update_curr(0, 3_500_000));
        // the first burst end after the 4 ms tick reschedules it
        assert!(q.update_curr(0, 4_100_000));
        // once per tick
        assert!(!q.update_curr(0, 4_200_000));
    }

    #[test]
    fn the_tick_reschedules_after_the_slice_or_when_too_far_ahead() {
        let mut q = Cfs::new(2, 1, SchedFeatures::default());
        q.enqueue(0, 0);
        q.enqueue(1, 0);
        q.set_next(0, 0);
        // two tasks: each slice is 3 ms; 0.5 ms is under the granularity
        assert!(!q.update_curr(0, 500_000));
        assert!(!q.update_curr(0, 3_000_000));
        assert!(q.update_curr(0, 3_000_001));
        // a nice -20 kworker's slice is almost the whole period
        let mut q = Cfs::new(1, 1, SchedFeatures::default());
        q.add(88_761);
        q.enqueue(0, 0);
        q.enqueue(1, 0);
        q.set_next(1, 0);
        assert_eq!(q.slice_ns(1), 5_931_569);
        assert_eq!(q.ents[1].vruntime, 0);
        assert!(!q.update_curr(1, 5_000_000));
        assert_eq!(q.ents[1].vruntime, 57_682, "5 ms × 1024 / 88761");
    }

    #[test]
    fn no_gentle_fair_sleepers_doubles_the_credit_and_no_wakeup_preemption_never_preempts() {
        let mut q = Cfs::new(
            2,
            1,
            SchedFeatures::parse("NO_GENTLE_FAIR_SLEEPERS").unwrap(),
        );
        q.enqueue(0, 0);
        q.set_next(0, 0);
        q.update_curr(0, 10_000_000);
        q.enqueue(1, 10_000_000);
        assert_eq!(q.ents[1].vruntime, 4_000_000, "min_vruntime less 6 ms");
        let mut q = Cfs::new(2, 1, SchedFeatures::parse("NO_WAKEUP_PREEMPTION").unwrap());
        q.enqueue(0, 0);
        q.set_next(0, 0);
        q.update_curr(0, 10_000_000);
        q.enqueue(1, 10_000_000);
        assert!(
            !q.wakeup_preempts(1, 0, 10_000_000),
            "3 ms ahead, but the feature is off"
        );
    }
}
