//! fio's statistics, kept the way fio keeps them (stat.c / stat.h), so that the
//! same samples give the same reported numbers.
//!
//! * [`PlatHist`]: fio's log-linear latency histogram (`plat_val_to_idx`,
//!   `plat_idx_to_val`), 29 groups of 64 buckets over nanoseconds, and its
//!   percentile rule (`calc_clat_percentiles`).
//! * [`LatStat`]: `struct io_stat` with the online mean/variance update of
//!   `add_stat_sample` and the parallel merge of `sum_stat`.
//! * [`SampleStat`]: bandwidth / IOPS interval samples, "pure-summed" across jobs.
//! * [`DirStats`], [`JobStats`]: per direction and per job (`struct thread_stat`).

use crate::options::Ddir;

/// `FIO_IO_U_PLAT_BITS`
pub const PLAT_BITS: u32 = 6;
/// `FIO_IO_U_PLAT_VAL`
pub const PLAT_VAL: u64 = 1 << PLAT_BITS;
/// `FIO_IO_U_PLAT_GROUP_NR`
pub const PLAT_GROUP_NR: usize = 29;
/// `FIO_IO_U_PLAT_NR`
pub const PLAT_NR: usize = PLAT_GROUP_NR * PLAT_VAL as usize;

/// Bucket index of a latency in ns (fio's `plat_val_to_idx`).
#[inline]
pub fn plat_val_to_idx(v: u64) -> usize {
    let msb = if v == 0 { 0 } else { 63 - v.leading_zeros() };
    if msb <= PLAT_BITS {
        return v as usize;
    }
    let error_bits = msb - PLAT_BITS;
    let base = (error_bits as usize + 1) << PLAT_BITS;
    let offset = ((v >> error_bits) & (PLAT_VAL - 1)) as usize;
    (base + offset).min(PLAT_NR - 1)
}

/// The value fio reports for a bucket (fio's `plat_idx_to_val`): the bucket's middle.
#[inline]
pub fn plat_idx_to_val(idx: usize) -> u64 {
    if idx < (PLAT_VAL as usize) << 1 {
        return idx as u64;
    }
    let error_bits = (idx >> PLAT_BITS) as u32 - 1;
    let base = 1u64 << (error_bits + PLAT_BITS);
    let k = (idx as u64) % PLAT_VAL;
    base + ((k as f64 + 0.5) * (1u64 << error_bits) as f64) as u64
}

/// fio's latency histogram (`io_u_plat`): `PLAT_NR` counts, of which only
/// a window is stored. fio allocates every histogram of a job whole (14.5
/// KiB); a job's samples fill a few neighbouring groups of 64 buckets (a
/// factor of 2 to 8 in latency), so here the counts are a window of whole
/// groups, allocated at the first sample and widened when a sample falls
/// outside it; every bucket outside the window reads as 0. With a thousand
/// jobs the whole histograms were most of the run's memory, and allocating
/// and zeroing them most of its start-up time. The total is not kept: it
/// is the sum of the counts, wanted only when reporting.
#[derive(Clone, Default)]
pub struct PlatHist {
    /// The counts of buckets `first..first + buckets.len()` (whole groups
    /// of `PLAT_VAL`); empty until the first sample.
    buckets: Box<[u64]>,
    /// The bucket index of `buckets[0]`, a multiple of `PLAT_VAL`.
    first: u32,
}

impl std::fmt::Debug for PlatHist {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PlatHist(n={})", self.total())
    }
}

