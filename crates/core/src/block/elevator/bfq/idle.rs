//! Device idling and injection (block/bfq-iosched.c): the
//! symmetric/asymmetric-scenario rule (`bfq_asymmetric_scenario`), whether
//! to keep the device idle for the queue in service when it runs out of
//! requests (`bfq_better_to_idle`, `idling_boosts_thr_without_issues`,
//! `idling_needed_for_service_guarantees`), the idle-slice timer
//! (`bfq_arm_slice_timer`, `bfq_idle_slice_timer_body`), injection of other
//! queues' I/O while idling (`bfq_choose_bfqq_for_injection`,
//! `bfq_update_inject_limit`, `bfq_reset_inject_limit`) and the detection
//! of a queueing device (`bfq_update_hw_tag`).
//!
//! The asymmetric rule is versioned by two switches: `bfq.idle_groups`
//! (which groups count: commit 2d29c9f89fcd "improve asymmetric scenarios
//! detection", v4.19, makes any non-root group with pending requests
//! asymmetric; commit ed3ecc991c90 "do not idle if only one group is
//! activated", v6.2, needs two groups) and `bfq.asym_request_size` (Yu
//! Kuai's 2021 "consider request size in bfq_asymmetric_scenario()", not
//! merged: several groups are not asymmetric once 1024 same-size requests
//! were dispatched in a row over at least a second).

use super::*;
use crate::sim::time::NSEC_PER_MSEC;

/// `BFQ_HW_QUEUE_THRESHOLD`
const HW_QUEUE_THRESHOLD: u32 = 3;
/// `BFQ_HW_QUEUE_SAMPLES`
const HW_QUEUE_SAMPLES: u32 = 32;

impl Bfq {
    /// `bfq_asymmetric_scenario`: whether queues or groups are to receive
    /// different shares, so that idling is needed to keep them.
    pub(super) fn asymmetric_scenario(&self, q: Option<u32>) -> bool {
        let smallest_weight = q.is_some_and(|q| {
            let qq = &self.queues[q as usize];
            qq.pending_counted && self.weights.keys().next() == Some(&qq.orig_weight)
        });
        let varied_queue_weights = !smallest_weight && self.weights.len() >= 2;
        let b = &self.busy_queues;
        let multiple_classes_busy =
            (b[0] > 0 && b[1] > 0) || (b[0] > 0 && b[2] > 0) || (b[1] > 0 && b[2] > 0);
        let mut groups = if self.sw_groups_2018 {
            self.groups_subtree_pending > 0
        } else {
            self.groups_direct_pending > 1
        };
        if self.sw_req_size {
            groups = groups && self.same_size.varied(self.now);
        }
        varied_queue_weights || multiple_classes_busy || groups
    }

    /// `idling_boosts_thr_without_issues`: idling raises throughput for a
    /// sequential, I/O-bound queue on a device without internal queueing.
    pub(super) fn idling_boosts_thr_without_issues(&self, q: u32) -> bool {
        let qq = &self.queues[q as usize];
        let rot_without_queueing = !self.nonrot && self.hw_tag != 1;
        let seq_io_bound = !qq.seeky() && qq.io_bound && qq.has_short_ttime;
        let boosts = rot_without_queueing || ((!self.nonrot || self.hw_tag != 1) && seq_io_bound);
        boosts && self.wr_busy_queues == 0
    }

    /// `idling_needed_for_service_guarantees`
    pub(super) fn idling_needed_for_service_guarantees(&self, q: u32) -> bool {
        let qq = &self.queues[q as usize];
        let tot = self.tot_busy_queues();
        (qq.wr_coeff > 1
            && (self.wr_busy_queues < tot || self.tot_rq_in_driver >= qq.dispatched + 4))
            || self.asymmetric_scenario(Some(q))
            || tot == 1
    }

    /// `bfq_better_to_idle`
    pub(super) fn better_to_idle(&self, q: u32) -> bool {
        let qq = &self.queues[q as usize];
        if self.t.strict_guarantees {
            return true;
        }
        if self.t.slice_idle_ns == 0 || !qq.sync || qq.class == 2 {
            return false;
        }
        self.idling_boosts_thr_without_issues(q) || self.idling_needed_for_service_guarantees(q)
    }

    /// `bfq_bfqq_must_idle`
    pub(super) fn must_idle(&self, q: u32) -> bool {
        self.queues[q as usize].queued() == 0 && self.better_to_idle(q)
    }

