//! `blklab bench`: how fast the simulator runs. Each case reports simulated
//! I/Os per wall-clock second, the simulated-time / wall-time ratio, and the
//! process's peak memory (VmHWM), so that "memory is flat in run length" can
//! be checked by running the long case at two lengths. Case a is followed
//! by the reference loop (`reference.rs`) on the same timeline, and the
//! ratio of the two rates is printed.

pub mod reference;

use std::time::Instant;

use blklab_core::block::blk_cgroup::CgroupTree;
use blklab_core::drivers::{nullb::NullbSpec, DeviceInfo, ModelSpec};
use blklab_core::sim::switches::Switches;
use blklab_core::sim::time::{Hz, NSEC_PER_SEC};
use blklab_core::{CpuCosts, DeviceConfig, JobConfig, SimConfig};
use blklab_fio::options::{Engine, RwPattern};
use blklab_fio::{BsSpec, JobSpec};

pub struct BenchResult {
    pub case: String,
    pub ios: u64,
    pub sim_seconds: f64,
    pub wall_seconds: f64,
    /// CPU time of the simulating thread (None where the clock is not
    /// available): unlike the wall time, it does not grow with the time
    /// the thread waited for a CPU on a loaded machine.
    pub cpu_seconds: Option<f64>,
    pub peak_rss_kib: Option<u64>,
    /// Jobs in the run (for the memory per job).
    pub jobs: usize,
}

impl BenchResult {
    pub fn line(&self) -> String {
        format!(
            "{:<40} ios={:<10} sim={:>8.3}s wall={:>7.3}s  {:>6.2} M sim-IO/s  {:>6.0} ns/IO  cpu {} ns/IO  sim/wall={:>8.2}  peak_rss={}{}",
            self.case,
            self.ios,
            self.sim_seconds,
            self.wall_seconds,
            self.rate() / 1e6,
            self.ns_per_io(),
            self.cpu_ns_per_io()
                .map(|c| format!("{c:>4.0}"))
                .unwrap_or_else(|| "n/a".into()),
            self.sim_seconds / self.wall_seconds,
            self.peak_rss_kib.map(|k| format!("{:.1} MiB", k as f64 / 1024.0)).unwrap_or_else(|| "n/a".into()),
            match self.peak_rss_kib {
                Some(k) if self.jobs > 1 => format!(" ({:.1} KiB/job)", k as f64 / self.jobs as f64),
                _ => String::new(),
            }
        )
    }
    /// Simulated I/Os per wall second.
    pub fn rate(&self) -> f64 {
        self.ios as f64 / self.wall_seconds
    }
    /// Wall nanoseconds per simulated I/O.
    pub fn ns_per_io(&self) -> f64 {
        self.wall_seconds * 1e9 / self.ios.max(1) as f64
    }
    /// CPU nanoseconds (the simulating thread's) per simulated I/O.
    pub fn cpu_ns_per_io(&self) -> Option<f64> {
        self.cpu_seconds.map(|c| c * 1e9 / self.ios.max(1) as f64)
    }
}

/// Which cgroup controller the jobs' cgroups carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ctl {
    /// Neither io.max nor iocost.
    None,
    /// iocost enabled on the device with a fixed vrate and a cost model far
    /// above what nullb delivers, so that it accounts every I/O but never
    /// holds one back.
    IoCost,
    /// An io.max riops limit on every cgroup that the device cannot reach.
    IoMax,
}

impl Ctl {
    pub fn name(self) -> &'static str {
        match self {
            Ctl::None => "none",
            Ctl::IoCost => "iocost",
            Ctl::IoMax => "io.max",
        }
    }
}

/// The shape of a benchmark run.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    /// Jobs, each in its own cgroup (one job in the root cgroup when 1).
    pub cgroups: usize,
    /// Each job's iodepth.
    pub iodepth: u32,
    pub seconds: f64,
    pub norandommap: bool,
    pub ctl: Ctl,
}

fn nullb() -> DeviceConfig {
    DeviceConfig {
        info: DeviceInfo {
            name: "nullb0".into(),
            major: 252,
            minor: 0,
            rotational: false,
            nr_requests: 256,
            queue_depth: 256,
            nr_hw_queues: 1,
            max_sectors_kb: 128,
            logical_block_size: 512,
            capacity_bytes: 1 << 40,
        },
        model: ModelSpec::Nullb(NullbSpec {
            completion_nsec: 10_000,
            irqmode: 2,
            hw_queue_depth: 256,
            mbps: 0,
        }),
        scheduler: "none".into(),
        iosched: Vec::new(),
        wbt: None,
        idle_wake_ns: 0,
    }
}

