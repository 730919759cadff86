//! The fair class's choice of task under EEVDF (switch `sched.fair =
//! eevdf`: v6.6+, 147f3efaa241 "sched/fair: Implement an EEVDF-like
//! scheduling policy"; kernel/sched/fair.c as in Debian's 6.12.117): which
//! runnable task a CPU runs next, whether a woken task preempts the running
//! one, and when a running task's request (its slice) is used up.
//!
//! Each task is an entity with a weight (nice 0: 1024; kblockd's
//! high-priority kworkers, nice -20: 88761), a virtual runtime that grows
//! by its CPU time × 1024 / weight, a virtual deadline one request
//! (`sysctl_sched_base_slice`, 0.7 ms on one CPU) ahead of it, and a lag
//! kept over a sleep. The queue's virtual time V is the weighted average of
//! the virtual runtimes of the entities on it (`avg_vruntime`); an entity is
//! eligible when its virtual runtime is not after V (`entity_eligible`), and
//! the next task is the eligible one with the earliest deadline
//! (`pick_eevdf`). Mirrored, with the features Debian's 6.12.117 has on:
//! - `place_entity` with PLACE_LAG: a woken task goes to V less the lag it
//!   had when it slept, inflated so that the lag survives its own weight
//!   joining the average, and gets a deadline one request later.
//! - `dequeue_entity` with DELAY_DEQUEUE (152e11f6df29, v6.12): a task that
//!   sleeps while not eligible stays on the queue, counted in V, until it
//!   is picked (then it leaves, its positive lag cut to 0: DELAY_ZERO) or
//!   woken (`requeue_delayed_entity`).
//! - `update_curr` / `update_deadline`: a running task that reaches its
//!   deadline gets the next one and is rescheduled if others are queued.
//! - RUN_TO_PARITY (63304558ba5d "sched/eevdf: Curb wakeup-preemption",
//!   v6.6): a task keeps its CPU while it is eligible and has not used the
//!   request it was picked with (`protect_slice`).
//! - `check_preempt_wakeup_fair`: a woken task preempts the running one
//!   when `pick_eevdf` would choose it.
//!
//! Each of these features can be turned off as in the kernel's
//! /sys/kernel/debug/sched/features (`[host] sched_features`,
//! `sim::sched_features`): NO_PLACE_LAG, NO_DELAY_DEQUEUE, NO_DELAY_ZERO,
//! NO_RUN_TO_PARITY, NO_WAKEUP_PREEMPTION.
//!
//! Simplified (docs/fidelity/cpus.md, "EEVDF"): one queue for the host (the
//! kernel has one per CPU); no cgroup hierarchy (the harness's groups
//! enable only the io controller, so every task is on the root queue); a
//! task's virtual runtime grows with all the time it holds a CPU, interrupt
//! time included; equal requests for every task (no custom slices, so no
//! PREEMPT_SHORT); no NEXT_BUDDY (off in 6.12).

use crate::sim::fair::{charge_to, vdelta, FairClass};
use crate::sim::sched_features::{Feature, SchedFeatures};
use crate::sim::time::Ns;

/// `sysctl_sched_base_slice` on a 1-CPU machine (6.12: 0.7 ms × (1 +
/// ilog2(1))).
pub const BASE_SLICE_NS: Ns = 700_000;
pub use crate::sim::fair::NICE_0_WEIGHT;
/// The weight of a nice -20 task (`sched_prio_to_weight[0]`): kblockd's
/// WQ_HIGHPRI kworkers.
pub const NICE_M20_WEIGHT: u64 = 88761;

/// One task's scheduling entity.
#[derive(Clone, Copy, Debug)]
struct Entity {
    weight: u64,
    vruntime: i64,
    deadline: i64,
    /// The virtual lag kept while off the queue (`se->vlag`).
    vlag: i64,
    /// On the queue: running, waiting, or asleep but delayed.
    on_rq: bool,
    /// Asleep but still on the queue (`se->sched_delayed`).
    delayed: bool,
    /// Holds a CPU (the CPU's `curr`).
    running: bool,
    /// The deadline it was picked with (RUN_TO_PARITY's `protect_slice`).
    protect: Option<i64>,
    /// Its virtual runtime is charged up to then.
    exec_start: Ns,
}

