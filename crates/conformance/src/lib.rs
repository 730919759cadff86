//! `blklab conformance`: the same scenario on the real kernel and in the
//! simulator, side by side.
//!
//! For each case the harness builds the real thing on this host (loop devices
//! on tmpfs, the stacked capped disk, cgroups with the case's strings), runs
//! real fio in the groups (`--repeat` times, medians), runs the same scenario
//! in the simulator, and prints both with the relative difference per metric
//! and a verdict against the case's tolerances. Cases the host cannot run
//! (e.g. blk-iocost without the v2 io controller) are marked "not runnable
//! here" with the exact reason, and still show the simulator's figures.

pub mod cases;
pub mod env;
pub mod fio_costs;
pub mod guest_costs;
pub mod host;
pub mod host_load;
pub mod loop_device;
pub mod metrics;
pub mod other_costs;
pub mod probe_cpu;
pub mod proc_stat;
pub mod qos_loop;
pub mod quiet_kworkers;
pub mod render;
pub mod result;
pub mod sched_cost;
pub mod share;
pub mod sim;
pub mod sim_request;
pub mod vm;

use blklab_host::resources::Resources;
use cases::Case;
use env::HostEnv;
use host::{HostError, RealRuns};
use loop_device::RawSpeed;
use metrics::{Metrics, METRICS};
pub use result::{CaseResult, JobResult, Options, RealSide, Status};
use sim::SimDevice;

/// Exit statuses of `blklab conformance`.
pub mod exit {
    /// Every selected case ran and met its tolerances.
    pub const OK: u8 = 0;
    /// An error in the harness itself (bad arguments, a failed setup step).
    pub const ERROR: u8 = 1;
    /// Some case ran and missed a tolerance.
    pub const MISMATCH: u8 = 3;
    /// The host cannot run any case (not root, no fio, no loop, no io controller).
    pub const HOST_UNSUITABLE: u8 = 4;
    /// Nothing failed, but some selected cases are not runnable on this host
    /// (or could not be judged: the host stalled in every real run).
    pub const NOT_RUNNABLE: u8 = 5;
    /// Interrupted by a signal: 128 + the signal number (130 for SIGINT).
    pub const INTERRUPTED_BASE: u8 = 128;
}

/// Judge a case's jobs against its tolerances: the metrics out of tolerance.
pub fn judge(case: &Case, jobs: &[JobResult]) -> Vec<String> {
    let mut bad = Vec::new();
    for j in jobs {
        let (Some(r), Some(s)) = (&j.real, &j.sim) else {
            continue;
        };
        for m in METRICS {
            if let Some(t) = case.tol(m) {
                if !t.allows(r.get(m), s.get(m)) {
                    bad.push(format!(
                        "{} {}: real {:.2}, sim {:.2} ({:+.1}%, allowed {})",
                        j.label,
                        m.name(),
                        r.get(m),
                        s.get(m),
                        metrics::rel_diff(r.get(m), s.get(m)) * 100.0,
                        t.describe(m)
                    ));
                }
            }
        }
    }
    bad
}

/// Run one case on this host (real side unless `sim_only`, then the
/// simulator with `switches`, the host kernel's profile).
pub fn run_case(
    case: &Case,
    idx: usize,
    env: &HostEnv,
    opts: &Options,
    raw: &mut Option<RawSpeed>,
    switches: &[(String, String)],
) -> Result<CaseResult, HostError> {
    let mut res = Resources::new();
    let real = if opts.sim_only {
        Err(HostError::NotRunnable(String::new()))
    } else {
        host::run(case, env, idx, opts.repeat, opts.quick, raw, &mut res)
    };
    // Remove the real objects before simulating (and before returning on a signal).
    res.release();
    let mut notes: Vec<String> = res
        .problems
        .iter()
        .map(|p| format!("cleanup: {p}"))
        .collect();
    let choices = opts.sim.for_host_case(case, host_load::nr_cpus());
    if choices != opts.sim {
        notes.push(format!(
            "{} for this case: bfq's split turns on how the CPUs are shared (`--sim-cpus` / `--sim-loop` choose it for every case)",
            choices.describe()
        ));
    }
    if let Err(HostError::Interrupted) = real {
        return Err(HostError::Interrupted);
    }
    let dev = match &real {
        Ok(r) => SimDevice {
            name: r.device.name.clone(),
            devno: r.device.devno.clone(),
            rotational: false,
            switches: switches.to_vec(),
            hz: sim::DEFAULT_HZ,
            sim: choices,
        },
        Err(_) => SimDevice {
            sim: choices,
            ..SimDevice::placeholder(switches)
        },
    };
    Ok(conclude(
        case,
        real,
        &dev,
        raw.unwrap_or_default(),
        opts,
        notes,
    ))
}

