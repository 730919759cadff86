//! Service slots: choosing the queue in service (`bfq_select_queue`,
//! `bfq_set_in_service_queue`), ending its slot (`bfq_bfqq_expire`,
//! `__bfq_bfqq_expire`), budget feedback (`__bfq_bfqq_recalc_budget`), the
//! budget timeout (`bfq_set_budget_timeout`, `bfq_bfqq_budget_timeout`,
//! `bfq_may_expire_for_budg_timeout`) and time charging of slow queues
//! (`bfq_bfqq_is_slow`, `bfq_bfqq_charge_time`).

use super::*;
use crate::sim::time::{time_before, NSEC_PER_MSEC, NSEC_PER_USEC};

/// `bfq_stats_min_budgets`: budgets assigned before the autotuned maximum
/// is trusted.
const STATS_MIN_BUDGETS: u32 = 194;
/// `BFQ_MIN_TT`: 2 ms.
pub const MIN_TT_NS: u64 = 2 * NSEC_PER_MSEC;

/// `enum bfqq_expiration`
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    TooIdle,
    BudgetTimeout,
    BudgetExhausted,
    NoMoreRequests,
    Preempted,
}

/// Dispatched-request sizes for Yu Kuai's 2021 "consider request size in
/// bfq_asymmetric_scenario()" (never merged): how many requests of the
/// current size were dispatched in a row, and since when.
#[derive(Clone, Copy, Debug, Default)]
pub struct SameSize {
    pub sectors: u64,
    pub count: u64,
    pub since: Ns,
}

impl SameSize {
    pub fn dispatched(&mut self, sectors: u64, now: Ns) {
        if sectors == self.sectors {
            self.count += 1;
        } else {
            self.sectors = sectors;
            self.count = 1;
            self.since = now;
        }
    }
    /// `VARIED_REQUEST_SIZE`: fewer than 1024 same-size dispatches, or for
    /// less than a second (HZ).
    pub fn varied(&self, now: Ns) -> bool {
        self.count < 1024 || now < self.since + crate::sim::time::NSEC_PER_SEC
    }
}

impl Bfq {
    /// `bfq_max_budget`: the default until enough budgets were assigned.
    pub(super) fn bfq_max_budget(&self) -> u64 {
        if self.budgets_assigned < STATS_MIN_BUDGETS {
            DEFAULT_MAX_BUDGET
        } else {
            self.max_budget
        }
    }

    /// `bfq_min_budget`
    fn min_budget(&self) -> u64 {
        if self.budgets_assigned < STATS_MIN_BUDGETS {
            DEFAULT_MAX_BUDGET / 32
        } else {
            self.max_budget / 32
        }
    }

    /// `bfq_calc_max_budget`: what the estimated peak rate transfers in one
    /// budget timeout.
    pub(super) fn calc_max_budget(&self) -> u64 {
        let timeout_ms = (self.timeout_jiffies() * 1000).div_ceil(self.hz.0 as u64);
        (self.peak.rate * 1000 * timeout_ms) >> peak_rate::RATE_SHIFT
    }

    /// `bfq_bfqq_budget_timeout`
    pub(super) fn budget_timeout(&self, q: u32) -> bool {
        !time_before(self.jiffies(), self.queues[q as usize].budget_timeout)
    }

    /// `bfq_may_expire_for_budg_timeout`
    pub(super) fn may_expire_for_budg_timeout(&self, q: u32) -> bool {
        let qq = &self.queues[q as usize];
        let e = &self.w.ents[qq.ent as usize];
        (!qq.wait_request || self.w.budget_left(qq.ent) >= e.budget / 3) && self.budget_timeout(q)
    }