impl Entity {
    fn new(weight: u64) -> Entity {
        Entity {
            weight,
            vruntime: 0,
            deadline: 0,
            vlag: 0,
            on_rq: false,
            delayed: false,
            running: false,
            protect: None,
            exec_start: 0,
        }
    }
}

/// The fair class's queue (one for the host).
#[derive(Clone, Debug)]
pub struct Eevdf {
    ents: Vec<Entity>,
    /// The last V (`cfs_rq->zero_vruntime`): where a task joining an empty
    /// queue is placed.
    zero: i64,
    /// `TICK_NSEC`: the lag bound's floor.
    tick_ns: Ns,
    /// The `sched_feat()` toggles.
    feat: SchedFeatures,
}

impl Eevdf {
    /// `nr` nice-0 tasks (the fio jobs) on a kernel of `tick_ns` ticks,
    /// with features `feat`.
    pub fn new(nr: usize, tick_ns: Ns, feat: SchedFeatures) -> Eevdf {
        Eevdf {
            ents: vec![Entity::new(NICE_0_WEIGHT); nr],
            zero: 0,
            tick_ns: tick_ns.max(1),
            feat,
        }
    }

    /// The running tasks' CPU time up to `now`, charged to their virtual
    /// runtimes (each CPU's `update_curr`, before the queue changes).
    fn charge(&mut self, now: Ns) {
        for e in self.ents.iter_mut().filter(|e| e.running) {
            charge_to(&mut e.vruntime, &mut e.exec_start, e.weight, now);
        }
    }

    /// Entities on the queue (`cfs_rq->nr_running`: the running ones and
    /// the delayed ones included).
    fn nr_running(&self) -> usize {
        self.ents.iter().filter(|e| e.on_rq).count()
    }

    /// Σ w·v and Σ w over the entities on the queue (exact; the kernel keeps
    /// them relative to a moving zero).
    fn sums(&self) -> (i128, i128) {
        self.ents
            .iter()
            .filter(|e| e.on_rq)
            .fold((0, 0), |(wv, w), e| {
                (
                    wv + e.weight as i128 * e.vruntime as i128,
                    w + e.weight as i128,
                )
            })
    }

    /// Mirrors `avg_vruntime`: V, the weighted average (rounded down);
    /// the last one while the queue is empty.
    fn avg_vruntime(&mut self) -> i64 {
        let (wv, w) = self.sums();
        if w > 0 {
            self.zero = wv.div_euclid(w) as i64;
        }
        self.zero
    }

    /// Mirrors `vruntime_eligible`: a virtual runtime not after V.
    fn eligible_at(&self, vruntime: i64) -> bool {
        let (wv, w) = self.sums();
        wv >= vruntime as i128 * w
    }

    fn eligible(&self, t: u32) -> bool {
        self.eligible_at(self.ents[t as usize].vruntime)
    }

    /// Mirrors `entity_lag`: V − v, bounded by two requests or a tick.
    fn lag(&mut self, t: u32) -> i64 {
        let e = self.ents[t as usize];
        let limit = vdelta((2 * BASE_SLICE_NS).max(self.tick_ns), e.weight);
        (self.avg_vruntime() - e.vruntime).clamp(-limit, limit)
    }

    /// Mirrors `place_entity`: task `t` joins the queue at V less its
    /// inflated lag (PLACE_LAG; at V without it), with a deadline one
    /// request later.
    fn place(&mut self, t: u32) {
        let (_, load) = self.sums();
        let e = self.ents[t as usize];
        let mut lag = 0i64;
        if load > 0 && self.feat.on(Feature::PlaceLag) {
            lag = (e.vlag as i128 * (load + e.weight as i128) / load) as i64;
        }
        let v = self.avg_vruntime() - lag;
        let e = &mut self.ents[t as usize];
        e.vruntime = v;
        e.deadline = v + vdelta(BASE_SLICE_NS, e.weight);
    }

