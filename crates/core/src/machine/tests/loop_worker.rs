//! The loop worker (`machine::loop_worker`): over a file in memory its copy
//! on a CPU completes the request; over a device it spends `worker_ns`
//! before the lower bio goes down. On a 1-CPU host the worker and the fio
//! task take turns, and the pace follows from the costs.

use super::host_cpus::{host, WAKE_NS};
use super::*;
use crate::drivers::loop_dev::LoopSpec;

const WORKER_NS: u64 = 4_000;
const WORKER_NS_PER_KIB: u64 = 250;

/// A loop device over a tmpfs file with the test's worker costs.
pub(super) fn tmpfs_loop() -> DeviceConfig {
    let mut d = nullb_dev(0, 128);
    d.info.name = "loop0".into();
    d.info.major = 7;
    d.model = ModelSpec::Loop(LoopSpec {
        backing: Some("tmpfs".into()),
        worker_ns: WORKER_NS as i64,
        worker_ns_per_kib: WORKER_NS_PER_KIB as i64,
        ..LoopSpec::default()
    });
    d
}

fn run(cfg: SimConfig) -> crate::machine::RunResult {
    Sim::new(cfg, Tracer::default()).unwrap().run()
}

/// The worker's CPU time for one 4 KiB request.
const WORK_4K_NS: u64 = WORKER_NS + 4 * WORKER_NS_PER_KIB;

#[test]
fn one_cpu_qd1_on_a_tmpfs_loop_runs_at_one_over_the_cpu_costs() {
    // the job submits (2 µs) and blocks; the worker is woken onto the CPU
    // (2.5 µs) and copies (5 µs), completing the request in its own
    // context (no interrupt); it blocks, the job is woken (2.5 µs) and
    // reaps (1 µs): 13 µs a request, nothing overlaps on one CPU
    let mut cfg = config(
        vec![tmpfs_loop()],
        vec![(job("a", RwPattern::RandRead, 4096, 1, 1), "/")],
    );
    cfg.cpu.cpus = host(1);
    let r = run(cfg);
    let per_io = 2_000 + WAKE_NS + WORK_4K_NS + WAKE_NS + 1_000;
    let want = 1e9 / per_io as f64;
    let got = r.jobs[0].stats.dirs[0].total_ios as f64;
    assert!(
        (got / want - 1.0).abs() < 0.01,
        "{got} I/Os, want {want:.0}"
    );
}

#[test]
fn two_blkcg_workers_share_one_cpu() {
    // two QD8 readers in two cgroups: a worker each, both always with
    // work; the one CPU is shared between them (and the jobs), so the
    // two get the same I/Os and together no more than the CPU allows
    let two_groups = |nr_cpus: u32| {
        let mut cfg = config(
            vec![tmpfs_loop()],
            vec![
                (job("a", RwPattern::RandRead, 4096, 8, 1), "/a"),
                (job("b", RwPattern::RandRead, 4096, 8, 1), "/b"),
            ],
        );
        cfg.cpu.cpus = host(nr_cpus);
        run(cfg)
    };
    let r = two_groups(1);
    let (a, b) = (
        r.jobs[0].stats.dirs[0].total_ios,
        r.jobs[1].stats.dirs[0].total_ios,
    );
    assert!(a.abs_diff(b) * 50 < a + b, "{a} vs {b}");
    let cpu_bound = 1e9 / WORK_4K_NS as f64;
    let total = (a + b) as f64;
    assert!(total < cpu_bound, "{total} > {cpu_bound:.0}");
    // and well above a single QD1 stream: the workers batch their queues
    assert!(total > 0.5 * cpu_bound, "{total}");
    // the same on two CPUs: each worker can have one, about twice as much
    let r2 = two_groups(2);
    let total2: u64 = r2.jobs.iter().map(|j| j.stats.dirs[0].total_ios).sum();
    assert!(total2 as f64 > 1.5 * total, "{total2} vs {total}");
}

