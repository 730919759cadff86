//! End-to-end checks of the engine with the simplest device: the numbers
//! follow from the model's parameters, so they are asserted exactly or within
//! the quantisation of fio's statistics.

use blklab_fio::options::{Engine, RwPattern};
use blklab_fio::JobSpec;

use crate::cgroup::CgroupTree;
use crate::device::{nullb::NullbSpec, DeviceInfo, ModelSpec};
use crate::sim::{CpuCosts, DeviceConfig, JobConfig, Sim, SimConfig};
use crate::switches::Switches;
use crate::time::{Hz, NSEC_PER_SEC};
use crate::trace::Tracer;

pub(crate) fn nullb_dev(completion_nsec: u64, depth: u32) -> DeviceConfig {
    DeviceConfig {
        info: DeviceInfo {
            name: "nullb0".into(),
            major: 252,
            minor: 0,
            rotational: false,
            nr_requests: depth,
            queue_depth: depth,
            nr_hw_queues: 1,
            max_sectors_kb: 128,
            logical_block_size: 512,
            capacity_bytes: 1 << 34,
        },
        model: ModelSpec::Nullb(NullbSpec {
            completion_nsec,
            irqmode: 2,
            hw_queue_depth: depth,
            mbps: 0,
        }),
        scheduler: "none".into(),
        iosched: Vec::new(),
    }
}

pub(crate) fn job(name: &str, rw: RwPattern, bs: u32, iodepth: u32, runtime_s: u64) -> JobSpec {
    let mut s = JobSpec::new(name);
    s.rw = rw;
    s.bs = [
        blklab_fio::BsSpec::Fixed(bs),
        blklab_fio::BsSpec::Fixed(bs),
        blklab_fio::BsSpec::Fixed(bs),
    ];
    s.ioengine = Engine::Libaio;
    s.iodepth = iodepth;
    s.iodepth_batch_complete_max = iodepth;
    s.iodepth_low = iodepth;
    s.direct = true;
    s.runtime_ns = Some(runtime_s * NSEC_PER_SEC);
    s.time_based = true;
    s
}

pub(crate) fn config(devs: Vec<DeviceConfig>, jobs: Vec<(JobSpec, &str)>) -> SimConfig {
    let mut cg = CgroupTree::new();
    let mut jcs = Vec::new();
    for (spec, path) in jobs {
        let id = cg.ensure(path).unwrap();
        jcs.push(JobConfig {
            spec,
            clone: 0,
            cgroup: id,
            dev: 0,
            groupid: 0,
        });
    }
    SimConfig {
        seed: 1,
        hz: Hz(1000),
        switches: Switches::default(),
        cgroups: cg,
        devices: devs,
        jobs: jcs,
        cpu: CpuCosts {
            submit_ns: 2000,
            reap_ns: 1000,
        },
        time_limit: None,
        writes: Vec::new(),
    }
}

#[test]
fn qd1_latency_is_device_plus_cpu() {
    // QD1: each I/O = submit (2 µs) + device (10 µs) - overlap; clat = done + reap - issue.
    let cfg = config(
        vec![nullb_dev(10_000, 64)],
        vec![(job("a", RwPattern::RandRead, 4096, 1, 1), "/")],
    );
    let mut sim = Sim::new(cfg, Tracer::default()).unwrap();
    let r = sim.run();
    let st = &r.jobs[0].stats.dirs[0];
    // bio enters at start_time; submit returns at +2 µs; device done at +10 µs; reaped at +11 µs
    assert_eq!(st.slat.stat.min, 2000);
    assert_eq!(st.slat.stat.max, 2000);
    assert_eq!(st.clat.stat.min, 9000);
    assert_eq!(st.clat.stat.max, 9000);
    assert_eq!(st.lat.stat.min, 11000);
    // 1 s / 11 µs per I/O
    let n = st.clat.stat.samples;
    assert!((90_900..=90_910).contains(&n), "{n}");
    assert_eq!(st.total_ios, n);
    // the loop ends after the last in-flight I/O drains past the 1 s runtime,
    // and fio rounds the runtime up to the next ms (the seed shows 60001msec)
    assert_eq!(st.runtime_ms, 1001);
}

#[test]
fn qd32_throughput_bound_by_submit_cpu() {
    let cfg = config(
        vec![nullb_dev(10_000, 64)],
        vec![(job("a", RwPattern::RandRead, 4096, 32, 1), "/")],
    );
    let mut sim = Sim::new(cfg, Tracer::default()).unwrap();
    let r = sim.run();
    let st = &r.jobs[0].stats.dirs[0];
    // one submit per 2 µs of CPU: at most 500k IOPS; the device (64 deep, 10 µs) allows 6.4M
    let iops = st.iops();
    assert!(iops > 450_000.0 && iops <= 500_000.0, "{iops}");
    // with 2 µs per submission and 11 µs per I/O, about 11/2 I/Os overlap
    assert!(
        (5..=6).contains(&r.peak_bios_in_flight),
        "{}",
        r.peak_bios_in_flight
    );
}

#[test]
fn same_seed_same_result() {
    let mk = || {
        let cfg = config(
            vec![nullb_dev(10_000, 64)],
            vec![(job("a", RwPattern::RandRw, 4096, 8, 1), "/")],
        );
        let mut sim = Sim::new(cfg, Tracer::default()).unwrap();
        let r = sim.run();
        (
            r.events,
            r.jobs[0].stats.dirs[0].total_ios,
            r.jobs[0].stats.dirs[1].total_ios,
        )
    };
    assert_eq!(mk(), mk());
}
