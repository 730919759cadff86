//! `blklab tune iocost`: search io.cost.qos (and optionally the model's
//! scale) for settings under which the protected cgroups meet their
//! targets while the other cgroups get the most throughput, on the
//! scenario's own device and workload mix.
//!
//! The search is a sweep (`sweep::Plan`, one combination per candidate, a
//! few seeds each), so it runs wherever sweeps run (every local core, or
//! Ray from Python). A candidate's value for a target is the worst over
//! its seeds and over the protected cgroups' jobs (max for `<=`, min for
//! `>=`); its throughput is the mean over seeds of the other jobs' MB/s.
//! See docs/sweep-tune.md.

pub mod render;
pub mod report;
pub mod space;
pub mod target;

use anyhow::{anyhow, bail, Result};
use blklab_core::block::blk_cgroup::{CgroupTree, ROOT};

use crate::sweep::{Plan, RunRow};
use space::{Qos, Space};
use target::Target;

pub struct Options {
    pub protect: Vec<String>,
    pub targets: Vec<Target>,
    pub space: Space,
    pub seeds: u64,
    /// In a scenario with run phases, judge only the jobs of this phase
    /// (the measured one after a warm-up); None judges every job.
    pub phase: Option<String>,
}

/// A tuning run, ready for its sweep: the plan and what it takes to read
/// the rows back.
pub struct Setup {
    pub plan: Plan,
    pub candidates: Vec<Qos>,
    pub devno: String,
    /// The scenario's `io.cost.model` line (when it has one).
    pub model_line: Option<String>,
    pub protected: Vec<String>,
    pub others: Vec<String>,
    pub targets: Vec<Target>,
}

/// One candidate's figures.
#[derive(Clone, Debug, PartialEq)]
pub struct Scored {
    pub qos: Qos,
    /// Per target: the worst value over seeds and protected jobs.
    pub worst: Vec<f64>,
    /// Mean over seeds of the other jobs' total MB/s.
    pub others_mbps: f64,
    pub feasible: bool,
}

pub struct Outcome {
    pub scored: Vec<Scored>,
    /// Indices into `scored` of the Pareto front (first target's worst value
    /// against the others' throughput), best throughput first.
    pub front: Vec<usize>,
    pub recommended: Option<usize>,
    /// When nothing meets every target: (target, best achievable value,
    /// its candidate) for each target no candidate reaches; when each is
    /// reachable alone (`joint`), for each target missed by the best
    /// candidate among those meeting every other target.
    pub binding: Vec<(usize, Option<(f64, usize)>)>,
    pub joint: bool,
}

fn is_under(cg: &str, p: &str) -> bool {
    cg == p || (p == "/" || cg.starts_with(&format!("{p}/")))
}

/// Which invocations `--phase NAME` keeps: all of them without a phase; a
/// phase the scenario does not declare is an error listing those it does.
fn phase_filter<'a>(
    sc: &'a crate::scenario::Scenario,
    phase: Option<&str>,
) -> Result<Box<dyn Fn(usize) -> bool + 'a>> {
    let Some(name) = phase else {
        return Ok(Box::new(|_| true));
    };
    if sc.phases.is_empty() {
        bail!("--phase {name}: the scenario declares no [[phase]]");
    }
    let Some(pi) = sc.phases.iter().position(|p| p.spec.name == name) else {
        let known: Vec<&str> = sc.phases.iter().map(|p| p.spec.name.as_str()).collect();
        bail!(
            "--phase {name}: no such phase (declared: {})",
            known.join(", ")
        );
    };
    Ok(Box::new(move |inv| {
        crate::phases::of_invocation(&sc.phases, inv) == Some(pi)
    }))
}

