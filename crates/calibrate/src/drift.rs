//! Whether the device itself changed between calibrating and validating.
//!
//! A validation compares the model with the device as it is at validation
//! time. On a loaded host a CPU-bound device (a loop over tmpfs) moved 2–4×
//! within a minute (QD1: 5 334 IOPS while measuring, 12 121 while
//! validating), and then no model fitted to the measurement can pass, good
//! or bad. So the device is looked at twice with the shape of the
//! measurement's `lat-randread-4k-qd1` (4 KiB random reads at QD1): at the
//! start of the validation by its own QD1 job (the same shape, no extra
//! run) and at its end by a one-second reference job. Each look's IOPS and
//! clat mean are compared with the measurement's; beyond the validation's
//! tolerance every missed row says the device changed, so that a miss is
//! read as a drifting device rather than a bad model. (A look before every
//! job would cost --quick its two-minute budget: each fio run adds its
//! runtime and a second.)

use crate::fio_run::FioResult;
use crate::plan::{self, Job};
use crate::validate::{rel_diff, Row, TOLERANCE};

/// The reference job's runtime, s: enough for tens of thousands of QD1 I/Os
/// on a fast device, a few hundred on a slow one.
const REF_RUNTIME_S: u32 = 1;

/// The validation job that is itself a look at the device (the first).
pub const START_JOB: &str = "val-randread-4k-qd1";

/// The reference job (the measurement's QD1 4 KiB random read, shorter),
/// run after the last validation job.
pub fn reference_job() -> Job {
    let id = "ref-randread-4k-qd1";
    Job {
        id: id.to_string(),
        what: "the device now: 4 KiB random read QD1 (against the measurement's)".to_string(),
        args: plan::job_args(id, "randread", "4k", 1, REF_RUNTIME_S, ""),
        runtime_s: REF_RUNTIME_S,
        writes: false,
    }
}

/// The device at one look against the device at calibration.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceCheck {
    /// When it was taken ("start", "end").
    pub when: &'static str,
    /// The reference's IOPS and clat mean (ns) at calibration and now.
    pub then_iops: f64,
    pub now_iops: f64,
    pub then_mean_ns: f64,
    pub now_mean_ns: f64,
}

impl DeviceCheck {
    /// `then` is the measurement's QD1 4 KiB random read, `now` the look
    /// taken `when`.
    pub fn new(when: &'static str, then: &FioResult, now: &FioResult) -> DeviceCheck {
        let (t, n) = (then.main(), now.main());
        DeviceCheck {
            when,
            then_iops: t.iops,
            now_iops: n.iops,
            then_mean_ns: t.clat_mean_ns,
            now_mean_ns: n.clat_mean_ns,
        }
    }

    /// Whether the device moved by more than the validation's tolerance
    /// (IOPS or clat mean).
    pub fn changed(&self) -> bool {
        rel_diff(self.now_iops, self.then_iops).abs() > TOLERANCE
            || rel_diff(self.now_mean_ns, self.then_mean_ns).abs() > TOLERANCE
    }

    /// The table's line for it.
    pub fn line(&self) -> String {
        format!(
            "# the device at the {} of validation (QD1 4k random read): {:.0} IOPS ({:+.1}% since calibration), clat mean {:.1}µs ({:+.1}%): {}",
            self.when,
            self.now_iops,
            rel_diff(self.now_iops, self.then_iops) * 100.0,
            self.now_mean_ns / 1e3,
            rel_diff(self.now_mean_ns, self.then_mean_ns) * 100.0,
            if self.changed() {
                format!(
                    "CHANGED by more than {:.0} %: the validation compares the model with another device",
                    TOLERANCE * 100.0
                )
            } else {
                "steady".to_string()
            }
        )
    }
}

/// Whether any look found the device changed.
pub fn any_changed(checks: &[DeviceCheck]) -> bool {
    checks.iter().any(DeviceCheck::changed)
}

/// The validation table with the looks at the device under it, a miss
/// saying so when the device changed.
pub fn table(rows: &[Row], checks: &[DeviceCheck]) -> String {
    let mut s = crate::validate::table(rows, any_changed(checks));
    for c in checks {
        s.push_str(&c.line());
        s.push('\n');
    }
    s
}

