//! The period timer, `ioc_timer_fn`, with `ioc_lat_stat`, `ioc_check_iocgs`
//! (deactivation), `iocg_flush_stat`, the per-iocg donor/shortage pass, the
//! busy_level state machine (both before and after the 2026 fix) and the
//! end-of-period bookkeeping.

use crate::block::bio::BioId;
use crate::block::ctx::Ctx;

use super::params::*;
use super::*;

/// What `ioc_lat_stat` returns for one period.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct LatStat {
    pub missed_ppm: [u32; 2],
    pub rq_wait_pct: u32,
    pub nr_done: u32,
}

/// What one period's per-iocg pass found (input of the busy_level update).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct PeriodSignals {
    pub lat: LatStat,
    pub nr_lagging: i32,
    pub nr_shortages: i32,
}

impl IoCost {
    /// `ioc_lat_stat`: completion statistics since the last period.
    pub(crate) fn lat_stat(&mut self) -> LatStat {
        let mut missed_ppm = [0u32; 2];
        for rw in 0..2 {
            let total = self.nr_met[rw] as u64 + self.nr_missed[rw] as u64;
            if total != 0 {
                missed_ppm[rw] = div_round_up(self.nr_missed[rw] as u64 * MILLION, total) as u32;
            }
        }
        let rq_wait_pct = (self.rq_wait_ns * 100 / (self.period_us * 1000)) as u32;
        let nr_done = self.nr_met[0] + self.nr_met[1] + self.nr_missed[0] + self.nr_missed[1];
        self.nr_met = [0; 2];
        self.nr_missed = [0; 2];
        self.rq_wait_ns = 0;
        LatStat {
            missed_ppm,
            rq_wait_pct,
            nr_done,
        }
    }

    /// `iocg_is_idle`: nothing issued this period and nothing in flight.
    fn iocg_is_idle(&self, idx: usize) -> bool {
        let g = &self.iocgs[idx];
        g.active_period != self.cur_period && g.done_vtime == g.vtime
    }

    /// `ioc_check_iocgs`: kick iocgs with waiters, debt or delay (they may be
    /// oversleeping a vrate/hweight increase) and deactivate idle ones.
    fn check_iocgs(&mut self, ctx: &mut Ctx, now: &IocNow, released: &mut Vec<BioId>) -> u32 {
        let mut nr_debtors = 0;
        for idx in self.active.clone() {
            let g = &self.iocgs[idx];
            let busy = !g.waitq.is_empty() || g.abs_vdebt != 0 || g.delay != 0;
            if !busy && !self.iocg_is_idle(idx) {
                continue;
            }
            let g = &mut self.iocgs[idx];
            if g.wait_since != 0 {
                g.stat.wait_us += now.now - g.wait_since;
                g.wait_since = now.now;
            }
            if g.indebt_since != 0 {
                g.stat.indebt_us += now.now - g.indebt_since;
                g.indebt_since = now.now;
            }
            if g.indelay_since != 0 {
                g.stat.indelay_us += now.now - g.indelay_since;
                g.indelay_since = now.now;
            }
            if busy {
                self.kick_waitq(ctx, idx, true, now, released);
                if self.iocgs[idx].abs_vdebt != 0 || self.iocgs[idx].delay != 0 {
                    nr_debtors += 1;
                }
            } else if self.iocg_is_idle(idx) {
                let vtime = self.iocgs[idx].vtime;
                let excess = now
                    .vnow
                    .wrapping_sub(vtime)
                    .wrapping_sub(self.margins.target) as i64;
                if excess > 0 {
                    let (_, old_hwi) = self.current_hweight(idx);
                    self.vtime_err -=
                        ((excess as u64).wrapping_mul(old_hwi as u64) / WEIGHT_ONE as u64) as i64;
                }
                let ap = self.iocgs[idx].active_period;
                self.trace_iocg_state(
                    ctx,
                    "iocost:iocost_iocg_idle",
                    idx,
                    now,
                    ap,
                    self.cur_period,
                    vtime,
                );
                self.propagate_weights_nc(idx, 0, 0, false, now);
                self.iocgs[idx].on_active = false;
                self.active.retain(|&a| a != idx);
            }
        }
        self.commit_weights();
        nr_debtors
    }

