//! The submission path (`blk_throtl_bio` / `__blk_throtl_bio`), the
//! dispatch-time checks (`tg_may_dispatch` of 2018, `tg_dispatch_time` of
//! today), dispatch rounds (`throtl_select_dispatch`, `throtl_dispatch_tg`,
//! `tg_dispatch_one_bio`), the pending timer (`throtl_pending_timer_fn`), the
//! issue work (`blk_throtl_dispatch_work_fn`) and limit writes
//! (`tg_set_limit`, `tg_conf_updated`).

use super::gate::Gate;
use super::queue::{QnRef, SqId, TD_SQ};
use super::wait::{bps_wait_2018, bps_wait_current, iops_wait_2018, iops_wait_current};
use super::{
    io_max, root_error, Era, QBio, Throttle, BPS_MAX, IOPS_MAX, READ, THROTL_GRP_QUANTUM,
    THROTL_QUANTUM, WRITE,
};
use crate::block::bio::{Bio, BioId, Op};
use crate::block::blk_cgroup::{CgId, ROOT};
use crate::block::ctx::Ctx;
use crate::sim::kerr::{split_devno, KernelError};
use crate::sim::time::Ns;

/// `throtl_bio_data_size`: a discard is charged as one sector.
fn charged_size(op: Op, bytes: u32) -> u32 {
    if op == Op::Discard {
        512
    } else {
        bytes
    }
}

impl Throttle {
    /// `blk_throtl_bio` for one bio entering `submit_bio_noacct`. Returns true
    /// if the throttle took the bio; it comes back through [`Throttle::timer`].
    /// Returns false if it may go on now.
    ///
    /// `bio.flags.throttled` is BIO_THROTTLED (2018) / BIO_BPS_THROTTLED
    /// (current): a bio that arrives with it set is a split remainder (current:
    /// checked for iops only) or was already throttled (2018: passes).
    ///
    /// The levels the gates let through are walked here (`pass_gates`); the
    /// rest of `__blk_throtl_bio` is in `submit_full`, out of line, so that a
    /// bio that passes does not pay for its set-up.
    pub fn submit(&mut self, ctx: &mut Ctx, id: BioId, bio: &mut Bio) -> bool {
        if !self.active {
            return false;
        }
        if bio.cg as usize >= self.tgs.len() {
            self.grow(ctx.cgroups);
        }
        let j = self.jiffy.jiffies(ctx.hz, ctx.now);
        let d = bio.op.is_write() as usize;
        let mut from = (bio.cg, None);
        if !self.era.is_2018() {
            // blk_should_throtl: a split remainder (BIO_BPS_THROTTLED) is
            // checked for iops only
            let t = &self.tgs[bio.cg as usize];
            if !(t.rules_iops[d] || (t.rules_bps[d] && !bio.flags.throttled)) {
                return false;
            }
            if self.shortcut && !bio.flags.throttled {
                match self.pass_gates(bio.cg, d, charged_size(bio.op, bio.bytes), bio.bytes, j) {
                    Some(at) => from = at,
                    None => {
                        bio.flags.throttled = true;
                        return false;
                    }
                }
            }
        }
        self.submit_full(ctx, id, bio, j, from)
    }

