//! Device vtime and vrate: `ioc_now`, `ioc_start_period`, `ioc_refresh_margins`,
//! `ioc_refresh_period_us`, `ioc_refresh_params`/`ioc_autop_idx`,
//! `ioc_refresh_vrate` and `ioc_adjust_base_vrate`.

use crate::block::ctx::Ctx;
use crate::sim::timer;

use super::params::*;
use super::*;

impl IoCost {
    /// `ioc_now`: wall time in µs and the device vtime at `now_ns`.
    #[inline]
    pub(crate) fn ioc_now(&self, now_ns: u64) -> IocNow {
        let now = now_ns / 1000;
        let vnow = self.period_at_vtime.wrapping_add(
            now.wrapping_sub(self.period_at)
                .wrapping_mul(self.vtime_rate),
        );
        IocNow { now_ns, now, vnow }
    }

    /// `ioc_start_period`: a new period begins now; the period timer is a
    /// `timer_list` armed for `jiffies + usecs_to_jiffies(period_us)`, so it
    /// runs on a tick, one jiffy after the one it names (sim/timer.rs): at
    /// HZ=250 a 7 ms period asks for 2 jiffies and lasts 12 ms.
    pub(crate) fn start_period(&mut self, now: &IocNow) {
        self.period_at = now.now;
        self.period_at_vtime = now.vnow;
        let ahead = timer::usecs_to_jiffies(self.hz, self.period_us);
        self.period_timer = Some(timer::fires_at(self.hz, now.now_ns, ahead));
    }

    /// `ioc_refresh_margins`
    pub(crate) fn refresh_margins(&mut self) {
        let p = self.period_us;
        let vrate = self.vtime_base_rate;
        self.margins.min = (p * MARGIN_MIN_PCT / 100).wrapping_mul(vrate);
        self.margins.low = (p * MARGIN_LOW_PCT / 100).wrapping_mul(vrate);
        self.margins.target = (p * MARGIN_TARGET_PCT / 100).wrapping_mul(vrate);
    }

    /// `ioc_refresh_period_us`: the period is a multiple of the larger latency
    /// target (2x at p90 and above, 10x at p50), within 1 ms..1 s.
    pub(crate) fn refresh_period_us(&mut self) {
        let (ppm, lat) = if self.qos[QOS_RLAT] >= self.qos[QOS_WLAT] {
            (self.qos[QOS_RPPM], self.qos[QOS_RLAT])
        } else {
            (self.qos[QOS_WPPM], self.qos[QOS_WLAT])
        };
        let multi: u32 = if ppm != 0 {
            ((MILLION as u32 - ppm) / 50_000).max(2)
        } else {
            2
        };
        // u32 arithmetic as in the kernel
        let period_us = multi
            .wrapping_mul(lat)
            .clamp(MIN_PERIOD as u32, MAX_PERIOD as u32) as u64;
        self.period_us = period_us;
        self.timer_slack_ns = period_us * 1000 * TIMER_SLACK_PCT / 100;
        self.refresh_margins();
    }

    /// `ioc_autop_idx`: which preset the device should use now.
    fn autop_idx(&mut self, now_ns: u64) -> usize {
        let idx = self.autop_idx;
        let p = &AUTOP[idx];
        if self.rotational {
            return AUTOP_HDD;
        }
        if self.queue_depth == 1 {
            return AUTOP_SSD_QD1;
        }
        if idx < AUTOP_SSD_DFL {
            return AUTOP_SSD_DFL;
        }
        if self.user_qos_params || self.user_cost_model {
            return idx;
        }
        let vrate_pct = (self.vtime_base_rate * 100 / VTIME_PER_USEC) as u32;
        if p.too_fast_vrate_pct != 0 && p.too_fast_vrate_pct <= vrate_pct {
            if self.autop_too_fast_at == 0 {
                self.autop_too_fast_at = now_ns;
            }
            if now_ns - self.autop_too_fast_at >= AUTOP_CYCLE_NSEC {
                return idx + 1;
            }
        } else {
            self.autop_too_fast_at = 0;
        }
        if p.too_slow_vrate_pct != 0 && p.too_slow_vrate_pct >= vrate_pct {
            if self.autop_too_slow_at == 0 {
                self.autop_too_slow_at = now_ns;
            }
            if now_ns - self.autop_too_slow_at >= AUTOP_CYCLE_NSEC {
                return idx - 1;
            }
        } else {
            self.autop_too_slow_at = 0;
        }
        idx
    }

