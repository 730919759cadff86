//! End-to-end checks of the engine with the simplest device: the numbers
//! follow from the model's parameters, so they are asserted exactly or within
//! the quantisation of fio's statistics.

mod fio_offsets;
mod host_background;
mod host_cpus;
mod idle_wake;
mod iocost_capped;
mod kblockd;
mod kthrotld;
mod loop_worker;
mod mq_deadline;
mod pagecache;
mod phases;
mod qos_hooks;
mod stacking;
mod submit_wake;
mod tag_wait;
mod throttle_order;

use blklab_fio::options::{Engine, RwPattern};
use blklab_fio::JobSpec;

use crate::block::blk_cgroup::CgroupTree;
use crate::drivers::{nullb::NullbSpec, DeviceInfo, ModelSpec};
use crate::machine::{CpuCosts, DeviceConfig, JobConfig, Sim, SimConfig};
use crate::sim::switches::Switches;
use crate::sim::time::{Hz, NSEC_PER_SEC};
use crate::sim::trace::Tracer;

pub(crate) fn nullb_dev(completion_nsec: u64, depth: u32) -> DeviceConfig {
    DeviceConfig {
        info: DeviceInfo {
            nr_requests: depth,
            queue_depth: depth,
            capacity_bytes: 1 << 34,
            ..crate::block::testutil::device("nullb0", 252, 0)
        },
        model: ModelSpec::Nullb(NullbSpec {
            completion_nsec,
            irqmode: 2,
            hw_queue_depth: depth,
            mbps: 0,
        }),
        scheduler: "none".into(),
        iosched: Vec::new(),
        wbt: None,
        idle_wake_ns: 0,
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
            ..Default::default()
        },
        time_limit: None,
        writes: Vec::new(),
        pagecache: Default::default(),
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

#[test]
fn throttle_riops_paces_and_shows_in_clat() {
    // io.max riops=100 on a QD1 job: ~100 IOPS, the wait shows in clat, not slat.
    let mut cfg = config(
        vec![nullb_dev(10_000, 64)],
        vec![(job("a", RwPattern::RandRead, 4096, 1, 5), "/t")],
    );
    let t = cfg.cgroups.find("/t").unwrap();
    cfg.cgroups.write_file(t, "io.max", "252:0 riops=100");
    let mut sim = Sim::new(cfg, Tracer::default()).unwrap();
    let r = sim.run();
    let st = &r.jobs[0].stats.dirs[0];
    let iops = st.iops();
    assert!((95.0..=101.0).contains(&iops), "iops {iops}");
    assert!(
        st.slat.stat.max < 100_000,
        "slat max {} (throttling must not block the submitter)",
        st.slat.stat.max
    );
    assert!(
        st.clat.stat.mean > 5_000_000.0,
        "clat mean {}",
        st.clat.stat.mean
    );
}

/// Jobs `lo` and `hi` in cgroups /lo and /hi of device 8:0 under
/// blk-iocost: the user cost model `model` and QoS `qos` (the bodies after
/// `ctrl=user`), io.weight `weights` for /lo and /hi.
pub(crate) fn iocost_lo_hi(
    dev: DeviceConfig,
    [lo_job, hi_job]: [JobSpec; 2],
    model: &str,
    qos: &str,
    weights: [u32; 2],
) -> SimConfig {
    let mut cfg = config(vec![dev], vec![(lo_job, "/lo"), (hi_job, "/hi")]);
    cfg.cgroups.write_file(
        0,
        "io.cost.model",
        &format!("8:0 ctrl=user model=linear {model}"),
    );
    cfg.cgroups
        .write_file(0, "io.cost.qos", &format!("8:0 enable=1 ctrl=user {qos}"));
    for (path, w) in ["/lo", "/hi"].into_iter().zip(weights) {
        let cg = cfg.cgroups.find(path).unwrap();
        cfg.cgroups
            .write_file(cg, "io.weight", &format!("default {w}"));
    }
    cfg
}

#[test]
fn iocost_fixed_vrate_weights_split_1_to_3() {
    // A device ten times faster than the cost model, vrate pinned at 100 %
    // (the real-kernel-lab recipe): iocost alone limits, so the total is the
    // model's rate and weights 100 and 300 split it 1:3.
    use crate::drivers::linear::LinearSpec;
    let mut dev = nullb_dev(10_000, 64);
    dev.info.major = 8;
    dev.info.minor = 0;
    dev.model = ModelSpec::Linear(LinearSpec {
        rbps: 4_000_000_000,
        rseqiops: 100_000,
        rrandiops: 100_000,
        wbps: 4_000_000_000,
        wseqiops: 100_000,
        wrandiops: 100_000,
        parallelism: 1,
        latency_ns: 0,
        queue_depth: 64,
    });
    let cfg = iocost_lo_hi(
        dev,
        [
            job("lo", RwPattern::RandRead, 4096, 16, 4),
            job("hi", RwPattern::RandRead, 4096, 16, 4),
        ],
        "rbps=400000000 rseqiops=10000 rrandiops=10000 wbps=400000000 wseqiops=10000 wrandiops=10000",
        "rpct=0 rlat=0 wpct=0 wlat=0 min=100 max=100",
        [100, 300],
    );
    let mut sim = Sim::new(cfg, Tracer::default()).unwrap();
    let r = sim.run();
    let a = r.jobs[0].stats.dirs[0].iops();
    let b = r.jobs[1].stats.dirs[0].iops();
    let ratio = b / a;
    assert!((2.9..=3.1).contains(&ratio), "lo {a} hi {b} ratio {ratio}");
    let total = a + b;
    assert!((9_700.0..=10_050.0).contains(&total), "total {total}");
    // the waiting happens in the submitter: slat, not clat
    let (sl, cl) = (
        r.jobs[0].stats.dirs[0].slat.stat.mean,
        r.jobs[0].stats.dirs[0].clat.stat.mean,
    );
    // iocost paces the submitter: each submit call sleeps until the cgroup's
    // budget allows, so the mean slat is the interval between its I/Os. While
    // it sleeps it cannot reap, so completions wait: clat grows with depth.
    let interval = 1e9 / a;
    assert!(
        (sl - interval).abs() / interval < 0.02,
        "slat {sl} vs interval {interval}"
    );
    assert!(cl > sl, "slat {sl} clat {cl}");
}

/// Turning blk-iotrack's counting off (which also lets the block layer skip
/// the rq_qos chain) changes nothing else in the run: the
/// same fio figures, device totals and io.stat as with counting on, where the
/// counters are read and hold every completed bio.
#[test]
fn iotrack_counting_off_changes_nothing_else() {
    let mk = |counting: bool| {
        let cfg = config(
            vec![nullb_dev(10_000, 64)],
            vec![
                (job("a", RwPattern::RandRw, 4096, 8, 1), "/a"),
                (job("b", RwPattern::RandRead, 65536, 4, 1), "/b"),
            ],
        );
        let mut sim = Sim::new(cfg, Tracer::default()).unwrap();
        sim.set_iotrack_counting(counting);
        // with counting off the chain (blk-iotrack alone) is skipped per I/O
        assert_eq!(sim.k.blk.devs[0].st.qos_any.is_empty(), !counting);
        sim.run_until(NSEC_PER_SEC / 2);
        let mid = counting.then(|| sim.iotrack_stat_file(1));
        let r = sim.run();
        let io_stat: Vec<String> = (0..3).map(|cg| sim.io_stat(cg)).collect();
        let end = counting.then(|| (sim.iotrack_stat_file(1), sim.iotrack_sample(0, &[1, 2])));
        (format!("{:?} {:?}", r, io_stat), mid, end, r.bios_completed)
    };
    let (on, mid, end, bios) = mk(true);
    let (off, _, _, _) = mk(false);
    assert_eq!(on, off);
    // where it is read, blk-iotrack counted: a line mid-run and at the end,
    // and the cgroups' read+write I/Os add up to every completed bio
    assert!(mid.is_some_and(|l| l.starts_with("252:0 ")));
    let (line, sample) = end.unwrap();
    assert!(line.starts_with("252:0 "), "{line}");
    let counted: u64 = sample.cgroups[1..]
        .iter()
        .map(|(_, c)| c.ios.iter().sum::<u64>())
        .sum();
    assert_eq!(counted, bios);
}
