//! The probe's listener: turns the simulator's samples into table rows.
//! iocost rows go out as each period ends; the per-interval tables are
//! accumulated for the current interval only (counters, a latency histogram
//! per cgroup and direction) and emitted when a sample shows that the
//! interval is over, so memory does not grow with the I/Os completed.

use std::collections::BTreeMap;

use anyhow::Result;
use blklab_core::block::iotrack::report::Sample;
use blklab_core::sim::probe::{FioIo, IocgPeriod, IocostPeriod, Probe};
use blklab_core::SimConfig;
use blklab_fio::stats::PlatHist;

use super::tables::*;
use super::{iotrack_rows, Cell, RowSink};

use blklab_core::block::iocost::{VTIME_PER_USEC, WEIGHT_ONE};

/// A device's request count over the current interval.
#[derive(Clone, Debug, Default)]
struct DevAcc {
    depth: u32,
    queue_depth: u32,
    since_ns: u64,
    busy_ns: u64,
    area: u128,
    max_depth: u32,
}

#[derive(Clone, Debug, Default)]
struct ThrotlAcc {
    queued: i64,
    throttled: u64,
    dispatched: u64,
    wait_sum_ns: u64,
    wait_max_ns: u64,
}

#[derive(Clone, Debug, Default)]
struct IoAcc {
    ios: u64,
    bytes: u64,
    clat_sum_ns: u64,
    clat_max_ns: u64,
    hist: PlatHist,
}

pub struct Recorder {
    interval_ns: u64,
    /// Start of the current interval, and its number.
    start_ns: u64,
    tick: u64,
    devices: Vec<String>,
    cgroups: Vec<String>,
    /// The cgroup of each job.
    job_cg: Vec<u32>,
    dev: Vec<DevAcc>,
    throtl: BTreeMap<(u16, u32), ThrotlAcc>,
    io: BTreeMap<(u32, u8), IoAcc>,
    /// Whole-run clat histograms (the CDF table).
    whole: BTreeMap<(u32, u8), PlatHist>,
    sinks: Vec<Box<dyn RowSink>>,
    /// The length of the last iocost period seen (its iocgs' rows follow it).
    last_period_us: u64,
    /// blk-iotrack's counters at the start of the current interval.
    iotrack_prev: Option<(u64, Vec<Sample>)>,
    iotrack_tick: u64,
}

fn ddir_name(d: u8) -> &'static str {
    if d == 0 {
        "read"
    } else {
        "write"
    }
}

fn secs(ns: u64) -> Cell {
    Cell::Float(ns as f64 / 1e9)
}

fn ms(ns: u64) -> Cell {
    Cell::Float(ns as f64 / 1e6)
}

fn us(ns: u64) -> Cell {
    Cell::Float(ns as f64 / 1e3)
}

impl Recorder {
    pub fn new(cfg: &SimConfig, interval_ns: u64, sinks: Vec<Box<dyn RowSink>>) -> Recorder {
        let devices: Vec<String> = cfg.devices.iter().map(|d| d.info.name.clone()).collect();
        let cgroups = (0..cfg.cgroups.len())
            .map(|i| cfg.cgroups.get(i as u32).path.clone())
            .collect();
        Recorder {
            interval_ns,
            start_ns: 0,
            tick: 0,
            dev: cfg
                .devices
                .iter()
                .map(|d| DevAcc {
                    queue_depth: d.info.queue_depth,
                    ..Default::default()
                })
                .collect(),
            devices,
            cgroups,
            job_cg: cfg.jobs.iter().map(|j| j.cgroup).collect(),
            throtl: BTreeMap::new(),
            io: BTreeMap::new(),
            whole: BTreeMap::new(),
            sinks,
            last_period_us: 0,
            iotrack_prev: None,
            iotrack_tick: 0,
        }
    }

    fn emit(&mut self, table: usize, tick: u64, cells: &[Cell]) {
        for s in self.sinks.iter_mut() {
            s.row(table, tick, cells);
        }
    }

    fn cg(&self, id: u32) -> Cell {
        Cell::Text(self.cgroups.get(id as usize).cloned().unwrap_or_default())
    }