    /// `__bfq_set_in_service_queue` (+ `bfq_set_budget_timeout`).
    fn set_in_service(&mut self) -> Option<u32> {
        let jiffies = self.jiffies();
        let ent = self.w.select(jiffies)?;
        let q = match self.w.ents[ent as usize].owner {
            wf2q::Owner::Queue(q) => q,
            wf2q::Owner::Group(_) => unreachable!("select returns a queue"),
        };
        debug_assert!(
            self.queues[q as usize].busy,
            "bfq: selected queue {q} is not busy"
        );
        self.budgets_assigned = (self.budgets_assigned * 7 + 256) / 8;
        let timeout = self.timeout_jiffies();
        let qq = &mut self.queues[q as usize];
        qq.fifo_expire_checked = false;
        qq.wait_request = false;
        let coeff = if qq.wr_coeff > 1 {
            (self.w.ents[qq.ent as usize].weight / qq.orig_weight.max(1)).max(1) as u64
        } else {
            1
        };
        qq.budget_timeout = jiffies + timeout * coeff;
        self.last_budget_start = self.now;
        self.in_service = Some(q);
        Some(q)
    }

    /// `bfq_select_queue`: keep the queue in service while it has budget
    /// and requests, or while idling for it is worth it (possibly injecting
    /// another queue's request); else end its slot and pick the next.
    pub(super) fn select_queue(&mut self, reqs: &Slab<Request>) -> Option<u32> {
        let mut q = match self.in_service {
            Some(q) => q,
            None => self.set_in_service()?,
        };
        if self.may_expire_for_budg_timeout(q) && !self.must_idle(q) {
            self.expire(q, false, Reason::BudgetTimeout);
            q = self.set_in_service()?;
        }
        // Each pass either returns or expires a queue; bound it anyway.
        for _ in 0..=self.queues.len() {
            if let Some(n) = self.queues[q as usize].next_rq {
                let charge = self.serv_to_charge(reqs.get(n).sectors(), q);
                let ent = self.queues[q as usize].ent;
                if charge > self.w.budget_left(ent) {
                    self.expire(q, false, Reason::BudgetExhausted);
                } else {
                    if self.queues[q as usize].wait_request {
                        self.queues[q as usize].wait_request = false;
                        self.idle_timer = None;
                    }
                    return Some(q);
                }
            } else {
                let qq = &self.queues[q as usize];
                if qq.wait_request || (qq.dispatched != 0 && self.better_to_idle(q)) {
                    let qq = &self.queues[q as usize];
                    let may_inject = !self.idling_boosts_thr_without_issues(q)
                        && (qq.wr_coeff == 1 || self.wr_busy_queues > 1 || !qq.has_short_ttime);
                    return if may_inject {
                        self.choose_for_injection(reqs)
                    } else {
                        None
                    };
                }
                self.expire(q, false, Reason::NoMoreRequests);
            }
            q = self.set_in_service()?;
        }
        None
    }

    /// `bfq_bfqq_expire`: end the slot of the queue in service.
    pub(super) fn expire(&mut self, q: u32, compensate: bool, reason: Reason) {
        let (slow, delta_ms) = self.is_slow(q, compensate);
        let ent = self.queues[q as usize].ent;
        let (budget, service) = {
            let e = &self.w.ents[ent as usize];
            (e.budget, e.service)
        };
        if self.queues[q as usize].wr_coeff == 1
            && (slow || (reason == Reason::BudgetTimeout && self.w.budget_left(ent) >= budget / 3))
        {
            self.charge_time(q, delta_ms);
        }
        if reason == Reason::TooIdle && service <= 2 * budget / 10 {
            self.queues[q as usize].io_bound = false;
        }
        if self.t.low_latency && self.queues[q as usize].wr_coeff == 1 {
            self.queues[q as usize].last_wr_start_finish = self.jiffies();
        }
        self.rqs_injected = false;
        self.wait_dispatch = false;
        self.waited_rq = None;
        let new_budget = self.recalc_budget(q, reason);
        // __bfq_bfqq_expire
        self.in_service = None;
        self.queues[q as usize].wait_request = false;
        self.idle_timer = None;
        let empty = self.queues[q as usize].queued() == 0;
        if empty && !(reason == Reason::Preempted && self.idling_needed_for_service_guarantees(q)) {
            self.del_busy(q, true);
        } else {
            let b = new_budget.unwrap_or(self.w.ents[ent as usize].budget);
            self.w.expire(ent, Some(b));
        }
    }

