//! blk-wbt, writeback throttling (block/blk-wbt.c): buffered writes and
//! discards wait before request allocation while too many of them are in
//! flight; the allowed depth halves whenever the fastest read of a
//! monitoring window missed the target (`wbt_lat_usec`) and grows back when
//! reads are fast again or only writes run.
//!
//! Set-up follows the kernel: the policy exists on a blk-mq disk when it is
//! registered (`wbt_enable_default`) unless its scheduler is bfq; bfq
//! (`ELEVATOR_FLAG_DISABLE_WBT`) and enabling blk-iocost turn a
//! default-enabled wbt off (`wbt_disable_default`); a write to
//! `wbt_lat_usec` is a manual setting that neither undoes.

pub mod limits;
pub mod monitor;
#[cfg(test)]
mod tests;

use std::any::Any;

use crate::block::bio::{Bio, BioId, Op};
use crate::block::blk_stat::RqStat;
use crate::block::ctx::Ctx;
use crate::block::request::Request;
use crate::block::rq_qos::{QosVerdict, RqQos};
use crate::block::rq_wait::{RqDepth, RqWait};
use crate::sim::kerr::KernelError;
use crate::sim::time::Ns;
use limits::{acct, Moment, Opf, WbLimits, NUM_RWQ};
use monitor::{Verdict, WindowInputs};

/// `RWB_DEF_DEPTH`: the depth at scale step 0 (capped by the queue depth).
pub const DEF_DEPTH: u32 = 16;

/// `WBT_STATE_*`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EnableState {
    OnDefault,
    OnManual,
    OffDefault,
    OffManual,
}

/// How a scenario sets a device's wbt up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WbtSetup {
    /// The kernel's boot-time default (`wbt_enable_default` at registration).
    Default,
    /// `echo N > /sys/block/DEV/queue/wbt_lat_usec` after boot (-1 = the
    /// default target, 0 = off): a manual setting.
    LatUsec(i64),
}

/// `wbt_default_latency_nsec`: 2 ms on non-rotational devices, 75 ms on rotational ones.
pub fn default_latency_ns(rotational: bool) -> u64 {
    if rotational {
        75_000_000
    } else {
        2_000_000
    }
}

/// Mirrors the parsing of `queue_wb_lat_store` (block/blk-sysfs.c): a
/// decimal signed 64-bit number, at least -1.
pub fn parse_lat_usec(s: &str) -> Result<i64, KernelError> {
    // sysfs hands the write with its newline; kstrtos64 accepts one trailing '\n'
    let t = s.strip_suffix('\n').unwrap_or(s);
    let v: i64 = t.parse().map_err(|e: std::num::ParseIntError| {
        use std::num::IntErrorKind::*;
        match e.kind() {
            PosOverflow | NegOverflow => {
                KernelError::erange(format!("wbt_lat_usec: '{t}' does not fit in 64 bits"))
            }
            _ => KernelError::einval(format!("wbt_lat_usec: '{t}' is not a decimal integer")),
        }
    })?;
    if v < -1 {
        return Err(KernelError::einval(format!(
            "wbt_lat_usec: {v} is below -1 (-1 restores the default, 0 turns wbt off)"
        )));
    }
    Ok(v)
}

/// A submitter asleep in `wbt_wait`.
#[derive(Clone, Copy, Debug)]
struct Sleeper {
    id: BioId,
    opf: Opf,
}

/// What a run reports about a device's wbt.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WbtCounters {
    /// Tracked writes that had to sleep for a slot.
    pub waited: u64,
    pub windows: u64,
    pub scale_ups: u64,
    pub scale_downs: u64,
    /// Lowest and highest scale step reached.
    pub min_step: i32,
    pub max_step: i32,
}

/// `struct rq_wb`: one device's writeback throttling.
pub struct Wbt {
    pub state: EnableState,
    /// The target (`min_lat_nsec`); 0 = off.
    pub min_lat_ns: u64,
    rotational: bool,
    /// QUEUE_FLAG_WC: a volatile write cache (waiters are let go only when
    /// the queue drains, see `limits::wake_limit`).
    write_cache: bool,
    pub depth: RqDepth,
    pub lim: WbLimits,
    unknown_cnt: u32,
    pub cur_win_ns: Ns,
    rqw: [RqWait<Sleeper>; NUM_RWQ],
    /// jiffies of the last read issue and completion (`last_issue`, `last_comp`).
    last_issue_j: u64,
    last_comp_j: u64,
    /// The read being timed at the device (`sync_cookie`, by dev-unique
    /// (sector, issue time)) and its issue time (`sync_issue`).
    sync_cookie: Option<(u64, Ns)>,
    sync_issue: Ns,
    /// `wb->dirty_sleep`: the last balance_dirty_pages sleep on this disk.
    dirty_sleep: Option<Ns>,
    /// blk-stat: this window's read and write statistics, and when the
    /// window ends (`blk_stat_is_active` while Some).
    stat: [RqStat; 2],
    window_end: Option<Ns>,
    pub counters: WbtCounters,
}