impl Setup {
    /// Build the plan: the scenario with `base.base_sets`, every candidate
    /// as one combination, `opts.seeds` seeds each. Runs the scenario once
    /// to learn which jobs belong to the protected cgroups.
    pub fn new(base: Plan, opts: Options) -> Result<Setup> {
        if opts.targets.is_empty() {
            bail!("tune: give at least one --target (e.g. 'p99<=5ms')");
        }
        if opts.protect.is_empty() {
            bail!("tune: give at least one --protect CGROUP");
        }
        let sc = crate::overrides::build(&base.text, &base.path, &base.base_sets)?;
        let in_phase = phase_filter(&sc, opts.phase.as_deref())?;
        let out = crate::runner::run(&sc, &sc.config, None)?;
        let protect: Vec<String> = opts
            .protect
            .iter()
            .map(|p| CgroupTree::normalize(p).map_err(|e| anyhow!("--protect {p}: {e}")))
            .collect::<Result<_>>()?;
        for p in &protect {
            if !out.groups.iter().any(|g| is_under(&g.cgroup, p)) {
                let mut cgs: Vec<&str> = out.groups.iter().map(|g| g.cgroup.as_str()).collect();
                cgs.dedup();
                bail!(
                    "--protect {p}: no job runs in that cgroup (cgroups with jobs: {})",
                    cgs.join(", ")
                );
            }
        }
        let (mut protected, mut others) = (Vec::new(), Vec::new());
        for g in out.groups.iter().filter(|g| in_phase(g.invocation)) {
            match protect.iter().any(|p| is_under(&g.cgroup, p)) {
                true => protected.push(g.label.clone()),
                false => others.push(g.label.clone()),
            }
        }
        if protected.is_empty() {
            bail!(
                "--protect {}: no job of phase {} runs in it",
                protect.join(", "),
                opts.phase.as_deref().unwrap_or_default()
            );
        }
        let root = &sc.config.cgroups;
        let qos_line = root.file(ROOT, "io.cost.qos").map(str::to_string);
        let model_line = root
            .file(ROOT, "io.cost.model")
            .and_then(|m| m.lines().last())
            .map(str::to_string);
        let devno = match qos_line.as_deref().or(model_line.as_deref()) {
            Some(l) => l.split_whitespace().next().unwrap_or_default().to_string(),
            None => {
                let name = &out
                    .groups
                    .iter()
                    .find(|g| protected.contains(&g.label))
                    .expect("checked")
                    .device;
                let d = sc
                    .config
                    .devices
                    .iter()
                    .find(|d| &d.info.name == name)
                    .expect("a job's device");
                d.info.devno()
            }
        };
        if !opts.space.scale.is_empty() && model_line.is_none() {
            bail!("--scale: the scenario has no io.cost.model line in cgroup \"/\" to scale");
        }
        let candidates = opts.space.candidates()?;
        let combos = candidates
            .iter()
            .map(|q| {
                let mut v = vec![("cgroup./.io.cost.qos".to_string(), q.line(&devno))];
                if let (Some(s), Some(m)) = (q.scale, &model_line) {
                    v.push((
                        "cgroup./.io.cost.model".to_string(),
                        space::scale_model(m, s)?,
                    ));
                }
                Ok(v)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Setup {
            plan: Plan {
                combos,
                seeds: opts.seeds,
                ..base
            },
            candidates,
            devno,
            model_line,
            protected,
            others,
            targets: opts.targets,
        })
    }

    /// The recommended (or any) candidate's `io.cost.qos` line.
    pub fn qos_line(&self, q: &Qos) -> String {
        q.line(&self.devno)
    }

    /// The candidate's `io.cost.model` line, when it scales the model.
    pub fn model_line(&self, q: &Qos) -> Option<String> {
        let m = self.model_line.as_ref()?;
        q.scale.and_then(|s| space::scale_model(m, s).ok())
    }

    /// Score every candidate from the sweep's rows (in run order) and pick.
    pub fn evaluate(&self, rows: &[RunRow]) -> Result<Outcome> {
        let seeds = self.plan.seeds as usize;
        if rows.len() != self.candidates.len() * seeds {
            bail!(
                "tune: {} rows for {} runs",
                rows.len(),
                self.candidates.len() * seeds
            );
        }
        let get = |r: &RunRow, label: &str, fig: &str| -> Result<f64> {
            let k = format!("{label}.{fig}");
            r.metrics
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| *v)
                .ok_or_else(|| anyhow!("tune: run {} has no metric {k}", r.index))
        };
        let mut scored = Vec::with_capacity(self.candidates.len());
        for (ci, q) in self.candidates.iter().enumerate() {
            let runs = &rows[ci * seeds..(ci + 1) * seeds];
            let mut worst = Vec::with_capacity(self.targets.len());
            for t in &self.targets {
                let mut w: Option<f64> = None;
                for r in runs {
                    for l in &self.protected {
                        let v = get(r, l, t.figure)?;
                        w = Some(w.map_or(v, |w| t.worse(w, v)));
                    }
                }
                worst.push(w.expect("at least one seed and protected job"));
            }
            let mut total = 0.0;
            for r in runs {
                for l in &self.others {
                    total += get(r, l, "mbps")?;
                }
            }
            let feasible = self.targets.iter().zip(&worst).all(|(t, v)| t.met(*v));
            scored.push(Scored {
                qos: q.clone(),
                worst,
                others_mbps: total / seeds as f64,
                feasible,
            });
        }
        Ok(pick(&self.targets, scored))
    }
}

