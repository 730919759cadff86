//! The seam between user space and the kernel. A workload (`workload/`)
//! reaches the kernel only through [`Syscalls`]: submitting I/O
//! (`io_submit`, or `pread`/`pwrite` with O_DIRECT), buffered
//! `read`/`write` and page faults through the page cache, sleeping, and the
//! delay charged on the way back to user space. The kernel reaches the
//! workload only through [`Tasks`]: a call is over, an I/O completed, a task
//! wakes. Neither side imports the other; the machine (`machine/`) joins them.

pub use crate::block::blk_cgroup::CgId;
pub use crate::block::ioprio::{Ioprio, SchedPolicy};
pub use crate::sim::cpu::CpuCosts;
pub use crate::sim::engine::{DevId, Ev, JobId};
use crate::sim::time::Ns;

/// One direct I/O a task hands to the kernel: an iocb of `io_submit`, or the
/// buffer of a `pread`/`pwrite` on an O_DIRECT descriptor.
#[derive(Clone, Copy, Debug)]
pub struct DirectIo {
    /// The submitting task and its slot for this I/O (fio's io_u).
    pub task: JobId,
    pub io_u: u32,
    /// The device the descriptor is open on, and the task's cgroup.
    pub dev: DevId,
    pub cg: CgId,
    pub write: bool,
    pub offset_bytes: u64,
    pub bytes: u32,
    /// REQ_SYNC: the descriptor was opened with O_DIRECT (`direct=1`).
    pub sync: bool,
    /// The task's I/O priority (`ioprio_set`); the iocb carries none.
    pub task_prio: Ioprio,
}

/// A buffered I/O, or a walk over mapped pages, on the task's page-cache file.
#[derive(Clone, Copy, Debug)]
pub struct BufferedIo {
    pub task: JobId,
    pub io_u: u32,
    pub write: bool,
    pub offset_bytes: u64,
    pub bytes: u32,
    pub task_prio: Ioprio,
}

/// What user space can ask of the kernel.
pub trait Syscalls {
    /// The current instant (`clock_gettime`).
    fn now(&self) -> Ns;
    /// The host's CPU costs of the calls.
    fn cpu(&self) -> CpuCosts;
    /// A sleep until `t` that nothing interrupts: when no other event is due
    /// before `t`, the clock moves there and the task goes on (true);
    /// otherwise (false) the task must queue its wake-up with [`Syscalls::timer`].
    fn sleep_inline(&mut self, t: Ns) -> bool;
    /// Whether the host has CPUs that tasks contend for (`sim::cpus`): a
    /// task that sleeps then gives its CPU up and wakes with `Ev::Wake`.
    fn host_cpus(&self) -> bool;
    /// Queue `ev` at `t`: a task's wake-up, or one of fio's own timers.
    fn timer(&mut self, t: Ns, ev: Ev);
    /// Submit a direct I/O. The kernel calls [`Tasks::submit_done`] when the
    /// call is over: before this returns, or later if the task slept in the
    /// kernel (rq_qos, a tag); and [`Tasks::io_done`] when the I/O completes.
    /// Returns the CPU time the call spent beyond `CpuCosts::submit_ns`
    /// inside `submit_bio` (waking an idle driver thread), which a task
    /// that did not sleep adds to its call.
    fn submit(&mut self, tasks: &mut dyn Tasks, io: DirectIo) -> Ns;
    /// `blkcg_maybe_throttle_current`: the delay charged to a task of `cg`
    /// on its way back to user space after submitting to `dev`.
    fn return_delay(&mut self, dev: DevId, cg: CgId) -> Ns;
    /// A task asleep inside its submit call was woken and runs: the kernel
    /// goes on where it slept (a request-tag wait on a host with CPUs),
    /// calling [`Tasks::submit_done`] if the call is now over. Returns the
    /// CPU time that work spent beyond the call's costs, as
    /// [`Syscalls::submit`] does.
    fn resume_in_kernel(&mut self, tasks: &mut dyn Tasks, task: JobId) -> Ns;
    /// Whether the machine has a page cache (a task does buffered or mapped I/O).
    fn has_page_cache(&self) -> bool;
    /// A buffered `read`/`write`, or the faults of touching mapped pages.
    /// Returns the call's CPU time when it completed without sleeping; None
    /// when the task sleeps, and then [`Tasks::io_done`] ends the call.
    fn buffered(&mut self, tasks: &mut dyn Tasks, io: BufferedIo) -> Option<Ns>;
    /// Whether a time-series probe listens (not a system call: the
    /// simulator's observation of the task, `sim::probe`).
    fn probing(&self) -> bool;
    /// Hand a sample to the probe.
    fn probe(&mut self, p: &crate::sim::probe::Probe<'_>);
}

/// What the kernel tells user space's tasks.
pub trait Tasks {
    /// The submit call of `task` for `io_u` is over (the bio got a request,
    /// was merged, or was queued by blk-throttle). Returns true when the
    /// task had gone to sleep in the kernel: the kernel then charges the
    /// rest of the call and wakes it with [`Tasks::set_wake`].
    fn submit_done(&mut self, task: JobId, io_u: u32) -> bool;
    /// The task runs again at `t` (the kernel queues `Ev::Job(task)` there).
    fn set_wake(&mut self, task: JobId, t: Ns);
    /// The kernel completed `io_u` of `task` (now). Returns true when the
    /// task was waiting for it and must run, at `wake` (the completion's
    /// interrupt and the task's wake-up later); the kernel queues the event.
    fn io_done(&mut self, task: JobId, io_u: u32, wake: Ns) -> bool;
}
