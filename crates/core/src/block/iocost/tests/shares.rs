//! Shares, donation, busy_level and accounting on the small simulation.

use super::harness::*;
use super::*;

const MS: Ns = 1_000_000;
const SEC: Ns = 1_000_000_000;

fn within(v: u64, want: u64, pct: u64) -> bool {
    v * 100 >= want * (100 - pct) && v * 100 <= want * (100 + pct)
}

#[test]
fn weight_shares_with_fixed_vrate() {
    let mut s = Sim::fixed_vrate(&[("/a", "100"), ("/b", "300")], false);
    s.closed(1, 16, u64::MAX);
    s.closed(2, 16, u64::MAX);
    s.win = (500 * MS, 2500 * MS);
    s.start();
    s.run_until(2500 * MS);
    let (a, b) = (s.count(1), s.count(2));
    // 2 s at the model's 1000 IOPS, split 1:3
    assert!(within(a + b, 2000, 1), "total {}", a + b);
    assert!(within(a * 3, b, 2), "a={a} b={b}");
    assert_eq!(s.ioc.vrate(), VTIME_PER_USEC);
    // iocost held the excess in its waitq: the submitters slept
    assert!(s.ioc.iocgs[1].waitq.len() + s.ioc.iocgs[2].waitq.len() > 20);
}

#[test]
fn idle_sibling_share_goes_to_the_active_one() {
    let mut s = Sim::fixed_vrate(&[("/a", "100"), ("/b", "100")], false);
    s.closed(1, 16, u64::MAX);
    s.closed(2, 16, 1000 * MS);
    s.win = (300 * MS, 900 * MS);
    s.start();
    s.run_until(900 * MS);
    assert!(
        within(s.count(1), 300, 3) && within(s.count(2), 300, 3),
        "{:?}",
        s.done
    );
    s.done.clear();
    s.win = (1300 * MS, 2300 * MS);
    s.run_until(2300 * MS);
    // b went idle and was deactivated: a alone gets the whole model rate
    assert!(!s.ioc.iocgs[2].on_active);
    assert!(within(s.count(1), 1000, 2), "{:?}", s.done);
    assert_eq!(s.count(2), 0);
}

#[test]
fn donation_gives_unused_share_to_the_busy_sibling() {
    let mut s = Sim::fixed_vrate(&[("/a", "100"), ("/b", "100")], true);
    let sink = Shared::default();
    s.tracer = Tracer::new(Some(Box::new(sink.clone())));
    s.closed(1, 16, u64::MAX);
    // b: 100 IOPS, 10 % of the device
    s.open(2, 10 * MS, u64::MAX);
    s.win = (1000 * MS, 3000 * MS);
    s.start();
    s.run_until(3000 * MS);
    let (a, b) = (s.count(1), s.count(2));
    assert!(within(b, 200, 2), "b={b}");
    // without donation a would be held to 50 % (1000 IOs in 2 s)
    assert!(a > 1600, "a={a} b={b}");
    // The total passes the model's 2000 by two kernel mechanisms, both
    // mirrored as the kernel has them (ioc_timer_fn at HZ=1000 runs a 10 ms
    // period for 11 ms, sim/timer.rs):
    // - `ioc_refresh_vrate` repays the vtime b's `hweight_after_donation`
    //   threw away over `period_us` (10 ms), but the faster vtime_rate lasts
    //   the whole 11 ms period and the extra is never booked against
    //   `vtime_err` (tests/vrate_comp.rs): about 40 IOs here (2067 when the
    //   repayment is spread over the real period length instead);
    // - the rest (about 40 IOs with 10 ms periods, the old bound 2040; 65
    //   with 11 ms ones) is what is left with the repayment matched to the
    //   period: vtime_err repayment of b's thrown-away budget plus b's
    //   in-period snapback (`adjust_inuse_and_calc_cost`), the functions
    //   compared line by line with blk-iocost.c; not split further.
    // Over the 2 s window vnow advances 2387 ms for 2108 ms of usage.
    assert!(a + b <= 2120, "a={a} b={b}");
    let lines = sink.0.borrow();
    assert!(
        lines
            .iter()
            .any(|l| l.contains("iocost_inuse_transfer: [sdb:/b]")),
        "no transfer"
    );
    assert!(lines
        .iter()
        .any(|l| l.contains("iocost_iocg_activate: [sdb:/a]")));
}

