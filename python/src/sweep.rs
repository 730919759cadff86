//! Sweeps and the tuner from Python: the plan is (scenario, base
//! overrides, combinations, seeds); `run_batch` runs any subset of its run
//! indices on local threads, which is what both the local and the Ray
//! backends call (a Ray task is one `run_batch`).

use std::path::Path;

use blklab_lab::sweep::{cache::Cache, Plan, RunRow};
use blklab_lab::tune::{self, space::Space, target::Target};
use pyo3::prelude::*;

use crate::{err, path_of, Source};

/// A row as Python sees it: (index, params, seed, metrics).
pub type PyRow = (usize, Vec<(String, String)>, u64, Vec<(String, f64)>);
type Combo = Vec<(String, String)>;

fn plan(src: Source, combos: Vec<Combo>, seeds: u64) -> Plan {
    let (text, path, base_sets) = src;
    Plan {
        path: path_of(&path),
        text,
        base_sets,
        combos,
        seeds,
    }
}

fn to_py(r: RunRow) -> PyRow {
    (r.index, r.params, r.seed, r.metrics)
}

fn from_py(r: PyRow) -> RunRow {
    RunRow {
        index: r.0,
        params: r.1,
        seed: r.2,
        metrics: r.3,
    }
}

/// The cross product of (key, values) axes, the first varying slowest.
#[pyfunction]
pub fn product(axes: Vec<(String, Vec<String>)>) -> Vec<Combo> {
    blklab_lab::compare::product(&axes)
}

/// Check every combination (the first bad one raises) and count the runs.
#[pyfunction]
pub fn plan_runs(py: Python<'_>, src: Source, combos: Vec<Combo>, seeds: u64) -> PyResult<usize> {
    py.allow_threads(|| {
        let b = plan(src, combos, seeds).build()?;
        Ok(b.plan.runs().len())
    })
    .map_err(err)
}

/// Run the runs with these indices on `jobs` threads (0 = every core),
/// through the cache when a directory is given; rows in the order given.
#[pyfunction]
#[pyo3(signature = (src, combos, seeds, indices, jobs=0, cache=None))]
pub fn run_batch(
    py: Python<'_>,
    src: Source,
    combos: Vec<Combo>,
    seeds: u64,
    indices: Vec<usize>,
    jobs: usize,
    cache: Option<String>,
) -> PyResult<Vec<PyRow>> {
    py.allow_threads(|| {
        let p = plan(src, combos, seeds);
        let runs = indices
            .iter()
            .map(|&i| p.run_spec(i))
            .collect::<anyhow::Result<Vec<_>>>()?;
        let built = p.build_for(&runs)?;
        let cache = cache
            .as_deref()
            .map(|d| Cache::new(Path::new(d)))
            .transpose()?;
        let rows = built.run_all(&runs, jobs, cache.as_ref(), &|_, _| {})?;
        Ok(rows.into_iter().map(to_py).collect())
    })
    .map_err(err)
}

/// A tuning run: its plan for the sweep, then `evaluate` on the rows.
#[pyclass(module = "blklab._native")]
pub struct TuneSetup(tune::Setup);

#[pymethods]
impl TuneSetup {
    #[new]
    #[pyo3(signature = (src, protect, targets, seeds, rpct, rlat, wpct, wlat, min, max, scale, phase=None))]
    #[allow(clippy::too_many_arguments)] // the search space's seven axes, as keywords from Python
    fn new(
        py: Python<'_>,
        src: Source,
        protect: Vec<String>,
        targets: Vec<String>,
        seeds: u64,
        rpct: Option<Vec<f64>>,
        rlat: Option<Vec<u64>>,
        wpct: Option<Vec<f64>>,
        wlat: Option<Vec<u64>>,
        min: Option<Vec<f64>>,
        max: Option<Vec<f64>>,
        scale: Option<Vec<f64>>,
        phase: Option<String>,
    ) -> PyResult<TuneSetup> {
        py.allow_threads(|| {
            let d = Space::default();
            let space = Space {
                rpct: rpct.unwrap_or(d.rpct),
                rlat_us: rlat.unwrap_or(d.rlat_us),
                wpct: wpct.unwrap_or(d.wpct),
                wlat_us: wlat.unwrap_or(d.wlat_us),
                min: min.unwrap_or(d.min),
                max: max.unwrap_or(d.max),
                scale: scale.unwrap_or(d.scale),
            };
            let opts = tune::Options {
                protect,
                targets: targets
                    .iter()
                    .map(|t| Target::parse(t))
                    .collect::<anyhow::Result<_>>()?,
                space,
                seeds,
                phase,
            };
            tune::Setup::new(plan(src, Vec::new(), seeds), opts)
        })
        .map(TuneSetup)
        .map_err(err)
    }

    /// The sweep's combinations (one per candidate) and seeds.
    fn plan(&self) -> (Vec<Combo>, u64) {
        (self.0.plan.combos.clone(), self.0.plan.seeds)
    }

    #[getter]
    fn protected(&self) -> Vec<String> {
        self.0.protected.clone()
    }

    #[getter]
    fn others(&self) -> Vec<String> {
        self.0.others.clone()
    }

    /// Score the rows: (Pareto table, verdict, every candidate as CSV,
    /// recommended io.cost.qos line or None, binding target texts, the
    /// HTML report).
    #[allow(clippy::type_complexity)] // unpacked at once by blklab.tune_iocost
    fn evaluate(
        &self,
        py: Python<'_>,
        rows: Vec<PyRow>,
    ) -> PyResult<(String, String, String, Option<String>, Vec<String>, String)> {
        py.allow_threads(|| {
            let rows: Vec<RunRow> = rows.into_iter().map(from_py).collect();
            let out = self.0.evaluate(&rows)?;
            let s = &self.0;
            Ok((
                tune::render::table(s, &out),
                tune::render::verdict(s, &out),
                tune::render::csv(s, &out),
                out.recommended.map(|i| s.qos_line(&out.scored[i].qos)),
                out.binding
                    .iter()
                    .map(|(t, _)| s.targets[*t].text.clone())
                    .collect(),
                tune::report::html(s, &out)?,
            ))
        })
        .map_err(err)
    }
}