impl PlatHist {
    /// One sample; returns the counter it went to (a caller may keep its
    /// address as a cache hint for the next sample).
    #[inline]
    pub fn add(&mut self, ns: u64) -> &u64 {
        let idx = plat_val_to_idx(ns);
        let at = idx.wrapping_sub(self.first as usize);
        if at < self.buckets.len() {
            let c = &mut self.buckets[at];
            *c += 1;
            return c;
        }
        self.add_outside(idx, 1)
    }
    /// `n` samples in bucket `idx`, outside the window: widen it to the
    /// groups from the lowest to the highest bucket held.
    /// Returns the counter.
    #[cold]
    fn add_outside(&mut self, idx: usize, n: u64) -> &u64 {
        let group = PLAT_VAL as usize;
        let (lo, hi) = if self.buckets.is_empty() {
            (idx / group * group, (idx / group + 1) * group)
        } else {
            let first = self.first as usize;
            (
                first.min(idx / group * group),
                (first + self.buckets.len()).max((idx / group + 1) * group),
            )
        };
        let mut wide = vec![0u64; hi - lo].into_boxed_slice();
        let at = self.first as usize - lo.min(self.first as usize);
        if !self.buckets.is_empty() {
            wide[at..at + self.buckets.len()].copy_from_slice(&self.buckets);
        }
        wide[idx - lo] += n;
        self.buckets = wide;
        self.first = lo as u32;
        &self.buckets[idx - lo]
    }
    /// Samples held (the sum of the counts).
    pub fn total(&self) -> u64 {
        self.buckets.iter().sum()
    }
    /// The non-zero buckets as (index, count), ascending.
    fn nonzero(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        let first = self.first as usize;
        self.buckets
            .iter()
            .enumerate()
            .filter(|(_, c)| **c > 0)
            .map(move |(i, c)| (first + i, *c))
    }
    /// Every bucket's count, in index order (`PLAT_NR` of them).
    pub fn counts(&self) -> Vec<u64> {
        let mut all = vec![0u64; PLAT_NR];
        for (i, c) in self.nonzero() {
            all[i] = c;
        }
        all
    }
    pub fn merge(&mut self, o: &PlatHist) {
        for (i, c) in o.nonzero() {
            match self.buckets.get_mut(i.wrapping_sub(self.first as usize)) {
                Some(s) => *s += c,
                None => {
                    self.add_outside(i, c);
                }
            }
        }
    }
    /// Non-empty buckets as (representative value, count), ascending (fio's json+ `bins`).
    pub fn bins(&self) -> Vec<(u64, u64)> {
        self.nonzero()
            .map(|(i, c)| (plat_idx_to_val(i), c))
            .collect()
    }
    /// fio's `calc_clat_percentiles`: for each requested percentile (sorted ascending,
    /// as fio sorts the list), the representative value of the bucket holding the
    /// sample of rank ceil(p·N/100) (at least 1). Returns (p, value) pairs in
    /// ascending order of p. Empty when there are no samples.
    pub fn percentiles(&self, list: &[f64]) -> Vec<(f64, u64)> {
        let total = self.total();
        if total == 0 || list.is_empty() {
            return Vec::new();
        }
        let mut plist: Vec<f64> = list.to_vec();
        plist.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
        let mut out = Vec::with_capacity(plist.len());
        let mut j = 0;
        let mut cum: u64 = 0;
        for (i, c) in self.nonzero() {
            cum += c;
            while j < plist.len() && rank_reached(cum, plist[j], total) {
                out.push((plist[j], plat_idx_to_val(i)));
                j += 1;
            }
            if j == plist.len() {
                break;
            }
        }
        out
    }
}

/// fio compares `sum >= p/100 * N` in long double. The product of a double
/// percentile and an integer count is exact in rationals: p is m·2^e, so
/// compare 100·cum·2^-e ≥ m·N in integers (i128), which gives the long-double
/// answer without its platform dependence.
fn rank_reached(cum: u64, p: f64, n: u64) -> bool {
    if p <= 0.0 {
        return true;
    }
    let bits = p.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i64;
    let frac = bits & ((1u64 << 52) - 1);
    let (m, e) = if exp == 0 {
        (frac as i128, -1074i64)
    } else {
        ((frac | (1u64 << 52)) as i128, exp - 1075)
    };
    // p = m * 2^e ; condition: cum >= m * 2^e * n / 100  <=>  100*cum >= m*n*2^e
    let lhs = 100i128 * cum as i128;
    let rhs_base = m * n as i128;
    if e >= 0 {
        // m*n*2^e can overflow only for absurd percentiles; saturate.
        if e >= 64 {
            return false;
        }
        lhs >= rhs_base.saturating_mul(1i128 << e)
    } else {
        let s = (-e) as u32;
        if s >= 120 {
            return true;
        }
        // lhs * 2^s >= rhs_base
        lhs.checked_mul(1i128 << s)
            .map(|l| l >= rhs_base)
            .unwrap_or(true)
    }
}

