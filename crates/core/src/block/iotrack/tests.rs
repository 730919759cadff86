//! Tests of the rq_qos member: roll-up to ancestors with per-cgroup thresholds,
//! split fragments, the 12-bit size quirk, the blkg lifecycle, and mid-run writes.

use super::*;
use crate::block::bio::{Op, Origin};
use crate::sim::switches::Switches;
use crate::sim::time::Hz;
use crate::sim::trace::Tracer;

const US: u64 = 1_000;

fn dev() -> DeviceInfo {
    DeviceInfo {
        queue_depth: 32,
        capacity_bytes: 1 << 30,
        ..crate::block::testutil::device("nvme0n1", 259, 0)
    }
}

fn bio(cg: CgId, op: Op, bytes: u32, q: u64, d: u64) -> Bio {
    let mut b = Bio::new(0, cg, op, 0, bytes, Origin::Kernel { tag: 0 });
    (b.t_submit, b.t_queue, b.t_issue) = (q, q, d);
    b
}

fn complete(it: &mut IoTrack, tree: &CgroupTree, b: &Bio, now: u64) {
    let d = dev();
    let sw = Switches::default();
    let mut tr = Tracer::default();
    let mut ctx = Ctx {
        now,
        hz: Hz(1000),
        dev: &d,
        cgroups: tree,
        switches: &sw,
        trace: &mut tr,
        timer_moved: true,
    };
    let mut rel = Vec::new();
    it.done_bio(&mut ctx, b, &mut rel);
    assert!(rel.is_empty());
}

#[test]
fn rolls_up_to_every_ancestor_with_their_own_thresholds() {
    let mut tree = CgroupTree::new();
    let b = tree.ensure("/a/b").unwrap();
    let a = tree.find("/a").unwrap();
    let c = tree.ensure("/c").unwrap();
    // /a counts with tighter buckets: 70us is below its t0 = 75us.
    tree.write_file(
        a,
        LAT_THRESH_FILE,
        "259:0 75000 100000 200000 400000 1000000 2000000 4000000 8000000",
    );
    tree.write_file(c, LAT_THRESH_FILE, "8:0 1 2 3 4 5 6 7 8"); // another device: ignored here
    let mut it = IoTrack::new(&dev(), &tree).unwrap();
    assert!(it.has_blkg(a) && !it.has_blkg(b) && !it.has_blkg(c));

    complete(
        &mut it,
        &tree,
        &bio(b, Op::Read, 4096, 1_000, 1_000 + 20 * US),
        1_000 + 70 * US,
    );
    for cg in [b, a, ROOT] {
        let k = it.counters(cg);
        assert_eq!(k.ios, [1, 0, 0], "cg {cg}");
        assert_eq!(k.sectors, [8, 0, 0]);
        assert_eq!(k.tms[0], 70 * US);
        assert_eq!(k.dtms[0], 50 * US);
    }
    assert_eq!(it.counters(b).hit[0], [0, 1, 1, 1, 1, 1, 1, 1]);
    assert_eq!(it.counters(a).hit[0], [1, 1, 1, 1, 1, 1, 1, 1]);
    assert_eq!(it.counters(ROOT).hit[0], [0, 1, 1, 1, 1, 1, 1, 1]);
    assert_eq!(it.counters(c), &IotrackCounters::default());
    assert!(it.has_blkg(b));
    assert_eq!(it.stat_file(c), "");
    assert!(it.stat_file(b).starts_with(
        "259:0 mean: 70000 min: 70000 max: 70000 sum: 0 rios: 1 wios: 0 oios:0 rsts: 8 "
    ));
    assert_eq!(
        it.lat_thresh_file(a),
        "259:0 75000 100000 200000 400000 1000000 2000000 4000000 8000000\n"
    );
    assert_eq!(
        it.lat_thresh_file(ROOT),
        "259:0 50000 100000 200000 400000 1000000 2000000 4000000 8000000\n"
    );
}

