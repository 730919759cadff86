//! One run (`Scenario.run`) and `compare`.

use std::cell::RefCell;
use std::rc::Rc;

use blklab_core::sim::trace::TraceSink;
use blklab_lab::timeseries::{self, Cell};
use blklab_lab::{compare as cmp, output, overrides, report::Row, runner};
use pyo3::prelude::*;

use crate::{err, path_of};

/// Trace events kept in memory as (time ns, event name, payload), for the
/// `trace` DataFrame; only when asked for (memory grows with the events).
struct Collect(Rc<RefCell<Vec<(u64, String, String)>>>);

impl TraceSink for Collect {
    fn event(&mut self, t: u64, name: &str, payload: &str) {
        self.0
            .borrow_mut()
            .push((t, name.to_string(), payload.to_string()));
    }
}

/// (label, cgroup, device, invocation, groupid) of each reporting entry.
type GroupInfo = (String, String, String, usize, u32);
type TraceRows = Vec<(u64, String, String)>;
/// Each time-series table: (name, columns, rows).
type SeriesTables = Vec<(String, Vec<String>, Vec<Vec<PyObject>>)>;

/// The recorded series as Python values (integers, floats, strings).
fn series_py(py: Python<'_>, s: timeseries::Series) -> PyResult<SeriesTables> {
    s.tables
        .into_iter()
        .map(|t| {
            let rows = t
                .rows
                .into_iter()
                .map(|r| {
                    r.into_iter()
                        .map(|c| {
                            Ok(match c {
                                Cell::Int(i) => i.into_pyobject(py)?.into_any().unbind(),
                                Cell::Float(f) => f.into_pyobject(py)?.into_any().unbind(),
                                Cell::Text(x) => x.into_pyobject(py)?.into_any().unbind(),
                            })
                        })
                        .collect::<PyResult<Vec<_>>>()
                })
                .collect::<PyResult<Vec<_>>>()?;
            Ok((t.name, t.columns, rows))
        })
        .collect()
}

/// Run the scenario: each invocation's fio JSON document (the text
/// `blklab run --output-format json` prints), the reporting entries in the
/// same order as the documents' `jobs`, the trace events when asked, and
/// the controller time series (`blklab run --timeseries`, intervals of
/// `timeseries_ms`) when asked.
#[pyfunction]
#[pyo3(signature = (text, path, sets, seed=None, trace=false, timeseries_ms=None))]
#[allow(clippy::type_complexity)] // a tuple of plain Python values, unpacked by blklab.Scenario.run
pub fn run(
    py: Python<'_>,
    text: String,
    path: String,
    sets: Vec<(String, String)>,
    seed: Option<u64>,
    trace: bool,
    timeseries_ms: Option<u64>,
) -> PyResult<(
    Vec<String>,
    Vec<GroupInfo>,
    Option<TraceRows>,
    Option<SeriesTables>,
)> {
    let (docs, groups, tr, series) = py
        .allow_threads(|| {
            let mut sc = overrides::build(&text, &path_of(&path), &sets)?;
            if let Some(s) = seed {
                sc.config.seed = s;
            }
            let events = Rc::new(RefCell::new(Vec::new()));
            let sink: Option<Box<dyn TraceSink>> =
                trace.then(|| Box::new(Collect(events.clone())) as _);
            let (out, series) = match timeseries_ms {
                None => (runner::run(&sc, &sc.config, sink)?, None),
                Some(ms) => {
                    let opts = timeseries::Options {
                        interval_ns: ms.saturating_mul(1_000_000),
                        csv_dir: None,
                        keep: true,
                        fio_log_dir: None,
                    };
                    blklab_lab::observe::timeseries(&sc, &sc.config, sink, &opts)?
                }
            };
            let docs: Vec<String> = (0..sc.invocations.len())
                .map(|i| output::json(&sc, &out, i))
                .collect();
            let groups: Vec<GroupInfo> = out
                .groups
                .iter()
                .map(|g| {
                    (
                        g.label.clone(),
                        g.cgroup.clone(),
                        g.device.clone(),
                        g.invocation,
                        g.groupid,
                    )
                })
                .collect();
            let tr = trace.then(|| events.take());
            anyhow::Ok((docs, groups, tr, series))
        })
        .map_err(err)?;
    let series = series.map(|s| series_py(py, s)).transpose()?;
    Ok((docs, groups, tr, series))
}

/// `blklab compare`: each variant's short name and, per reporting entry,
/// its label and the table's nine figures (`report::Row::values`).
#[pyfunction]
pub fn compare(
    py: Python<'_>,
    text: String,
    path: String,
    sets: Vec<(String, String)>,
    variants: Vec<Vec<(String, String)>>,
) -> PyResult<Vec<(String, Vec<(String, Vec<f64>)>)>> {
    py.allow_threads(|| {
        variants
            .iter()
            .map(|v| {
                let mut all = sets.clone();
                all.extend(v.iter().cloned());
                let sc = overrides::build(&text, &path_of(&path), &all)?;
                let out = runner::run(&sc, &sc.config, None)?;
                let rows = out
                    .groups
                    .iter()
                    .map(|g| {
                        let r = Row::from_group(g);
                        (r.label.clone(), r.values().to_vec())
                    })
                    .collect();
                Ok((cmp::short_name(v), rows))
            })
            .collect::<anyhow::Result<Vec<_>>>()
    })
    .map_err(err)
}
