//! One run (`Scenario.run`) and `compare`.

use std::cell::RefCell;
use std::rc::Rc;

use blklab_core::sim::trace::TraceSink;
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

/// Run the scenario: each invocation's fio JSON document (the text
/// `blklab run --output-format json` prints), the reporting entries in the
/// same order as the documents' `jobs`, and the trace events when asked.
#[pyfunction]
#[pyo3(signature = (text, path, sets, seed=None, trace=false))]
pub fn run(
    py: Python<'_>,
    text: String,
    path: String,
    sets: Vec<(String, String)>,
    seed: Option<u64>,
    trace: bool,
) -> PyResult<(Vec<String>, Vec<GroupInfo>, Option<TraceRows>)> {
    py.allow_threads(|| {
        let mut sc = overrides::build(&text, &path_of(&path), &sets)?;
        if let Some(s) = seed {
            sc.config.seed = s;
        }
        let events = Rc::new(RefCell::new(Vec::new()));
        let sink: Option<Box<dyn TraceSink>> =
            trace.then(|| Box::new(Collect(events.clone())) as _);
        let out = runner::run(&sc, &sc.config, sink)?;
        let docs = (0..sc.invocations.len())
            .map(|i| output::json(&sc, &out, i))
            .collect();
        let groups = out
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
        Ok((docs, groups, tr))
    })
    .map_err(err)
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
