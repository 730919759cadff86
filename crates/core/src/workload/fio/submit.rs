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
use crate::sim::time::Ns;
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
        self.job_submit_returns(sys, j, n, now, extra_cpu_ns)
    }

    /// The job runs while asleep inside its submit call for io_u `n`: the
    /// kernel goes on where it slept (`Syscalls::resume_in_kernel`); if the
    /// call is over, the rest of it is spent as [`Self::job_submit`] spends
    /// it. Returns true if the job's loop goes on at once.
    pub(super) fn job_resume_submit(&mut self, sys: &mut impl Syscalls, j: JobId, n: u32) -> bool {
        let now = sys.now();
        let extra_cpu_ns = sys.resume_in_kernel(self, j);
        if !self.jobs[j as usize].submit_done {
            return false; // asleep again
        }
        self.job_submit_returns(sys, j, n, now, extra_cpu_ns)
    }

    /// The kernel took io_u `n`'s bio at `now`: the rest of the call (the
    /// part after the bio, what `submit_bio` spent beyond the call's cost,
    /// the delay owed on the way back) is a burst.
    fn job_submit_returns(
        &mut self,
        sys: &mut impl Syscalls,
        j: JobId,
        n: u32,
        now: Ns,
        extra_cpu_ns: Ns,
    ) -> bool {
        self.jobs[j as usize].phase = Phase::SubmitReturn(n);
        let (_, after_bio_ns) = sys.cpu().submit_split();
        let t = now + after_bio_ns + extra_cpu_ns + self.return_delay(sys, j);
        self.job_burst_until(sys, j, t)
    }
}
