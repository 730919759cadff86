//! null_blk (drivers/block/null_blk/main.c): every request completes a fixed
//! time after the driver accepts it (`irqmode=2`, `completion_nsec`), or at once
//! (`irqmode=0` inline, `irqmode=1` softirq), optionally behind the driver's
//! `mbps` bandwidth cap.
//!
//! Parameters (the TOML keys of `[device.model]` with `kind = "nullb"`):
//! * `completion_nsec` (ns, default 10 000): the per-command hrtimer of `irqmode=2`.
//! * `irqmode` (default 2): 0 = none (complete in `queue_rq`), 1 = softirq,
//!   2 = timer. 0 and 1 both complete at the dispatch instant here (the softirq
//!   runs a few µs later on a real host; that delay is not modelled).
//! * `hw_queue_depth` (default 64): the driver tag depth.
//! * `mbps` (MiB/s, default 0 = no cap): the bandwidth cap, modelled exactly as
//!   the driver implements it (see [`BwCap`]).
//!
//! Not modelled: memory backing, zoning, bad blocks, fault injection, poll queues,
//! several submit queues (the cap is per device in the driver too).

use serde::Deserialize;

use super::DeviceModel;
use crate::block::bio::Op;
use crate::sim::time::{Ns, NSEC_PER_SEC};

/// null_blk's `TICKS_PER_SEC`: the bandwidth timer fires 50 times a second.
pub const TICKS_PER_SEC: u64 = 50;
/// null_blk's `TIMER_INTERVAL`: 20 ms between budget refills.
pub const TIMER_INTERVAL_NS: Ns = NSEC_PER_SEC / TICKS_PER_SEC;