/// A period with no completions while IOs are lagging: before the fix the
/// "QoS met" branch resets busy_level to 0; with it busy_level is kept and a
/// positive value still cuts vrate.
fn no_completion_period(fix: &str) -> (i32, u64, Vec<String>) {
    let tree = tree_with(&[
        ("/", "io.cost.model", SEED_MODEL),
        ("/", "io.cost.qos", SEED_QOS),
        ("/a", "io.weight", "100"),
    ]);
    let d = dev(false, 128);
    let mut sw = Switches::default();
    sw.set("iocost.busy_level_fix", fix).unwrap();
    let sink = Shared::default();
    let mut tr = Tracer::new(Some(Box::new(sink.clone())));
    let mut ioc = IoCost::new(&d, &tree, Hz(1000), &sw).unwrap().unwrap();
    let mk = |sector: u64, bytes: u32| {
        Bio::new(0, 1, Op::Read, sector, bytes, Origin::Kernel { tag: 0 })
    };
    let mut ctx = crate::block::testutil::ctx(SEC, &d, &tree, &sw, &mut tr);
    // one 256 KiB read fits the initial budget and stays in flight forever
    let mut b0 = mk(1 << 20, 256 << 10);
    assert_eq!(ioc.throttle(&mut ctx, 0, &mut b0), QosVerdict::Proceed);
    // three 1 MiB reads wait in iocost
    for i in 1..4u32 {
        let mut b = mk((i as u64) << 24, 1 << 20);
        assert_eq!(ioc.throttle(&mut ctx, i, &mut b), QosVerdict::Wait);
    }
    ioc.busy_level = 4; // as after four busy periods
    let v0 = ioc.vrate();
    let mut released = Vec::new();
    // run timers until the first period timer has fired
    while ioc.cur_period == 0 {
        let t = ioc.next_timer().unwrap();
        let mut ctx = crate::block::testutil::ctx(t, &d, &tree, &sw, &mut tr);
        ioc.timer(&mut ctx, &mut released);
    }
    assert_eq!(
        released,
        vec![1],
        "the first 1 MiB read was woken by its waitq timer"
    );
    let lines = sink.0.borrow().clone();
    let _ = v0;
    (ioc.busy_level, ioc.vrate(), lines)
}

#[test]
fn busy_level_fix_off_resets_on_empty_period() {
    let (busy, vrate, lines) = no_completion_period("off");
    assert_eq!(busy, 0);
    assert_eq!(vrate, VTIME_PER_USEC);
    let adj: Vec<_> = lines
        .iter()
        .filter(|l| l.contains("iocost_ioc_vrate_adj: "))
        .collect();
    assert_eq!(adj.len(), 1, "{lines:#?}");
    assert!(
        adj[0].ends_with(
            "[sdb] vrate=137438->137438 busy=0 missed_ppm=0:0 rq_wait_pct=0 lagging=1 shortages=1"
        ),
        "{}",
        adj[0]
    );
}

#[test]
fn busy_level_fix_on_keeps_level_and_cuts_vrate() {
    let (busy, vrate, lines) = no_completion_period("on");
    assert_eq!(busy, 4);
    assert_eq!(vrate, div_round_up(VTIME_PER_USEC * 99, 100));
    assert!(lines.iter().any(|l| l.ends_with(
        "[sdb] vrate=137438->136064 busy=4 missed_ppm=0:0 rq_wait_pct=0 lagging=1 shortages=1"
    )));
    assert!(lines.iter().any(|l| l.ends_with(
        "[sdb] vrate=100.00%->99.00% busy=4 missed_ppm=0:0 rq_wait_pct=0 lagging=1 shortages=1"
    )));
}

