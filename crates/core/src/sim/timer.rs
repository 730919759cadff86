//! The kernel's timer wheel (kernel/time/timer.c since v4.8), as every
//! jiffies timer of the model sees it: blk-throttle's pending timer
//! (`throtl_schedule_pending_timer`), blk-iocost's period timer
//! (`ioc_start_period`), and any later `timer_list` user. hrtimers
//! (iocost's waitq timer, BFQ's idle timer) do not go through here.
//!
//! Two facts shape when such a timer runs:
//! - arming converts a duration to jiffies rounding *up*
//!   (`usecs_to_jiffies`, `msecs_to_jiffies`), so a 7 ms period at HZ=250
//!   asks for 2 jiffies;
//! - the wheel never fires early, so each level rounds the expiry up by one
//!   unit of its granularity (`calc_index`): a timer for jiffy J runs in the
//!   softirq of tick J + 1, and from 63 jiffies ahead on in an 8-, 64-,
//!   512-… jiffy bucket.

use crate::sim::time::{Hz, Ns};

/// The jiffy whose tick runs a timer armed at jiffy `now` for `expires`
/// (`calc_wheel_index` / `calc_index`). An expiry already reached goes into
/// the bucket of the wheel's clock and runs at the next tick. The wheel clock
/// is taken as `now + 1`: the softirq of the current tick has run, so
/// `base->clk` has moved past it.
pub fn wheel_expiry(now: u64, expires: u64) -> u64 {
    let clk = now + 1;
    if expires < clk {
        return clk;
    }
    let delta = expires - clk;
    let mut lvl = 0u32;
    while lvl < 8 && delta >= (63u64 << (3 * lvl)) {
        lvl += 1;
    }
    let sh = 3 * lvl;
    ((expires >> sh) + 1) << sh
}

/// `usecs_to_jiffies`: rounds up (include/linux/jiffies.h).
pub fn usecs_to_jiffies(hz: Hz, us: u64) -> u64 {
    (us * hz.0 as u64).div_ceil(1_000_000)
}

/// The instant (ns) a `timer_list` armed at `now_ns` with
/// `expires = jiffies + delta_jiffies` (`mod_timer`/`add_timer`) runs.
pub fn fires_at(hz: Hz, now_ns: Ns, delta_jiffies: u64) -> Ns {
    let now = hz.jiffies(now_ns);
    hz.jiffy_start(wheel_expiry(now, now + delta_jiffies))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timer_wheel_granularity() {
        assert_eq!(wheel_expiry(100, 100), 101); // a past or current expiry fires at the next tick
        assert_eq!(wheel_expiry(100, 50), 101);
        assert_eq!(wheel_expiry(100, 101), 102); // level 0 rounds up by one jiffy
        assert_eq!(wheel_expiry(0, 23), 24);
        assert_eq!(wheel_expiry(0, 63), 64); // delta 62 from clk 1: level 0
        assert_eq!(wheel_expiry(0, 64), 72); // delta 63: level 1, 8-jiffy buckets
        assert_eq!(wheel_expiry(0, 800), 832); // 8-slice cap at HZ=1000, S=100: level 2
        assert_eq!(wheel_expiry(832, 1000), 1008);
    }

    /// blk-iocost's period timer: `jiffies + usecs_to_jiffies(period_us)`,
    /// then the J+1 rule. Armed from the timer's own softirq (at a tick
    /// boundary), one period is (usecs_to_jiffies + 1) jiffies long.
    #[test]
    fn iocost_period_lengths_at_hz_100_250_1000() {
        // (HZ, period_us, period in ns armed at a tick boundary)
        for (hz, period_us, want_ms) in [
            (250, 7_000, 12),       // seed 000's qos: 2 jiffies + 1 = 12 ms
            (250, 10_000, 16),      // rlat 5 ms at p95: 3 + 1 jiffies
            (250, 8_000, 12),       // exactly 2 jiffies: still one more
            (100, 10_000, 20),      // 1 + 1 jiffies of 10 ms
            (1000, 7_000, 8),       // 7 + 1 jiffies of 1 ms
            (1000, 1_000, 2),       // MIN_PERIOD: 1 + 1
            (250, 1_000_000, 1024), // MAX_PERIOD: 250 jiffies ahead is level 1: an 8-jiffy bucket
        ] {
            let hz = Hz(hz);
            let j = usecs_to_jiffies(hz, period_us);
            let start = hz.jiffy_start(40);
            let got = fires_at(hz, start, j) - start;
            assert_eq!(
                got,
                want_ms * 1_000_000,
                "HZ={} period {period_us} us",
                hz.0
            );
        }
        // armed mid-tick, it still fires on a tick boundary
        let hz = Hz(250);
        let t = fires_at(hz, 1_000_000, 2);
        assert_eq!(t, 12_000_000);
    }
}
