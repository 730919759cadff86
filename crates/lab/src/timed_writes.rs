//! A scenario's `[[write]]` entries, checked one by one before the run: a
//! time within the run, a declared cgroup, a file the cgroup has, and a
//! value its kernel handler accepts (`kfiles::check`). The writes taken
//! together are checked by `Sim::check_writes`, which applies them in run
//! order.

use std::ops::Range;

use blklab_core::block::blk_cgroup::{CgId, CgroupTree};
use blklab_core::sim::time::{parse_duration, Ns, NSEC_PER_SEC};
use blklab_core::{DeviceConfig, JobConfig};
use toml::Spanned;

use crate::kfiles::CGROUP_FILES;

/// The latest instant the run can end: `run.duration`, or the latest
/// start delay + ramp + runtime when every job has a runtime. None when a
/// job may run until its size is done.
pub fn latest_end(time_limit: Option<Ns>, jobs: &[JobConfig]) -> Option<Ns> {
    let by_jobs = jobs
        .iter()
        .map(|j| {
            let s = &j.spec;
            s.runtime_ns.map(|r| {
                s.startdelay_ns
                    .1
                    .max(s.startdelay_ns.0)
                    .saturating_add(s.ramp_time_ns)
                    .saturating_add(r)
            })
        })
        .try_fold(0, |m: Ns, e| e.map(|e| m.max(e)));
    match (time_limit, by_jobs) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Check one `[[write]]` (`at`, `cgroup`, `file`, `value`): its instant and
/// cgroup, or the span and message of its first problem.
pub fn check(
    [at, cgroup, file, value]: [&Spanned<String>; 4],
    devices: &[DeviceConfig],
    cgroups: &CgroupTree,
    run_end: Option<Ns>,
) -> Result<(Ns, CgId), (Range<usize>, String)> {
    let at_ns = parse_duration(at.get_ref(), NSEC_PER_SEC)
        .and_then(|v| crate::limits::duration("write.at", v))
        .map_err(|e| (at.span(), format!("write.at: {e}")))?;
    if let Some(end) = run_end {
        if at_ns > end {
            return Err((
                at.span(),
                format!(
                    "write.at = {}: the run ends by {:.3}s (run.duration or the jobs' runtime), so this write would never happen",
                    blklab_input::excerpt(at.get_ref()),
                    end as f64 / NSEC_PER_SEC as f64
                ),
            ));
        }
    }
    let f = file.get_ref();
    if !CGROUP_FILES.iter().any(|(n, _)| n == f) {
        let known: Vec<&str> = CGROUP_FILES.iter().map(|x| x.0).collect();
        return Err((
            file.span(),
            format!(
                "unknown cgroup file '{}' (known: {})",
                blklab_input::excerpt(f),
                known.join(", ")
            ),
        ));
    }
    let path = crate::limits::cgroup_path(cgroup.get_ref())
        .map_err(|e| (cgroup.span(), format!("write.cgroup: {e}")))?;
    let cg = cgroups.find(&path).ok_or_else(|| {
        (
            cgroup.span(),
            format!(
                "write.cgroup: no cgroup {path} in this scenario (declare it with [cgroup.\"{path}\"] or run a [[job]] in it)"
            ),
        )
    })?;
    if (f == "io.cost.model" || f == "io.cost.qos") && cg != 0 {
        return Err((
            file.span(),
            format!("{f} exists only in the root cgroup (\"/\")"),
        ));
    }
    crate::kfiles::check(f, value.get_ref(), devices, cg == 0).map_err(|e| {
        (
            value.span(),
            format!(
                "write to {}{}{f}: \"{}\": {}",
                path,
                if cg == 0 { "" } else { "/" },
                blklab_input::excerpt(value.get_ref()),
                e.for_file(f)
            ),
        )
    })?;
    Ok((at_ns, cg))
}
