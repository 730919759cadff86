//! The host's CPU costs per operation.

use crate::sim::cpus::HostCpus;
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
    /// burst. The free host keeps the bio at the call's start (0,
    /// `submit_ns`): its figures do not move.
    pub fn submit_split(&self) -> (Ns, Ns) {
        if self.cpus.nr == 0 {
            return (0, self.submit_ns);
        }
        let after = self.cpus.submit_return_ns.min(self.submit_ns);
        (self.submit_ns - after, after)
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
