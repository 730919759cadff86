//! Running a scenario: build the simulator with every controller the
//! scenario's cgroup files ask for, run it, and gather fio's results per
//! reporting group.

use anyhow::Result;
use blklab_core::sim::trace::{TraceSink, Tracer};
use blklab_core::{RunResult, Sim, SimConfig};
use blklab_fio::{JobSpec, JobStats};

use crate::scenario::Scenario;

/// One row of results: a job, or a reporting group under group_reporting.
#[derive(Debug, Clone)]
pub struct GroupResult {
    pub invocation: usize,
    /// The scenario's label, or the fio job name.
    pub label: String,
    pub groupid: u32,
    pub spec: JobSpec,
    pub stats: JobStats,
    pub cgroup: String,
    pub device: String,
}

pub struct Outcome {
    pub result: RunResult,
    pub groups: Vec<GroupResult>,
    /// io.stat of every cgroup at the end of the run (`Sim::io_stat`), as
    /// (cgroup path, `MAJ:MIN key=value ...` lines), in tree order; cgroups
    /// with no fields are left out.
    pub io_stat: Vec<(String, String)>,
    /// The run phases that started, with their boundaries (empty for a
    /// scenario without phases; crate::phases).
    pub phases: Vec<blklab_core::PhaseMark>,
}

/// The simulator refused the configuration (`Sim::new`, a replay's
/// attachment): the scenario is invalid input, whatever else failed later.
#[derive(Debug)]
pub struct SetupFailed(pub String);

impl std::fmt::Display for SetupFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SetupFailed {}

/// Build the simulator for a configuration: devices, schedulers and the
/// controllers configured through the cgroup files.
pub fn build_sim(cfg: &SimConfig, trace: Option<Box<dyn TraceSink>>) -> Result<Sim> {
    let sim = Sim::new(cfg.clone(), Tracer::new(trace)).map_err(|e| SetupFailed(e.to_string()))?;
    Ok(sim)
}

/// Run the scenario (with the configuration given, which may differ from the
/// scenario's own by switches or seed).
pub fn run(sc: &Scenario, cfg: &SimConfig, trace: Option<Box<dyn TraceSink>>) -> Result<Outcome> {
    let mut sim = prepare(sc, cfg, trace)?;
    // nothing here reads blk-iotrack (the outcome is fio's figures, the
    // device totals and io.stat): spare the run its per-bio counting
    sim.set_iotrack_counting(false);
    let result = sim.run();
    Ok(outcome(sc, &sim, result))
}

/// The results of a finished simulation: fio's reporting entries and io.stat.
pub fn outcome(sc: &Scenario, sim: &Sim, result: RunResult) -> Outcome {
    let groups = group_results(sc, &result);
    let io_stat = io_stat_all(sim);
    Outcome {
        result,
        groups,
        io_stat,
        phases: sim.phase_marks().to_vec(),
    }
}

/// io.stat of every cgroup (root first), skipping cgroups with no fields.
pub fn io_stat_all(sim: &Sim) -> Vec<(String, String)> {
    let tree = sim.cgroups();
    (0..tree.len())
        .filter_map(|i| {
            let id = i as blklab_core::block::blk_cgroup::CgId;
            let s = sim.io_stat(id);
            (!s.is_empty()).then(|| (tree.get(id).path.clone(), s))
        })
        .collect()
}

/// Warnings for the timed writes a finished run never reached (its jobs
/// ended before the write's time): the scenario's check refuses writes past
/// a known end, but a job that ends when its size is done ends when it ends.
pub fn unapplied_writes(cfg: &SimConfig, r: &RunResult) -> Vec<String> {
    cfg.writes
        .iter()
        .filter(|w| w.at > r.end_time)
        .map(|w| {
            format!(
                "the write of \"{}\" to {}/{} at {:.3}s was not applied: the run ended at {:.3}s",
                blklab_input::excerpt(&w.value),
                cfg.cgroups.get(w.cgroup).path.trim_end_matches('/'),
                w.file,
                w.at as f64 / 1e9,
                r.end_time as f64 / 1e9
            )
        })
        .collect()
}

/// Warnings for the phases' writes a finished run dropped and the phases
/// it never reached (`crate::phases::unapplied`).
pub fn unapplied_phase_writes(sc: &Scenario, out: &Outcome) -> Vec<String> {
    crate::phases::unapplied(&sc.phases, &out.phases, &sc.config.cgroups)
}

/// The simulator for a scenario, ready to run: `build_sim`, then the
/// workloads that come from recordings (`replay = ...` jobs).
pub fn prepare(sc: &Scenario, cfg: &SimConfig, trace: Option<Box<dyn TraceSink>>) -> Result<Sim> {
    prepare_with(sc, cfg, Tracer::new(trace))
}

/// `prepare` with a tracer of the caller's (one that also carries a probe).
pub fn prepare_with(sc: &Scenario, cfg: &SimConfig, tracer: Tracer) -> Result<Sim> {
    let sim = if sc.phases.is_empty() {
        Sim::new(cfg.clone(), tracer)
    } else {
        Sim::with_phases(cfg.clone(), tracer, crate::phases::plan(&sc.phases))
    };
    let mut sim = sim.map_err(|e| SetupFailed(e.to_string()))?;
    crate::replay_input::attach(&sc.replays, &sc.config.jobs, &mut sim)
        .map_err(|e| SetupFailed(format!("{e:#}")))?;
    Ok(sim)
}

/// fio's reporting entries (one per job, or per group with group_reporting),
/// for every invocation in order.
pub fn group_results(sc: &Scenario, r: &RunResult) -> Vec<GroupResult> {
    let mut out = Vec::new();
    for (ii, inv) in sc.invocations.iter().enumerate() {
        let jobs: Vec<(&JobSpec, &JobStats)> = inv
            .jobs
            .iter()
            .map(|&ji| (&sc.config.jobs[ji].spec, &r.jobs[ji].stats))
            .collect();
        let entries = blklab_fio::report::group_jobs(&jobs);
        let n = entries.len();
        for (first, stats) in entries {
            let ji = inv.jobs[first];
            let jr = &r.jobs[ji];
            let mut label = match &inv.label {
                Some(l) if n == 1 => l.clone(),
                Some(l) => format!("{l}.{}", jr.name),
                None => jr.name.clone(),
            };
            if let Some(p) = crate::phases::of_invocation(&sc.phases, ii) {
                label = format!("{}/{label}", sc.phases[p].spec.name);
            }
            out.push(GroupResult {
                invocation: ii,
                label,
                groupid: stats.groupid,
                spec: sc.config.jobs[ji].spec.clone(),
                stats,
                cgroup: jr.cgroup.clone(),
                device: jr.device.clone(),
            });
        }
    }
    out
}