/// `mb_per_tick(mbps)`: the byte budget of one tick. Integer arithmetic as in the
/// driver: (1 MiB / 50) is truncated to 20 971 before the multiplication, so
/// mbps=4 gives 83 884 bytes per 20 ms.
pub fn mb_per_tick(mbps: u32) -> u64 {
    ((1u64 << 20) / TICKS_PER_SEC) * mbps as u64
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NullbSpec {
    /// null_blk `completion_nsec` (default 10 000 ns).
    #[serde(default = "default_completion_nsec")]
    pub completion_nsec: u64,
    /// null_blk `irqmode`: 0 = none, 1 = softirq, 2 = timer after completion_nsec.
    #[serde(default = "default_irqmode")]
    pub irqmode: u32,
    /// null_blk `hw_queue_depth` (default 64).
    #[serde(default = "default_hw_queue_depth")]
    pub hw_queue_depth: u32,
    /// null_blk `mbps`: bandwidth cap in MiB/s, 0 = none (default).
    #[serde(default)]
    pub mbps: u32,
}

fn default_completion_nsec() -> u64 {
    10_000
}
fn default_irqmode() -> u32 {
    2
}
fn default_hw_queue_depth() -> u32 {
    64
}

impl Default for NullbSpec {
    fn default() -> Self {
        NullbSpec {
            completion_nsec: default_completion_nsec(),
            irqmode: default_irqmode(),
            hw_queue_depth: default_hw_queue_depth(),
            mbps: 0,
        }
    }
}

/// The `mbps` cap: `nullb->cur_bytes`, the `bw_timer` hrtimer and the stopped
/// state of the hardware queues, as `null_handle_throttled` and
/// `nullb_bwtimer_fn` drive them.
///
/// * The timer is started when the device is set up (time 0 here) and fires
///   every 20 ms. Each firing resets the budget to `mb_per_tick` (a reset, not an
///   addition: unused budget and debt are both forgotten) and restarts stopped
///   queues; if the budget was untouched since the last firing, the timer stops
///   instead.
/// * Each dispatch (`queue_rq`) first re-arms a stopped timer with
///   `hrtimer_restart`, which keeps the old (past) expiry, so the timer fires at
///   once: the first request after an idle tick therefore gets a fresh budget
///   right after it is charged, and the tick grid stays phase-locked to the
///   device's setup time (`hrtimer_forward_now`).
/// * The request's bytes are subtracted; if the budget went negative the queues
///   are stopped and the request is requeued (`BLK_STS_DEV_RESOURCE`) with its
///   bytes still charged. It is dispatched again, first in line, when the next
///   firing restarts the queues, and charged again.
pub struct BwCap {
    per_tick: i64,
    cur_bytes: i64,
    timer_active: bool,
    /// The timer's expiry: the next firing while active, the last one while stopped.
    expires: Ns,
    /// `blk_mq_stop_hw_queues` was called and no firing has restarted them yet.
    stopped: bool,
    /// Dispatch instant of the previous request (dispatch is in order).
    last_dispatch: Ns,
}

impl BwCap {
    pub fn new(mbps: u32) -> BwCap {
        let per_tick = mb_per_tick(mbps) as i64;
        BwCap {
            per_tick,
            cur_bytes: per_tick,
            timer_active: true,
            expires: TIMER_INTERVAL_NS,
            stopped: false,
            last_dispatch: 0,
        }
    }

    /// `nullb_bwtimer_fn` running at `now` (≥ its expiry).
    fn fire(&mut self, now: Ns) {
        if self.cur_bytes == self.per_tick {
            // HRTIMER_NORESTART: the expiry stays where it was.
            self.timer_active = false;
            return;
        }
        self.cur_bytes = self.per_tick;
        self.stopped = false;
        // hrtimer_forward_now: whole intervals until the expiry is after now.
        if self.expires <= now {
            let k = (now - self.expires) / TIMER_INTERVAL_NS + 1;
            self.expires += k * TIMER_INTERVAL_NS;
        }
    }

    /// Run the timer firings due at or before `t` (a firing at exactly `t` comes
    /// before a dispatch at `t`).
    fn run_until(&mut self, t: Ns) {
        while self.timer_active && self.expires <= t {
            let at = self.expires;
            self.fire(at);
        }
    }

    /// The instant at which a request of `bytes` offered to the driver at `now`
    /// is accepted (`blk_mq_start_request`), after any requeues.
    pub fn dispatch(&mut self, now: Ns, bytes: u32) -> Ns {
        let bytes = bytes as i64;
        let mut t = now.max(self.last_dispatch);
        loop {
            self.run_until(t);
            if self.stopped {
                // Held on the dispatch list until the next firing restarts the queue.
                debug_assert!(self.timer_active);
                t = self.expires;
                continue;
            }
            let rearm = !self.timer_active;
            if rearm {
                self.timer_active = true;
            }
            let full_before = self.cur_bytes == self.per_tick;
            self.cur_bytes -= bytes;
            // Deviation: the driver would requeue a request larger than one tick's
            // budget forever (the refill resets to mb_per_tick, never above). Such a
            // request is let through when it finds a full budget instead.
            let ok = self.cur_bytes >= 0 || (bytes > self.per_tick && full_before);
            if !ok {
                self.stopped = true;
            }
            if rearm {
                // The re-armed timer's expiry is in the past: it fires right away,
                // after this request has been charged.
                self.fire(t);
            }
            if ok {
                self.last_dispatch = t;
                return t;
            }
            // Requeued. If the immediate firing restarted the queue, retry at t;
            // otherwise wait for the next firing (top of the loop).
        }
    }

    pub fn per_tick(&self) -> u64 {
        self.per_tick as u64
    }
}

pub struct Nullb {
    spec: NullbSpec,
    cap: Option<BwCap>,
}

impl Nullb {
    pub fn new(spec: &NullbSpec) -> Result<Nullb, String> {
        if spec.irqmode > 2 {
            return Err(format!(
                "nullb irqmode={} is invalid (0 = none, 1 = softirq, 2 = timer)",
                spec.irqmode
            ));
        }
        if spec.hw_queue_depth == 0 {
            return Err("nullb hw_queue_depth must be at least 1".into());
        }
        let cap = if spec.mbps > 0 {
            Some(BwCap::new(spec.mbps))
        } else {
            None
        };
        Ok(Nullb {
            spec: spec.clone(),
            cap,
        })
    }
}

impl DeviceModel for Nullb {
    fn kind(&self) -> &'static str {
        "nullb"
    }
    fn default_queue_depth(&self) -> u32 {
        self.spec.hw_queue_depth
    }
    fn issue(&mut self, now: Ns, _op: Op, _sector: u64, bytes: u32) -> Ns {
        let start = match &mut self.cap {
            Some(cap) => cap.dispatch(now, bytes),
            None => now,
        };
        if self.spec.irqmode == 2 {
            start + self.spec.completion_nsec
        } else {
            start
        }
    }
    fn describe(&self) -> String {
        format!(
            "nullb completion_nsec={} irqmode={} hw_queue_depth={} mbps={}",
            self.spec.completion_nsec, self.spec.irqmode, self.spec.hw_queue_depth, self.spec.mbps
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::time::NSEC_PER_MSEC;

    fn capped(mbps: u32) -> Nullb {
        Nullb::new(&NullbSpec {
            mbps,
            ..NullbSpec::default()
        })
        .unwrap()
    }

    #[test]
    fn budget_per_tick_is_the_drivers_integer_value() {
        assert_eq!(mb_per_tick(4), 83_884);
        assert_eq!(mb_per_tick(1), 20_971);
        assert_eq!(TIMER_INTERVAL_NS, 20 * NSEC_PER_MSEC);
    }

    #[test]
    fn no_cap_completes_after_completion_nsec() {
        let mut d = Nullb::new(&NullbSpec::default()).unwrap();
        assert_eq!(d.issue(5, Op::Read, 0, 1 << 20), 10_005);
        let mut d0 = Nullb::new(&NullbSpec {
            irqmode: 0,
            ..NullbSpec::default()
        })
        .unwrap();
        assert_eq!(d0.issue(5, Op::Read, 0, 4096), 5);
        let mut d1 = Nullb::new(&NullbSpec {
            irqmode: 1,
            ..NullbSpec::default()
        })
        .unwrap();
        assert_eq!(d1.issue(7, Op::Write, 0, 4096), 7);
    }

    #[test]
    fn mbps4_paces_4k_requests_twenty_per_tick() {
        // 83 884 bytes per tick: 20 × 4096 = 81 920 fit, the 21st goes negative,
        // is requeued and goes out at the next 20 ms firing.
        let mut d = capped(4);
        let c: Vec<Ns> = (0..65).map(|_| d.issue(0, Op::Read, 0, 4096)).collect();
        for (i, &ci) in c.iter().enumerate() {
            let tick = (i / 20) as u64;
            assert_eq!(ci, tick * TIMER_INTERVAL_NS + 10_000, "request {i}");
        }
        // 1000 IOPS, not 1024: the partial budget the failing request charged is lost.
    }

    #[test]
    fn request_arriving_while_queue_is_stopped_waits_behind_the_held_one() {
        let mut d = capped(4);
        for _ in 0..21 {
            d.issue(0, Op::Read, 0, 4096);
        }
        // Queue stopped until 20 ms; a request offered at 5 ms goes out at 20 ms.
        assert_eq!(
            d.issue(5 * NSEC_PER_MSEC, Op::Read, 0, 4096),
            20 * NSEC_PER_MSEC + 10_000
        );
    }

    #[test]
    fn timer_stops_after_an_idle_tick_and_first_request_gets_a_free_refill() {
        let mut d = capped(4);
        // One request at 0: firing at 20 ms refills (budget was touched) and re-arms
        // for 40 ms; at 40 ms the budget is untouched, the timer stops (expiry 40 ms).
        assert_eq!(d.issue(0, Op::Read, 0, 4096), 10_000);
        // At 100 ms: re-armed with the past expiry, fires at once after charging the
        // first request: 21 requests pass at 100 ms, the 22nd waits for 120 ms
        // (the grid stays 40 + k·20 ms).
        let t0 = 100 * NSEC_PER_MSEC;
        for i in 0..21 {
            assert_eq!(d.issue(t0, Op::Read, 0, 4096), t0 + 10_000, "request {i}");
        }
        assert_eq!(d.issue(t0, Op::Read, 0, 4096), 120 * NSEC_PER_MSEC + 10_000);
    }

    #[test]
    fn grid_is_phase_locked_to_setup() {
        let mut d = capped(4);
        // The 20 ms firing finds the budget untouched and stops the timer (expiry
        // stays 20 ms). A request at 30 ms re-arms it; the immediate firing
        // forwards the expiry to 40 ms, not 50 ms.
        let t = 30 * NSEC_PER_MSEC;
        for _ in 0..21 {
            d.issue(t, Op::Read, 0, 4096);
        }
        // 22nd: 21 passed (free refill after the first), so this one is held to 40 ms.
        assert_eq!(d.issue(t, Op::Read, 0, 4096), 40 * NSEC_PER_MSEC + 10_000);
    }

    #[test]
    fn riops_100_with_4k_is_not_limited_by_a_4mbps_nullb() {
        // The seed: 4k reads every 10 ms complete completion_nsec after issue.
        let mut d = capped(4);
        for i in 0..500u64 {
            let t = i * 10 * NSEC_PER_MSEC + 3;
            assert_eq!(d.issue(t, Op::Read, i * 8, 4096), t + 10_000);
        }
    }

    #[test]
    fn oversize_request_passes_on_a_full_budget() {
        // 128 KiB > 83 884 bytes: the driver would requeue it forever.
        let mut d = capped(4);
        assert_eq!(d.issue(0, Op::Read, 0, 128 << 10), 10_000);
        // The budget is negative now: the next request waits for the 20 ms refill.
        assert_eq!(d.issue(0, Op::Read, 0, 4096), 20 * NSEC_PER_MSEC + 10_000);
    }

    #[test]
    fn bad_parameters_are_rejected() {
        assert!(Nullb::new(&NullbSpec {
            irqmode: 3,
            ..NullbSpec::default()
        })
        .err()
        .unwrap()
        .contains("irqmode"));
        assert!(Nullb::new(&NullbSpec {
            hw_queue_depth: 0,
            ..NullbSpec::default()
        })
        .err()
        .unwrap()
        .contains("hw_queue_depth"));
    }
}