impl Wbt {
    /// Mirrors `wbt_init` (default state and target for the device), then
    /// what set-up does to it: bfq or an enabled blk-iocost switch a
    /// default-enabled wbt off; a manual `wbt_lat_usec` write applies last.
    /// `queue_depth` is `blk_queue_depth`.
    pub fn new(
        rotational: bool,
        queue_depth: u32,
        write_cache: bool,
        setup: WbtSetup,
        bfq: bool,
        iocost_enabled: bool,
    ) -> Wbt {
        let mut w = Wbt {
            state: EnableState::OnDefault,
            min_lat_ns: default_latency_ns(rotational),
            rotational,
            write_cache,
            depth: RqDepth::new(queue_depth, DEF_DEPTH),
            lim: WbLimits::default(),
            unknown_cnt: 0,
            cur_win_ns: monitor::WINDOW_NS,
            rqw: Default::default(),
            last_issue_j: 0,
            last_comp_j: 0,
            sync_cookie: None,
            sync_issue: 0,
            dirty_sleep: None,
            stat: [RqStat::default(); 2],
            window_end: None,
            counters: WbtCounters::default(),
        };
        w.update_limits();
        if bfq || iocost_enabled {
            w.disable_default();
        }
        if let WbtSetup::LatUsec(v) = setup {
            w.set_lat_usec(v);
        }
        w
    }

    /// Mirrors `rwb_enabled`.
    pub fn enabled(&self) -> bool {
        matches!(self.state, EnableState::OnDefault | EnableState::OnManual)
    }

    /// What `wbt_lat_usec` reads (`queue_wb_lat_show`): the target in µs;
    /// 0 while wbt is off unless the switch `wbt.lat_show` is `target`
    /// (kernels before "wbt: don't show valid wbt_lat_usec in sysfs while
    /// wbt is disabled").
    pub fn lat_usec_shown(&self, sw: &crate::sim::switches::Switches) -> u64 {
        if self.enabled() || sw.is("wbt.lat_show", "target") {
            self.min_lat_ns / 1000
        } else {
            0
        }
    }

    /// Mirrors `wbt_disable_default`: only a default-enabled wbt goes off.
    pub fn disable_default(&mut self) {
        if self.state == EnableState::OnDefault {
            self.state = EnableState::OffDefault;
            self.window_end = None;
        }
    }

    /// Mirrors `wbt_enable_default` for an existing wbt (iocost switched off again).
    pub fn enable_default(&mut self) {
        if self.state == EnableState::OffDefault {
            self.state = EnableState::OnDefault;
        }
    }

    /// Mirrors `queue_wb_lat_store` → `wbt_set_min_lat` for a parsed value:
    /// -1 = the device's default target; the write makes the state manual.
    pub fn set_lat_usec(&mut self, v: i64) {
        let ns = if v == -1 {
            default_latency_ns(self.rotational)
        } else {
            (v.max(0) as u64).saturating_mul(1000)
        };
        if ns == self.min_lat_ns && self.enabled() == (ns != 0) {
            return;
        }
        self.min_lat_ns = ns;
        self.state = if ns != 0 {
            EnableState::OnManual
        } else {
            EnableState::OffManual
        };
        self.update_limits();
    }

    /// Mirrors `wbt_update_limits` (without the wake-up: nobody sleeps at set-up).
    fn update_limits(&mut self) {
        self.depth.scale_step = 0;
        self.depth.scaled_max = false;
        self.depth.calc_max_depth();
        self.lim = limits::calc_wb_limits(self.min_lat_ns, self.depth.max_depth);
    }

    /// `wb->dirty_sleep = jiffies` in `balance_dirty_pages`: a writer of
    /// this disk slept for its dirty pages.
    pub fn note_dirty_sleep(&mut self, now: Ns) {
        self.dirty_sleep = Some(now);
    }

