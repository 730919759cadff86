//! The fit of a loop device bound to a file whose pages are in memory (a
//! tmpfs file, or a cached file on a disk file system without direct I/O),
//! on a host with CPUs: the simulator's `kind = "loop"`, `backing = "tmpfs"`
//! or `"file"` device, whose worker is a kernel-thread task holding a CPU,
//! and `[host] cpus`.
//!
//! Such a device has no service time of its own: a request costs the CPU
//! time of the loop worker (`loop_handle_cmd` → `lo_rw_aio` → the tmpfs
//! file's read_iter/write_iter, a copy to or from its page-cache pages) and
//! the submitter's (fio's submit and reap), on the host's CPUs. So:
//!
//! * `worker_ns_per_kib` from the big sequential read block at QD1: one
//!   worker copies its `max_sectors_kb` requests one after another, so the
//!   bandwidth is `request / (worker_ns + KiB × worker_ns_per_kib)`.
//! * `worker_ns` from 4 KiB random reads at QD64: the device is CPU-bound
//!   there, fio on one CPU and the worker on another (a tmpfs loop here:
//!   274 k IOPS with fio's slat 2.6 µs, 3.64 µs per I/O for each side), and
//!   the slower of the two sets the rate; the worker's share is what the
//!   rate leaves beyond its copy of 4 KiB.
//! * `worker_write_ns` likewise from the 4 KiB random writes at QD64, when
//!   the writes were measured and cost the worker more than the reads: a
//!   disk file system's buffered writes (a cached ext4 file here: 162k
//!   random write IOPS against 248k reads at QD64).
//! * `wake_ns` and `wake_tail_ns` from the QD1 clat mean and p99: at QD1
//!   every I/O wakes the sleeping worker and then the sleeping fio onto an
//!   idle CPU (counted with perf: 0.99 worker wake-ups per I/O at QD1, 0.03
//!   at QD64), and how long an idle CPU takes to run a woken task varies
//!   with the idle state it left: a constant plus an exponential tail, the
//!   tail drawn at each wake-up.
//!
//! Each number is set by simulation (the job run on the model until the
//! figure is the measured one), since the simulator's own costs (reap,
//! the run queue) sit between the parameter and the figure.

use blklab_core::drivers::loop_dev::LoopSpec;
use blklab_core::drivers::ModelSpec;
use blklab_core::sim::background::Background;
use blklab_core::sim::host_cpus::{HostCpus, DEFAULT_WAKE_NS};

use crate::fio_run::{FioResult, Measured};
use crate::plan::{self, Job};
use crate::sim_run::HostCosts;
use crate::stall_fit::fit_stalls;

/// The most any fitted cost may be (the scenario format's bound, 1 s).
const MAX_NS: f64 = 1e9;

/// The file under a loop device whose speed is CPU time (its worker's copy
/// to or from the file's pages, and fio's costs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoopFile {
    /// A file on tmpfs (`backing = "tmpfs"`).
    Tmpfs,
    /// A file on a disk file system, without direct I/O (`backing = "file"`).
    Cached,
}

impl LoopFile {
    /// The scenario's `backing` value.
    pub fn backing(self) -> &'static str {
        match self {
            LoopFile::Tmpfs => "tmpfs",
            LoopFile::Cached => "file",
        }
    }
}

/// The worker's costs (ns): per request and per KiB, and a write's per
/// request when it differs (writes share the per-KiB cost: see the fit).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WorkerCosts {
    pub worker_ns: u64,
    pub worker_ns_per_kib: u64,
    pub worker_write_ns: Option<u64>,
}

/// The loop model over `file` with the worker's costs `c`.
pub fn loop_model(file: LoopFile, c: WorkerCosts) -> ModelSpec {
    ModelSpec::Loop(LoopSpec {
        backing: Some(file.backing().into()),
        worker_ns: c.worker_ns as i64,
        worker_ns_per_kib: c.worker_ns_per_kib as i64,
        worker_write_ns: c.worker_write_ns.map(|v| v as i64),
        worker_write_ns_per_kib: None,
        backend: None,
    })
}

/// The tmpfs loop model with `worker_ns` and `worker_ns_per_kib`.
pub fn tmpfs_loop(worker_ns: u64, worker_ns_per_kib: u64) -> ModelSpec {
    let c = WorkerCosts {
        worker_ns,
        worker_ns_per_kib,
        ..WorkerCosts::default()
    };
    loop_model(LoopFile::Tmpfs, c)
}