fn randread(name: &str, iodepth: u32, seconds: f64, norandommap: bool) -> JobSpec {
    let mut s = JobSpec::new(name);
    s.rw = RwPattern::RandRead;
    s.bs = [
        BsSpec::Fixed(4096),
        BsSpec::Fixed(4096),
        BsSpec::Fixed(4096),
    ];
    s.ioengine = Engine::Libaio;
    s.iodepth = iodepth;
    s.iodepth_low = iodepth;
    s.direct = true;
    s.time_based = true;
    s.runtime_ns = Some((seconds * NSEC_PER_SEC as f64) as u64);
    s.norandommap = norandommap;
    s
}

/// The benchmark's configuration: `cgroups` jobs, each in its own cgroup.
/// The jobs keep fio's default random map (one bit per 4 KiB block of the
/// 1 TiB device once a job has covered it), as a user's fio job would;
/// `norandommap` leaves it out, so that the figures measure the block layer
/// alone.
pub fn config_of(shape: &Shape) -> SimConfig {
    let Shape {
        cgroups,
        iodepth,
        seconds,
        norandommap,
        ctl,
    } = *shape;
    let mut tree = CgroupTree::new();
    let mut jobs = Vec::new();
    if ctl == Ctl::IoCost {
        // the example iocost-fio-split's fixed-vrate setup, with a model
        // 5000 times faster than its device needs: every I/O pays its
        // (tiny) cost, none waits
        tree.write_file(
            0,
            "io.cost.model",
            "252:0 ctrl=user model=linear rbps=100000000000 rseqiops=10000000000 rrandiops=10000000000 wbps=100000000000 wseqiops=10000000000 wrandiops=10000000000",
        );
        tree.write_file(
            0,
            "io.cost.qos",
            "252:0 enable=1 ctrl=user rpct=0 rlat=25000 wpct=0 wlat=25000 min=100 max=100",
        );
    }
    for i in 0..cgroups {
        let path = if cgroups == 1 {
            "/".to_string()
        } else {
            format!("/bench/cg{i}")
        };
        let cg = tree.ensure(&path).expect("valid path");
        if ctl == Ctl::IoMax && cg != 0 {
            tree.write_file(cg, "io.max", "252:0 riops=1000000000");
        }
        jobs.push(JobConfig {
            spec: randread(&format!("j{i}"), iodepth, seconds, norandommap),
            clone: 0,
            cgroup: cg,
            dev: 0,
            groupid: 0,
        });
    }
    SimConfig {
        pagecache: Default::default(),
        seed: 1,
        hz: Hz(250),
        switches: Switches::default(),
        cgroups: tree,
        devices: vec![nullb()],
        jobs,
        cpu: CpuCosts::default(),
        time_limit: None,
        writes: Vec::new(),
    }
}

pub fn peak_rss_kib() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Start a new peak: writing 5 to /proc/self/clear_refs resets VmHWM to
/// the current RSS (Linux 4.0+), so each case reports its own peak rather
/// than the largest of the cases before it. Where that is refused the
/// figure is the process's peak so far (and the line says "n/a" only when
/// /proc has no VmHWM at all).
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// The calling thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`), seconds.
/// Through libc, not rustix: rustix reads the vDSO from the auxiliary
/// vector, which crashes under valgrind (the profiles of bench/README.md).
fn thread_cpu_seconds() -> Option<f64> {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec for the call to fill.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    (rc == 0).then(|| t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9)
}

/// Run one shape and measure it.
pub fn run_shape(case: &str, shape: &Shape) -> anyhow::Result<BenchResult> {
    let norandommap = shape.norandommap;
    let cfg = config_of(shape);
    reset_peak_rss();
    let t0 = Instant::now();
    let cpu0 = thread_cpu_seconds();
    let mut sim = blklab_lab::runner::build_sim(&cfg, None)?;
    // as `blklab run` without observers (`runner::run`): nothing reads blk-iotrack
    sim.set_iotrack_counting(false);
    let r = sim.run();
    let wall = t0.elapsed().as_secs_f64();
    let cpu = thread_cpu_seconds().zip(cpu0).map(|(b, a)| b - a);
    Ok(BenchResult {
        case: if norandommap {
            format!("{case}, norandommap")
        } else {
            case.to_string()
        },
        ios: r.bios_completed,
        sim_seconds: r.end_time as f64 / 1e9,
        wall_seconds: wall,
        cpu_seconds: cpu,
        peak_rss_kib: peak_rss_kib(),
        jobs: shape.cgroups,
    })
}

