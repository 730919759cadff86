//! Controller time series: per iocost period, per throttle group, per device
//! and per cgroup, sampled from the simulator's probe (`sim::probe`) while it
//! runs. Rows stream to sinks as they are complete: CSV files
//! (`blklab run --timeseries DIR`), and a bounded in-memory copy
//! ([`Series`], the HTML report's data and the library's API).
//!
//! Observing does not change the run: the recorder only reads the samples
//! it is handed, schedules no events and draws no random numbers.

mod csv_dir;
mod iotrack_rows;
mod memory;
mod recorder;
pub mod tables;

use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;

use anyhow::Result;
use blklab_core::block::iotrack::report::Sample;
use blklab_core::sim::probe::{Probe, ProbeSink};
use blklab_core::{RunResult, SimConfig};

pub use csv_dir::CsvDir;
pub use memory::{Series, Table};
pub use recorder::Recorder;
pub use tables::{ColumnSpec, TableSpec, TABLES};

use crate::fio_logs::{self, FioLogs};
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
    /// Write the fio logs the jobs ask for (`write_bw_log`, ...) into this
    /// directory (`crate::fio_logs`).
    pub fio_log_dir: Option<PathBuf>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            interval_ns: 100_000_000,
            csv_dir: None,
            keep: true,
            fio_log_dir: None,
        }
    }
}

/// The probe handed to the simulator: the recorder behind a shared handle,
/// so that the caller gets it back after the run.
struct Handle(Rc<RefCell<Recorder>>);

impl ProbeSink for Handle {
    fn sample(&mut self, t: u64, p: &Probe<'_>) {
        self.0.borrow_mut().sample(t, p);
    }
}

/// Several listeners behind the simulator's one probe.
struct Fanout(Vec<Box<dyn ProbeSink>>);

impl ProbeSink for Fanout {
    fn sample(&mut self, t: u64, p: &Probe<'_>) {
        for s in self.0.iter_mut() {
            s.sample(t, p);
        }
    }
}

/// The listeners of one run: the recorder and its sinks, the fio logs.
/// [`Session::new`] hands back the probe to give the simulator;
/// [`crate::observe::run`] steps the run to each interval's end and calls
/// [`Session::tick`] there (the `iotrack` table reads blk-iotrack's counters,
/// which no probe carries), then [`Session::finish`].
pub struct Session {
    interval_ns: u64,
    rec: Option<Rc<RefCell<Recorder>>>,
    memory: Option<Rc<RefCell<Series>>>,
    logs: Option<Rc<RefCell<FioLogs>>>,
}

impl Session {
    /// Open the sinks `opts` asks for; returns the session and the probe.
    pub fn new(
        sc: &Scenario,
        cfg: &SimConfig,
        opts: &Options,
    ) -> Result<(Session, Option<Box<dyn ProbeSink>>)> {
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
        let mut probes: Vec<Box<dyn ProbeSink>> = Vec::new();
        let rec = (!sinks.is_empty())
            .then(|| Rc::new(RefCell::new(Recorder::new(cfg, opts.interval_ns, sinks))));
        if let Some(r) = &rec {
            probes.push(Box::new(Handle(r.clone())));
        }
        let logs = match &opts.fio_log_dir {
            Some(d) => FioLogs::create(sc, d)?.map(|l| Rc::new(RefCell::new(l))),
            None => None,
        };
        if let Some(l) = &logs {
            probes.push(Box::new(fio_logs::Handle(l.clone())));
        }
        let probe: Option<Box<dyn ProbeSink>> =
            (!probes.is_empty()).then(|| Box::new(Fanout(probes)) as Box<dyn ProbeSink>);
        let session = Session {
            interval_ns: opts.interval_ns,
            rec,
            memory,
            logs,
        };
        Ok((session, probe))
    }

    /// The instants the session wants the run stopped at (every interval's
    /// end), or None when no table is written (fio logs only).
    pub fn interval_ns(&self) -> Option<u64> {
        self.rec.is_some().then_some(self.interval_ns)
    }

    /// The run stands at `t` (0, or the end of an interval), where the
    /// iotrack tool's reading (`iotrack_run::take`) is `iotrack`.
    pub fn tick(&self, t: u64, iotrack: Vec<Sample>) {
        if let Some(r) = &self.rec {
            r.borrow_mut().iotrack_tick(t, iotrack);
        }
    }

    /// The run is over at `end_ns` with the iotrack reading `iotrack`: the
    /// last interval, the CDF, the fio logs. The CSV files are complete when
    /// this returns Ok.
    pub fn finish(
        self,
        sc: &Scenario,
        end_ns: u64,
        iotrack: Vec<Sample>,
        result: &RunResult,
    ) -> Result<Option<Series>> {
        if let Some(r) = &self.rec {
            r.borrow_mut().finish(end_ns, iotrack)?;
        }
        if let Some(l) = &self.logs {
            l.borrow_mut().finish(sc, result)?;
        }
        Ok(self.memory.map(|m| std::mem::take(&mut *m.borrow_mut())))
    }
}
