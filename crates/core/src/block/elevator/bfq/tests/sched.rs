//! Scheduler decisions: the asymmetric-scenario rule and idling, budget
//! feedback, weight raising and bursts, tunables.

use super::*;
use crate::block::ioprio::IoprioClass;
use crate::block::testutil::tree_with;
use crate::sim::kerr::Errno;

fn two_groups() -> CgroupTree {
    tree_with(&[
        ("/test1", "io.bfq.weight", "default 800"),
        ("/test2", "io.bfq.weight", "default 100"),
    ])
}

fn busy_queue_of(h: &H, job: u32, cg: CgId) -> u32 {
    let g = h.bfq.group_of_cg[&cg];
    h.bfq.queue_of[&QueueKey::Sync(Submitter::Job(job), g)]
}

#[test]
fn symmetric_scenario_does_not_idle_for_random_io_on_a_queueing_ssd() {
    let mut h = H::new(CgroupTree::new());
    h.tune("low_latency", "0");
    h.read(0, 0);
    h.read(1, 0);
    h.bfq.hw_tag = 1;
    let q = busy_queue_of(&h, 0, 0);
    // same weight, same class, only the root group: symmetric
    assert!(!h.bfq.asymmetric_scenario(Some(q)));
    // a seeky queue on a device with internal queueing: idling would not
    // raise throughput, and is not needed for fairness
    h.bfq.queues[q as usize].seek_history = u32::MAX;
    assert!(!h.bfq.better_to_idle(q));
    // ... unless it is the only busy queue (tot_busy_queues == 1)
    h.bfq.busy_queues = [0, 1, 0];
    assert!(h.bfq.better_to_idle(q));
}

#[test]
fn different_weights_classes_or_two_groups_are_asymmetric() {
    // queue weights: ioprio levels 0 and 7
    let mut h = H::new(CgroupTree::new());
    h.req(
        Submitter::Job(0),
        0,
        Op::Read,
        8,
        Ioprio::new(IoprioClass::Be, 0, 0),
    );
    h.req(
        Submitter::Job(1),
        0,
        Op::Read,
        8,
        Ioprio::new(IoprioClass::Be, 7, 0),
    );
    let heavy = busy_queue_of(&h, 0, 0);
    let light = busy_queue_of(&h, 1, 0);
    // idling is needed for the heavier queue, not for the lightest one
    // ("do not idle for lowest-weight queues")
    assert!(h.bfq.asymmetric_scenario(Some(heavy)));
    assert!(!h.bfq.asymmetric_scenario(Some(light)));

    // classes: an RT and a BE queue busy together
    let mut h = H::new(CgroupTree::new());
    h.req(
        Submitter::Job(0),
        0,
        Op::Read,
        8,
        Ioprio::new(IoprioClass::Rt, 4, 0),
    );
    h.read(1, 0);
    assert!(h.bfq.asymmetric_scenario(None));

    // two groups with pending requests
    let t = two_groups();
    let (a, b) = (t.find("/test1").unwrap(), t.find("/test2").unwrap());
    let mut h = H::new(t);
    h.read(0, a);
    assert!(
        !h.bfq.asymmetric_scenario(None),
        "one group is symmetric since ed3ecc991c90"
    );
    h.sw.set("bfq.idle_groups", "2d29c9f89fcd").unwrap();
    h.read(0, a); // picks up the switch
    assert!(
        h.bfq.asymmetric_scenario(None),
        "any group was asymmetric before"
    );
    h.sw = Switches::default();
    h.read(1, b);
    assert!(h.bfq.asymmetric_scenario(None));
    // the 2021 request-size patch: not asymmetric once 1024 same-size
    // requests were dispatched over a second
    h.sw.set("bfq.asym_request_size", "on").unwrap();
    h.read(1, b);
    assert!(h.bfq.asymmetric_scenario(None), "sizes not yet known");
    for i in 0..1100u64 {
        h.bfq.same_size.dispatched(8, i * 1_000_000);
    }
    h.bfq.now = 1_200 * 1_000_000;
    assert!(!h.bfq.asymmetric_scenario(None));
}

