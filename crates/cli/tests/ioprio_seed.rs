//! End-to-end direction tests for the seed-001 reproductions
//! (examples/ioprio-case{1,2}-*.toml) under
//! `ioprio.content_activity = off | iter-bio | add-page`.
//!
//! Case 1 is cut to 3 simulated seconds (debug builds are slow); the
//! simulator is deterministic, so the tolerances below guard against model
//! changes, not noise. docs/fidelity/ioprio.md explains the magnitudes.

use std::path::Path;

use blklab::runner;
use blklab::scenario::Scenario;
use blklab_core::pagecache::io::PcJobStats;
use blklab_core::time::NSEC_PER_SEC;

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
/// once: no PG_workingset).
#[test]
fn case1_fault_wait_improves_with_both_variants() {
    let off = run("ioprio-case1-fault-latency.toml", "off", 3);
    let o = sum(&off, "costmem");
    assert!(o.major_faults > 1000, "a page-fault-heavy run: {o:?}");
    assert_eq!(o.read_bios_rt, 0, "no promotion with the switch off");
    for mode in ["iter-bio", "add-page"] {
        let r = run("ioprio-case1-fault-latency.toml", mode, 3);
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

/// Case 2: 8 buffered 4k random readers. The seed reports +23 % throughput;
/// the model finds no mechanism for a gain in a read-only workload: few
/// random-read refaults carry PG_workingset (pages read once before being
/// evicted), the promoted ones only reorder reads, and mq-deadline's strict
/// priority (a BE request waits while an RT one is in flight) idles part of
/// the device. The test pins that finding: some bios promoted, throughput
/// change within [-10 %, +2 %].
#[test]
fn case2_randread_throughput_change_is_small() {
    let bytes = |r: &blklab_core::RunResult| -> u64 {
        r.jobs.iter().map(|j| j.stats.dirs[0].io_bytes).sum()
    };
    let off = run("ioprio-case2-randread.toml", "off", 6);
    let o = sum(&off, "mytest");
    assert_eq!(o.read_bios_rt, 0);
    assert!(o.read_miss_pages > 1000 && o.read_hit_pages > 1000, "{o:?}");
    let b0 = bytes(&off);
    for mode in ["iter-bio", "add-page"] {
        let r = run("ioprio-case2-randread.toml", mode, 6);
        let s = sum(&r, "mytest");
        assert!(s.read_bios_rt > 0, "{mode}: some refaults promoted: {s:?}");
        assert!(
            s.read_bios_rt * 10 < s.read_bios,
            "{mode}: a minority: {s:?}"
        );
        let b1 = bytes(&r);
        assert!(
            b1 * 100 >= b0 * 90 && b1 * 100 <= b0 * 102,
            "{mode}: throughput {b0} -> {b1} bytes"
        );
    }
}
