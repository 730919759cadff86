//! One run watched by any set of observers: the iotrack tool (`--iotrack`),
//! the time series and the HTML report's data (`--timeseries`, `--report`),
//! fio's log files, and `--show-files` (which reads the simulator's files
//! after the run). Observers that read state between events — the tool's
//! readings, the `iotrack` table — need the run stopped at their instants:
//! the run is stepped to the next instant either of them wants
//! (`Sim::observe_at` then `Sim::run_until`, so each stop is exactly on its
//! tick), and each observer reads there. Observing changes nothing in the
//! run: the stops are events that do nothing, the readers only read.

use anyhow::Result;
use blklab_core::sim::trace::{TraceSink, Tracer};
use blklab_core::{Sim, SimConfig};

use crate::iotrack_run::{self, IotrackOpts, IotrackReport};
use crate::runner::{self, Outcome};
use crate::scenario::Scenario;
use crate::timeseries::{self, Series};

/// What watches the run.
#[derive(Clone, Copy, Debug, Default)]
pub struct Observers<'a> {
    /// The time series (CSV tables, in-memory series, fio logs).
    pub timeseries: Option<&'a timeseries::Options>,
    /// The iotrack tool and its interval.
    pub iotrack: Option<IotrackOpts>,
    /// Hand the simulator back after the run (`--show-files`).
    pub keep_sim: bool,
}

/// What the observers saw.
pub struct Observed {
    pub out: Outcome,
    pub series: Option<Series>,
    pub iotrack: Option<IotrackReport>,
    pub sim: Option<Sim>,
}

/// The next multiple of `iv` after `t`.
fn next_after(t: u64, iv: u64) -> u64 {
    (t / iv + 1).saturating_mul(iv)
}

/// Run the scenario with `obs` watching.
pub fn run(
    sc: &Scenario,
    cfg: &SimConfig,
    trace: Option<Box<dyn TraceSink>>,
    obs: &Observers<'_>,
) -> Result<Observed> {
    if let Some(o) = &obs.iotrack {
        anyhow::ensure!(
            o.interval_ms > 0,
            "--iotrack: the interval must be at least 1 ms"
        );
    }
    let (session, probe) = match obs.timeseries {
        Some(o) => {
            let (s, p) = timeseries::Session::new(sc, cfg, o)?;
            (Some(s), p)
        }
        None => (None, None),
    };
    let mut sim = runner::prepare_with(sc, cfg, Tracer::with_probe(trace, probe))?;
    let iot_iv = obs.iotrack.map(|o| o.interval_ms.saturating_mul(1_000_000));
    let ts_iv = session.as_ref().and_then(|s| s.interval_ns());
    // blk-iotrack's figures are read by the tool, the time series' readings
    // and --show-files (io.iotrack.stat); with none of them, nothing reads it
    if iot_iv.is_none() && ts_iv.is_none() && !obs.keep_sim {
        sim.set_iotrack_counting(false);
    }
    // one reading of blk-iotrack per stop serves the tool and the series
    let devs = iotrack_run::monitored_devices(sc);
    let cgs = iotrack_run::monitored_cgroups(sc);
    let read = |sim: &Sim, t: u64| iotrack_run::take(sim, &devs, &cgs, t);
    let mut ticks = Vec::new();
    if iot_iv.is_some() || ts_iv.is_some() {
        let start = read(&sim, 0);
        if let (Some(s), Some(_)) = (&session, ts_iv) {
            s.tick(0, start.samples.clone());
        }
        if iot_iv.is_some() {
            ticks.push(start);
        }
    }
    let (mut next_iot, mut next_ts) = (iot_iv, ts_iv);
    while let Some(t) = [next_iot, next_ts].into_iter().flatten().min() {
        // an observer event at the tick: the loop stops exactly there, and a
        // job sleeping past it cannot jump the clock over it
        sim.observe_at(t);
        let more = sim.run_until(t);
        // the tool reads at its tick even when the run ended before it (its
        // last block then covers the end of the run); the series' last
        // interval ends with the run (`Session::finish`)
        let tool = next_iot == Some(t);
        let series = next_ts == Some(t) && more;
        if tool || series {
            let tick = read(&sim, t);
            if let (true, Some(s)) = (series, &session) {
                s.tick(t, tick.samples.clone());
            }
            if tool {
                ticks.push(tick);
            }
        }
        if next_iot == Some(t) {
            next_iot = iot_iv.map(|iv| next_after(t, iv));
        }
        if next_ts == Some(t) {
            next_ts = ts_iv.map(|iv| next_after(t, iv));
        }
        if !more {
            break;
        }
    }
    let result = sim.run();
    let series = match session {
        Some(s) => {
            let end = sim.now();
            // the last reading only for the tables (fio logs need none)
            let last = match ts_iv {
                Some(_) => read(&sim, end).samples,
                None => Vec::new(),
            };
            s.finish(sc, end, last, &result)?
        }
        None => None,
    };
    let iotrack = obs.iotrack.map(|opts| IotrackReport {
        opts,
        devices: devs
            .iter()
            .map(|&d| sim.device_info(d).name.clone())
            .collect(),
        cgroups: cgs
            .iter()
            .map(|&c| sim.cgroups().get(c).path.clone())
            .collect(),
        ticks,
        end_ns: result.end_time,
    });
    let out = runner::outcome(sc, &sim, result);
    let sim = obs.keep_sim.then_some(sim);
    Ok(Observed {
        out,
        series,
        iotrack,
        sim,
    })
}

/// Run the scenario with the time-series recorder listening; returns fio's
/// results and the in-memory series (when `opts.keep`). The CSV files are
/// complete when this returns Ok.
pub fn timeseries(
    sc: &Scenario,
    cfg: &SimConfig,
    trace: Option<Box<dyn TraceSink>>,
    opts: &timeseries::Options,
) -> Result<(Outcome, Option<Series>)> {
    let o = run(
        sc,
        cfg,
        trace,
        &Observers {
            timeseries: Some(opts),
            ..Default::default()
        },
    )?;
    Ok((o.out, o.series))
}

/// Run the scenario with the iotrack tool watching; returns fio's results,
/// the tool's readings and the simulator (for `--show-files`).
pub fn iotrack(
    sc: &Scenario,
    cfg: &SimConfig,
    trace: Option<Box<dyn TraceSink>>,
    opts: IotrackOpts,
) -> Result<(Outcome, IotrackReport, Sim)> {
    let o = run(
        sc,
        cfg,
        trace,
        &Observers {
            iotrack: Some(opts),
            keep_sim: true,
            ..Default::default()
        },
    )?;
    let report = o.iotrack.expect("the tool watched");
    Ok((o.out, report, o.sim.expect("kept")))
}