    fn flush_stat_upward(&mut self, idx: usize) {
        let g = &self.iocgs[idx];
        if g.level > 0 {
            let p = g.ancestors[g.level - 1];
            let (s, l) = (g.stat, g.last_stat);
            let ps = &mut self.iocgs[p].stat;
            ps.usage_us += s.usage_us - l.usage_us;
            ps.wait_us += s.wait_us - l.wait_us;
            ps.indebt_us += s.indebt_us - l.indebt_us;
            ps.indelay_us += s.indelay_us - l.indelay_us;
        }
        let g = &mut self.iocgs[idx];
        g.last_stat = g.stat;
    }

    /// `iocg_flush_stat`: usage of the period per active iocg (µs at the
    /// current base vrate), pushed up to the ancestors.
    fn flush_stat(&mut self) {
        let mut walk = Vec::new();
        for idx in self.active.clone() {
            let rate = self.vtime_base_rate;
            let g = &mut self.iocgs[idx];
            let delta = g.abs_vusage.wrapping_sub(g.last_stat_abs_vusage);
            g.last_stat_abs_vusage = g.abs_vusage;
            g.usage_delta_us = delta / rate;
            g.stat.usage_us += g.usage_delta_us;
            self.flush_stat_upward(idx);
            self.build_inner_walk(idx, &mut walk);
        }
        for &i in walk.iter().rev() {
            self.flush_stat_upward(i);
            self.iocgs[i].on_walk = false;
        }
    }

    /// The busy_level state machine of `ioc_timer_fn`. `fix` selects the 2026
    /// behaviour: a period with no completions and lagging IOs leaves
    /// busy_level unchanged instead of reading as "QoS met".
    pub(crate) fn update_busy_level(&mut self, s: &PeriodSignals, fix: bool) {
        let ppm_rthr = MILLION as u32 - self.qos[QOS_RPPM];
        let ppm_wthr = MILLION as u32 - self.qos[QOS_WPPM];
        let m = s.lat.missed_ppm;
        if fix && s.lat.nr_done == 0 && s.nr_lagging != 0 {
            // saturation unknown: keep busy_level
        } else if s.lat.rq_wait_pct > RQ_WAIT_BUSY_PCT || m[0] > ppm_rthr || m[1] > ppm_wthr {
            self.busy_level = self.busy_level.max(0) + 1;
        } else if s.lat.rq_wait_pct <= RQ_WAIT_BUSY_PCT * UNBUSY_THR_PCT / 100
            && m[0] <= ppm_rthr * UNBUSY_THR_PCT / 100
            && m[1] <= ppm_wthr * UNBUSY_THR_PCT / 100
        {
            if s.nr_shortages != 0 {
                self.busy_level = self.busy_level.min(0);
                if s.nr_lagging == 0 {
                    self.busy_level -= 1;
                }
            } else {
                self.busy_level = 0;
            }
        } else {
            self.busy_level = 0;
        }
        self.busy_level = self.busy_level.clamp(-1000, 1000);
    }

