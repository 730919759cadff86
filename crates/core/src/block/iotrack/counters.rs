//! The per-(cgroup, device) counters of blk-iotrack (`struct iotrack_stat` in the
//! RFC's block/blk-iotrack.c), the accounting rule applied to each completed bio
//! (`iotrack_account_bio`), and the `io.iotrack.stat` line format with its reader
//! (the dublio/iotrack tool's `sscanf`).

use super::{bio_issue_time, LAT_BUCKET_NR};

/// Index of the read / write / other tables (the RFC's IOT_READ, IOT_WRITE, IOT_OTHER).
pub const IOT_READ: usize = 0;
pub const IOT_WRITE: usize = 1;
pub const IOT_OTHER: usize = 2;
pub const IOT_NR: usize = 3;

/// Numeric fields in one `io.iotrack.stat` line, as the tool counts them
/// (major, minor, mean, min, max, sum, 4×3 counters, 3×8 hits).
pub const STAT_FIELD_NR: usize = 2 + 4 + IOT_NR * 4 + IOT_NR * LAT_BUCKET_NR;

/// Cumulative counters of one blkg (one cgroup on one device).
///
/// `lat_*` are the Q2C statistics the kernel keeps in a `struct blk_rq_stat`.
/// Here `lat_nr` counts the samples, `lat_min`/`lat_max` are exact, and
/// `lat_mean` is the integer mean of all samples (sum of `tms` / `lat_nr`): that is
/// what the kernel prints when its per-CPU batch is folded once. The kernel folds
/// at every read of the file, truncating each time; [`RqStat`] models that and
/// [`super::IoTrack`] uses it for the file it prints.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct IotrackCounters {
    pub ios: [u64; 3],
    /// 512-byte sectors (the size recorded in `bi_issue`).
    pub sectors: [u64; 3],
    /// Summed Q2C, ns.
    pub tms: [u64; 3],
    /// Summed D2C, ns (0 for bios without a D stamp).
    pub dtms: [u64; 3],
    /// hit[t][i]: completions with Q2C strictly below threshold i (cumulative buckets).
    pub hit: [[u64; 8]; 3],
    pub lat_min: u64,
    pub lat_max: u64,
    pub lat_mean: u64,
    pub lat_nr: u64,
}

impl IotrackCounters {
    /// `iotrack_account_bio` for one blkg: `rwo` 0 read, 1 write, 2 other; `q` the
    /// bio's issue time (Q), `d` its driver-issue time (D, 0 = none), `c` now (C), all
    /// in ns of the same clock; `sectors` the size to record.
    ///
    /// As in the kernel all three times are first cut to the 51 bits `bi_issue` can
    /// hold; a bio with C ≤ Q is ignored entirely; D2C counts only when
    /// Q < D < C; bucket i counts the bio when Q2C < thresh[i] (strict).
    /// `sectors` is recorded as given: the 12-bit truncation of the kernel's
    /// `bi_issue` size is applied by the caller that models the kernel
    /// ([`super::bio_issue_size`], done by [`super::IoTrack`]).
    #[inline]
    pub fn account(&mut self, rwo: usize, sectors: u64, q: u64, d: u64, c: u64, thresh: &[u64; 8]) {
        if self.account_counts(rwo, sectors, q, d, c, thresh).is_some() {
            let total: u64 = self.tms.iter().fold(0u64, |a, &x| a.wrapping_add(x));
            self.lat_mean = total / self.lat_nr;
        }
    }

