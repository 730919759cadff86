//! B-WF2Q+ on constructed entities: service order by finish time among
//! eligible entities, virtual time, and group shares over 2 and 3 levels.

use super::super::wf2q::{Owner, Wf2q, CLASS_BE};

/// Serve `slots` slots: select, charge the whole budget, requeue with the
/// same budget (every queue always busy). Returns the queue of each slot.
fn serve(w: &mut Wf2q, slots: usize, budget: u64) -> Vec<u32> {
    let mut order = Vec::new();
    for _ in 0..slots {
        let e = w.select(0).expect("a busy queue");
        let Owner::Queue(q) = w.ents[e as usize].owner else {
            panic!("select returned a group")
        };
        w.served(e, budget);
        w.expire(e, Some(budget));
        order.push(q);
    }
    order
}

#[test]
fn equal_weights_alternate_and_weights_set_the_order() {
    let mut w = Wf2q::new(200);
    let a = w.add_queue(0, 0, 100, CLASS_BE);
    let b = w.add_queue(1, 0, 100, CLASS_BE);
    w.activate(a, 1000);
    w.activate(b, 1000);
    // equal finish times go in activation order, then alternate
    assert_eq!(serve(&mut w, 6, 1000), vec![0, 1, 0, 1, 0, 1]);

    let mut w = Wf2q::new(200);
    let a = w.add_queue(0, 0, 100, CLASS_BE);
    let b = w.add_queue(1, 0, 300, CLASS_BE);
    w.activate(a, 1000);
    w.activate(b, 1000);
    // b's timestamps advance 3x slower: 3 slots of b per slot of a, and
    // interleaved: after b's first slot b's next start (F/3, with F a's
    // finish) is after the virtual time (F/4), so b is not eligible and a,
    // whose start is 0, is served even though b finishes first (the "+" of
    // WF2Q+: only eligible entities compete on finish time).
    let order = serve(&mut w, 8, 1000);
    assert_eq!(order, vec![1, 0, 1, 1, 1, 0, 1, 1]);
}

#[test]
fn virtual_time_and_eligibility() {
    let mut w = Wf2q::new(200);
    let a = w.add_queue(0, 0, 100, CLASS_BE);
    w.activate(a, 1000);
    let e = w.select(0).unwrap();
    w.served(e, 1000);
    // vtime advanced by service / wsum
    let vt = w.sds[0].st[CLASS_BE].vtime;
    assert_eq!(vt, (1000u64 << 22) / 100);
    w.expire(e, Some(1000));
    // a queue activated now starts at the current virtual time, not at 0:
    // it gets no credit for the time it was not busy
    let b = w.add_queue(1, 0, 100, CLASS_BE);
    w.activate(b, 1000);
    assert_eq!(w.ents[b as usize].start, vt);
    assert_eq!(w.ents[b as usize].finish, vt + (1000u64 << 22) / 100);
    // a's start is its previous finish (= vt): both finish together; a was
    // queued first and wins the tie
    assert_eq!(serve(&mut w, 2, 1000), vec![0, 1]);
}

#[test]
fn a_queue_that_idles_is_forgotten_once_the_tree_passes_its_finish() {
    let mut w = Wf2q::new(200);
    let a = w.add_queue(0, 0, 100, CLASS_BE);
    let b = w.add_queue(1, 0, 100, CLASS_BE);
    w.activate(a, 1000);
    w.activate(b, 1000);
    let e = w.select(0).unwrap();
    w.served(e, 500);
    // a runs out of requests with budget left: into the idle tree (its
    // finish is ahead of the virtual time), still in the weight sum
    w.expire(e, None);
    assert_eq!(w.sds[0].st[CLASS_BE].wsum, 200);
    // serving b moves the virtual time past a's finish: a is forgotten
    serve(&mut w, 2, 1000);
    assert_eq!(w.sds[0].st[CLASS_BE].wsum, 100);
}

/// Sectors received per queue over `slots` slots.
fn shares(w: &mut Wf2q, nq: usize, slots: usize) -> Vec<u64> {
    let mut got = vec![0u64; nq];
    for q in serve(w, slots, 1000) {
        got[q as usize] += 1000;
    }
    got
}

