//! The single-FIFO eras of 6.1.y (`joint-fifo`) and 6.12.y
//! (`joint-fifo-min-wait`) against each other and against `current`, on
//! constructed cases whose numbers follow from the kernels' arithmetic.
//! HZ = 1000 and S = 100 jiffies (Debian's 6.1 and 6.12) unless stated.

use super::tests::{bio, ios_in_10s, run, Job, H};
use super::wait::{bps_wait_joint, iops_wait_current, iops_wait_joint};
use super::QBio;
use crate::block::bio::Op;
use crate::sim::time::{NSEC_PER_MSEC, NSEC_PER_SEC};

const MS: u64 = NSEC_PER_MSEC;
const MIB: u64 = 1 << 20;

/// The wait formulas on their own.
#[test]
fn joint_wait_formulas() {
    // riops=10, S=20: a 20-jiffy window earns 10 * 20 / 1000 = 0 IOs.
    // 6.1 waits to the window's end (20) and finds 0 again; v6.11 (and
    // today) wait at least HZ/iops + 1 = 101 jiffies (1beabab88ece).
    assert_eq!(iops_wait_joint(0, 0, 0, 10, 20, 1000, false, false), 20);
    assert_eq!(iops_wait_joint(0, 0, 0, 10, 20, 1000, true, true), 101);
    assert_eq!(iops_wait_current(0, 0, 10, 20, 1000), 101);
    // within budget: riops=100 earns 10 in the first window
    assert_eq!(iops_wait_joint(9, 0, 41, 100, 100, 1000, false, false), 0);
    assert_eq!(iops_wait_joint(10, 0, 41, 100, 100, 1000, false, false), 59);

    // A carryover of -5 IOs (a debt) with riops=50: the window earns
    // 50 * 100 / 1000 = 5. 6.1 adds unsigned: 5 + (2^32 - 5) wraps to 0,
    // and 0 + 1 <= 0 fails: wait 100. With -10: 2^32 - 5, so the IO passes
    // (the bug bb8d5587bdc3 fixed). 6.12 reads -5 as signed, and a budget
    // that is not positive means waiting: max(100, 1000/50 + 1) = 100.
    let debt = |n: u32| 0u32.wrapping_sub(n);
    assert_eq!(
        iops_wait_joint(0, debt(5), 0, 50, 100, 1000, false, false),
        100
    );
    assert_eq!(
        iops_wait_joint(0, debt(10), 0, 50, 100, 1000, false, false),
        0
    );
    assert_eq!(
        iops_wait_joint(0, debt(10), 0, 50, 100, 1000, true, true),
        100
    );
    // a credit of 3 IOs is 3 more in both
    assert_eq!(iops_wait_joint(7, 3, 0, 50, 100, 1000, false, false), 0);
    assert_eq!(iops_wait_joint(7, 3, 0, 50, 100, 1000, true, true), 0);
    assert_eq!(iops_wait_joint(8, 3, 0, 50, 100, 1000, true, true), 100);

    // bps: 1 MiB/s earns 104857 bytes in the first window. A debt of
    // 200000 bytes wraps to a huge budget in 6.1 (4 KiB passes); in 6.12
    // the budget is -95143: extra = 4096 + 95143 = 99239 bytes,
    // 99239 * 1000 / 1048576 = 94 jiffies, plus the rounding 100 - 0.
    let bdebt = 0u64.wrapping_sub(200_000);
    assert_eq!(bps_wait_joint(0, bdebt, 4096, 0, MIB, 100, 1000, false), 0);
    assert_eq!(bps_wait_joint(0, bdebt, 4096, 0, MIB, 100, 1000, true), 194);
    // no carryover: both eras as the 2018 and current formulas (1000 jiffies
    // for a 1 MiB bio at 1 MiB/s: 943719 extra bytes -> 900, + 100)
    for signed in [false, true] {
        assert_eq!(bps_wait_joint(0, 0, MIB, 0, MIB, 100, 1000, signed), 1000);
    }
}

