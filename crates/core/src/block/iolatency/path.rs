//! blk-iolatency's rq_qos hooks: `blkcg_iolatency_throttle` (a slot at
//! every level), `blkcg_iolatency_done_bio` (slots back, latency recorded,
//! windows closed), `blkiolatency_timer_fn`, the return-to-user delay and
//! the io.stat fields (`iolatency_pd_stat`).

use std::any::Any;

use super::scale::{self, ScaleOutcome, UNLIMITED};
use super::{delay, params, IoLatency, LatStat, TIMER_NS};
use crate::block::bio::{Bio, BioId};
use crate::block::blk_cgroup::CgId;
use crate::block::ctx::Ctx;
use crate::block::rq_qos::{QosVerdict, RqQos};
use crate::sim::kerr::KernelError;
use crate::sim::time::Ns;

impl IoLatency {
    /// `check_scale_change` for group `cg` under parent `p`; a group whose
    /// depth grew wakes its sleepers.
    fn sync_cookie(&mut self, cg: CgId, p: CgId) {
        let info = self.grps[p as usize].child.clone();
        if scale::check_scale_change(&mut self.grps[cg as usize], &info, self.qd)
            == ScaleOutcome::WakeAll
        {
            self.wake(cg, usize::MAX);
        }
    }

    /// Sleepers of group `cg` take slots (at most `max`); each goes on up
    /// the path later, in `drain`.
    fn wake(&mut self, cg: CgId, max: usize) {
        let g = &mut self.grps[cg as usize];
        let depth = g.max_depth;
        let pending = &mut self.pending;
        g.rqw
            .wake(max, |_| depth, &mut |id| pending.push_back((id, cg)));
    }

    /// The level loop of `blkcg_iolatency_throttle` from group `cg` up to
    /// the root: catch up with the parent's cookie, then take a slot
    /// (unconditionally for a bio issued as root, REQ_META). False if the
    /// bio sleeps at some level.
    fn walk(&mut self, mut cg: CgId, id: BioId, as_root: bool) -> bool {
        while let Some(p) = self.parents[cg as usize] {
            self.sync_cookie(cg, p);
            let g = &mut self.grps[cg as usize];
            if as_root {
                g.rqw.inflight += 1;
            } else if !g.rqw.try_enter(g.max_depth) {
                g.rqw.waiters.push_back(id);
                return false;
            }
            cg = p;
        }
        true
    }

    /// Woken sleepers continue up their paths; those with every slot go on
    /// down the block layer.
    fn drain(&mut self, released: &mut Vec<BioId>) {
        while let Some((id, cg)) = self.pending.pop_front() {
            let up = self.parents[cg as usize].expect("sleepers are below the root");
            if self.walk(up, id, false) {
                released.push(id);
            }
        }
    }

    /// Mirrors `iolatency_record_time`. A bio issued as root is not counted
    /// while the group is throttled; if it beat the target, the difference
    /// is added to the group's delay instead.
    fn record_time(&mut self, cg: CgId, start: Ns, now: Ns, as_root: bool) {
        if now <= start {
            return;
        }
        let lat = now - start;
        let g = &mut self.grps[cg as usize];
        if as_root && g.max_depth != UNLIMITED {
            if lat < g.min_lat_ns {
                g.delay.add(now, g.min_lat_ns - lat);
            }
            return;
        }
        g.record(lat);
    }
}

