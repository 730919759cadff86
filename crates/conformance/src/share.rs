//! A case-level figure derived from all of a case's jobs: the share of the
//! case's I/Os done by the jobs of one cgroup, in percent. Weight-based
//! controllers (bfq's io.bfq.weight) promise a split between groups, not a
//! rate: the split is what holds on a loaded host whose absolute IOPS move
//! with the CPU, so it is what these cases judge.
//!
//! The real share is computed per real run (all jobs of run k together) and
//! combined by the median; the spread is max - min of the per-run shares, in
//! percentage points. The tolerance is absolute, in percentage points.

use std::fmt::Write as _;

use crate::metrics::{median, Metric, Metrics};

/// Where the real kernel runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RealSide {
    /// This host (`--kernel host`).
    #[default]
    Host,
    /// A QEMU guest (`--kernel debian-6.12` ...): one vCPU (crates/vm's
    /// qemu.rs), shared by fio, the loop worker and the interrupts, so
    /// one process's I/O takes CPU time from another's.
    Qemu,
}

/// Which cgroup's share a case judges, and how closely.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShareCheck {
    /// The scenario's cgroup whose jobs are counted ("/A").
    pub cgroup: &'static str,
    /// |sim - real| allowed, in percentage points, when the real side runs
    /// on this host (None: reported only).
    pub host_tol_pts: Option<f64>,
    /// The same in a QEMU guest (one vCPU).
    pub qemu_tol_pts: Option<f64>,
}

impl ShareCheck {
    /// The tolerance where the real side ran.
    pub fn tol_pts(&self, side: RealSide) -> Option<f64> {
        match side {
            RealSide::Host => self.host_tol_pts,
            RealSide::Qemu => self.qemu_tol_pts,
        }
    }
}

/// A case's share on both sides.
#[derive(Debug, Clone, PartialEq)]
pub struct ShareResult {
    pub cgroup: String,
    /// One share (percent) per real run, in run order.
    pub real_runs: Vec<f64>,
    /// The simulator's share (percent).
    pub sim: Option<f64>,
    pub tol_pts: Option<f64>,
}

/// The share (percent) of the I/Os done by the jobs in `cgroup`, given each
/// job's cgroup and IOPS (every job runs for the same time, so IOPS add up
/// as I/O counts do). NaN when no job did any I/O.
pub fn share_pct(job_cgroups: &[&str], iops: &[f64], cgroup: &str) -> f64 {
    let total: f64 = iops.iter().sum();
    let mine: f64 = job_cgroups
        .iter()
        .zip(iops)
        .filter(|(g, _)| **g == cgroup)
        .map(|(_, x)| *x)
        .sum();
    if total > 0.0 {
        100.0 * mine / total
    } else {
        f64::NAN
    }
}

impl ShareResult {
    /// The share of `check.cgroup` from the real runs (`real[job][run]`, as
    /// `RealRuns::runs`) and the simulator's jobs, given each job's cgroup
    /// (`groups`, case order), judged with the tolerance for `side`.
    pub fn of(
        groups: &[&str],
        check: ShareCheck,
        side: RealSide,
        real: Option<&[Vec<Metrics>]>,
        sim: Option<&[Metrics]>,
    ) -> ShareResult {
        let iops_share = |iops: Vec<f64>| share_pct(groups, &iops, check.cgroup);
        let runs = real
            .map(|r| r.iter().map(Vec::len).min().unwrap_or(0))
            .unwrap_or(0);
        let real_runs = (0..runs)
            .map(|k| {
                let r = real.unwrap_or_default();
                iops_share(r.iter().map(|j| j[k].get(Metric::Iops)).collect())
            })
            .collect();
        ShareResult {
            cgroup: check.cgroup.to_string(),
            real_runs,
            sim: sim.map(|s| iops_share(s.iter().map(|m| m.get(Metric::Iops)).collect())),
            tol_pts: check.tol_pts(side),
        }
    }

