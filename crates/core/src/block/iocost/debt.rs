//! Debt and issuer delay: `iocg_incur_debt`, `iocg_pay_debt`,
//! `iocg_kick_delay` (with blk-cgroup's `blkcg_set_delay` /
//! `blkcg_clear_delay`) and `ioc_forgive_debts`.

use crate::block::bio::BioId;
use crate::block::ctx::Ctx;

use super::*;

impl IoCost {
    /// `iocg_incur_debt`: the bio is issued now and its cost owed; a debtor
    /// drops its inuse to the minimum until the debt is paid.
    pub(crate) fn incur_debt(&mut self, idx: usize, abs_cost: u64, now: &IocNow) {
        if self.iocgs[idx].abs_vdebt == 0 && abs_cost != 0 {
            self.iocgs[idx].indebt_since = now.now;
            let a = self.iocgs[idx].active;
            self.propagate_weights(idx, a, 0, false, now);
        }
        let g = &mut self.iocgs[idx];
        g.abs_vdebt = g.abs_vdebt.wrapping_add(abs_cost);
        g.abs_vusage = g.abs_vusage.wrapping_add(abs_cost);
    }

    /// `iocg_pay_debt`
    pub(crate) fn pay_debt(&mut self, idx: usize, abs_vpay: u64, now: &IocNow) {
        let g = &mut self.iocgs[idx];
        g.abs_vdebt -= abs_vpay.min(g.abs_vdebt);
        if g.abs_vdebt == 0 {
            g.stat.indebt_us += now.now.wrapping_sub(g.indebt_since);
            g.indebt_since = 0;
            let (a, li) = (g.active, g.last_inuse);
            self.propagate_weights(idx, a, li, false, now);
        }
    }

    /// `iocg_kick_delay`: derive the issuer delay from how far vtime plus debt
    /// runs ahead of vnow (0 below 5 periods, 250 ms at 250 periods), decaying
    /// by half every second. Returns whether a delay is in effect.
    pub(crate) fn kick_delay(&mut self, idx: usize, now: &IocNow) -> bool {
        if time_before64(now.now, self.iocgs[idx].delay_at) {
            return false;
        }
        let g = &self.iocgs[idx];
        let tdelta = now.now - g.delay_at;
        let shift = tdelta / 1_000_000;
        let mut delay = if g.delay != 0 && shift < 64 {
            g.delay >> shift
        } else {
            0
        };
        let (hwa, _) = self.current_hweight(idx);
        let g = &self.iocgs[idx];
        let vover = g
            .vtime
            .wrapping_add(abs_cost_to_cost(g.abs_vdebt, hwa))
            .wrapping_sub(now.vnow) as i64;
        let vover_pct =
            (100i64.wrapping_mul(vover)) / (self.period_us as i64 * self.vtime_base_rate as i64);
        let new_delay = if vover_pct <= MIN_DELAY_THR_PCT {
            0
        } else if vover_pct >= MAX_DELAY_THR_PCT {
            MAX_DELAY
        } else {
            MIN_DELAY
                + (MAX_DELAY - MIN_DELAY) * (vover_pct - MIN_DELAY_THR_PCT) as u64
                    / (MAX_DELAY_THR_PCT - MIN_DELAY_THR_PCT) as u64
        };
        let g = &mut self.iocgs[idx];
        if new_delay > delay {
            g.delay = new_delay;
            g.delay_at = now.now;
            delay = new_delay;
        }
        if delay >= MIN_DELAY {
            if g.indelay_since == 0 {
                g.indelay_since = now.now;
            }
            // blkcg_set_delay: use_delay = -1 (no blk-cgroup decay or cap)
            g.use_delay = true;
            g.delay_nsec = delay * 1000;
            true
        } else {
            if g.indelay_since != 0 {
                g.stat.indelay_us += now.now - g.indelay_since;
                g.indelay_since = 0;
            }
            g.delay = 0;
            g.use_delay = false;
            false
        }
    }

    /// `ioc_forgive_debts`: when the device has been under 50 % busy for at
    /// least 100 ms while someone is in debt, halve debts and delays once per
    /// 100 ms that passed.
    pub(crate) fn forgive_debts(
        &mut self,
        ctx: &mut Ctx,
        usage_us_sum: u64,
        nr_debtors: u32,
        now: &IocNow,
        released: &mut Vec<BioId>,
    ) {
        if nr_debtors == 0 {
            self.dfgv_period_at = now.now;
            self.dfgv_period_rem = 0;
            self.dfgv_usage_us_sum = 0;
            return;
        }
        let mut usage_us_sum = usage_us_sum;
        if self.busy_level > 0 {
            usage_us_sum = usage_us_sum.max(self.period_us);
        }
        self.dfgv_usage_us_sum += usage_us_sum;
        if time_before64(now.now, self.dfgv_period_at + DFGV_PERIOD) {
            return;
        }
        let dur = now.now - self.dfgv_period_at;
        let usage_pct = 100 * self.dfgv_usage_us_sum / dur.max(1);
        self.dfgv_period_at = now.now;
        self.dfgv_usage_us_sum = 0;
        if usage_pct > DFGV_USAGE_PCT {
            self.dfgv_period_rem = 0;
            return;
        }
        let total = dur + self.dfgv_period_rem;
        let nr_cycles = total / DFGV_PERIOD;
        self.dfgv_period_rem = total % DFGV_PERIOD;
        let shift = nr_cycles.min(63);
        for idx in self.active.clone() {
            let g = &mut self.iocgs[idx];
            if g.abs_vdebt == 0 && g.delay == 0 {
                continue;
            }
            let (old_debt, old_delay) = (g.abs_vdebt, g.delay);
            if g.abs_vdebt != 0 {
                g.abs_vdebt = (g.abs_vdebt >> shift).max(1);
            }
            if g.delay != 0 {
                g.delay = (g.delay >> shift).max(1);
            }
            self.kick_waitq(ctx, idx, true, now, released);
            let g = &self.iocgs[idx];
            let (new_debt, new_delay) = (g.abs_vdebt, g.delay);
            self.trace_forgive(
                ctx,
                idx,
                now,
                usage_pct as u32,
                old_debt,
                new_debt,
                old_delay,
                new_delay,
            );
        }
    }
}
