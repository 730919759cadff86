//! Peak-rate estimation (block/bfq-iosched.c: `bfq_update_peak_rate`,
//! `bfq_update_rate_reset`, `bfq_reset_rate_computation`,
//! `update_thr_responsiveness_params`): the device's rate in sectors per
//! µs (fixed point, `BFQ_RATE_SHIFT`), measured over dispatch intervals of
//! about a second, smoothed, and — for mostly random workloads — only ever
//! raised. The autotuned maximum budget is what this rate transfers in one
//! budget timeout (`bfq_calc_max_budget`).

use super::queue::{SECT_THR_NONROT, SEEK_THR};
use super::Bfq;
use crate::sim::time::{Ns, NSEC_PER_MSEC, NSEC_PER_USEC};

/// `BFQ_RATE_SHIFT`
pub const RATE_SHIFT: u32 = 16;
/// `ref_rate[]`: reference peak rates (rotational, non-rotational).
const REF_RATE: [u64; 2] = [14000, 33000];
/// `BFQ_RATE_MIN_SAMPLES`
const RATE_MIN_SAMPLES: u64 = 32;
/// `BFQ_RATE_MIN_INTERVAL`: 300 ms.
const RATE_MIN_INTERVAL_NS: u64 = 300 * NSEC_PER_MSEC;
/// `BFQ_RATE_REF_INTERVAL`: 1 s.
const RATE_REF_INTERVAL_NS: u64 = 1000 * NSEC_PER_MSEC;

#[derive(Clone, Copy, Debug)]
pub struct PeakRate {
    /// `peak_rate`, sectors/µs << RATE_SHIFT.
    pub rate: u64,
    samples: u64,
    sequential: u64,
    tot_sectors: u64,
    first_dispatch: Ns,
    last_dispatch: Ns,
    pub last_completion: Ns,
    delta_from_first: u64,
}

impl PeakRate {
    /// The initial estimate: 2/3 of the reference rate.
    pub fn new(nonrot: bool) -> PeakRate {
        PeakRate {
            rate: REF_RATE[nonrot as usize] * 2 / 3,
            samples: 0,
            sequential: 0,
            tot_sectors: 0,
            first_dispatch: 0,
            last_dispatch: 0,
            last_completion: 0,
            delta_from_first: 0,
        }
    }

    fn reset(&mut self, now: Ns, sectors: u64) {
        self.last_dispatch = now;
        self.first_dispatch = now;
        self.samples = 1;
        self.sequential = 0;
        self.tot_sectors = sectors;
    }
}

impl Bfq {
    /// `bfq_update_peak_rate`, at each dispatch.
    pub(super) fn update_peak_rate(&mut self, sector: u64, sectors: u64) {
        let now = self.now;
        let p = &mut self.peak;
        if p.samples == 0 {
            p.reset(now, sectors);
        } else {
            let mut update =
                now - p.last_dispatch > 100 * NSEC_PER_MSEC && self.tot_rq_in_driver == 0;
            if !update {
                p.samples += 1;
                let seeky = sector.abs_diff(self.last_position) > SEEK_THR
                    && (!self.nonrot || sectors < SECT_THR_NONROT);
                if (self.tot_rq_in_driver > 0 || now - p.last_completion < super::budget::MIN_TT_NS)
                    && !seeky
                {
                    p.sequential += 1;
                }
                p.tot_sectors += sectors;
                p.delta_from_first = now - p.first_dispatch;
                update = p.delta_from_first >= RATE_REF_INTERVAL_NS;
            }
            if update {
                self.update_rate_reset(sectors);
            }
        }
        self.last_position = sector + sectors;
        self.peak.last_dispatch = now;
    }

    /// `bfq_update_rate_reset`
    fn update_rate_reset(&mut self, sectors: u64) {
        let now = self.now;
        let p = &mut self.peak;
        if p.samples >= RATE_MIN_SAMPLES && p.delta_from_first >= RATE_MIN_INTERVAL_NS {
            p.delta_from_first = p
                .delta_from_first
                .max(p.last_completion.saturating_sub(p.first_dispatch));
            let rate = (p.tot_sectors << RATE_SHIFT) / (p.delta_from_first / NSEC_PER_USEC).max(1);
            let skip =
                (p.sequential < (3 * p.samples) >> 2 && rate <= p.rate) || rate > 20 << RATE_SHIFT;
            if !skip {
                let weight = (9 * p.sequential) / p.samples;
                let divisor = 10 - weight;
                p.rate = p.rate * (divisor - 1) / divisor + rate / divisor;
                p.rate = p.rate.max(1);
                // update_thr_responsiveness_params
                if self.t.user_max_budget == 0 {
                    self.max_budget = self.calc_max_budget();
                }
            }
        }
        self.peak.reset(now, sectors);
    }
}
