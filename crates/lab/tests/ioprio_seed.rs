//! End-to-end direction tests for the seed-001 reproductions
//! (examples/ioprio-case{1,2}-*.toml) under
//! `ioprio.content_activity = off | iter-bio | add-page`.
//!
//! Case 1 is cut to 3 simulated seconds (debug builds are slow); the
//! simulator is deterministic, so the tolerances below guard against model
//! changes, not noise. docs/fidelity/ioprio.md explains the magnitudes.

use std::path::Path;

use blklab_core::mm::report::PcJobStats;
use blklab_core::sim::time::NSEC_PER_SEC;
use blklab_lab::runner;
use blklab_lab::scenario::Scenario;

fn run(example: &str, mode: &str, secs: u64) -> blklab_core::RunResult {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(example);
    let sc = Scenario::load(&p).expect("example loads");
    let mut cfg = sc.config.clone();
    cfg.switches
        .set("ioprio.content_activity", mode)
        .expect("switch");
    cfg.time_limit = Some(secs * NSEC_PER_SEC);
    runner::run(&sc, &cfg, None).expect("runs").result
}

fn sum(r: &blklab_core::RunResult, name_prefix: &str) -> PcJobStats {
    let pc = r.pagecache.as_ref().expect("page cache used");
    let mut t = PcJobStats::default();
    for (i, j) in r.jobs.iter().enumerate() {
        if !j.name.starts_with(name_prefix) {
            continue;
        }
        let s = pc.jobs[i].as_ref().expect("page-cache job");
        t.major_faults += s.major_faults;
        t.fault_wait_ns += s.fault_wait_ns;
        t.read_bios += s.read_bios;
        t.read_bios_rt += s.read_bios_rt;
        t.read_hit_pages += s.read_hit_pages;
        t.read_miss_pages += s.read_miss_pages;
    }
    t
}

/// Case 1: memory users' fault I/O wait falls with the patch (seed: 736 µs →
/// 523 µs, −29 %). The model gives a larger cut (about −50 %: every fault
/// read is a refault of a mapped page and becomes RT, while the BE writeback
/// waits behind it), so the test asks for at least −20 % with both variants,
/// and none of the writeback bios may be promoted (dd's pages are written
/// once: no PG_workingset). The memory users' first ~2000 fault reads touch
/// their pages for the first time and are never promoted; every later one
/// is: 1833 of 3881 after 3 s, 3914 of 5962 after 4 s, 12477 of 14525 after
/// the example's 8 s (iter-bio). 4 s makes "most" a margin, not a race
/// with how fast the first touches go.
#[test]
fn case1_fault_wait_improves_with_both_variants() {
    let off = run("ioprio-case1-fault-latency.toml", "off", 4);
    let o = sum(&off, "costmem");
    assert!(o.major_faults > 1000, "a page-fault-heavy run: {o:?}");
    assert_eq!(o.read_bios_rt, 0, "no promotion with the switch off");
    for mode in ["iter-bio", "add-page"] {
        let r = run("ioprio-case1-fault-latency.toml", mode, 4);
        let s = sum(&r, "costmem");
        assert!(
            s.read_bios_rt * 2 > s.read_bios,
            "{mode}: most fault reads promoted: {s:?}"
        );
        let (a, b) = (o.mean_fault_wait_ns(), s.mean_fault_wait_ns());
        assert!(
            b * 100 <= a * 80,
            "{mode}: fault wait {a} ns -> {b} ns, expected at least -20 %"
        );
        assert_eq!(r.pagecache.as_ref().unwrap().write_bios_rt, 0);
    }
}

/// Case 2: the seed's 8 buffered 4k random readers over one 2000M region
/// (1 GiB of page cache). The seed reports +23 % throughput with the patch;
/// the faithful model gives a loss, and these tests pin the mechanism that
/// decides the sign:
/// * refaults of blocks already read by four or more jobs carry
///   PG_workingset (6.6 MGLRU) and become RT: a sizeable minority of bios;
/// * under mq-deadline a BE request is not dispatched while any RT request
///   is queued *or in flight* (`dd_queued` counts the device), so the device
///   runs below its depth and throughput falls;
/// * under `none` (like BFQ and Kyber, blind to the bio priority here) the
///   same promotions change nothing, to the byte.
///
/// Whole runs (every job reads its 2000M once): promotion builds up as
/// blocks gather readers, so a cut run would see little of it.
/// Returns fio's group bandwidth (io over the longest job's run time, the
/// seed's `READ: bw=` figure) in KiB/s, and the page-cache counters.
fn case2_bw(mode: &str, scheduler: &str) -> (u64, PcJobStats) {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/ioprio-case2-randread.toml");
    let sc = Scenario::load(&p).expect("example loads");
    let mut cfg = sc.config.clone();
    cfg.switches
        .set("ioprio.content_activity", mode)
        .expect("switch");
    for d in &mut cfg.devices {
        d.scheduler = scheduler.to_string();
    }
    let r = runner::run(&sc, &cfg, None).expect("runs").result;
    let bytes: u64 = r.jobs.iter().map(|j| j.stats.dirs[0].io_bytes).sum();
    let run_ms = r.jobs.iter().map(|j| j.stats.job_runtime_ms).max().unwrap();
    assert_eq!(bytes, (8 * 2000) << 20, "every job read its region once");
    (bytes / 1024 * 1000 / run_ms, sum(&r, "mytest"))
}

#[test]
fn case2_promotion_costs_throughput_under_mq_deadline() {
    let (b0, o) = case2_bw("off", "mq-deadline");
    assert_eq!(o.read_bios_rt, 0);
    assert!(
        o.read_miss_pages > 100_000 && o.read_hit_pages > 100_000,
        "{o:?}"
    );
    for mode in ["iter-bio", "add-page"] {
        let (b1, s) = case2_bw(mode, "mq-deadline");
        let pct = s.read_bios_rt * 100 / s.read_bios;
        assert!(
            (5..=50).contains(&pct),
            "{mode}: {pct} % of read bios promoted: {s:?}"
        );
        assert!(
            b1 * 100 <= b0 * 97 && b1 * 100 >= b0 * 80,
            "{mode}: bandwidth {b0} -> {b1} KiB/s, expected -3 % .. -20 %"
        );
    }
}

#[test]
fn case2_promotion_changes_nothing_without_a_priority_scheduler() {
    let (b0, _) = case2_bw("off", "none");
    let (b1, s) = case2_bw("iter-bio", "none");
    assert!(s.read_bios_rt * 20 > s.read_bios, "promoted: {s:?}");
    assert_eq!(b0, b1, "none ignores the priority: same bandwidth");
}
