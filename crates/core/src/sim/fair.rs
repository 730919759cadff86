//! The fair scheduling class as the simulated host's CPUs use it
//! (`sim::cpus`): one interface for its two models with virtual runtimes,
//! chosen by switch `sched.fair` — `eevdf` (v6.6+, `sim::eevdf`) and
//! `cfs-vruntime` (v6.5 and earlier, `sim::cfs`). The third value, `cfs`,
//! is no class at all: a FIFO run queue with CFS's slice (`sim::cpus`).
//!
//! Tasks are numbered as `sim::cpus` numbers them: the fio jobs first, then
//! each kernel thread in the order it is added.

use crate::sim::time::Ns;

/// The weight of a nice-0 task (`NICE_0_LOAD` scaled down).
pub const NICE_0_WEIGHT: u64 = 1024;

/// `calc_delta_fair`: `delta_ns` of CPU time in the virtual time of an
/// entity of `weight`.
pub fn vdelta(delta_ns: Ns, weight: u64) -> i64 {
    ((delta_ns as u128 * NICE_0_WEIGHT as u128) / weight as u128) as i64
}

/// The CPU time of a running entity of `weight` from `exec_start` to `now`,
/// charged to its virtual runtime (`update_curr`); `exec_start` moves to
/// `now`.
pub fn charge_to(vruntime: &mut i64, exec_start: &mut Ns, weight: u64, now: Ns) {
    if now > *exec_start {
        *vruntime += vdelta(now - *exec_start, weight);
        *exec_start = now;
    }
}

/// What `sim::cpus` asks of the fair class (kernel/sched/fair.c's
/// `sched_class` operations it needs).
pub trait FairClass: std::fmt::Debug {
    /// A kernel thread of `weight` (numbered after the earlier tasks).
    fn add(&mut self, weight: u64);
    /// `update_curr` for running task `t` at `now`: true when it must be
    /// rescheduled while others wait (its slice or request used up).
    fn update_curr(&mut self, t: u32, now: Ns) -> bool;
    /// Task `t` is woken at `now` (`enqueue_task_fair` with ENQUEUE_WAKEUP).
    fn enqueue(&mut self, t: u32, now: Ns);
    /// Task `t` sleeps (`dequeue_entity` with DEQUEUE_SLEEP).
    fn dequeue_sleep(&mut self, t: u32);
    /// Task `t` gives its CPU up but stays runnable (`put_prev_entity`).
    fn put_prev(&mut self, t: u32);
    /// Task `t` gets a CPU at `now` (`set_next_entity`).
    fn set_next(&mut self, t: u32, now: Ns);
    /// Whether woken task `t` preempts `curr` (`check_preempt_wakeup`,
    /// `check_preempt_wakeup_fair` under EEVDF).
    fn wakeup_preempts(&mut self, t: u32, curr: u32, now: Ns) -> bool;
    /// The next task for a CPU whose task is `curr` (or free), or None to
    /// keep `curr` (or leave the CPU idle).
    fn pick_next(&mut self, curr: Option<u32>) -> Option<u32>;
    /// A copy (the simulator's state is cloneable).
    fn clone_box(&self) -> Box<dyn FairClass>;
    /// Task `t`'s virtual runtime (for tests of what is charged to whom).
    #[cfg(test)]
    fn vruntime(&self, t: u32) -> i64;
}

impl Clone for Box<dyn FairClass> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}
