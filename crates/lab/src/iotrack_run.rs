//! `blklab run --iotrack INTERVAL_MS [-x]`: the dublio/iotrack tool run beside
//! a simulation. The simulation is stepped one interval at a time
//! (`Sim::run_until` up to an observer tick, so every interval ends exactly on
//! its tick); at each tick the tool's readings are taken (`/sys/block/DEV/stat`
//! and each monitored cgroup's blk-iotrack counters) and the interval block is
//! formatted by the core's `iotrack::report`, the same code `blklab top` uses.
//!
//! What is monitored: the devices that run jobs, in scenario order, and the
//! cgroups that run jobs, in the order of their first `[[job]]`, after the root
//! (the tool's `-d`/`-g` lists). After the run come the totals: the same table
//! for the whole run (counters since the start, rates over the run's length).
//!
//! The same figures go into a JSON document (see [`json_report`]).

use std::fmt::Write as _;

use blklab_core::block::bio::DevId;
use blklab_core::block::blk_cgroup::{CgId, ROOT};
use blklab_core::block::iotrack::report::{
    dev_metrics, format_interval, metrics, CgMetrics, DevMetrics, Sample,
};
use blklab_core::Sim;
use serde_json::{json, Map, Value};

use crate::scenario::Scenario;

/// `--iotrack` settings.
#[derive(Clone, Copy, Debug)]
pub struct IotrackOpts {
    /// The tool's `-i` (ms of simulated time).
    pub interval_ms: u64,
    /// The tool's `-x` layout.
    pub extended: bool,
}

/// The readings of one tick, one `Sample` per monitored device.
#[derive(Clone, Debug)]
pub struct Tick {
    pub time_ns: u64,
    pub samples: Vec<Sample>,
}

/// What the iotrack tool saw during a run.
#[derive(Clone, Debug)]
pub struct IotrackReport {
    pub opts: IotrackOpts,
    /// Monitored devices and cgroups (root first).
    pub devices: Vec<String>,
    pub cgroups: Vec<String>,
    /// Tick 0 (all zero) and every later tick, in order.
    pub ticks: Vec<Tick>,
    /// When the run ended (the totals' length).
    pub end_ns: u64,
}

