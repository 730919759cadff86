//! What calibrate prints: the measurements (with the fio command behind each
//! figure under --verbose), the `[[device]]` block in the scenario format, and
//! the `io.cost.model` line.

use std::fmt::Write as _;

use blklab_core::drivers::cloud::CloudSpec;
use blklab_core::drivers::ssd::LatencyDist;

use crate::facts::DeviceFacts;
use crate::fit::{Fit, Measured, ModelKind};
use crate::plan::Job;

fn dist(d: &LatencyDist) -> String {
    match *d {
        LatencyDist::Fixed { us } => format!("{{ dist = \"fixed\", us = {us} }}"),
        LatencyDist::FixedExp {
            fixed_us,
            exp_mean_us,
        } => format!(
            "{{ dist = \"fixed_exp\", fixed_us = {fixed_us}, exp_mean_us = {exp_mean_us} }}"
        ),
        LatencyDist::Lognormal { median_us, sigma } => {
            format!("{{ dist = \"lognormal\", median_us = {median_us}, sigma = {sigma} }}")
        }
    }
}

fn cloud_keys(c: &CloudSpec, s: &mut String) {
    let mut kv = |k: &str, v: Option<String>| {
        if let Some(v) = v {
            let _ = writeln!(s, "{k} = {v}");
        }
    };
    kv("iops", c.iops.map(|v| v.to_string()));
    kv("bps", c.bps.map(|v| v.to_string()));
    kv("per_direction", c.per_direction.map(|v| v.to_string()));
    kv("io_unit_kb", c.io_unit_kb.map(|v| v.to_string()));
    kv("refill_ms", c.refill_ms.map(|v| v.to_string()));
    kv("bucket_ms", c.bucket_ms.map(|v| v.to_string()));
    kv(
        "throttle_window_ms",
        c.throttle_window_ms.map(|v| v.to_string()),
    );
    kv("latency_ns", c.latency_ns.map(|v| v.to_string()));
    kv("xfer_bps", c.xfer_bps.map(|v| v.to_string()));
    kv("queue_depth", c.queue_depth.map(|v| v.to_string()));
}

/// The `[host]` section of the loop model: the host's CPUs, the fitted
/// wake-up costs and fio's own costs (in `[host]` rather than `[run]`, so
/// the block carries everything its validation ran with).
fn host_section(cpus: &blklab_core::CpuCosts, s: &mut String) {
    let h = &cpus.cpus;
    let _ = writeln!(s, "[host]");
    let _ = writeln!(s, "cpus = {}   # this host's online CPUs", h.nr);
    let _ = writeln!(
        s,
        "wake_ns = {}   # waking a sleeping task onto an idle CPU (QD1)",
        h.wake_ns
    );
    let _ = writeln!(s, "wake_tail_ns = {}", h.wake_tail_ns);
    let _ = writeln!(s, "irq_ns = {}", h.irq_ns);
    let _ = writeln!(s, "timer_ns = {}", h.timer_ns);
    let bg = &h.background;
    if bg.enabled() {
        let _ = writeln!(
            s,
            "stall_interval_ns = {}   # background work: each busy CPU stalled this often (mean)",
            bg.interval_ns
        );
        let _ = writeln!(s, "stall_ns = {}   # for this long", bg.stall_ns);
        let _ = writeln!(s, "stall_dist = \"{}\"", bg.dist.name());
    }
    let _ = writeln!(
        s,
        "submit_ns = {}   # fio's slat on the busy device",
        cpus.submit_ns
    );
    let _ = writeln!(s, "reap_ns = {}", cpus.reap_ns);
}

