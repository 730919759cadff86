//! The loop worker's CPU per request from the quiet-submit probe's
//! scheduler trace, for `--sim-costs measured` (issue 13): the guest's
//! kworker time per request less what the model charges apart from
//! `worker_ns` (docs/fidelity/guest-slat.md, "The loop worker's cost").
//!
//! In the probe's window (4 jobs × QD8 on one tmpfs loop device, one vCPU)
//! the kworkers' CPU is the loop work function's time (`Split::loop_ns`:
//! `loop_workfn` on 6.1, `loop_rootcg_workfn` on 6.12) plus every kworker's
//! time outside a work function (`Split::kworker_other_ns`; on the 6.1
//! guests the loop worker's one item spans the whole window, so all its
//! time is there). The guest counts in that runtime two things the model
//! charges apart from the worker's `worker_ns`:
//! - the waker's side of each fio wake-up the kworker makes (a completion
//!   waking its submitter): the model's `[host] waker_ns`, 2 µs in the
//!   guest expression (`guest_costs::GUEST_WAKER_NS`), times
//!   `Split::fio_woken_by_kworker`;
//! - each switch to a kworker, its wake-up run or its resumption after fio
//!   preempted it (`sum_exec_runtime` runs from the pick): the model holds
//!   the CPU `wake_ns` (3 µs, `DEFAULT_WAKE_NS`) at every assign
//!   (`Cpus::assign`), times `Split::kworker_switch_ins`.
//!
//! Simplified: the switch-ins are every kworker's, as the time outside work
//! is (the trace cannot name the 6.1 loop worker, which starts no item in
//! the window); the other kworkers (kblockd, vmstat) switch in a few dozen
//! times in thousands of requests. The subtraction takes the guest
//! expression's `waker_ns` even when `--sim-waker` changes the scenario's.

use crate::guest_costs::GUEST_WAKER_NS;
use blklab_core::sim::host_cpus::DEFAULT_WAKE_NS;

/// Below this the derived worker cost is refused: a tmpfs loop's 4k copy
/// and its bio completion cannot take less, and a figure this small means
/// the trace's counts are not what the derivation assumes.
pub const MIN_LOOP_WORKER_NS: u64 = 500;

/// The quiet-submit probe's trace figures the loop worker's cost comes
/// from (whole window, not per request; vm/sched_trace.rs
/// `Split::quiet_kworkers` takes them from the trace's split).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuietKworkers {
    /// Requests issued on the probe's device (`Split::ios`).
    pub ios: u64,
    /// `Split::loop_ns` + `Split::kworker_other_ns`.
    pub kworker_ns: u64,
    /// `Split::fio_woken_by_kworker`.
    pub fio_wakes: u64,
    /// `Split::kworker_switch_ins`.
    pub switch_ins: u64,
}

impl QuietKworkers {
    /// The model's charges the guest counts in the kworkers' runtime (ns,
    /// whole window): `waker_ns` per fio wake-up, `wake_ns` per switch-in.
    pub fn charged_apart_ns(&self) -> u64 {
        GUEST_WAKER_NS * self.fio_wakes + DEFAULT_WAKE_NS * self.switch_ins
    }

    /// The loop worker's `worker_ns` (per request, per level), or why the
    /// trace gives none.
    pub fn worker_ns(&self) -> Result<u64, String> {
        if self.ios == 0 {
            return Err("no request in its traced window".into());
        }
        let per_io = |ns: u64| ns as f64 / self.ios as f64 / 1000.0;
        let left = self.kworker_ns.saturating_sub(self.charged_apart_ns());
        let ns = (left + self.ios / 2) / self.ios;
        if ns < MIN_LOOP_WORKER_NS {
            return Err(format!(
                "its kworkers' {:.2} µs of CPU per request less {:.2} fio wake-ups × {:.1} µs and {:.2} switch-ins × {:.1} µs leave {:.2} µs for the loop worker, below {:.1} µs",
                per_io(self.kworker_ns),
                self.fio_wakes as f64 / self.ios as f64,
                GUEST_WAKER_NS as f64 / 1000.0,
                self.switch_ins as f64 / self.ios as f64,
                DEFAULT_WAKE_NS as f64 / 1000.0,
                ns as f64 / 1000.0,
                MIN_LOOP_WORKER_NS as f64 / 1000.0
            ));
        }
        Ok(ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// debian-6.1's shape: 1000 requests, the worker's 7.9 µs per request
    /// all outside work (its item spans the window), one fio wake-up and
    /// one switch-in per request.
    fn six_one() -> QuietKworkers {
        QuietKworkers {
            ios: 1000,
            kworker_ns: 7_900_000,
            fio_wakes: 1000,
            switch_ins: 1000,
        }
    }

    #[test]
    fn the_worker_is_the_kworker_time_less_the_wakes_and_switches_charged_apart() {
        let q = six_one();
        // 7.9 - 1 x 2 (waker) - 1 x 3 (switch-in)
        assert_eq!(q.worker_ns(), Ok(2_900));
        // each subtraction counts on its own
        let fewer_wakes = QuietKworkers {
            fio_wakes: 500,
            ..q
        };
        assert_eq!(fewer_wakes.worker_ns(), Ok(2_900 + GUEST_WAKER_NS / 2));
        let fewer_switches = QuietKworkers {
            switch_ins: 100,
            ..q
        };
        assert_eq!(
            fewer_switches.worker_ns(),
            Ok(2_900 + DEFAULT_WAKE_NS * 9 / 10)
        );
        // rounded to the nearest ns per request
        let odd = QuietKworkers {
            kworker_ns: 7_900_600,
            ..q
        };
        assert_eq!(odd.worker_ns(), Ok(2_901));
    }

    #[test]
    fn a_worker_below_the_floor_or_no_request_is_refused() {
        let e = QuietKworkers {
            ios: 0,
            ..six_one()
        }
        .worker_ns()
        .unwrap_err();
        assert!(e.contains("no request"), "{e}");
        // 5.4 µs: 0.4 left
        let e = QuietKworkers {
            kworker_ns: 5_400_000,
            ..six_one()
        }
        .worker_ns()
        .unwrap_err();
        assert!(
            e.contains("leave 0.40 µs for the loop worker, below 0.5 µs"),
            "{e}"
        );
        // more charged apart than the kworkers ran: nothing left
        let e = QuietKworkers {
            kworker_ns: 1_000_000,
            ..six_one()
        }
        .worker_ns()
        .unwrap_err();
        assert!(e.contains("leave 0.00 µs"), "{e}");
        // at the floor it is taken
        let at = QuietKworkers {
            kworker_ns: 5_500_000,
            ..six_one()
        };
        assert_eq!(at.worker_ns(), Ok(MIN_LOOP_WORKER_NS));
    }
}
