//! Controller time series: per iocost period, per throttle group, per device
//! and per cgroup, sampled from the simulator's probe (`sim::probe`) while it
//! runs. Rows stream to sinks as they are complete: CSV files
//! (`blklab run --timeseries DIR`), and a bounded in-memory copy
//! ([`Series`], the HTML report's data and the library's API).
//!
//! Observing does not change the run: the recorder only reads the samples
//! it is handed, schedules no events and draws no random numbers.

mod csv_dir;
mod memory;
mod recorder;
pub mod tables;

use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;

use anyhow::Result;
use blklab_core::sim::trace::{TraceSink, Tracer};
use blklab_core::SimConfig;

pub use csv_dir::CsvDir;
pub use memory::{Series, Table};
pub use recorder::Recorder;
pub use tables::{ColumnSpec, TableSpec, TABLES};

use crate::runner::{self, Outcome};
use crate::scenario::Scenario;

/// One value of a row.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    Int(i64),
    Float(f64),
    Text(String),
}

impl Cell {
    /// The value as a number (text: NaN).
    pub fn as_f64(&self) -> f64 {
        match self {
            Cell::Int(i) => *i as f64,
            Cell::Float(f) => *f,
            Cell::Text(_) => f64::NAN,
        }
    }
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Cell::Text(s) => Some(s),
            _ => None,
        }
    }
}

/// Where finished rows go.
pub trait RowSink {
    /// A row of table `table` (an index into [`TABLES`]); `tick` orders rows
    /// in time (the interval or period number) for sinks that thin them out.
    fn row(&mut self, table: usize, tick: u64, cells: &[Cell]);
    /// The run is over: flush, and report the first error met while streaming.
    fn finish(&mut self) -> Result<()>;
}

/// `--timeseries` settings.
#[derive(Clone, Debug)]
pub struct Options {
    /// The length of the per-interval tables' intervals, ns.
    pub interval_ns: u64,
    /// Write the CSV files into this directory.
    pub csv_dir: Option<PathBuf>,
    /// Keep a copy in memory (at most [`memory::MAX_TICKS`] instants per table).
    pub keep: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            interval_ns: 100_000_000,
            csv_dir: None,
            keep: true,
        }
    }
}

/// The probe handed to the simulator: the recorder behind a shared handle,
/// so that the caller gets it back after the run.
struct Handle(Rc<RefCell<Recorder>>);

impl blklab_core::sim::probe::ProbeSink for Handle {
    fn sample(&mut self, t: u64, p: &blklab_core::sim::probe::Probe<'_>) {
        self.0.borrow_mut().sample(t, p);
    }
}

/// Run the scenario with the recorder listening; returns fio's results and
/// the in-memory series (when `opts.keep`). The CSV files are complete when
/// this returns Ok.
pub fn run(
    sc: &Scenario,
    cfg: &SimConfig,
    trace: Option<Box<dyn TraceSink>>,
    opts: &Options,
) -> Result<(Outcome, Option<Series>)> {
    anyhow::ensure!(
        opts.interval_ns > 0,
        "--timeseries: the interval must be at least 1 ms"
    );
    let mut sinks: Vec<Box<dyn RowSink>> = Vec::new();
    if let Some(dir) = &opts.csv_dir {
        sinks.push(Box::new(CsvDir::create(dir)?));
    }
    let memory = opts.keep.then(|| Rc::new(RefCell::new(Series::default())));
    if let Some(m) = &memory {
        sinks.push(Box::new(memory::Shared(m.clone())));
    }
    let rec = Rc::new(RefCell::new(Recorder::new(cfg, opts.interval_ns, sinks)));
    let tracer = Tracer::with_probe(trace, Some(Box::new(Handle(rec.clone()))));
    let mut sim = runner::prepare_with(sc, cfg, tracer)?;
    let result = sim.run();
    let end = sim.now();
    rec.borrow_mut().finish(end)?;
    let out = runner::outcome(sc, &sim, result);
    drop(sim);
    let series = memory.map(|m| std::mem::take(&mut *m.borrow_mut()));
    Ok((out, series))
}
