//! The second expression of `--sim-costs A,B`: the same case simulated with
//! fio's costs from source B, judged against the same real runs and
//! reported under the case (one note), so that two expressions are compared
//! on one set of guest probes and real runs.

use std::fmt::Write as _;

use crate::fio_costs::{fio_costs, CostSource, SimCosts};
use crate::loop_device::RawSpeed;
use crate::result::{CaseResult, JobResult};
use crate::sim::{self, SimChoices, SimDevice};

/// The note for `r` (the judged result) simulated with `src`'s costs on
/// `dev`: its verdict on the judged metrics and the share (the iocost
/// period is not judged again), and each job's IOPS and slat.
pub fn note(r: &CaseResult, dev: &SimDevice, raw: &RawSpeed, src: CostSource) -> String {
    let head = match fio_costs(raw, src) {
        Ok(c) => format!("with --sim-costs {} ({c})", src.name()),
        Err(e) => return format!("with --sim-costs {}: {e}", src.name()),
    };
    let other = SimDevice {
        sim: SimChoices {
            costs: SimCosts {
                judged: src,
                also: None,
            },
            ..dev.sim
        },
        ..dev.clone()
    };
    let out = match sim::run(&r.case, &other, raw, r.runtime_s) {
        Ok(o) => o,
        Err(e) => return format!("{head}: simulator: {e}"),
    };
    let jobs: Vec<JobResult> = r
        .jobs
        .iter()
        .zip(&out.jobs)
        .map(|(j, m)| JobResult {
            sim: Some(*m),
            ..j.clone()
        })
        .collect();
    let mut bad = crate::judge(&r.case, &jobs);
    let share = r.share.clone().map(|mut s| {
        let groups: Vec<&str> = r.case.jobs.iter().map(|j| j.cgroup.as_str()).collect();
        let iops: Vec<f64> = out.jobs.iter().map(|m| m.0[0]).collect();
        s.sim = Some(crate::share::share_pct(&groups, &iops, &s.cgroup));
        s
    });
    bad.extend(share.as_ref().and_then(|s| s.complaint()));
    let mut s = head;
    let judged = r.jobs.iter().any(|j| j.real.is_some());
    if judged {
        s += if bad.is_empty() { ": PASS" } else { ": FAIL" };
    }
    s += "; sim";
    for j in &jobs {
        if let Some(m) = &j.sim {
            let _ = write!(s, " {} {:.0} IOPS slat {:.1} µs,", j.label, m.0[0], m.0[2]);
        }
    }
    s.pop();
    if let Some(p) = share.as_ref().and_then(|s| s.sim) {
        let _ = write!(s, "; share {:.1} %", p);
    }
    if !bad.is_empty() {
        let _ = write!(s, " ({})", bad.join("; "));
    }
    s
}