/// The Pareto front, the recommendation and, with no feasible candidate,
/// the binding targets. Ties go to the earlier candidate.
pub fn pick(targets: &[Target], scored: Vec<Scored>) -> Outcome {
    let t0 = &targets[0];
    let dominates = |a: &Scored, b: &Scored| {
        let ge = !t0.better(b.worst[0], a.worst[0]) && a.others_mbps >= b.others_mbps;
        let gt = t0.better(a.worst[0], b.worst[0]) || a.others_mbps > b.others_mbps;
        ge && gt
    };
    let mut front: Vec<usize> = Vec::new();
    for (i, s) in scored.iter().enumerate() {
        let dominated = scored.iter().any(|o| dominates(o, s));
        let duplicate = front
            .iter()
            .any(|&j| scored[j].worst[0] == s.worst[0] && scored[j].others_mbps == s.others_mbps);
        if !dominated && !duplicate {
            front.push(i);
        }
    }
    front.sort_by(|&a, &b| {
        scored[b]
            .others_mbps
            .total_cmp(&scored[a].others_mbps)
            .then(a.cmp(&b))
    });
    // the most throughput among the feasible; then the most margin on the first target
    let mut recommended: Option<usize> = None;
    for (i, s) in scored.iter().enumerate().filter(|(_, s)| s.feasible) {
        recommended = match recommended {
            None => Some(i),
            Some(r) => {
                let b = &scored[r];
                let better = s.others_mbps > b.others_mbps
                    || (s.others_mbps == b.others_mbps && t0.better(s.worst[0], b.worst[0]));
                Some(if better { i } else { r })
            }
        };
    }
    // with nothing feasible: the targets no candidate reaches even alone,
    // with their best values; when each is reachable alone but not all
    // together, those missed by the best candidate meeting all the others
    let best_of = |ti: usize, others_met: bool| {
        let t = &targets[ti];
        let mut best: Option<(f64, usize)> = None;
        for (i, s) in scored.iter().enumerate() {
            let ok = !others_met
                || targets
                    .iter()
                    .enumerate()
                    .all(|(tj, u)| tj == ti || u.met(s.worst[tj]));
            if ok && best.is_none_or(|(b, _)| t.better(s.worst[ti], b)) {
                best = Some((s.worst[ti], i));
            }
        }
        best
    };
    let mut binding = Vec::new();
    let mut joint = false;
    if recommended.is_none() && !scored.is_empty() {
        for (ti, t) in targets.iter().enumerate() {
            let best = best_of(ti, false);
            if best.is_none_or(|(b, _)| !t.met(b)) {
                binding.push((ti, best));
            }
        }
        if binding.is_empty() {
            joint = true;
            for (ti, t) in targets.iter().enumerate() {
                let best = best_of(ti, true);
                if best.is_none_or(|(b, _)| !t.met(b)) {
                    binding.push((ti, best));
                }
            }
        }
    }
    Outcome {
        scored,
        front,
        recommended,
        binding,
        joint,
    }
}

#[cfg(test)]
mod tests;
