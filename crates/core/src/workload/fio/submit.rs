//! The submit call of a direct io_u (libaio's `io_submit`, or `pread` /
//! `pwrite` on O_DIRECT for a sync engine): `submit_bio` and the way back
//! to user space.
//!
//! Where the bio goes in inside the call's CPU time
//! (`CpuCosts::submit_split`): on the free host at the call's start (the
//! simulator's original timing); on a host with CPUs after the work that
//! precedes it in the kernel (`Phase::SubmitEntry`, spent by the caller,
//! backend.rs `job_issue`), so that the dispatch's wake-ups (a loop
//! worker, kblockd) mark the task for rescheduling only
//! `submit_return_ns` before it reaches a point where it can be switched
//! out, as in the kernel, instead of a whole `submit_ns` before.

use super::Phase;
use crate::syscall::{DirectIo, JobId, Syscalls};
use crate::workload::Workload;

impl Workload {
    /// Submit io_u `n` of job `j` now (`io_submit_one` → ... →
    /// `submit_bio`) and spend the rest of the call: the part after the
    /// bio, what `submit_bio` itself spent, the delay owed on the way back.
    /// Returns true if the job's loop goes on at once.
    pub(super) fn job_submit(&mut self, sys: &mut impl Syscalls, j: JobId, n: u32) -> bool {
        let now = sys.now();
        let job = &mut self.jobs[j as usize];
        let io_u = job.io_us[n as usize];
        let io = DirectIo {
            task: j,
            io_u: n,
            dev: job.knobs.dev,
            cg: job.knobs.cgroup,
            write: io_u.ddir == 1,
            offset_bytes: io_u.offset,
            bytes: io_u.bytes,
            sync: job.knobs.direct,
            task_prio: job.ioprio,
        };
        // the buffered path never comes here: only the engine decides
        let sync_engine = !job.knobs.ioengine.is_async();
        job.phase = if sync_engine {
            Phase::SyncWait(n)
        } else {
            Phase::InSubmit(n)
        };
        job.submit_done = false;
        let extra_cpu_ns = sys.submit(self, io);
        let job = &mut self.jobs[j as usize];
        if sync_engine {
            return false; // io_u_complete moves us on
        }
        if !job.submit_done {
            return false; // asleep in the kernel; submit_done wakes us
        }
        job.phase = Phase::SubmitReturn(n);
        let (_, after_bio_ns) = sys.cpu().submit_split();
        let t = now + after_bio_ns + extra_cpu_ns + self.return_delay(sys, j);
        self.job_burst_until(sys, j, t)
    }
}
