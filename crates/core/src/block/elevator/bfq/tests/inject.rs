//! Injection while the queue in service idles, and the queue runs that
//! let it happen (`bfq_choose_bfqq_for_injection`, `bfq_update_inject_limit`,
//! `bfq_completed_request`'s early return, blk-mq's 3 ms re-run).

use super::*;
use crate::sim::time::NSEC_PER_MSEC;

fn two_groups() -> (H, CgId, CgId) {
    let (mut h, a, b) = H::seed004_groups();
    // a queueing ssd: idling is for fairness only, so injection is allowed
    // (`idling_boosts_thr_without_issues` is false)
    h.bfq.hw_tag = 1;
    (h, a, b)
}

fn queue_of(h: &H, job: u32, cg: CgId) -> u32 {
    let g = h.bfq.group_of_cg[&cg];
    h.bfq.queue_of[&QueueKey::Sync(Submitter::Job(job), g)]
}

/// test1's only request completes and bfq idles for it with an inject
/// limit of 1; test2 then submits two requests: the first is injected at
/// its insertion, the second waits (one request in the drive). Returns
/// test1's queue and test2's two requests.
fn inject_one_of_two(h: &mut H, a: CgId, b: CgId) -> (u32, ReqId, ReqId) {
    let ra = h.read(0, a);
    assert_eq!(h.disp(), Some(ra));
    h.advance_us(10);
    let qa = queue_of(h, 0, a);
    h.bfq.queues[qa as usize].inject_limit = 1;
    h.done(ra);
    assert!(h.bfq.queues[qa as usize].wait_request);
    // nothing in the drive: test2's insertion runs the queue
    h.advance_us(5);
    let rb = h.read(1, b);
    assert_eq!(h.disp(), Some(rb), "injected at its insertion");
    let rb2 = h.read(1, b);
    assert_eq!(h.disp(), None, "limit 1 reached: one request in the drive");
    (qa, rb, rb2)
}

#[test]
fn no_injection_at_the_completion_that_starts_idling_but_at_the_3ms_rerun() {
    let (mut h, a, b) = two_groups();
    let ra = h.read(0, a);
    let rb = h.read(1, b);
    assert_eq!(h.disp(), Some(ra));
    // the run goes on (test2's request is queued) and finds nothing to
    // dispatch: A's queue is empty with a request in flight, and its
    // inject limit is 0 (short think time, no base service time yet)
    assert_eq!(h.disp(), None);
    let qa = queue_of(&h, 0, a);
    assert_eq!(h.bfq.queues[qa as usize].inject_limit, 0);
    // ... so blk-mq re-runs the queue BLK_MQ_BUDGET_DELAY (3 jiffies at HZ
    // 1000) later, when the timer wheel runs the delayed work: 4 ms
    assert_eq!(h.bfq.run.delayed_at, Some(4 * NSEC_PER_MSEC));
    // A's request completes; bfq idles for A
    h.advance_us(10);
    let qb = queue_of(&h, 1, b);
    h.bfq.queues[qa as usize].inject_limit = 1;
    h.done(ra);
    assert!(h.bfq.queues[qa as usize].wait_request);
    // the kernel does not run the queue on this completion
    // (bfq_completed_request returns before bfq_schedule_dispatch), so
    // test2's request is not injected now although the limit allows it
    assert_eq!(h.disp(), None);
    assert_eq!(h.bfq.queues[qb as usize].dispatched, 0);
    // at the delayed re-run it is
    h.now = 4 * NSEC_PER_MSEC;
    assert_eq!(h.disp(), Some(rb));
    assert!(h.bfq.rqs_injected);
    assert_eq!(h.bfq.in_service, Some(qa), "A stays in service");
}