/// fio's `struct io_stat`: min/max/samples and the running mean and S.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SampleStat {
    pub min: u64,
    pub max: u64,
    pub samples: u64,
    pub mean: f64,
    pub s: f64,
}

impl SampleStat {
    /// fio's `add_stat_sample`.
    #[inline]
    pub fn add(&mut self, v: u64) {
        if self.samples == 0 || v < self.min {
            self.min = v;
        }
        if v > self.max {
            self.max = v;
        }
        let val = v as f64;
        let delta = val - self.mean;
        if delta != 0.0 {
            self.mean += delta / (self.samples + 1) as f64;
            self.s += delta * (val - self.mean);
        }
        self.samples += 1;
    }
    pub fn stddev(&self) -> f64 {
        if self.samples <= 1 {
            0.0
        } else {
            (self.s / (self.samples - 1) as f64).sqrt()
        }
    }
    /// fio's `sum_stat` with `pure_sum = false`: the parallel mean/variance merge.
    pub fn merge(&mut self, o: &SampleStat) {
        if o.samples == 0 {
            return;
        }
        if self.samples == 0 {
            *self = *o;
            return;
        }
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
        let n1 = self.samples as f64;
        let n2 = o.samples as f64;
        let mean = (self.mean * n1 + o.mean * n2) / (n1 + n2);
        let d = o.mean - self.mean;
        // fio multiplies the sample counts as integers before converting:
        // pow(delta, 2) * (n1 * n2) / (n1 + n2), with src.S + dst.S first.
        let nn = self.samples.wrapping_mul(o.samples) as f64;
        let nsum = (self.samples + o.samples) as f64;
        self.s = o.s + self.s + d * d * nn / nsum;
        self.mean = mean;
        self.samples += o.samples;
    }
    /// fio's `sum_stat` with `pure_sum = true` (bw/iops across jobs): everything adds.
    pub fn pure_sum(&mut self, o: &SampleStat) {
        if o.samples == 0 {
            return;
        }
        if self.samples == 0 {
            *self = *o;
            return;
        }
        self.min += o.min;
        self.max += o.max;
        self.mean += o.mean;
        self.s += o.s;
        self.samples += o.samples;
    }
}

/// A latency statistic with its histogram (slat, clat or lat of one direction).
#[derive(Clone, Debug, Default)]
pub struct LatStat {
    pub stat: SampleStat,
    pub hist: PlatHist,
}

impl LatStat {
    /// One sample; returns the histogram counter it went to (see
    /// [`PlatHist::add`]).
    #[inline]
    pub fn add(&mut self, ns: u64) -> &u64 {
        self.stat.add(ns);
        self.hist.add(ns)
    }
    pub fn merge(&mut self, o: &LatStat) {
        self.stat.merge(&o.stat);
        self.hist.merge(&o.hist);
    }
}

/// One direction of a job (`read`, `write`, `trim`) or the merged `mixed`.
/// `repr(C)`, the fields every I/O updates first (see [`JobStats`]).
#[derive(Clone, Debug, Default)]
#[repr(C)]
pub struct DirStats {
    /// Bytes completed after ramp.
    pub io_bytes: u64,
    /// IOs issued (counted when queued), after ramp.
    pub total_ios: u64,
    pub slat: LatStat,
    pub clat: LatStat,
    pub lat: LatStat,
    pub short_ios: u64,
    pub drop_ios: u64,
    /// ms; ceil(elapsed µs / 1000) from the end of ramp to the end of the IO loop.
    pub runtime_ms: u64,
    pub bw: SampleStat,
    pub iops: SampleStat,
}

