//! Work conservation: `hweight_after_donation` (how much hwi a donor keeps)
//! and `transfer_surpluses` (the hierarchical weight transfer of Andy
//! Newell's method: donors' inuse are set so that they end at their target
//! hwi and every non-donor's share grows by the same factor gamma).

use crate::block::ctx::Ctx;

use super::*;

impl IoCost {
    /// `hweight_after_donation`: the hwi that leaves the iocg with the target
    /// margin at the end of the next period if it keeps using `usage`. Also
    /// throws away budget above the target margin (recorded in vtime_err).
    pub(crate) fn hweight_after_donation(
        &mut self,
        idx: usize,
        old_hwi: u32,
        hwm: u32,
        usage: u32,
        now: &IocNow,
        usage_wraps: bool,
    ) -> u32 {
        let g = &self.iocgs[idx];
        if g.abs_vdebt != 0 {
            return 1;
        }
        let mut vtime = g.vtime;
        if !g.waitq.is_empty() || time_after64(vtime, now.vnow.wrapping_sub(self.margins.min)) {
            return hwm;
        }
        let excess = now
            .vnow
            .wrapping_sub(vtime)
            .wrapping_sub(self.margins.target) as i64;
        if excess > 0 {
            let g = &mut self.iocgs[idx];
            g.vtime = g.vtime.wrapping_add(excess as u64);
            g.done_vtime = g.done_vtime.wrapping_add(excess as u64);
            vtime = vtime.wrapping_add(excess as u64);
            self.vtime_err -=
                ((excess as u64).wrapping_mul(old_hwi as u64) / WEIGHT_ONE as u64) as i64;
        }
        let w = WEIGHT_ONE as i64;
        let elapsed = now.vnow.wrapping_sub(self.period_at_vtime) as i64;
        let delta = if elapsed != 0 {
            w.wrapping_mul(now.vnow.wrapping_sub(vtime) as i64) / elapsed
        } else {
            0
        };
        let target = w * MARGIN_TARGET_PCT as i64 / 100;
        let denom = w - target + delta;
        // The kernel multiplies the int WEIGHT_ONE by the u32 usage, so the
        // product is an unsigned 32-bit value: at full usage (WEIGHT_ONE,
        // where ioc_timer_fn's clamp puts every busy group) it wraps to 0,
        // and the group is told to keep hwi 1 (switch
        // `iocost.donation_usage`).
        let numer = if usage_wraps {
            WEIGHT_ONE.wrapping_mul(usage) as i64
        } else {
            w * usage as i64
        };
        let new_hwi = if denom != 0 {
            numer / denom
        } else {
            hwm as i64
        };
        new_hwi.clamp(1, hwm as i64) as u32
    }

    /// `iocg_build_inner_walk`: append the not yet visited ancestors of a leaf
    /// (root first) to `walk`, giving a pre-order of all inner nodes.
    pub(crate) fn build_inner_walk(&mut self, idx: usize, walk: &mut Vec<usize>) {
        let level = self.iocgs[idx].level;
        let mut lvl = level as isize - 1;
        while lvl >= 0 {
            if self.iocgs[self.iocgs[idx].ancestors[lvl as usize]].on_walk {
                break;
            }
            lvl -= 1;
        }
        lvl += 1;
        while (lvl as usize) < level {
            let inner = self.iocgs[idx].ancestors[lvl as usize];
            self.iocgs[inner].on_walk = true;
            walk.push(inner);
            lvl += 1;
        }
    }