/// `bfq_choose_bfqq_for_injection` scans `bfqd->active_list` from its head,
/// where `bfq_active_insert` puts the queue activated (or requeued) last:
/// of two queues waiting while the queue in service idles, the newer one is
/// injected first (the model took them in activation order before).
#[test]
fn injection_takes_the_queue_activated_last_first() {
    let (mut h, a, b) = two_groups();
    let ra = h.read(0, a);
    assert_eq!(h.disp(), Some(ra));
    h.advance_us(10);
    let qa = queue_of(&h, 0, a);
    h.done(ra);
    assert!(h.bfq.queues[qa as usize].wait_request);
    // limit 0 (no base service time yet): nothing injected while two
    // processes of /test2 get a request each, job 1's queue first
    assert_eq!(h.bfq.queues[qa as usize].inject_limit, 0);
    h.advance_us(5);
    let r1 = h.read(1, b);
    h.advance_us(5);
    let r2 = h.read(2, b);
    assert_eq!(h.disp(), None);
    let (q1, q2) = (queue_of(&h, 1, b), queue_of(&h, 2, b));
    assert_eq!(h.bfq.w.active_list(), &[q2, q1]);
    h.bfq.queues[qa as usize].inject_limit = 2;
    // a queue run (kblockd's, say)
    h.bfq.run_async();
    assert_eq!(h.disp(), Some(r2), "job 2's queue, activated last, first");
    assert_eq!(h.disp(), Some(r1));
    assert_eq!(h.bfq.in_service, Some(qa), "test1 stays in service");
}

#[test]
fn an_insertion_runs_the_queue_and_may_inject() {
    let (mut h, a, b) = two_groups();
    let (qa, _, rb2) = inject_one_of_two(&mut h, a, b);
    // the limit is compared with what is in the drive, whoever's it is
    h.bfq.queues[qa as usize].inject_limit = 2;
    h.read(1, b);
    assert_eq!(h.disp(), Some(rb2));
}

#[test]
fn a_completion_that_leaves_the_drive_empty_runs_the_queue() {
    let (mut h, a, b) = two_groups();
    let (_, rb, rb2) = inject_one_of_two(&mut h, a, b);
    // the injected request completes, nothing is left in the drive and
    // requests are queued: bfq_completed_request ends with
    // bfq_schedule_dispatch, and the next one is injected
    h.advance_us(10);
    h.done(rb);
    assert_eq!(h.disp(), Some(rb2));
}

#[test]
fn the_inject_limit_follows_the_service_time_of_first_requests() {
    let (mut h, a, _) = two_groups();
    // past the 10 ms that sampling waits after a limit decrease
    h.now = 20 * NSEC_PER_MSEC;
    let ra = h.read(0, a);
    let qa = queue_of(&h, 0, a);
    let q = |h: &H| {
        let qq = &h.bfq.queues[qa as usize];
        (qq.inject_limit, qq.last_serv_time_ns)
    };
    assert_eq!(h.disp(), Some(ra));
    h.advance_us(10);
    h.done(ra);
    assert!(
        h.bfq.queues[qa as usize].wait_request,
        "the only busy queue idles"
    );
    // a first request: A in service, empty, nothing in the drive: its
    // total service time will be the base value
    h.advance_us(20);
    let r = h.read(0, a);
    assert!(h.bfq.wait_dispatch);
    assert_eq!(h.disp(), Some(r));
    assert_eq!(h.bfq.waited_rq, Some(r));
    h.advance_us(40);
    h.done(r);
    assert_eq!(q(&h), (1, 40_000), "base 40 us, injection allowed");
    // a later first request with injected I/O in the drive, served within
    // 1.5x the base: the limit goes up
    h.bfq.rqs_injected = true;
    h.bfq.max_rq_in_driver = 4;
    h.bfq.last_empty_occupied_ns = h.now;
    h.bfq.waited_rq = Some(999);
    h.advance_us(50);
    h.bfq.now = h.now;
    h.bfq.update_inject_limit(qa);
    assert_eq!(q(&h), (2, 40_000));
    // one slowed to 1.5x or more: down, and the decrease time is noted
    h.bfq.rqs_injected = true;
    h.bfq.last_empty_occupied_ns = h.now;
    h.advance_us(60);
    h.bfq.now = h.now;
    h.bfq.update_inject_limit(qa);
    assert_eq!(q(&h), (1, 40_000));
    assert_eq!(h.bfq.queues[qa as usize].decrease_time_jif, h.bfq.jiffies());
    assert!(!h.bfq.rqs_injected && h.bfq.waited_rq.is_none());
}