#[test]
fn busy_level_state_machine() {
    use super::period::{LatStat, PeriodSignals};
    let mut ioc = seed();
    let sig = |missed: u32, done: u32, lag: i32, short: i32| PeriodSignals {
        lat: LatStat {
            missed_ppm: [missed, 0],
            rq_wait_pct: 0,
            nr_done: done,
        },
        nr_lagging: lag,
        nr_shortages: short,
    };
    ioc.busy_level = -2;
    ioc.update_busy_level(&sig(200_000, 10, 0, 0), true);
    assert_eq!(ioc.busy_level, 1); // missed > 10 %: max(b,0)+1
    ioc.update_busy_level(&sig(0, 10, 0, 1), true);
    assert_eq!(ioc.busy_level, -1); // met with shortages and no lagging
    ioc.update_busy_level(&sig(0, 10, 2, 1), true);
    assert_eq!(ioc.busy_level, -1); // lagging: no further decrement
    ioc.update_busy_level(&sig(90_000, 10, 0, 1), true);
    assert_eq!(ioc.busy_level, 0); // hysteresis band (7.5 % < 9 % <= 10 %)
    ioc.busy_level = 7;
    ioc.update_busy_level(&sig(0, 10, 0, 0), true);
    assert_eq!(ioc.busy_level, 0); // nobody short: coast
    ioc.busy_level = 7;
    ioc.update_busy_level(&sig(0, 0, 3, 1), true);
    assert_eq!(ioc.busy_level, 7);
    ioc.update_busy_level(&sig(0, 0, 3, 1), false);
    assert_eq!(ioc.busy_level, 0);
    ioc.busy_level = 1000;
    ioc.update_busy_level(&sig(1_000_000, 1, 0, 0), false);
    assert_eq!(ioc.busy_level, 1000);
}

#[test]
fn latency_and_rq_wait_accounting() {
    let d = dev(false, 128);
    let tree = CgroupTree::new();
    let sw = Switches::default();
    let mut tr = Tracer::default();
    let mut ioc = seed();
    let rq = |op: Op, bytes: u32, start: Ns, alloc: Ns| Request {
        dev: 0,
        op,
        cg: 0,
        submitter: Default::default(),
        ioprio: Ioprio::default(),
        sector: 0,
        bytes,
        sync: true,
        bios: Default::default(),
        // `start` = allocation began (alloc_time_ns), `alloc` = tag obtained (start_time_ns)
        alloc_time: start,
        start_time: alloc,
        insert_time: alloc,
        issue_time: alloc,
        fifo_time: 0,
        done_time: 0,
        wbt_acct: 0,
        tag: 0,
    };
    let mut rel = Vec::new();
    // 1 MiB read: 3.5 ms + 6.063946 ms allowance
    let mut ctx = crate::block::testutil::ctx(10 * MS + 9_563_946, &d, &tree, &sw, &mut tr);
    ioc.done(&mut ctx, &rq(Op::Read, 1 << 20, 10 * MS, 10 * MS), &mut rel);
    ctx.now += 1;
    ioc.done(&mut ctx, &rq(Op::Read, 1 << 20, 10 * MS, 11 * MS), &mut rel);
    ioc.done(&mut ctx, &rq(Op::Flush, 0, 10 * MS, 10 * MS), &mut rel);
    assert_eq!((ioc.nr_met, ioc.nr_missed), ([1, 0], [1, 0]));
    let l = ioc.lat_stat();
    assert_eq!(l.missed_ppm, [500_000, 0]);
    assert_eq!(l.nr_done, 2);
    assert_eq!(l.rq_wait_pct, 14); // 1 ms of rq wait in a 7 ms period
    assert_eq!(ioc.lat_stat().nr_done, 0);
}

#[test]
fn io_stat_fields() {
    let mut ioc = seed();
    assert_eq!(ioc.io_stat(0), " cost.vrate=100.00 cost.usage=0");
    assert_eq!(ioc.io_stat(0).len(), ioc.pd_stat(0).len());
    ioc.vtime_base_rate = 175_247;
    ioc.debug_stats = true;
    assert_eq!(
        ioc.io_stat(0),
        " cost.vrate=127.51 cost.usage=0 cost.wait=0 cost.indebt=0 cost.indelay=0"
    );
    ioc.enabled = false;
    assert_eq!(ioc.io_stat(0), "");
}
