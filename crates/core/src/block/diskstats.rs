//! Per-disk I/O statistics, `/sys/block/DEV/stat` (and a /proc/diskstats line),
//! as current kernels keep them (`struct disk_stats`, block/blk-mq.c
//! `blk_account_io_start` / `blk_account_io_merge_bio` / `blk_account_io_done`,
//! block/blk-core.c `update_io_ticks`, block/genhd.c `part_stat_show`).
//!
//! What each field means in a current kernel:
//! - ios, ticks: counted when a request completes; ticks is the sum of
//!   (completion − request start) in ns, printed in ms (truncated, as u32).
//! - sectors: added at completion (`blk_account_io_completion`).
//! - merges: a bio merged into an existing request (or two requests merged).
//! - in_flight: requests between `blk_account_io_start` (request creation, i.e.
//!   including time in the I/O scheduler) and completion. Kernels before 6.16
//!   printed the number of requests *in the driver* for blk-mq devices
//!   (`blk_mq_in_flight`); this model follows the current per-CPU counters.
//! - io_ticks: jiffies during which at least one request was in flight, counted
//!   by `update_io_ticks` at each start and completion (and at a read of the file
//!   while requests are in flight), with jiffy granularity; printed in ms.
//! - time_in_queue (field 11): the sum of the ticks of all four groups, i.e. the
//!   summed durations of *completed* requests (since 5.0; older kernels
//!   integrated in_flight over time, which counts requests still in flight too).

use crate::block::bio::Op;
use crate::sim::time::{Hz, JiffyCache, Ns, NSEC_PER_MSEC};

/// `enum stat_group`
pub const STAT_READ: usize = 0;
pub const STAT_WRITE: usize = 1;
pub const STAT_DISCARD: usize = 2;
pub const STAT_FLUSH: usize = 3;
pub const NR_STAT_GROUPS: usize = 4;

/// `op_stat_group`, with flush requests in their own group (the kernel accounts
/// those through `blk_account_io_flush`).
#[inline]
pub fn op_stat_group(op: Op) -> usize {
    match op {
        Op::Read => STAT_READ,
        Op::Write => STAT_WRITE,
        Op::Discard => STAT_DISCARD,
        Op::Flush => STAT_FLUSH,
    }
}

/// `in_flight[op_is_write(op)]`: REQ_OP_FLUSH (2) is even, so not a "write" here;
/// REQ_OP_DISCARD (3) is.
#[inline]
fn inflight_idx(op: Op) -> usize {
    match op {
        Op::Read | Op::Flush => 0,
        Op::Write | Op::Discard => 1,
    }
}

/// The counters of one disk (the whole device, `part0`).
#[derive(Clone, Debug, Default)]
pub struct DiskStats {
    pub ios: [u64; NR_STAT_GROUPS],
    pub merges: [u64; NR_STAT_GROUPS],
    pub sectors: [u64; NR_STAT_GROUPS],
    /// Summed request durations, ns.
    pub nsecs: [u64; NR_STAT_GROUPS],
    /// Requests started and not yet done, [read (and flush), write (and discard)].
    pub in_flight: [u64; 2],
    /// Busy time in jiffies.
    pub io_ticks: u64,
    /// `bd_stamp`: the jiffy of the last io_ticks update.
    pub stamp: u64,
    /// The kernel's HZ; 0 means 1000.
    pub hz: u32,
    /// Model-only: ∫ in_flight dt up to `integral_at`, ns (for comparison with
    /// field 11, which only counts completed requests).
    pub inflight_integral_ns: u128,
    pub integral_at: Ns,
    /// The jiffy of the last start or completion: `jiffies()` divides only
    /// when the jiffy changes (a cache; no part of the counters).
    jiffy: JiffyCache,
}

impl DiskStats {
    pub fn new(hz: crate::sim::time::Hz) -> DiskStats {
        DiskStats {
            hz: hz.0,
            ..DiskStats::default()
        }
    }