    /// `__blk_throtl_bio` from level `from.0` (the bio's group, or the first
    /// level whose gate did not let it through, `from.1` the qnode of the
    /// level below that it passed): the full checks, and the queueing of a
    /// bio over the limits. The current era's `blk_should_throtl` was asked
    /// by the caller.
    #[inline(never)]
    fn submit_full(
        &mut self,
        ctx: &mut Ctx,
        id: BioId,
        bio: &mut Bio,
        j: u64,
        from: (CgId, Option<QnRef>),
    ) -> bool {
        let d = bio.op.is_write() as usize;
        let cg0 = bio.cg;
        let mut qb = QBio {
            id,
            dir: d as u8,
            size: charged_size(bio.op, bio.bytes),
            bytes: bio.bytes,
            tg_bps: false,
            bps_throttled: false,
            t_enq: ctx.now,
        };
        let (mut tg, mut qn) = from;
        if self.era.is_2018() {
            if bio.flags.throttled {
                return false;
            }
            // BIO_THROTTLED is set on every bio that went through, queued or not
            bio.flags.throttled = true;
            if !self.tgs[cg0 as usize].has_rules(d) {
                return false;
            }
            loop {
                // FIFO: never overtake bios already waiting at this level
                if self.tgs[tg as usize].sq.queued(d) > 0 {
                    break;
                }
                if !self.may_dispatch_2018(tg, &qb, j).0 {
                    break;
                }
                self.charge_2018(tg, &qb);
                self.tgs[tg as usize].stats.count_pass(d, qb.bytes);
                self.trim_slice(tg, d, j);
                qn = Some(QnRef {
                    owner: tg,
                    on_parent: true,
                });
                match self.tgs[tg as usize].parent {
                    Some(p) => tg = p,
                    None => return false,
                }
            }
        } else {
            qb.bps_throttled = bio.flags.throttled;
            let (s, hz) = (self.slice, self.hz);
            let fast_ok = self.shortcut && !qb.bps_throttled;
            loop {
                // one lookup of the level when the gate lets the bio through
                // (charged; the slice steps were no-ops)
                let t = &mut self.tgs[tg as usize];
                let t = if fast_ok && t.pass_gate(d, qb.size, j, s, hz) {
                    t
                } else {
                    if self.pass_level(tg, &mut qb, j) {
                        self.trim_slice(tg, d, j);
                    } else if bio.flags.meta && self.era != Era::JointFifo {
                        // bio_issue_as_root_blkg (29390bb5661d, v6.12): pass
                        // over the limit, charged without a trim: a debt
                        self.charge_over_limit(tg, &mut qb);
                        self.tgs[tg as usize].stats.debt_ios[d] += 1;
                    } else {
                        break;
                    }
                    &mut self.tgs[tg as usize]
                };
                t.stats.count_pass(d, qb.bytes);
                qn = Some(QnRef {
                    owner: tg,
                    on_parent: true,
                });
                match t.parent {
                    Some(p) => tg = p,
                    None => {
                        bio.flags.throttled = true;
                        return false;
                    }
                }
            }
        }
        // out of limits: queue at `tg`
        self.nr_queued[d] += 1;
        let st = &mut self.tgs[tg as usize].stats;
        st.queued[d] += 1;
        st.queued_bytes[d] += qb.bytes as u64;
        self.add_bio_tg(
            qb,
            qn.unwrap_or(QnRef {
                owner: tg,
                on_parent: false,
            }),
            tg,
        );
        let t = &self.tgs[tg as usize];
        if t.was_empty || t.iops_was_empty {
            self.update_disptime(tg, j);
            let psq = self.parent_sq(tg);
            self.schedule_next_dispatch(psq, true, j);
        }
        if ctx.trace.enabled() {
            let path = ctx.cgroups.get(tg).path.clone();
            let (q, cg_path) = (
                self.tgs[tg as usize].sq.queued(d),
                ctx.cgroups.get(cg0).path.clone(),
            );
            ctx.trace.emit(ctx.now, "throttle:throtl_queue", || {
                format!(
                    "dev={}:{} bio={id} cg={cg_path} held_at={path} dir={} queued={q}",
                    self.devno.0,
                    self.devno.1,
                    if d == READ { 'R' } else { 'W' }
                )
            });
        }
        true
    }

