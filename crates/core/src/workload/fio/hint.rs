//! Cache hints for the jobs the event loop will wake next. Not in fio: the
//! simulator's own speed. With hundreds of jobs, each job's state (its
//! loop's fields, its io_us, its latency histograms) has left the cache by
//! the time the job runs again, and each I/O used to wait for those loads
//! at the io_u read and the histogram increments. The event queue tells
//! which jobs wake next (`EventQueue::upcoming_jobs`); their state starts
//! loading one or two events ahead, in two stages: the job's own fields
//! first, then, one event later, what those fields point to. A hint reads
//! nothing: no result can change.

use std::mem::offset_of;

use blklab_fio::stats::DirStats;
use blklab_fio::JobStats;

use super::{Job, Phase};
use crate::sim::prefetch::read;
use crate::syscall::JobId;
use crate::workload::Workload;

impl Workload {
    /// Hints for `[next, after]`, the jobs of the next two task wake-ups.
    #[inline]
    pub(crate) fn prefetch_jobs(&self, [next, after]: [Option<JobId>; 2]) {
        if let Some(job) = after.and_then(|j| self.jobs.get(j as usize)) {
            job.prefetch_fields();
        }
        if let Some(job) = next.and_then(|j| self.jobs.get(j as usize)) {
            job.prefetch_targets();
        }
    }
}

const LINE: usize = 64;
/// The lines of `Job` a wake-up reads first (`prefetch_fields`).
const HOT_LINES: usize =
    (offset_of!(Job, stats) + offset_of!(JobStats, dirs) + offset_of!(DirStats, short_ios))
        .div_ceil(LINE);

impl Job {
    /// Stage one: the fields a wake-up reads first (addresses from the job
    /// list alone: nothing is loaded to compute them). `Job` is `repr(C)`
    /// and line-aligned, and starts with them: its loop fields, knobs, the
    /// runs of its binned counters (hot_stats.rs), then the read
    /// direction's counters and latency statistics (`HOT_LINES`). The end
    /// is a constant, so the loop unrolls into one hint per line.
    #[inline]
    fn prefetch_fields(&self) {
        let base = (self as *const Job).cast::<u8>();
        for line in 0..HOT_LINES {
            read(base.wrapping_add(line * LINE));
        }
    }

    /// Stage two, for fields loaded one event earlier: the io_us the
    /// wake-up will read and the histogram counters its samples most
    /// likely hit (those of the job's last samples, whose addresses the
    /// samples left: nothing to compute here).
    #[inline]
    fn prefetch_targets(&self) {
        let [slat, clat, lat] = self.hint_buckets.map(|a| a as *const u64);
        match self.phase {
            Phase::SubmitReturn(n) => {
                if let Some(io) = self.io_us.get(n as usize) {
                    read(io);
                }
                read(slat);
                // a full queue reaps at once if a completion came while the
                // call slept (waiting for a tag, every I/O does): the io_u
                // it reaps and the counters of its two samples
                if let Some(io) = self.reaped_next() {
                    read(io);
                    read(clat);
                    read(lat);
                }
            }
            Phase::Reap { .. } | Phase::ReapCall { .. } => {
                if let Some(io) = self.reaped_next() {
                    read(io);
                }
                // queueing moves a latency by a few buckets from one I/O
                // to the next: the lines on either side too
                for p in [clat, lat] {
                    read(p.wrapping_sub(8));
                    read(p);
                    read(p.wrapping_add(8));
                }
            }
            _ => {}
        }
    }

    /// The io_u a reap takes first (reading the queue's front here waits
    /// no longer than the reap would).
    #[inline]
    fn reaped_next(&self) -> Option<&super::IoU> {
        self.completed
            .front()
            .and_then(|n| self.io_us.get(n as usize))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hinted prefix stays small: the loop's fields, the knobs and the
    /// runs, and the read direction's statistics (bench/README.md, eighth
    /// pass). A field added before `stats` shows here.
    #[test]
    fn hot_prefix_lines() {
        assert!(HOT_LINES <= 11, "{HOT_LINES} lines");
    }
}