    pub fn sample(&mut self, t: u64, p: &Probe<'_>) {
        self.roll(t);
        match *p {
            Probe::IocostPeriod(ref s) => self.iocost_period(t, s),
            Probe::IocgPeriod(ref s) => self.iocg_period(t, s),
            Probe::ThrotlQueue { dev, cg, .. } => {
                let a = self.throtl.entry((dev, cg)).or_default();
                a.queued += 1;
                a.throttled += 1;
            }
            Probe::ThrotlDispatch {
                dev, cg, wait_ns, ..
            } => {
                let a = self.throtl.entry((dev, cg)).or_default();
                a.queued -= 1;
                a.dispatched += 1;
                a.wait_sum_ns += wait_ns;
                a.wait_max_ns = a.wait_max_ns.max(wait_ns);
            }
            Probe::DeviceDepth {
                dev,
                in_device,
                queue_depth,
            } => {
                let d = &mut self.dev[dev as usize];
                advance(d, t);
                d.depth = in_device;
                d.queue_depth = queue_depth;
                d.max_depth = d.max_depth.max(in_device);
            }
            Probe::FioIo(ref io) => self.fio_io(io),
        }
    }

    fn iocost_period(&mut self, t: u64, s: &IocostPeriod<'_>) {
        self.last_period_us = s.period_us;
        let row = [
            secs(t),
            Cell::Text(s.dev.to_string()),
            Cell::Int(s.period as i64),
            Cell::Int(s.period_us as i64),
            Cell::Float(s.vrate as f64 * 100.0 / VTIME_PER_USEC as f64),
            Cell::Int(s.busy_level as i64),
            Cell::Int(s.missed_ppm[0] as i64),
            Cell::Int(s.missed_ppm[1] as i64),
            Cell::Int(s.rq_wait_pct as i64),
            Cell::Int(s.nr_lagging as i64),
            Cell::Int(s.nr_shortages as i64),
            Cell::Int(s.nr_active as i64),
            Cell::Int(s.nr_done as i64),
            Cell::Int(s.usage_us as i64),
        ];
        self.emit(IOCOST_PERIOD, s.period, &row);
    }

    fn iocg_period(&mut self, t: u64, s: &IocgPeriod<'_>) {
        // usage as iocost_monitor.py shows it: of the period's length
        let period_us = self.last_period_us.max(1);
        let row = [
            secs(t),
            Cell::Text(s.dev.to_string()),
            Cell::Text(s.cgroup.to_string()),
            Cell::Int(s.period as i64),
            Cell::Float(s.active as f64 / WEIGHT_ONE as f64),
            Cell::Float(s.inuse as f64 / WEIGHT_ONE as f64),
            Cell::Float(s.hweight_active as f64 * 100.0 / WEIGHT_ONE as f64),
            Cell::Float(s.hweight_inuse as f64 * 100.0 / WEIGHT_ONE as f64),
            Cell::Float(s.usage_us as f64 * 100.0 / period_us as f64),
            ms(s.debt_ns),
            ms(s.delay_ns),
        ];
        self.emit(IOCOST_CGROUP, s.period, &row);
    }

    fn fio_io(&mut self, io: &FioIo) {
        let cg = self.job_cg.get(io.job as usize).copied().unwrap_or(0);
        let a = self.io.entry((cg, io.ddir)).or_default();
        a.ios += 1;
        a.bytes += io.bytes as u64;
        a.clat_sum_ns += io.clat_ns;
        a.clat_max_ns = a.clat_max_ns.max(io.clat_ns);
        a.hist.add(io.clat_ns);
        self.whole.entry((cg, io.ddir)).or_default().add(io.clat_ns);
    }

    /// Emit every interval that ended at or before `t`.
    fn roll(&mut self, t: u64) {
        while t >= self.start_ns + self.interval_ns {
            let end = self.start_ns + self.interval_ns;
            self.close_interval(end);
        }
    }