    /// Mirrors `pick_eevdf`: the task to run among the waiting ones, the
    /// delayed ones and `curr` (the running task of the CPU deciding, if
    /// any).
    fn pick_eevdf(&self, curr: Option<u32>) -> Option<u32> {
        let tree = || {
            (0..self.ents.len() as u32).filter(|&i| {
                let e = &self.ents[i as usize];
                e.on_rq && !e.running
            })
        };
        if self.nr_running() == 1 {
            return curr.or_else(|| tree().next());
        }
        let curr = curr.filter(|&c| self.ents[c as usize].on_rq && self.eligible(c));
        if let Some(c) = curr {
            let e = &self.ents[c as usize];
            if e.protect == Some(e.deadline) {
                return Some(c);
            }
        }
        let best = tree()
            .filter(|&i| self.eligible(i))
            .min_by_key(|&i| (self.ents[i as usize].deadline, i));
        match (best, curr) {
            (None, c) => c,
            (Some(b), Some(c))
                if self.ents[c as usize].deadline < self.ents[b as usize].deadline =>
            {
                Some(c)
            }
            (b, _) => b,
        }
    }
}

/// The interface `sim::cpus` uses.
impl FairClass for Eevdf {
    fn clone_box(&self) -> Box<dyn FairClass> {
        Box::new(self.clone())
    }

    #[cfg(test)]
    fn vruntime(&self, t: u32) -> i64 {
        self.ents[t as usize].vruntime
    }

    /// A kernel thread of `weight` (numbered after the earlier tasks).
    fn add(&mut self, weight: u64) {
        self.ents.push(Entity::new(weight));
    }

    /// Mirrors `update_curr`: charge running task `t`'s CPU time up to
    /// `now` to its virtual runtime; true when that used up its request
    /// (`update_deadline`: it gets the next deadline) while others are on
    /// the queue (the caller reschedules it).
    fn update_curr(&mut self, t: u32, now: Ns) -> bool {
        self.charge(now);
        let others = self.nr_running() > 1;
        let e = &mut self.ents[t as usize];
        if !e.running || e.vruntime < e.deadline {
            return false;
        }
        e.deadline = e.vruntime + vdelta(BASE_SLICE_NS, e.weight);
        others
    }

    /// Task `t` is woken at `now` (`enqueue_task_fair`): a delayed task is
    /// requeued where it is (`requeue_delayed_entity`; placed afresh at V
    /// if its lag turned positive, DELAY_ZERO), any other is placed.
    fn enqueue(&mut self, t: u32, now: Ns) {
        self.charge(now);
        let e = self.ents[t as usize];
        if e.delayed {
            let lag = self.lag(t);
            let e = &mut self.ents[t as usize];
            e.delayed = false;
            if lag > 0 && self.feat.on(Feature::DelayZero) {
                e.on_rq = false;
                e.vlag = 0;
                self.place(t);
                self.ents[t as usize].on_rq = true;
            }
            return;
        }
        if e.on_rq {
            return;
        }
        self.place(t);
        self.ents[t as usize].on_rq = true;
    }

    /// Task `t` sleeps (`dequeue_entity` with DEQUEUE_SLEEP): it leaves the
    /// queue with its lag, or, not eligible, stays on it delayed
    /// (DELAY_DEQUEUE).
    fn dequeue_sleep(&mut self, t: u32) {
        self.ents[t as usize].running = false;
        self.ents[t as usize].protect = None;
        if self.feat.on(Feature::DelayDequeue) && !self.eligible(t) {
            self.ents[t as usize].delayed = true;
            return;
        }
        self.ents[t as usize].vlag = self.lag(t);
        self.ents[t as usize].on_rq = false;
    }

    /// Task `t` gives its CPU up but stays runnable (`put_prev_entity`).
    fn put_prev(&mut self, t: u32) {
        self.ents[t as usize].running = false;
        self.ents[t as usize].protect = None;
    }

    /// Mirrors `set_next_entity`: task `t` gets a CPU at `now`; RUN_TO_PARITY
    /// protects the request it was picked with.
    fn set_next(&mut self, t: u32, now: Ns) {
        let parity = self.feat.on(Feature::RunToParity);
        let e = &mut self.ents[t as usize];
        e.running = true;
        e.exec_start = now;
        e.protect = parity.then_some(e.deadline);
    }

    /// Whether the wake-up of task `t` reschedules `curr`: the enqueue's
    /// `update_curr` (charging `curr` up to `now`) reschedules it when that
    /// used up its request, whatever the features; then
    /// `check_preempt_wakeup_fair` (WAKEUP_PREEMPTION) when `pick_eevdf`
    /// would choose `t`.
    fn wakeup_preempts(&mut self, t: u32, curr: u32, now: Ns) -> bool {
        let used_up = self.update_curr(curr, now);
        if !self.feat.on(Feature::WakeupPreemption) {
            return used_up;
        }
        used_up || self.pick_eevdf(Some(curr)) == Some(t)
    }