    /// Mirrors `wb_recent_wait`: such a sleep within the last second (HZ).
    fn recent_dirty_wait(&self, ctx: &Ctx) -> bool {
        self.dirty_sleep
            .is_some_and(|t| ctx.jiffies() < ctx.hz.jiffies(t) + ctx.hz.0 as u64)
    }

    /// Mirrors `close_io`: a read issued or completed within HZ/10.
    fn close_io(&self, ctx: &Ctx) -> bool {
        let now = ctx.jiffies();
        let tenth = ctx.hz.0 as u64 / 10;
        now < self.last_issue_j + tenth || now < self.last_comp_j + tenth
    }

    fn moment(&self, ctx: &Ctx) -> Moment {
        Moment {
            recent_dirty_wait: self.recent_dirty_wait(ctx),
            close_io: self.close_io(ctx),
        }
    }

    /// Mirrors `wbt_inflight`.
    pub fn inflight(&self) -> u32 {
        self.rqw.iter().map(|q| q.inflight).sum()
    }

    /// Mirrors `rwb_arm_timer`: the window for the current step, and a
    /// fresh window of statistics (`blk_stat_activate_nsecs`).
    fn arm_timer(&mut self, now: Ns) {
        self.cur_win_ns = monitor::window_ns(monitor::WINDOW_NS, self.depth.scale_step);
        self.stat = [RqStat::default(); 2];
        self.window_end = Some(now + self.cur_win_ns);
    }

    fn note_step(&mut self) {
        self.counters.min_step = self.counters.min_step.min(self.depth.scale_step);
        self.counters.max_step = self.counters.max_step.max(self.depth.scale_step);
    }

    /// Mirrors `scale_up` (which wakes every queue's sleepers).
    fn scale_up(&mut self, ctx: &Ctx, released: &mut Vec<BioId>) {
        if !self.depth.scale_up() {
            return;
        }
        self.lim = limits::calc_wb_limits(self.min_lat_ns, self.depth.max_depth);
        self.unknown_cnt = 0;
        self.counters.scale_ups += 1;
        self.note_step();
        for q in 0..NUM_RWQ {
            self.wake(ctx, q, released);
        }
    }

    /// Mirrors `scale_down` (no wake-up: less room than before).
    fn scale_down(&mut self, hard: bool) {
        if !self.depth.scale_down(hard) {
            return;
        }
        self.lim = limits::calc_wb_limits(self.min_lat_ns, self.depth.max_depth);
        self.unknown_cnt = 0;
        self.counters.scale_downs += 1;
        self.note_step();
    }

    /// Let queue `q`'s sleepers take slots in order while their limits allow.
    fn wake(&mut self, ctx: &Ctx, q: usize, released: &mut Vec<BioId>) {
        let (max, lim, m) = (self.depth.max_depth, self.lim, self.moment(ctx));
        self.rqw[q].wake(
            usize::MAX,
            |s: &Sleeper| limits::get_limit(max, lim, s.opf, m),
            &mut |s| released.push(s.id),
        );
    }

    /// Mirrors `wb_timer_fn`: judge the window, scale, re-arm while the
    /// step is off centre or tracked writes are in flight.
    fn window_done(&mut self, ctx: &Ctx, released: &mut Vec<BioId>) {
        let inflight = self.inflight();
        let w = WindowInputs {
            sync_issue_lat_ns: if self.sync_cookie.is_some() && self.sync_issue > 0 {
                ctx.now - self.sync_issue
            } else {
                0
            },
            cur_win_ns: self.cur_win_ns,
            min_lat_ns: self.min_lat_ns,
            recent_dirty_wait: self.recent_dirty_wait(ctx),
            inflight,
        };
        self.counters.windows += 1;
        match monitor::latency_exceeded(&self.stat, &w) {
            Verdict::Exceeded => self.scale_down(true),
            Verdict::Ok | Verdict::UnknownWrites => self.scale_up(ctx, released),
            Verdict::Unknown => {
                self.unknown_cnt += 1;
                if self.unknown_cnt >= monitor::UNKNOWN_BUMP {
                    // drift back towards step 0
                    if self.depth.scale_step > 0 {
                        self.scale_up(ctx, released);
                    } else if self.depth.scale_step < 0 {
                        self.scale_down(false);
                    }
                }
            }
        }
        if self.depth.scale_step != 0 || inflight > 0 {
            self.arm_timer(ctx.now);
        } else {
            self.window_end = None;
        }
    }

