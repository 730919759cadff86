//! The host's CPU configuration (`[host]`): how many CPUs, what the
//! kernel's work costs on them, and the defaults measured on real hosts
//! (docs/fidelity/cpus.md). The run queue that uses it is `sim::cpus`.

use crate::sim::background::Background;
use crate::sim::sched_features::SchedFeatures;
use crate::sim::time::Ns;

/// The host: how many CPUs and what the kernel's work costs on them. Each
/// cost has an optional exponential tail (`*_tail_ns`: the mean of an
/// exponential draw added to each occurrence, 0 = none), drawn from the
/// host's own seeded stream.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HostCpus {
    /// CPUs the tasks and interrupts contend for; 0 = the free host (a task
    /// runs the instant it is due, interrupts cost nothing).
    pub nr: u32,
    /// A request's completion interrupt and block softirq
    /// (`blk_mq_complete_request` → `blk_mq_end_request` → `bio_endio`).
    pub irq_ns: Ns,
    pub irq_tail_ns: Ns,
    /// Waking a blocked task onto a CPU (`try_to_wake_up` and the context switch).
    pub wake_ns: Ns,
    pub wake_tail_ns: Ns,
    /// A kernel timer's softirq (iocost's `ioc_timer_fn`, blk-throttle's
    /// pending timer, an I/O scheduler's timer).
    pub timer_ns: Ns,
    pub timer_tail_ns: Ns,
    /// Wake-up preemption of fio tasks by woken kernel threads (the loop
    /// workers): see [`Cpus::wake`](crate::sim::cpus::Cpus::wake). Off by default (a woken task waits its
    /// turn in the FIFO run queue).
    pub wakeup_preempt: bool,
    /// Other work taking busy CPUs away at random (`sim::background`);
    /// none by default.
    pub background: Background,
    /// A kblockd queue run's own CPU time (`blk_mq_run_work_fn`: the
    /// scheduler's dispatch and the driver's `queue_rq`), beside the
    /// kworker's wake-up (`wake_ns`); machine/kblockd.rs. 0 by default.
    pub kblockd_ns: Ns,
    /// Held bios leave through blk-throttle's dispatch work on a kworker
    /// (machine/kthrotld.rs); off (default): in the timer call (throttle.md).
    pub kthrotld: bool,
    /// With `kthrotld`, that kworker's CPU per bio it issues, beside `wake_ns`.
    pub throtl_dispatch_ns_per_bio: Ns,
    /// Every getevents call costs `reap_ns`, also one finding its completions
    /// waiting (fio/reap.rs); off (default, cpus.md says why): a woken one's.
    pub reap_every_call: bool,
    /// How the fair class chooses tasks (switch `sched.fair`); `tick_ns`
    /// is the kernel's tick (EEVDF's lag bound's floor, CFS's tick check).
    pub fair: FairModel,
    pub tick_ns: Ns,
    /// The fair class's `sched_feat()` toggles (`[host] sched_features`;
    /// default: the kernel's, every mirrored feature on).
    pub features: SchedFeatures,
    /// The part of the task's `submit_ns` spent after `submit_bio` returns
    /// to the submit call (`CpuCosts::submit_split`): the way back from
    /// the block layer to user space, at whose end a pending reschedule is
    /// taken. 0: the bio is the call's last work.
    pub submit_return_ns: Ns,
    /// The waker's part of waking a sleeping task from a task's context
    /// (`try_to_wake_up` → `ttwu_queue` → `enqueue_task` and the
    /// preemption check, run by the waker with interrupts off), charged to
    /// the task holding the waker's CPU ([`Cpus::set_context`](crate::sim::cpus::Cpus::set_context)); `wake_ns`
    /// stays the woken side's (the switch in). 0 by default: a wake-up
    /// costs only the woken task.
    pub waker_ns: Ns,
    /// The waker's part of waking a task asleep for a request tag: the
    /// free that ends a request (`blk_mq_put_tag` → `sbitmap_queue_clear`
    /// → `sbitmap_queue_wake_up`, lib/sbitmap.c) walks the sbitmap wait
    /// queue's entries (`__wake_up` → `autoremove_wake_function` →
    /// `try_to_wake_up`), more work than a kworker's `wake_up_process`.
    /// None by default: `waker_ns` ([`HostCpus::tag_waker_cost`]).
    pub tag_waker_ns: Option<Ns>,
    /// A woken tag waiter's pass of `blk_mq_get_tag`'s loop (queue run, retry,
    /// sleeping again without a tag; machine/kernel.rs `defer_tag_retry`),
    /// beside its wake-up. 0 by default: the pass costs no CPU.
    pub tag_retry_ns: Ns,
    /// The part of the way back (`submit_return_ns`) a submit call spends
    /// only when its own dispatch woke a sleeping task
    /// (`CpuCosts::submit_wake_part`, [`Cpus::wakes_made`](crate::sim::cpus::Cpus::wakes_made)); a call whose
    /// bio joins work already queued (the loop worker's item pending, its
    /// kworker awake) returns without it. 0 by default: every call costs
    /// `submit_ns`.
    pub submit_wake_ns: Ns,
}