/// The reference loop on case a's timeline: as many I/Os as `a` completed,
/// QD32, blocks of the 1 TiB device, each I/O taking the time it took on
/// average in `a` (Little's law: 32 x simulated time / I/Os; the job's
/// submission CPU time, not the 10 µs device, paces case a), so that both
/// end at the same simulated instant. Prints its line and the ratio.
pub fn reference_line(a: &BenchResult) -> String {
    let per_io_ns = ((a.sim_seconds * 1e9 * 32.0) / a.ios.max(1) as f64).round() as u64;
    let r = reference::run(a.ios, 32, per_io_ns, (1u64 << 40) / 4096, 1);
    let rate = r.ios as f64 / r.wall_seconds;
    format!(
        "{:<40} ios={:<10} sim={:>8.3}s wall={:>7.3}s  {:>6.2} M sim-IO/s  {:>6.0} ns/IO  ({} events, checksum {:x})\n\
         ratio blklab/reference = {:.3} (blklab {:.2} M/s, reference {:.2} M/s)",
        "reference loop (BinaryHeap, 2 ev/IO)",
        r.ios,
        r.sim_end_ns as f64 / 1e9,
        r.wall_seconds,
        rate / 1e6,
        r.wall_seconds * 1e9 / r.ios.max(1) as f64,
        r.events,
        r.checksum,
        a.rate() / rate,
        a.rate() / 1e6,
        rate / 1e6
    )
}

/// `blklab bench`'s options.
#[derive(clap::Args, Debug)]
pub struct Options {
    /// a = 4k randread QD32 on none+nullb, then the reference loop on its
    /// timeline; a-iocost, a-iomax = case a split over 2 cgroups (QD16
    /// each) under iocost / an io.max that never binds, for half of
    /// --a-seconds (each job runs as fast as case a's one, so the split does
    /// case a's I/Os and fills the same random-map room); a-2cg = the same
    /// split with no controller (what the split alone costs); b = case a in each
    /// of 100 cgroups; scale = case b at each --scale count with none,
    /// iocost and io.max (cost per I/O); c = a long run (>= 50 M I/Os)
    #[arg(long, default_value = "a,b,c")]
    pub cases: String,
    /// Simulated seconds for the long case.
    #[arg(long, default_value_t = 110.0)]
    pub long_seconds: f64,
    /// Give the jobs fio's `norandommap=1`: no random map, offsets drawn
    /// with replacement, so the figures are the block layer's alone.
    #[arg(long)]
    pub norandommap: bool,
    /// Simulated seconds of case a (and its variants).
    #[arg(long, default_value_t = 10.0)]
    pub a_seconds: f64,
    /// Cgroup counts of the scale case.
    #[arg(long, default_value = "10,100,1000")]
    pub scale: String,
    /// Simulated I/Os (about) of each run of the scale case.
    #[arg(long, default_value_t = 2_000_000)]
    pub scale_ios: u64,
    /// Controllers of the scale case (none, iocost, io.max): fewer to
    /// profile one of them alone.
    #[arg(long, default_value = "none,iocost,io.max")]
    pub scale_ctls: String,
}

