//! The simulator's side: the printed `[[device]]` block read back (so what
//! is validated is exactly what the user copies), and fio jobs from the same
//! command-line strings run on it, with a `blklab_core::SimConfig` built
//! directly (as crates/cli/src/bench.rs does).

use blklab_core::block::blk_cgroup::CgroupTree;
use blklab_core::drivers::{DeviceInfo, ModelSpec};
use blklab_core::sim::cpus::HostCpus;
use blklab_core::sim::switches::Switches;
use blklab_core::sim::time::Hz;
use blklab_core::sim::trace::Tracer;
use blklab_core::{CpuCosts, DeviceConfig, JobConfig, Sim, SimConfig};
use serde::Deserialize;

use crate::fio_run::{DirFigures, FioResult, FIO_PERCENTILES};

/// What the simulated host and device charge the submitter: the run's CPU
/// costs (`[run] submit_ns`, and the host's CPUs) and the device's
/// `idle_wake_ns`.
#[derive(Debug, Clone, Copy, Default)]
pub struct HostCosts {
    pub cpu: CpuCosts,
    pub idle_wake_ns: u64,
}

/// The keys `render` prints in a `[[device]]` block (a subset of the
/// scenario format's; the same names and meanings).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DeviceBlock {
    name: String,
    devno: String,
    scheduler: Option<String>,
    queue_depth: Option<u32>,
    nr_requests: Option<u32>,
    max_sectors_kb: Option<u32>,
    logical_block_size: Option<u32>,
    rotational: Option<bool>,
    capacity: Option<String>,
    idle_wake_ns: Option<u64>,
    model: toml::Value,
}

/// The `[host]` keys `render` prints for the loop model.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct HostBlock {
    cpus: u32,
    wake_ns: Option<u64>,
    wake_tail_ns: Option<u64>,
    irq_ns: Option<u64>,
    irq_tail_ns: Option<u64>,
    timer_ns: Option<u64>,
    timer_tail_ns: Option<u64>,
    submit_ns: Option<u64>,
    reap_ns: Option<u64>,
}

impl HostBlock {
    /// The run's costs, the scenario format's defaults where a key is absent.
    fn costs(&self) -> CpuCosts {
        let d = CpuCosts::default();
        let m = HostCpus::measured(self.cpus);
        CpuCosts {
            submit_ns: self.submit_ns.unwrap_or(d.submit_ns),
            reap_ns: self.reap_ns.unwrap_or(d.reap_ns),
            cpus: HostCpus {
                nr: self.cpus,
                irq_ns: self.irq_ns.unwrap_or(m.irq_ns),
                irq_tail_ns: self.irq_tail_ns.unwrap_or(0),
                wake_ns: self.wake_ns.unwrap_or(m.wake_ns),
                wake_tail_ns: self.wake_tail_ns.unwrap_or(0),
                timer_ns: self.timer_ns.unwrap_or(m.timer_ns),
                timer_tail_ns: self.timer_tail_ns.unwrap_or(0),
                // calibrate never measures preemption: the scenario format's default
                ..m
            },
            ..d
        }
    }
}

#[derive(Debug, Deserialize)]
struct Doc {
    host: Option<HostBlock>,
    device: Vec<DeviceBlock>,
}

fn parse_bytes(s: &str) -> Result<u64, String> {
    s.trim()
        .parse::<u64>()
        .map_err(|_| format!("capacity '{s}': expected a number of bytes"))
}

/// The device of a TOML text holding one `[[device]]` block.
pub fn device_from_toml(text: &str) -> Result<DeviceConfig, String> {
    Ok(block_from_toml(text)?.0)
}

