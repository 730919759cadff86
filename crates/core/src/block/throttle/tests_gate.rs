//! The submission shortcut (`gate.rs`) against the full path: the same random
//! runs through two throttles, one with the shortcut off, must agree on every
//! decision and on every counter, window and queue after every step.

use super::tests::{bio, H};
use super::*;
use crate::block::bio::{BioId, Op};
use crate::sim::rng::Rng;
use crate::sim::time::NSEC_PER_MSEC;

const MS: Ns = NSEC_PER_MSEC;

/// Everything the throttle keeps about its groups, queues and timers.
fn state(t: &Throttle) -> String {
    let mut out = format!(
        "nr_queued={:?} timers={:?} seq={}\n",
        t.nr_queued, t.timers, t.seq
    );
    for (i, g) in t.tgs.iter().enumerate() {
        out += &format!(
            "tg{i}: conf={:?} bytes={:?} ios={:?} co_b={:?} co_i={:?} start={:?} end={:?} \
             disp={} pend={:?} empty={} {} sq={:?}/{:?} pending={:?} timer={:?} \
             self={:?} parent={:?} stats={:?}\n",
            (g.conf.bps, g.conf.iops),
            g.bytes_disp,
            g.io_disp,
            g.carryover_bytes,
            g.carryover_ios,
            g.slice_start,
            g.slice_end,
            g.disptime,
            g.pend_key,
            g.was_empty,
            g.iops_was_empty,
            g.sq.nr_queued_bps,
            g.sq.nr_queued_iops,
            g.sq.pending,
            g.sq.timer,
            ends(&g.qn_self),
            ends(&g.qn_parent),
            g.stats,
        );
    }
    out
}

/// Per direction and list, the length and the bios at both ends (the
/// released lists, compared at every timer, pin down the rest).
fn ends(q: &[queue::Qnode; 2]) -> Vec<(usize, Option<BioId>, Option<BioId>)> {
    q.iter()
        .flat_map(|n| [&n.bps, &n.iops])
        .map(|l| (l.len(), l.front().map(|b| b.id), l.back().map(|b| b.id)))
        .collect()
}

/// A limit value for io.max: unlimited, binding or far above the load.
fn pick(rng: &mut Rng, choices: &[&str]) -> String {
    choices[rng.below(choices.len() as u64) as usize].to_string()
}

fn limit_line(rng: &mut Rng) -> String {
    let bps = [
        "max",
        "10",
        "200000",
        "4000000",
        "100000000",
        "1000000000000",
    ];
    let iops = ["max", "1", "20", "300", "5000", "1000000000", "3000000000"];
    format!(
        "253:1 rbps={} wbps={} riops={} wiops={}",
        pick(rng, &bps),
        pick(rng, &bps),
        pick(rng, &iops),
        pick(rng, &iops)
    )
}

fn one_run(seed: u64, hz: u32, slice: &str) {
    let mut rng = Rng::stream(seed, "throttle-gate");
    let paths = ["/a", "/a/b", "/a/c", "/d"];
    let mut files: Vec<(&str, String)> = Vec::new();
    for p in paths {
        let f = if rng.below(3) == 0 {
            String::new()
        } else {
            limit_line(&mut rng)
        };
        files.push((p, f));
    }
    let files: Vec<(&str, &str)> = files.iter().map(|(p, f)| (*p, f.as_str())).collect();
    let mut fast = H::new(hz, "current", slice, false, &files);
    let mut full = H::new(hz, "current", slice, false, &files);
    full.th.shortcut = false;
    assert!(fast.th.shortcut);
    let cgs: Vec<CgId> = paths.iter().map(|p| fast.cg(p)).collect();
    let mut now: Ns = 0;
    let (mut out_a, mut out_b) = (Vec::new(), Vec::new());
    for step in 0..3000u32 {
        // mostly bursts within a jiffy, sometimes a pause of up to 0.6 s
        now += match rng.below(20) {
            0 => rng.below(600 * MS),
            1..=4 => rng.below(5 * MS),
            _ => rng.below(50_000),
        };
        while let Some(t) = fast.th.next_timer().filter(|&t| t <= now) {
            assert_eq!(full.th.next_timer(), Some(t), "seed {seed} step {step}");
            out_a.clear();
            out_b.clear();
            fast.fire(t, &mut out_a);
            full.fire(t, &mut out_b);
            assert_eq!(out_a, out_b, "seed {seed} step {step}: released");
        }
        assert_eq!(full.th.next_timer().filter(|&t| t <= now), None);
        let cg = cgs[rng.below(cgs.len() as u64) as usize];
        match rng.below(40) {
            0 => {
                let line = limit_line(&mut rng);
                let a = fast.write(now, cg, &line).map_err(|e| e.errno);
                let b = full.write(now, cg, &line).map_err(|e| e.errno);
                assert_eq!(a, b);
            }
            1 => {
                let op = if rng.below(2) == 0 {
                    Op::Read
                } else {
                    Op::Write
                };
                let extra = 1 + rng.below(3) as u32;
                let (th, mut ctx) = fast.parts(now);
                th.bio_split(&mut ctx, cg, op, extra);
                let (th, mut ctx) = full.parts(now);
                th.bio_split(&mut ctx, cg, op, extra);
            }
            _ => {
                let op = if rng.below(3) == 0 {
                    Op::Write
                } else {
                    Op::Read
                };
                let bytes = 512 << rng.below(10);
                let mut a = bio(cg, op, bytes as u32);
                // split remainders and REQ_META take their own paths
                a.flags.throttled = rng.below(15) == 0;
                a.flags.meta = rng.below(30) == 0;
                let mut b = a.clone();
                let id = step as BioId;
                let held_a = fast.submit(now, id, &mut a);
                let held_b = full.submit(now, id, &mut b);
                assert_eq!(held_a, held_b, "seed {seed} step {step}: held");
                assert_eq!(a.flags.throttled, b.flags.throttled);
            }
        }
        assert_eq!(
            state(&fast.th),
            state(&full.th),
            "seed {seed} step {step} at {now} ns"
        );
    }
}

/// Random limits (binding, not binding, unlimited, over i32 IOPS), nested
/// groups, bursts and pauses, limit writes, split pieces, remainders and
/// REQ_META bios: the shortcut changes nothing anywhere.
#[test]
fn the_shortcut_matches_the_full_path() {
    for seed in 0..24 {
        let (hz, slice) = match seed % 3 {
            0 => (250, "100ms"),
            1 => (1000, "20ms-nonrot"),
            _ => (100, "auto"),
        };
        one_run(seed, hz, slice);
    }
}

/// The bench's case: with a limit far above the load, the gate is open
/// after all but the first bios of each jiffy, so they take the shortcut.
#[test]
fn a_limit_that_cannot_bind_leaves_the_gate_open() {
    let mut h = H::new(
        250,
        "current",
        "100ms",
        false,
        &[("/g", "253:1 riops=1000000000")],
    );
    let g = h.cg("/g");
    let mut open = 0;
    for i in 0..20_000u64 {
        let now = i * 50_000; // 80 bios per 4 ms jiffy
        let mut b = bio(g, Op::Read, 4096);
        assert!(!h.submit(now, i as BioId, &mut b));
        let gate = h.th.tgs[g as usize].gate[0];
        if gate.io_cap > i64::MIN && gate.j == now / (4 * MS) {
            open += 1;
        }
    }
    assert!(open >= 19_500, "{open}");
    assert_eq!(h.th.tgs[g as usize].stats.passed[0], 20_000);
    assert_eq!(h.th.tgs[g as usize].io_disp[0] > 0, true);
}