#[test]
fn in_an_asymmetric_scenario_the_empty_queue_in_service_is_idled_for() {
    let t = two_groups();
    let (a, b) = (t.find("/test1").unwrap(), t.find("/test2").unwrap());
    let mut h = H::new(t);
    h.tune("low_latency", "0");
    let r1 = h.read(0, a);
    h.read(1, b);
    let d = h.disp().unwrap();
    assert_eq!(d, r1, "the heavier group is served first");
    h.advance_us(20);
    h.done(d);
    // test1's queue is empty but bfq waits slice_idle (8 ms) for it rather
    // than serving test2
    assert_eq!(h.bfq.idle_timer, Some(h.now + 8_000_000));
    assert_eq!(h.disp(), None);
    // its next request within the idle window is served at once
    h.advance_us(30);
    let r3 = h.read(0, a);
    assert_eq!(h.disp(), Some(r3));
    h.advance_us(20);
    h.done(r3);
    // this time the timer fires: test1 expires (too idle), test2 is served
    h.now = h.bfq.idle_timer.unwrap();
    let d = h.disp().unwrap();
    assert_eq!(h.cg_of(d), b);
}

#[test]
fn budget_feedback() {
    let mut h = H::new(CgroupTree::new());
    h.tune("low_latency", "0");
    h.tune(LOCK_HOLD_PARAM, "0");
    h.read(0, 0);
    let q = busy_queue_of(&h, 0, 0);
    let start = h.bfq.queues[q as usize].max_budget;
    assert_eq!(start, 2 * DEFAULT_MAX_BUDGET / 3);
    let max = h.bfq.max_budget;
    // budget exhausted: x4, capped at the maximum
    let d = h.disp().unwrap();
    h.read(0, 0);
    h.bfq.expire(q, false, Reason::BudgetExhausted);
    assert_eq!(h.bfq.queues[q as usize].max_budget, (start * 4).min(max));
    // timed out: x2, capped
    h.bfq.queues[q as usize].max_budget = 1000;
    h.disp().unwrap();
    h.read(0, 0);
    h.bfq.expire(q, false, Reason::BudgetTimeout);
    assert_eq!(h.bfq.queues[q as usize].max_budget, 2000);
    // no more requests: what it used, at least the minimum (max/32)
    h.disp().unwrap();
    h.bfq.expire(q, false, Reason::NoMoreRequests);
    assert_eq!(h.bfq.queues[q as usize].max_budget, DEFAULT_MAX_BUDGET / 32);
    let _ = d;
}

#[test]
fn a_slow_queue_is_charged_for_the_time_it_held_the_device() {
    let mut h = H::new(CgroupTree::new());
    h.tune("low_latency", "0");
    h.read(0, 0);
    let q = busy_queue_of(&h, 0, 0);
    let ent = h.bfq.queues[q as usize].ent;
    let d = h.disp().unwrap();
    // 40 ms for one 4 KiB request: slow (over 20 ms, less than half the
    // maximum budget); charged 40/125 of the maximum budget
    h.now += 40_000_000;
    h.done(d);
    h.read(0, 0);
    let vt_before = h.bfq.w.sds[0].st[1].vtime;
    h.bfq.expire(q, false, Reason::BudgetTimeout);
    let charged = DEFAULT_MAX_BUDGET * 40 / 125;
    let vt_after = h.bfq.w.sds[0].st[1].vtime;
    assert_eq!(vt_after - vt_before, wf2q::delta(charged - 8, 40));
    assert!(h.bfq.w.ents[ent as usize].start > 0);
}

