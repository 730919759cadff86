//! Whether the device itself changed between calibrating and validating.
//!
//! A validation compares the model with the device as it is at validation
//! time. On a loaded host a CPU-bound device (a loop over tmpfs) moved 2–4×
//! within a minute (QD1: 5 334 IOPS while measuring, 12 121 while
//! validating), and then no model fitted to the measurement can pass, good
//! or bad. So before each validation job the same cheap reference job runs
//! again (4 KiB random reads at QD1 for a second, the shape of the
//! measurement's `lat-randread-4k-qd1`), and its IOPS and clat mean are
//! compared with the measurement's: beyond the validation's tolerance the
//! job's row says the device changed, so that a miss there is read as a
//! drifting device rather than a bad model.

use crate::fio_run::FioResult;
use crate::plan::{self, Job};
use crate::validate::TOLERANCE;

/// The reference job's runtime, s: enough for tens of thousands of QD1 I/Os
/// on a fast device, a few hundred on a slow one.
const REF_RUNTIME_S: u32 = 1;

/// The reference job (the measurement's QD1 4 KiB random read, shorter).
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

/// The device at one validation job against the device at calibration.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceCheck {
    /// The validation job it was taken before.
    pub job: String,
    /// The reference's IOPS and clat mean (ns) at calibration and now.
    pub then_iops: f64,
    pub now_iops: f64,
    pub then_mean_ns: f64,
    pub now_mean_ns: f64,
}

fn rel(now: f64, then: f64) -> f64 {
    if then > 0.0 {
        now / then - 1.0
    } else {
        f64::INFINITY
    }
}

impl DeviceCheck {
    /// `then` is the measurement's QD1 4 KiB random read, `now` the
    /// reference job run just before validation job `job`.
    pub fn new(job: &str, then: &FioResult, now: &FioResult) -> DeviceCheck {
        let (t, n) = (then.main(), now.main());
        DeviceCheck {
            job: job.to_string(),
            then_iops: t.iops,
            now_iops: n.iops,
            then_mean_ns: t.clat_mean_ns,
            now_mean_ns: n.clat_mean_ns,
        }
    }

    /// Whether the device moved by more than the validation's tolerance
    /// (IOPS or clat mean).
    pub fn changed(&self) -> bool {
        rel(self.now_iops, self.then_iops).abs() > TOLERANCE
            || rel(self.now_mean_ns, self.then_mean_ns).abs() > TOLERANCE
    }

    /// The table's line for it.
    pub fn line(&self) -> String {
        format!(
            "device now (QD1 4k read, before this job): {:.0} IOPS ({:+.1}% since calibration), clat mean {:.1}µs ({:+.1}%): {}",
            self.now_iops,
            rel(self.now_iops, self.then_iops) * 100.0,
            self.now_mean_ns / 1e3,
            rel(self.now_mean_ns, self.then_mean_ns) * 100.0,
            if self.changed() {
                format!(
                    "CHANGED by more than {:.0} %: this job's figures compare the model with another device",
                    TOLERANCE * 100.0
                )
            } else {
                "steady".to_string()
            }
        )
    }
}

/// The summary under the table when some missed figure is in a job whose
/// device changed; None otherwise.
pub fn summary(rows: &[crate::validate::Row], checks: &[DeviceCheck]) -> Option<String> {
    let changed = |job: &str| checks.iter().any(|c| c.job == job && c.changed());
    let missed: Vec<_> = rows.iter().filter(|r| !r.pass()).collect();
    let drifted = missed.iter().filter(|r| changed(&r.job)).count();
    (drifted > 0).then(|| {
        format!(
            "# {drifted} of the {} missed figures are in jobs where the device itself changed by more than {:.0} % since calibration (a drifting device, e.g. a loaded host: re-run on a quiet one); {} are not",
            missed.len(),
            TOLERANCE * 100.0,
            missed.len() - drifted
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

    /// The live tmpfs run of the stop note: 5 334 IOPS / 176 µs measuring,
    /// 12 121 / 72 µs validating.
    #[test]
    fn the_live_runs_drift_is_called_a_change_and_a_steady_device_is_not() {
        let c = DeviceCheck::new(
            "val-randread-4k-qd32",
            &qd1(5334.0, 176.0),
            &qd1(12121.0, 72.0),
        );
        assert!(c.changed());
        let l = c.line();
        assert!(
            l.contains("12121 IOPS (+127.2% since calibration)")
                && l.contains("clat mean 72.0µs (-59.1%)")
                && l.contains("CHANGED by more than 15 %"),
            "{l}"
        );
        // within the tolerance both ways: steady
        let s = DeviceCheck::new("j", &qd1(33442.0, 18.5), &qd1(30000.0, 20.5));
        assert!(!s.changed(), "{}", s.line());
        assert!(s.line().ends_with("steady"));
        // the mean alone moving is a change too
        assert!(DeviceCheck::new("j", &qd1(1000.0, 10.0), &qd1(1000.0, 12.0)).changed());
        // the reference job is a fio job the simulator parses too
        let args = blklab_fio::split_cmdline(&reference_job().args).unwrap();
        assert_eq!(blklab_fio::parse_cmdline(&args).unwrap().len(), 1);
    }
}
