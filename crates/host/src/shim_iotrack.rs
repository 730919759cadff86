//! TEMPORARY stand-in for `blklab_core::iotrack` (being written in another
//! branch). Same names and signatures as the prescribed API; the crate uses it
//! only through `crate::iotrack` (see lib.rs), so replacing this module by the
//! real one is a one-line change there. Delete this file after the swap.
//!
//! `account` mirrors blk-iotrack's `iotrack_account_bio()` (RFC v2, §1.3 of
//! the spec): counters are updated at bio completion, the latency used for
//! the buckets/mean/min/max is Q2C, buckets are cumulative with a strict `<`.

/// Default `io.iotrack.lat_thresh` values in ns (50 us .. 8 ms).
pub const DEFAULT_THRESH_NS: [u64; 8] = [
    50_000, 100_000, 200_000, 400_000, 1_000_000, 2_000_000, 4_000_000, 8_000_000,
];

/// Per (cgroup, device) cumulative counters, index 0 = read, 1 = write, 2 = other.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IotrackCounters {
    pub ios: [u64; 3],
    pub sectors: [u64; 3],
    pub tms: [u64; 3],
    pub dtms: [u64; 3],
    pub hit: [[u64; 8]; 3],
    pub lat_min: u64,
    pub lat_max: u64,
    pub lat_mean: u64,
    pub lat_nr: u64,
    // shim-private: exact sum so the mean does not drift with integer division
    lat_sum: u128,
}

impl Default for IotrackCounters {
    fn default() -> Self {
        IotrackCounters {
            ios: [0; 3],
            sectors: [0; 3],
            tms: [0; 3],
            dtms: [0; 3],
            hit: [[0; 8]; 3],
            // blk_rq_stat starts with min = U64_MAX until the first sample
            lat_min: u64::MAX,
            lat_max: 0,
            lat_mean: 0,
            lat_nr: 0,
            lat_sum: 0,
        }
    }
}

impl IotrackCounters {
    /// One completed bio: `rwo` 0/1/2, `q`, `d` (0 = no driver stamp), `c` in ns.
    pub fn account(&mut self, rwo: usize, sectors: u64, q: u64, d: u64, c: u64, thresh: &[u64; 8]) {
        if c <= q || rwo > 2 {
            return;
        }
        let q2c = c - q;
        let d2c = if d != 0 && d > q && c > d { c - d } else { 0 };
        self.ios[rwo] += 1;
        self.sectors[rwo] += sectors;
        self.tms[rwo] += q2c;
        self.dtms[rwo] += d2c;
        for (i, t) in thresh.iter().enumerate() {
            if q2c < *t {
                self.hit[rwo][i] += 1;
            }
        }
        self.lat_min = self.lat_min.min(q2c);
        self.lat_max = self.lat_max.max(q2c);
        self.lat_nr += 1;
        self.lat_sum += q2c as u128;
        self.lat_mean = (self.lat_sum / self.lat_nr as u128) as u64;
    }
}

pub mod report {
    //! Minimal version of the iotrack interval table (spec §1.5).
    use super::IotrackCounters;
    use std::fmt::Write as _;

    /// One snapshot of one device: its /sys/block/DEV/stat fields and the
    /// cumulative counters of each cgroup ("/" first).
    #[derive(Debug, Clone, Default)]
    pub struct Sample {
        pub time_ns: u64,
        pub dev_name: String,
        pub dev: [u64; 11],
        pub cgroups: Vec<(String, IotrackCounters)>,
    }

    fn pct(a: f64, b: f64) -> f64 {
        if b == 0.0 {
            0.0
        } else {
            100.0 * a / b
        }
    }

