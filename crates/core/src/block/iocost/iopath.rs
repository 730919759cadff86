//! The IO path: `iocg_activate`, `adjust_inuse_and_calc_cost`,
//! `ioc_rqos_throttle`, `ioc_rqos_merge`, `iocg_kick_waitq` (with
//! `iocg_wake_fn`), `iocg_waitq_timer_fn`, `ioc_rqos_done_bio`,
//! `ioc_rqos_done`, plus the timer multiplexing, `ioc_pd_stat` and the
//! mid-run cgroup file writes.

use crate::block::bio::{Bio, BioId, Op};
use crate::block::blk_cgroup::{CgId, ROOT};
use crate::block::ctx::Ctx;
use crate::block::request::Request;
use crate::block::rq_qos::QosVerdict;
use crate::sim::kerr::{Errno, KernelError};

use super::params::*;
use super::*;

impl IoCost {
    /// `iocg_commit_bio`: charge `cost` to the iocg's vtime.
    #[inline]
    fn commit_bio(&mut self, idx: usize, abs_cost: u64, cost: u64) {
        let g = &mut self.iocgs[idx];
        g.vtime = g.vtime.wrapping_add(cost);
        g.abs_vusage = g.abs_vusage.wrapping_add(abs_cost);
    }

    #[inline]
    fn set_bio_cost(&mut self, id: BioId, cost: u64) {
        match self.bio_cost.get_mut(id as usize) {
            Some(c) => *c = cost,
            None => self.grow_bio_cost(id, cost),
        }
    }

    /// `set_bio_cost` for an id past the table: grown only to store a cost
    /// (an absent entry reads 0).
    #[cold]
    fn grow_bio_cost(&mut self, id: BioId, cost: u64) {
        if cost != 0 {
            self.bio_cost.resize(id as usize + 1, 0);
            self.bio_cost[id as usize] = cost;
        }
    }

    #[inline]
    fn bio_cost_of(&self, id: BioId) -> u64 {
        self.bio_cost.get(id as usize).copied().unwrap_or(0)
    }

    /// `iocg_activate`: put the iocg on the active list (starting it with the
    /// target budget) or just mark it as active in this period.
    pub(crate) fn activate(&mut self, ctx: &mut Ctx, idx: usize, now: &IocNow) -> bool {
        if self.iocgs[idx].on_active {
            self.iocgs[idx].active_period = self.cur_period;
            return true;
        }
        // IO from an inner node with active descendants: treated as root IO
        if self.iocgs[idx].child_active_sum != 0 {
            return false;
        }
        let last_period = self.iocgs[idx].active_period;
        self.iocgs[idx].active_period = self.cur_period;
        let level = self.iocgs[idx].level;
        for i in (1..level).rev() {
            if self.iocgs[self.iocgs[idx].ancestors[i]].on_active {
                return false;
            }
        }
        if self.iocgs[idx].child_active_sum != 0 {
            return false;
        }
        let vtarget = now.vnow.wrapping_sub(self.margins.target);
        {
            let g = &mut self.iocgs[idx];
            let delta = vtarget.wrapping_sub(g.vtime);
            g.vtime = g.vtime.wrapping_add(delta);
            g.done_vtime = g.done_vtime.wrapping_add(delta);
            g.hweight_gen = self.hweight_gen.wrapping_sub(1);
            g.on_active = true;
        }
        self.active.insert(0, idx);
        let (weight, last_inuse) = (self.iocgs[idx].weight, self.iocgs[idx].last_inuse);
        let inuse = if last_inuse != 0 { last_inuse } else { weight };
        self.propagate_weights(idx, weight, inuse, true, now);
        self.trace_iocg_state(
            ctx,
            "iocost:iocost_iocg_activate",
            idx,
            now,
            last_period,
            self.cur_period,
            vtarget,
        );
        self.iocgs[idx].activated_at = now.now;
        if self.running == Running::Idle {
            self.running = Running::Running;
            self.dfgv_period_at = now.now;
            self.dfgv_period_rem = 0;
            self.start_period(now);
        }
        true
    }