    #[inline]
    fn hz(&self) -> u64 {
        if self.hz == 0 {
            1000
        } else {
            self.hz as u64
        }
    }

    #[inline]
    fn jiffies(&self, now: Ns) -> u64 {
        Hz(self.hz() as u32).jiffies(now)
    }

    /// `jiffies(now)` for a start or a completion, through the cache.
    #[inline]
    fn jiffies_cached(&mut self, now: Ns) -> u64 {
        let hz = Hz(self.hz() as u32);
        self.jiffy.jiffies(hz, now)
    }

    /// `jiffies_to_msecs` for any HZ (exact when HZ divides 1000).
    pub fn jiffies_to_msecs(&self, j: u64) -> u64 {
        let hz = self.hz();
        if 1000u64.is_multiple_of(hz) {
            j * (1000 / hz)
        } else if hz.is_multiple_of(1000) {
            j.div_ceil(hz / 1000)
        } else {
            j * 1000 / hz
        }
    }

    #[inline]
    fn inflight_total(&self) -> u64 {
        self.in_flight[0] + self.in_flight[1]
    }

    #[inline]
    fn integrate(&mut self, now: Ns) {
        if now > self.integral_at {
            self.inflight_integral_ns +=
                (now - self.integral_at) as u128 * self.inflight_total() as u128;
            self.integral_at = now;
        }
    }

    /// `update_io_ticks(part, jiffies, end)`: when the jiffy has moved on, move the
    /// stamp and, if the disk was busy since the stamp (a completion, or requests
    /// already in flight at a start), add the elapsed jiffies.
    #[inline]
    fn update_io_ticks(&mut self, now_j: u64, end: bool) {
        if now_j > self.stamp {
            let old = self.stamp;
            self.stamp = now_j;
            if end || self.inflight_total() > 0 {
                self.io_ticks += now_j - old;
            }
        }
    }

    /// `blk_account_io_start`: a request was created for a bio (before it is
    /// inserted into the scheduler). Its start time is `now`.
    #[inline]
    pub fn start(&mut self, now: u64, op: Op) {
        self.integrate(now);
        let j = self.jiffies_cached(now);
        self.update_io_ticks(j, false);
        self.in_flight[inflight_idx(op)] += 1;
    }

    /// `blk_account_io_merge_bio`: a bio was merged into an existing request.
    #[inline]
    pub fn merged(&mut self, op: Op) {
        self.merges[op_stat_group(op)] += 1;
    }

    /// `blk_account_io_merge_request`: a queued request was merged into another
    /// and freed: one merge, one request fewer in flight.
    pub fn merged_request(&mut self, now: u64, op: Op) {
        self.integrate(now);
        self.merges[op_stat_group(op)] += 1;
        let i = inflight_idx(op);
        self.in_flight[i] = self.in_flight[i].saturating_sub(1);
    }

    /// `blk_account_io_completion` + `blk_account_io_done`: the request that
    /// started at `start_ns` completed at `now` with `sectors` transferred.
    #[inline]
    pub fn done(&mut self, now: u64, op: Op, sectors: u64, start_ns: u64) {
        self.integrate(now);
        let g = op_stat_group(op);
        let j = self.jiffies_cached(now);
        self.update_io_ticks(j, true);
        self.ios[g] += 1;
        self.sectors[g] += sectors;
        self.nsecs[g] += now.saturating_sub(start_ns);
        let i = inflight_idx(op);
        self.in_flight[i] = self.in_flight[i].saturating_sub(1);
    }

    /// io_ticks (jiffies) as a read at `now` sees them: `part_stat_show` first
    /// runs `update_io_ticks(now, end=true)` when requests are in flight. (The
    /// kernel does that on the live stats; doing it on a copy gives the same
    /// later totals, since the busy time is only split at `now`.)
    pub fn io_ticks_at(&self, now: u64) -> u64 {
        let j = self.jiffies(now);
        if self.inflight_total() > 0 && j > self.stamp {
            self.io_ticks + (j - self.stamp)
        } else {
            self.io_ticks
        }
    }

