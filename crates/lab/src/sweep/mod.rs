//! Sweeps: one scenario over a grid of overrides (`--param KEY=V1,V2`, any
//! key `overrides::build` accepts) times a number of seeds, on every local
//! core. Each run is a pure function of (scenario text, overrides, seed), so
//! the results, ordered by run index, do not depend on the number of
//! workers, the order in which runs finish, or where they ran (the Python
//! package's Ray backend runs batches of the same plan with `run_batch`).
//!
//! Run index: combination-major, seed-minor (`combo * seeds + k`), the
//! first parameter varying slowest (as `blklab compare`'s variants). Seeds
//! are the scenario's seed + k, so seed index 0 reproduces `blklab run`.

pub mod cache;
pub mod metrics;
pub mod table;

use std::path::{Path, PathBuf};

use anyhow::{anyhow, Result};
use serde::{Deserialize, Serialize};

use crate::compare::Variant;
use crate::scenario::Scenario;

/// What to sweep: a scenario (its text and where it came from, for relative
/// job files and error positions), overrides applied to every run, the
/// parameter combinations, and the number of seeds.
#[derive(Clone, Debug)]
pub struct Plan {
    pub path: PathBuf,
    pub text: String,
    /// Overrides applied before each combination's (`--set`).
    pub base_sets: Vec<(String, String)>,
    pub combos: Vec<Variant>,
    pub seeds: u64,
}

/// One run of a plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunSpec {
    pub index: usize,
    pub combo: usize,
    /// Seed index (0..seeds); the seed itself is the scenario's + this.
    pub seed_k: u64,
}

/// One run's result: its parameters, seed and metrics (`metrics::columns`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunRow {
    pub index: usize,
    pub params: Vec<(String, String)>,
    pub seed: u64,
    pub metrics: Vec<(String, f64)>,
}

/// A plan's scenarios, built and checked once per combination (those a
/// worker needs: `Plan::build_for`; every one: `Plan::build`).
pub struct Built {
    pub plan: Plan,
    pub scenarios: Vec<Option<Scenario>>,
}

impl Plan {
    /// Load the scenario file.
    pub fn load(path: &Path) -> Result<Plan> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| anyhow!("{}: cannot read: {e}", path.display()))?;
        Ok(Plan {
            path: path.to_path_buf(),
            text,
            base_sets: Vec::new(),
            combos: vec![Vec::new()],
            seeds: 1,
        })
    }

    pub fn runs(&self) -> Vec<RunSpec> {
        let mut out = Vec::new();
        for combo in 0..self.combos.len() {
            for seed_k in 0..self.seeds {
                out.push(RunSpec {
                    index: out.len(),
                    combo,
                    seed_k,
                });
            }
        }
        out
    }

    /// The overrides of one combination: the base ones, then the combination's.
    pub fn sets(&self, combo: usize) -> Vec<(String, String)> {
        let mut s = self.base_sets.clone();
        s.extend(self.combos[combo].iter().cloned());
        s
    }

    /// Build (and so check) every combination's scenario, in order: the
    /// first bad combination's error is reported, the same whatever runs
    /// where. Combinations are checked before anything runs.
    pub fn build(self) -> Result<Built> {
        let all = self.runs();
        self.build_for(&all)
    }

    /// Build only the combinations `runs` use (a worker given a batch).
    pub fn build_for(self, runs: &[RunSpec]) -> Result<Built> {
        if self.seeds == 0 {
            return Err(anyhow!("--seeds 0: at least one seed is needed"));
        }
        let mut scenarios: Vec<Option<Scenario>> = (0..self.combos.len()).map(|_| None).collect();
        for r in runs {
            let slot = scenarios
                .get_mut(r.combo)
                .ok_or_else(|| anyhow!("run {}: no combination {}", r.index, r.combo))?;
            if slot.is_none() {
                *slot = Some(crate::overrides::build(
                    &self.text,
                    &self.path,
                    &self.sets(r.combo),
                )?);
            }
        }
        Ok(Built {
            plan: self,
            scenarios,
        })
    }

    /// The run with index `i` (`runs()[i]`).
    pub fn run_spec(&self, i: usize) -> Result<RunSpec> {
        let n = self.combos.len() * self.seeds as usize;
        if i >= n {
            return Err(anyhow!("run index {i}: the plan has {n} runs"));
        }
        Ok(RunSpec {
            index: i,
            combo: i / self.seeds as usize,
            seed_k: (i % self.seeds as usize) as u64,
        })
    }
}

impl Built {
    /// Run one run of the plan.
    pub fn run_one(&self, r: RunSpec) -> Result<RunRow> {
        let mut sc = self.scenarios[r.combo]
            .clone()
            .ok_or_else(|| anyhow!("run {}: combination {} was not built", r.index, r.combo))?;
        sc.config.seed = sc.config.seed.wrapping_add(r.seed_k);
        let out = crate::runner::run(&sc, &sc.config, None)?;
        Ok(RunRow {
            index: r.index,
            params: self.plan.combos[r.combo].clone(),
            seed: sc.config.seed,
            metrics: metrics::of(&out.groups),
        })
    }

    /// Run `runs` on `jobs` threads (0 = every core), taking what the cache
    /// holds and storing what it did not; `progress(done, total)` after each
    /// run. Results come back in the order of `runs`.
    pub fn run_all(
        &self,
        runs: &[RunSpec],
        jobs: usize,
        cache: Option<&cache::Cache>,
        progress: &(dyn Fn(usize, usize) + Sync),
    ) -> Result<Vec<RunRow>> {
        let slots = crate::par::map_ordered(runs, jobs, &|&r| self.cached_run(r, cache), progress);
        let total = runs.len();
        // the first failure in run order (runs after it may not have started)
        let mut out = Vec::with_capacity(total);
        for (i, s) in slots.into_iter().enumerate() {
            match s {
                Some(Ok(row)) => out.push(row),
                Some(Err(e)) => return Err(e.context(format!("run {}", runs[i].index))),
                None => {}
            }
        }
        Ok(out)
    }

    fn cached_run(&self, r: RunSpec, cache: Option<&cache::Cache>) -> Result<RunRow> {
        let key = cache.map(|c| c.key(&self.plan, r));
        if let (Some(c), Some(k)) = (cache, &key) {
            if let Some(mut row) = c.get(k)? {
                row.index = r.index;
                return Ok(row);
            }
        }
        let row = self.run_one(r)?;
        if let (Some(c), Some(k)) = (cache, &key) {
            c.put(k, &row)?;
        }
        Ok(row)
    }
}

#[cfg(test)]
mod tests;
