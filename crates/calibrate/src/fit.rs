//! Fitting device models to the measurements.
//!
//! * `linear`: the six io.cost.model numbers exactly as iocost_coef_gen.py
//!   derives them (rbps/wbps = bytes/s of the big sequential block at QD1,
//!   r/wseqiops = 4 KiB sequential IOPS at QD64, r/wrandiops = 4 KiB random
//!   IOPS at QD64), plus `latency_ns` = what a QD1 4 KiB read takes beyond
//!   1/rrandiops, so QD1 latency and saturated IOPS both match.
//! * `ssd`: per-operation latency distributions from the QD1 clat figures
//!   (a constant plus an exponential tail matching mean and p99, or a
//!   lognormal through p50 and p99 when the tail is too heavy for that),
//!   units = saturated IOPS × mean service time, `unit_bps` from the big
//!   block's bandwidth (or from 64 KiB vs 4 KiB QD1 latency).
//! * `cloud`, when the device is rate-capped (IOPS the same at QD1 and QD64
//!   while QD1 spends most of its time waiting, the signature of a token
//!   bucket: cloud volumes, blk-throttle): the cap, the base latency (QD1
//!   p50) and the grant window (QD1 p99.9, the wait of the I/O that found
//!   the bucket empty).
//!
//! The latency offsets are then corrected by simulation: the QD1 jobs run in
//! the simulator on the fitted model and the constant part moves by the
//! difference of the means (the simulator's own submit/reap costs are thus
//! accounted for, whatever they are); the unit count likewise by the QD64
//! IOPS ratio.

use blklab_core::drivers::cloud::CloudSpec;
use blklab_core::drivers::linear::LinearSpec;
use blklab_core::drivers::ssd::{LatencyDist, Placement, SsdSpec};
use blklab_core::drivers::ModelSpec;
use blklab_core::sim::background::Background;
use blklab_core::sim::host_cpus::HostCpus;
use blklab_core::CpuCosts;

use crate::facts::DeviceFacts;
use crate::fio_run::{DirFigures, FioResult};
pub use crate::loop_fit::LoopFile;
use crate::loop_fit::{fit_file_loop, LoopFit};
use crate::plan::{self, Job};
use crate::stall_fit::fit_stalls;

pub use crate::fio_run::Measured;
pub use crate::sim_run::HostCosts;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelKind {
    Ssd,
    Linear,
    Cloud,
    /// A loop device over a file in memory, its worker a task on the
    /// host's CPUs (chosen for a tmpfs-backed loop target).
    Loop,
}

impl ModelKind {
    pub fn parse(s: &str) -> Result<Option<ModelKind>, String> {
        match s {
            "auto" => Ok(None),
            "ssd" => Ok(Some(ModelKind::Ssd)),
            "linear" => Ok(Some(ModelKind::Linear)),
            "cloud" => Ok(Some(ModelKind::Cloud)),
            "loop" => Ok(Some(ModelKind::Loop)),
            _ => Err(format!(
                "--model {s}: expected auto, ssd, linear, cloud or loop"
            )),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Fit {
    pub linear: LinearSpec,
    pub ssd: SsdSpec,
    /// Present when the device looks rate-capped (or `--model cloud`).
    pub cloud: Option<CloudSpec>,
    /// The model the `[[device]]` block uses.
    pub chosen: ModelKind,
    /// The simulator's CPU costs: `submit_ns` = the smaller of fio's mean
    /// slat at QD1 and at QD64; the device's `idle_wake_ns` = what QD1's
    /// slat has beyond it (see [`submit_costs`]).
    pub host: HostCosts,
    /// The loop-worker model and its host (`[host] cpus`), for a loop
    /// device over a file in memory or a cached file (see `loop_fit`).
    pub loop_fit: Option<LoopFit>,
    /// The host's online CPUs (printed in the block's `[host]`).
    pub host_cpus: Option<u32>,
    /// How each number was obtained, for the report.
    pub notes: Vec<String>,
}

impl Fit {
    pub fn model(&self, kind: ModelKind) -> ModelSpec {
        match kind {
            ModelKind::Ssd => ModelSpec::Ssd(self.ssd.clone()),
            ModelKind::Linear => ModelSpec::Linear(self.linear.clone()),
            ModelKind::Cloud => ModelSpec::Cloud(self.cloud.clone().unwrap_or_default()),
            ModelKind::Loop => self
                .loop_fit
                .as_ref()
                .map_or_else(|| crate::loop_fit::tmpfs_loop(0, 0), LoopFit::model),
        }
    }

    /// The run's costs the model `kind` was fitted with (the loop model's
    /// include the host's CPUs).
    pub fn host_for(&self, kind: ModelKind) -> HostCosts {
        match (kind, &self.loop_fit) {
            (ModelKind::Loop, Some(l)) => l.host,
            _ => self.host,
        }
    }

    /// The `io.cost.model` line (the kernel's syntax, for the v2 root).
    pub fn io_cost_model(&self, devno: &str) -> String {
        let l = &self.linear;
        format!(
            "{devno} ctrl=user model=linear rbps={} rseqiops={} rrandiops={} wbps={} wseqiops={} wrandiops={}",
            l.rbps, l.rseqiops, l.rrandiops, l.wbps, l.wseqiops, l.wrandiops
        )
    }
}

fn get<'a>(m: &'a Measured, id: &str) -> Option<&'a DirFigures> {
    m.get(id).map(FioResult::main)
}

fn need<'a>(m: &'a Measured, id: &str) -> Result<&'a DirFigures, String> {
    get(m, id).ok_or_else(|| format!("the fit needs fio job {id}, which was not measured"))
}

