//! `ioc_refresh_vrate` against the timer wheel: the kernel spreads the
//! vtime thrown away in a period (`vtime_err`) over `period_us`, but the
//! period timer (`ioc_start_period`: `jiffies + usecs_to_jiffies(period_us)`,
//! run one tick later, sim/timer.rs) keeps the compensated vtime_rate for
//! longer. The extra vtime is never booked against `vtime_err`, so the device
//! hands out more budget than was thrown away, by the ratio of the real
//! period to `period_us`. These fixtures pin that arithmetic: it is the
//! kernel's, and it is what lets a cgroup with waiters run above vrate when
//! its sibling donates (seed 000 at HZ=250, docs/fidelity/iocost.md).

use super::*;

/// Start a period at a tick boundary with `err` vtime owed (negative
/// `vtime_err`, as `hweight_after_donation` leaves it), compensate as
/// `ioc_timer_fn` does, and return (vtime the period hands out beyond the
/// base rate, the vtime_err left booked, the period's length in µs).
fn repaid_in_one_period(hz: u32, err: i64) -> (i64, i64, u64) {
    let tree = tree_with(&[
        ("/", "io.cost.model", SEED_MODEL),
        ("/", "io.cost.qos", SEED_QOS),
    ]);
    let d = dev(false, 128);
    let mut ioc = IoCost::new(&d, &tree, Hz(hz), &Switches::default())
        .unwrap()
        .unwrap();
    assert_eq!(ioc.period_us, 7_000); // rlat 3500 at p90: 2x
    let start_ns = Hz(hz).jiffy_start(100);
    let now = ioc.ioc_now(start_ns);
    ioc.running = Running::Running;
    ioc.start_period(&now);
    ioc.vtime_err = err;
    ioc.refresh_vrate(&now);
    let end_ns = ioc.period_timer.unwrap();
    let end = ioc.ioc_now(end_ns);
    let len_us = (end_ns - start_ns) / 1000;
    let handed_out = end.vnow.wrapping_sub(now.vnow) as i64;
    let base = (len_us * ioc.vtime_base_rate) as i64;
    (handed_out - base, ioc.vtime_err, len_us)
}

/// HZ=250: the 7 ms period lasts 12 ms, so 12/7 of the owed vtime is paid
/// while the books say it was paid exactly.
#[test]
fn vtime_err_is_repaid_over_the_whole_timer_period_at_hz_250() {
    let owed = 7_000 * VTIME_PER_USEC as i64 / 10; // 0.7 ms of vtime
    let (extra, booked, len_us) = repaid_in_one_period(250, -owed);
    assert_eq!(len_us, 12_000);
    // vcomp = owed / 7000 µs per µs, paid for 12000 µs
    assert_eq!(extra, owed / 7_000 * 12_000);
    assert!(booked.abs() < 7_000, "the books say paid: {booked}");
    assert!(extra > owed * 17 / 10, "{extra} vs owed {owed}");
}

/// HZ=1000: 7 + 1 jiffies = 8 ms, 8/7 of the owed vtime.
#[test]
fn vtime_err_is_repaid_over_the_whole_timer_period_at_hz_1000() {
    let owed = 7_000 * VTIME_PER_USEC as i64 / 10;
    let (extra, booked, len_us) = repaid_in_one_period(1000, -owed);
    assert_eq!(len_us, 8_000);
    assert_eq!(extra, owed / 7_000 * 8_000);
    assert!(booked.abs() < 7_000, "{booked}");
}
