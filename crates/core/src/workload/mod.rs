//! User space: the fio job loop and recorded-I/O replay. A workload reaches
//! the kernel only through the system calls of `crate::syscall`, and the
//! kernel reaches it only through the `Tasks` calls it implements.

pub(crate) mod fio;
pub mod replay;

use blklab_fio::JobSpec;

use crate::syscall::{CgId, DevId, JobId};
use fio::Job;

/// One fio job instance (after `numjobs` expansion) and where it runs.
#[derive(Clone, Debug)]
pub struct JobConfig {
    pub spec: JobSpec,
    /// Clone index within numjobs (0-based).
    pub clone: u32,
    pub cgroup: CgId,
    pub dev: DevId,
    /// Reporting group (fio's groupid).
    pub groupid: u32,
}

impl JobConfig {
    /// Whether the job goes through the page cache: buffered I/O
    /// (`direct=0`) or a mapped file (`ioengine=mmap`).
    pub fn uses_pagecache(&self) -> bool {
        through_pagecache(self.spec.direct, self.spec.ioengine)
    }
}

/// Whether I/O with these options goes through the page cache: buffered
/// (`direct=0`) or a mapped file (`ioengine=mmap`).
pub(crate) fn through_pagecache(direct: bool, engine: blklab_fio::options::Engine) -> bool {
    !direct || engine == blklab_fio::options::Engine::Mmap
}

/// Every task of the run.
#[derive(Default)]
pub(crate) struct Workload {
    pub jobs: Vec<Job>,
    /// Tasks whose loop has not ended.
    pub jobs_running: usize,
    /// The job whose loop is executing (its own submissions call back into it).
    pub running_job: Option<JobId>,
    /// A phased run (machine/phases.rs) whose last phase has not ended: the
    /// run goes on while no job runs (the gap before the next phase).
    pub phases_open: bool,
    /// `HostCpus::reap_every_call` on a host with CPUs (fio/reap.rs).
    pub reap_every_call: bool,
}