    /// `transfer_surpluses`: `surpluses` are the donors, in list order.
    pub(crate) fn transfer_surpluses(&mut self, ctx: &mut Ctx, surpluses: &[usize], now: &IocNow) {
        const W: u32 = WEIGHT_ONE;
        // keep the sum of the targets below the whole
        let mut after_sum: u32 = 0;
        let mut over_sum: u32 = 0;
        let mut over_hwa = Vec::new();
        for &i in surpluses {
            let (hwa, _) = self.current_hweight(i);
            let had = self.iocgs[i].hweight_after_donation;
            after_sum = after_sum.wrapping_add(had);
            if had > hwa {
                over_sum = over_sum.wrapping_add(had);
                over_hwa.push(i);
            }
        }
        let over_target = if after_sum >= W {
            over_sum.wrapping_sub(after_sum - (W - 1))
        } else {
            0
        };
        for &i in &over_hwa {
            if over_target != 0 && over_sum != 0 {
                let g = &mut self.iocgs[i];
                g.hweight_after_donation =
                    (g.hweight_after_donation as u64 * over_target as u64 / over_sum as u64) as u32;
            }
        }

        let mut inner = Vec::new();
        for &i in surpluses {
            self.build_inner_walk(i, &mut inner);
        }
        if inner.is_empty() {
            return;
        }
        let root = inner[0];
        for &i in &inner {
            let g = &mut self.iocgs[i];
            g.child_adjusted_sum = 0;
            g.hweight_donating = 0;
            g.hweight_after_donation = 0;
        }
        // sum the donating (t) and after-donation (t') budgets upwards
        for &i in surpluses {
            let p = self.iocgs[i].ancestors[self.iocgs[i].level - 1];
            let (hd, had) = (
                self.iocgs[i].hweight_donating,
                self.iocgs[i].hweight_after_donation,
            );
            self.iocgs[p].hweight_donating = self.iocgs[p].hweight_donating.wrapping_add(hd);
            self.iocgs[p].hweight_after_donation =
                self.iocgs[p].hweight_after_donation.wrapping_add(had);
        }
        for &i in inner.iter().rev() {
            if self.iocgs[i].level > 0 {
                let p = self.iocgs[i].ancestors[self.iocgs[i].level - 1];
                let (hd, had) = (
                    self.iocgs[i].hweight_donating,
                    self.iocgs[i].hweight_after_donation,
                );
                self.iocgs[p].hweight_donating = self.iocgs[p].hweight_donating.wrapping_add(hd);
                self.iocgs[p].hweight_after_donation =
                    self.iocgs[p].hweight_after_donation.wrapping_add(had);
            }
        }
        // inner hwa (b), and the donation values within range
        for &i in &inner {
            if self.iocgs[i].level > 0 {
                let p = self.iocgs[i].ancestors[self.iocgs[i].level - 1];
                let (phwa, pcas) = (self.iocgs[p].hweight_active, self.iocgs[p].child_active_sum);
                let a = self.iocgs[i].active;
                self.iocgs[i].hweight_active =
                    div_round_up(phwa as u64 * a as u64, pcas.max(1)) as u32;
            }
            let g = &mut self.iocgs[i];
            g.hweight_donating = g.hweight_donating.min(g.hweight_active);
            g.hweight_after_donation = g
                .hweight_after_donation
                .min(g.hweight_donating.wrapping_sub(1));
        }
        // gamma = (1 - t'_r) / (1 - t_r), u32 arithmetic as in the kernel
        let r = &self.iocgs[root];
        let num = (W.wrapping_sub(r.hweight_after_donation)).wrapping_mul(W);
        let den = W - r.hweight_donating.min(W - 1);
        let gamma: u32 = num.wrapping_add(den - 1) / den;

        for &i in &inner {
            if self.iocgs[i].level == 0 {
                let g = &mut self.iocgs[i];
                let den = (W.wrapping_sub(g.hweight_after_donation)) as u64;
                g.child_adjusted_sum = div_round_up(
                    g.child_active_sum
                        .wrapping_mul((W.wrapping_sub(g.hweight_donating)) as u64),
                    den.max(1),
                );
                continue;
            }
            let p = self.iocgs[i].ancestors[self.iocgs[i].level - 1];
            let (p_cas, p_hwi) = (
                self.iocgs[p].child_adjusted_sum,
                self.iocgs[p].hweight_inuse,
            );
            let g = &mut self.iocgs[i];
            // b' = gamma * b_f + b'_t
            g.hweight_inuse = (div_round_up(
                gamma as u64 * g.hweight_active.wrapping_sub(g.hweight_donating) as u64,
                W as u64,
            ) + g.hweight_after_donation as u64) as u32;
            // w' = s' * b' / b'_p
            let inuse = div_round_up(
                p_cas.wrapping_mul(g.hweight_inuse as u64),
                (p_hwi as u64).max(1),
            ) as u32;
            // s' = s_f + s_t * w'_pt / w_pt
            let hwa = (g.hweight_active as u64).max(1);
            let st = div_round_up(
                g.child_active_sum.wrapping_mul(g.hweight_donating as u64),
                hwa,
            );
            let sf = g.child_active_sum.wrapping_sub(st);
            let wpt = div_round_up(g.active as u64 * g.hweight_donating as u64, hwa) as u32;
            let wptp = div_round_up(
                inuse as u64 * g.hweight_after_donation as u64,
                (g.hweight_inuse as u64).max(1),
            ) as u32;
            g.child_adjusted_sum = sf.wrapping_add(div_round_up(
                st.wrapping_mul(wptp as u64),
                (wpt as u64).max(1),
            ));
        }

        // leaves: w' = s' * b'_t / b'_p
        for &i in surpluses {
            if self.iocgs[i].abs_vdebt != 0 {
                continue;
            }
            let p = self.iocgs[i].ancestors[self.iocgs[i].level - 1];
            let (p_cas, p_hwi) = (
                self.iocgs[p].child_adjusted_sum,
                self.iocgs[p].hweight_inuse,
            );
            let g = &self.iocgs[i];
            let inuse = div_round_up(
                p_cas.wrapping_mul(g.hweight_after_donation as u64),
                (p_hwi as u64).max(1),
            ) as u32;
            let (old_inuse, old_hwi, had, active) =
                (g.inuse, g.hweight_inuse, g.hweight_after_donation, g.active);
            self.trace_inuse(
                ctx,
                "iocost:iocost_inuse_transfer",
                i,
                now,
                old_inuse,
                inuse,
                old_hwi as u64,
                had as u64,
            );
            self.propagate_weights_nc(i, active, inuse, true, now);
        }
        for &i in &inner {
            self.iocgs[i].on_walk = false;
        }
    }
}