    /// A bio that passed the throttle was split into `extra` more pieces.
    /// Current kernel: each piece re-enters blk-throttle as a remainder and
    /// is charged one IO at every level (v5.18+). Simplified: the pieces are
    /// charged immediately as a debt at each level (like REQ_META bios)
    /// instead of possibly waiting in the iops queues; later bios pay the
    /// debt. To have remainders wait as in the kernel, call [`Throttle::submit`]
    /// with each remainder with `flags.throttled` set instead. The 6.1 and
    /// 6.12 eras count the pieces the same way (v5.18 9f5ede3c01f9: the
    /// remainder is resubmitted and re-checked for iops). 2018 eras:
    /// pieces inherit BIO_THROTTLED and are not counted (no-op).
    pub fn bio_split(&mut self, ctx: &mut Ctx, cg: CgId, op: Op, extra: u32) {
        if self.era.is_2018() || !self.active || extra == 0 {
            return;
        }
        if cg as usize >= self.tgs.len() {
            self.grow(ctx.cgroups);
        }
        let d = op.is_write() as usize;
        if !self.tgs[cg as usize].rules_iops[d] {
            return;
        }
        let j = ctx.jiffies();
        let mut tg = Some(cg);
        while let Some(t) = tg {
            if self.tgs[t as usize].conf.iops[d] != IOPS_MAX {
                self.update_slice(t, d, j);
            }
            let tgm = &mut self.tgs[t as usize];
            tgm.io_disp[d] = if self.era.is_joint() {
                // unsigned int in 6.1 / 6.12
                (tgm.io_disp[d] as u32).wrapping_add(extra) as i64
            } else {
                tgm.io_disp[d] + extra as i64
            };
            self.tgs[t as usize].stats.debt_ios[d] += extra as u64;
            self.trim_slice(t, d, j);
            tg = self.tgs[t as usize].parent;
        }
    }

    /// Run the pending timers due at `ctx.now` (`throtl_pending_timer_fn`);
    /// bios that reached the device level are issued by the dispatch work and
    /// pushed to `released` in issue order (reads first, then writes, each
    /// round-robin over sources), unless the host runs that work itself
    /// ([`Throttle::issue_by_work`]: they stay there, and
    /// [`Throttle::take_work_queued`] says the work was queued).
    pub fn timer(&mut self, ctx: &mut Ctx, released: &mut Vec<BioId>) {
        let j = ctx.jiffies();
        let start = released.len();
        while let Some(&(at, key)) = self.timers.first() {
            if at > j {
                break;
            }
            self.timers.remove(&(at, key));
            let sq = u32::MAX - key;
            let s = self.sq_mut(sq);
            s.timer = None;
            s.spinning = false;
            self.pending_timer_fn(sq, ctx.now, j, released);
        }
        self.trace_dispatched(ctx, &released[start..]);
    }

    /// When the next pending timer fires (start of its jiffy), if one is armed.
    pub fn next_timer(&self) -> Option<Ns> {
        self.timers.first().map(|&(j, _)| self.hz_t.jiffy_start(j))
    }

    /// A write to `io.max` of cgroup `cg` during the run (`tg_set_limit`).
    pub fn write_io_max(&mut self, ctx: &mut Ctx, cg: CgId, line: &str) -> Result<(), KernelError> {
        let (devno, body) = split_devno(line)?;
        if devno != self.devno {
            return Err(KernelError::enodev(format!(
                "io.max: device {}:{} is not this throttle's device {}:{}",
                devno.0, devno.1, self.devno.0, self.devno.1
            )));
        }
        if cg == ROOT {
            return Err(root_error());
        }
        if cg as usize >= self.tgs.len() {
            self.grow(ctx.cgroups);
        }
        let j = ctx.jiffies();
        // computed before parsing, so it happens even if the write fails
        match self.era {
            Era::Current => self.update_carryover(cg, j),
            Era::JointFifo | Era::JointFifoMinWait => self.update_carryover_joint(cg, j),
            Era::Pre2018 | Era::SliceCapped => {}
        }
        let mut lim = self.tgs[cg as usize].conf;
        io_max::apply_body(body, &mut lim)?;
        self.tgs[cg as usize].conf = lim;
        self.tgs[cg as usize].gate = [Gate::NONE; 2];
        self.conf_updated(cg, j);
        Ok(())
    }

    /// `tg_conf_updated`: propagate rules, restart both slices (2018: cleared;
    /// 6.1 / 6.12: counters cleared, carryover fields kept; current: keeping
    /// the carryover inside the counters), re-evaluate a waiting group at once.
    fn conf_updated(&mut self, cg: CgId, j: u64) {
        self.update_has_rules();
        let clear = self.era != Era::Current;
        let clear_carryover = self.era.is_2018();
        self.start_new_slice(cg, READ, clear, clear_carryover, j);
        self.start_new_slice(cg, WRITE, clear, clear_carryover, j);
        if self.tgs[cg as usize].pend_key.is_some() {
            self.update_disptime(cg, j);
            let psq = self.parent_sq(cg);
            self.schedule_next_dispatch(psq, true, j);
        }
    }

