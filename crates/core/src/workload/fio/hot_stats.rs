//! The binned counters fio bumps on every I/O (`io_u_map`, `io_u_submit`,
//! `io_u_complete` and `io_u_lat_n/u/m` of `struct thread_stat`, with
//! `total_submit` and `total_complete`), kept as runs and folded into the
//! job's `JobStats` later. Not in fio: the simulator's own speed. With a
//! thousand jobs a job's statistics have left the cache each time it runs
//! again, and those bins sat on four cache lines of `JobStats` (fio's
//! layout), four misses per I/O. A steady job hits the same bin of each
//! distribution I/O after I/O, so a run (the bin and how many times in a
//! row) holds them in a few bytes next to the loop's own fields; a sample
//! in another bin writes the run out first. The counts reach `JobStats`
//! whole before anything reads them (`fold`, at the end of the run: the
//! bandwidth samples during the run read other fields), so no figure
//! changes, only when it is written.

use blklab_fio::stats::{iodepth_batch_bin, latency_bin, latency_bin_span};
use blklab_fio::JobStats;

/// `n` increments of bin `bin` not yet written to their distribution.
#[derive(Clone, Copy, Debug, Default)]
struct BinRun {
    bin: u8,
    n: u32,
}

impl BinRun {
    /// One increment of `bin`: extends the run, or writes it out to `bins`
    /// (and `total`, when the distribution has one) and starts another.
    #[inline]
    fn add(&mut self, bin: usize, bins: &mut [u64], total: Option<&mut u64>) {
        if bin == self.bin as usize && self.n < u32::MAX {
            self.n += 1;
        } else {
            self.restart(bin, bins, total);
        }
    }

    #[cold]
    #[inline(never)]
    fn restart(&mut self, bin: usize, bins: &mut [u64], total: Option<&mut u64>) {
        self.flush(bins, total);
        // the bins are fio's 7-entry distributions: the index fits a u8
        self.bin = bin as u8;
        self.n = 1;
    }

    fn flush(&mut self, bins: &mut [u64], total: Option<&mut u64>) {
        let n = std::mem::take(&mut self.n) as u64;
        bins[self.bin as usize] += n;
        if let Some(t) = total {
            *t += n;
        }
    }
}

/// A run of clats in one bin of the latency_ns/us/ms tables, with the bin's
/// bounds, so that extending it is one comparison (no `latency_bin`). The
/// default, an empty span, matches nothing: the first sample starts a run.
#[derive(Clone, Copy, Debug, Default)]
struct LatRun {
    lo_ns: u64,
    span_ns: u64,
    table: u8,
    bin: u8,
    n: u32,
}

impl LatRun {
    #[inline]
    fn add(&mut self, clat_ns: u64, stats: &mut JobStats) {
        if clat_ns.wrapping_sub(self.lo_ns) < self.span_ns && self.n < u32::MAX {
            self.n += 1;
        } else {
            self.restart(clat_ns, stats);
        }
    }

    #[cold]
    #[inline(never)]
    fn restart(&mut self, clat_ns: u64, stats: &mut JobStats) {
        self.flush(stats);
        let (table, bin) = latency_bin(clat_ns);
        (self.lo_ns, self.span_ns) = latency_bin_span(table, bin);
        // three tables of at most 12 bins
        (self.table, self.bin) = (table as u8, bin as u8);
        self.n = 1;
    }

    fn flush(&mut self, stats: &mut JobStats) {
        let n = std::mem::take(&mut self.n) as u64;
        stats.add_lat_bin_n(self.table as usize, self.bin as usize, n);
    }
}

/// `Job::hot`: the runs of one job's per-I/O distributions (24 bytes).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct HotStats {
    /// `iodepth_level`, one per I/O submitted.
    level: BinRun,
    /// `iodepth_submit` and `total_submit`, one per submit call.
    submit: BinRun,
    /// `iodepth_complete` and `total_complete`, one per reap that got any.
    complete: BinRun,
    /// latency_ns/us/ms, one per clat.
    lat: LatRun,
}

impl HotStats {
    /// A submit call of one io_u at in-flight depth bin `level_bin`
    /// (fio's `io_u_mark_depth` and `io_u_mark_submit(td, 1)`).
    #[inline]
    pub fn submitted(&mut self, level_bin: usize, stats: &mut JobStats) {
        self.level.add(level_bin, &mut stats.iodepth_level, None);
        self.submit.add(
            iodepth_batch_bin(1),
            &mut stats.iodepth_submit,
            Some(&mut stats.total_submit),
        );
    }

    /// A reap that returned `reaped` > 0 completions (`io_u_mark_complete`).
    #[inline]
    pub fn reaped(&mut self, reaped: u32, stats: &mut JobStats) {
        self.complete.add(
            iodepth_batch_bin(reaped),
            &mut stats.iodepth_complete,
            Some(&mut stats.total_complete),
        );
    }

    /// A clat for the latency_ns/us/ms distribution (`io_u_mark_latency`).
    #[inline]
    pub fn clat(&mut self, clat_ns: u64, stats: &mut JobStats) {
        self.lat.add(clat_ns, stats);
    }

    /// Write every run out to `stats` (before anything reads them). The
    /// runs keep their bins, so the next sample in the same bin continues.
    pub fn fold(&mut self, stats: &mut JobStats) {
        self.level.flush(&mut stats.iodepth_level, None);
        self.submit
            .flush(&mut stats.iodepth_submit, Some(&mut stats.total_submit));
        self.complete
            .flush(&mut stats.iodepth_complete, Some(&mut stats.total_complete));
        self.lat.flush(stats);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use blklab_fio::stats::iodepth_level_bin;

    /// The runs, folded at arbitrary points, give exactly the counts of
    /// incrementing `JobStats` directly.
    #[test]
    fn runs_fold_to_the_direct_counts() {
        let mut direct = JobStats::default();
        let mut folded = JobStats::default();
        let mut hot = HotStats::default();
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        for i in 0..20_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // long runs with occasional jumps, over every latency table
            let clat = if x % 16 == 0 {
                x >> (x % 64)
            } else {
                20_000 + i % 7
            };
            let depth = if x % 32 == 1 {
                (x >> 8) as u32 % 80
            } else {
                32
            };
            let reaped = if x % 8 == 2 {
                (x >> 16) as u32 % 70 + 1
            } else {
                1
            };
            direct.iodepth_level[iodepth_level_bin(depth)] += 1;
            direct.iodepth_submit[iodepth_batch_bin(1)] += 1;
            direct.total_submit += 1;
            direct.iodepth_complete[iodepth_batch_bin(reaped)] += 1;
            direct.total_complete += 1;
            direct.add_lat_bin(clat);
            hot.submitted(iodepth_level_bin(depth), &mut folded);
            hot.reaped(reaped, &mut folded);
            hot.clat(clat, &mut folded);
            if x % 1000 == 3 {
                hot.fold(&mut folded);
            }
        }
        hot.fold(&mut folded);
        assert_eq!(folded.iodepth_level, direct.iodepth_level);
        assert_eq!(folded.iodepth_submit, direct.iodepth_submit);
        assert_eq!(folded.iodepth_complete, direct.iodepth_complete);
        assert_eq!(folded.total_submit, direct.total_submit);
        assert_eq!(folded.total_complete, direct.total_complete);
        assert_eq!(folded.lat_ns, direct.lat_ns);
        assert_eq!(folded.lat_us, direct.lat_us);
        assert_eq!(folded.lat_ms, direct.lat_ms);
        // folding twice adds nothing
        hot.fold(&mut folded);
        assert_eq!(folded.total_submit, direct.total_submit);
    }
}
