//! A scenario's run phases (`[[phase]]`, docs/scenario.md "Phases"):
//! back-to-back fio runs on one simulated machine, so that a warm-up's
//! controller state (iocost's vrate, blk-throttle's groups, the page
//! cache) carries into the measured phase, as on a real host. The machine
//! side is `blklab_core::machine::phases`; this file reads and checks the
//! scenario's side: the phases, which phase each `[[job]]` and `[[write]]`
//! belongs to, and how each phase's results are labelled and reported.

use std::ops::Range;

use blklab_core::block::blk_cgroup::CgroupTree;
use blklab_core::sim::engine::JobId;
use blklab_core::sim::time::{parse_duration, Ns, NSEC_PER_SEC};
use blklab_core::{DeviceConfig, JobConfig, PhaseSpec, SimConfig, TimedWrite};
use serde::Deserialize;
use toml::Spanned;

/// A `[[phase]]` entry as written.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawPhase {
    name: Spanned<String>,
    /// Idle time before the phase starts, after the previous phase's jobs
    /// have all ended ("1s"); not allowed on the first phase.
    gap: Option<Spanned<String>>,
}

/// A checked phase: what the machine runs (name, gap, jobs, writes) and
/// where it came from in the scenario file.
#[derive(Debug, Clone)]
pub struct Phase {
    pub spec: PhaseSpec,
    /// Indices into `Scenario::invocations` (the phase's `[[job]]` entries).
    pub invocations: Vec<usize>,
    /// Where each of `spec.writes` is in the scenario file (its value).
    pub write_spans: Vec<Range<usize>>,
}

/// A problem, at a place of the scenario file when it has one.
pub(crate) type Problem = (Option<Range<usize>>, String);

/// One `[[job]]` as the phases see it: its `phase` key and, when the job
/// was accepted, its invocation.
pub(crate) struct JobRef<'a> {
    pub phase: Option<&'a Spanned<String>>,
    pub invocation: Option<usize>,
}

/// One `[[write]]`'s fields (at, cgroup, file, value) and its `phase` key.
pub(crate) struct WriteRef<'a> {
    pub fields: [&'a Spanned<String>; 4],
    pub phase: Option<&'a Spanned<String>>,
}