impl DirStats {
    /// Merge another job's direction into this one (group_reporting): latency
    /// stats by the parallel formula, bw/iops samples pure-summed, runtime max.
    pub fn merge_job(&mut self, o: &DirStats) {
        self.io_bytes += o.io_bytes;
        self.total_ios += o.total_ios;
        self.short_ios += o.short_ios;
        self.drop_ios += o.drop_ios;
        self.runtime_ms = self.runtime_ms.max(o.runtime_ms);
        self.slat.merge(&o.slat);
        self.clat.merge(&o.clat);
        self.lat.merge(&o.lat);
        self.bw.pure_sum(&o.bw);
        self.iops.pure_sum(&o.iops);
    }
    /// `bw_bytes`: integer bytes/s over the direction's runtime.
    pub fn bw_bytes(&self) -> u64 {
        (self.io_bytes * 1000)
            .checked_div(self.runtime_ms)
            .unwrap_or(0)
    }
    /// IOPS as fio's text prints it (`show_ddir_status`): the integer
    /// quotient, truncated.
    pub fn iops_truncated(&self) -> u64 {
        (1000 * self.total_ios)
            .checked_div(self.runtime_ms)
            .unwrap_or(0)
    }
    pub fn iops(&self) -> f64 {
        if self.runtime_ms == 0 {
            0.0
        } else {
            1000.0 * self.total_ios as f64 / self.runtime_ms as f64
        }
    }
}

/// Distribution bins of `iodepth_level` (1, 2, 4, 8, 16, 32, >=64).
pub fn iodepth_level_bin(depth: u32) -> usize {
    match depth {
        0..=1 => 0,
        2..=3 => 1,
        4..=7 => 2,
        8..=15 => 3,
        16..=31 => 4,
        32..=63 => 5,
        _ => 6,
    }
}

/// Distribution bins of `iodepth_submit` / `iodepth_complete` (0, 4, 8, 16, 32, 64, >=64).
pub fn iodepth_batch_bin(n: u32) -> usize {
    match n {
        0 => 0,
        1..=4 => 1,
        5..=8 => 2,
        9..=16 => 3,
        17..=32 => 4,
        33..=64 => 5,
        _ => 6,
    }
}

/// The upper edges (exclusive) of the latency_ns and latency_us bins, in
/// their table's unit (fio's `io_u_lat_n`/`io_u_lat_u` labels).
const LAT_EDGES: [u64; 10] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000];
/// The same for latency_ms, whose last bin (>= 2000) is open.
const LAT_MS_EDGES: [u64; 11] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000];

/// `latency_ns`/`latency_us`/`latency_ms` bins from a clat in ns: (which table, bin).
/// Tables: 0 = ns (2,4,10,20,50,100,250,500,750,1000), 1 = µs (same labels),
/// 2 = ms (2,4,10,20,50,100,250,500,750,1000,2000,>=2000).
pub fn latency_bin(ns: u64) -> (usize, usize) {
    if ns < 1000 {
        return (0, LAT_EDGES.iter().position(|&e| ns < e).unwrap_or(9));
    }
    let us = ns / 1000;
    if us < 1000 {
        return (1, LAT_EDGES.iter().position(|&e| us < e).unwrap_or(9));
    }
    let ms = us / 1000;
    (2, LAT_MS_EDGES.iter().position(|&e| ms < e).unwrap_or(11))
}

/// The ns values [`latency_bin`] puts in bin `bin` of table `table`, as
/// `(lo, span)`: `v` is in the bin iff `v.wrapping_sub(lo) < span` (one
/// comparison, for a caller that checks whether a sample falls where the
/// previous one did). The last ms bin is open: it runs to `u64::MAX`.
pub fn latency_bin_span(table: usize, bin: usize) -> (u64, u64) {
    let (unit, edges): (u64, &[u64]) = match table {
        0 => (1, &LAT_EDGES),
        1 => (1_000, &LAT_EDGES),
        _ => (1_000_000, &LAT_MS_EDGES),
    };
    // the first bin of the µs and ms tables starts where the table does
    let lo = match bin {
        0 if table == 0 => 0,
        0 => unit,
        _ => edges[bin - 1] * unit,
    };
    match edges.get(bin) {
        Some(&e) => (lo, e * unit - lo),
        None => (lo, u64::MAX - lo + 1),
    }
}