/// ln(100): the exponential's 99th percentile is `ln(100) × mean`.
const LN100: f64 = 4.605_170_185_988_092;
/// The standard normal's 99th percentile.
const Z99: f64 = 2.326_347_874_040_841;

/// A latency distribution (device time, ns figures) through mean and p99, or
/// p50 and p99.
pub fn latency_dist(mean_ns: f64, p50_ns: f64, p99_ns: f64) -> LatencyDist {
    let (mean, p50, p99) = (mean_ns.max(1.0), p50_ns.max(1.0), p99_ns.max(1.0));
    // constant c + exponential of mean m: mean = c + m, p99 = c + ln(100) m.
    let m = (p99 - mean) / (LN100 - 1.0);
    if m >= 0.0 && mean - m >= 0.0 {
        return LatencyDist::FixedExp {
            fixed_us: round3((mean - m) / 1000.0),
            exp_mean_us: round3(m / 1000.0),
        };
    }
    let sigma = ((p99 / p50).ln() / Z99).clamp(0.0, 3.0);
    LatencyDist::Lognormal {
        median_us: round3(p50 / 1000.0),
        sigma: round3(sigma),
    }
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// Move a distribution by `delta_ns` (the constant part, or the median's scale).
fn shift(d: &LatencyDist, delta_ns: f64) -> LatencyDist {
    let du = delta_ns / 1000.0;
    match *d {
        LatencyDist::Fixed { us } => LatencyDist::Fixed {
            us: round3((us + du).max(0.0)),
        },
        LatencyDist::FixedExp {
            fixed_us,
            exp_mean_us,
        } => {
            // Keep the tail; move the constant, and take from the tail only if
            // the constant cannot absorb a negative shift.
            let f = fixed_us + du;
            if f >= 0.0 {
                LatencyDist::FixedExp {
                    fixed_us: round3(f),
                    exp_mean_us,
                }
            } else {
                LatencyDist::FixedExp {
                    fixed_us: 0.0,
                    exp_mean_us: round3((exp_mean_us + f).max(0.0)),
                }
            }
        }
        LatencyDist::Lognormal { median_us, sigma } => {
            let mean = median_us * (sigma * sigma / 2.0).exp();
            let k = ((mean + du) / mean).max(0.01);
            LatencyDist::Lognormal {
                median_us: round3(median_us * k),
                sigma,
            }
        }
    }
}

fn dist_mean_ns(d: &LatencyDist) -> f64 {
    1000.0
        * match *d {
            LatencyDist::Fixed { us } => us,
            LatencyDist::FixedExp {
                fixed_us,
                exp_mean_us,
            } => fixed_us + exp_mean_us,
            LatencyDist::Lognormal { median_us, sigma } => median_us * (sigma * sigma / 2.0).exp(),
        }
}

/// Whether the figures show a token bucket rather than a service time: about
/// the same IOPS at QD1 and at QD64, while a QD1 read's typical (p50)
/// latency covers less than half of the time between I/Os.
///
/// "About the same" is QD64 within 0.9–1.25× QD1. The range is lopsided on
/// purpose: a busy host slows the QD1 job (it needs a CPU between every two
/// I/Os) but not the QD64 one, which keeps the bucket drained; on a loaded
/// CI machine a 500-IOPS cap measured 448 at QD1 and 503 at QD64 (×1.12).
/// A device without a cap but with any parallelism is far above the range
/// (QD64 several times QD1), and one without parallelism spends its QD1
/// time in service (p50 near the time between I/Os), which `busy` rejects.
pub fn rate_capped(m: &Measured) -> bool {
    let (Some(q1), Some(q64)) = (get(m, plan::LAT_READ_4K), get(m, &plan::rand_read_id(64))) else {
        return false;
    };
    let busy = q1.iops * q1.pct_ns(50.0) / 1e9;
    let ratio = q64.iops / q1.iops;
    busy < 0.5 && (0.9..=1.25).contains(&ratio)
}

/// The wait of a QD1 I/O that found the bucket empty, the grant window: the
/// lowest of fio's percentiles in the slow mode of the latency distribution.
/// At QD1 the I/Os that wait all wait about one window, so the lowest
/// percentile among them is the window itself, while the highest (p99.9,
/// used before) is the one a busy host stretches: a loaded CI machine
/// measured a 100 ms window's p99.9 at 146 ms with its p99 at 99 ms. The
/// slow mode is what lies above 20× the median, 1 ms and half of p99.9: the
/// last bound keeps out the scheduling delays of a loaded host, which put a
/// 100 ms window's p95 at 1 ms in another CI run. Without a slow mode, p99.9.
pub(crate) fn grant_wait(q1: &DirFigures) -> (f64, f64) {
    let p50 = q1.pct_ns(50.0);
    let top = q1.pct_ns(99.9);
    let floor = (20.0 * p50).max(1e6).max(top / 2.0);
    let mut pcts = q1.clat_pct_ns.clone();
    pcts.sort_by(|a, b| a.0.total_cmp(&b.0));
    pcts.into_iter()
        .find(|&(p, ns)| p > 50.0 && ns > floor)
        .unwrap_or((99.9, top))
}

/// The submitter's costs from fio's mean slat at QD1 and at QD64 (ns).
///
/// The simulated job spends `submit_ns` of CPU per I/O, so one job issues no
/// more than 1/`submit_ns` I/Os per second: `submit_ns` is the smaller
/// slat, the one a busy device shows (a tmpfs loop device here: 2.6 µs at
/// QD64, 268k IOPS). What QD1 pays beyond it is a submission to an idle
/// device: for a threaded driver (loop), the wake-up of its sleeping worker
/// (`queue_work` → `try_to_wake_up`; 9.9 µs of slat at QD1 there, with a
/// wake-up per I/O at QD1 and one per 36 I/Os at QD64, counted with perf).
/// It becomes the device's `idle_wake_ns`, which the simulator charges
/// exactly when a request reaches a device with nothing in flight, so the
/// QD1 job runs at the measured slat + clat and the QD64 one at its rate.
/// A QD64 slat above QD1's (tag waits: a device shallower than 64) gives
/// QD1's slat and no wake-up cost.
pub fn submit_costs(q1_slat_ns: f64, q64_slat_ns: f64) -> (HostCosts, String) {
    let q1 = q1_slat_ns.round().max(1.0) as u64;
    let (submit_ns, idle_wake_ns, note) = if q64_slat_ns > 0.0 && q64_slat_ns < q1_slat_ns {
        let submit_ns = (q64_slat_ns.round() as u64).max(1);
        let idle_wake_ns = q1.saturating_sub(submit_ns);
        let note = format!(
            "submit_ns = {submit_ns} (fio's mean slat at QD64, {}); idle_wake_ns = {idle_wake_ns} (QD1's slat {q1} beyond it: a submission to an idle device)",
            plan::rand_read_id(64)
        );
        (submit_ns, idle_wake_ns, note)
    } else {
        let note = format!(
            "submit_ns = {q1} (fio's mean slat at QD1, {}; QD64's is not smaller); idle_wake_ns = 0",
            plan::LAT_READ_4K
        );
        (q1, 0, note)
    };
    let host = HostCosts {
        cpu: CpuCosts {
            submit_ns,
            ..CpuCosts::default()
        },
        idle_wake_ns,
    };
    (host, note)
}

/// The `ssd` per-unit bandwidths, by simulation, once the units are final:
/// each big sequential block (read, and write when measured) runs on the
/// model and the unit's transfer time per request moves until the block's
/// bandwidth is the measured one. The big block is split into a dozen
/// requests spread over the units in rounds, which the first estimate
/// (a steady stream over all units) does not see; and the units move after
/// it. Writes get their own `unit_write_bps` when the device writes at
/// another speed (a tmpfs loop device here: 5.1 GB/s read, 4.1 GB/s write;
/// with one bandwidth its 128 KiB writes ran 21 % fast in validation).
fn fit_unit_bandwidths(
    m: &Measured,
    ssd: &mut SsdSpec,
    host: &HostCosts,
    req_bytes: f64,
    job: &dyn Fn(&str) -> Option<Job>,
    simulate: &dyn Fn(&ModelSpec, &HostCosts, &Job) -> Result<FioResult, String>,
    notes: &mut Vec<String>,
) -> Result<(), String> {
    if ssd.unit_bps == 0 {
        return Ok(());
    }
    for (id, write) in [(plan::SEQ_READ_BIG, false), (plan::SEQ_WRITE_BIG, true)] {
        let (Some(real), Some(j)) = (get(m, id), job(id)) else {
            continue;
        };
        let lat_ns = dist_mean_ns(if write { &ssd.write } else { &ssd.read });
        let mut bps = ssd.unit_bps as f64;
        for _ in 0..3 {
            let mut probe = ssd.clone();
            if write {
                probe.unit_write_bps = Some(bps.round() as u64);
            } else {
                probe.unit_bps = bps.round() as u64;
            }
            let sim_bw = simulate(&ModelSpec::Ssd(probe), host, &j)?
                .main()
                .bw_bytes_per_s;
            // bandwidth ∝ 1 / (latency + transfer) per request
            let per_req_ns =
                (lat_ns + req_bytes / bps * 1e9) * sim_bw / real.bw_bytes_per_s.max(1.0);
            let xfer_ns = per_req_ns - lat_ns;
            if sim_bw <= 0.0 || xfer_ns <= 0.0 {
                break;
            }
            bps = req_bytes / xfer_ns * 1e9;
        }
        let bps = bps.round().max(1.0) as u64;
        if write {
            ssd.unit_write_bps = Some(bps);
        } else {
            ssd.unit_bps = bps;
        }
        notes.push(format!(
            "{} = {bps} ({id}'s {:.0} B/s, by simulation over {} units)",
            if write { "unit_write_bps" } else { "unit_bps" },
            real.bw_bytes_per_s,
            ssd.units
        ));
    }
    Ok(())
}

/// fio's CPU share at QD64 (4 KiB random reads) when it shows the host's
/// CPUs bounding the device: at 90 % of a CPU or more, fio's own thread
/// (submit, reap, its user space) could not issue faster, whatever the
/// device.
pub const CPU_BOUND_PCT: f64 = 90.0;

/// fio's CPU share at QD64 when it is at least [`CPU_BOUND_PCT`].
pub fn cpu_bound(m: &Measured) -> Option<f64> {
    m.get(&plan::rand_read_id(64))
        .map(|r| r.cpu_pct)
        .filter(|&p| p >= CPU_BOUND_PCT)
}

/// The completion's cost on the submitter's CPU (`[host] irq_ns`) of a
/// device whose QD64 job kept fio's CPU busy at `iops`: what that CPU's time
/// per I/O (1/`iops`, the CPU being the bound) leaves beyond fio's own
/// submission (`submit_ns`; at depth one reap collects many completions,
/// and its cost per I/O vanishes, in fio and in the simulator alike).
///
/// The simulator takes a completion's interrupt on the submitting task's
/// CPU, as blk-mq does for a device with a queue per CPU. The kernel
/// completes on the CPU the completion arrives on when that CPU shares a
/// cache with the submitter (`blk_mq_complete_need_ipi`): a loop device's
/// completions run on its worker's CPU and cost fio's CPU nothing. A fixed
/// 3 µs charged there capped a file-backed loop at 153k simulated IOPS
/// where fio reached 227k at 97 % of a CPU (4.4 µs per I/O, 3.4 µs slat), and
/// the units correction could not undo a CPU bound. fio's own CPU share is
/// not used: whether interrupt time is in it depends on the kernel's
/// accounting (`CONFIG_IRQ_TIME_ACCOUNTING`).
pub fn completion_irq_ns(iops: f64, cpu: &CpuCosts) -> (u64, String) {
    let per_io_ns = 1e9 / iops.max(1.0);
    let irq_ns = (per_io_ns - cpu.submit_ns as f64).round().max(0.0) as u64;
    let note = format!(
        "irq_ns = {irq_ns} (that CPU's {per_io_ns:.0} ns per I/O beyond submit_ns = {}: the completions' share of it)",
        cpu.submit_ns
    );
    (irq_ns, note)
}

/// What calibrate knows of the host and the target beyond the figures.
#[derive(Debug, Clone, Copy, Default)]
pub struct HostFacts {
    /// The host's online CPUs (`/sys/devices/system/cpu/online`).
    pub cpus: Option<u32>,
    /// The target is a loop device over a file whose pages are in memory:
    /// a tmpfs file, or a cached file on a disk file system without direct
    /// I/O.
    pub loop_file: Option<LoopFile>,
}

/// Fit every model. `simulate` runs a job on a model (the simulator), used for
/// the offset corrections; `kind` forces the model the block uses.
pub fn fit(
    m: &Measured,
    facts: &DeviceFacts,
    kind: Option<ModelKind>,
    simulate: &dyn Fn(&ModelSpec, &HostCosts, &Job) -> Result<FioResult, String>,
    jobs: &[Job],
    hf: HostFacts,
) -> Result<Fit, String> {
    let mut notes = Vec::new();
    let q1r = need(m, plan::LAT_READ_4K)?;
    let q64r = need(m, &plan::rand_read_id(64))?;
    let q1w = get(m, plan::LAT_WRITE_4K);
    let (mut host, note) = submit_costs(q1r.slat_mean_ns, q64r.slat_mean_ns);
    notes.push(note);
    // A device whose QD64 job kept fio's thread busy is bounded by the
    // host's CPUs: the free-host models (ssd, linear, cloud) are then
    // fitted on a host of the measured CPU count (the corrections below run
    // there), and the block carries its [host].
    if let (Some(pct), Some(cpus), false) = (cpu_bound(m), hf.cpus, hf.loop_file.is_some()) {
        host.cpu.cpus = HostCpus::measured(cpus);
        let (irq_ns, irq_note) = completion_irq_ns(q64r.iops, &host.cpu);
        host.cpu.cpus.irq_ns = irq_ns;
        notes.push(format!(
            "CPU-bound: fio used {pct:.0} % of a CPU at QD64 ({}), so the model is fitted on [host] cpus = {cpus} (the measured host); {irq_note}",
            plan::rand_read_id(64)
        ));
    }
    let job = |id: &str| jobs.iter().find(|j| j.id == id).cloned();

    // linear: iocost_coef_gen.py's six numbers.
    let iops = |id: &str, fallback: u64| -> u64 {
        get(m, id)
            .map(|d| d.iops.round() as u64)
            .unwrap_or(fallback)
            .max(1)
    };
    let bw = |id: &str, fallback: u64| -> u64 {
        get(m, id)
            .map(|d| d.bw_bytes_per_s.round() as u64)
            .unwrap_or(fallback)
            .max(1)
    };
    let rbps = bw(plan::SEQ_READ_BIG, 1);
    let rseqiops = iops(plan::SEQ_READ_4K, q64r.iops.round() as u64);
    let rrandiops = iops(&plan::rand_read_id(64), 1);
    let write_measured = get(m, plan::RAND_WRITE_QD64).is_some();
    if !write_measured {
        notes.push("writes not measured (a device without --destructive): the write figures are the read ones".into());
    }
    let mut linear = LinearSpec {
        rbps,
        rseqiops,
        rrandiops,
        wbps: bw(plan::SEQ_WRITE_BIG, rbps),
        wseqiops: iops(plan::SEQ_WRITE_4K, rseqiops),
        wrandiops: iops(plan::RAND_WRITE_QD64, rrandiops),
        parallelism: 1,
        latency_ns: 0,
        queue_depth: facts.nr_requests,
    };

    // ssd: latency distributions (device time ~ clat; corrected below).
    let dist_of = |d: &DirFigures| latency_dist(d.clat_mean_ns, d.pct_ns(50.0), d.pct_ns(99.0));
    let mut read = dist_of(q1r);
    let mut write = q1w.map(dist_of).unwrap_or_else(|| read.clone());
    let service_ns = q1r.clat_mean_ns.max(1.0);
    let sat_iops = m
        .iter()
        .filter(|(k, _)| k.starts_with("randread-4k-qd") || k.as_str() == plan::LAT_READ_4K)
        .map(|(_, r)| r.main().iops)
        .fold(0.0, f64::max);
    let mut units = ((sat_iops * service_ns / 1e9).round() as u32).clamp(1, 1024);
    // Per-unit bandwidth: the big block is split into max_sectors_kb requests
    // that spread over the units: bw = units × req / (latency + req / unit_bps).
    let req = facts.max_sectors_kb as f64 * 1024.0;
    let mut unit_bps = 0u64;
    if let Some(big) = get(m, plan::SEQ_READ_BIG) {
        let per_req_ns = units as f64 * req / big.bw_bytes_per_s.max(1.0) * 1e9 - service_ns;
        if per_req_ns > 0.0 {
            unit_bps = (req / per_req_ns * 1e9).round() as u64;
            notes.push(format!(
                "unit_bps = {unit_bps} from {} ({:.0} B/s over {units} units, {} KiB requests)",
                plan::SEQ_READ_BIG,
                big.bw_bytes_per_s,
                facts.max_sectors_kb
            ));
        }
    }
    if unit_bps == 0 {
        if let Some(l64) = get(m, plan::LAT_READ_64K) {
            let d = l64.clat_mean_ns - q1r.clat_mean_ns;
            if d > 0.0 {
                unit_bps = (61440.0 / d * 1e9).round() as u64;
                notes.push(format!(
                    "unit_bps = {unit_bps} from 64 KiB vs 4 KiB QD1 latency ({d:.0} ns for 60 KiB)"
                ));
            }
        }
    }
    let mut ssd = SsdSpec {
        units,
        read: read.clone(),
        write: write.clone(),
        unit_bps,
        unit_write_bps: None,
        placement: Placement::LeastBusy,
        stripe_kb: 128,
        queue_depth: facts.nr_requests,
    };

    // cloud: when rate-capped.
    let capped = rate_capped(m);
    let mut cloud = None;
    if capped || kind == Some(ModelKind::Cloud) {
        let sat_w = get(m, plan::RAND_WRITE_QD64).map(|d| d.iops).unwrap_or(0.0);
        let cap = q64r.iops.max(sat_w);
        let mix = m
            .get(plan::MIX)
            .map(|r| r.read.iops + r.write.iops)
            .unwrap_or(0.0);
        let per_direction = mix > 1.15 * cap;
        let big_bw = [plan::SEQ_READ_BIG, plan::SEQ_WRITE_BIG]
            .iter()
            .filter_map(|id| get(m, id))
            .map(|d| d.bw_bytes_per_s)
            .fold(0.0, f64::max);
        // If the big block's requests came at the IOPS cap, the cap explains
        // the bandwidth and no byte limit is visible.
        let bps = if big_bw / req >= 0.85 * cap || big_bw == 0.0 {
            1u64 << 40
        } else {
            big_bw.round() as u64
        };
        let (window_pct, window_ns) = grant_wait(q1r);
        let window_ms = ((window_ns / 1e6).round() as u64).clamp(1, 1000);
        notes.push(format!(
            "rate-capped: {cap:.0} IOPS at QD1 and QD64, QD1 p50 {:.0} µs; grant window {window_ms} ms (QD1 p{window_pct}); {}",
            q1r.pct_ns(50.0) / 1e3,
            if per_direction { "reads and writes capped separately (the 70/30 mix exceeds the cap)" } else { "one cap for reads and writes" }
        ));
        cloud = Some(CloudSpec {
            iops: Some(cap.round().max(1.0) as u64),
            bps: Some(bps),
            per_direction: Some(per_direction),
            io_unit_kb: Some(facts.max_sectors_kb),
            refill_ms: Some(window_ms),
            bucket_ms: Some(window_ms),
            throttle_window_ms: Some(0),
            latency_ns: Some(q1r.pct_ns(50.0).round().max(0.0) as u64),
            xfer_bps: Some(0),
            queue_depth: Some(facts.nr_requests),
            ..CloudSpec::default()
        });
    }
    // A loop device over a file in memory (tmpfs, or a cached file) with
    // the host's CPUs known: the loop worker model (unless rate-capped,
    // where the cap, not the CPUs, sets the rate).
    let loop_wanted = (hf.loop_file.is_some() && !capped) || kind == Some(ModelKind::Loop);
    let chosen = kind.unwrap_or(if capped {
        ModelKind::Cloud
    } else if loop_wanted && hf.cpus.is_some() {
        ModelKind::Loop
    } else {
        ModelKind::Ssd
    });
    let loop_fit = match (loop_wanted, hf.cpus) {
        (true, Some(cpus)) => Some(fit_file_loop(
            m,
            hf.loop_file.unwrap_or(LoopFile::Tmpfs),
            cpus,
            &host,
            facts.max_sectors_kb,
            jobs,
            simulate,
            &mut notes,
        )?),
        (true, None) => {
            return Err("--model loop needs the host's CPU count".into());
        }
        _ => None,
    };

    // Corrections by simulation.
    if let Some(j1) = job(plan::LAT_READ_4K) {
        let sim_mean = |model: &ModelSpec, host: &HostCosts| -> Result<f64, String> {
            Ok(simulate(model, host, &j1)?.main().clat_mean_ns)
        };
        // ssd read: mean offset, then units from QD64 IOPS.
        let d = q1r.clat_mean_ns - sim_mean(&ModelSpec::Ssd(ssd.clone()), &host)?;
        read = shift(&read, d);
        ssd.read = read.clone();
        if let Some(lw) = q1w {
            if let Some(jw) = job(plan::LAT_WRITE_4K) {
                let s = simulate(&ModelSpec::Ssd(ssd.clone()), &host, &jw)?;
                write = shift(&write, lw.clat_mean_ns - s.main().clat_mean_ns);
            }
        } else {
            write = read.clone();
        }
        ssd.write = write;
        let correct_units = |ssd: &mut SsdSpec, host: &HostCosts| -> Result<(), String> {
            if let Some(j64) = job(&plan::rand_read_id(64)) {
                let s = simulate(&ModelSpec::Ssd(ssd.clone()), host, &j64)?;
                let ratio = q64r.iops / s.main().iops.max(1.0);
                ssd.units = ((ssd.units as f64 * ratio).round() as u32).clamp(1, 1024);
            }
            Ok(())
        };
        correct_units(&mut ssd, &host)?;
        // A device fio's CPU sets the pace of (a file-backed loop here) has
        // the loop's deep tails: stalls of the busy CPUs (stall_fit.rs), fitted
        // as for the tmpfs loop; they take a share of fio's CPU, so the units
        // once more.
        if host.cpu.cpus.nr > 0 {
            let with = |bg: Background, j: &Job| {
                let mut h = host;
                h.cpu.cpus.background = bg;
                simulate(&ModelSpec::Ssd(ssd.clone()), &h, j)
            };
            if let Some(bg) = fit_stalls(m, host.cpu.cpus.nr, jobs, &with, &mut notes)? {
                host.cpu.cpus.background = bg;
                correct_units(&mut ssd, &host)?;
            }
        }
        units = ssd.units;
        fit_unit_bandwidths(m, &mut ssd, &host, req, &job, simulate, &mut notes)?;
        notes.push(format!(
            "ssd: units = {units} (QD64 {:.0} IOPS × mean service {:.1} µs, then corrected by simulation); read mean {:.1} µs",
            q64r.iops,
            service_ns / 1e3,
            dist_mean_ns(&ssd.read) / 1e3
        ));
        // linear: latency beyond 1/rrandiops.
        let lin0 = sim_mean(&ModelSpec::Linear(linear.clone()), &host)?;
        linear.latency_ns = (q1r.clat_mean_ns - lin0).round().max(0.0) as u64;
        // cloud: base latency.
        if let Some(c) = cloud.as_mut() {
            // Under a cap the mean holds the waits; match the typical I/O instead.
            let s = simulate(&ModelSpec::Cloud(c.clone()), &host, &j1)?;
            let lat = c.latency_ns.unwrap_or(0) as f64 + q1r.pct_ns(50.0) - s.main().pct_ns(50.0);
            c.latency_ns = Some(lat.round().max(0.0) as u64);
        }
    }
    Ok(Fit {
        linear,
        ssd,
        cloud,
        chosen,
        host,
        loop_fit,
        host_cpus: hf.cpus,
        notes,
    })
}

#[cfg(test)]
#[path = "fit_tests.rs"]
mod tests;