/// The simulator's side of a case and the verdict, given what the real
/// kernel produced (`real`) and the device and kernel the simulator stands
/// in for. `notes` come first among the result's notes, after the real
/// side's own.
pub fn conclude(
    case: &Case,
    real: Result<RealRuns, HostError>,
    dev: &SimDevice,
    raw: RawSpeed,
    opts: &Options,
    mut notes: Vec<String>,
) -> CaseResult {
    let runtime = case.runtime(opts.quick);
    let (status0, real_runs) = match real {
        Ok(r) => (None, Some(r)),
        Err(HostError::NotRunnable(_)) if opts.sim_only => (Some(Status::SimOnly), None),
        Err(HostError::NotRunnable(why)) => (Some(Status::NotRunnable(why)), None),
        Err(HostError::Failed(e)) => (Some(Status::Error(e)), None),
        Err(HostError::Interrupted) => (Some(Status::Error("interrupted".into())), None),
    };
    let sim = sim::run(case, dev, &raw, runtime);
    let mut jobs = Vec::new();
    for (i, j) in case.jobs.iter().enumerate() {
        let runs = real_runs
            .as_ref()
            .map(|r| r.runs[i].clone())
            .unwrap_or_default();
        jobs.push(JobResult {
            label: j.label.clone(),
            real: (!runs.is_empty()).then(|| Metrics::median(&runs)),
            spread: (!runs.is_empty()).then(|| Metrics::spread(&runs)),
            runs: runs.len(),
            sim: sim.as_ref().ok().map(|v| v.jobs[i]),
        });
    }
    let groups: Vec<&str> = case.jobs.iter().map(|j| j.cgroup.as_str()).collect();
    let share = cases::share_check(case).map(|check| {
        share::ShareResult::of(
            &groups,
            check,
            opts.real_side,
            real_runs.as_ref().map(|r| r.runs.as_slice()),
            sim.as_ref().ok().map(|s| s.jobs.as_slice()),
        )
    });
    if let Some(r) = &real_runs {
        notes.splice(0..0, r.notes.iter().cloned());
        notes.extend(r.io_stat.iter().cloned());
    }
    if let Ok(s) = &sim {
        notes.extend(sim_io_stat_notes(case, &s.io_stat));
    }
    let qos = case.trace_qos.then(|| {
        let mut side =
            |x: Option<&Result<Vec<qos_loop::VrateAdj>, String>>, runs: usize, who: &str| match x {
                Some(Ok(ev)) => Some(qos_loop::Summary::of(
                    ev,
                    (runtime as usize * runs.max(1)) as f64,
                )),
                Some(Err(e)) => {
                    notes.push(format!("QoS loop, {who}: {e}"));
                    None
                }
                None => None,
            };
        let real_qos = real_runs.as_ref().and_then(|r| r.qos.as_ref());
        let reps = jobs.first().map(|j| j.runs).unwrap_or(0);
        let real = side(real_qos, reps, "real kernel");
        let sim_qos = sim.as_ref().ok().and_then(|s| s.qos.as_ref());
        let sim = side(sim_qos, 1, "simulator");
        qos_loop::QosLoop { real, sim }
    });
    let status = match (status0, &sim) {
        (_, Err(e)) => Status::Error(format!("simulator: {e}")),
        (Some(s), _) => s,
        (None, Ok(_)) => {
            let mut bad = judge(case, &jobs);
            bad.extend(share.as_ref().and_then(share::ShareResult::complaint));
            bad.extend(period_complaint(case, qos.as_ref()));
            let stalled = real_runs.as_ref().and_then(|r| r.stalled.clone());
            match (bad.is_empty(), stalled) {
                (true, _) => Status::Pass,
                (false, None) => Status::Fail(bad),
                (false, Some(why)) => Status::HostStalled { why, bad },
            }
        }
    };
    CaseResult {
        case: case.clone(),
        status,
        device: real_runs.as_ref().map(|r| {
            let d = &r.device;
            match &d.lower {
                Some((l, ln)) => format!(
                    "{} ({}) on {} ({})",
                    d.path.display(),
                    d.devno,
                    l.display(),
                    ln
                ),
                None => format!("{} ({})", d.path.display(), d.devno),
            }
        }),
        jobs,
        notes,
        runtime_s: runtime,
        raw,
        qos,
        share,
        stalled: real_runs.as_ref().and_then(|r| r.stalled.clone()),
    }
}