    // ---- dispatch-time checks -------------------------------------------------

    /// v4.12..v5.2 `tg_may_dispatch` for the head bio (or a bio about to pass):
    /// (may go, wait). The wait can be 0 with "may not go" in the
    /// slice-capped era.
    pub(crate) fn may_dispatch_2018(&mut self, cg: CgId, qb: &QBio, j: u64) -> (bool, u64) {
        let d = qb.dir as usize;
        let Some((bps, iops)) = self.limits_in_force(cg, d) else {
            return (true, 0);
        };
        let s = self.slice;
        if self.slice_used(cg, d, j) && self.tgs[cg as usize].sq.queued(d) == 0 {
            self.start_new_slice(cg, d, true, true, j);
        } else {
            self.extend_slice(cg, d, j + s);
        }
        let tg = &self.tgs[cg as usize];
        let el = j - tg.slice_start[d];
        let hz = self.hz;
        let bw = bps_wait_2018(tg.bytes_disp[d] as u64, qb.size as u64, el, bps, s, hz);
        // the iops check is only evaluated when bps passes (short-circuit &&)
        let iw = if bw.is_none() {
            iops_wait_2018(
                tg.io_disp[d] as u64,
                el,
                iops,
                s,
                hz,
                self.era == Era::SliceCapped,
            )
        } else {
            None
        };
        if bw.is_none() && iw.is_none() {
            return (true, 0);
        }
        let w = bw.unwrap_or(0).max(iw.unwrap_or(0));
        self.extend_slice(cg, d, j + w);
        (false, w)
    }

    /// The group's (bps, iops) limits in direction d, or `None` when both
    /// are unlimited (`tg_may_dispatch` lets every bio through).
    pub(crate) fn limits_in_force(&self, cg: CgId, d: usize) -> Option<(u64, u32)> {
        let c = &self.tgs[cg as usize].conf;
        if c.bps[d] == BPS_MAX && c.iops[d] == IOPS_MAX {
            None
        } else {
            Some((c.bps[d], c.iops[d]))
        }
    }

    /// 2018 `throtl_charge_bio`: bytes and one IO together.
    fn charge_2018(&mut self, cg: CgId, qb: &QBio) {
        let d = qb.dir as usize;
        let tg = &mut self.tgs[cg as usize];
        tg.bytes_disp[d] += qb.size as i64;
        tg.io_disp[d] += 1;
    }

    /// `throtl_charge_bps_bio`.
    fn charge_bps(&mut self, cg: CgId, qb: &mut QBio) {
        if !qb.bps_throttled && !qb.tg_bps {
            qb.tg_bps = true;
            self.tgs[cg as usize].bytes_disp[qb.dir as usize] += qb.size as i64;
        }
    }

    /// `throtl_charge_iops_bio`: the per-level bytes flag is dropped when the
    /// bio leaves the level.
    fn charge_iops(&mut self, cg: CgId, qb: &mut QBio) {
        qb.tg_bps = false;
        self.tgs[cg as usize].io_disp[qb.dir as usize] += 1;
    }

    /// `tg_dispatch_bps_time`.
    fn dispatch_bps_time(&mut self, cg: CgId, qb: &QBio, j: u64) -> u64 {
        let d = qb.dir as usize;
        let bps = self.tgs[cg as usize].conf.bps[d];
        if bps == BPS_MAX || qb.bps_throttled || qb.tg_bps {
            return 0;
        }
        self.update_slice(cg, d, j);
        let tg = &self.tgs[cg as usize];
        let w = bps_wait_current(
            tg.bytes_disp[d],
            qb.size as u64,
            j - tg.slice_start[d],
            bps,
            self.slice,
            self.hz,
        );
        self.extend_slice(cg, d, j + w);
        w
    }