/// What the loop fit found.
#[derive(Debug, Clone)]
pub struct LoopFit {
    pub file: LoopFile,
    pub costs: WorkerCosts,
    /// The run's costs with the host's CPUs and the fitted wake-up costs.
    pub host: HostCosts,
}

impl LoopFit {
    pub fn model(&self) -> ModelSpec {
        loop_model(self.file, self.costs)
    }
}

type SimFn<'a> = dyn Fn(&ModelSpec, &HostCosts, &Job) -> Result<FioResult, String> + 'a;

fn clamp_ns(x: f64) -> u64 {
    x.round().clamp(0.0, MAX_NS) as u64
}

/// The first estimates, by hand from the figures (the simulation then
/// corrects them): per KiB, the big read block's time per byte
/// (`1024 / bandwidth`: the copy is the request's whole cost); per
/// request, QD64's time per I/O (`1 / IOPS`, the worker being the busier
/// side) less its copy of 4 KiB.
pub fn first_estimates(big_read_bps: f64, q64_iops: f64) -> (u64, u64) {
    let per_kib = if big_read_bps > 0.0 {
        1024.0 / big_read_bps * 1e9
    } else {
        0.0
    };
    let worker = if q64_iops > 0.0 {
        1e9 / q64_iops - 4.0 * per_kib
    } else {
        0.0
    };
    (clamp_ns(worker), clamp_ns(per_kib))
}

struct Fitter<'a> {
    sim: &'a SimFn<'a>,
    file: LoopFile,
    costs: WorkerCosts,
    host: HostCosts,
}

/// Which direction's costs a step moves.
#[derive(Clone, Copy)]
enum Dir {
    Read,
    Write,
}

