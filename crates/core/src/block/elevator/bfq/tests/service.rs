//! End to end through the scheduler hooks: shares of weighted cgroups in a
//! closed loop, and the per-request lock time.

use super::*;
use crate::block::testutil::tree_with;

#[test]
fn weights_800_100_give_eight_ninths_with_one_job_each() {
    let (mut h, a, b) = H::seed004_groups();
    let done = h.closed_loop(&[(0, a), (1, b)], 8, 50, 200_000);
    let (x, y) = (done[&a] as f64, done[&b] as f64);
    let share = x / (x + y);
    // Both queues are always backlogged with equal-cost requests: B-WF2Q+
    // gives 800/900 = 0.8889 of the service, up to the slot granularity
    // (one budget of either queue over the ~10 s simulated here).
    assert!(
        (share - 800.0 / 900.0).abs() < 0.01,
        "share {share:.4} ({x} / {y})"
    );
}

#[test]
fn a_cgroup_share_does_not_grow_with_its_number_of_jobs() {
    // /a has 4 jobs, /b one; equal weights: half each
    let t = tree_with(&[
        ("/a", "io.bfq.weight", "100"),
        ("/b", "io.bfq.weight", "100"),
    ]);
    let (a, b) = (t.find("/a").unwrap(), t.find("/b").unwrap());
    let mut h = H::new(t);
    h.tune("low_latency", "0");
    h.tune(LOCK_HOLD_PARAM, "0");
    let done = h.closed_loop(&[(0, a), (1, a), (2, a), (3, a), (4, b)], 8, 50, 200_000);
    let share = done[&a] as f64 / (done[&a] + done[&b]) as f64;
    assert!((share - 0.5).abs() < 0.02, "share of /a {share:.4}");
}

#[test]
fn the_lock_time_caps_dispatches() {
    // 1.9 us per request: at most one dispatch per 1.9 us whatever the
    // device; without it the whole queue goes at once
    let mut h = H::new(CgroupTree::new());
    for _ in 0..10 {
        h.read(0, 0);
    }
    assert!(h.disp().is_some());
    assert_eq!(h.disp(), None);
    assert_eq!(h.bfq.next_run(), Some(DEFAULT_LOCK_HOLD_NS));
    h.now = DEFAULT_LOCK_HOLD_NS;
    assert!(h.disp().is_some());
    h.tune(LOCK_HOLD_PARAM, "0");
    h.now += DEFAULT_LOCK_HOLD_NS;
    let mut n = 0;
    while h.disp().is_some() {
        n += 1;
    }
    assert_eq!(n, 8);
}