#[test]
fn free_host_worker_is_a_fifo_server() {
    // cpus = 0: a QD1 request waits for nothing; it completes the worker's
    // cost after its dispatch, at the start of the 2 µs submit call; fio's
    // clat runs from the call's end to the reap's (1 µs)
    let cfg = config(
        vec![tmpfs_loop()],
        vec![(job("a", RwPattern::RandRead, 4096, 1, 1), "/")],
    );
    let r = run(cfg);
    let d = &r.jobs[0].stats.dirs[0];
    assert_eq!(d.clat.stat.min, WORK_4K_NS - 2_000 + 1_000);
    assert_eq!(d.clat.stat.max, WORK_4K_NS - 2_000 + 1_000);
    // at QD4 the server is never idle: one request per cost, and each
    // request finds the three before it in the queue, so it completes 4
    // costs after its dispatch, 4 costs - 2 µs after its submit call ended
    let cfg = config(
        vec![tmpfs_loop()],
        vec![(job("a", RwPattern::RandRead, 4096, 4, 1), "/")],
    );
    let r = run(cfg);
    let d = &r.jobs[0].stats.dirs[0];
    let want = 1e9 / WORK_4K_NS as f64;
    assert!(
        (d.iops() / want - 1.0).abs() < 0.01,
        "{} vs {want}",
        d.iops()
    );
    let mean = d.clat.stat.mean;
    assert!(
        (mean / (4 * WORK_4K_NS - 2_000) as f64 - 1.0).abs() < 0.01,
        "clat mean {mean}"
    );
}

#[test]
fn a_worker_over_a_device_submits_the_lower_bio_worker_ns_after_dispatch() {
    // loop over nullb (10 µs), QD1, free host: the lower bio goes down
    // worker_ns after the loop request's dispatch, so every completion is
    // that much later than with no worker cost
    let clat = |worker_ns: i64| {
        let lower = nullb_dev(10_000, 256);
        let mut up = nullb_dev(0, 128);
        up.info.name = "loop0".into();
        up.info.major = 7;
        up.model = ModelSpec::Loop(LoopSpec {
            worker_ns,
            ..LoopSpec::over("nullb0")
        });
        let mut cfg = config(
            vec![lower, up],
            vec![(job("a", RwPattern::RandRead, 4096, 1, 1), "/")],
        );
        cfg.jobs[0].dev = 1;
        let r = run(cfg);
        let d = &r.jobs[0].stats.dirs[0];
        (d.clat.stat.min, d.clat.stat.max)
    };
    let (min0, max0) = clat(0);
    let (min7, max7) = clat(7_000);
    assert_eq!(min7, min0 + 7_000);
    assert_eq!(max7, max0 + 7_000);
}

#[test]
fn loop_spec_checks() {
    let ok = LoopSpec {
        backing: Some("tmpfs".into()),
        ..LoopSpec::default()
    };
    assert!(ok.check().is_ok());
    let both = LoopSpec {
        backend: Some("sda".into()),
        ..ok.clone()
    };
    assert!(both.check().unwrap_err().contains("not both"));
    assert!(LoopSpec::default()
        .check()
        .unwrap_err()
        .contains("backend or backing"));
    let unknown = LoopSpec {
        backing: Some("ext4".into()),
        ..LoopSpec::default()
    };
    assert!(unknown.check().unwrap_err().contains("unknown"));
    let neg = LoopSpec {
        worker_ns: -1,
        ..ok.clone()
    };
    assert!(neg.check().unwrap_err().contains("worker_ns = -1"));
    let big = LoopSpec {
        worker_ns_per_kib: 2_000_000_000,
        ..ok.clone()
    };
    assert!(big.check().unwrap_err().contains("worker_ns_per_kib"));
    let copy_over_dev = LoopSpec {
        worker_ns_per_kib: 10,
        ..LoopSpec::over("sda")
    };
    assert!(copy_over_dev
        .check()
        .unwrap_err()
        .contains("only for a backing file"));
    let write_over_dev = LoopSpec {
        worker_write_ns: Some(10),
        ..LoopSpec::over("sda")
    };
    assert!(write_over_dev
        .check()
        .unwrap_err()
        .contains("worker_write_ns: only for a backing file"));
    let neg_write = LoopSpec {
        worker_write_ns_per_kib: Some(-5),
        ..ok.clone()
    };
    assert!(neg_write
        .check()
        .unwrap_err()
        .contains("worker_write_ns_per_kib = -5"));
    let file = LoopSpec {
        backing: Some("file".into()),
        ..ok.clone()
    };
    assert!(file.check().is_ok());
}