    /// `adjust_inuse_and_calc_cost`: the relative cost, raising a donating
    /// iocg's inuse in 25 % steps when its budget has shrunk below what it
    /// needs (the in-period snapback).
    /// The checks, which nearly every I/O passes with the cost as it is,
    /// are inlined; the raising is `adjust_inuse`.
    #[inline]
    pub(crate) fn adjust_inuse_and_calc_cost(
        &mut self,
        ctx: &mut Ctx,
        idx: usize,
        vtime: u64,
        abs_cost: u64,
        now: &IocNow,
    ) -> u64 {
        let (_, hwi) = self.current_hweight(idx);
        let cost = abs_cost_to_cost(abs_cost, hwi);
        let margin = now.vnow.wrapping_sub(vtime).wrapping_sub(cost) as i64;
        let g = &self.iocgs[idx];
        if g.abs_vdebt != 0 {
            return cost;
        }
        if margin >= g.saved_margin || margin >= self.margins.low as i64 || g.inuse == g.active {
            return cost;
        }
        if !g.on_active {
            return cost;
        }
        self.adjust_inuse(ctx, idx, vtime, abs_cost, now, hwi)
    }

    /// The in-period snapback of `adjust_inuse_and_calc_cost`: inuse raised
    /// in steps until the cost fits the budget or inuse reaches active.
    #[inline(never)]
    fn adjust_inuse(
        &mut self,
        ctx: &mut Ctx,
        idx: usize,
        vtime: u64,
        abs_cost: u64,
        now: &IocNow,
        old_hwi: u32,
    ) -> u64 {
        let mut hwi;
        let mut cost;
        let g = &self.iocgs[idx];
        let old_inuse = g.inuse;
        let mut new_inuse = g.inuse;
        let adj_step = div_round_up(g.active as u64 * INUSE_ADJ_STEP_PCT, 100) as u32;
        loop {
            new_inuse = new_inuse.wrapping_add(adj_step);
            let active = self.iocgs[idx].active;
            self.propagate_weights(idx, active, new_inuse, true, now);
            hwi = self.current_hweight(idx).1;
            cost = abs_cost_to_cost(abs_cost, hwi);
            let g = &self.iocgs[idx];
            if !(time_after64(vtime.wrapping_add(cost), now.vnow) && g.inuse != g.active) {
                break;
            }
        }
        let new = self.iocgs[idx].inuse;
        self.trace_inuse(
            ctx,
            "iocost:iocost_inuse_adjust",
            idx,
            now,
            old_inuse,
            new,
            old_hwi as u64,
            hwi as u64,
        );
        cost
    }

    /// `ioc_rqos_throttle`
    /// Tells the block layer (`ctx.timer_moved`) whether the period timer,
    /// a waitq timer or the hand-out of wake-ups may have moved.
    pub(crate) fn rqos_throttle(&mut self, ctx: &mut Ctx, id: BioId, bio: &mut Bio) -> QosVerdict {
        // the early returns arm nothing
        ctx.timer_moved = false;
        self.set_bio_cost(id, 0);
        let idx = bio.cg as usize;
        if !self.enabled || self.iocgs[idx].level == 0 {
            return QosVerdict::Proceed;
        }
        let abs_cost = cost::vtime_cost(
            &self.lcoefs,
            bio.op,
            bio.sector,
            bio.bytes,
            self.iocgs[idx].cursor,
            false,
        );
        if abs_cost == 0 {
            return QosVerdict::Proceed;
        }
        let now = self.ioc_now(ctx.now);
        let was_active = self.iocgs[idx].on_active;
        if !self.activate(ctx, idx, &now) {
            return QosVerdict::Proceed;
        }
        // the timers move on the way to here only if this activation
        // started a period; the slow paths below set the flag again
        ctx.timer_moved = !was_active;
        self.iocgs[idx].cursor = bio.end_sector();
        let vtime = self.iocgs[idx].vtime;
        let cost = self.adjust_inuse_and_calc_cost(ctx, idx, vtime, abs_cost, &now);

        let g = &self.iocgs[idx];
        if g.waitq.is_empty()
            && g.abs_vdebt == 0
            && !time_after64(vtime.wrapping_add(cost), now.vnow)
        {
            self.commit_bio(idx, abs_cost, cost);
            bio.qos_cost = cost;
            self.set_bio_cost(id, cost);
            return QosVerdict::Proceed;
        }
        // debt, delay and the waitq: the timers may move
        ctx.timer_moved = true;
        // bio_issue_as_root_blkg: REQ_META / REQ_SWAP are charged as debt
        let use_debt = bio.flags.meta;
        let mut ioc_locked = use_debt || g.abs_vdebt != 0;
        if !g.on_active {
            self.commit_bio(idx, abs_cost, cost);
            bio.qos_cost = cost;
            self.set_bio_cost(id, cost);
            return QosVerdict::Proceed;
        }
        if use_debt {
            self.incur_debt(idx, abs_cost, &now);
            if self.kick_delay(idx, &now) {
                self.iocgs[idx].throttle_pending = true;
            }
            return QosVerdict::Proceed;
        }
        // an iocg with waiters always runs at full inuse
        let g = &self.iocgs[idx];
        if g.abs_vdebt == 0 && g.inuse != g.active {
            ioc_locked = true;
            let a = g.active;
            self.propagate_weights(idx, a, a, true, &now);
        }
        self.iocgs[idx].waitq.push_back(Waiter { id, abs_cost });
        bio.qos_cost = WAIT_TICKET | id as u64;
        let mut woken = std::mem::take(&mut self.pending_release);
        let before = woken.len();
        self.kick_waitq(ctx, idx, ioc_locked, &now, &mut woken);
        let mut verdict = QosVerdict::Wait;
        if let Some(pos) = woken[before..].iter().position(|&w| w == id) {
            // committed by its own kick: the submitter does not sleep
            woken.remove(before + pos);
            bio.qos_cost = self.bio_cost_of(id);
            verdict = QosVerdict::Proceed;
        }
        if !woken.is_empty() && self.release_at.is_none() {
            self.release_at = Some(ctx.now);
        }
        self.pending_release = woken;
        verdict
    }

