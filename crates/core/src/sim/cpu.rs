//! The host's CPU costs per operation.

use crate::sim::host_cpus::HostCpus;
use crate::sim::time::Ns;

/// Per-I/O CPU costs of the submitting task. On the free host (`cpus.nr ==
/// 0`, the default) there is no CPU contention and these only place fio's
/// timestamps where a real submission would; with CPUs (`sim::cpus`) they
/// are the task's bursts, which hold a CPU.
#[derive(Clone, Copy, Debug)]
pub struct CpuCosts {
    /// From fio preparing an io_u to the submit syscall returning, when the
    /// kernel does not block (fio's minimum slat).
    pub submit_ns: Ns,
    /// From the device completing to fio's reap returning (irq, wakeup, getevents).
    pub reap_ns: Ns,
    /// Host scheduling noise: a fio task wakes this late (mean of an
    /// exponential draw, 0 = never) from each timed sleep (think time, rate
    /// sleep), drawn from a per-job stream of the run's seed. Real hosts
    /// wake tasks tens to hundreds of µs late (idle-state exit, other tasks,
    /// interrupts); the default host is exact.
    pub wake_jitter_ns: Ns,
    /// The host's CPUs and the kernel's work on them (none by default).
    pub cpus: HostCpus,
}

impl CpuCosts {
    /// `submit_ns` split at the instant the call submits its bio:
    /// (before, after). With CPUs the call first spends what precedes
    /// `submit_bio` (fio's io_u preparation, the syscall's entry, the
    /// iocb's and the bio's set-up), then the block layer inserts and,
    /// where it runs the queue in the caller's context, dispatches, and
    /// the rest ([`HostCpus::submit_return_ns`], at most `submit_ns`) is
    /// the way back to user space. A voluntary-preemption kernel (the
    /// QEMU guests' Debian configs: `CONFIG_PREEMPT_VOLUNTARY` under
    /// `PREEMPT_DYNAMIC`) takes a reschedule set by the dispatch's
    /// wake-ups at the end of that way back (`exit_to_user_mode_loop`
    /// calls `schedule()` on `_TIF_NEED_RESCHED`; the io_submit path has
    /// no `cond_resched` after `submit_bio`), i.e. at the end of the
    /// burst. The part of the way back that only a call whose dispatch
    /// woke a sleeping task spends ([`CpuCosts::submit_wake_part`]) is
    /// left out of `after`: the call adds it when it did wake one
    /// (machine/kernel.rs, `submit`). The free host keeps the bio at the
    /// call's start (0, `submit_ns`): its figures do not move.
    pub fn submit_split(&self) -> (Ns, Ns) {
        if self.cpus.nr == 0 {
            return (0, self.submit_ns);
        }
        let after = self.cpus.submit_return_ns.min(self.submit_ns);
        (self.submit_ns - after, after - self.submit_wake_part())
    }

    /// The part of the way back (`submit_return_ns`, as cut to
    /// `submit_ns`) that a submit call spends only when its dispatch woke
    /// a sleeping task ([`HostCpus::submit_wake_ns`], at most that way
    /// back; 0 on the free host). A wake-up from the call (the loop
    /// worker's kick, `loop_queue_work` → `queue_work` → `kick_pool` →
    /// `wake_up_process`; on 6.1's queue run, kblockd's) sets the caller's
    /// `need_resched` when the woken task is to preempt it, and the call
    /// then goes through `schedule()` on its way out
    /// (`exit_to_user_mode_loop`); a bio that joins work already queued
    /// finds `queue_work` return at once (the work's `WORK_STRUCT_PENDING`
    /// bit), wakes nobody, and the call returns straight to user space.
    /// Simplified: the part is the same whether or not the woken task is
    /// to preempt the caller.
    pub fn submit_wake_part(&self) -> Ns {
        if self.cpus.nr == 0 {
            return 0;
        }
        let after = self.cpus.submit_return_ns.min(self.submit_ns);
        self.cpus.submit_wake_ns.min(after)
    }
}

impl Default for CpuCosts {
    fn default() -> Self {
        CpuCosts {
            submit_ns: 2_000,
            reap_ns: 1_000,
            wake_jitter_ns: 0,
            cpus: HostCpus::default(),
        }
    }
}
