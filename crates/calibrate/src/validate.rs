//! `--validate`: the same fio jobs on the real device and on the calibrated
//! model (the printed `[[device]]` block read back), side by side. A figure
//! passes when the simulated value is within 15 % of the real one.

use std::fmt::Write as _;

use crate::fio_run::FioResult;
use crate::plan::{job_args, Job};

/// How far `x` is from `base`, relative to it: 0 for two zeros, infinite
/// from a zero base to anything else.
pub(crate) fn rel_diff(x: f64, base: f64) -> f64 {
    if base == 0.0 {
        if x == 0.0 {
            0.0
        } else {
            f64::INFINITY
        }
    } else {
        (x - base) / base
    }
}

/// The tolerance: |sim - real| / real.
pub const TOLERANCE: f64 = 0.15;

/// The validation jobs: QD1 and QD32 4 KiB random reads, 128 KiB sequential
/// writes at QD8, and a 70/30 4 KiB random mix at QD16 (fio merges its two
/// directions: `unified_rw_reporting=mixed`). `writes` false keeps the reads.
pub fn jobs(quick: bool, writes: bool) -> Vec<Job> {
    // --quick: 3 s as the measurement's jobs (4 s before the look at the
    // device at the end of validation, which took the second)
    let t = if quick { 3 } else { 15 };
    let j = |id: &str, what: &str, rw: &str, bs: &str, qd: u32, extra: &str, w: bool| Job {
        id: id.to_string(),
        what: what.to_string(),
        args: job_args(id, rw, bs, qd, t, extra),
        runtime_s: t,
        writes: w,
    };
    let mut v = vec![
        j(
            "val-randread-4k-qd1",
            "random read QD1",
            "randread",
            "4k",
            1,
            "",
            false,
        ),
        j(
            "val-randread-4k-qd32",
            "random read QD32",
            "randread",
            "4k",
            32,
            "",
            false,
        ),
        j(
            "val-write-128k-qd8",
            "sequential write",
            "write",
            "128k",
            8,
            "",
            true,
        ),
        j(
            "val-randrw-70-30-4k-qd16",
            "70/30 mix",
            "randrw",
            "4k",
            16,
            "--rwmixread=70 --unified_rw_reporting=mixed",
            true,
        ),
    ];
    v.retain(|x| writes || !x.writes);
    v
}

/// One compared figure.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub job: String,
    pub metric: &'static str,
    pub real: f64,
    pub sim: f64,
    /// Latencies are shown in µs.
    pub is_latency: bool,
}

impl Row {
    /// (sim - real) / real.
    pub fn diff(&self) -> f64 {
        rel_diff(self.sim, self.real)
    }
    pub fn pass(&self) -> bool {
        self.diff().abs() <= TOLERANCE
    }
}

/// IOPS, clat mean and clat p99 of one job, real against simulated.
pub fn compare(job: &str, real: &FioResult, sim: &FioResult) -> Vec<Row> {
    let (r, s) = (real.main(), sim.main());
    vec![
        Row {
            job: job.to_string(),
            metric: "IOPS",
            real: r.iops,
            sim: s.iops,
            is_latency: false,
        },
        Row {
            job: job.to_string(),
            metric: "clat mean",
            real: r.clat_mean_ns,
            sim: s.clat_mean_ns,
            is_latency: true,
        },
        Row {
            job: job.to_string(),
            metric: "clat p99",
            real: r.pct_ns(99.0),
            sim: s.pct_ns(99.0),
            is_latency: true,
        },
    ]
}

/// The table: real / simulated / difference / PASS or MISS, a miss saying
/// so when the device itself `changed` since calibration (`drift`).
pub fn table(rows: &[Row], changed: bool) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<26} {:<10} {:>12} {:>12} {:>8}  verdict (±{:.0} %)",
        "job",
        "figure",
        "real",
        "simulated",
        "diff",
        TOLERANCE * 100.0
    );
    let mut last = "";
    for r in rows {
        let fmt = |v: f64| {
            if r.is_latency {
                format!("{:.1}µs", v / 1e3)
            } else {
                format!("{v:.0}")
            }
        };
        let job = if r.job == last { "" } else { r.job.as_str() };
        last = &r.job;
        let _ = writeln!(
            s,
            "{:<26} {:<10} {:>12} {:>12} {:>+7.1}%  {}",
            job,
            r.metric,
            fmt(r.real),
            fmt(r.sim),
            r.diff() * 100.0,
            match (r.pass(), changed) {
                (true, _) => "PASS",
                (false, false) => "MISS",
                (false, true) => "MISS (device changed)",
            }
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::fio_run::DirFigures;

    fn res(iops: f64, mean: f64, p99: f64) -> FioResult {
        FioResult {
            read: DirFigures {
                iops,
                ios: 100,
                clat_mean_ns: mean,
                clat_pct_ns: vec![(50.0, mean), (99.0, p99)],
                ..DirFigures::default()
            },
            ..FioResult::default()
        }
    }

    #[test]
    fn rows_pass_within_fifteen_percent() {
        let rows = compare("j", &res(1000.0, 1e6, 2e6), &res(1100.0, 1.2e6, 2e6));
        assert!(rows[0].pass());
        assert!(!rows[1].pass(), "{:?}", rows[1]);
        assert!(rows[2].pass());
        let t = table(&rows, false);
        assert!(
            t.contains("PASS") && t.contains("MISS") && t.contains("+20.0%"),
            "{t}"
        );
        assert!(!t.contains("device"), "no checks, no device lines: {t}");
        // the device changed: the miss says so, the pass does not
        let t = table(&rows, true);
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[2].ends_with("MISS (device changed)"), "{t}");
        assert!(lines[3].ends_with("PASS"), "{t}");
        assert_eq!(jobs(true, false).len(), 2);
        assert_eq!(jobs(true, true).len(), 4);
    }
}