    /// `ioc_rqos_merge`: `bio` joins `rq` (called before the request grows).
    pub(crate) fn rqos_merge(&mut self, ctx: &mut Ctx, rq: &Request, bio: &mut Bio) {
        let idx = bio.cg as usize;
        if !self.enabled || self.iocgs[idx].level == 0 {
            return;
        }
        let abs_cost = cost::vtime_cost(
            &self.lcoefs,
            bio.op,
            bio.sector,
            bio.bytes,
            self.iocgs[idx].cursor,
            true,
        );
        if abs_cost == 0 {
            return;
        }
        let now = self.ioc_now(ctx.now);
        let vtime = self.iocgs[idx].vtime;
        let cost = self.adjust_inuse_and_calc_cost(ctx, idx, vtime, abs_cost, &now);
        let bio_end = bio.end_sector();
        if rq.sector < bio_end && rq.sector + rq.sectors() == self.iocgs[idx].cursor {
            self.iocgs[idx].cursor = bio_end;
        }
        let first_cost = rq.bios.first().map(|&b| self.bio_cost_of(b)).unwrap_or(0);
        if first_cost != 0 && !time_after64(self.iocgs[idx].vtime.wrapping_add(cost), now.vnow) {
            self.commit_bio(idx, abs_cost, cost);
            bio.qos_cost = cost;
            return;
        }
        if self.iocgs[idx].on_active {
            self.incur_debt(idx, abs_cost, &now);
            if self.kick_delay(idx, &now) {
                self.iocgs[idx].throttle_pending = true;
            }
        } else {
            self.commit_bio(idx, abs_cost, cost);
            bio.qos_cost = cost;
        }
    }

    /// `iocg_kick_waitq`: pay debt from the accumulated budget, then commit and
    /// wake waiters in FIFO order while the budget lasts; arm the waitq timer
    /// for the first one that does not fit. Woken ids are appended to `out`.
    pub(crate) fn kick_waitq(
        &mut self,
        _ctx: &mut Ctx,
        idx: usize,
        pay_debt: bool,
        now: &IocNow,
        out: &mut Vec<BioId>,
    ) {
        let (hwa, _) = self.current_hweight(idx);
        let mut vbudget = now.vnow.wrapping_sub(self.iocgs[idx].vtime) as i64;
        if pay_debt && self.iocgs[idx].abs_vdebt != 0 && vbudget > 0 {
            let abs_vbudget = cost_to_abs_cost(vbudget as u64, hwa);
            let abs_vpay = abs_vbudget.min(self.iocgs[idx].abs_vdebt);
            let vpay = abs_cost_to_cost(abs_vpay, hwa);
            let g = &mut self.iocgs[idx];
            g.vtime = g.vtime.wrapping_add(vpay);
            g.done_vtime = g.done_vtime.wrapping_add(vpay);
            self.pay_debt(idx, abs_vpay, now);
            vbudget = vbudget.wrapping_sub(vpay as i64);
        }
        if self.iocgs[idx].abs_vdebt != 0 || self.iocgs[idx].delay != 0 {
            self.kick_delay(idx, now);
        }
        if self.iocgs[idx].abs_vdebt != 0 {
            let vdebt = abs_cost_to_cost(self.iocgs[idx].abs_vdebt, hwa) as i64;
            vbudget = 0.min(vbudget.wrapping_sub(vdebt));
        }
        let (_, hwi) = self.current_hweight(idx);
        while let Some(&w) = self.iocgs[idx].waitq.front() {
            let cost = abs_cost_to_cost(w.abs_cost, hwi);
            vbudget = vbudget.wrapping_sub(cost as i64);
            if vbudget < 0 {
                break;
            }
            self.commit_bio(idx, w.abs_cost, cost);
            self.set_bio_cost(w.id, cost);
            self.iocgs[idx].waitq.pop_front();
            out.push(w.id);
        }
        let g = &mut self.iocgs[idx];
        if g.waitq.is_empty() {
            if g.wait_since != 0 {
                g.stat.wait_us += now.now - g.wait_since;
                g.wait_since = 0;
            }
            return;
        }
        if g.wait_since == 0 {
            g.wait_since = now.now;
        }
        if vbudget >= 0 {
            return;
        }
        let vshortage = vbudget.unsigned_abs();
        let expires =
            now.now_ns + div_round_up(vshortage, self.vtime_base_rate) * 1000 + self.timer_slack_ns;
        if let Some(old) = g.waitq_timer {
            if old.abs_diff(expires) <= self.timer_slack_ns {
                return;
            }
        }
        self.set_waitq_timer(idx, Some(expires));
    }