    /// `tg_dispatch_iops_time`.
    fn dispatch_iops_time(&mut self, cg: CgId, qb: &QBio, j: u64) -> u64 {
        let d = qb.dir as usize;
        let iops = self.tgs[cg as usize].conf.iops[d];
        if iops == IOPS_MAX {
            return 0;
        }
        self.update_slice(cg, d, j);
        let tg = &self.tgs[cg as usize];
        let w = iops_wait_current(
            tg.io_disp[d],
            j - tg.slice_start[d],
            iops,
            self.slice,
            self.hz,
        );
        self.extend_slice(cg, d, j + w);
        w
    }

    /// `tg_dispatch_time`: bps stage, then (bytes charged) the iops stage.
    fn dispatch_time(&mut self, cg: CgId, qb: &mut QBio, j: u64) -> u64 {
        let w = self.dispatch_bps_time(cg, qb, j);
        if w != 0 {
            return w;
        }
        self.charge_bps(cg, qb);
        self.dispatch_iops_time(cg, qb, j)
    }

    /// `tg_within_limit` of the submission path, then the charge
    /// (`throtl_charge_bio` / `throtl_charge_iops_bio`): true if the bio
    /// passes this level. 6.1 / 6.12: FIFO, then `tg_may_dispatch`; current:
    /// the two-stage check.
    fn pass_level(&mut self, cg: CgId, qb: &mut QBio, j: u64) -> bool {
        if self.era.is_joint() {
            let fifo_empty = self.tgs[cg as usize].sq.queued(qb.dir as usize) == 0;
            if !(fifo_empty && self.may_dispatch_joint(cg, qb, j).0) {
                return false;
            }
            self.charge_joint(cg, qb);
        } else {
            if !self.within_limit(cg, qb, j) {
                return false;
            }
            self.charge_iops(cg, qb);
        }
        true
    }

    /// The charge of a bio let through over the limit (REQ_META).
    fn charge_over_limit(&mut self, cg: CgId, qb: &mut QBio) {
        if self.era.is_joint() {
            self.charge_joint(cg, qb);
        } else {
            self.charge_bps(cg, qb);
            self.charge_iops(cg, qb);
        }
    }

    /// `tg_within_limit` (current kernel).
    fn within_limit(&mut self, cg: CgId, qb: &mut QBio, j: u64) -> bool {
        let d = qb.dir as usize;
        let (nb, ni) = {
            let sq = &self.tgs[cg as usize].sq;
            (sq.nr_queued_bps[d], sq.nr_queued_iops[d])
        };
        if qb.bps_throttled {
            return ni == 0 && self.dispatch_iops_time(cg, qb, j) == 0;
        }
        if nb + ni > 0 {
            // FIFO; but bytes may be charged now so it lands in the iops list
            if nb == 0 && self.dispatch_bps_time(cg, qb, j) == 0 {
                self.charge_bps(cg, qb);
            }
            return false;
        }
        self.dispatch_time(cg, qb, j) == 0
    }

    /// The head of direction d of group cg: `None` when it may be dispatched
    /// now, else `Some(wait)` (0 only in the slice-capped zero-wait case).
    /// May charge the head's bytes (current kernel) as a side effect.
    fn head_wait(&mut self, cg: CgId, d: usize, j: u64) -> Option<Option<u64>> {
        let sq = cg + 1;
        let mut qb = self.peek(sq, d)?;
        let (ok, w) = match self.era {
            Era::Current => {
                let w = self.dispatch_time(cg, &mut qb, j);
                self.set_head(sq, d, qb);
                (w == 0, w)
            }
            Era::JointFifo | Era::JointFifoMinWait => self.may_dispatch_joint(cg, &qb, j),
            Era::Pre2018 | Era::SliceCapped => self.may_dispatch_2018(cg, &qb, j),
        };
        Some((!ok).then_some(w))
    }

    // ---- queueing and dispatch ------------------------------------------------