    /// `bfq_arm_slice_timer`: wait slice_idle for the queue's next
    /// request; only `BFQ_MIN_TT` for a seeky queue in a symmetric
    /// scenario, at least 20 ms for a weight-raised one.
    pub(super) fn arm_slice_timer(&mut self, q: u32) {
        self.queues[q as usize].wait_request = true;
        let qq = &self.queues[q as usize];
        let mut sl = self.t.slice_idle_ns;
        if qq.seeky() && qq.wr_coeff == 1 && !self.asymmetric_scenario(Some(q)) {
            sl = sl.min(budget::MIN_TT_NS);
        } else if qq.wr_coeff > 1 {
            sl = sl.max(20 * NSEC_PER_MSEC);
        }
        self.last_idling_start = self.now;
        self.last_idling_start_jiffies = self.jiffies();
        self.idle_timer = Some(self.now + sl);
    }

    /// `bfq_idle_slice_timer_body`: the queue in service did not get a
    /// request in time.
    pub(super) fn idle_slice_timer(&mut self) {
        let Some(q) = self.in_service else {
            return;
        };
        self.queues[q as usize].wait_request = false;
        let reason = if self.budget_timeout(q) {
            Some(Reason::BudgetTimeout)
        } else if self.queues[q as usize].queued() == 0 {
            Some(Reason::TooIdle)
        } else {
            None
        };
        if let Some(reason) = reason {
            self.expire(q, true, reason);
        }
        self.schedule_dispatch();
    }

    /// `bfq_rq_enqueued`: a request arrived for the queue in service while
    /// it idled: stop idling (unless a small request while idling for
    /// throughput), and end its slot if its budget timed out.
    pub(super) fn rq_enqueued(&mut self, q: u32, end_sector: u64, sectors: u64) {
        self.queues[q as usize].last_request_pos = end_sector;
        if self.in_service != Some(q) || !self.queues[q as usize].wait_request {
            return;
        }
        let small_req = self.queues[q as usize].queued() == 1 && sectors < 32;
        let budget_timeout = self.budget_timeout(q);
        if small_req && self.idling_boosts_thr_without_issues(q) && !budget_timeout {
            return;
        }
        self.queues[q as usize].wait_request = false;
        self.idle_timer = None;
        if budget_timeout {
            self.expire(q, false, Reason::BudgetTimeout);
        }
    }

    /// `bfq_choose_bfqq_for_injection`: while the queue in service idles,
    /// dispatch from the first queue of `bfqd->active_list` (the one
    /// activated or requeued last first) with a request within its budget,
    /// as long as fewer than the in-service queue's `inject_limit` requests
    /// are in the drive (only one large request on a non-rotational one).
    pub(super) fn choose_for_injection(&mut self, reqs: &Slab<Request>) -> Option<u32> {
        let isq = self.in_service?;
        let (mut limit, always_inject, serv0, waiting) = {
            let q = &self.queues[isq as usize];
            (
                q.inject_limit,
                q.wr_coeff == 1 || !q.has_short_ttime,
                q.last_serv_time_ns == 0,
                q.wait_request,
            )
        };
        // The kernel adds `bfq_slice_idle`, which is in ns, to a jiffies
        // value: the limit is raised only after slice_idle_ns *jiffies* of
        // idling (hours), i.e. in practice never, since the idle timer
        // ends the idling after slice_idle. Mirrored as written.
        if limit == 0
            && serv0
            && waiting
            && self.jiffies() >= self.last_idling_start_jiffies + self.t.slice_idle_ns
        {
            limit = 1;
        }
        if self.tot_rq_in_driver >= limit {
            return None;
        }
        // The queue filed last on an active tree first (`Wf2q::active_list`);
        // the queue in service is on none.
        let chosen = self.w.active_list().iter().copied().find(|&c| {
            debug_assert!(c != isq, "bfq: the queue in service is on the active list");
            let cq = &self.queues[c as usize];
            let Some(n) = cq.next_rq else { return false };
            if !(always_inject || cq.wr_coeff > 1) {
                return false;
            }
            let sectors = reqs.get(n).sectors();
            if self.serv_to_charge(sectors, c) > self.w.budget_left(cq.ent) {
                return false;
            }
            !(self.nonrot && sectors >= queue::SECT_THR_NONROT && self.tot_rq_in_driver >= 1)
        });
        if chosen.is_some() {
            self.rqs_injected = true;
        }
        chosen
    }