    /// The counter part of [`account`](Self::account) without recomputing the
    /// mean; returns the Q2C latency if the bio was accounted.
    #[inline]
    pub(crate) fn account_counts(
        &mut self,
        rwo: usize,
        sectors: u64,
        q: u64,
        d: u64,
        c: u64,
        thresh: &[u64; 8],
    ) -> Option<u64> {
        let t = rwo.min(IOT_OTHER);
        let now = bio_issue_time(c);
        let start = bio_issue_time(q);
        let start_disk = bio_issue_time(d);
        if now <= start {
            return None;
        }
        let q2c = now - start;
        // The kernel's test is `start_disk > start`: its D always comes some
        // CPU time after Q, so the test only drops a missing or stale stamp.
        // Both users here see D == Q for a bio dispatched at once: the
        // simulator's submission path takes no time, and the host's trace
        // times have µs resolution. Counting D == Q keeps that bio's D2C
        // instead of dropping it (see docs/fidelity/cli-iotrack-host.md).
        let d2c = if start_disk != 0 && start_disk >= start && now > start_disk {
            now - start_disk
        } else {
            0
        };
        // blk_rq_stat_add: min/max/sample count (the batch sum is `tms`).
        if self.lat_nr == 0 || q2c < self.lat_min {
            self.lat_min = q2c;
        }
        if q2c > self.lat_max {
            self.lat_max = q2c;
        }
        self.lat_nr += 1;
        self.ios[t] = self.ios[t].wrapping_add(1);
        self.sectors[t] = self.sectors[t].wrapping_add(sectors);
        self.tms[t] = self.tms[t].wrapping_add(q2c);
        self.dtms[t] = self.dtms[t].wrapping_add(d2c);
        for (h, &th) in self.hit[t].iter_mut().zip(thresh.iter()) {
            if q2c < th {
                *h += 1;
            }
        }
        Some(q2c)
    }

    /// Total completions over read, write and other.
    pub fn ios_total(&self) -> u64 {
        self.ios.iter().sum()
    }

    /// The `min:` value as the kernel shows it: `blk_rq_stat_init` starts min at
    /// 2^64-1, so a blkg without samples prints that.
    pub fn shown_min(&self) -> u64 {
        if self.lat_nr == 0 {
            u64::MAX
        } else {
            self.lat_min
        }
    }

    /// The `io.iotrack.stat` line for this blkg (`iotrack_prfill_stat`), without
    /// the trailing newline. `sum:` is always 0: the kernel prints the folded
    /// stat's `batch`, which `blk_rq_stat_sum` never fills.
    pub fn stat_line(&self, devno: &str) -> String {
        self.stat_line_with(devno, self.lat_mean, self.shown_min(), self.lat_max)
    }

    pub(crate) fn stat_line_with(&self, devno: &str, mean: u64, min: u64, max: u64) -> String {
        use std::fmt::Write;
        let mut s = String::with_capacity(400);
        let (i, st, tm, dt) = (&self.ios, &self.sectors, &self.tms, &self.dtms);
        let _ = write!(
            s,
            "{devno} mean: {mean} min: {min} max: {max} sum: 0 rios: {} wios: {} oios:{} rsts: {} wsts: {} osts: {} \
             rtms: {} wtms: {} otms: {} rdtms: {} wdtms: {} odtms: {}",
            i[0], i[1], i[2], st[0], st[1], st[2], tm[0], tm[1], tm[2], dt[0], dt[1], dt[2]
        );
        for (t, label) in ["rhit:", "whit:", "ohit:"].iter().enumerate() {
            s.push(' ');
            s.push_str(label);
            for h in &self.hit[t] {
                let _ = write!(s, " {h}");
            }
        }
        s
    }