/// Check the phases and place each job and write in its phase. A scenario
/// with no `[[phase]]` has none (and no job or write may name one).
pub(crate) fn resolve(
    raw: &[RawPhase],
    jobs: &[JobRef],
    invocation_jobs: &[Vec<usize>],
    writes: &[WriteRef],
    ctx: (&[DeviceConfig], &CgroupTree, &[JobConfig]),
) -> Result<Vec<Phase>, Vec<Problem>> {
    let mut errs: Vec<Problem> = Vec::new();
    if raw.is_empty() {
        for (i, j) in jobs.iter().enumerate() {
            if let Some(p) = j.phase {
                errs.push(no_such_phase(p, &format!("[[job]] #{}", i + 1), &[]));
            }
        }
        for w in writes {
            if let Some(p) = w.phase {
                errs.push(no_such_phase(p, "[[write]]", &[]));
            }
        }
        return if errs.is_empty() {
            Ok(Vec::new())
        } else {
            Err(errs)
        };
    }
    let mut phases: Vec<Phase> = Vec::new();
    for (i, r) in raw.iter().enumerate() {
        let name = r.name.get_ref();
        if let Err(e) = crate::limits::name("phase name", name) {
            errs.push((Some(r.name.span()), e));
            continue;
        }
        if name.is_empty() {
            errs.push((Some(r.name.span()), "phase name: empty".into()));
            continue;
        }
        if phases.iter().any(|p| &p.spec.name == name) {
            errs.push((
                Some(r.name.span()),
                format!(
                    "phase '{}' is declared twice: phase names are unique",
                    blklab_input::excerpt(name)
                ),
            ));
            continue;
        }
        let gap_ns = match &r.gap {
            None => 0,
            Some(g) if i == 0 => {
                errs.push((
                    Some(g.span()),
                    "phase.gap on the first phase: the first phase starts the run (use the jobs' startdelay)".into(),
                ));
                0
            }
            Some(g) => match parse_duration(g.get_ref(), NSEC_PER_SEC)
                .and_then(|v| crate::limits::duration("phase.gap", v))
            {
                Ok(v) => v,
                Err(e) => {
                    errs.push((Some(g.span()), format!("phase.gap: {e}")));
                    0
                }
            },
        };
        phases.push(Phase {
            spec: PhaseSpec {
                name: name.clone(),
                gap_ns,
                jobs: Vec::new(),
                writes: Vec::new(),
            },
            invocations: Vec::new(),
            write_spans: Vec::new(),
        });
    }
    if phases.is_empty() {
        return Err(errs); // every [[phase]] had a problem, reported above
    }
    let names: Vec<String> = phases.iter().map(|p| p.spec.name.clone()).collect();
    // the phase of each job; a phase's jobs are counted over every
    // [[job]], accepted or not, so that one bad job is reported once
    let mut has_job = vec![false; phases.len()];
    for (i, j) in jobs.iter().enumerate() {
        let Some(p) = j.phase else {
            errs.push((
                None,
                format!(
                    "[[job]] #{}: no phase: in a scenario with [[phase]], every job names its phase (phase = \"{}\")",
                    i + 1,
                    names[0]
                ),
            ));
            continue;
        };
        let Some(pi) = phases.iter().position(|ph| &ph.spec.name == p.get_ref()) else {
            errs.push(no_such_phase(p, &format!("[[job]] #{}", i + 1), &names));
            continue;
        };
        has_job[pi] = true;
        if let Some(inv) = j.invocation {
            phases[pi].invocations.push(inv);
            phases[pi]
                .spec
                .jobs
                .extend(invocation_jobs[inv].iter().map(|&j| j as JobId));
        }
    }
    for (r, _) in raw.iter().zip(&has_job).filter(|(_, h)| !**h) {
        errs.push((
            Some(r.name.span()),
            format!(
                "phase '{}' has no [[job]] (give a job phase = \"{}\")",
                blklab_input::excerpt(r.name.get_ref()),
                blklab_input::excerpt(r.name.get_ref())
            ),
        ));
    }
    if !errs.is_empty() {
        return Err(errs);
    }
    let (devices, cgroups, all_jobs) = ctx;
    for w in writes {
        let Some(p) = w.phase else {
            errs.push((
                Some(w.fields[0].span()),
                format!(
                    "[[write]] without a phase: in a scenario with [[phase]], a write names its phase and its at counts from the phase's start (phase = \"{}\")",
                    names[0]
                ),
            ));
            continue;
        };
        let Some(pi) = phases.iter().position(|ph| &ph.spec.name == p.get_ref()) else {
            errs.push(no_such_phase(p, "[[write]]", &names));
            continue;
        };
        // the phase's own latest end, from its start
        let phase_jobs: Vec<JobConfig> = phases[pi]
            .spec
            .jobs
            .iter()
            .map(|&j| all_jobs[j as usize].clone())
            .collect();
        let end = crate::timed_writes::latest_end(None, &phase_jobs);
        match crate::timed_writes::check(w.fields, devices, cgroups, end) {
            Ok((at, cgroup)) => {
                phases[pi].spec.writes.push(TimedWrite {
                    at,
                    cgroup,
                    file: w.fields[2].get_ref().clone(),
                    value: w.fields[3].get_ref().clone(),
                });
                phases[pi].write_spans.push(w.fields[3].span());
            }
            Err((span, msg)) => errs.push((
                Some(span),
                format!(
                    "{msg} (phase '{}': from the phase's start)",
                    phases[pi].spec.name
                ),
            )),
        }
    }
    if errs.is_empty() {
        Ok(phases)
    } else {
        Err(errs)
    }
}