    /// The sampling part of `bfq_add_request` for a sync request that is
    /// its process's only one in the scheduler or the drive (`bic->requests`
    /// <= 1): periodically reset the inject limit, and start measuring the
    /// total service time of this request when the drive is empty (or
    /// holds injected requests).
    pub(super) fn inject_sampling_on_arrival(&mut self, q: u32) {
        let j = self.jiffies();
        let (ms10, ms1000) = (self.hz.msecs_to_jiffies(10), self.hz.msecs_to_jiffies(1000));
        if j >= self.queues[q as usize].decrease_time_jif + ms1000 {
            self.reset_inject_limit(q);
        }
        let (decr, last_serv) = {
            let qq = &self.queues[q as usize];
            (qq.decrease_time_jif, qq.last_serv_time_ns)
        };
        if self.in_service == Some(q)
            && (self.tot_rq_in_driver == 0
                || (last_serv > 0 && self.rqs_injected && self.tot_rq_in_driver > 0))
            && j >= decr + ms10
        {
            self.last_empty_occupied_ns = self.now;
            self.wait_dispatch = true;
            if self.tot_rq_in_driver == 0 {
                self.rqs_injected = false;
            }
        }
    }

    /// `bfq_reset_inject_limit`: forget the base service time; the limit
    /// restarts at 0 for a queue with a short think time (whose requests
    /// injection would delay), 1 otherwise.
    pub(super) fn reset_inject_limit(&mut self, q: u32) {
        let j = self.jiffies();
        let qq = &mut self.queues[q as usize];
        qq.last_serv_time_ns = 0;
        qq.inject_limit = if qq.has_short_ttime { 0 } else { 1 };
        qq.decrease_time_jif = j;
        self.waited_rq = None;
    }

    /// `bfq_update_inject_limit`: the awaited request completed; compare
    /// its total service time with the base one measured without injection.
    pub(super) fn update_inject_limit(&mut self, q: u32) {
        let tot = self.now.saturating_sub(self.last_empty_occupied_ns);
        let j = self.jiffies();
        let in_driver = self.tot_rq_in_driver;
        let max_in_driver = self.max_rq_in_driver;
        let injected = self.rqs_injected;
        let qq = &mut self.queues[q as usize];
        let old = qq.inject_limit;
        if qq.last_serv_time_ns > 0 && injected {
            let threshold = (qq.last_serv_time_ns * 3) >> 1;
            if tot >= threshold && old > 0 {
                qq.inject_limit -= 1;
                qq.decrease_time_jif = j;
            } else if tot < threshold && old <= max_in_driver {
                qq.inject_limit += 1;
            }
        }
        if (qq.last_serv_time_ns == 0 && in_driver == 1) || tot < qq.last_serv_time_ns {
            if qq.last_serv_time_ns == 0 {
                qq.inject_limit = old.max(1);
            }
            qq.last_serv_time_ns = tot;
        } else if !injected && in_driver == 1 {
            qq.last_serv_time_ns = tot;
        }
        self.waited_rq = None;
        self.rqs_injected = false;
    }

    /// `bfq_update_hw_tag`: does the device queue requests internally
    /// (more than 3 in the drive over 32 valid samples)?
    pub(super) fn update_hw_tag(&mut self) {
        self.max_rq_in_driver = self.max_rq_in_driver.max(self.tot_rq_in_driver);
        if self.hw_tag == 1 {
            return;
        }
        if self.tot_rq_in_driver + self.held as u32 <= HW_QUEUE_THRESHOLD {
            return;
        }
        if let Some(q) = self.in_service {
            let qq = &self.queues[q as usize];
            if qq.has_short_ttime
                && qq.dispatched + (qq.queued() as u32) < HW_QUEUE_THRESHOLD
                && self.tot_rq_in_driver < HW_QUEUE_THRESHOLD
            {
                return;
            }
        }
        self.hw_tag_samples += 1;
        if self.hw_tag_samples <= HW_QUEUE_SAMPLES {
            return;
        }
        self.hw_tag = (self.max_rq_in_driver > HW_QUEUE_THRESHOLD) as i32;
        self.max_rq_in_driver = 0;
        self.hw_tag_samples = 0;
    }
}