    /// Arm (Some soft expiry) or cancel (None) the waitq hrtimer of iocg
    /// `idx`, keeping `waitq_timers` in step with the iocg's field.
    pub(crate) fn set_waitq_timer(&mut self, idx: usize, soft: Option<u64>) {
        let g = &mut self.iocgs[idx];
        if let Some(old) = g.waitq_timer {
            self.waitq_timers.remove(&(old, idx));
        }
        g.waitq_timer = soft;
        if let Some(s) = soft {
            self.waitq_timers.insert((s, idx));
        }
    }

    /// `ioc_rqos_done_bio`: the bio's committed cost is no longer in flight.
    pub(crate) fn rqos_done_bio(&mut self, bio: &Bio) {
        let idx = bio.cg as usize;
        if idx >= self.iocgs.len() || bio.qos_cost == 0 {
            return;
        }
        let cost = if bio.qos_cost & WAIT_TICKET != 0 {
            let id = (bio.qos_cost & 0xffff_ffff) as BioId;
            self.bio_cost_of(id)
        } else {
            bio.qos_cost
        };
        let g = &mut self.iocgs[idx];
        g.done_vtime = g.done_vtime.wrapping_add(cost);
    }

    /// `ioc_rqos_done`: per-request latency (met/missed against rlat/wlat
    /// after the size allowance) and rq_wait accounting. In the model's
    /// naming `rq.start_time` is the kernel's `alloc_time_ns` (allocation
    /// began) and `rq.alloc_time` its `start_time_ns` (tag obtained).
    pub(crate) fn rqos_done(&mut self, ctx: &mut Ctx, rq: &Request) {
        if !self.enabled {
            return;
        }
        let (pidx, rw) = match rq.op {
            Op::Read => (QOS_RLAT, 0),
            Op::Write => (QOS_WLAT, 1),
            _ => return,
        };
        // alloc_time_ns: allocation began; start_time_ns: the tag was obtained
        let on_q_ns = ctx.now.saturating_sub(rq.alloc_time);
        let rq_wait_ns = rq.start_time.saturating_sub(rq.alloc_time);
        let size_nsec = cost::size_vtime_cost(&self.lcoefs, rq.op, rq.bytes) / VTIME_PER_NSEC;
        if on_q_ns <= size_nsec || on_q_ns - size_nsec <= self.qos[pidx] as u64 * 1000 {
            self.nr_met[rw] = self.nr_met[rw].wrapping_add(1);
        } else {
            self.nr_missed[rw] = self.nr_missed[rw].wrapping_add(1);
        }
        self.rq_wait_ns = self.rq_wait_ns.wrapping_add(rq_wait_ns);
    }

    /// The earliest pending timer: wake-ups to hand out, a waitq hrtimer
    /// (at its hard expiry, soft + slack) or the period timer.
    pub(crate) fn next_timer_at(&self) -> Option<Ns> {
        let mut t = self.release_at;
        let mut take = |x: Option<Ns>| {
            if let Some(x) = x {
                t = Some(t.map_or(x, |c| c.min(x)));
            }
        };
        take(self.period_timer);
        take(
            self.waitq_timers
                .first()
                .map(|&(s, _)| s + self.timer_slack_ns),
        );
        t
    }