    fn close_interval(&mut self, end: u64) {
        let len = end - self.start_ns;
        let tick = self.tick;
        let mut rows: Vec<(usize, Vec<Cell>)> = Vec::new();
        for (i, d) in self.dev.iter_mut().enumerate() {
            advance(d, end);
            rows.push((
                DEVICE,
                vec![
                    secs(end),
                    Cell::Text(self.devices[i].clone()),
                    Cell::Float(d.busy_ns as f64 * 100.0 / len as f64),
                    Cell::Float(d.area as f64 / len as f64),
                    Cell::Int(d.max_depth as i64),
                    Cell::Int(d.queue_depth as i64),
                ],
            ));
            d.busy_ns = 0;
            d.area = 0;
            d.max_depth = d.depth;
        }
        for (&(dev, cg), a) in self.throtl.iter_mut() {
            let avg = if a.dispatched > 0 {
                a.wait_sum_ns / a.dispatched
            } else {
                0
            };
            rows.push((
                THROTTLE,
                vec![
                    secs(end),
                    Cell::Text(self.devices[dev as usize].clone()),
                    Cell::Text(self.cgroups[cg as usize].clone()),
                    Cell::Int(a.queued.max(0)),
                    Cell::Int(a.throttled as i64),
                    Cell::Int(a.dispatched as i64),
                    ms(avg),
                    ms(a.wait_max_ns),
                ],
            ));
            *a = ThrotlAcc {
                queued: a.queued,
                ..Default::default()
            };
        }
        for (&(cg, ddir), a) in self.io.iter() {
            let p = a.hist.percentiles(&[50.0, 90.0, 99.0]);
            let pct = |i: usize| us(p.get(i).map_or(0, |x| x.1));
            let secs_len = len as f64 / 1e9;
            rows.push((
                CGROUP_IO,
                vec![
                    secs(end),
                    Cell::Text(self.cgroups[cg as usize].clone()),
                    Cell::Text(ddir_name(ddir).into()),
                    Cell::Int(a.ios as i64),
                    Cell::Float(a.ios as f64 / secs_len),
                    Cell::Float(a.bytes as f64 / 1048576.0 / secs_len),
                    us(a.clat_sum_ns / a.ios.max(1)),
                    pct(0),
                    pct(1),
                    pct(2),
                    us(a.clat_max_ns),
                ],
            ));
        }
        // a cgroup that stops completing I/O keeps a row of zeros: the plots
        // show the drop rather than a line across the gap
        for a in self.io.values_mut() {
            *a = IoAcc::default();
        }
        for (table, row) in rows {
            self.emit(table, tick, &row);
        }
        self.start_ns = end;
        self.tick += 1;
    }

    /// blk-iotrack's counters read at `t`, the start of the run or the end
    /// of an interval: the `iotrack` rows of the interval that ends there.
    pub fn iotrack_tick(&mut self, t: u64, cur: Vec<Sample>) {
        self.roll(t);
        if let Some((t0, prev)) = self.iotrack_prev.take() {
            if t > t0 {
                let tick = self.iotrack_tick;
                for row in iotrack_rows::rows(&prev, &cur, t, t - t0) {
                    self.emit(IOTRACK, tick, &row);
                }
                self.iotrack_tick += 1;
            }
        }
        self.iotrack_prev = Some((t, cur));
    }

    /// The run ended at `end_ns` with blk-iotrack's counters `iotrack_last`:
    /// the last (partial) interval, the CDF table, and the sinks' own ends.
    pub fn finish(&mut self, end_ns: u64, iotrack_last: Vec<Sample>) -> Result<()> {
        self.roll(end_ns);
        // a last interval of a few ms would turn a handful of completions
        // into a spike of rates: it is kept only when at least half as long
        // as the others
        if end_ns - self.start_ns >= self.interval_ns / 2 {
            self.close_interval(end_ns);
        }
        // the iotrack rows of the interval that ends with the run, when the
        // other tables have it
        if self.start_ns == end_ns && self.iotrack_prev.as_ref().is_some_and(|p| p.0 < end_ns) {
            self.iotrack_tick(end_ns, iotrack_last);
        }
        let mut rows = Vec::new();
        for (&(cg, ddir), h) in &self.whole {
            let total = h.total().max(1) as f64;
            let mut cum = 0u64;
            for (val_ns, n) in h.bins() {
                cum += n;
                rows.push(vec![
                    self.cg(cg),
                    Cell::Text(ddir_name(ddir).into()),
                    us(val_ns),
                    Cell::Float(cum as f64 / total),
                ]);
            }
        }
        for (i, r) in rows.iter().enumerate() {
            self.emit(LATENCY_CDF, i as u64, r);
        }
        let mut first = Ok(());
        for s in self.sinks.iter_mut() {
            let r = s.finish();
            if first.is_ok() {
                first = r;
            }
        }
        first
    }
}

/// Account the device's request count from its last change up to `t`.
fn advance(d: &mut DevAcc, t: u64) {
    let dt = t.saturating_sub(d.since_ns);
    if d.depth > 0 {
        d.busy_ns += dt;
    }
    d.area += d.depth as u128 * dt as u128;
    d.since_ns = t;
}