    /// Deltas between two snapshots rendered like dublio/iotrack (basic or -x).
    pub fn format_interval(
        prev: &[Sample],
        cur: &[Sample],
        interval_ms: f64,
        extended: bool,
        time_str: &str,
    ) -> String {
        let t = if interval_ms > 0.0 { interval_ms } else { 1.0 };
        let mut s = String::new();
        let _ = writeln!(s, "Time: {time_str}");
        let _ = writeln!(
            s,
            "{:<16} {:<8} {:<8} {:<8} {:<8} {:<8} {:<8} {:<8} {:<8} {:<8} {:<8} {:<8} {:<8} {:<8} {:<8}",
            "Device", "rrqm/s", "wrqm/s", "r/s", "w/s", "rMB/s", "wMB/s", "avgrqkb", "avgqu-sz",
            "await", "r_await", "w_await", "svctm", "%util", "conc"
        );
        let empty = Sample::default();
        for c in cur {
            let p = prev
                .iter()
                .find(|p| p.dev_name == c.dev_name)
                .unwrap_or(&empty);
            let d: Vec<f64> = (0..11)
                .map(|i| c.dev[i].saturating_sub(p.dev[i]) as f64)
                .collect();
            let rs = 1000.0 * d[0] / t;
            let ws = 1000.0 * d[4] / t;
            let avgrq = if rs + ws > 0.0 {
                (d[2] + d[6]) / 2.0 / (rs + ws)
            } else {
                0.0
            };
            let ios = d[0] + d[4];
            let _ = writeln!(
                s,
                "{:<16} {:<8.0} {:<8.0} {:<8.0} {:<8.0} {:<8.2} {:<8.2} {:<8.2} {:<8.2} {:<8.2} {:<8.2} {:<8.2} {:<8.2} {:<8.2} {:<8.2}",
                c.dev_name,
                1000.0 * d[1] / t,
                1000.0 * d[5] / t,
                rs,
                ws,
                1000.0 * d[2] / 2048.0 / t,
                1000.0 * d[6] / 2048.0 / t,
                avgrq,
                d[10] / t,
                if ios > 0.0 { (d[3] + d[7]) / ios } else { 0.0 },
                if d[0] > 0.0 { d[3] / d[0] } else { 0.0 },
                if d[4] > 0.0 { d[7] / d[4] } else { 0.0 },
                0.0,
                100.0 * d[9] / t,
                if d[9] > 0.0 { d[10] / d[9] } else { 0.0 },
            );
        }
        let _ = writeln!(s);
        let mut hdr = String::from("Device           ");
        if extended {
            hdr.push_str("mean(us) min(us)  max(us)  ");
            for g in ["io/s", "MB/s"] {
                let _ = write!(hdr, "{g:<8} ");
                for x in ["r", "w", "o"] {
                    let _ = write!(hdr, "{:<8} ", format!("{x}{g}"));
                }
            }
            for g in ["%io", "%byte", "%tm", "%dtm", "%d2c"] {
                let _ = write!(hdr, "{g:<6} ");
                let base = if g == "%byte" { "MB" } else { &g[1..] };
                for x in ["r", "w", "o"] {
                    let _ = write!(hdr, "{:<6} ", format!("%{x}{base}"));
                }
            }
            for g in ["ad2c", "aq2c"] {
                let _ = write!(hdr, "{g:<8} ");
                for x in ["r", "w", "o"] {
                    let _ = write!(hdr, "{:<8} ", format!("{x}{g}"));
                }
            }
            for pre in ["", "r", "w", "o"] {
                for j in 0..8 {
                    let _ = write!(hdr, "{:<6} ", format!("%{pre}hit{j}"));
                }
            }
        } else {
            hdr.push_str("io/s     MB/s     %io    %byte  %tm    %dtm   %d2c   ad2c     aq2c     ");
            for j in 0..8 {
                let _ = write!(hdr, "{:<6} ", format!("%hit{j}"));
            }
        }
        hdr.push_str("cgroup");
        let _ = writeln!(s, "{hdr}");
        let zero = IotrackCounters::default();
        for c in cur {
            let p = prev
                .iter()
                .find(|p| p.dev_name == c.dev_name)
                .unwrap_or(&empty);
            let delta = |name: &str| -> Option<(IotrackCounters, IotrackCounters)> {
                let cc = c.cgroups.iter().find(|(n, _)| n == name)?.1.clone();
                let pc = p
                    .cgroups
                    .iter()
                    .find(|(n, _)| n == name)
                    .map(|x| x.1.clone())
                    .unwrap_or_default();
                Some((cc, pc))
            };
            let root = delta("/").unwrap_or((zero.clone(), zero.clone()));
            let rd = |f: fn(&IotrackCounters) -> [u64; 3], k: usize| {
                (f(&root.0)[k].saturating_sub(f(&root.1)[k])) as f64
            };
            let rsum = |f: fn(&IotrackCounters) -> [u64; 3]| (0..3).map(|k| rd(f, k)).sum::<f64>();
            let (r_ios, r_sts, r_tms, r_dtms) = (
                rsum(|x| x.ios),
                rsum(|x| x.sectors),
                rsum(|x| x.tms),
                rsum(|x| x.dtms),
            );
            for (name, _) in &c.cgroups {
                let Some((cc, pc)) = delta(name) else {
                    continue;
                };
                let dv = |f: fn(&IotrackCounters) -> [u64; 3]| -> [f64; 4] {
                    let a = f(&cc);
                    let b = f(&pc);
                    let v = [0, 1, 2].map(|k| a[k].saturating_sub(b[k]) as f64);
                    [v[0] + v[1] + v[2], v[0], v[1], v[2]]
                };
                let ios = dv(|x| x.ios);
                let sts = dv(|x| x.sectors);
                let tms = dv(|x| x.tms);
                let dtms = dv(|x| x.dtms);
                let mut hits = [[0f64; 8]; 4];
                for k in 0..3 {
                    for j in 0..8 {
                        let v = cc.hit[k][j].saturating_sub(pc.hit[k][j]) as f64;
                        hits[k + 1][j] = v;
                        hits[0][j] += v;
                    }
                }
                let path = if name.starts_with('/') {
                    name.clone()
                } else {
                    format!("/{name}")
                };
                let _ = write!(s, "{:<16} ", c.dev_name);
                let per_io = |a: f64, n: f64| if n > 0.0 { a / 1e6 / n } else { 0.0 };
                if extended {
                    let min = if cc.lat_nr == 0 { u64::MAX } else { cc.lat_min };
                    let _ = write!(
                        s,
                        "{:<8.2} {:<8.2} {:<8.2} ",
                        cc.lat_mean as f64 / 1000.0,
                        min as f64 / 1000.0,
                        cc.lat_max as f64 / 1000.0
                    );
                    for v in ios {
                        let _ = write!(s, "{:<8.0} ", 1000.0 * v / t);
                    }
                    for v in sts {
                        let _ = write!(s, "{:<8.2} ", 1000.0 * v / 2048.0 / t);
                    }
                    for (arr, den) in [(ios, r_ios), (sts, r_sts), (tms, r_tms), (dtms, r_dtms)] {
                        for v in arr {
                            let _ = write!(s, "{:<6.2} ", pct(v, den));
                        }
                    }
                    for k in 0..4 {
                        let _ = write!(s, "{:<6.2} ", pct(dtms[k], tms[k]));
                    }
                    for k in 0..4 {
                        let _ = write!(s, "{:<8.2} ", per_io(dtms[k], ios[k]));
                    }
                    for k in 0..4 {
                        let _ = write!(s, "{:<8.2} ", per_io(tms[k], ios[k]));
                    }
                    for h in hits {
                        for v in h {
                            // quirk kept: the denominator is all IO of the cgroup
                            let _ = write!(s, "{:<6.2} ", pct(v, ios[0]));
                        }
                    }
                } else {
                    let _ = write!(
                        s,
                        "{:<8.0} {:<8.2} {:<6.2} {:<6.2} {:<6.2} {:<6.2} {:<6.2} {:<8.2} {:<8.2} ",
                        1000.0 * ios[0] / t,
                        1000.0 * sts[0] / 2048.0 / t,
                        pct(ios[0], r_ios),
                        pct(sts[0], r_sts),
                        pct(tms[0], r_tms),
                        pct(dtms[0], r_dtms),
                        pct(dtms[0], tms[0]),
                        per_io(dtms[0], ios[0]),
                        per_io(tms[0], ios[0]),
                    );
                    for v in hits[0] {
                        let _ = write!(s, "{:<6.2} ", pct(v, ios[0]));
                    }
                }
                let _ = writeln!(s, "{path}");
            }
        }
        let _ = writeln!(s);
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn account_follows_iotrack_rule() {
        let mut c = IotrackCounters::default();
        // q2c = 150 us, d2c = 100 us
        c.account(0, 8, 1_000_000, 1_050_000, 1_150_000, &DEFAULT_THRESH_NS);
        assert_eq!(c.ios, [1, 0, 0]);
        assert_eq!(c.sectors[0], 8);
        assert_eq!(c.tms[0], 150_000);
        assert_eq!(c.dtms[0], 100_000);
        // strict '<': 150 us is not under 50 or 100 us, is under 200 us
        assert_eq!(c.hit[0], [0, 0, 1, 1, 1, 1, 1, 1]);
        // no D stamp: d2c 0, still counted; c <= q: skipped
        c.account(1, 16, 10, 0, 20, &DEFAULT_THRESH_NS);
        c.account(1, 16, 30, 0, 30, &DEFAULT_THRESH_NS);
        assert_eq!(c.ios, [1, 1, 0]);
        assert_eq!(c.dtms[1], 0);
        assert_eq!((c.lat_min, c.lat_max, c.lat_nr), (10, 150_000, 2));
        assert_eq!(c.lat_mean, 75_005);
    }
}