/// The summary under the table when figures missed while the device had
/// changed; None otherwise.
pub fn summary(rows: &[Row], checks: &[DeviceCheck]) -> Option<String> {
    let missed = rows.iter().filter(|r| !r.pass()).count();
    (missed > 0 && any_changed(checks)).then(|| {
        format!(
            "# {missed} figures missed while the device itself had changed by more than {:.0} % since calibration: a drifting device (e.g. a loaded host), not necessarily a bad model; re-run on a quiet host",
            TOLERANCE * 100.0,
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fio_run::DirFigures;

    fn qd1(iops: f64, mean_us: f64) -> FioResult {
        FioResult {
            read: DirFigures {
                iops,
                clat_mean_ns: mean_us * 1e3,
                ..DirFigures::default()
            },
            ..FioResult::default()
        }
    }

    /// The quick plan, its validation and the look at the device together fit `--quick`'s two
    /// minutes, and the validation jobs are fio options the simulator runs.
    #[test]
    fn quick_plan_and_validation_fit_in_two_minutes() {
        let p = crate::plan::plan(true, 256 << 20, true);
        let v = crate::validate::jobs(true, true);
        // and the look at the device after them (drift)
        let total = crate::plan::budget_s(&p)
            + crate::plan::budget_s(&v)
            + crate::plan::budget_s(&[reference_job()]);
        assert!(total <= 90, "quick plan + validation: {total} s");
        // with the preconditioning of the largest --quick span at its slow rate
        let span = crate::plan::span_bytes(true, 1 << 40);
        let pre = crate::plan::budget_s(&[crate::plan::precondition(span)]);
        assert!(
            total + pre <= 120,
            "quick plan + preconditioning: {} s",
            total + pre
        );
        for j in &v {
            let args = blklab_fio::split_cmdline(&j.args).unwrap();
            assert_eq!(
                blklab_fio::parse_cmdline(&args).unwrap().len(),
                1,
                "{}",
                j.args
            );
        }
    }
    /// The live tmpfs run of the stop note: 5 334 IOPS / 176 µs measuring,
    /// 12 121 / 72 µs validating.
    #[test]
    fn the_live_runs_drift_is_called_a_change_and_a_steady_device_is_not() {
        let c = DeviceCheck::new("end", &qd1(5334.0, 176.0), &qd1(12121.0, 72.0));
        assert!(c.changed());
        let l = c.line();
        assert!(
            l.contains("12121 IOPS (+127.2% since calibration)")
                && l.contains("clat mean 72.0µs (-59.1%)")
                && l.contains("at the end of validation")
                && l.contains("CHANGED by more than 15 %"),
            "{l}"
        );
        // within the tolerance both ways: steady
        let s = DeviceCheck::new("start", &qd1(33442.0, 18.5), &qd1(30000.0, 20.5));
        assert!(!s.changed(), "{}", s.line());
        assert!(s.line().ends_with("steady"));
        // the mean alone moving is a change too
        assert!(DeviceCheck::new("start", &qd1(1000.0, 10.0), &qd1(1000.0, 12.0)).changed());
        // under the table: a miss says the device changed, each look its line
        let row = |real: f64, sim: f64| Row {
            job: "j".into(),
            metric: "IOPS",
            real,
            sim,
            is_latency: false,
        };
        let rows = [row(1000.0, 1300.0), row(1000.0, 1000.0)];
        let t = table(&rows, &[s.clone(), c.clone()]);
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[1].ends_with("MISS (device changed)"), "{t}");
        assert!(lines[2].ends_with("PASS"), "{t}");
        assert!(
            lines[3].contains("at the start") && lines[3].ends_with("steady"),
            "{t}"
        );
        assert!(
            lines[4].contains("at the end") && lines[4].contains("CHANGED"),
            "{t}"
        );
        let sum = summary(&rows, &[c]).unwrap();
        assert!(
            sum.contains("1 figures missed while the device itself had changed"),
            "{sum}"
        );
        assert!(summary(&rows, &[s.clone()]).is_none());
        assert!(!table(&rows, &[s]).contains("device changed"));
        // the reference job is a fio job the simulator parses too
        let args = blklab_fio::split_cmdline(&reference_job().args).unwrap();
        assert_eq!(blklab_fio::parse_cmdline(&args).unwrap().len(), 1);
    }
}