/// The period check of a case that judges it: both sides' period and the
/// tolerance, or why it could not be judged.
fn period_complaint(case: &Case, qos: Option<&qos_loop::QosLoop>) -> Option<String> {
    let tol = case.period_tol_ms?;
    let (real, sim) = match qos {
        Some(q) => (
            q.real.as_ref().map(|s| s.period_ms),
            q.sim.as_ref().map(|s| s.period_ms),
        ),
        None => (None, None),
    };
    match (real, sim) {
        (Some(r), Some(s)) if (s - r).abs() <= tol => None,
        (Some(r), Some(s)) if r.is_finite() && s.is_finite() => Some(format!(
            "iocost period: real {r:.2} ms, simulator {s:.2} ms (tolerance {tol} ms)"
        )),
        _ => Some(format!(
            "iocost period: not measured on both sides (real {real:?}, simulator {sim:?} ms)"
        )),
    }
}

/// The simulator's io.stat of the case's groups, for cases that have real
/// io.stat lines beside them (blk-iolatency's fields are what they show).
fn sim_io_stat_notes(case: &Case, io_stat: &[(String, String)]) -> Vec<String> {
    if !case.name.starts_with("iolatency") {
        return Vec::new();
    }
    case.groups
        .iter()
        .filter_map(|(g, _)| {
            let (_, s) = io_stat.iter().find(|(p, _)| p == g)?;
            Some(format!(
                "simulator io.stat {g} at the end: {}",
                s.trim().replace('\n', " | ")
            ))
        })
        .collect()
}

/// The exit status for a set of results.
pub fn exit_status(results: &[CaseResult]) -> u8 {
    if results.iter().any(|r| matches!(r.status, Status::Fail(_))) {
        exit::MISMATCH
    } else if results.iter().any(|r| matches!(r.status, Status::Error(_))) {
        exit::ERROR
    } else if results.iter().any(|r| {
        matches!(
            r.status,
            Status::NotRunnable(_) | Status::HostStalled { .. }
        )
    }) {
        exit::NOT_RUNNABLE
    } else {
        exit::OK
    }
}

/// Run the cases, calling `each` with every result as it completes.
/// `Err(signal)` when interrupted (everything created is already removed).
pub fn run_all(
    cases: &[Case],
    env: &HostEnv,
    opts: &Options,
    raw: &mut Option<RawSpeed>,
    switches: &[(String, String)],
    mut each: impl FnMut(&CaseResult),
) -> Result<Vec<CaseResult>, i32> {
    let mut out = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        match run_case(c, i, env, opts, raw, switches) {
            Ok(r) => {
                each(&r);
                out.push(r);
            }
            Err(_) => return Err(blklab_host::resources::signal()),
        }
        if blklab_host::resources::interrupted() {
            return Err(blklab_host::resources::signal());
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every bfq case has a share check of /A; judged on the host for the
    /// 4-jobs shape only, in QEMU for all but 1j-qd32; other cases none.
    #[test]
    fn the_bfq_cases_carry_a_share_check() {
        let all = cases::all();
        let bfq: Vec<_> = all
            .iter()
            .filter(|c| c.need == cases::Need::Bfq && c.scheduler.name == "bfq")
            .collect();
        assert_eq!(bfq.len(), 3);
        for c in &bfq {
            let chk = cases::share_check(c).expect("a bfq case has a share check");
            assert_eq!(chk.cgroup, "/A");
            assert_eq!(
                chk.tol_pts(RealSide::Qemu).is_some(),
                c.name != "bfq-800-100-1j-qd32",
                "{}",
                c.name
            );
            assert_eq!(
                chk.tol_pts(RealSide::Host).is_some(),
                c.name == "bfq-800-100-4j-qd8",
                "{}",
                c.name
            );
        }
        assert!(all
            .iter()
            .filter(|c| c.need != cases::Need::Bfq || c.scheduler.name != "bfq")
            .all(|c| cases::share_check(c).is_none()));
    }
}