    /// The median of the real runs' shares.
    pub fn real(&self) -> Option<f64> {
        (!self.real_runs.is_empty()).then(|| median(self.real_runs.clone()))
    }

    /// max - min of the real runs' shares, in points.
    pub fn spread_pts(&self) -> Option<f64> {
        let lo = self.real_runs.iter().copied().reduce(f64::min)?;
        let hi = self.real_runs.iter().copied().reduce(f64::max)?;
        Some(hi - lo)
    }

    /// Whether the share is within tolerance: None when it is reported
    /// only or a side is missing. A NaN share (no I/O) is out.
    pub fn within(&self) -> Option<bool> {
        let (t, r, s) = (self.tol_pts?, self.real()?, self.sim?);
        Some((s - r).abs() <= t)
    }

    /// The out-of-tolerance line for the case's verdict, if out.
    pub fn complaint(&self) -> Option<String> {
        if self.within()? {
            return None;
        }
        Some(format!(
            "share of I/Os in {}: real {:.2}%, sim {:.2}% ({:+.1} points, allowed ±{} points)",
            self.cgroup,
            self.real()?,
            self.sim?,
            self.sim? - self.real()?,
            self.tol_pts?
        ))
    }

    /// The tolerance for the list of tolerances (None: reported only).
    pub fn tolerance_line(&self) -> Option<String> {
        Some(format!(
            "share of {}'s I/Os ±{} points",
            self.cgroup, self.tol_pts?
        ))
    }

    /// sim - real, in points.
    fn diff_pts(&self) -> Option<f64> {
        Some(self.sim? - self.real()?)
    }

    /// "ok", "OUT", "reported" (both sides, no tolerance) or "" (a side
    /// missing).
    fn verdict(&self) -> &'static str {
        match self.within() {
            Some(true) => "ok",
            Some(false) => "OUT",
            None if self.diff_pts().is_some() => "reported",
            None => "",
        }
    }

    fn describe_tol(&self) -> String {
        match self.tol_pts {
            Some(t) => format!("±{t} points"),
            None => "-".into(),
        }
    }

    /// The share's line under the case's job table.
    pub fn text(&self, indent: &str) -> String {
        let pct = |x: Option<f64>| x.map(|v| format!("{v:.2}%")).unwrap_or("-".into());
        let diff = self
            .diff_pts()
            .map(|d| format!("{d:+.1} pts"))
            .unwrap_or("-".into());
        let ok = match self.verdict() {
            "reported" => "(reported)",
            v => v,
        };
        let mut s = String::new();
        let _ = writeln!(
            s,
            "{indent}{:<4} {:<10} {:>10} {:>10} {:>8}  {:<14} {:>7}  {ok}",
            "all",
            format!("%IOs {}", self.cgroup),
            pct(self.real()),
            pct(self.sim),
            diff,
            self.describe_tol(),
            self.spread_pts()
                .map(|p| format!("{p:.1}pt"))
                .unwrap_or("-".into()),
        );
        if self.real_runs.len() > 1 {
            let runs: Vec<String> = self.real_runs.iter().map(|x| format!("{x:.2}")).collect();
            let _ = writeln!(
                s,
                "{indent}     real runs' shares of {}: {} %",
                self.cgroup,
                runs.join(", ")
            );
        }
        s
    }

    /// One Markdown row: case | real (runs) | sim | diff | tolerance | verdict.
    pub fn markdown_row(&self, case: &str) -> String {
        let runs: Vec<String> = self.real_runs.iter().map(|x| format!("{x:.1}")).collect();
        let real = match self.real() {
            Some(r) => format!("{r:.1} ({})", runs.join(", ")),
            None => "—".into(),
        };
        let sim = self.sim.map(|s| format!("{s:.1}")).unwrap_or("—".into());
        let diff = self
            .diff_pts()
            .map(|d| format!("{d:+.1}"))
            .unwrap_or("—".into());
        let verdict = self.verdict();
        format!(
            "| {case} | {} | {real} | {sim} | {diff} | {} | {verdict} |",
            self.cgroup,
            self.describe_tol()
        )
    }
}