#[test]
fn split_fragments_count_separately_and_size_is_12_bits() {
    let mut tree = CgroupTree::new();
    let g = tree.ensure("/g").unwrap();
    let mut it = IoTrack::new(&dev(), &tree).unwrap();
    // A 1 MiB write split at 128 KiB: 8 bios complete, each counted as one IO.
    for i in 0..8u64 {
        complete(
            &mut it,
            &tree,
            &bio(g, Op::Write, 128 << 10, 0, 10 * US),
            (100 + i) * US,
        );
    }
    let k = it.counters(g);
    assert_eq!(k.ios, [0, 8, 0]);
    assert_eq!(k.sectors[1], 2048);
    // A single 2 MiB bio (4096 sectors) is recorded as 0 sectors; 2 MiB + 4 KiB as 8.
    complete(
        &mut it,
        &tree,
        &bio(g, Op::Write, 2 << 20, 0, 0),
        5_000 * US,
    );
    complete(
        &mut it,
        &tree,
        &bio(g, Op::Write, (2 << 20) + 4096, 0, 0),
        5_000 * US,
    );
    let k = it.counters(g);
    assert_eq!(k.ios[1], 10);
    assert_eq!(k.sectors[1], 2048 + 8);
    // Flush and discard are "other"; a flush has no sectors.
    complete(&mut it, &tree, &bio(g, Op::Flush, 0, 0, 0), 30 * US);
    complete(&mut it, &tree, &bio(g, Op::Discard, 1 << 20, 0, 0), 30 * US);
    assert_eq!(it.counters(g).ios, [0, 10, 2]);
    assert_eq!(it.counters(g).sectors[2], 2048);
    assert_eq!(it.counters(ROOT).ios, [0, 10, 2]);
}

#[test]
fn mean_in_file_follows_read_time_fold() {
    let tree = CgroupTree::new();
    let mut it = IoTrack::new(&dev(), &tree).unwrap();
    assert!(it
        .stat_file(ROOT)
        .starts_with("259:0 mean: 0 min: 18446744073709551615 max: 0 sum: 0 "));
    let at =
        |q2c: u64, it: &mut IoTrack| complete(it, &tree, &bio(ROOT, Op::Read, 4096, 1, 0), 1 + q2c);
    at(10, &mut it);
    assert!(it
        .stat_file(ROOT)
        .starts_with("259:0 mean: 10 min: 10 max: 10 "));
    for _ in 0..3 {
        at(13, &mut it);
        let _ = it.stat_file(ROOT); // a read after each bio
    }
    // Kernel folds: 10, 11, 11, 11; the exact mean is 49/4 = 12.
    assert!(
        it.stat_file(ROOT)
            .starts_with("259:0 mean: 11 min: 10 max: 13 "),
        "{}",
        it.stat_file(ROOT)
    );
    assert_eq!(it.counters(ROOT).lat_mean, 12);
}

#[test]
fn lat_thresh_write_mid_run() {
    let mut tree = CgroupTree::new();
    let g = tree.ensure("/g").unwrap();
    let mut it = IoTrack::new(&dev(), &tree).unwrap();
    let d = dev();
    let sw = Switches::default();
    let mut tr = Tracer::default();
    let mut ctx = crate::block::testutil::ctx(0, &d, &tree, &sw, &mut tr);
    let line = "259:0 1000 2000 3000 4000 5000 6000 7000 8000";
    assert_eq!(
        it.write_file(&mut ctx, g, LAT_THRESH_FILE, line),
        Some(Ok(()))
    );
    assert_eq!(
        it.thresholds(g),
        [1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000]
    );
    assert!(it.has_blkg(g));
    let bad = it
        .write_file(&mut ctx, g, LAT_THRESH_FILE, "259:0 1 2 3")
        .unwrap()
        .unwrap_err();
    assert_eq!(bad.errno, crate::sim::kerr::Errno::Einval);
    assert_eq!(it.write_file(&mut ctx, g, "io.weight", "100"), None);
    assert_eq!(
        it.write_file(&mut ctx, g, LAT_THRESH_FILE, "8:0 1 2 3 4 5 6 7 8"),
        None
    );
    let _ = ctx;
    complete(&mut it, &tree, &bio(g, Op::Read, 512, 0, 0), 2500);
    assert_eq!(it.counters(g).hit[0], [0, 0, 1, 1, 1, 1, 1, 1]);
    // The root keeps the defaults: 2.5us is below all of them.
    assert_eq!(it.counters(ROOT).hit[0], [1; 8]);
}

#[test]
fn bad_scenario_file_names_the_cgroup() {
    let mut tree = CgroupTree::new();
    let g = tree.ensure("/g").unwrap();
    tree.write_file(g, LAT_THRESH_FILE, "259:0 8 7 6 5 4 3 2 1");
    let (cg, e) = IoTrack::new(&dev(), &tree).err().unwrap();
    assert_eq!(cg, g);
    assert_eq!(e.errno, crate::sim::kerr::Errno::Einval);
}

#[test]
fn issue_field_masks() {
    assert_eq!(BIO_ISSUE_SIZE_SHIFT, 51);
    assert_eq!(bio_issue_time(1u64 << 51), 0);
    assert_eq!(bio_issue_time((1u64 << 51) + 5), 5);
    assert_eq!(bio_issue_size(4096), 0);
    assert_eq!(bio_issue_size(4095), 4095);
    assert_eq!(bio_issue_size(4104), 8);
}