/// `bfq_update_io_thinktime` samples only a queue with nothing queued or
/// in the drive: not test2's second request while its injected first one
/// is in flight, not test1's request while test1 idles in service.
#[test]
fn think_time_is_sampled_only_from_an_idle_queue() {
    let (mut h, a, b) = two_groups();
    let (qa, _, _) = inject_one_of_two(&mut h, a, b);
    let qb = queue_of(&h, 1, b);
    let samples = |h: &H, q: u32| h.bfq.queues[q as usize].ttime.samples;
    // one sample each, taken when the queues were created ((7*0+256)/8):
    // test2's second request came with the first in the drive
    assert_eq!((samples(&h, qa), samples(&h, qb)), (32, 32));
    assert_eq!(h.bfq.queues[qb as usize].dispatched, 1);
    // test1 idles in service (busy) and gets a request: no sample either
    assert!(h.bfq.queues[qa as usize].busy);
    h.advance_us(5);
    h.read(0, a);
    assert_eq!((samples(&h, qa), samples(&h, qb)), (32, 32));
}

/// `bfq_update_has_short_ttime`: before a base service time is sampled,
/// a flip to a long think time resets the inject limit at once (to 1), a
/// flip back to short only 100 ms after the last decrease (to 0).
#[test]
fn think_time_flips_reset_the_inject_limit_until_a_base_time_exists() {
    let (mut h, a, _) = two_groups();
    h.now = 500 * NSEC_PER_MSEC;
    h.read(0, a);
    let qa = queue_of(&h, 0, a);
    let slice_idle = h.bfq.t.slice_idle_ns;
    // Call the update directly, with the queue as it would be after a
    // while with no I/O (not busy, nothing in the drive) and a valid mean.
    let flip = |h: &mut H, at_ms: u64, mean_ns: u64, last_serv_ns: u64| {
        h.now = at_ms * NSEC_PER_MSEC;
        h.bfq.now = h.now;
        let q = &mut h.bfq.queues[qa as usize];
        q.busy = false;
        q.dispatched = 0;
        q.last_serv_time_ns = last_serv_ns;
        // the arrival comes right after the last completion (elapsed 0),
        // so the new mean is 7/8 of `mean_ns`
        q.ttime = queue::Ttime {
            last_end_request: h.now,
            samples: 256,
            total: 256 * mean_ns * 8 / 7,
            mean: mean_ns * 8 / 7,
        };
        h.bfq.update_ttime_and_seek(qa, 0, 8);
        let q = &h.bfq.queues[qa as usize];
        (q.has_short_ttime, q.inject_limit, q.decrease_time_jif)
    };
    assert_eq!(h.bfq.queues[qa as usize].inject_limit, 0);
    // short -> long: reset at once, limit 1, decrease time noted (HZ 1000)
    assert_eq!(flip(&mut h, 500, slice_idle, 0), (false, 1, 500));
    // long -> short 50 ms later: too soon after the decrease, kept
    assert_eq!(flip(&mut h, 550, 0, 0), (true, 1, 500));
    // short -> long -> short past 100 ms: each flip resets
    assert_eq!(flip(&mut h, 560, slice_idle, 0), (false, 1, 560));
    assert_eq!(flip(&mut h, 700, 0, 0), (true, 0, 700));
    // with a base service time sampled, a flip changes nothing
    h.bfq.queues[qa as usize].inject_limit = 3;
    assert_eq!(flip(&mut h, 900, slice_idle, 40_000), (false, 3, 700));
}