#[test]
fn weight_raising_on_and_off_and_bursts() {
    // a new queue is interactive: weight x30 with low_latency on
    let mut h = H::new(CgroupTree::new());
    h.read(0, 0);
    let q = busy_queue_of(&h, 0, 0);
    assert_eq!(h.bfq.queues[q as usize].wr_coeff, 30);
    assert_eq!(
        h.bfq.w.ents[h.bfq.queues[q as usize].ent as usize].weight,
        40 * 30
    );
    // switching low_latency off ends it (bfq_end_wr)
    h.tune("low_latency", "0");
    assert_eq!(h.bfq.queues[q as usize].wr_coeff, 1);

    let mut h = H::new(CgroupTree::new());
    h.tune("low_latency", "0");
    h.read(0, 0);
    assert_eq!(h.bfq.queues[busy_queue_of(&h, 0, 0) as usize].wr_coeff, 1);

    // numjobs=8 starting together in one group: a large burst, none raised
    let mut h = H::new(CgroupTree::new());
    for j in 0..8 {
        h.read(j, 0);
        h.advance_us(100);
    }
    for j in 0..8 {
        let q = busy_queue_of(&h, j, 0);
        assert!(h.bfq.queues[q as usize].in_large_burst, "job {j}");
    }
    // the eighth was never raised; the first seven lose raising at their
    // next dispatch (bfq_update_wr_data)
    assert_eq!(h.bfq.queues[busy_queue_of(&h, 7, 0) as usize].wr_coeff, 1);
    let q0 = busy_queue_of(&h, 0, 0);
    assert_eq!(h.bfq.queues[q0 as usize].wr_coeff, 30);
    h.bfq.update_wr_data(q0);
    assert_eq!(h.bfq.queues[q0 as usize].wr_coeff, 1);
    // 7 jobs are not a large burst
    let mut h = H::new(CgroupTree::new());
    for j in 0..7 {
        h.read(j, 0);
    }
    assert!((0..7).all(|j| !h.bfq.queues[busy_queue_of(&h, j, 0) as usize].in_large_burst));
}

#[test]
fn tunables_parse_clamp_and_fail_like_the_kernel() {
    let mut h = H::new(CgroupTree::new());
    let get = |h: &H, n: &str| h.bfq.tunables().into_iter().find(|x| x.0 == n).unwrap().1;
    let names: Vec<String> = h.bfq.tunables().into_iter().map(|x| x.0).collect();
    assert_eq!(
        names,
        [
            "back_seek_max",
            "back_seek_penalty",
            "fifo_expire_async",
            "fifo_expire_sync",
            "low_latency",
            "max_budget",
            "slice_idle",
            "slice_idle_us",
            "strict_guarantees",
            "timeout_sync"
        ]
    );
    assert_eq!(get(&h, "slice_idle"), "8");
    assert_eq!(get(&h, "slice_idle_us"), "8000");
    assert_eq!(get(&h, "timeout_sync"), "125");
    assert_eq!(get(&h, "fifo_expire_sync"), "125");
    assert_eq!(get(&h, "fifo_expire_async"), "250");
    assert_eq!(get(&h, "back_seek_max"), "16384");
    assert_eq!(get(&h, "low_latency"), "1");
    // clamps
    h.tune("fifo_expire_sync", "0");
    assert_eq!(get(&h, "fifo_expire_sync"), "1");
    h.tune("low_latency", "7");
    assert_eq!(get(&h, "low_latency"), "1");
    h.tune("slice_idle_us", "250\n");
    assert_eq!(get(&h, "slice_idle"), "0");
    assert_eq!(get(&h, "slice_idle_us"), "250");
    // strict_guarantees raises slice_idle to 8 ms
    h.tune("strict_guarantees", "1");
    assert_eq!(get(&h, "slice_idle"), "8");
    h.tune("timeout_sync", "0");
    assert_eq!(get(&h, "timeout_sync"), "1");
    h.tune("max_budget", "4096");
    assert_eq!(get(&h, "max_budget"), "4096");
    assert_eq!(h.bfq.max_budget, 4096);
    // kstrtoul: no sign, no hex, no spaces
    for (v, errno) in [
        ("-1", Errno::Einval),
        ("0x10", Errno::Einval),
        (" 5", Errno::Einval),
        ("", Errno::Einval),
        ("99999999999999999999999", Errno::Erange),
    ] {
        assert_eq!(kstrtoul10(v).unwrap_err().errno, errno, "{v:?}");
        let e = h.bfq.set_tunable("slice_idle", v).unwrap_err();
        assert!(e.contains(errno.name()), "{e}");
    }
    let e = h.bfq.set_tunable("quantum", "4").unwrap_err();
    assert!(e.contains("no tunable 'quantum'"), "{e}");
    // the model's lock time is accepted but not listed as a kernel file
    h.tune(LOCK_HOLD_PARAM, "0");
    assert!(!h.bfq.tunables().iter().any(|x| x.0 == LOCK_HOLD_PARAM));
}