/// Per-job results (`struct thread_stat`), filled by the simulator.
///
/// `repr(C)`, in the order of the simulator's per-I/O updates: the
/// directions first (whose counters and latency statistics lead), then
/// the counters and bins (which the simulator keeps as runs and writes
/// here seldom), the names and totals of the report last. A simulator with
/// hundreds of jobs finds each job's statistics out of the cache, and
/// every cache line an I/O touches costs a miss; the order changes no
/// figure.
#[derive(Clone, Debug, Default)]
#[repr(C)]
pub struct JobStats {
    pub dirs: [DirStats; 3],
    /// Number of submit calls (see `iodepth_submit`).
    pub total_submit: u64,
    pub total_complete: u64,
    /// IOs committed at each in-flight depth bin (`io_u_map`).
    pub iodepth_level: [u64; 7],
    /// IOs per submit call, binned (`io_u_submit`).
    pub iodepth_submit: [u64; 7],
    pub iodepth_complete: [u64; 7],
    pub lat_ns: [u64; 10],
    pub lat_us: [u64; 10],
    pub lat_ms: [u64; 12],
    pub name: String,
    pub groupid: u32,
    /// How many jobs were merged into this one (1 without group_reporting).
    pub nr_jobs: u32,
    /// `sync` direction: fsync/fdatasync count and latency (unused, kept for the JSON).
    pub sync_total_ios: u64,
    /// Sum of the members' runtimes, ms (`job_runtime`).
    pub job_runtime_ms: u64,
    /// Wall (simulated) seconds from job start to end, for `elapsed`.
    pub elapsed_s: u64,
    /// CPU time in user space and in the kernel (`ru_utime`, `ru_stime`),
    /// ns, summed over merged jobs; 0 when the host's CPUs are not modelled.
    pub usr_time_ns: u64,
    pub sys_time_ns: u64,
    /// Context switches (`ru_nvcsw + ru_nivcsw`), summed over merged jobs.
    pub ctx: u64,
}