/// An insertion's asynchronous run (`blk_mq_run_hw_queue(hctx, true)` →
/// `kblockd_mod_delayed_work_on(.., 0)`, i.e. `mod_delayed_work`) replaces
/// the pending 3 ms re-run: while the queue in service comes back before
/// each re-run would fire, a request that was held stays held (switch
/// `blk_mq.insert_run = kblockd`, every kernel profile). With `inline` (the
/// earlier simplification) the first re-run stays (4 ms: 3 jiffies at HZ
/// 1000 and the timer wheel's one) and injects it then;
/// so it does where the insertion's run is the synchronous flush of the
/// plug `__submit_bio` holds (`blk_mq.submit_bio_plug = on`, 6.12), which
/// does not touch `hctx->run_work`.
#[test]
fn an_asynchronous_run_replaces_the_pending_3ms_rerun() {
    for (insert_run, plug) in [("kblockd", "off"), ("inline", "off"), ("kblockd", "on")] {
        let (mut h, a, b) = two_groups();
        h.sw.set("blk_mq.insert_run", insert_run).unwrap();
        h.sw.set("blk_mq.submit_bio_plug", plug).unwrap();
        let kblockd = insert_run == "kblockd" && plug == "off";
        let ra = h.read(0, a);
        let rb = h.read(1, b);
        assert_eq!(h.disp(), Some(ra));
        // B's request is held (A's request in the drive, limit 0) and the
        // empty pass arms the re-run 3 jiffies on (HZ 1000), which the
        // timer wheel runs at the 4th tick
        assert_eq!(h.disp(), None);
        assert_eq!(h.bfq.run.delayed_at, Some(4 * NSEC_PER_MSEC));
        let qa = queue_of(&h, 0, a);
        let qb = queue_of(&h, 1, b);
        h.advance_us(10);
        h.bfq.queues[qa as usize].inject_limit = 1;
        h.done(ra);
        assert!(h.bfq.queues[qa as usize].wait_request, "A idles");
        // A's next request at 1 ms: its insertion's run takes the pending
        // re-run's place (kblockd) or leaves it (inline)
        h.now = NSEC_PER_MSEC;
        let ra2 = h.read(0, a);
        let pending = h.bfq.run.delayed_at;
        assert_eq!(
            pending,
            (!kblockd).then_some(4 * NSEC_PER_MSEC),
            "{insert_run}, plug {plug}"
        );
        assert_eq!(h.disp(), Some(ra2), "A's own request");
        // next pass: one request in the drive against a limit of 1: held;
        // the empty pass re-arms 3 jiffies from now (the wheel: 5 ms) only
        // if none is pending
        assert_eq!(h.disp(), None);
        let rerun_ms = if kblockd { 5 } else { 4 };
        assert_eq!(h.bfq.run.delayed_at, Some(rerun_ms * NSEC_PER_MSEC));
        h.advance_us(10);
        h.done(ra2);
        assert!(h.bfq.queues[qa as usize].wait_request, "A idles again");
        // at 4 ms A's drive is empty: the inline re-run fires and injects
        // B's request; under kblockd no run is due and it stays held
        h.now = 4 * NSEC_PER_MSEC;
        if !kblockd {
            assert_eq!(h.disp(), Some(rb), "injected at the first re-run");
            assert!(h.bfq.rqs_injected);
            continue;
        }
        assert_eq!(h.disp(), None, "no run is due at 4 ms");
        assert_eq!(h.bfq.queues[qb as usize].dispatched, 0);
        // A comes back at 4.5 ms: dispatched, and the re-run moves to 8 ms
        h.now = 4_500_000;
        let ra3 = h.read(0, a);
        assert_eq!(h.bfq.run.delayed_at, None, "replaced by the run now");
        assert_eq!(h.disp(), Some(ra3));
        assert_eq!(h.disp(), None, "B still held");
        assert_eq!(h.bfq.run.delayed_at, Some(8 * NSEC_PER_MSEC));
        // A's completion makes no run (A idles: bfq_completed_request
        // returns before bfq_schedule_dispatch); the 8 ms re-run finds A's
        // drive empty and injects the held request
        h.advance_us(10);
        h.done(ra3);
        h.now = 8 * NSEC_PER_MSEC;
        assert_eq!(h.disp(), Some(rb), "injected at the re-run");
        assert_eq!(h.bfq.in_service, Some(qa), "A stays in service");
    }
}

