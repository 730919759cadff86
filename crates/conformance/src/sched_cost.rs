//! A scheduler's cost in throughput, across two cases: a case and its twin
//! without a scheduler (`cases::NO_SCHED_TWIN`), run in the same
//! invocation. The line compares the two totals (all jobs' IOPS added) on
//! each side: bfq's per-request work under its lock and its one-queue-at-a-
//! time service cost throughput that `none` does not pay
//! (Documentation/block/bfq-iosched.rst; docs/fidelity/bfq.md).

use crate::cases::NO_SCHED_TWIN;
use crate::metrics::{Metric, Metrics};
use crate::result::CaseResult;

/// The total IOPS of a case's jobs on one side (None when a job lacks it).
fn total(r: &CaseResult, side: fn(&crate::result::JobResult) -> Option<Metrics>) -> Option<f64> {
    r.jobs
        .iter()
        .map(|j| side(j).map(|m| m.get(Metric::Iops)))
        .sum()
}

/// One line per case whose twin without a scheduler is among `results`:
/// the ratio of the totals (with / without), real and simulated.
pub fn lines(results: &[CaseResult]) -> Vec<String> {
    let mut out = Vec::new();
    for r in results {
        let twin_name = format!("{}{NO_SCHED_TWIN}", r.case.name);
        let Some(t) = results.iter().find(|t| t.case.name == twin_name) else {
            continue;
        };
        let side = |name: &str, get: fn(&crate::result::JobResult) -> Option<Metrics>| match (
            total(r, get),
            total(t, get),
        ) {
            (Some(w), Some(wo)) if wo > 0.0 => {
                format!("{name} {:.2} ({w:.0} / {wo:.0})", w / wo)
            }
            _ => format!("{name} -"),
        };
        out.push(format!(
            "{}: total IOPS under {} / without a scheduler ({twin_name}): {}, {}",
            r.case.name,
            r.case.scheduler.name,
            side("real", |j| j.real),
            side("sim", |j| j.sim)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cases;
    use crate::loop_device::RawSpeed;
    use crate::result::{JobResult, Status};

    fn result(name: &str, iops: &[(f64, f64)]) -> CaseResult {
        let case = cases::all().into_iter().find(|c| c.name == name).unwrap();
        let m = |x: f64| {
            let mut v = [0.0; 8];
            v[0] = x;
            Metrics(v)
        };
        CaseResult {
            case,
            status: Status::Pass,
            jobs: iops
                .iter()
                .map(|&(real, sim)| JobResult {
                    label: "j".into(),
                    real: Some(m(real)),
                    spread: None,
                    runs: 1,
                    sim: Some(m(sim)),
                })
                .collect(),
            device: None,
            notes: vec![],
            runtime_s: 5,
            raw: RawSpeed::default(),
            qos: None,
            share: None,
            stalled: None,
        }
    }

    #[test]
    fn a_case_and_its_twin_give_the_ratio_of_their_totals() {
        let bfq = result(
            "bfq-800-100-4j-qd8",
            &[(30_000.0, 40_000.0), (5_000.0, 10_000.0)],
        );
        let none = result(
            "bfq-800-100-4j-qd8-none",
            &[(35_000.0, 50_000.0), (35_000.0, 50_000.0)],
        );
        assert_eq!(
            lines(&[bfq.clone(), none]),
            ["bfq-800-100-4j-qd8: total IOPS under bfq / without a scheduler (bfq-800-100-4j-qd8-none): real 0.50 (35000 / 70000), sim 0.50 (50000 / 100000)"]
        );
        // alone, no line
        assert!(lines(&[bfq]).is_empty());
    }
}