/// The `[[device]]` block (scenario TOML) with the model `kind`; the loop
/// model's comes after its `[host]` section.
pub fn device_block(f: &DeviceFacts, fit: &Fit, kind: ModelKind) -> String {
    let mut s = String::new();
    let host = fit.host_for(kind).cpu;
    if kind == ModelKind::Loop || host.cpus.nr > 0 {
        host_section(&host, &mut s);
    }
    let _ = writeln!(s, "[[device]]");
    let _ = writeln!(s, "name = \"{}\"", f.name);
    let _ = writeln!(s, "devno = \"{}\"", f.devno);
    let _ = writeln!(s, "scheduler = \"none\"");
    let _ = writeln!(s, "queue_depth = {}", f.nr_requests);
    let _ = writeln!(s, "nr_requests = {}", f.nr_requests);
    let _ = writeln!(s, "max_sectors_kb = {}", f.max_sectors_kb);
    let _ = writeln!(s, "logical_block_size = {}", f.logical_block_size);
    let _ = writeln!(s, "rotational = {}", f.rotational);
    let _ = writeln!(s, "capacity = \"{}\"", f.size_bytes);
    if fit.host.idle_wake_ns > 0 {
        let _ = writeln!(
            s,
            "idle_wake_ns = {}   # a submission to the idle device wakes its worker",
            fit.host.idle_wake_ns
        );
    }
    let _ = writeln!(s, "[device.model]");
    match kind {
        ModelKind::Ssd => {
            let m = &fit.ssd;
            let _ = writeln!(s, "kind = \"ssd\"");
            let _ = writeln!(s, "units = {}", m.units);
            let _ = writeln!(s, "read = {}", dist(&m.read));
            let _ = writeln!(s, "write = {}", dist(&m.write));
            let _ = writeln!(s, "unit_bps = {}", m.unit_bps);
            if let Some(w) = m.unit_write_bps {
                let _ = writeln!(s, "unit_write_bps = {w}");
            }
            let _ = writeln!(s, "queue_depth = {}", m.queue_depth);
        }
        ModelKind::Linear => {
            let m = &fit.linear;
            let _ = writeln!(s, "kind = \"linear\"");
            for (k, v) in [
                ("rbps", m.rbps),
                ("rseqiops", m.rseqiops),
                ("rrandiops", m.rrandiops),
                ("wbps", m.wbps),
                ("wseqiops", m.wseqiops),
                ("wrandiops", m.wrandiops),
                ("parallelism", m.parallelism as u64),
                ("latency_ns", m.latency_ns),
                ("queue_depth", m.queue_depth as u64),
            ] {
                let _ = writeln!(s, "{k} = {v}");
            }
        }
        ModelKind::Cloud => {
            let _ = writeln!(s, "kind = \"cloud\"");
            cloud_keys(&fit.cloud.clone().unwrap_or_default(), &mut s);
        }
        ModelKind::Loop => {
            let l = fit.loop_fit.as_ref();
            let c = l.map(|l| l.costs).unwrap_or_default();
            let file = l.map_or(crate::fit::LoopFile::Tmpfs, |l| l.file);
            let _ = writeln!(s, "kind = \"loop\"");
            let _ = writeln!(s, "backing = \"{}\"", file.backing());
            let _ = writeln!(
                s,
                "worker_ns = {}   # the worker's CPU per request",
                c.worker_ns
            );
            let _ = writeln!(
                s,
                "worker_ns_per_kib = {}   # and per KiB copied",
                c.worker_ns_per_kib
            );
            if let Some(v) = c.worker_write_ns {
                let _ = writeln!(s, "worker_write_ns = {v}   # a write's, per request");
            }
        }
    }
    s
}