fn no_such_phase(p: &Spanned<String>, what: &str, names: &[String]) -> Problem {
    let known = if names.is_empty() {
        "the scenario declares no [[phase]]".to_string()
    } else {
        format!("declared: {}", names.join(", "))
    };
    (
        Some(p.span()),
        format!(
            "{what}: phase = \"{}\": no such phase ({known})",
            blklab_input::excerpt(p.get_ref())
        ),
    )
}

/// The machine's plan for the phases.
pub fn plan(phases: &[Phase]) -> Vec<PhaseSpec> {
    phases.iter().map(|p| p.spec.clone()).collect()
}

/// The phases' writes as the run applies them (phase after phase, by time
/// within a phase), each meeting the state the writes before it left: the
/// ones the kernel would refuse, as (span, message). `Sim::check_writes`
/// orders by `at`, so the writes are handed to it with their rank as `at`.
pub(crate) fn check_writes(cfg: &SimConfig, phases: &[Phase]) -> Vec<Problem> {
    let mut order: Vec<(usize, usize)> = Vec::new();
    for (pi, p) in phases.iter().enumerate() {
        let mut ws: Vec<usize> = (0..p.spec.writes.len()).collect();
        ws.sort_by_key(|&w| p.spec.writes[w].at);
        order.extend(ws.into_iter().map(|w| (pi, w)));
    }
    if order.is_empty() {
        return Vec::new();
    }
    let ranked = SimConfig {
        writes: order
            .iter()
            .enumerate()
            .map(|(rank, &(pi, w))| TimedWrite {
                at: rank as Ns,
                ..phases[pi].spec.writes[w].clone()
            })
            .collect(),
        ..cfg.clone()
    };
    match blklab_core::Sim::check_writes(&ranked) {
        Ok(bad) => bad
            .into_iter()
            .map(|(rank, e)| {
                let (pi, w) = order[rank];
                let tw = &phases[pi].spec.writes[w];
                (
                    Some(phases[pi].write_spans[w].clone()),
                    format!(
                        "write to {}/{}: \"{}\": {}",
                        cfg.cgroups.get(tw.cgroup).path.trim_end_matches('/'),
                        tw.file,
                        blklab_input::excerpt(&tw.value),
                        e.for_file(&tw.file)
                    ),
                )
            })
            .collect(),
        Err(e) => vec![(None, e.to_string())],
    }
}

/// The phase of invocation `inv`, if the scenario has phases.
pub fn of_invocation(phases: &[Phase], inv: usize) -> Option<usize> {
    phases.iter().position(|p| p.invocations.contains(&inv))
}

/// Warnings for the phases' writes a run dropped (their phase ended first)
/// and the phases that never started (the run ended first).
pub fn unapplied(
    phases: &[Phase],
    marks: &[blklab_core::PhaseMark],
    cgroups: &CgroupTree,
) -> Vec<String> {
    let mut out = Vec::new();
    for (pi, p) in phases.iter().enumerate() {
        let Some(m) = marks.get(pi) else {
            out.push(format!(
                "phase '{}' never started: the run ended before",
                p.spec.name
            ));
            continue;
        };
        let len = m.end.as_ref().map(|e| e.t_ns - m.start.t_ns);
        for w in &p.spec.writes {
            if len.is_some_and(|l| w.at > l) {
                out.push(format!(
                    "the write of \"{}\" to {}/{} at {:.3}s into phase '{}' was not applied: the phase ended at {:.3}s",
                    blklab_input::excerpt(&w.value),
                    cgroups.get(w.cgroup).path.trim_end_matches('/'),
                    w.file,
                    w.at as f64 / 1e9,
                    p.spec.name,
                    len.unwrap_or(0) as f64 / 1e9
                ));
            }
        }
    }
    out
}