    /// Parse one `io.iotrack.stat` line the way the iotrack tool does (all 42
    /// numeric fields must be present; labels must match; white space is free,
    /// so both `oios:5` and `oios: 5` are accepted; anything after the last hit
    /// is ignored). Returns the `MAJ:MIN` device and the counters; `lat_nr` is set
    /// to the total IO count (each accounted bio is one sample), and a `min` of
    /// 2^64-1 on a blkg without IO is read back as 0 so that an empty line equals
    /// `IotrackCounters::default()`.
    pub fn parse_stat_line(line: &str) -> Result<(String, IotrackCounters), String> {
        let mut sc = Scanner {
            s: line.trim_start(),
            line,
            fields: 0,
        };
        let maj = sc.number_until(':')?;
        sc.literal(":")?;
        let min = sc.number()?;
        let devno = format!("{maj}:{min}");
        let mut c = IotrackCounters::default();
        sc.label("mean:")?;
        c.lat_mean = sc.number()?;
        sc.label("min:")?;
        let lat_min = sc.number()?;
        sc.label("max:")?;
        c.lat_max = sc.number()?;
        sc.label("sum:")?;
        let _sum = sc.number()?;
        for (arr, labels) in [
            (&mut c.ios, ["rios:", "wios:", "oios:"]),
            (&mut c.sectors, ["rsts:", "wsts:", "osts:"]),
            (&mut c.tms, ["rtms:", "wtms:", "otms:"]),
            (&mut c.dtms, ["rdtms:", "wdtms:", "odtms:"]),
        ] {
            for (v, l) in arr.iter_mut().zip(labels) {
                sc.label(l)?;
                *v = sc.number()?;
            }
        }
        for (t, l) in ["rhit:", "whit:", "ohit:"].iter().enumerate() {
            sc.label(l)?;
            for j in 0..LAT_BUCKET_NR {
                c.hit[t][j] = sc.number()?;
            }
        }
        debug_assert_eq!(sc.fields, STAT_FIELD_NR);
        c.lat_nr = c.ios_total();
        c.lat_min = if c.lat_nr == 0 && lat_min == u64::MAX {
            0
        } else {
            lat_min
        };
        Ok((devno, c))
    }
}

/// A tiny `sscanf` for the stat line: literal labels and unsigned decimals.
struct Scanner<'a> {
    s: &'a str,
    line: &'a str,
    fields: usize,
}

impl Scanner<'_> {
    fn err(&self, what: &str) -> String {
        let found: String = self.s.chars().take(24).collect();
        let found = if found.is_empty() {
            "end of line".to_string()
        } else {
            format!("'{found}'")
        };
        format!(
            "io.iotrack.stat line: expected {what} after {} of {STAT_FIELD_NR} numeric fields, found {found} (line: '{}')",
            self.fields,
            self.line.trim_end()
        )
    }
    fn literal(&mut self, lit: &str) -> Result<(), String> {
        match self.s.strip_prefix(lit) {
            Some(rest) => {
                self.s = rest;
                Ok(())
            }
            None => Err(self.err(&format!("'{lit}'"))),
        }
    }
    fn label(&mut self, lit: &str) -> Result<(), String> {
        self.s = self.s.trim_start();
        self.literal(lit)
    }
    fn number(&mut self) -> Result<u64, String> {
        self.s = self.s.trim_start();
        let end = self
            .s
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(self.s.len());
        if end == 0 {
            return Err(self.err("an unsigned decimal number"));
        }
        let v = self.s[..end]
            .parse::<u64>()
            .map_err(|_| self.err("a number below 2^64"))?;
        self.s = &self.s[end..];
        self.fields += 1;
        Ok(v)
    }
    fn number_until(&mut self, stop: char) -> Result<u64, String> {
        let end = self.s.find(stop).unwrap_or(self.s.len());
        let tok = &self.s[..end];
        if tok.is_empty() || !tok.bytes().all(|b| b.is_ascii_digit()) {
            return Err(self.err("a MAJ:MIN device number"));
        }
        self.number()
    }
}

/// `struct blk_rq_stat` and its two operations, to reproduce the mean the kernel
/// prints: samples go into a per-CPU batch (`blk_rq_stat_add`) and each read of
/// `io.iotrack.stat` folds the batch into the group's stat (`blk_rq_stat_sum`),
/// recomputing the mean with an integer division. The model has one CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RqStat {
    pub mean: u64,
    pub min: u64,
    pub max: u64,
    /// u32 in the kernel.
    pub nr_samples: u32,
    pub batch: u64,
}

