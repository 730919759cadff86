//! The host's background work (`[host] stall_interval_ns`, `stall_ns`;
//! `blklab_core::sim::background`) fitted from the tails of the deep
//! random reads, for a device the CPUs set the pace of (the loop worker
//! over a file in memory, or an `ssd` fio's CPU bounds).
//!
//! Why the tails: at depth the CPUs holding fio and the loop worker are
//! never idle, and every request queued behind a stalled CPU waits out the
//! stall. The quiet tmpfs loop measured p99 − mean = 55, 113 and 170 µs at
//! QD 8, 32 and 64 while its whole per-I/O time was 3.64 µs: no per-request
//! cost spreads that much (even an all-exponential worker gives QD32 about
//! 170 µs for a 226 µs p99), rare stalls of the busy CPUs do.
//!
//! The first estimate, by hand. Let each busy CPU stall at rate λ (stalls
//! per ns) for an exponential time of mean S, with `n` CPUs busy (fio and
//! the worker: n = min(CPUs, 2)). A request in flight for W (its mean
//! clat) meets a stall with probability p(W) = 1 − exp(−n λ W); a request
//! that meets one waits, on top, for an exponential time of mean S (what is
//! left of a stall under way is exponential too). So its clat passes mean +
//! x with probability about p e^(−x/S) (x beyond the stall-free spread),
//! the p99 is where that is 1 %, x = S ln(100 p), and the mean moves by
//! p S:
//!
//!   spread(W) = p99 − mean = S (ln(100 p(W)) − p(W)),  for p(W) > 1 %.
//!
//! Two depths (QD8 and QD64: both in every plan) give two such equations.
//! Their ratio spread(W64) / spread(W8) depends on λ alone and falls from
//! ∞ (p(W8) → 1 %) to 1 (p → 1) as λ grows: λ by bisection, then S from
//! QD8's. The quiet tmpfs loop (W = 35.1 and 230.2 µs, spreads 54.5 and
//! 169.2 µs on 2 CPUs) gives λ = 1 / 3.0 ms and S = 67 µs: 2.2 % of a busy
//! CPU. The measured spreads hold the model's own spread as well (the
//! worker's and fio's bursts interleaving), which the formula ignores, so
//! the simulation corrects the two numbers as loop_fit.rs does the others:
//! the model's QD8 and QD64 spreads with the stalls are put through the
//! same inversion, and λ and S move by the ratio of the measured
//! inversion to the simulated one.

use blklab_core::sim::background::{Background, StallDist};

use crate::fio_run::{FioResult, Measured};
use crate::plan::{self, Job};

/// The two depths of the fit: the sweep's shallowest in --quick and its
/// deepest of iocost_coef_gen.py.
const SHALLOW_QD: u32 = 8;
const DEEP_QD: u32 = 64;
/// Rounds by simulation (two runs each; the first without stalls), and the relative error
/// of the simulated spreads that ends them early: the p99 of a 3 s run
/// moves by a few % with the seed.
const ROUNDS: usize = 7;
const CLOSE: f64 = 0.03;

/// A depth's figures: its mean clat (the window, ns) and p99 − mean (ns).
#[derive(Clone, Copy, Debug)]
struct Tail {
    window_ns: f64,
    spread_ns: f64,
}

fn tail_of(r: &FioResult) -> Tail {
    let d = r.main();
    Tail {
        window_ns: d.clat_mean_ns,
        spread_ns: d.pct_ns(99.0) - d.clat_mean_ns,
    }
}

/// The smallest share of requests meeting a stall the inversion uses: just
/// above 1 %, where `ln(100 p) − p` turns positive (below, the stalls do
/// not reach the p99).
const P_MIN: f64 = 0.0102;

/// `S (ln(100 p) − p)` over S: the spread per ns of mean stall at window
/// `w_ns` with host stall rate `rate` (per ns, all busy CPUs); None when
/// p < [`P_MIN`].
fn spread_per_stall_ns(rate: f64, w_ns: f64) -> Option<f64> {
    let p = 1.0 - (-rate * w_ns).exp();
    (p >= P_MIN).then(|| (100.0 * p).ln() - p)
}