/// Yu Kuai's report behind 1beabab88ece: riops=5 with HZ/10 slices gives
/// about 3 IOPS. A 100-jiffy window earns 5 * 100 / 1000 = 0 IOs, so in
/// 6.1 each IO waits to a window end, finds nothing, and only passes once
/// the rounded window reaches 200 jiffies (5 * 200 / 1000 = 1); the trim
/// keeps slice_start a window behind and one IO costs ~3 windows
/// (+ the timer wheel's rounding). 6.12 waits HZ/5 + 1 = 201 jiffies at
/// once and gets the full rate.
#[test]
fn super_low_iops_limit_6_1_loses_rate() {
    let n61 = ios_in_10s("joint-fifo", "100ms", "253:1 riops=5");
    let n612 = ios_in_10s("joint-fifo-min-wait", "100ms", "253:1 riops=5");
    let now = ios_in_10s("current", "100ms", "253:1 riops=5");
    // 6.1: a cycle of ~300 jiffies per IO after the first (33 in 10 s);
    // 6.12 and today: one IO per 201 jiffies rounded by the wheel to 208
    // (48 and 49 in 10 s, the first IO also waiting)
    assert_eq!((n61, n612, now), (33, 48, 49));
}

/// Eight 4 KiB reads at t = 0 under riops=50 (5 per 100-jiffy window):
/// b0..b4 pass, b5..b7 wait. At j10 the limit becomes riops=20. The old
/// slice earned 50 * 10 / 1000 = 0 IOs against 5 used: a carryover of -5.
/// * 6.1 (`joint-fifo`): carryover_ios is unsigned, the new window's
///   budget 20 * 100 / 1000 = 2 plus 2^32 - 5 wraps to 2^32 - 3: b5..b7 all
///   pass when the forced re-evaluation runs at the next tick, j11.
/// * 6.12 (`joint-fifo-min-wait`): the budget is 2 - 5 = -3, not positive:
///   b5 waits max(100, 1000/20 + 1) = 100 to j110 (wheel: j112), then at
///   el = 102 the window to 200 earns 4 - 5 = -1: wait 98 to j210 (wheel:
///   j216), where the window to 300 earns 6 - 5 = 1: b5 goes at j216. The
///   trim then takes 200 jiffies' 4 IOs - 5 = -1 off io_disp (1 -> 2) and
///   moves slice_start to j210: b6 finds 2 + 1 > 2, waits 94 to j310
///   (wheel: j312), where the window to 200 earns 4: b6 and b7 go at j312.
/// * today (`current`): `tg_update_carryover` keeps a debt only when the
///   old slice earned a positive budget; 0 earned means a clean restart:
///   b5 and b6 pass at j11 (budget 2); b7 waits max(99, 51) to j110
///   (wheel: j112), where the window to 200 earns 4.
#[test]
fn debt_at_a_limit_change() {
    for (era, want) in [
        ("joint-fifo", [11, 11, 11]),
        ("joint-fifo-min-wait", [216, 312, 312]),
        ("current", [11, 11, 112]),
    ] {
        let mut h = H::new(1000, era, "100ms", false, &[("/c", "253:1 riops=50")]);
        let c = h.cg("/c");
        for id in 0..8 {
            let mut b = bio(c, Op::Read, 4096);
            assert_eq!(h.submit(0, id, &mut b), id >= 5, "{era}: bio {id}");
        }
        h.write(10 * MS, c, "253:1 riops=20").unwrap();
        let mut when = [0u64; 8];
        let mut out = Vec::new();
        while let Some(t) = h.th.next_timer() {
            if t > 2 * NSEC_PER_SEC {
                break;
            }
            out.clear();
            h.fire(t, &mut out);
            for &id in &out {
                when[id as usize] = t / MS;
            }
        }
        assert_eq!(&when[5..], &want, "{era}");
    }
}

/// Release jiffies of the first `n` bios of one back-to-back job of
/// `bytes`-sized reads under `limit`.
fn releases(era: &str, limit: &str, bytes: u32, n: usize) -> Vec<u64> {
    let mut h = H::new(1000, era, "100ms", false, &[("/c", limit)]);
    let mut job = Job::new(h.cg("/c"), 0, 0, 0);
    job.bytes = bytes;
    let mut jobs = [job];
    run(&mut h, &mut jobs, 10 * NSEC_PER_SEC);
    jobs[0].done.iter().take(n).map(|&(_, r)| r / MS).collect()
}

