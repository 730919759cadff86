//! `blklab bench`: how fast the simulator runs. Each case reports simulated
//! I/Os per wall-clock second, the simulated-time / wall-time ratio, and the
//! process's peak memory (VmHWM), so that "memory is flat in run length" can
//! be checked by running the long case at two lengths.

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
    pub peak_rss_kib: Option<u64>,
}

impl BenchResult {
    pub fn line(&self) -> String {
        format!(
            "{:<40} ios={:<10} sim={:>8.2}s wall={:>7.3}s  {:>6.2} M sim-IO/s  sim/wall={:>8.2}  peak_rss={}",
            self.case,
            self.ios,
            self.sim_seconds,
            self.wall_seconds,
            self.ios as f64 / self.wall_seconds / 1e6,
            self.sim_seconds / self.wall_seconds,
            self.peak_rss_kib.map(|k| format!("{:.1} MiB", k as f64 / 1024.0)).unwrap_or_else(|| "n/a".into())
        )
    }
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
    }
}

fn randread_qd32(name: &str, seconds: f64, norandommap: bool) -> JobSpec {
    let mut s = JobSpec::new(name);
    s.rw = RwPattern::RandRead;
    s.bs = [
        BsSpec::Fixed(4096),
        BsSpec::Fixed(4096),
        BsSpec::Fixed(4096),
    ];
    s.ioengine = Engine::Libaio;
    s.iodepth = 32;
    s.iodepth_low = 32;
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
pub fn config(cgroups: usize, seconds: f64, norandommap: bool) -> SimConfig {
    let mut tree = CgroupTree::new();
    let mut jobs = Vec::new();
    for i in 0..cgroups {
        let path = if cgroups == 1 {
            "/".to_string()
        } else {
            format!("/bench/cg{i}")
        };
        let cg = tree.ensure(&path).expect("valid path");
        jobs.push(JobConfig {
            spec: randread_qd32(&format!("j{i}"), seconds, norandommap),
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

pub fn run_case(
    case: &str,
    cgroups: usize,
    seconds: f64,
    norandommap: bool,
) -> anyhow::Result<BenchResult> {
    let cfg = config(cgroups, seconds, norandommap);
    reset_peak_rss();
    let t0 = Instant::now();
    let mut sim = blklab_lab::runner::build_sim(&cfg, None)?;
    let r = sim.run();
    let wall = t0.elapsed().as_secs_f64();
    Ok(BenchResult {
        case: if norandommap {
            format!("{case}, norandommap")
        } else {
            case.to_string()
        },
        ios: r.bios_completed,
        sim_seconds: r.end_time as f64 / 1e9,
        wall_seconds: wall,
        peak_rss_kib: peak_rss_kib(),
    })
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