/// Run the selected cases, printing one line per run.
pub fn main(o: &Options) -> anyhow::Result<()> {
    let nrm = o.norandommap;
    let shape = |cgroups, iodepth, seconds, ctl| Shape {
        cgroups,
        iodepth,
        seconds,
        norandommap: nrm,
        ctl,
    };
    let mut case_a: Option<BenchResult> = None;
    let vs_a = |r: &BenchResult, a: &Option<BenchResult>| match a {
        Some(a) => format!("  ({:.2}x case a)", r.rate() / a.rate()),
        None => String::new(),
    };
    for c in o.cases.split(',') {
        match c.trim() {
            "a" => {
                let r = run_shape(
                    "a: randread QD32 nullb",
                    &shape(1, 32, o.a_seconds, Ctl::None),
                )?;
                println!("{}", r.line());
                println!("{}", reference_line(&r));
                case_a = Some(r);
            }
            "a-iocost" | "a-iomax" | "a-2cg" => {
                let (name, ctl) = match c.trim() {
                    "a-iocost" => ("a-iocost: 2 cgroups QD16, iocost", Ctl::IoCost),
                    "a-iomax" => ("a-iomax: 2 cgroups QD16, io.max", Ctl::IoMax),
                    _ => ("a-2cg: 2 cgroups QD16, none", Ctl::None),
                };
                // equal work: two jobs on nullb each complete as many I/Os
                // as case a's one, so half the time gives case a's count
                let r = run_shape(name, &shape(2, 16, o.a_seconds / 2.0, ctl))?;
                println!("{}{}", r.line(), vs_a(&r, &case_a));
            }
            "b" => println!(
                "{}",
                run_shape("b: same, 100 cgroups", &shape(100, 32, 2.0, Ctl::None))?.line()
            ),
            "c" => println!(
                "{}",
                run_shape("c: long run", &shape(1, 32, o.long_seconds, Ctl::None))?.line()
            ),
            "scale" => scale(o, nrm)?,
            other => {
                anyhow::bail!(
                    "bench: unknown case '{other}' (a, a-iocost, a-iomax, a-2cg, b, scale, c)"
                )
            }
        }
    }
    Ok(())
}

/// Case b at each cgroup count of `--scale`, with no controller, iocost and
/// io.max, sized to about `--scale-ios` I/Os each (the device completes
/// 256 requests per 10 µs once the jobs fill its tags); then the table of
/// nanoseconds per I/O relative to the smallest count.
fn scale(o: &Options, nrm: bool) -> anyhow::Result<()> {
    let counts: Vec<usize> = o
        .scale
        .split(',')
        .map(|x| x.trim().parse::<usize>())
        .collect::<Result<_, _>>()
        .map_err(|e| {
            anyhow::anyhow!(
                "bench: --scale '{}': {e} (a list of cgroup counts)",
                o.scale
            )
        })?;
    let ctls: Vec<Ctl> = o
        .scale_ctls
        .split(',')
        .map(|x| match x.trim() {
            "none" => Ok(Ctl::None),
            "iocost" => Ok(Ctl::IoCost),
            "io.max" => Ok(Ctl::IoMax),
            other => Err(anyhow::anyhow!(
                "bench: --scale-ctls: unknown controller '{other}' (none, iocost, io.max)"
            )),
        })
        .collect::<Result<_, _>>()?;
    let seconds = o.scale_ios as f64 / 25.6e6;
    let mut table = Vec::new();
    for ctl in ctls {
        let mut row = Vec::new();
        for &n in &counts {
            let r = run_shape(
                &format!("scale: {n} cgroups, {}", ctl.name()),
                &Shape {
                    cgroups: n,
                    iodepth: 32,
                    seconds,
                    norandommap: nrm,
                    ctl,
                },
            )?;
            println!("{}", r.line());
            row.push((r.ns_per_io(), r.cpu_ns_per_io()));
        }
        table.push((ctl, row));
    }
    for (what, cpu) in [("ns", false), ("CPU ns", true)] {
        println!("{what} per I/O by cgroup count (x = relative to the first count):");
        for (ctl, row) in &table {
            let ns: Vec<f64> = row
                .iter()
                .map(|&(wall, c)| if cpu { c.unwrap_or(f64::NAN) } else { wall })
                .collect();
            let cells: Vec<String> = counts
                .iter()
                .zip(&ns)
                .map(|(n, v)| format!("{n}: {v:.0} ({:.2}x)", v / ns[0]))
                .collect();
            println!("  {:<7} {}", ctl.name(), cells.join("  "));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A case after a bigger one reports its own peak: allocate and touch
    /// 64 MiB, drop it, reset, and the peak is back below it.
    #[test]
    fn peak_rss_is_per_case() {
        let Some(before) = peak_rss_kib() else {
            eprintln!("SKIP: no VmHWM in /proc/self/status");
            return;
        };
        let big = vec![1u8; 64 << 20];
        std::hint::black_box(&big);
        let peak = peak_rss_kib().unwrap();
        assert!(peak >= before + (60 << 10), "{before} -> {peak}");
        drop(big);
        reset_peak_rss();
        let after = peak_rss_kib().unwrap();
        assert!(
            after + (32 << 10) < peak,
            "peak {peak} KiB, after reset {after} KiB"
        );
    }
}