impl JobStats {
    pub fn dir(&self, d: Ddir) -> &DirStats {
        &self.dirs[d.idx()]
    }
    /// Record a clat into the latency_ns/us/ms distribution.
    #[inline]
    pub fn add_lat_bin(&mut self, clat_ns: u64) {
        let (table, bin) = latency_bin(clat_ns);
        self.add_lat_bin_n(table, bin, 1);
    }
    /// Record `n` clats of bin `bin` of table `table` (as [`latency_bin`]
    /// numbers them) at once.
    #[inline]
    pub fn add_lat_bin_n(&mut self, table: usize, bin: usize, n: u64) {
        match table {
            0 => self.lat_ns[bin] += n,
            1 => self.lat_us[bin] += n,
            _ => self.lat_ms[bin] += n,
        }
    }
    /// Merge another job (group_reporting).
    pub fn merge_job(&mut self, o: &JobStats) {
        for d in 0..3 {
            self.dirs[d].merge_job(&o.dirs[d]);
        }
        self.nr_jobs += o.nr_jobs;
        self.sync_total_ios += o.sync_total_ios;
        for i in 0..7 {
            self.iodepth_level[i] += o.iodepth_level[i];
            self.iodepth_submit[i] += o.iodepth_submit[i];
            self.iodepth_complete[i] += o.iodepth_complete[i];
        }
        self.total_submit += o.total_submit;
        self.total_complete += o.total_complete;
        for i in 0..10 {
            self.lat_ns[i] += o.lat_ns[i];
            self.lat_us[i] += o.lat_us[i];
        }
        for i in 0..12 {
            self.lat_ms[i] += o.lat_ms[i];
        }
        self.job_runtime_ms += o.job_runtime_ms;
        self.elapsed_s = self.elapsed_s.max(o.elapsed_s);
        self.add_cpu(o);
    }
    /// Add another job's CPU figures (`sum_thread_stats`: usr_time, sys_time, ctx).
    pub fn add_cpu(&mut self, o: &JobStats) {
        self.usr_time_ns += o.usr_time_ns;
        self.sys_time_ns += o.sys_time_ns;
        self.ctx += o.ctx;
    }
    /// usr_cpu and sys_cpu as `show_thread_status` computes them: CPU time
    /// over the job's runtime, in percent (0 without a runtime).
    pub fn cpu_pct(&self) -> (f64, f64) {
        if self.job_runtime_ms == 0 {
            return (0.0, 0.0);
        }
        let rt_ns = self.job_runtime_ms as f64 * 1e6;
        (
            self.usr_time_ns as f64 * 100.0 / rt_ns,
            self.sys_time_ns as f64 * 100.0 / rt_ns,
        )
    }
    /// The `mixed` direction: all directions merged, runtime the max.
    pub fn mixed(&self) -> DirStats {
        let mut m = DirStats::default();
        for d in &self.dirs {
            m.io_bytes += d.io_bytes;
            m.total_ios += d.total_ios;
            m.short_ios += d.short_ios;
            m.drop_ios += d.drop_ios;
            m.runtime_ms = m.runtime_ms.max(d.runtime_ms);
            m.slat.merge(&d.slat);
            m.clat.merge(&d.clat);
            m.lat.merge(&d.lat);
            m.bw.pure_sum(&d.bw);
            m.iops.pure_sum(&d.iops);
        }
        m
    }
    pub fn total_ios(&self) -> u64 {
        self.dirs.iter().map(|d| d.total_ios).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plat_index_fixtures() {
        // Examples from the spec (§3): idx 128 -> 129, 191 -> 255, 192 -> 258, last bucket.
        assert_eq!(plat_idx_to_val(128), 129);
        assert_eq!(plat_idx_to_val(191), 255);
        assert_eq!(plat_idx_to_val(192), 258);
        assert_eq!(plat_idx_to_val(1855), 17_112_760_320);
        for v in 0..128u64 {
            assert_eq!(plat_val_to_idx(v), v as usize);
        }
        assert_eq!(plat_val_to_idx(128), 128);
        assert_eq!(plat_val_to_idx(u64::MAX), PLAT_NR - 1);
        // every value lands in a bucket whose representative is within 1/128
        for v in [1000u64, 12345, 999_999, 3_500_000, 1_234_567_890] {
            let r = plat_idx_to_val(plat_val_to_idx(v)) as f64;
            assert!(
                (r - v as f64).abs() / (v as f64) <= 1.0 / 128.0,
                "{v} -> {r}"
            );
        }
    }

    /// The window reads as fio's whole array: samples below, inside and
    /// above it (widening it either way, from the first bucket to the
    /// last), merges of histograms with and without overlapping windows.
    /// Fails if a widening loses or moves a count.
    #[test]
    fn window_reads_as_the_whole_array() {
        let mut x: u64 = 99;
        let mut draw = || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            x >> 20
        };
        let mut hists = [PlatHist::default(), PlatHist::default()];
        let mut whole = [vec![0u64; PLAT_NR], vec![0u64; PLAT_NR]];
        for step in 0..4000 {
            let h = step % 2;
            // mostly near one latency, now and then anywhere (0 and the
            // last bucket included)
            let r = draw();
            let ns = match r % 50 {
                0 => 0,
                1 => u64::MAX,
                2 => r >> (r % 64),
                _ => 50_000 * (1 + h as u64) + r % 20_000,
            };
            hists[h].add(ns);
            whole[h][plat_val_to_idx(ns)] += 1;
            if step % 500 == 0 || step == 3999 {
                assert_eq!(hists[h].counts(), whole[h], "step {step}");
                assert_eq!(hists[h].total(), whole[h].iter().sum::<u64>());
                assert_eq!(hists[h].first as usize % PLAT_VAL as usize, 0);
            }
        }
        let want: Vec<(u64, u64)> = whole[0]
            .iter()
            .enumerate()
            .filter(|(_, c)| **c > 0)
            .map(|(i, c)| (plat_idx_to_val(i), *c))
            .collect();
        assert_eq!(hists[0].bins(), want);
        let mut m = PlatHist::default();
        m.merge(&hists[0]);
        m.merge(&PlatHist::default());
        m.merge(&hists[1]);
        let sum: Vec<u64> = (0..PLAT_NR).map(|i| whole[0][i] + whole[1][i]).collect();
        assert_eq!(m.counts(), sum);
        // a narrow window merged into a wider one and the reverse
        let (mut a, mut b) = (PlatHist::default(), PlatHist::default());
        a.add(1_000);
        b.add(1_000_000);
        b.add(10);
        a.merge(&b);
        b.merge(&a);
        let rep = |v| plat_idx_to_val(plat_val_to_idx(v));
        assert_eq!(
            a.bins(),
            vec![(10, 1), (rep(1_000), 1), (rep(1_000_000), 1)]
        );
        assert_eq!(b.total(), 5);
        assert_eq!(PlatHist::default().counts(), vec![0; PLAT_NR]);
    }