/// The Markdown table of the shares of `rows` ((case name, share)).
pub fn markdown(rows: &[(&str, &ShareResult)]) -> String {
    let mut s = String::new();
    if rows.is_empty() {
        return s;
    }
    let _ = writeln!(
        s,
        "\nGroup shares (percent of the case's I/Os; real: median (runs)):\n"
    );
    let _ = writeln!(
        s,
        "| case | group | real | sim | sim − real (points) | tolerance | verdict |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|---|");
    for (name, r) in rows {
        let _ = writeln!(s, "{}", r.markdown_row(name));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iops(x: f64) -> Metrics {
        let mut m = Metrics::default();
        m.0[Metric::Iops.index()] = x;
        m
    }

    #[test]
    fn share_adds_the_groups_jobs() {
        let g = ["/A", "/A", "/B"];
        assert_eq!(share_pct(&g, &[300.0, 500.0, 200.0], "/A"), 80.0);
        assert_eq!(share_pct(&g, &[300.0, 500.0, 200.0], "/B"), 20.0);
        assert!(share_pct(&g, &[0.0; 3], "/A").is_nan());
    }

    /// Per-run shares, their median and spread, and the verdict, with the
    /// 1-job bfq case's jobs (A0 in /A, B0 in /B).
    #[test]
    fn shares_per_run_median_spread_and_verdict() {
        let case = ["/A", "/B"];
        let check = ShareCheck {
            cgroup: "/A",
            host_tol_pts: Some(6.0),
            qemu_tol_pts: None,
        };
        let host = RealSide::Host;
        // runs: 90/10, 80/20, 85/15 -> shares 90, 80, 85
        let real = vec![
            vec![iops(900.0), iops(800.0), iops(850.0)],
            vec![iops(100.0), iops(200.0), iops(150.0)],
        ];
        let sim = [iops(8890.0), iops(1110.0)];
        let r = ShareResult::of(&case, check, host, Some(&real), Some(&sim));
        assert_eq!(r.real_runs, vec![90.0, 80.0, 85.0]);
        assert_eq!(r.real(), Some(85.0));
        assert_eq!(r.spread_pts(), Some(10.0));
        assert!((r.sim.unwrap() - 88.9).abs() < 1e-9);
        assert_eq!(r.within(), Some(true)); // 3.9 points
        assert!(r.complaint().is_none());
        let far = [iops(5000.0), iops(5000.0)];
        let r = ShareResult::of(&case, check, host, Some(&real), Some(&far));
        assert_eq!(r.within(), Some(false)); // 35 points
        let c = r.complaint().unwrap();
        assert!(c.contains("real 85.00%, sim 50.00% (-35.0 points, allowed ±6 points)"));
        // reported only (the same check in a QEMU guest): no verdict, no
        // complaint
        let r = ShareResult::of(&case, check, RealSide::Qemu, Some(&real), Some(&far));
        assert_eq!(r.within(), None);
        assert!(r.complaint().is_none());
        assert!(r.text("").contains("(reported)"));
        // no real side: no verdict
        let r = ShareResult::of(&case, check, host, None, Some(&sim));
        assert_eq!((r.real(), r.within()), (None, None));
    }

    #[test]
    fn exactly_at_the_tolerance_passes_just_beyond_fails() {
        let r = |sim: f64| ShareResult {
            cgroup: "/A".into(),
            real_runs: vec![88.0],
            sim: Some(sim),
            tol_pts: Some(5.0),
        };
        assert_eq!(r(93.0).within(), Some(true));
        assert_eq!(r(83.0).within(), Some(true));
        assert_eq!(r(93.01).within(), Some(false));
        assert_eq!(r(f64::NAN).within(), Some(false));
    }
}