/// Both limits on one group, 64 KiB reads back to back at rbps = 1 MiB/s
/// (104857 bytes per window, 16 bios/s) and riops = 10 (1 per window, so
/// iops binds). b0 passes at j0. b1 is over the bytes budget: 131072 -
/// 104857 = 26215 bytes -> 25 jiffies + 100 of rounding = 125 (6.12's iops
/// wait, max(100, 101), is smaller), the wheel runs it at j128 in all three.
/// The trim at j128 leaves 26215 bytes, 1 IO and slice_start = j100. b2 at
/// el = 28 fits the bytes but not the IO: 6.1 waits to the window end,
/// 72 jiffies to j200 (wheel: j208), and keeps a ~100-jiffy cadence;
/// 6.12 and today wait at least HZ/10 + 1 = 101 to j229 (wheel: j232) and
/// every IO after that costs 104 jiffies.
#[test]
fn bps_and_iops_together() {
    let lim = "253:1 rbps=1048576 riops=10";
    assert_eq!(
        releases("joint-fifo", lim, 64 << 10, 8),
        [0, 128, 208, 304, 408, 504, 608, 704]
    );
    for era in ["joint-fifo-min-wait", "current"] {
        assert_eq!(
            releases(era, lim, 64 << 10, 8),
            [0, 128, 232, 336, 440, 544, 648, 752],
            "{era}"
        );
    }
}

/// `tg_may_dispatch` at an exact slice boundary, where the bytes budget is
/// not rounded up but the IO budget is: slice [0, 200], j = 100, 65536
/// bytes and 3 IOs dispatched, rbps = 1 MiB/s, riops = 15, a 64 KiB bio.
/// Bytes: 65536 + 65536 - 104857 = 26215 over -> 25 jiffies (+ 0 of
/// rounding). IOs: the window to 200 earns 15 * 200 / 1000 = 3, used up ->
/// 100 jiffies to its end (more than 6.12's minimum 1000/15 + 1 = 67).
/// 6.1 stops at the failed bytes check and waits 25 (and will find the IO
/// budget empty then); 6.12 computes both and waits 100 (183daeb11de8).
#[test]
fn the_iops_check_short_circuited_in_6_1() {
    for (era, want) in [("joint-fifo", 25), ("joint-fifo-min-wait", 100)] {
        let mut h = H::new(
            1000,
            era,
            "100ms",
            false,
            &[("/c", "253:1 rbps=1048576 riops=15")],
        );
        let c = h.cg("/c");
        let tg = &mut h.th.tgs[c as usize];
        tg.slice_start[0] = 0;
        tg.slice_end[0] = 200;
        tg.bytes_disp[0] = 65536;
        tg.io_disp[0] = 3;
        let qb = QBio {
            id: 0,
            dir: 0,
            size: 65536,
            bytes: 65536,
            tg_bps: false,
            bps_throttled: false,
            t_enq: 0,
        };
        assert_eq!(h.th.may_dispatch_joint(c, &qb, 100), (false, want), "{era}");
        // the wait extends the slice to cover it
        assert_eq!(h.th.tgs[c as usize].slice_end[0], 200, "{era}");
        // a split remainder (BIO_BPS_THROTTLED) is checked for the IO only
        let rem = QBio {
            bps_throttled: true,
            ..qb
        };
        assert_eq!(h.th.may_dispatch_joint(c, &rem, 100), (false, 100), "{era}");
    }
}

/// A REQ_META bio over the limit: 6.12 (like today) lets it pass and
/// charges it (`bio_issue_as_root_blkg`, a debt the next bios pay); 6.1
/// queues it like any bio. riops=10: the first window earns 1 IO.
#[test]
fn meta_bios_pass_over_the_limit_from_6_12() {
    for (era, meta_queued) in [
        ("joint-fifo", true),
        ("joint-fifo-min-wait", false),
        ("current", false),
    ] {
        let mut h = H::new(1000, era, "100ms", false, &[("/c", "253:1 riops=10")]);
        let c = h.cg("/c");
        let mut b = bio(c, Op::Read, 4096);
        assert!(!h.submit(0, 0, &mut b), "{era}");
        let mut m = bio(c, Op::Read, 4096);
        m.flags.meta = true;
        assert_eq!(h.submit(0, 1, &mut m), meta_queued, "{era}");
        // 2 IOs charged (6.12) or 1 with the meta bio waiting (6.1): either
        // way the next bio waits
        let mut b = bio(c, Op::Read, 4096);
        assert!(h.submit(0, 2, &mut b), "{era}");
        let io_disp = h.th.tgs[c as usize].io_disp[0];
        assert_eq!(io_disp, if meta_queued { 1 } else { 2 }, "{era}");
    }
}