    #[test]
    fn percentile_rank_rule() {
        let mut h = PlatHist::default();
        for v in 1..=100u64 {
            h.add(v);
        }
        let p = h.percentiles(&[50.0, 99.0, 99.99, 1.0]);
        // sorted ascending; ranks ceil(p*N/100): 1 -> 1, 50 -> 50, 99 -> 99, 99.99 -> 100
        assert_eq!(p, vec![(1.0, 1), (50.0, 50), (99.0, 99), (99.99, 100)]);
    }

    #[test]
    fn percentile_exact_boundary() {
        // 0.1 is not exactly representable: 0.1*10 in long double is slightly above 1
        // (0.1 as double = 0.1000000000000000055...), so with N=1000 and p=0.1 the
        // rank-1 sample does not satisfy cum >= 1.0000000000000000555; the second does.
        let mut h = PlatHist::default();
        for v in 1..=1000u64 {
            h.add(v);
        }
        let p = h.percentiles(&[0.1]);
        assert_eq!(p[0].1, 2);
    }

    #[test]
    fn welford_and_merge() {
        let mut a = SampleStat::default();
        let mut b = SampleStat::default();
        let mut all = SampleStat::default();
        for v in [10u64, 20, 30] {
            a.add(v);
            all.add(v);
        }
        for v in [40u64, 50] {
            b.add(v);
            all.add(v);
        }
        a.merge(&b);
        assert_eq!(a.samples, 5);
        assert!((a.mean - 30.0).abs() < 1e-9);
        assert!((a.stddev() - all.stddev()).abs() < 1e-9);
        assert_eq!((a.min, a.max), (10, 50));
    }

    #[test]
    fn merge_uses_fio_operation_order() {
        // fio's __sum_stat: S = src.S + dst.S + pow(delta, 2) * (n1 * n2 as
        // integers) / (n1 + n2). Check bit-exactly on awkward values.
        let mut a = SampleStat::default();
        let mut b = SampleStat::default();
        for v in [1_000_003u64, 7_777_777, 123_456_789, 3] {
            a.add(v);
        }
        for v in [999_999_937u64, 2, 31_337] {
            b.add(v);
        }
        let d = b.mean - a.mean;
        let want = b.s
            + a.s
            + d.powi(2) * ((a.samples * b.samples) as f64) / ((a.samples + b.samples) as f64);
        let mut m = a;
        m.merge(&b);
        assert_eq!(m.s.to_bits(), want.to_bits());
    }

    #[test]
    fn latency_bin_spans_hold_what_latency_bin_puts_there() {
        // every edge of the three tables, either side, and the extremes
        let mut vs = vec![0u64, 1, u64::MAX, u64::MAX - 1];
        for unit in [1u64, 1_000, 1_000_000] {
            for e in [1u64, 2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000] {
                vs.extend([e * unit - 1, e * unit, e * unit + 1]);
            }
        }
        let nbins = [10, 10, 12];
        for v in vs {
            let (t, b) = latency_bin(v);
            for (table, &n) in nbins.iter().enumerate() {
                for bin in 0..n {
                    let (lo, span) = latency_bin_span(table, bin);
                    let inside = v.wrapping_sub(lo) < span;
                    assert_eq!(inside, (table, bin) == (t, b), "{v} in ({table}, {bin})");
                }
            }
        }
    }

    #[test]
    fn latency_bins() {
        assert_eq!(latency_bin(1), (0, 0));
        assert_eq!(latency_bin(999), (0, 9));
        assert_eq!(latency_bin(1000), (1, 0));
        assert_eq!(latency_bin(2_500_000), (2, 1));
        assert_eq!(latency_bin(5_000_000_000), (2, 11));
    }
}