#[test]
fn two_level_group_shares_follow_group_weights_not_queue_counts() {
    // /test1 (800) with 1 queue, /test2 (100) with 3 queues
    let mut w = Wf2q::new(200);
    let g1 = w.add_group(0, 800);
    let g2 = w.add_group(0, 100);
    let q0 = w.add_queue(0, g1, 40, CLASS_BE);
    let qs: Vec<u32> = (1..4).map(|i| w.add_queue(i, g2, 40, CLASS_BE)).collect();
    w.activate(q0, 1000);
    for &q in &qs {
        w.activate(q, 1000);
    }
    let got = shares(&mut w, 4, 900);
    assert_eq!(got[0], 800 * 1000, "{got:?}");
    assert_eq!(got[1] + got[2] + got[3], 100 * 1000);
    // inside /test2 the three equal queues share equally
    assert!(
        got[1..].iter().all(|&g| g.abs_diff(100 * 1000 / 3) <= 1000),
        "{got:?}"
    );
}

#[test]
fn three_level_group_shares() {
    // /a (100) -> /a/x (300), /a/y (100); /b (100): b 1/2, x 3/8, y 1/8
    let mut w = Wf2q::new(200);
    let a = w.add_group(0, 100);
    let b = w.add_group(0, 100);
    let x = w.add_group(a, 300);
    let y = w.add_group(a, 100);
    let qx = w.add_queue(0, x, 40, CLASS_BE);
    let qy = w.add_queue(1, y, 40, CLASS_BE);
    let qb = w.add_queue(2, b, 40, CLASS_BE);
    for q in [qx, qy, qb] {
        w.activate(q, 1000);
    }
    let got = shares(&mut w, 3, 800);
    // exact up to one slot of each
    assert!(got[2].abs_diff(400_000) <= 1000, "{got:?}");
    assert!(got[0].abs_diff(300_000) <= 1000, "{got:?}");
    assert!(got[1].abs_diff(100_000) <= 1000, "{got:?}");
}

#[test]
fn classes_are_strictly_ordered() {
    let mut w = Wf2q::new(1_000_000);
    let rt = w.add_queue(0, 0, 40, 0);
    let be = w.add_queue(1, 0, 1000, CLASS_BE);
    let idle = w.add_queue(2, 0, 1000, 2);
    for q in [idle, be, rt] {
        w.activate(q, 1000);
    }
    // RT always first, whatever the weights; BE before IDLE
    assert_eq!(serve(&mut w, 3, 1000), vec![0, 0, 0]);
    let e = w.select(0).unwrap();
    w.expire(e, None);
    assert_eq!(serve(&mut w, 2, 1000), vec![1, 1]);
}

#[test]
fn the_idle_class_gets_served_after_its_timeout() {
    // BFQ_CL_IDLE_TIMEOUT: an IDLE-class queue waiting longer than the
    // timeout (here 200 jiffies) is served once, then BE again
    let mut w = Wf2q::new(200);
    let be = w.add_queue(0, 0, 100, CLASS_BE);
    let idle = w.add_queue(1, 0, 100, 2);
    w.activate(be, 1000);
    w.activate(idle, 1000);
    let mut order = Vec::new();
    for j in [0u64, 100, 199, 201, 202] {
        let e = w.select(j).unwrap();
        w.served(e, 1000);
        w.expire(e, Some(1000));
        order.push(w.ents[e as usize].owner);
    }
    assert_eq!(
        order,
        vec![
            Owner::Queue(0),
            Owner::Queue(0),
            Owner::Queue(0),
            Owner::Queue(1),
            Owner::Queue(0)
        ]
    );
}

/// `bfqd->active_list` (`bfq_active_insert`'s `list_add`, `bfq_active_extract`'s
/// `list_del`): a queue goes to the head each time it enters an active tree,
/// leaves the list when selected for service, comes back at the head when
/// requeued at the end of its slot, and moves to the head when its budget
/// changes (`bfq_updated_next_req` -> `bfq_requeue_bfqq`).
#[test]
fn the_active_list_holds_the_queue_filed_last_first() {
    let mut w = Wf2q::new(200);
    let a = w.add_queue(0, 0, 100, CLASS_BE);
    let b = w.add_queue(1, 0, 100, CLASS_BE);
    let c = w.add_queue(2, 0, 100, CLASS_BE);
    w.activate(a, 1000);
    w.activate(b, 1000);
    w.activate(c, 1000);
    assert_eq!(w.active_list(), &[2, 1, 0]);
    // a (first on equal finish times) is put in service: off the list
    let e = w.select(0).unwrap();
    assert_eq!(e, a);
    assert_eq!(w.active_list(), &[2, 1]);
    // its slot ends with requests left: requeued, at the head
    w.served(e, 1000);
    w.expire(e, Some(1000));
    assert_eq!(w.active_list(), &[0, 2, 1]);
    // b's budget changes: requeued, at the head
    w.set_budget(b, 2000);
    assert_eq!(w.active_list(), &[1, 0, 2]);
    // c runs out of requests: off the list
    w.deactivate(c);
    assert_eq!(w.active_list(), &[1, 0]);
}