/// The device of a TOML text holding one `[[device]]` block, and the run's
/// costs of its `[host]` section when it has one.
pub fn block_from_toml(text: &str) -> Result<(DeviceConfig, Option<CpuCosts>), String> {
    let doc: Doc = toml::from_str(text).map_err(|e| format!("the [[device]] block: {e}"))?;
    if let Some(h) = &doc.host {
        if h.cpus > HostCpus::MAX_NR {
            return Err(format!(
                "host.cpus = {}: at most {}",
                h.cpus,
                HostCpus::MAX_NR
            ));
        }
    }
    let host = doc.host.as_ref().map(HostBlock::costs);
    let d = doc.device.into_iter().next().ok_or("no [[device]] block")?;
    let model: ModelSpec = d
        .model
        .try_into()
        .map_err(|e: toml::de::Error| format!("device {} model: {}", d.name, e.message()))?;
    let built = model
        .build()
        .map_err(|e| format!("device {} model: {e}", d.name))?;
    let (ma, mi) = d
        .devno
        .split_once(':')
        .and_then(|(a, b)| Some((a.parse::<u32>().ok()?, b.parse::<u32>().ok()?)))
        .ok_or_else(|| format!("devno '{}': expected MAJ:MIN", d.devno))?;
    let queue_depth = d.queue_depth.unwrap_or_else(|| built.default_queue_depth());
    let scheduler = d.scheduler.unwrap_or_else(|| "none".into());
    let info = DeviceInfo {
        name: d.name,
        major: ma,
        minor: mi,
        rotational: d.rotational.unwrap_or(false),
        nr_requests: d.nr_requests.unwrap_or(queue_depth),
        queue_depth,
        nr_hw_queues: 1,
        max_sectors_kb: d.max_sectors_kb.unwrap_or(1280),
        logical_block_size: d.logical_block_size.unwrap_or(512),
        capacity_bytes: match &d.capacity {
            Some(c) => parse_bytes(c)?,
            None => 1 << 40,
        },
    };
    let dev = DeviceConfig {
        info,
        model,
        scheduler,
        iosched: Vec::new(),
        wbt: None,
        idle_wake_ns: d.idle_wake_ns.unwrap_or(0),
    };
    Ok((dev, host))
}

fn dir_of(d: &blklab_fio::DirStats) -> DirFigures {
    let pct = d.clat.hist.percentiles(&FIO_PERCENTILES);
    DirFigures {
        iops: d.iops(),
        bw_bytes_per_s: d.bw_bytes() as f64,
        ios: d.total_ios,
        slat_mean_ns: d.slat.stat.mean,
        clat_mean_ns: d.clat.stat.mean,
        clat_min_ns: d.clat.stat.min as f64,
        clat_max_ns: d.clat.stat.max as f64,
        clat_pct_ns: pct.into_iter().map(|(p, v)| (p, v as f64)).collect(),
    }
}

/// Run one fio job (its command-line options) alone on `dev` in the root
/// cgroup; the figures come back in the same shape as real fio's.
pub fn simulate(dev: &DeviceConfig, cpu: CpuCosts, job_args: &str) -> Result<FioResult, String> {
    let args = blklab_fio::split_cmdline(job_args).map_err(|e| e.to_string())?;
    let specs = blklab_fio::parse_cmdline(&args).map_err(|e| e.to_string())?;
    let spec = specs
        .into_iter()
        .next()
        .ok_or_else(|| format!("'{job_args}' defines no fio job"))?;
    let mixed = spec.unified_rw_reporting != blklab_fio::UnifiedRw::None;
    let mut tree = CgroupTree::new();
    let cg = tree.ensure("/").map_err(|e| e.to_string())?;
    let cfg = SimConfig {
        pagecache: Default::default(),
        seed: 1,
        hz: Hz(250),
        switches: Switches::default(),
        cgroups: tree,
        devices: vec![dev.clone()],
        jobs: vec![JobConfig {
            spec,
            clone: 0,
            cgroup: cg,
            dev: 0,
            groupid: 0,
        }],
        cpu,
        time_limit: None,
        writes: Vec::new(),
    };
    let mut sim = Sim::new(cfg, Tracer::new(None)).map_err(|e| e.to_string())?;
    let r = sim.run();
    let st = &r.jobs.first().ok_or("the simulator ran no job")?.stats;
    Ok(FioResult {
        read: dir_of(&st.dirs[0]),
        write: dir_of(&st.dirs[1]),
        mixed: mixed.then(|| dir_of(&st.mixed())),
        cpu_pct: {
            let (usr, sys) = st.cpu_pct();
            usr + sys
        },
        command: format!("(simulated) fio {job_args}"),
    })
}
