//! The simulator's side: the printed `[[device]]` block read back by the
//! lab's scenario parser (so what is validated is exactly what the user
//! copies, read as the user's scenario file will be), and fio jobs from the same
//! command-line strings run on it, with a `blklab_core::SimConfig` built
//! directly (as crates/cli/src/bench.rs does).

use blklab_core::block::blk_cgroup::CgroupTree;
use blklab_core::sim::switches::Switches;
use blklab_core::sim::time::Hz;
use blklab_core::sim::trace::Tracer;
use blklab_core::{CpuCosts, DeviceConfig, JobConfig, Sim, SimConfig};
use blklab_lab::scenario::Scenario;
use std::path::Path;

use crate::fio_run::{DirFigures, FioResult, FIO_PERCENTILES};

/// What the simulated host and device charge the submitter: the run's CPU
/// costs (`[run] submit_ns`, and the host's CPUs) and the device's
/// `idle_wake_ns`.
#[derive(Debug, Clone, Copy, Default)]
pub struct HostCosts {
    pub cpu: CpuCosts,
    pub idle_wake_ns: u64,
}

/// The name the scenario parser's messages give the printed block.
const BLOCK_NAME: &str = "calibrate's block";

/// The device of a TOML text holding one `[[device]]` block.
pub fn device_from_toml(text: &str) -> Result<DeviceConfig, String> {
    Ok(block_from_toml(text)?.0)
}

/// The device of a TOML text holding one `[[device]]` block, and the run's
/// costs of its `[host]` section when it has one. The text is read by the
/// scenario parser (`blklab_lab::scenario`), so the keys, defaults and
/// checks are exactly those of a user's scenario file holding the block.
pub fn block_from_toml(text: &str) -> Result<(DeviceConfig, Option<CpuCosts>), String> {
    // A scenario needs a job: one on the block's only device, after its
    // last line so that the parser's line numbers are the block's own.
    let scenario = format!("{text}\n[[job]]\ncmdline = \"--name=calibrate-check\"\n");
    let sc = Scenario::parse(&scenario, Path::new(BLOCK_NAME)).map_err(|e| e.to_string())?;
    // calibrate's own output: anything the parser would warn a user of is a bug
    if let Some(w) = sc.warnings.first() {
        return Err(format!("the block draws a warning: {w}"));
    }
    let mut devices = sc.config.devices.into_iter();
    let (Some(dev), None) = (devices.next(), devices.next()) else {
        return Err(format!("{BLOCK_NAME}: expected exactly one [[device]]"));
    };
    // Without `[host]` the block's costs are the free host's defaults; the
    // caller has the fitted ones (fio's submit_ns, printed as a comment for
    // the scenario's `[run]`).
    let has_host = text
        .parse::<toml::Table>()
        .map_err(|e| format!("{BLOCK_NAME}: {e}"))?
        .contains_key("host");
    Ok((dev, has_host.then_some(sc.config.cpu)))
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

#[cfg(test)]
mod tests {
    use super::block_from_toml;

    /// A block with a fault is refused as a user's scenario file would be:
    /// the scenario parser's message, at the block's own line and column.
    #[test]
    fn a_bad_block_is_refused_by_the_scenario_parser_with_its_location() {
        let ok = "[[device]]\nname = \"loop0\"\ndevno = \"7:0\"\ncapacity = \"268435456\"\n[device.model]\nkind = \"nullb\"\n";
        let (dev, host) = block_from_toml(ok).unwrap();
        assert_eq!(dev.info.capacity_bytes, 256 << 20);
        assert!(host.is_none(), "no [host]: the caller's fitted costs");
        let cases = [
            (format!("[host]\ncpus = -1\n{ok}"), "calibrate's block:2:8"),
            (
                format!("[host]\ncpus = 2\nirq_ns = 1.5\n{ok}"),
                "calibrate's block:3:10",
            ),
            (ok.replace("7:0", "7"), "calibrate's block:3:9: devno '7'"),
            (
                format!("{ok}{}", ok.replace("loop0", "loop1").replace("7:0", "7:1")),
                "several devices",
            ),
        ];
        for (text, want) in cases {
            let e = block_from_toml(&text).expect_err(&text);
            assert!(e.contains(want), "{text}\n{e}\nlacks {want:?}");
        }
    }
}