/// The devices with jobs, in device order.
pub fn monitored_devices(sc: &Scenario) -> Vec<DevId> {
    let mut v: Vec<DevId> = sc.config.jobs.iter().map(|j| j.dev).collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// The cgroups with jobs, root first, then in order of their first job.
pub fn monitored_cgroups(sc: &Scenario) -> Vec<CgId> {
    let mut v = vec![ROOT];
    for j in &sc.config.jobs {
        if !v.contains(&j.cgroup) {
            v.push(j.cgroup);
        }
    }
    v
}

pub(crate) fn take(sim: &Sim, devs: &[DevId], cgs: &[CgId], t: u64) -> Tick {
    Tick {
        time_ns: t,
        samples: devs
            .iter()
            .map(|&d| {
                let mut s = sim.iotrack_sample(d, cgs);
                s.time_ns = t;
                s
            })
            .collect(),
    }
}

/// The simulated wall clock of the tool's `Time:` line: the simulation starts
/// at the Unix epoch (UTC). The tool prints whole seconds; when the interval
/// is not a whole number of seconds the milliseconds are added so that the
/// blocks can be told apart.
pub fn time_str(ns: u64, with_ms: bool) -> String {
    let (y, m, d, hh, mm, ss, _) = crate::output::civil(ns / 1_000_000_000);
    let mut s = format!("{y:04}-{m:02}-{d:02} {hh:02}:{mm:02}:{ss:02}");
    if with_ms {
        let _ = write!(s, ".{:03}", (ns / 1_000_000) % 1000);
    }
    s
}

impl IotrackReport {
    fn with_ms(&self) -> bool {
        !self.opts.interval_ms.is_multiple_of(1000)
    }

    /// Every interval block, as the tool prints them.
    pub fn intervals_text(&self) -> String {
        let mut s = String::new();
        for w in self.ticks.windows(2) {
            s.push_str(&format_interval(
                &w[0].samples,
                &w[1].samples,
                self.opts.interval_ms as f64,
                self.opts.extended,
                &time_str(w[1].time_ns, self.with_ms()),
            ));
        }
        s
    }

    /// The whole-run table: counters since the start, rates over the run.
    pub fn totals_text(&self) -> String {
        let last = self.ticks.last().expect("tick 0 exists");
        let first = &self.ticks[0];
        let ms = self.totals_ms();
        let mut s = format!(
            "iotrack totals: cumulative since the start, rates over the whole run ({}.{:03} s)\n",
            self.end_ns / 1_000_000_000,
            (self.end_ns / 1_000_000) % 1000
        );
        s.push_str(&format_interval(
            &first.samples,
            &last.samples,
            ms,
            self.opts.extended,
            &time_str(self.end_ns, true),
        ));
        s
    }

    fn totals_ms(&self) -> f64 {
        (self.end_ns as f64 / 1e6).max(1e-6)
    }

    /// The report's JSON document: `{"iotrack": {...}}`.
    pub fn json(&self) -> Value {
        let mut intervals = Vec::new();
        for w in self.ticks.windows(2) {
            let mut v = block_json(&w[0], &w[1], self.opts.interval_ms as f64, &self.cgroups);
            v.insert("time_ms".into(), json!(w[1].time_ns / 1_000_000));
            intervals.push(Value::Object(v));
        }
        let last = self.ticks.last().expect("tick 0 exists");
        let mut totals = block_json(&self.ticks[0], last, self.totals_ms(), &self.cgroups);
        totals.insert("time_ms".into(), json!(self.end_ns / 1_000_000));
        totals.insert("elapsed_ms".into(), json!(round2(self.end_ns as f64 / 1e6)));
        json!({
            "iotrack": {
                "interval_ms": self.opts.interval_ms,
                "devices": self.devices,
                "cgroups": self.cgroups,
                "intervals": intervals,
                "totals": Value::Object(totals),
            }
        })
    }
}

/// A value as the text prints it (2 decimals), as a JSON number.
fn round2(v: f64) -> f64 {
    format!("{v:.2}").parse().unwrap_or(0.0)
}

fn dirs4<T: Copy + Into<f64>>(a: &[T; 4]) -> Value {
    json!({
        "read": round2(a[0].into()),
        "write": round2(a[1].into()),
        "other": round2(a[2].into()),
        "total": round2(a[3].into()),
    })
}

fn counts4(a: &[u64; 4]) -> Value {
    json!({"read": a[0], "write": a[1], "other": a[2], "total": a[3]})
}

fn cg_json(cgroup: &str, dev: &str, m: &CgMetrics) -> Value {
    let hits = |r: &[f64; 8]| Value::Array(r.iter().map(|v| json!(round2(*v))).collect());
    json!({
        "cgroup": cgroup,
        "device": dev,
        "ios": counts4(&m.delta_ios),
        "sectors": counts4(&m.delta_sectors),
        "q2c_ns": counts4(&m.delta_tms),
        "d2c_ns": counts4(&m.delta_dtms),
        "iops": dirs4(&m.iops),
        "mbps": dirs4(&m.mbps),
        "io_pct": dirs4(&m.io_pct),
        "byte_pct": dirs4(&m.byte_pct),
        "tm_pct": dirs4(&m.tm_pct),
        "dtm_pct": dirs4(&m.dtm_pct),
        "d2c_pct": dirs4(&m.d2c_pct),
        "ad2c_ms": dirs4(&m.ad2c_ms),
        "aq2c_ms": dirs4(&m.aq2c_ms),
        "hit_pct": {
            "read": hits(&m.hit_pct[0]),
            "write": hits(&m.hit_pct[1]),
            "other": hits(&m.hit_pct[2]),
            "total": hits(&m.hit_pct[3]),
        },
        "mean_us": round2(m.mean_us),
        "min_us": round2(m.min_us),
        "max_us": round2(m.max_us),
    })
}

fn dev_json(name: &str, m: &DevMetrics) -> Value {
    json!({
        "device": name,
        "rrqm_s": round2(m.rrqm),
        "wrqm_s": round2(m.wrqm),
        "r_s": round2(m.r),
        "w_s": round2(m.w),
        "rmb_s": round2(m.rmb),
        "wmb_s": round2(m.wmb),
        "avgrqkb": round2(m.avgrqkb),
        "avgqu_sz": round2(m.avgqu),
        "await": round2(m.await_ms),
        "r_await": round2(m.r_await),
        "w_await": round2(m.w_await),
        "svctm": 0.0,
        "util_pct": round2(m.util),
        "conc": round2(m.conc),
    })
}

/// One block (an interval or the totals) as JSON: device lines and one entry
/// per (cgroup, device), cgroup-major as in the text.
fn block_json(prev: &Tick, cur: &Tick, ms: f64, cgroups: &[String]) -> Map<String, Value> {
    let mut devs = Vec::new();
    for (p, c) in prev.samples.iter().zip(&cur.samples) {
        devs.push(dev_json(&c.dev_name, &dev_metrics(&p.dev, &c.dev, ms)));
    }
    let mut rows = Vec::new();
    for (k, name) in cgroups.iter().enumerate() {
        for (p, c) in prev.samples.iter().zip(&cur.samples) {
            let get =
                |s: &Sample, i: usize| s.cgroups.get(i).map(|x| x.1.clone()).unwrap_or_default();
            let (rp, rc) = (get(p, 0), get(c, 0));
            let (cp, cc) = (get(p, k), get(c, k));
            let m = metrics(&cp, &cc, &rp, &rc, ms);
            rows.push(cg_json(name, &c.dev_name, &m));
        }
    }
    let mut m = Map::new();
    m.insert("devices".into(), Value::Array(devs));
    m.insert("cgroups".into(), Value::Array(rows));
    m
}

/// `--show-files`: what `cat` would print, at the end of the run, for every
/// cgroup's io.stat and io.iotrack.stat and every device's stat file, in
/// `head`'s multi-file layout.
pub fn show_files(sim: &Sim) -> String {
    let mut s = String::new();
    let tree = sim.cgroups();
    for cg in tree.ids() {
        let path = &tree.get(cg).path;
        let dir = if path == "/" {
            "/sys/fs/cgroup".to_string()
        } else {
            format!("/sys/fs/cgroup{path}")
        };
        let _ = writeln!(s, "==> {dir}/io.stat <==\n{}", sim.io_stat(cg));
        let _ = writeln!(
            s,
            "==> {dir}/io.iotrack.stat <==\n{}",
            sim.iotrack_stat_file(cg)
        );
    }
    for d in 0..sim.nr_devices() as DevId {
        let _ = writeln!(
            s,
            "==> /sys/block/{}/stat <==\n{}",
            sim.device_info(d).name,
            sim.disk_stat_line(d)
        );
    }
    s
}