    /// `ioc_refresh_params_disk`: switch presets if needed (or when forced)
    /// and recompute period, margins, coefficients and vrate bounds.
    pub(crate) fn refresh_params(&mut self, now_ns: u64, force: bool) -> bool {
        let idx = self.autop_idx(now_ns);
        if idx == self.autop_idx && !force {
            return false;
        }
        if idx != self.autop_idx {
            self.vtime_rate = VTIME_PER_USEC;
            self.vtime_base_rate = VTIME_PER_USEC;
        }
        self.autop_idx = idx;
        self.autop_too_fast_at = 0;
        self.autop_too_slow_at = 0;
        let p = AUTOP[idx];
        if !self.user_qos_params {
            self.qos = p.qos;
        }
        if !self.user_cost_model {
            self.i_lcoefs = p.i_lcoefs;
        }
        self.refresh_period_us();
        self.lcoefs = cost::lcoefs_from(&self.i_lcoefs);
        self.vrate_min = div_round_up(self.qos[QOS_MIN] as u64 * VTIME_PER_USEC, MILLION);
        self.vrate_max = div_round_up(self.qos[QOS_MAX] as u64 * VTIME_PER_USEC, MILLION);
        true
    }

    /// `ioc_refresh_vrate`: pay back vtime thrown away (`vtime_err`) over the
    /// rest of the period by running vnow faster (at most 2x) or slower (0.5x).
    /// As in the kernel, the rest of the period is taken as `period_us`
    /// (called right after `ioc_start_period`), while the timer wheel runs the
    /// period for `usecs_to_jiffies(period_us) + 1` jiffies: the compensated
    /// rate lasts that long and the surplus is never booked against
    /// `vtime_err` (12/7 of the debt at HZ=250 with a 7 ms period, 8/7 at
    /// HZ=1000; tests/vrate_comp.rs).
    pub(crate) fn refresh_vrate(&mut self, now: &IocNow) {
        let pleft = (self.period_at + self.period_us) as i64 - now.now as i64;
        let vperiod = (self.period_us as i64).wrapping_mul(self.vtime_base_rate as i64);
        if pleft > 0 {
            let vcomp = -(self.vtime_err / pleft);
            let vcomp_min = -((self.vtime_base_rate >> 1) as i64);
            let vcomp_max = self.vtime_base_rate as i64;
            let vcomp = vcomp.clamp(vcomp_min, vcomp_max);
            self.vtime_err = self.vtime_err.wrapping_add(vcomp.wrapping_mul(pleft));
            self.vtime_rate = (self.vtime_base_rate as i64 + vcomp) as u64;
        }
        self.vtime_err = self.vtime_err.clamp(-vperiod, vperiod);
    }

    /// `ioc_adjust_base_vrate`: move vrate by the busy_level step (or back into
    /// [vrate_min, vrate_max] by 4 % a period), and emit iocost_ioc_vrate_adj.
    pub(crate) fn adjust_base_vrate(
        &mut self,
        ctx: &mut Ctx,
        rq_wait_pct: u32,
        nr_lagging: i32,
        nr_shortages: i32,
        prev_busy_level: i32,
        missed_ppm: [u32; 2],
    ) {
        let mut vrate = self.vtime_base_rate;
        let (vmin, vmax) = (self.vrate_min, self.vrate_max);
        if self.busy_level == 0 || (self.busy_level < 0 && nr_lagging != 0) {
            if self.busy_level != prev_busy_level || nr_lagging != 0 {
                let held = self.traced_vrate(ctx);
                self.trace_vrate_adj(ctx, held, missed_ppm, rq_wait_pct, nr_lagging, nr_shortages);
            }
            return;
        }
        if vrate < vmin {
            vrate = (vrate * (100 + VRATE_CLAMP_ADJ_PCT) / 100).min(vmin);
        } else if vrate > vmax {
            vrate = (vrate * (100 - VRATE_CLAMP_ADJ_PCT) / 100).max(vmax);
        } else {
            let idx = (self.busy_level.unsigned_abs() as usize).min(VRATE_ADJ_PCT.len() - 1);
            let adj = VRATE_ADJ_PCT[idx] as u64;
            let pct = if self.busy_level > 0 {
                100 - adj
            } else {
                100 + adj
            };
            vrate = div_round_up(vrate * pct, 100).clamp(vmin, vmax);
        }
        self.trace_vrate_adj(
            ctx,
            vrate,
            missed_ppm,
            rq_wait_pct,
            nr_lagging,
            nr_shortages,
        );
        self.vtime_base_rate = vrate;
        self.refresh_margins();
    }
}
