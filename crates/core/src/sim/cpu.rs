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
