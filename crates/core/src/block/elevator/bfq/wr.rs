//! low_latency: weight raising of interactive queues and burst detection
//! (block/bfq-iosched.c: `bfq_handle_burst`, `bfq_reset_burst_list`,
//! `bfq_add_to_burst`, the weight-raising part of
//! `bfq_bfqq_handle_idle_busy_switch` and
//! `bfq_update_bfqq_wr_on_rq_arrival`, `bfq_wr_duration`,
//! `bfq_update_wr_data`, `bfq_bfqq_end_wr`, `bfq_end_wr`).
//!
//! A queue that becomes busy after being idle for long (or that was just
//! created) is *interactive*: its weight is multiplied by `bfq_wr_coeff`
//! (30) for `bfq_wr_duration` (3..25 s, from the peak rate). Queues created
//! in a burst — `bfq_large_burst_thresh` (8) queues of the same group each
//! within `bfq_burst_interval` (180 ms) of the previous, e.g. fio's
//! numjobs=8 starting together — are not raised.
//!
//! Not modelled: soft real-time raising (`soft_rt_next_start`), the cap on
//! service received while raised (`max_service_from_wr`), queue merging
//! and splitting (whose state save/restore touches raising).

use super::wf2q::GId;
use super::Bfq;
use crate::sim::time::time_before;

/// `bfq_wr_coeff`
pub const WR_COEFF: u32 = 30;
/// `bfq_large_burst_thresh`
const LARGE_BURST_THRESH: u32 = 8;
/// `bfq_burst_interval`, ms.
const BURST_INTERVAL_MS: u64 = 180;
/// `bfq_wr_min_idle_time`, ms.
const WR_MIN_IDLE_TIME_MS: u64 = 2000;
/// `ref_wr_duration[]`, ms (rotational, non-rotational).
const REF_WR_DURATION_MS: [u64; 2] = [7000, 2500];
/// `ref_rate[]` again, for `rate_dur_prod`.
const REF_RATE: [u64; 2] = [14000, 33000];

/// `burst_list`, `burst_size`, `large_burst`, `last_ins_in_burst`,
/// `burst_parent_entity`.
#[derive(Clone, Debug, Default)]
pub struct Burst {
    list: Vec<u32>,
    pub size: u32,
    large: bool,
    last_ins_jiffies: u64,
    parent: Option<GId>,
}

impl Bfq {
    /// `bfq_init_rq`'s call of `bfq_handle_burst` for a queue just
    /// created, when a burst is under way or nothing else is busy.
    pub(super) fn maybe_handle_burst(&mut self, q: u32) {
        if !self.queues[q as usize].just_created {
            return;
        }
        self.queues[q as usize].just_created = false;
        if self.burst.size > 0 || self.tot_busy_queues() == 0 {
            self.handle_burst(q);
        }
    }

    /// `bfq_handle_burst`
    fn handle_burst(&mut self, q: u32) {
        if self.burst.list.contains(&q) || self.queues[q as usize].in_large_burst {
            return;
        }
        let j = self.jiffies();
        let group = self.queues[q as usize].group;
        let interval = self.hz.msecs_to_jiffies(BURST_INTERVAL_MS);
        if time_before(self.burst.last_ins_jiffies + interval, j)
            || self.burst.parent != Some(group)
        {
            // bfq_reset_burst_list
            self.burst.large = false;
            self.burst.list.clear();
            if self.tot_busy_queues() == 0 {
                self.burst.list.push(q);
                self.burst.size = 1;
            } else {
                self.burst.size = 0;
            }
            self.burst.parent = Some(group);
        } else if self.burst.large {
            self.queues[q as usize].in_large_burst = true;
        } else {
            // bfq_add_to_burst
            self.burst.size += 1;
            if self.burst.size == LARGE_BURST_THRESH {
                self.burst.large = true;
                for &x in &self.burst.list {
                    self.queues[x as usize].in_large_burst = true;
                }
                self.queues[q as usize].in_large_burst = true;
                self.burst.list.clear();
            } else {
                self.burst.list.push(q);
            }
        }
        self.burst.last_ins_jiffies = j;
    }

    /// `bfq_wr_duration`: `rate_dur_prod / peak_rate`, within 3..25 s.
    fn wr_duration(&self) -> u64 {
        let nr = self.nonrot as usize;
        let ms = REF_RATE[nr] * REF_WR_DURATION_MS[nr] / self.peak.rate.max(1);
        self.hz.msecs_to_jiffies(ms.clamp(3000, 25000))
    }

    fn set_wr_coeff(&mut self, q: u32, coeff: u32) {
        let qq = &mut self.queues[q as usize];
        if qq.wr_coeff == coeff {
            return;
        }
        if qq.busy {
            if qq.wr_coeff == 1 {
                self.wr_busy_queues += 1;
            } else if coeff == 1 {
                self.wr_busy_queues -= 1;
            }
        }
        let qq = &mut self.queues[q as usize];
        qq.wr_coeff = coeff;
        let (e, w) = (qq.ent, qq.orig_weight * coeff);
        // prio_changed: applied at the next (re)queueing of the entity.
        self.w.ents[e as usize].new_weight = w;
    }

    /// The weight-raising part of `bfq_bfqq_handle_idle_busy_switch`.
    pub(super) fn update_wr_on_activation(&mut self, q: u32) {
        self.maybe_handle_burst(q);
        let j = self.jiffies();
        let min_idle = self.hz.msecs_to_jiffies(WR_MIN_IDLE_TIME_MS);
        let qq = &self.queues[q as usize];
        let in_burst = qq.in_large_burst;
        let idle_for_long = qq.just_created
            || qq.budget_timeout == 0
            || time_before(qq.budget_timeout + min_idle, j);
        let default_weight = qq.orig_weight == super::queue::ioprio_to_weight(4);
        let interactive = !in_burst && idle_for_long && default_weight;
        if !self.t.low_latency || !qq.sync {
            return;
        }
        if qq.wr_coeff > 1 && in_burst {
            self.end_wr_queue(q);
            return;
        }
        if interactive {
            let dur = self.wr_duration();
            self.set_wr_coeff(q, WR_COEFF);
            let qq = &mut self.queues[q as usize];
            qq.wr_cur_max_time = dur;
            qq.last_wr_start_finish = j;
        }
    }

    /// `bfq_update_wr_data`: end raising once its time is over (or the
    /// queue joined a large burst).
    pub(super) fn update_wr_data(&mut self, q: u32) {
        let j = self.jiffies();
        let qq = &self.queues[q as usize];
        if qq.wr_coeff > 1
            && (qq.in_large_burst || time_before(qq.last_wr_start_finish + qq.wr_cur_max_time, j))
        {
            self.end_wr_queue(q);
        }
    }

    /// `bfq_bfqq_end_wr`
    fn end_wr_queue(&mut self, q: u32) {
        self.set_wr_coeff(q, 1);
        let j = self.jiffies();
        let qq = &mut self.queues[q as usize];
        qq.wr_cur_max_time = 0;
        qq.last_wr_start_finish = j;
    }

    /// `bfq_end_wr`: low_latency switched off.
    pub(super) fn end_wr(&mut self) {
        for q in 0..self.queues.len() as u32 {
            if self.queues[q as usize].wr_coeff > 1 {
                self.end_wr_queue(q);
            }
        }
    }
}