/// blk-mq's delayed re-run (`blk_mq_delay_run_hw_queues`) is a delayed work
/// item whose `timer_list` (`__queue_delayed_work` → `add_timer_on`) the
/// timer wheel runs one tick after `jiffies + delay` (`calc_index` rounds
/// every expiry up, so that no timer fires early). At HZ 250
/// `msecs_to_jiffies(3)` is one jiffy: an empty pass 10 µs before a tick
/// re-runs the queue at the tick after that one, 4.01 ms later, not 10 µs
/// later. So a queue in service that comes back every few µs, each
/// insertion's kblockd run replacing the pending re-run, never lets it fire,
/// and another group's held request waits (the debian-6.1 guest's
/// `bfq-800-100-1j-qd1` trace: no timer-driven kblockd run in 54.6 ms).
#[test]
fn at_hz_250_the_rerun_skips_the_next_tick() {
    let (mut h, a, b) = two_groups();
    h.hz = Hz(250);
    h.now = 3_990_000;
    let ra = h.read(0, a);
    let rb = h.read(1, b);
    assert_eq!(h.disp(), Some(ra));
    assert_eq!(h.disp(), None, "B held: A's request in the drive, limit 0");
    assert_eq!(
        h.bfq.run.delayed_at,
        Some(8 * NSEC_PER_MSEC),
        "jiffy 0 + 1, run by the wheel at the tick of jiffy 2"
    );
    let qa = queue_of(&h, 0, a);
    h.advance_us(5);
    h.bfq.queues[qa as usize].inject_limit = 1;
    h.done(ra);
    assert!(
        h.bfq.queues[qa as usize].wait_request,
        "A idles, its drive empty"
    );
    // the tick at 4 ms runs nothing: B stays held although the limit allows it
    h.now = 4 * NSEC_PER_MSEC;
    assert_eq!(h.disp(), None);
    assert_eq!(h.bfq.next_run(), Some(8 * NSEC_PER_MSEC));
    h.now = 8 * NSEC_PER_MSEC;
    assert_eq!(h.disp(), Some(rb), "injected at the re-run");
}

/// `bfq_add_request` resets and samples the inject limit only for a request
/// that is its process's only one (`RQ_BIC(rq)->requests <= 1`, Jan Kara's
/// f950667356ce, v5.19), not whenever the queue's sort list is empty: a
/// process with a request still in flight starts no sample and no 1 s
/// reset; once its requests have finished, its next one does.
#[test]
fn the_inject_limit_block_waits_for_the_process_s_only_request() {
    let (mut h, a, _b) = two_groups();
    let r1 = h.read(0, a);
    assert_eq!(h.disp(), Some(r1));
    let qa = queue_of(&h, 0, a);
    h.now = 1_100 * NSEC_PER_MSEC;
    h.bfq.queues[qa as usize].inject_limit = 3;
    h.bfq.queues[qa as usize].last_serv_time_ns = 20_000;
    // r1 in flight, A's sort list empty: the process has two requests
    let r2 = h.read(0, a);
    assert_eq!(h.bfq.queues[qa as usize].inject_limit, 3, "no 1 s reset");
    assert_eq!(h.bfq.queues[qa as usize].last_serv_time_ns, 20_000);
    assert!(!h.bfq.wait_dispatch, "no sample started");
    h.advance_us(10);
    h.done(r1);
    assert_eq!(h.disp(), Some(r2));
    h.advance_us(10);
    h.done(r2);
    // nothing of the process left: its next request resets the limit
    h.advance_us(10);
    h.read(0, a);
    let q = &h.bfq.queues[qa as usize];
    assert_eq!((q.inject_limit, q.last_serv_time_ns), (0, 0), "reset");
}