    /// ∫ in_flight dt from 0 to `now`, ns (model-only; what time_in_queue meant
    /// before 5.0).
    pub fn inflight_integral_at(&self, now: u64) -> u128 {
        let extra = now.saturating_sub(self.integral_at) as u128 * self.inflight_total() as u128;
        self.inflight_integral_ns + extra
    }

    fn ms_u32(ns: u64) -> u64 {
        (ns / NSEC_PER_MSEC) as u32 as u64
    }

    /// All 17 fields of the file, in order.
    pub fn all_fields(&self, now: u64) -> [u64; 17] {
        let n = &self.nsecs;
        [
            self.ios[STAT_READ],
            self.merges[STAT_READ],
            self.sectors[STAT_READ],
            Self::ms_u32(n[STAT_READ]),
            self.ios[STAT_WRITE],
            self.merges[STAT_WRITE],
            self.sectors[STAT_WRITE],
            Self::ms_u32(n[STAT_WRITE]),
            self.inflight_total() as u32 as u64,
            self.jiffies_to_msecs(self.io_ticks_at(now)) as u32 as u64,
            Self::ms_u32(
                n[0].wrapping_add(n[1])
                    .wrapping_add(n[2])
                    .wrapping_add(n[3]),
            ),
            self.ios[STAT_DISCARD],
            self.merges[STAT_DISCARD],
            self.sectors[STAT_DISCARD],
            Self::ms_u32(n[STAT_DISCARD]),
            self.ios[STAT_FLUSH],
            Self::ms_u32(n[STAT_FLUSH]),
        ]
    }

    /// The 11 leading fields (r_ios r_merges r_sectors r_ticks w_ios w_merges
    /// w_sectors w_ticks in_flight io_ticks time_in_queue), ms where the kernel
    /// prints ms.
    pub fn stat_fields(&self, now: u64) -> [u64; 11] {
        let a = self.all_fields(now);
        let mut f = [0u64; 11];
        f.copy_from_slice(&a[..11]);
        f
    }

    /// The whole `/sys/block/DEV/stat` line (17 fields, each `%8u`, newline).
    pub fn stat_line(&self, now: u64) -> String {
        let mut s = String::with_capacity(17 * 9 + 1);
        for (i, v) in self.all_fields(now).iter().enumerate() {
            if i > 0 {
                s.push(' ');
            }
            s.push_str(&format!("{v:8}"));
        }
        s.push('\n');
        s
    }