/// The measurement table: one row per fio job.
pub fn measurements(jobs: &[Job], m: &Measured, verbose: bool) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<24} {:>10} {:>10} {:>10} {:>10} {:>10}  what",
        "fio job", "IOPS", "MiB/s", "clat mean", "clat p50", "clat p99"
    );
    for j in jobs {
        let Some(r) = m.get(&j.id) else { continue };
        let d = r.main();
        let _ = writeln!(
            s,
            "{:<24} {:>10.0} {:>10.1} {:>8.1}µs {:>8.1}µs {:>8.1}µs  {}",
            j.id,
            d.iops,
            d.bw_bytes_per_s / 1048576.0,
            d.clat_mean_ns / 1e3,
            d.pct_ns(50.0) / 1e3,
            d.pct_ns(99.0) / 1e3,
            j.what
        );
        if verbose {
            let _ = writeln!(s, "    {}", r.command);
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fit::ModelKind;
    use blklab_core::drivers::linear::LinearSpec;
    use blklab_core::drivers::ssd::{Placement, SsdSpec};
    use blklab_core::CpuCosts;

    #[test]
    fn every_block_parses_back_and_builds() {
        let facts = DeviceFacts {
            name: "loop7".into(),
            devno: "7:7".into(),
            size_bytes: 256 << 20,
            max_sectors_kb: 1280,
            logical_block_size: 512,
            nr_requests: 128,
            rotational: false,
        };
        let fit = Fit {
            linear: LinearSpec {
                rbps: 1 << 30,
                rseqiops: 50_000,
                rrandiops: 40_000,
                wbps: 1 << 29,
                wseqiops: 30_000,
                wrandiops: 20_000,
                parallelism: 1,
                latency_ns: 20_000,
                queue_depth: 128,
            },
            ssd: SsdSpec {
                units: 3,
                read: LatencyDist::FixedExp {
                    fixed_us: 40.5,
                    exp_mean_us: 9.25,
                },
                write: LatencyDist::Lognormal {
                    median_us: 30.0,
                    sigma: 0.4,
                },
                unit_bps: 2_000_000_000,
                unit_write_bps: Some(1_500_000_000),
                placement: Placement::LeastBusy,
                stripe_kb: 128,
                queue_depth: 128,
            },
            cloud: Some(CloudSpec {
                iops: Some(500),
                bps: Some(1 << 40),
                per_direction: Some(true),
                refill_ms: Some(100),
                bucket_ms: Some(100),
                latency_ns: Some(60_000),
                ..CloudSpec::default()
            }),
            chosen: ModelKind::Ssd,
            host: crate::fit::HostCosts {
                cpu: CpuCosts::default(),
                idle_wake_ns: 7_000,
            },
            loop_fit: Some(crate::loop_fit::LoopFit {
                file: crate::fit::LoopFile::Tmpfs,
                costs: crate::loop_fit::WorkerCosts {
                    worker_ns: 2_500,
                    worker_ns_per_kib: 200,
                    ..Default::default()
                },
                host: crate::fit::HostCosts {
                    cpu: CpuCosts {
                        submit_ns: 2_600,
                        cpus: blklab_core::sim::host_cpus::HostCpus {
                            wake_tail_ns: 4_000,
                            // printed only when fitted (stall_fit)
                            background: blklab_core::sim::background::Background {
                                interval_ns: 5_000_000,
                                stall_ns: 90_000,
                                ..Default::default()
                            },
                            ..blklab_core::sim::host_cpus::HostCpus::measured(2)
                        },
                        ..CpuCosts::default()
                    },
                    idle_wake_ns: 7_000,
                },
            }),
            host_cpus: Some(2),
            notes: vec![],
        };
        for k in [
            ModelKind::Ssd,
            ModelKind::Linear,
            ModelKind::Cloud,
            ModelKind::Loop,
        ] {
            let text = device_block(&facts, &fit, k);
            let (dev, cpu) =
                crate::sim_run::block_from_toml(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
            // only the loop model carries the host (its worker is a task on it)
            assert_eq!(cpu.is_some(), k == ModelKind::Loop, "{text}");
            // the background stalls with it, read back whole (below: cpus)
            assert_eq!(text.contains("stall_ns = 90000"), k == ModelKind::Loop);
            if let Some(c) = cpu {
                let want = fit.host_for(ModelKind::Loop).cpu;
                assert_eq!(c.cpus, want.cpus, "{text}");
                assert_eq!((c.submit_ns, c.reap_ns), (want.submit_ns, want.reap_ns));
            }
            assert_eq!(dev.info.capacity_bytes, 256 << 20);
            assert_eq!(dev.info.max_sectors_kb, 1280);
            assert_eq!(dev.idle_wake_ns, 7_000);
            let r = crate::sim_run::simulate(
                &dev,
                cpu.unwrap_or_default(),
                "--name=x --direct=1 --ioengine=libaio --rw=randread --bs=4k --iodepth=4 --time_based --runtime=1",
            )
            .unwrap();
            assert!(r.read.iops > 100.0, "{k:?}: {}", r.read.iops);
        }
        assert!(fit.io_cost_model("7:7").contains("wrandiops=20000"));
        // a CPU-bound device's free-host models carry the host they were
        // fitted on; the loop model always does
        let mut bound = fit.clone();
        bound.host.cpu.cpus = blklab_core::sim::host_cpus::HostCpus::measured(2);
        for k in [ModelKind::Ssd, ModelKind::Loop] {
            let text = device_block(&facts, &bound, k);
            assert!(text.starts_with("[host]\ncpus = 2"), "{text}");
        }
        assert!(device_block(&facts, &fit, ModelKind::Ssd).starts_with("[[device]]"));
    }
}
