//! `iocost.donation_usage`: the 32-bit product in `hweight_after_donation`.
//!
//! A group that used its whole share in the period (usage clamped to
//! WEIGHT_ONE, as `ioc_timer_fn` does for any group whose in-flight cost
//! covers the period) but still has budget left and nobody waiting is
//! asked what hwi it should keep. The kernel computes WEIGHT_ONE * usage
//! as an unsigned 32-bit product, which is 0 at full usage: the answer is
//! hwi 1 (seen on the QEMU guest built-6.1-hz1000, docs/fidelity/iocost.md
//! "A busy group at full usage donates everything"). One less than full
//! usage is exact.

use super::*;

/// Two groups 100:300, both active, at the end of a period (so the
/// delta term of `hweight_after_donation` is defined), with b's budget
/// (vnow - vtime) given by `budget` from the margins.
fn two_groups(budget: impl Fn(&Margins) -> u64) -> (IoCost, IocNow) {
    let d = dev(false, 128);
    let mut ioc = build(
        &[
            ("/", "io.cost.qos", "8:0 enable=1"),
            ("/a", "io.weight", "100"),
            ("/b", "io.weight", "300"),
        ],
        &d,
    )
    .unwrap()
    .unwrap();
    let start = ioc.ioc_now(0);
    for idx in [1usize, 2] {
        ioc.iocgs[idx].on_active = true;
        let w = ioc.iocgs[idx].weight;
        ioc.propagate_weights(idx, w, w, true, &start);
    }
    let now = ioc.ioc_now(ioc.period_us * 1000);
    let period_vtime = now.vnow - ioc.period_at_vtime;
    let budget = budget(&ioc.margins);
    let g = &mut ioc.iocgs[2];
    g.vtime = now.vnow - budget;
    // a period's worth of cost still in flight
    g.done_vtime = g.vtime - period_vtime;
    (ioc, now)
}

#[test]
fn full_usage_wraps_to_hwi_one_in_32_bits() {
    // between margins.min and the target: no budget is thrown away and
    // only the usage decides
    let (mut ioc, now) = two_groups(|m| (m.min + m.target) / 2);
    let (_, hwi) = ioc.current_hweight(2);
    let hwm = ioc.current_hweight_max(2);
    assert_eq!((hwi, hwm), (49152, 49152));
    assert_eq!(
        ioc.hweight_after_donation(2, hwi, hwm, WEIGHT_ONE, &now, true),
        1
    );
    assert_eq!(
        ioc.hweight_after_donation(2, hwi, hwm, WEIGHT_ONE, &now, false),
        hwm
    );
    // below full usage the product fits: both give the same answer
    let wrap = ioc.hweight_after_donation(2, hwi, hwm, WEIGHT_ONE - 1, &now, true);
    let exact = ioc.hweight_after_donation(2, hwi, hwm, WEIGHT_ONE - 1, &now, false);
    assert_eq!(wrap, exact);
    assert_eq!(wrap, hwm);
    // a real donor (quarter usage) gets the same answer from both
    let quarter = ioc.hweight_after_donation(2, hwi, hwm, WEIGHT_ONE / 4, &now, true);
    assert!(quarter > 1 && quarter < hwm, "{quarter}");
    assert_eq!(
        quarter,
        ioc.hweight_after_donation(2, hwi, hwm, WEIGHT_ONE / 4, &now, false)
    );
}

#[test]
fn a_group_below_the_minimum_margin_keeps_its_share_either_way() {
    // under margins.min the group keeps hwm before any product is taken
    let (mut ioc, now) = two_groups(|m| m.min / 2);
    let (_, hwi) = ioc.current_hweight(2);
    let hwm = ioc.current_hweight_max(2);
    for wraps in [true, false] {
        assert_eq!(
            ioc.hweight_after_donation(2, hwi, hwm, WEIGHT_ONE, &now, wraps),
            hwm
        );
    }
}