impl Fitter<'_> {
    fn run(&self, j: &Job) -> Result<FioResult, String> {
        (self.sim)(&loop_model(self.file, self.costs), &self.host, j)
    }

    /// `d`'s per-request cost; a write's starts at the read's.
    fn base_ns(&mut self, d: Dir) -> &mut u64 {
        let c = &mut self.costs;
        match d {
            Dir::Read => &mut c.worker_ns,
            Dir::Write => c.worker_write_ns.get_or_insert(c.worker_ns),
        }
    }

    /// Whether job `j` runs on the model within 5 % of `real_iops`.
    fn matches_iops(&self, j: &Job, real_iops: f64) -> Result<bool, String> {
        let s = self.run(j)?.main().iops;
        Ok(real_iops > 0.0 && (s / real_iops - 1.0).abs() <= 0.05)
    }

    /// `d`'s per-request cost until QD64's IOPS of job `j` are the measured
    /// ones: the per-I/O time moves by the difference (the worker sets the
    /// rate).
    fn fit_worker(&mut self, j: &Job, d: Dir, real_iops: f64) -> Result<(), String> {
        for _ in 0..4 {
            let s = self.run(j)?.main().iops;
            if s <= 0.0 || real_iops <= 0.0 {
                break;
            }
            let diff = 1e9 / real_iops - 1e9 / s;
            let base = self.base_ns(d);
            let next = clamp_ns(*base as f64 + diff);
            if next == *base {
                break;
            }
            *base = next;
        }
        Ok(())
    }

    /// The per-KiB cost until the big block `j`'s bandwidth is the
    /// measured one: the request's time moves by the difference, spread
    /// over its KiB.
    fn fit_per_kib(&mut self, j: &Job, real_bps: f64, req_kib: f64) -> Result<(), String> {
        let req_bytes = req_kib * 1024.0;
        for _ in 0..4 {
            let s = self.run(j)?.main().bw_bytes_per_s;
            if s <= 0.0 || real_bps <= 0.0 {
                break;
            }
            let d_ns = (req_bytes / real_bps - req_bytes / s) * 1e9;
            let per_kib = &mut self.costs.worker_ns_per_kib;
            let next = clamp_ns(*per_kib as f64 + d_ns / req_kib);
            if next == *per_kib {
                break;
            }
            *per_kib = next;
        }
        Ok(())
    }

    /// QD1's clat mean and p99 (ns) on the model with wake costs `b`, `t`.
    fn q1_at(&mut self, j: &Job, b: u64, t: u64) -> Result<(f64, f64), String> {
        self.host.cpu.cpus.wake_ns = b;
        self.host.cpu.cpus.wake_tail_ns = t;
        let r = self.run(j)?;
        let d = r.main();
        Ok((d.clat_mean_ns, d.pct_ns(99.0)))
    }

    /// `wake_tail_ns` from the spread of QD1's clat (p99 − mean), then
    /// `wake_ns` from its mean, by secant steps on the model: the tail
    /// widens the spread and raises the mean, the constant moves the mean
    /// alone. The mean comes first: the tail may not exceed what the mean
    /// leaves with `wake_ns` = 0 (a loaded host's QD1 p99 of milliseconds,
    /// other work holding the CPUs, is not a wake-up's).
    fn fit_wake(&mut self, j: &Job, real_mean: f64, real_p99: f64) -> Result<(), String> {
        let b0 = DEFAULT_WAKE_NS;
        let (probe, step) = (5_000u64, 2_000u64);
        // per ns of tail: spread and mean
        let (m0, p0) = self.q1_at(j, b0, 0)?;
        let (m1, p1) = self.q1_at(j, b0, probe)?;
        let spread_per_ns = ((p1 - m1) - (p0 - m0)) / probe as f64;
        let mean_per_tail_ns = (m1 - m0) / probe as f64;
        let want = (real_p99 - real_mean).max(0.0);
        let mut t = 0u64;
        if spread_per_ns > 0.0 && want > p0 - m0 {
            t = clamp_ns((want - (p0 - m0)) / spread_per_ns);
        }
        // per ns of constant, with that tail: the mean (with no tail the
        // request may complete inside the submit call, which no wake-up
        // cost changes)
        let (mut m3, _) = self.q1_at(j, b0, t)?;
        let (m4, _) = self.q1_at(j, b0 + step, t)?;
        let mean_per_ns = (m4 - m3) / step as f64;
        if mean_per_ns <= 0.0 {
            self.host.cpu.cpus.wake_ns = b0;
            self.host.cpu.cpus.wake_tail_ns = t;
            return Ok(());
        }
        let mean_at_no_wake = m3 - mean_per_ns * b0 as f64;
        if mean_at_no_wake > real_mean && mean_per_tail_ns > 0.0 {
            let cut = (mean_at_no_wake - real_mean) / mean_per_tail_ns;
            t = clamp_ns(t as f64 - cut);
            m3 = self.q1_at(j, b0, t)?.0;
        }
        self.host.cpu.cpus.wake_ns = clamp_ns(b0 as f64 + (real_mean - m3) / mean_per_ns);
        self.host.cpu.cpus.wake_tail_ns = t;
        Ok(())
    }
}