/// The host's stall rate (per ns, all busy CPUs together) and mean stall
/// (ns) whose spreads at the two windows are the given ones; None when the
/// spread does not grow with the window (not stalls).
fn invert(shallow: Tail, deep: Tail) -> Option<(f64, f64)> {
    if shallow.spread_ns <= 0.0 || deep.window_ns <= shallow.window_ns {
        return None;
    }
    let want = deep.spread_ns / shallow.spread_ns;
    let ratio = |rate: f64| -> Option<f64> {
        Some(
            spread_per_stall_ns(rate, deep.window_ns)?
                / spread_per_stall_ns(rate, shallow.window_ns)?,
        )
    };
    // p(shallow) just above P_MIN .. the ratio's floor (1) as p → 1
    let mut lo = -(1.0 - P_MIN * 1.001).ln() / shallow.window_ns;
    let mut hi = 50.0 / shallow.window_ns;
    if want <= ratio(hi)? || want >= ratio(lo)? {
        return None;
    }
    for _ in 0..100 {
        let mid = (lo * hi).sqrt();
        // the ratio falls as the rate grows
        if ratio(mid)? > want {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let rate = (lo * hi).sqrt();
    let stall_ns = shallow.spread_ns / spread_per_stall_ns(rate, shallow.window_ns)?;
    Some((rate, stall_ns))
}

/// Per-CPU background work from the host's stall rate (`busy` CPUs) and
/// mean stall, made legal (`Background::check`): the interval at least
/// the minimum, the stalls at most half of a busy CPU.
fn background(rate: f64, stall_ns: f64, busy: u32) -> Background {
    let interval = (busy as f64 / rate)
        .round()
        .clamp(Background::MIN_INTERVAL_NS as f64, 1e9) as u64;
    let stall = stall_ns.round().clamp(1.0, (interval / 2) as f64) as u64;
    Background {
        interval_ns: interval,
        stall_ns: stall,
        dist: StallDist::Exp,
    }
}

/// Fit the background stalls of a host with `cpus` CPUs from the measured
/// QD8 and QD64 random reads, correcting by simulation (`sim` runs a job
/// on the fitted model with the given background work). None (no
/// background work) when a job is missing or the spreads do not grow with
/// the depth as stalls make them.
pub fn fit_stalls(
    m: &Measured,
    cpus: u32,
    jobs: &[Job],
    sim: &dyn Fn(Background, &Job) -> Result<FioResult, String>,
    notes: &mut Vec<String>,
) -> Result<Option<Background>, String> {
    let (id8, id64) = (plan::rand_read_id(SHALLOW_QD), plan::rand_read_id(DEEP_QD));
    let find = |id: &str| Some((m.get(id)?, jobs.iter().find(|j| j.id == id)?));
    let (Some((r8, j8)), Some((r64, j64))) = (find(&id8), find(&id64)) else {
        return Ok(None);
    };
    let (real8, real64) = (tail_of(r8), tail_of(r64));
    let busy = cpus.clamp(1, 2);
    let Some((rate0, stall0)) = invert(real8, real64) else {
        notes.push(format!(
            "no background work: {id8}'s and {id64}'s clat spreads (p99 − mean {:.1} and {:.1} µs) do not grow with the depth as stalls of busy CPUs make them",
            real8.spread_ns / 1e3,
            real64.spread_ns / 1e3
        ));
        return Ok(None);
    };
    let (mut rate, mut stall) = (rate0, stall0);
    // Round 0 is the model without stalls: when its own spreads are the
    // measured ones already, there is nothing for stalls to add.
    let mut bg = Background::default();
    // The simulated spreads put through the same inversion, at the
    // measured windows (the model's own error in the mean is not the
    // stalls' to correct): λ and S move by the measured inversion over the
    // simulated one. The best of the simulated settings is kept (the
    // larger of its two errors the smallest).
    let mut best: Option<(f64, Background)> = None;
    for _ in 0..ROUNDS {
        let (s8, s64) = (tail_of(&sim(bg, j8)?), tail_of(&sim(bg, j64)?));
        let err = |s: Tail, r: Tail| (s.spread_ns / r.spread_ns - 1.0).abs();
        let worst = err(s8, real8).max(err(s64, real64));
        if best.is_none_or(|(e, _)| worst < e) {
            best = Some((worst, bg));
        }
        if worst < CLOSE {
            break;
        }
        if !bg.enabled() {
            // after round 0: the first estimate by hand
            bg = background(rate0, stall0, busy);
            continue;
        }
        let at = |s: Tail, r: Tail| Tail {
            window_ns: r.window_ns,
            spread_ns: s.spread_ns,
        };
        match invert(at(s8, real8), at(s64, real64)) {
            Some((sr, ss)) => {
                rate *= rate0 / sr;
                stall *= stall0 / ss;
            }
            // the model's spread does not grow enough: longer stalls
            None if s64.spread_ns > 0.0 => stall *= real64.spread_ns / s64.spread_ns,
            None => break,
        }
        let next = background(rate, stall, busy);
        if next == bg {
            break;
        }
        bg = next;
    }
    let (worst, bg) = best.expect("one round at least");
    if !bg.enabled() {
        let why = if worst < CLOSE {
            "the model without it has them"
        } else {
            // a loaded host's milliseconds at QD64 beside microseconds at
            // QD8: other work, but not stalls of one size and rate
            "no stalls of the busy CPUs came closer to them than none"
        };
        notes.push(format!(
            "no background work: {id8}'s and {id64}'s clat spreads (p99 − mean {:.1} and {:.1} µs): {why} (the worse of the two off by {:.1} % on the model)",
            real8.spread_ns / 1e3,
            real64.spread_ns / 1e3,
            worst * 100.0
        ));
        return Ok(None);
    }
    notes.push(format!(
        "background work: stall_interval_ns = {} and stall_ns = {} (exponential) per CPU: {id8}'s and {id64}'s clat p99 − mean {:.1} and {:.1} µs at mean {:.1} and {:.1} µs, stalls of the busy CPUs (first estimate by hand: {:.0} and {:.0}; then by simulation, spreads within {:.1} %)",
        bg.interval_ns,
        bg.stall_ns,
        real8.spread_ns / 1e3,
        real64.spread_ns / 1e3,
        real8.window_ns / 1e3,
        real64.window_ns / 1e3,
        busy as f64 / rate0,
        stall0,
        worst * 100.0,
    ));
    Ok(Some(bg))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The quiet tmpfs loop's QD8 and QD64 (the figures in the module
    /// comment) invert to the rate and stall derived there by hand.
    #[test]
    fn the_quiet_tails_invert_to_stalls_of_67_us_every_3_ms() {
        let q8 = Tail {
            window_ns: 35_100.0,
            spread_ns: 89_600.0 - 35_100.0,
        };
        let q64 = Tail {
            window_ns: 230_200.0,
            spread_ns: 399_400.0 - 230_200.0,
        };
        let (rate, stall) = invert(q8, q64).unwrap();
        let bg = background(rate, stall, 2);
        // by hand: λ = 1/3 ms per CPU, 2 CPUs: p8 = 1 − e^(−2 × 35.1 / 3000)
        // = 0.0231, ln(2.31) − 0.023 = 0.814; p64 = 0.142, ln(14.2) − 0.142
        // = 2.51; 2.51 / 0.814 = 3.08 ≈ 169.2 / 54.5 = 3.10; S = 54.5 /
        // 0.814 = 67 µs
        assert!((2_800_000..3_200_000).contains(&bg.interval_ns), "{bg:?}");
        assert!((64_000..70_000).contains(&bg.stall_ns), "{bg:?}");
        // and the formula gives back the spreads
        for t in [q8, q64] {
            let s = stall * spread_per_stall_ns(rate, t.window_ns).unwrap();
            assert!((s / t.spread_ns - 1.0).abs() < 1e-6);
        }
    }

    #[test]
    fn spreads_that_do_not_grow_with_depth_are_not_stalls() {
        let t = |w: f64, s: f64| Tail {
            window_ns: w,
            spread_ns: s,
        };
        assert!(invert(t(35e3, 50e3), t(230e3, 50e3)).is_none(), "flat");
        assert!(invert(t(35e3, 50e3), t(230e3, 40e3)).is_none(), "falls");
        assert!(invert(t(35e3, 0.0), t(230e3, 40e3)).is_none(), "none");
        // a spread growing faster than any stall rate allows
        assert!(invert(t(35e3, 1e3), t(230e3, 900e3)).is_none(), "too steep");
        // the legal range: at most half a CPU, at least 10 µs apart
        let b = background(1.0, 1e9, 2);
        assert!(b.check().is_ok(), "{b:?}");
    }
}