    /// `ioc_timer_fn`
    pub(crate) fn timer_fn(&mut self, ctx: &mut Ctx, released: &mut Vec<BioId>) {
        let lat = self.lat_stat();
        let ppm_rthr = MILLION as u32 - self.qos[QOS_RPPM];
        let ppm_wthr = MILLION as u32 - self.qos[QOS_WPPM];
        let now = self.ioc_now(ctx.now);
        let period_vtime = now.vnow.wrapping_sub(self.period_at_vtime);
        if period_vtime == 0 {
            // the kernel WARNs and returns without re-arming
            return;
        }
        let nr_debtors = self.check_iocgs(ctx, &now, released);
        self.flush_stat();

        let mut usage_us_sum = 0u64;
        let mut nr_lagging = 0i32;
        let mut nr_shortages = 0i32;
        // list_add order: the last donor found comes first
        let mut surpluses: Vec<usize> = Vec::new();
        let qos_on = ppm_rthr != MILLION as u32 || ppm_wthr != MILLION as u32;
        let usage_wraps = ctx.switches.is("iocost.donation_usage", "u32");
        for idx in self.active.clone() {
            let vdone = self.iocgs[idx].done_vtime;
            let vtime = self.iocgs[idx].vtime;
            let (hw_active, hw_inuse) = self.current_hweight(idx);
            // IOs in flight for longer than a period are invisible to the
            // latency check: count them so vrate is not raised meanwhile
            if qos_on
                && !self.iocgs[idx].use_delay
                && time_after64(vtime, vdone)
                && time_after64(
                    vtime,
                    now.vnow
                        .wrapping_sub(MAX_LAGGING_PERIODS.wrapping_mul(period_vtime)),
                )
                && time_before64(vdone, now.vnow.wrapping_sub(period_vtime))
            {
                nr_lagging += 1;
            }
            let mut usage_us = self.iocgs[idx].usage_delta_us;
            usage_us_sum += usage_us;
            let g = &self.iocgs[idx];
            if hw_inuse < hw_active
                || (g.waitq.is_empty()
                    && time_before64(vtime, now.vnow.wrapping_sub(self.margins.low)))
            {
                if vdone != vtime {
                    let inflight_us = div_round_up(
                        cost_to_abs_cost(vtime.wrapping_sub(vdone), hw_inuse),
                        self.vtime_base_rate,
                    );
                    usage_us = usage_us.max(inflight_us);
                }
                let usage_dur = if time_after64(g.activated_at, self.period_at) {
                    now.now.wrapping_sub(g.activated_at).max(1)
                } else {
                    now.now.wrapping_sub(self.period_at).max(1)
                };
                let usage = div_round_up(usage_us.wrapping_mul(WEIGHT_ONE as u64), usage_dur)
                    .clamp(1, WEIGHT_ONE as u64) as u32;
                let (hwa, old_hwi) = self.current_hweight(idx);
                let hwm = self.current_hweight_max(idx);
                let new_hwi =
                    self.hweight_after_donation(idx, old_hwi, hwm, usage, &now, usage_wraps);
                if new_hwi < hwm && hwa >= 2 {
                    let g = &mut self.iocgs[idx];
                    g.hweight_donating = hwa;
                    g.hweight_after_donation = new_hwi;
                    surpluses.insert(0, idx);
                } else if self.iocgs[idx].abs_vdebt == 0 {
                    let g = &self.iocgs[idx];
                    let (inuse, active, hwi_cached) = (g.inuse, g.active, g.hweight_inuse);
                    self.trace_inuse(
                        ctx,
                        "iocost:iocost_inuse_shortage",
                        idx,
                        &now,
                        inuse,
                        active,
                        hwi_cached as u64,
                        new_hwi as u64,
                    );
                    self.propagate_weights_nc(idx, active, active, true, &now);
                    nr_shortages += 1;
                }
            } else {
                nr_shortages += 1;
            }
        }
        if !surpluses.is_empty() && nr_shortages != 0 {
            self.transfer_surpluses(ctx, &surpluses, &now);
        }
        self.commit_weights();

        let prev_busy_level = self.busy_level;
        let fix = ctx.switches.is("iocost.busy_level_fix", "on");
        let sig = PeriodSignals {
            lat,
            nr_lagging,
            nr_shortages,
        };
        self.update_busy_level(&sig, fix);
        self.adjust_base_vrate(
            ctx,
            lat.rq_wait_pct,
            nr_lagging,
            nr_shortages,
            prev_busy_level,
            lat.missed_ppm,
        );
        self.trace_period(ctx, &sig, usage_us_sum);

        self.refresh_params(now.now_ns, false);
        self.forgive_debts(ctx, usage_us_sum, nr_debtors, &now, released);

        self.cur_period += 1;
        if self.running != Running::Stop {
            if !self.active.is_empty() {
                self.start_period(&now);
            } else {
                self.busy_level = 0;
                self.vtime_err = 0;
                self.running = Running::Idle;
            }
            self.refresh_vrate(&now);
        }
    }
}