    /// `pick_next_entity` for a CPU whose task is `curr` (or free): the
    /// next task, or None to keep `curr` (or leave the CPU idle). A delayed
    /// task picked leaves the queue (DELAY_ZERO) and the pick is made
    /// again.
    ///
    /// Simplified: with several CPUs on the one queue, the eligible tasks
    /// may all be running elsewhere; a free CPU then takes the waiting task
    /// with the earliest deadline.
    fn pick_next(&mut self, curr: Option<u32>) -> Option<u32> {
        loop {
            let p = match self.pick_eevdf(curr) {
                Some(p) => p,
                None if curr.is_none() => (0..self.ents.len() as u32)
                    .filter(|&i| {
                        let e = &self.ents[i as usize];
                        e.on_rq && !e.running && !e.delayed
                    })
                    .min_by_key(|&i| (self.ents[i as usize].deadline, i))?,
                None => return None,
            };
            if Some(p) == curr {
                return None;
            }
            if !self.ents[p as usize].delayed {
                return Some(p);
            }
            let lag = self.lag(p);
            let zero = self.feat.on(Feature::DelayZero);
            let e = &mut self.ents[p as usize];
            e.vlag = if zero { lag.min(0) } else { lag };
            e.delayed = false;
            e.on_rq = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two nice-0 tasks on a 4 ms-tick kernel (HZ 250).
    fn two() -> Eevdf {
        Eevdf::new(2, 4_000_000, SchedFeatures::default())
    }

    fn two_with(features: &str) -> Eevdf {
        Eevdf::new(2, 4_000_000, SchedFeatures::parse(features).unwrap())
    }

    #[test]
    fn a_task_alone_is_placed_at_v_with_one_request_of_deadline() {
        let mut q = two();
        q.enqueue(0, 0);
        assert_eq!(q.pick_next(None), Some(0));
        q.set_next(0, 0);
        // alone, its request used up does not reschedule (nobody else)
        assert!(!q.update_curr(0, 1_000_000));
        assert_eq!(q.ents[0].vruntime, 1_000_000);
        assert_eq!(q.ents[0].deadline, 1_000_000 + BASE_SLICE_NS as i64);
        // a second task joins at V (its lag is 0), a request later
        q.enqueue(1, 1_000_000);
        assert_eq!(q.ents[1].vruntime, 1_000_000);
        assert_eq!(q.ents[1].deadline, 1_700_000);
    }

    #[test]
    fn run_to_parity_keeps_the_cpu_until_the_request_is_used() {
        let mut q = two();
        q.enqueue(0, 0);
        q.set_next(0, 0);
        // task 1 wakes 100 µs later with no lag: task 0 is eligible
        // (V = its own v until then) and protected
        q.enqueue(1, 100_000);
        assert!(!q.wakeup_preempts(1, 0, 100_000));
        // task 0 ran past V but keeps its request: RUN_TO_PARITY drops
        // only when it is no longer eligible
        assert!(!q.eligible(0) || q.pick_eevdf(Some(0)) == Some(0));
        // at 0.7 ms its request is used up: rescheduled, and task 1
        // (eligible, earlier deadline) is picked
        assert!(q.update_curr(0, 700_000));
        assert_eq!(q.pick_next(Some(0)), Some(1));
    }

    #[test]
    fn a_sleeper_keeps_its_lag_and_wins_on_waking() {
        let mut q = two();
        q.enqueue(0, 0);
        q.enqueue(1, 0);
        q.set_next(0, 0);
        // task 1 waits 300 µs while task 0 runs: V moves 150 µs, so task 1
        // is owed 150 µs (lag), task 0 is 150 µs ahead (not eligible)
        q.update_curr(0, 300_000);
        assert_eq!(q.lag(1), 150_000);
        assert!(!q.eligible(0));
        // task 0 sleeps while not eligible: delayed, still counted in V
        q.dequeue_sleep(0);
        assert!(q.ents[0].delayed && q.ents[0].on_rq);
        assert_eq!(q.pick_next(None), Some(1));
        q.set_next(1, 300_000);
        // task 1 runs 200 µs and sleeps eligible: it leaves with its lag
        q.update_curr(1, 500_000);
        q.dequeue_sleep(1);
        assert!(!q.ents[1].on_rq);
        assert_eq!(q.ents[1].vlag, 50_000, "V = (300 + 200) / 2 µs, v = 200 µs");
        // picking the delayed task 0, alone on the queue now (V = its v),
        // dequeues it with no lag
        assert_eq!(q.pick_next(None), None);
        assert!(!q.ents[0].on_rq && q.ents[0].vlag == 0);
        // task 0 wakes alone (placed at the last V, 300 µs), then task 1
        // with its 50 µs lag, inflated by (1024 + 1024) / 1024 so that it
        // keeps it once its own weight is in the average
        q.enqueue(0, 600_000);
        q.set_next(0, 600_000);
        q.enqueue(1, 600_000);
        assert_eq!(q.ents[1].vruntime, 200_000);
        assert_eq!(q.avg_vruntime() - q.ents[1].vruntime, 50_000);
        // task 0, placed at the old V, is now 50 µs past the new one: not
        // eligible, so not protected, and task 1 preempts it
        assert!(q.wakeup_preempts(1, 0, 600_000));
    }

    #[test]
    fn a_nice_minus_20_kworker_has_a_short_virtual_request_and_a_small_lag_bound() {
        let mut q = two();
        q.add(NICE_M20_WEIGHT);
        q.enqueue(0, 0);
        q.set_next(0, 0);
        // 0.7 ms of CPU is 8,075 ns of its virtual time; its lag bound is
        // the 4 ms tick in its virtual time, 46,146 ns
        q.enqueue(2, 1_000_000);
        assert_eq!(q.ents[2].deadline - q.ents[2].vruntime, 8_075);
        q.ents[2].vruntime -= 10_000_000;
        assert_eq!(q.lag(2), 46_146);
    }

    /// The ratchet of docs/fidelity/bfq-qemu.md ("The lock-step checked
    /// against 6.12's fair.c and workqueue.c", item b): a nice -20
    /// kworker woken while a nice-0 task holds the CPU (kblockd woken by
    /// `blk_mq_do_dispatch_sched`'s hand-off, which waits for the
    /// submitter's return to user space) is owed almost all of that wait
    /// (its weight is 98.9 % of the queue's) and pays back only 1.1 % of
    /// its own run: every such cycle adds to the lag it sleeps with,
    /// until `entity_lag`'s bound. Placed with that lag, it moves V by
    /// the lag × its weight / the others' load.
    #[test]
    fn a_nice_minus_20_kworker_that_waits_each_time_sleeps_with_the_bounded_lag() {
        let mut q = Eevdf::new(1, 4_000_000, SchedFeatures::default());
        q.add(NICE_M20_WEIGHT);
        q.enqueue(0, 0);
        q.set_next(0, 0);
        let mut now: Ns = 0;
        let mut lags = Vec::new();
        for _ in 0..600 {
            now += 20_000;
            q.enqueue(1, now);
            // task 0 goes on 8 µs to its preemption point, kblockd runs 3 µs
            now += 8_000;
            q.update_curr(0, now);
            q.put_prev(0);
            assert_eq!(q.pick_next(None), Some(1));
            q.set_next(1, now);
            now += 3_000;
            q.update_curr(1, now);
            q.dequeue_sleep(1);
            assert!(!q.ents[1].on_rq, "left eligible, with its lag");
            lags.push(q.ents[1].vlag);
            q.set_next(0, now);
        }
        // about 8,000 × 1024 / 89,785 = 91 ns of virtual lag a cycle
        assert!((85..=95).contains(&lags[0]), "{}", lags[0]);
        assert!(lags.windows(2).all(|w| w[1] >= w[0]));
        assert_eq!(*lags.last().unwrap(), 46_146, "the 4 ms tick at its weight");
        // placed with it beside task 0 alone, V drops by 46,146 × 88,761 /
        // 1024 = 4.0 ms: task 0 is 4 ms past V, not eligible
        q.update_curr(0, now + 20_000);
        let v0 = q.ents[0].vruntime;
        q.enqueue(1, now + 20_000);
        let v = q.avg_vruntime();
        assert!((3_990_000..=4_010_000).contains(&(v0 - v)), "{}", v0 - v);
        assert!(!q.eligible(0));
    }

    /// Tasks 0 and 1 queued at 0, task 0 running until `until_ns`.
    fn task_0_ran_while_1_waited(features: &str, until_ns: Ns) -> Eevdf {
        let mut q = two_with(features);
        q.enqueue(0, 0);
        q.enqueue(1, 0);
        q.set_next(0, 0);
        q.update_curr(0, until_ns);
        q
    }

    /// Task 1 waits 300 µs while task 0 runs, then runs 100 µs and sleeps
    /// eligible with 100 µs of lag (V 300, v 200); task 0 keeps running
    /// 100 µs and task 1 wakes at 500 µs.
    fn sleeper_wakes(features: &str) -> Eevdf {
        let mut q = task_0_ran_while_1_waited(features, 300_000);
        q.put_prev(0);
        q.set_next(1, 300_000);
        q.update_curr(1, 400_000);
        q.dequeue_sleep(1);
        assert!(!q.ents[1].on_rq, "left eligible");
        q.set_next(0, 400_000);
        q.update_curr(0, 500_000);
        q.enqueue(1, 500_000);
        q
    }

    #[test]
    fn place_lag_keeps_the_sleepers_lag_and_no_place_lag_puts_it_at_v() {
        let mut q = sleeper_wakes("");
        assert!(q.avg_vruntime() - q.ents[1].vruntime > 0, "owed CPU");
        let mut q = sleeper_wakes("NO_PLACE_LAG");
        let v_before = q.ents[0].vruntime; // alone on the queue: V was its v
        assert_eq!(q.ents[1].vruntime, v_before);
        assert_eq!(q.avg_vruntime() - q.ents[1].vruntime, 0);
        assert_eq!(
            q.ents[1].deadline - q.ents[1].vruntime,
            BASE_SLICE_NS as i64
        );
    }

    #[test]
    fn no_delay_dequeue_lets_a_non_eligible_sleeper_leave_with_negative_lag() {
        for (f, delayed) in [("", true), ("NO_DELAY_DEQUEUE", false)] {
            let mut q = task_0_ran_while_1_waited(f, 300_000);
            q.dequeue_sleep(0);
            assert_eq!(q.ents[0].delayed, delayed, "{f}");
            assert_eq!(q.ents[0].on_rq, delayed, "{f}");
            if !delayed {
                assert_eq!(q.ents[0].vlag, -150_000);
            }
        }
    }

    #[test]
    fn no_run_to_parity_drops_the_protection_and_no_wakeup_preemption_never_preempts() {
        // task 0 runs alone 100 µs; kblockd's nice -20 kworker wakes at V,
        // with a deadline 8 µs (virtual) away: task 0, eligible, keeps its
        // CPU only while its request is protected
        for (f, preempts) in [("", false), ("NO_RUN_TO_PARITY", true)] {
            let mut q = two_with(f);
            q.add(NICE_M20_WEIGHT);
            q.enqueue(0, 0);
            q.set_next(0, 0);
            q.enqueue(2, 100_000);
            assert!(q.eligible(0));
            assert_eq!(q.wakeup_preempts(2, 0, 100_000), preempts, "{f}");
        }
        assert!(sleeper_wakes("").wakeup_preempts(1, 0, 500_000));
        assert!(!sleeper_wakes("NO_WAKEUP_PREEMPTION").wakeup_preempts(1, 0, 500_000));
        // at V, the sleeper no longer beats the eligible, protected task 0
        assert!(!sleeper_wakes("NO_PLACE_LAG").wakeup_preempts(1, 0, 500_000));
    }

    #[test]
    fn a_request_used_up_at_a_wake_up_reschedules_even_when_another_task_is_picked() {
        for f in ["", "NO_WAKEUP_PREEMPTION"] {
            let mut q = two_with(f);
            q.add(NICE_0_WEIGHT);
            q.enqueue(0, 0);
            q.enqueue(1, 0);
            q.set_next(0, 0);
            // task 0 ran 0.8 ms, past its 0.7 ms deadline, when task 2 wakes;
            // pick_eevdf would choose the waiting task 1 (earliest deadline),
            // not task 2, but the enqueue's update_curr reschedules task 0
            q.enqueue(2, 800_000);
            assert!(q.wakeup_preempts(2, 0, 800_000), "{f}");
            assert_eq!(q.pick_next(Some(0)), Some(1));
        }
    }
}