    /// The same counters as a /proc/diskstats line (`diskstats_show`).
    pub fn diskstats_line(&self, now: u64, major: u32, minor: u32, name: &str) -> String {
        let a = self.all_fields(now);
        let mut s = format!("{major:4} {minor:7} {name}");
        for v in a {
            s.push(' ');
            s.push_str(&v.to_string());
        }
        s.push('\n');
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;
    const US: u64 = 1_000;

    /// A: 0.5 → 3.2 ms; B: 5.0 → 5.9 ms; C: 7.1 → 9.5 ms; D: 8.2 → 12.0 ms (HZ=1000).
    fn timeline() -> DiskStats {
        let mut s = DiskStats::new(crate::sim::time::Hz(1000));
        s.start(500 * US, Op::Read);
        s.done(3_200 * US, Op::Read, 8, 500 * US);
        s.start(5 * MS, Op::Write);
        s.merged(Op::Write);
        s.done(5_900 * US, Op::Write, 16, 5 * MS);
        s.start(7_100 * US, Op::Read);
        s.start(8_200 * US, Op::Write);
        s
    }

    #[test]
    fn io_ticks_follow_update_io_ticks() {
        let mut s = timeline();
        // A: stamp 0 → 3: +3. B: start at j5 (idle: stamp only), done at j5: nothing.
        // C start j7 (idle), D start j8 with C in flight: +1.
        assert_eq!(s.io_ticks, 3 + 1);
        // A read at 10.0 ms with 2 in flight adds the running jiffies (8 → 10).
        assert_eq!(s.stat_fields(10 * MS)[9], 6);
        assert_eq!(s.stat_fields(10 * MS)[8], 2);
        s.done(9_500 * US, Op::Read, 8, 7_100 * US); // +1 (8 → 9)
        s.done(12 * MS, Op::Write, 8, 8_200 * US); // +3 (9 → 12)
        assert_eq!(s.io_ticks, 8);
        assert_eq!(s.stat_fields(20 * MS)[9], 8);
        // The true busy time is 2.7 + 0.9 + 4.9 = 8.5 ms: jiffy granularity loses B.
    }

    #[test]
    fn time_in_queue_is_summed_durations() {
        let mut s = timeline();
        let f = s.stat_fields(10 * MS);
        // Completed: A 2.7 ms (read), B 0.9 ms (write). In flight: C, D.
        assert_eq!(f[3], 2); // r_ticks
        assert_eq!(f[7], 0); // w_ticks 0.9 ms truncates
        assert_eq!(f[10], 3); // (2.7 + 0.9) ms
                              // The integral of in_flight also counts C (2.9 ms) and D (1.8 ms) so far.
        assert_eq!(
            s.inflight_integral_at(10 * MS),
            (3_600 + 2_900 + 1_800) as u128 * US as u128
        );
        s.done(9_500 * US, Op::Read, 8, 7_100 * US);
        s.done(12 * MS, Op::Write, 8, 8_200 * US);
        // Once idle, both agree: 2.7 + 0.9 + 2.4 + 3.8 = 9.8 ms.
        assert_eq!(s.inflight_integral_at(12 * MS), 9_800 * US as u128);
        let f = s.stat_fields(12 * MS);
        assert_eq!(f[10], 9);
        assert_eq!(f[..9], [2, 0, 16, 5, 2, 1, 24, 4, 0]);
    }

    #[test]
    fn line_layout_and_other_groups() {
        let mut s = timeline();
        s.start(13 * MS, Op::Discard);
        s.done(14 * MS, Op::Discard, 2048, 13 * MS);
        s.start(15 * MS, Op::Flush);
        s.done(15_500 * US, Op::Flush, 0, 15 * MS);
        let line = s.stat_line(16 * MS);
        // io_ticks: 4 (timeline, stamp j8) + 5 (discard starts at j13 with C, D in
        // flight) + 1 (its completion) + 1 (flush start j15) + 1 (the read at j16).
        // time_in_queue: 2.7 + 0.9 + 1.0 + 0.5 = 5.1 ms.
        assert_eq!(
            line,
            "       1        0        8        2        1        1       16        0        2       12        \
             5        1        0     2048        1        1        0\n"
        );
        assert_eq!(line.split_whitespace().count(), 17);
        assert!(s
            .diskstats_line(16 * MS, 259, 0, "nvme0n1")
            .starts_with(" 259       0 nvme0n1 1 0 8 2 "));
    }

    #[test]
    fn hz_conversions() {
        let s = DiskStats::new(crate::sim::time::Hz(250));
        assert_eq!(s.jiffies_to_msecs(3), 12);
        let s = DiskStats::new(crate::sim::time::Hz(300));
        assert_eq!(s.jiffies_to_msecs(3), 10);
        assert_eq!(DiskStats::default().jiffies_to_msecs(7), 7);
        // HZ=250: a 3 ms request inside one 4 ms jiffy adds nothing.
        let mut s = DiskStats::new(crate::sim::time::Hz(250));
        s.start(MS, Op::Read);
        s.done(3_900 * US, Op::Read, 8, MS);
        assert_eq!(s.io_ticks, 0);
        s.start(4_100 * US, Op::Read);
        s.done(8_100 * US, Op::Read, 8, 4_100 * US);
        assert_eq!(s.stat_fields(9 * MS)[9], 4);
    }
}