    /// `throtl_add_bio_tg`.
    fn add_bio_tg(&mut self, qb: QBio, qn: QnRef, cg: CgId) {
        let d = qb.dir as usize;
        if self.tgs[cg as usize].sq.queued(d) == 0 {
            self.tgs[cg as usize].was_empty = true;
        }
        self.qnode_add(qb, qn, cg + 1);
        if self.era == Era::Current
            && qb.bps_throttled
            && self.peek(cg + 1, d).map(|h| h.id) == Some(qb.id)
        {
            self.tgs[cg as usize].iops_was_empty = true;
        }
        self.enqueue_tg(cg);
    }

    /// `tg_update_disptime`: when the group's earlier head may move; its key
    /// in the parent's pending tree.
    fn update_disptime(&mut self, cg: CgId, j: u64) {
        let rw = self.head_wait(cg, READ, j).map(|w| w.unwrap_or(0));
        let ww = self.head_wait(cg, WRITE, j).map(|w| w.unwrap_or(0));
        let tg = &mut self.tgs[cg as usize];
        tg.was_empty = false;
        tg.iops_was_empty = false;
        let min = match (rw, ww) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) | (None, Some(a)) => a,
            (None, None) => return,
        };
        self.dequeue_tg(cg);
        self.tgs[cg as usize].disptime = j + min;
        self.enqueue_tg(cg);
    }

    /// `tg_dispatch_one_bio`: move the head of direction d one level up.
    fn dispatch_one(&mut self, cg: CgId, d: usize, now: Ns, j: u64) {
        let mut qb = self.pop(cg + 1, d).expect("dispatch_one on empty queue");
        match self.era {
            Era::Current => self.charge_iops(cg, &mut qb),
            Era::JointFifo | Era::JointFifoMinWait => self.charge_joint(cg, &qb),
            Era::Pre2018 | Era::SliceCapped => self.charge_2018(cg, &qb),
        }
        let waited = now.saturating_sub(qb.t_enq);
        let st = &mut self.tgs[cg as usize].stats;
        st.wait_ns[d] += waited;
        st.max_wait_ns[d] = st.max_wait_ns[d].max(waited);
        st.count_pass(qb.dir as usize, qb.bytes);
        qb.t_enq = now;
        match self.tgs[cg as usize].parent {
            Some(p) => {
                self.add_bio_tg(
                    qb,
                    QnRef {
                        owner: cg,
                        on_parent: true,
                    },
                    p,
                );
                if self.slice_used(p, d, j) {
                    let start = self.tgs[cg as usize].slice_start[d];
                    self.start_new_slice_with_credit(p, d, start, j);
                }
            }
            None => {
                if !self.era.is_2018() {
                    qb.bps_throttled = true;
                }
                self.qnode_add(
                    qb,
                    QnRef {
                        owner: cg,
                        on_parent: true,
                    },
                    TD_SQ,
                );
                self.nr_queued[d] -= 1;
            }
        }
        self.trim_slice(cg, d, j);
    }

    /// `throtl_dispatch_tg`: up to 6 reads then up to 2 writes.
    fn dispatch_tg(&mut self, cg: CgId, now: Ns, j: u64) -> u32 {
        let max_reads = THROTL_GRP_QUANTUM * 3 / 4;
        let max_writes = THROTL_GRP_QUANTUM - max_reads;
        let mut n = 0;
        for (d, max) in [(READ, max_reads), (WRITE, max_writes)] {
            let mut k = 0;
            while let Some(None) = self.head_wait(cg, d, j) {
                self.dispatch_one(cg, d, now, j);
                k += 1;
                if k >= max {
                    break;
                }
            }
            n += k;
        }
        n
    }

    /// `throtl_select_dispatch`: serve due children of `sq` in disptime order,
    /// up to THROTL_QUANTUM bios. Also reports a spin: the earliest child is
    /// due but cannot move (slice-capped zero wait); the kernel loops with
    /// the lock held until jiffies changes.
    fn select_dispatch(&mut self, sq: SqId, now: Ns, j: u64) -> (u32, bool) {
        let mut n = 0;
        let mut stuck: Vec<CgId> = Vec::new();
        while let Some(&(disptime, _, cg)) = self.sq(sq).pending.first() {
            if j < disptime {
                break;
            }
            if stuck.contains(&cg) {
                return (n, true);
            }
            let moved = self.dispatch_tg(cg, now, j);
            n += moved;
            let t = &self.tgs[cg as usize];
            if t.sq.queued(READ) + t.sq.queued(WRITE) > 0 {
                self.update_disptime(cg, j);
                if moved == 0 && self.tgs[cg as usize].disptime <= j {
                    stuck.push(cg);
                }
            } else {
                self.dequeue_tg(cg);
            }
            if n >= THROTL_QUANTUM {
                break;
            }
        }
        (n, false)
    }

    /// `throtl_pending_timer_fn` for service queue `sq`, including the
    /// upward propagation within the same callback.
    fn pending_timer_fn(&mut self, mut sq: SqId, now: Ns, j: u64, released: &mut Vec<BioId>) {
        loop {
            let mut dispatched = std::mem::take(&mut self.sq_mut(sq).spin_dispatched);
            loop {
                let (n, spin) = self.select_dispatch(sq, now, j);
                dispatched |= n > 0;
                if spin {
                    // resume this callback at the next jiffy
                    let s = self.sq_mut(sq);
                    s.spin_dispatched = dispatched;
                    s.spinning = true;
                    self.arm(sq, j + 1);
                    return;
                }
                if self.schedule_next_dispatch(sq, false, j) {
                    break;
                }
            }
            if !dispatched {
                return;
            }
            if sq == TD_SQ {
                if self.issue_by_work {
                    self.work_queued = true;
                } else {
                    self.dispatch_work(released);
                }
                return;
            }
            let cg = sq - 1;
            let t = &self.tgs[cg as usize];
            if !(t.was_empty || t.iops_was_empty) {
                return;
            }
            self.update_disptime(cg, j);
            let psq = self.parent_sq(cg);
            if self.schedule_next_dispatch(psq, false, j) {
                return;
            }
            sq = psq;
        }
    }

    /// From now on the device-level bios wait there for the host's work
    /// item (`blk_throtl_dispatch_work_fn` on kthrotld, machine/kthrotld.rs)
    /// instead of leaving in the timer call that moved them up.
    pub fn issue_by_work(&mut self) {
        self.issue_by_work = true;
    }

    /// Whether a timer moved bios to the device level since the last call
    /// (it queued the dispatch work); clears it.
    pub fn take_work_queued(&mut self) -> bool {
        std::mem::take(&mut self.work_queued)
    }

    /// The work item's start (`blk_throtl_dispatch_work_fn` under the
    /// queue lock): every bio at the device level now, in the order
    /// [`Throttle::timer`] gives, goes to `taken`, traced as dispatched.
    /// Bios that reach the device level later wait for the next execution.
    pub fn dispatch_work_fn(&mut self, ctx: &mut Ctx, taken: &mut Vec<BioId>) {
        let start = taken.len();
        self.dispatch_work(taken);
        self.trace_dispatched(ctx, &taken[start..]);
    }

    /// `throttle:throtl_dispatch` lines for bios leaving the throttle.
    fn trace_dispatched(&self, ctx: &mut Ctx, ids: &[BioId]) {
        if ctx.trace.enabled() {
            for &id in ids {
                ctx.trace.emit(ctx.now, "throttle:throtl_dispatch", || {
                    format!("dev={}:{} bio={id}", self.devno.0, self.devno.1)
                });
            }
        }
    }

    /// `blk_throtl_dispatch_work_fn`: take every bio off the device-level
    /// queue, reads then writes, and issue them (they do not pass the
    /// throttle again). The kernel runs this from a workqueue shortly after
    /// the timer: on a host with CPUs ([`Throttle::issue_by_work`]) the
    /// host's work item calls it through [`Throttle::dispatch_work_fn`];
    /// on the free host the timer call does, at the timer's instant.
    fn dispatch_work(&mut self, released: &mut Vec<BioId>) {
        for d in [READ, WRITE] {
            while let Some(qb) = self.pop(TD_SQ, d) {
                released.push(qb.id);
            }
        }
    }
}