impl RqQos for IoLatency {
    fn name(&self) -> &'static str {
        "iolatency"
    }

    /// Mirrors `blkcg_iolatency_throttle`.
    fn throttle(&mut self, ctx: &mut Ctx, id: BioId, bio: &mut Bio) -> QosVerdict {
        self.ensure(ctx.cgroups, Some(ctx.now));
        if !self.enabled() {
            return QosVerdict::Proceed;
        }
        // BIO_QOS_THROTTLED: done_bio owes this bio's slots back
        bio.flags.qos_throttled = true;
        let through = self.walk(bio.cg, id, bio.flags.meta);
        if self.timer_at.is_none() {
            self.timer_at = Some(ctx.now + TIMER_NS);
        }
        if !self.pending.is_empty() {
            // a scale-up woke sleepers: they go on at once (from `timer`)
            self.kick_at = Some(ctx.now);
        }
        if through {
            QosVerdict::Proceed
        } else {
            QosVerdict::Wait
        }
    }

    /// Mirrors `blkcg_iolatency_done_bio`.
    fn done_bio(&mut self, ctx: &mut Ctx, bio: &Bio, released: &mut Vec<BioId>) {
        if !bio.flags.qos_throttled || !self.enabled() {
            return;
        }
        let now = ctx.now;
        let as_root = bio.flags.meta;
        let mut cg = bio.cg;
        while let Some(p) = self.parents[cg as usize] {
            self.grps[cg as usize].rqw.dec();
            if self.grps[cg as usize].min_lat_ns != 0 {
                // the issue stamp: Q, after blk-throttle (see docs/fidelity/iolatency.md)
                self.record_time(cg, bio.t_queue, now, as_root);
                let g = &mut self.grps[cg as usize];
                let due = g
                    .window_start
                    .is_none_or(|t| now > t && now - t >= g.cur_win_ns);
                if due {
                    g.window_start = Some(now);
                    let stat = std::mem::replace(&mut g.stat, LatStat::new(g.ssd));
                    let mut info = std::mem::take(&mut self.grps[p as usize].child);
                    scale::check_latencies(
                        &mut self.grps[cg as usize],
                        cg,
                        &mut info,
                        stat,
                        now,
                        self.qd,
                    );
                    self.grps[p as usize].child = info;
                }
            }
            self.wake(cg, 1);
            cg = p;
        }
        self.drain(released);
    }

    /// Mirrors `blkiolatency_timer_fn` (and lets go of sleepers a scale-up
    /// in `throttle` woke).
    fn timer(&mut self, ctx: &mut Ctx, released: &mut Vec<BioId>) {
        if self.kick_at.is_some_and(|t| t <= ctx.now) {
            self.kick_at = None;
            self.drain(released);
        }
        if self.timer_at.is_some_and(|t| t <= ctx.now) {
            self.timer_at = None;
            for g in self.grps.iter_mut() {
                scale::timer_tick(&mut g.child, ctx.now, self.qd);
            }
        }
    }

    fn next_timer(&self) -> Option<Ns> {
        match (self.kick_at, self.timer_at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// `blkcg_maybe_throttle_current` for blk-iolatency's part: the largest
    /// owed delay on the path while its `use_delay` is set, capped at 250 ms.
    fn return_delay(&mut self, ctx: &mut Ctx, cg: CgId) -> Ns {
        self.ensure(ctx.cgroups, Some(ctx.now));
        if !self.enabled() {
            return 0;
        }
        let mut path = Vec::new();
        let mut c = cg;
        while let Some(p) = self.parents[c as usize] {
            path.push(c);
            c = p;
        }
        let now = ctx.now;
        let grps = &mut self.grps;
        let mut delays: Vec<&mut delay::Delay> = Vec::new();
        for (i, g) in grps.iter_mut().enumerate() {
            if path.contains(&(i as CgId)) {
                delays.push(&mut g.delay);
            }
        }
        delay::sleep_for(now, delays.into_iter())
    }

    /// Mirrors `iolatency_pd_stat` as printed with `blkcg_debug_stats` on,
    /// after the blkg's `use_delay=N delay_nsec=N` (`blkcg_print_one_stat`,
    /// printed while use_delay is not 0; the model's delay is per policy).
    fn io_stat(&self, cg: CgId) -> String {
        let Some(g) = self.grps.get(cg as usize) else {
            return String::new();
        };
        if !self.enabled() || self.parents[cg as usize].is_none() {
            return String::new();
        }
        let depth = if g.max_depth == UNLIMITED {
            "max".to_string()
        } else {
            g.max_depth.to_string()
        };
        // blk-cgroup's own debug fields come first (`blkcg_print_one_stat`):
        // the blkg's delay state while `use_delay` is set
        let blkg = if g.delay.use_delay != 0 {
            format!(
                " use_delay={} delay_nsec={}",
                g.delay.use_delay, g.delay.delay_ns
            )
        } else {
            String::new()
        };
        match g.stat {
            LatStat::Ps { missed, total } => {
                format!("{blkg} missed={missed} total={total} depth={depth}")
            }
            LatStat::Rqs(_) => format!(
                "{blkg} depth={depth} avg_lat={} win={}",
                g.lat_avg_ns / 1000,
                g.cur_win_ns / 1_000_000
            ),
        }
    }

    /// A mid-run `io.latency` write (`iolatency_set_limit`).
    fn write_file(
        &mut self,
        ctx: &mut Ctx,
        cg: CgId,
        file: &str,
        value: &str,
    ) -> Option<Result<(), KernelError>> {
        if file != "io.latency" {
            return None;
        }
        self.ensure(ctx.cgroups, Some(ctx.now));
        let l = match params::parse_io_latency(value) {
            Ok(l) => l,
            Err(e) => return Some(Err(e)),
        };
        if l.devno != self.devno {
            return None;
        }
        if self.parents[cg as usize].is_none() {
            return Some(Err(KernelError {
                errno: crate::sim::kerr::Errno::Enoent,
                msg: "io.latency does not exist in the root cgroup".into(),
            }));
        }
        self.set_limit(cg, l.target_ns);
        Some(Ok(()))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}