/// The fair class's model (switch `sched.fair`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FairModel {
    /// `cfs`: the FIFO run queue with CFS's slice (no virtual runtimes).
    #[default]
    Fifo,
    /// `cfs-vruntime`: CFS with virtual runtimes (`sim::cfs`).
    CfsVruntime,
    /// `eevdf`: EEVDF (`sim::eevdf`).
    Eevdf,
}

impl FairModel {
    /// The model a `sched.fair` value names (`cfs` and anything else: FIFO).
    pub fn of(value: &str) -> FairModel {
        match value {
            "eevdf" => FairModel::Eevdf,
            "cfs-vruntime" => FairModel::CfsVruntime,
            _ => FairModel::Fifo,
        }
    }
}

impl HostCpus {
    /// The most CPUs a scenario may ask for.
    pub const MAX_NR: u32 = 1024;

    /// What the waker of a task asleep for a request tag pays
    /// (`tag_waker_ns`, else the same as any wake-up's `waker_ns`).
    pub fn tag_waker_cost(&self) -> Ns {
        self.tag_waker_ns.unwrap_or(self.waker_ns)
    }

    /// `nr` CPUs with the costs measured on a real host
    /// (docs/fidelity/cpus.md, "Measured costs") and no tails.
    pub fn measured(nr: u32) -> HostCpus {
        HostCpus {
            nr,
            irq_ns: DEFAULT_IRQ_NS,
            wake_ns: DEFAULT_WAKE_NS,
            timer_ns: DEFAULT_TIMER_NS,
            submit_return_ns: DEFAULT_SUBMIT_RETURN_NS,
            throtl_dispatch_ns_per_bio: DEFAULT_THROTL_DISPATCH_NS_PER_BIO,
            ..HostCpus::default()
        }
    }
}

/// Default completion interrupt + block softirq per request, ns: the BLOCK
/// softirq traced on this project's 2-CPU VM (kernel 6.18, loop device on
/// tmpfs, fio libaio QD1) lasted 4.9 µs at the median, 1.3 µs at p10, with
/// the tracing's own cost inside and the submitter's wake-up (charged as
/// `wake_ns` here) too; 3 µs keeps it modest (docs/fidelity/cpus.md).
pub const DEFAULT_IRQ_NS: Ns = 3_000;
/// Default wake-up + context switch of a blocked task, ns: `perf bench sched
/// pipe` pinned to one CPU takes 7.8 µs per round trip (two wake-ups, two
/// switches, two pipe calls), and a woken fio task was switched in 2.7 µs
/// (median) after its `sched_wakeup` (docs/fidelity/cpus.md).
pub const DEFAULT_WAKE_NS: Ns = 3_000;
/// Default `throtl_dispatch_ns_per_bio`: the 6.1 guest's
/// `blk_throtl_dispatch_work_fn` issued 128 held bios in 330 µs, plug
/// flushes included (docs/fidelity/throttle.md, "kthrotld").
pub const DEFAULT_THROTL_DISPATCH_NS_PER_BIO: Ns = 2_600;
/// Default kernel timer softirq, ns: the TIMER softirq traced as above took
/// 4.8 µs at the median and 1.6 µs at p10, for whatever timers expired
/// together; one timer function is taken as 2 µs (docs/fidelity/cpus.md).
pub const DEFAULT_TIMER_NS: Ns = 2_000;
/// Default part of the submit call after `submit_bio`, ns: in the
/// debian-6.12 QEMU guest (one vCPU, TCG) fio was switched out 6 µs after
/// its dispatch woke the loop worker (median of 2,582 preemptions at the
/// return to user space, p10 6, p90 7; 10 µs after the dispatch's
/// `block_rq_issue`), the wake-up that sets the reschedule being the
/// model's instant of `submit_bio` (docs/fidelity/bfq.md, "Where the
/// dispatch happens in the submit call"). Cut to `submit_ns` when that is
/// shorter (the default 2 µs call: the bio at its start, as before).
pub const DEFAULT_SUBMIT_RETURN_NS: Ns = 6_000;
