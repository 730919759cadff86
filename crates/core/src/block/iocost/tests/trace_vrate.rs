//! What `iocost_ioc_vrate_adj` reports as vrate in the two trace eras
//! (`iocost.trace_vrate`): 6.1 prints `vtime_rate` (the base rate plus
//! `ioc_refresh_vrate`'s vtime_err compensation) as the old vrate, and as the
//! new one in a period that holds vrate; v6.2+ (63c9eac4b6d7) prints
//! `vtime_base_rate`. Only the trace differs: the base rate moves the same.

use super::*;

/// One period that steps vrate down (busy_level 4) and one that holds it
/// (busy_level 0 after 4, lagging), with vtime_rate at 1.5 x the base, as
/// a period after thrown-away budget leaves it. Returns the two trace lines'
/// `vrate=OLD->NEW` fields and the base rate after both.
fn two_periods(era: &str) -> (Vec<String>, u64) {
    let d = dev(false, 128);
    let tree = CgroupTree::new();
    let mut sw = Switches::default();
    sw.set("iocost.trace_vrate", era).unwrap();
    let sink = Shared::default();
    let mut tr = Tracer::new(Some(Box::new(sink.clone())));
    let mut ctx = crate::block::testutil::ctx(0, &d, &tree, &sw, &mut tr);
    let mut ioc = seed();
    ioc.vtime_base_rate = 175_247; // 127.50 %
    ioc.vtime_rate = 262_870; // base + vcomp of half the base
    ioc.busy_level = 4;
    ioc.adjust_base_vrate(&mut ctx, 0, 0, 2, 0, [1_000_000, 0]);
    let prev = ioc.busy_level;
    ioc.busy_level = 0;
    ioc.adjust_base_vrate(&mut ctx, 0, 2, 2, prev, [0, 0]);
    let lines = sink.0.borrow();
    let vrates = lines
        .iter()
        .filter(|l| l.contains("iocost_ioc_vrate_adj: "))
        .map(|l| {
            l.split_whitespace()
                .find(|w| w.starts_with("vrate="))
                .unwrap()
                .to_string()
        })
        .collect();
    (vrates, ioc.vtime_base_rate)
}

#[test]
fn six_one_traces_vtime_rate_and_later_kernels_the_base_rate() {
    // busy_level 4 steps vrate by vrate_adj_pct[4] = 1 %: 175247 * 99 / 100
    // rounded up = 173495, in both eras
    let (base_era, base_after) = two_periods("base");
    assert_eq!(base_era, ["vrate=175247->173495", "vrate=173495->173495"]);
    let (old_era, old_after) = two_periods("vtime-rate");
    // old = vtime_rate in both lines; the held period's new vrate too (the
    // compensation is refreshed only at the next period start)
    assert_eq!(old_era, ["vrate=262870->173495", "vrate=262870->262870"]);
    assert_eq!(base_after, old_after);
}