    /// `__bfq_bfqq_recalc_budget`: the next budget of a sync queue from how
    /// its slot ended; async queues get the maximum. Returns the entity's
    /// new budget if the queue still has a request.
    fn recalc_budget(&mut self, q: u32, reason: Reason) -> Option<u64> {
        let min_budget = self.min_budget();
        let max = self.max_budget;
        let qq = &self.queues[q as usize];
        let ent = qq.ent;
        let service = self.w.ents[ent as usize].service;
        let mut budget = if qq.wr_coeff == 1 {
            qq.max_budget
        } else {
            2 * min_budget
        };
        if qq.sync && qq.wr_coeff == 1 {
            budget = match reason {
                Reason::TooIdle => {
                    if qq.dispatched > 0 {
                        (budget * 2).min(max)
                    } else if budget > 5 * min_budget {
                        budget - 4 * min_budget
                    } else {
                        min_budget
                    }
                }
                Reason::BudgetTimeout => (budget * 2).min(max),
                Reason::BudgetExhausted => (budget * 4).min(max),
                Reason::NoMoreRequests => service.max(min_budget),
                Reason::Preempted => return self.next_budget(q),
            };
        } else if !qq.sync {
            budget = max;
        }
        let qq = &mut self.queues[q as usize];
        qq.max_budget = budget;
        if self.budgets_assigned >= STATS_MIN_BUDGETS && self.t.user_max_budget == 0 {
            qq.max_budget = qq.max_budget.min(max);
        }
        self.next_budget(q)
    }

    /// The budget for the queue's next request: at least its cost.
    fn next_budget(&self, q: u32) -> Option<u64> {
        let qq = &self.queues[q as usize];
        let n = qq.next_rq?;
        let charge = self.serv_to_charge(self.rq(n).sectors, q);
        Some(qq.max_budget.max(charge))
    }

    /// `bfq_bfqq_is_slow`: whether the queue used its slot slowly (over
    /// 20 ms, less than half the maximum budget; shorter slots fall back
    /// on seekiness), and for how long it held the device, in ms.
    fn is_slow(&self, q: u32, compensate: bool) -> (bool, u64) {
        let qq = &self.queues[q as usize];
        let mut slow = qq.seeky();
        if !qq.sync {
            return (false, 0);
        }
        let end = if compensate {
            self.last_idling_start
        } else {
            self.now
        };
        let delta_us = end.saturating_sub(self.last_budget_start) / NSEC_PER_USEC;
        if delta_us < 1000 {
            let ms = if self.nonrot {
                MIN_TT_NS / NSEC_PER_MSEC
            } else {
                self.t.slice_idle_ns / NSEC_PER_MSEC
            };
            return (slow, ms);
        }
        if delta_us > 20_000 {
            slow = self.w.ents[qq.ent as usize].service < self.max_budget / 2;
        }
        (slow, delta_us / 1000)
    }

    /// `bfq_bfqq_charge_time`: charge the share of the maximum budget
    /// that the time held is of the budget timeout, if that is more than
    /// the service received.
    fn charge_time(&mut self, q: u32, time_ms: u64) {
        let timeout_ms = ((self.timeout_jiffies() * 1000).div_ceil(self.hz.0 as u64)).max(1);
        let bounded = time_ms.min(timeout_ms);
        let for_time = self.max_budget * bounded / timeout_ms;
        let ent = self.queues[q as usize].ent;
        let (service, budget) = {
            let e = &self.w.ents[ent as usize];
            (e.service, e.budget)
        };
        let tot = for_time.max(service);
        if tot > budget {
            self.w.ents[ent as usize].budget = tot;
        }
        self.w.served(ent, tot - service);
    }
}