    /// Run everything due at `ctx.now`: pending wake-ups, then waitq timers
    /// (earliest first), then the period timer.
    pub(crate) fn run_timers(&mut self, ctx: &mut Ctx, released: &mut Vec<BioId>) {
        if self.release_at.is_some_and(|t| t <= ctx.now) {
            released.append(&mut self.pending_release);
            self.release_at = None;
        }
        // the earliest armed waitq timer, while it is due (the slack is the
        // same for all, so the order of soft expiries is that of hard ones)
        while let Some(&(s, idx)) = self.waitq_timers.first() {
            if s + self.timer_slack_ns > ctx.now {
                break;
            }
            // iocg_waitq_timer_fn
            self.set_waitq_timer(idx, None);
            let now = self.ioc_now(ctx.now);
            let pay_debt = self.iocgs[idx].abs_vdebt != 0;
            self.kick_waitq(ctx, idx, pay_debt, &now, released);
        }
        if self.period_timer.is_some_and(|t| t <= ctx.now) {
            self.period_timer = None;
            self.timer_fn(ctx, released);
        }
    }

    /// `blkcg_maybe_throttle_current` for a submitter of `cg` returning to
    /// user space: the delay to sleep (ns) if iocost scheduled one.
    pub(crate) fn maybe_throttle_current(&mut self, cg: CgId) -> Ns {
        let idx = cg as usize;
        if !std::mem::take(&mut self.iocgs[idx].throttle_pending) {
            return 0;
        }
        let mut delay = 0;
        let level = self.iocgs[idx].level;
        // the root blkg is not consulted (`while (blkg->parent)`)
        for l in 1..=level {
            let g = &self.iocgs[self.iocgs[idx].ancestors[l]];
            if g.use_delay && g.delay_nsec > delay {
                delay = g.delay_nsec;
            }
        }
        delay
    }

    /// `ioc_pd_stat`
    pub(crate) fn pd_stat(&self, cg: CgId) -> String {
        if !self.enabled {
            return String::new();
        }
        let Some(g) = self.iocgs.get(cg as usize) else {
            return String::new();
        };
        let mut s = String::new();
        if g.level == 0 {
            let d = VTIME_PER_USEC;
            let vp10k = (self.vtime_base_rate * 10000 + d / 2) / d;
            s.push_str(&format!(" cost.vrate={}.{:02}", vp10k / 100, vp10k % 100));
        }
        s.push_str(&format!(" cost.usage={}", g.last_stat.usage_us));
        if self.debug_stats {
            s.push_str(&format!(
                " cost.wait={} cost.indebt={} cost.indelay={}",
                g.last_stat.wait_us, g.last_stat.indebt_us, g.last_stat.indelay_us
            ));
        }
        s
    }

    /// Mid-run writes of io.weight, io.cost.qos and io.cost.model. Lines
    /// naming another device return None (not this controller's).
    pub(crate) fn write_cgroup_file(
        &mut self,
        ctx: &mut Ctx,
        cg: CgId,
        file: &str,
        value: &str,
    ) -> Option<Result<(), KernelError>> {
        match file {
            "io.weight" => {
                if cg == ROOT {
                    return Some(Err(KernelError::einval(
                        "io.weight does not exist on the root cgroup",
                    )));
                }
                let line = match parse_weight_line(value) {
                    Ok(l) => l,
                    Err(e) => return Some(Err(e)),
                };
                let now = self.ioc_now(ctx.now);
                let idx = cg as usize;
                match line {
                    WeightLine::Default(v) => self.dfl_weight[idx] = v * WEIGHT_ONE,
                    WeightLine::Dev(d, v) => {
                        if d != self.devno {
                            return None;
                        }
                        self.iocgs[idx].cfg_weight = v * WEIGHT_ONE;
                    }
                }
                self.weight_updated(idx, &now);
                Some(Ok(()))
            }
            "io.cost.qos" | "io.cost.model" => {
                let (d, body) = match crate::sim::kerr::split_devno(value) {
                    Ok(x) => x,
                    Err(e) => return Some(Err(e)),
                };
                if d != self.devno {
                    return None;
                }
                if cg != ROOT {
                    return Some(Err(KernelError {
                        errno: Errno::Einval,
                        msg: format!("{file} exists only on the root cgroup"),
                    }));
                }
                Some(if file == "io.cost.qos" {
                    self.apply_qos_body(body, ctx.now)
                } else {
                    self.apply_model_body(body, ctx.now)
                })
            }
            _ => None,
        }
    }
}