/// Fit the loop device over `file` on a host of `cpus` CPUs; `base`
/// carries the submitter's costs already fitted (`submit_ns`, the device's
/// `idle_wake_ns`).
#[allow(clippy::too_many_arguments)] // the fit's inputs, each of its own kind
pub fn fit_file_loop(
    m: &Measured,
    file: LoopFile,
    cpus: u32,
    base: &HostCosts,
    max_sectors_kb: u32,
    jobs: &[Job],
    simulate: &SimFn,
    notes: &mut Vec<String>,
) -> Result<LoopFit, String> {
    let get = |id: &str| m.get(id).map(FioResult::main);
    let job = |id: &str| jobs.iter().find(|j| j.id == id);
    let q1 = get(plan::LAT_READ_4K)
        .ok_or_else(|| format!("the loop fit needs fio job {}", plan::LAT_READ_4K))?;
    let q64_id = plan::rand_read_id(64);
    let q64 = get(&q64_id).ok_or_else(|| format!("the loop fit needs fio job {q64_id}"))?;
    let big = get(plan::SEQ_READ_BIG);
    let (worker_ns, per_kib) = first_estimates(big.map_or(0.0, |b| b.bw_bytes_per_s), q64.iops);
    let mut host = *base;
    host.cpu.cpus = HostCpus::measured(cpus);
    let mut f = Fitter {
        sim: simulate,
        file,
        costs: WorkerCosts {
            worker_ns,
            worker_ns_per_kib: per_kib,
            ..WorkerCosts::default()
        },
        host,
    };
    let req_kib = max_sectors_kb.max(4) as f64;
    if let Some(j1) = job(plan::LAT_READ_4K) {
        f.fit_wake(j1, q1.clat_mean_ns, q1.pct_ns(99.0))?;
    }
    // The rate at depth, then the copy, then the rate again (the copy of
    // 4 KiB is part of QD64's time per I/O).
    if let Some(j64) = job(&q64_id) {
        f.fit_worker(j64, Dir::Read, q64.iops)?;
    }
    if let (Some(b), Some(jb)) = (big, job(plan::SEQ_READ_BIG)) {
        f.fit_per_kib(jb, b.bw_bytes_per_s, req_kib)?;
    }
    if let Some(j64) = job(&q64_id) {
        f.fit_worker(j64, Dir::Read, q64.iops)?;
    }
    // The busy CPUs' stalls, from the deep tails; they take a share of the
    // CPUs at depth, so the rate once more.
    let stalls = {
        let f = &f;
        let with = |bg: Background, j: &Job| {
            let mut host = f.host;
            host.cpu.cpus.background = bg;
            (f.sim)(&loop_model(f.file, f.costs), &host, j)
        };
        fit_stalls(m, cpus, jobs, &with, notes)?
    };
    if let Some(bg) = stalls {
        f.host.cpu.cpus.background = bg;
        if let Some(j64) = job(&q64_id) {
            f.fit_worker(j64, Dir::Read, q64.iops)?;
        }
        // and QD1's wake-up costs again: the stalls that find fio or the
        // worker busy at QD1 are now part of its spread
        if let Some(j1) = job(plan::LAT_READ_4K) {
            f.fit_wake(j1, q1.clat_mean_ns, q1.pct_ns(99.0))?;
        }
    }
    // The writes, last: the read fits do not depend on them. A write's
    // per-request cost from the random writes at QD64, kept only where it
    // brought that job to the measured rate (random writes that fio's CPU,
    // not the worker, paces say nothing of the worker's write cost, and
    // the fit then runs to 0) and where it differs from the read's by more
    // than a figure's run-to-run noise (5 %; a tmpfs loop here: 2776 ns
    // beside 2791). No per-KiB write cost: the big block's 1280 KiB
    // requests ran slower per byte than the validation's 128 KiB ones (a
    // cached ext4 file here: 7.7 GB/s against 7.9, and a per-KiB cost from
    // it ran those at -24 %), so writes share the read's.
    let wq64 = get(plan::RAND_WRITE_QD64);
    if let (Some(w), Some(jw)) = (wq64, job(plan::RAND_WRITE_QD64)) {
        f.fit_worker(jw, Dir::Write, w.iops)?;
        let r = f.costs.worker_ns as f64;
        let near = |v: u64| (v as f64 - r).abs() <= 0.05 * r;
        if !f.matches_iops(jw, w.iops)? || f.costs.worker_write_ns.is_some_and(near) {
            f.costs.worker_write_ns = None;
        }
    }
    let c = &f.costs;
    let mut writes = String::new();
    if let (Some(v), Some(w)) = (c.worker_write_ns, wq64) {
        writes += &format!(
            "; worker_write_ns = {v} ({}'s {:.0} IOPS, likewise)",
            plan::RAND_WRITE_QD64,
            w.iops
        );
    }
    let h = f.host.cpu.cpus;
    notes.push(format!(
        "loop over {} on {cpus} CPUs: worker_ns = {} ({q64_id}'s {:.0} IOPS: CPU-bound, fio and the worker each on a CPU, by simulation); worker_ns_per_kib = {} ({}'s {:.0} B/s: one worker copies {req_kib:.0} KiB requests in turn, by simulation){writes}; wake_ns = {} + wake_tail_ns = {} ({}'s clat mean {:.1} µs and p99 {:.1} µs: each QD1 I/O wakes the worker and fio on idle CPUs)",
        match file {
            LoopFile::Tmpfs => "tmpfs",
            LoopFile::Cached => "a cached file",
        },
        f.costs.worker_ns,
        q64.iops,
        f.costs.worker_ns_per_kib,
        plan::SEQ_READ_BIG,
        big.map_or(0.0, |b| b.bw_bytes_per_s),
        h.wake_ns,
        h.wake_tail_ns,
        plan::LAT_READ_4K,
        q1.clat_mean_ns / 1e3,
        q1.pct_ns(99.0) / 1e3,
    ));
    Ok(LoopFit {
        file,
        costs: f.costs,
        host: f.host,
    })
}