    /// The limit a bio with `opf` gets now (for tests and reports).
    pub fn limit_for(&self, ctx: &Ctx, opf: Opf) -> u32 {
        limits::get_limit(self.depth.max_depth, self.lim, opf, self.moment(ctx))
    }

    /// One line for the run summary.
    pub fn describe(&self) -> String {
        let c = &self.counters;
        format!(
            "wbt: lat={}us state={:?} step={} max_depth={} (normal {} background {}); \
             windows={} scale_down={} scale_up={} steps {}..{}; writes that waited={}",
            self.min_lat_ns / 1000,
            self.state,
            self.depth.scale_step,
            self.depth.max_depth,
            self.lim.normal,
            self.lim.background,
            c.windows,
            c.scale_downs,
            c.scale_ups,
            c.min_step,
            c.max_step,
            c.waited
        )
    }
}

/// `wbt_data_dir`: reads and writes (discards included) are sampled, other
/// operations (flushes) are not.
fn data_dir(op: Op) -> Option<usize> {
    match op {
        Op::Read => Some(0),
        Op::Write | Op::Discard => Some(1),
        Op::Flush => None,
    }
}

impl RqQos for Wbt {
    fn name(&self) -> &'static str {
        "wbt"
    }

    /// Mirrors `wbt_wait`.
    fn throttle(&mut self, ctx: &mut Ctx, id: BioId, bio: &mut Bio) -> QosVerdict {
        let flags = if self.enabled() {
            limits::bio_flags(bio)
        } else {
            0
        };
        // `wbt_track` copies the same flags to the request
        bio.wbt_acct = flags;
        if flags & acct::TRACKED == 0 {
            if flags & acct::READ != 0 {
                self.last_issue_j = ctx.jiffies();
            }
            return QosVerdict::Proceed;
        }
        let opf = Opf::of(bio);
        let q = limits::rwq_of(flags);
        let limit = limits::get_limit(self.depth.max_depth, self.lim, opf, self.moment(ctx));
        let verdict = if self.rqw[q].try_enter(limit) {
            QosVerdict::Proceed
        } else {
            self.rqw[q].waiters.push_back(Sleeper { id, opf });
            self.counters.waited += 1;
            QosVerdict::Wait
        };
        if self.window_end.is_none() {
            self.arm_timer(ctx.now);
        }
        verdict
    }

    /// Mirrors `wbt_issue`: time the first read at the device.
    fn issue(&mut self, _ctx: &mut Ctx, rq: &Request) {
        if !self.enabled() {
            return;
        }
        if rq.wbt_acct & acct::READ != 0 && self.sync_issue == 0 {
            self.sync_cookie = Some((rq.sector, rq.issue_time));
            self.sync_issue = rq.issue_time;
        }
    }

    /// Mirrors `wbt_done` (and blk-stat's sample of the request, `blk_stat_add`).
    fn done(&mut self, ctx: &mut Ctx, rq: &Request, released: &mut Vec<BioId>) {
        if self.window_end.is_some() && rq.issue_time > 0 {
            if let Some(dir) = data_dir(rq.op) {
                self.stat[dir].add(ctx.now.saturating_sub(rq.issue_time));
            }
        }
        let flags = rq.wbt_acct;
        if flags & acct::TRACKED == 0 {
            if self.sync_cookie == Some((rq.sector, rq.issue_time)) {
                self.sync_cookie = None;
                self.sync_issue = 0;
            }
            if flags & acct::READ != 0 && self.enabled() {
                self.last_comp_j = ctx.jiffies();
            }
            return;
        }
        // `wbt_rqw_done`
        let q = limits::rwq_of(flags);
        self.rqw[q].dec();
        let recent = self.recent_dirty_wait(ctx);
        let limit = limits::wake_limit(flags, self.lim, self.write_cache, recent);
        if !self.rqw[q].waiters.is_empty()
            && limits::should_wake(self.rqw[q].inflight, limit, self.lim.background)
        {
            self.wake(ctx, q, released);
        }
    }

    fn timer(&mut self, ctx: &mut Ctx, released: &mut Vec<BioId>) {
        if self.window_end.is_some_and(|t| t <= ctx.now) {
            self.window_done(ctx, released);
        }
    }

    fn next_timer(&self) -> Option<Ns> {
        self.window_end
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}