/// A file whose writes cost more than its reads (`backing = "file"`,
/// `worker_write_ns`): on one CPU at QD1, reads run at one over the read
/// costs and writes at one over the write costs.
#[test]
fn a_cached_files_writes_cost_the_write_costs() {
    const WRITE_NS: u64 = 9_000;
    let per_io = |rw: RwPattern| {
        let mut d = tmpfs_loop();
        d.model = ModelSpec::Loop(LoopSpec {
            backing: Some("file".into()),
            worker_ns: WORKER_NS as i64,
            worker_ns_per_kib: WORKER_NS_PER_KIB as i64,
            worker_write_ns: Some(WRITE_NS as i64),
            ..LoopSpec::default()
        });
        let mut cfg = config(vec![d], vec![(job("a", rw, 4096, 1, 1), "/")]);
        cfg.cpu.cpus = host(1);
        let r = run(cfg);
        let dir = usize::from(rw == RwPattern::RandWrite);
        1e9 / r.jobs[0].stats.dirs[dir].total_ios as f64
    };
    // the write's per-KiB cost defaults to the read's
    let fixed = 2_000 + WAKE_NS + WAKE_NS + 1_000;
    let read = (fixed + WORK_4K_NS) as f64;
    let write = (fixed + WRITE_NS + 4 * WORKER_NS_PER_KIB) as f64;
    assert!((per_io(RwPattern::RandRead) / read - 1.0).abs() < 0.01);
    assert!((per_io(RwPattern::RandWrite) / write - 1.0).abs() < 0.01);
}

/// An upper loop over a lower loop (the harness's stacked capped disk with
/// its workers), QD1: the upper worker's item submits the lower bio, whose
/// worker item is queued on the same pool; the kworker that ran the upper
/// item takes the lower one next without sleeping (`keep_working`), so one
/// kworker does both levels' work back to back and the spare, woken by the
/// lower item's queueing, finds nothing. On two CPUs the spare's wake-up is
/// off the I/O's path: per I/O the submit, one kworker wake-up, both
/// levels' work, the job's wake-up and its reap (a worker task per device
/// would put a second kworker wake-up on the path). On one CPU the spare
/// runs before the job (it was woken first), and being the last to go idle
/// it is the one the next I/O wakes (the idle list is LIFO): the two
/// kworkers take turns, an I/O each.
#[test]
fn one_kworker_runs_both_levels_of_a_stacked_loop_back_to_back() {
    const UPPER_NS: u64 = 3_000;
    let both = UPPER_NS + WORK_4K_NS;
    let stacked = |nr_cpus: u32| {
        let mut lower = tmpfs_loop();
        lower.info.name = "loop1".into();
        lower.info.minor = 1;
        let mut up = nullb_dev(0, 128);
        up.info.name = "loop0".into();
        up.info.major = 7;
        up.model = ModelSpec::Loop(LoopSpec {
            worker_ns: UPPER_NS as i64,
            ..LoopSpec::over("loop1")
        });
        let mut cfg = config(
            vec![lower, up],
            vec![(job("a", RwPattern::RandRead, 4096, 1, 1), "/")],
        );
        cfg.jobs[0].dev = 1;
        cfg.cpu.cpus = host(nr_cpus);
        let mut sim = Sim::new(cfg, Tracer::default()).unwrap();
        let ios = sim.run().jobs[0].stats.dirs[0].total_ios;
        let lw = &sim.k.loop_workers;
        // the kernel's rule: the kworker that left the idle list with work
        // waiting and none idle made one spare; no more were needed
        assert_eq!(lw.pool.nr_workers(), 2, "{nr_cpus} CPUs");
        let now = sim.k.clk.now;
        let own: Vec<u64> = lw
            .kworkers
            .iter()
            .map(|k| sim.k.cpus.usage(k.task.unwrap(), now).0)
            .collect();
        // every command of both levels ran on a kworker (the last I/O's
        // may be cut by the run's end)
        let total: u64 = own.iter().sum();
        assert!(
            total.abs_diff(ios * both) <= 2 * both,
            "{own:?} for {ios} I/Os"
        );
        (ios, own)
    };
    // on 2 CPUs the path is one kworker wake-up, both levels' work and
    // the job's wake-up, with at most the submit and the reap beside
    // (the submit call overlaps the kworker's wake-up on the other CPU);
    // a second kworker wake-up on the path would be 2.5 µs more than that
    let (ios2, _) = stacked(2);
    let per_io = 1e9 / ios2 as f64;
    let path = (WAKE_NS + both + WAKE_NS) as f64;
    assert!(
        per_io >= path && per_io <= path + 3_000.0,
        "{per_io:.0} ns per I/O on 2 CPUs, path {path}"
    );
    let (ios1, own) = stacked(1);
    assert!(
        own[0].abs_diff(own[1]) <= 2 * both,
        "{own:?} for {ios1} I/Os"
    );
}