impl Default for RqStat {
    fn default() -> Self {
        Self::new()
    }
}

impl RqStat {
    /// `blk_rq_stat_init`
    pub const fn new() -> RqStat {
        RqStat {
            mean: 0,
            min: u64::MAX,
            max: 0,
            nr_samples: 0,
            batch: 0,
        }
    }
    /// `blk_rq_stat_add`
    #[inline]
    pub fn add(&mut self, value: u64) {
        self.min = self.min.min(value);
        self.max = self.max.max(value);
        self.batch = self.batch.wrapping_add(value);
        self.nr_samples = self.nr_samples.wrapping_add(1);
    }
    /// `blk_rq_stat_sum(self, src)`: fold a batch into this (group) stat. Note that
    /// `batch` of the destination is not carried over (the `sum: 0` quirk).
    pub fn sum_from(&mut self, src: &RqStat) {
        if src.nr_samples == 0 {
            return;
        }
        self.min = self.min.min(src.min);
        self.max = self.max.max(src.max);
        let div = self.nr_samples.wrapping_add(src.nr_samples);
        self.mean = src
            .batch
            .wrapping_add(self.mean.wrapping_mul(self.nr_samples as u64))
            / div.max(1) as u64;
        self.nr_samples = div;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::iotrack::DEFAULT_THRESH_NS;

    const US: u64 = 1_000;

    #[test]
    fn q2c_d2c_and_buckets() {
        let mut c = IotrackCounters::default();
        // Read: Q=1000, D=1000+30us, C=1000+80us → q2c 80us, d2c 50us.
        c.account(
            0,
            8,
            1_000,
            1_000 + 30 * US,
            1_000 + 80 * US,
            &DEFAULT_THRESH_NS,
        );
        assert_eq!(c.ios, [1, 0, 0]);
        assert_eq!(c.sectors, [8, 0, 0]);
        assert_eq!(c.tms[0], 80 * US);
        assert_eq!(c.dtms[0], 50 * US);
        // 80us is not < 50us, but < 100us and all above.
        assert_eq!(c.hit[0], [0, 1, 1, 1, 1, 1, 1, 1]);
        assert_eq!(
            (c.lat_min, c.lat_max, c.lat_mean, c.lat_nr),
            (80 * US, 80 * US, 80 * US, 1)
        );
    }

    #[test]
    fn bucket_edge_is_strict() {
        let mut c = IotrackCounters::default();
        // Q2C exactly 100us: not counted in the 100us bucket (strict '<').
        c.account(1, 8, 0, 0, 100 * US, &DEFAULT_THRESH_NS);
        assert_eq!(c.hit[1], [0, 0, 1, 1, 1, 1, 1, 1]);
        // One ns less: counted.
        c.account(1, 8, 0, 0, 100 * US - 1, &DEFAULT_THRESH_NS);
        assert_eq!(c.hit[1], [0, 1, 2, 2, 2, 2, 2, 2]);
        // Exactly 8 ms: in no bucket at all.
        c.account(1, 8, 0, 0, 8_000_000, &DEFAULT_THRESH_NS);
        assert_eq!(c.hit[1], [0, 1, 2, 2, 2, 2, 2, 2]);
        assert_eq!(c.ios[1], 3);
    }

    #[test]
    fn no_d_stamp_and_bad_d() {
        let mut c = IotrackCounters::default();
        c.account(2, 0, 500, 0, 900, &DEFAULT_THRESH_NS); // no D
        c.account(2, 0, 500, 400, 900, &DEFAULT_THRESH_NS); // D before Q: ignored
        c.account(2, 0, 500, 900, 900, &DEFAULT_THRESH_NS); // D == C: ignored
        assert_eq!(c.ios[2], 3);
        assert_eq!(c.tms[2], 1200);
        assert_eq!(c.dtms[2], 0);
        // D == Q (dispatched at once, no modelled path time): D2C = Q2C
        c.account(2, 0, 500, 500, 900, &DEFAULT_THRESH_NS);
        assert_eq!(c.dtms[2], 400);
        c.ios[2] -= 1;
        c.tms[2] -= 400;
        // C <= Q: skipped entirely.
        c.account(2, 0, 900, 0, 900, &DEFAULT_THRESH_NS);
        assert_eq!(c.ios[2], 3);
    }

    #[test]
    fn stat_line_round_trip_and_quirks() {
        let c = IotrackCounters::default();
        let line = c.stat_line("259:0");
        assert_eq!(
            line,
            "259:0 mean: 0 min: 18446744073709551615 max: 0 sum: 0 rios: 0 wios: 0 oios:0 rsts: 0 wsts: 0 osts: 0 \
             rtms: 0 wtms: 0 otms: 0 rdtms: 0 wdtms: 0 odtms: 0 rhit: 0 0 0 0 0 0 0 0 whit: 0 0 0 0 0 0 0 0 \
             ohit: 0 0 0 0 0 0 0 0"
        );
        let (dev, back) = IotrackCounters::parse_stat_line(&line).unwrap();
        assert_eq!(dev, "259:0");
        assert_eq!(back, c);

        let mut c = IotrackCounters::default();
        c.account(0, 8, 0, 10, 70 * US, &DEFAULT_THRESH_NS);
        c.account(1, 16, 0, 0, 3_000 * US, &DEFAULT_THRESH_NS);
        c.account(1, 16, 10, 20, 31, &DEFAULT_THRESH_NS);
        let line = c.stat_line("8:16");
        assert!(line.contains(" sum: 0 "));
        assert!(line.contains(" oios:0 "));
        let (dev, back) = IotrackCounters::parse_stat_line(&format!("{line}\n")).unwrap();
        assert_eq!(dev, "8:16");
        assert_eq!(back, c);
    }

    #[test]
    fn parse_errors_name_the_field() {
        let good = IotrackCounters::default().stat_line("8:0");
        let e = IotrackCounters::parse_stat_line(&good.replace("wtms:", "wtm:")).unwrap_err();
        assert!(e.contains("'wtms:'"), "{e}");
        let e = IotrackCounters::parse_stat_line("sda mean: 0").unwrap_err();
        assert!(e.contains("MAJ:MIN"), "{e}");
        let cut = &good[..good.len() - 2];
        let e = IotrackCounters::parse_stat_line(cut).unwrap_err();
        assert!(e.contains("41 of 42"), "{e}");
        assert!(IotrackCounters::parse_stat_line(&good.replace("oios:0", "oios: 0")).is_ok());
        assert!(IotrackCounters::parse_stat_line(&good.replace("rios: 0", "rios: -1")).is_err());
    }

    #[test]
    fn rq_stat_fold_truncates_per_read() {
        // Samples 10, 13, 13, 13 with a read after each: the folds give
        // 10, floor(23/2)=11, floor((13+22)/3)=11, floor((13+33)/4)=11.
        let mut g = RqStat::new();
        assert_eq!(g.min, u64::MAX);
        for v in [10, 13, 13, 13] {
            let mut b = RqStat::new();
            b.add(v);
            g.sum_from(&b);
        }
        assert_eq!(g.mean, 11);
        // Folded in one read: floor(49/4) = 12.
        let mut once = RqStat::new();
        let mut b = RqStat::new();
        for v in [10, 13, 13, 13] {
            b.add(v);
        }
        once.sum_from(&b);
        assert_eq!(once.mean, 12);
        assert_eq!(
            (once.min, once.max, once.nr_samples, once.batch),
            (10, 13, 4, 0)
        );
        // An empty batch changes nothing.
        once.sum_from(&RqStat::new());
        assert_eq!(once.nr_samples, 4);
    }
}
