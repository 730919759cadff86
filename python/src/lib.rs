//! The native half of the `blklab` Python package (`blklab._native`):
//! thin functions over blklab-lab, taking a scenario as (text, path,
//! overrides) and returning plain Python values; `python/blklab/` wraps
//! them in classes and pandas DataFrames. Simulations run with the GIL
//! released. Errors are `blklab.BlklabError` (a `ValueError`) carrying
//! the command line's messages (file:line:col for scenario problems).
//!
//! Built only with the `python` feature (maturin turns it on), so that
//! `cargo test --workspace` does not need an interpreter.
#![cfg(feature = "python")]

mod run;
mod sweep;

use std::path::PathBuf;

use pyo3::create_exception;
use pyo3::prelude::*;

create_exception!(
    blklab,
    BlklabError,
    pyo3::exceptions::PyValueError,
    "A scenario, override or sweep problem, with the command line's message."
);

/// anyhow's chain ("context: cause") as the exception's message.
pub(crate) fn err(e: anyhow::Error) -> PyErr {
    BlklabError::new_err(format!("{e:#}"))
}

/// A scenario as the Python side holds it: its text, the path that names it
/// in messages and anchors relative job files, and the overrides so far.
pub(crate) type Source = (String, String, Vec<(String, String)>);

pub(crate) fn path_of(p: &str) -> PathBuf {
    PathBuf::from(p)
}

/// Check a scenario with overrides (what `Scenario.set` calls).
#[pyfunction]
fn check(py: Python<'_>, text: String, path: String, sets: Vec<(String, String)>) -> PyResult<()> {
    py.allow_threads(|| blklab_lab::overrides::build(&text, &path_of(&path), &sets).map(|_| ()))
        .map_err(err)
}

/// Read a scenario file's text (for `Scenario.load`).
#[pyfunction]
fn read_scenario(path: String) -> PyResult<String> {
    std::fs::read_to_string(&path)
        .map_err(|e| BlklabError::new_err(format!("{path}: cannot read: {e}")))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("BlklabError", m.py().get_type::<BlklabError>())?;
    m.add("FIGURES", blklab_lab::sweep::metrics::FIGURES.to_vec())?;
    m.add(
        "COMPARE_METRICS",
        blklab_lab::report::Row::METRICS[..9].to_vec(),
    )?;
    m.add("VERSION", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add_function(wrap_pyfunction!(read_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(run::run, m)?)?;
    m.add_function(wrap_pyfunction!(run::compare, m)?)?;
    m.add_function(wrap_pyfunction!(sweep::product, m)?)?;
    m.add_function(wrap_pyfunction!(sweep::plan_runs, m)?)?;
    m.add_function(wrap_pyfunction!(sweep::run_batch, m)?)?;
    m.add_class::<sweep::TuneSetup>()?;
    Ok(())
}
