//! blk-iolatency's scaling protocol (block/blk-iolatency.c): a group that
//! misses its target lowers its parent's `scale_cookie`; each sibling
//! notices the change on its next submission and halves (or, on the way
//! back, grows by qd/16) its own queue depth, unless its target is as strict
//! as the missing group's.

use super::{Grp, LatStat};
use crate::block::blk_cgroup::CgId;
use crate::sim::time::Ns;

/// `DEFAULT_SCALE_COOKIE`.
pub const DEFAULT_SCALE_COOKIE: u32 = 1_000_000;
/// `BLKIOLATENCY_MIN_ADJUST_TIME`: at least this long between two scale
/// events of one parent.
pub const MIN_ADJUST_TIME_NS: Ns = 500_000_000;
/// `BLKIOLATENCY_MIN_GOOD_SAMPLES`.
pub const MIN_GOOD_SAMPLES: u64 = 5;
/// Depth limit meaning "unlimited" (`UINT_MAX`).
pub const UNLIMITED: u32 = u32::MAX;
/// After this long without a scale event the timer forgets the group that
/// asked for the scale-down.
pub const SCALE_GRP_EXPIRY_NS: Ns = 5_000_000_000;

/// `struct child_latency_info`: what a parent keeps about its children.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChildLat {
    pub scale_cookie: u32,
    /// The target of the group that caused the current scale-down.
    pub scale_lat: u64,
    pub scale_grp: Option<CgId>,
    /// The last scale event; None: none yet. The kernel keeps 0 there and
    /// compares it with `ktime_get()`, time since boot, which on any running
    /// system is far more than 500 ms (or 5 s) past 0: a parent's first
    /// scale event is never held back, and the timer forgets an old scale
    /// group at once. The simulator's clock starts at 0 with the run, so
    /// "none yet" must be explicit.
    pub last_scale_event: Option<Ns>,
    pub nr_samples: u64,
}

impl Default for ChildLat {
    fn default() -> Self {
        ChildLat {
            scale_cookie: DEFAULT_SCALE_COOKIE,
            scale_lat: 0,
            scale_grp: None,
            last_scale_event: None,
            nr_samples: 0,
        }
    }
}

/// Mirrors `scale_amount`: qd/16 up, qd/4 down, at least 1.
pub fn scale_amount(qd: u32, up: bool) -> u32 {
    (if up { qd >> 4 } else { qd >> 2 }).max(1)
}

/// Mirrors `scale_cookie_change`: move the parent's cookie one step. Near
/// the default it moves by the scale amount; more than qd below it, by 1,
/// and never deeper than 2·qd below.
pub fn scale_cookie_change(info: &mut ChildLat, qd: u32, up: bool) {
    let scale = scale_amount(qd, up);
    let old = info.scale_cookie;
    let diff = DEFAULT_SCALE_COOKIE.saturating_sub(old);
    if up {
        if old as u64 + scale as u64 > DEFAULT_SCALE_COOKIE as u64 {
            info.scale_cookie = DEFAULT_SCALE_COOKIE;
        } else if diff > qd {
            info.scale_cookie += 1;
        } else {
            info.scale_cookie += scale;
        }
    } else if diff > qd {
        if diff < 2 * qd {
            info.scale_cookie -= 1;
        }
    } else {
        info.scale_cookie = info.scale_cookie.saturating_sub(scale);
    }
}

/// Mirrors `scale_change`: a group's depth down by half (from min(depth,
/// qd)), or up by qd/16; at depth 1 going up first pays back one unit of
/// `use_delay`. Returns true when sleepers should be woken.
pub fn scale_change(g: &mut Grp, qd: u32, up: bool) -> bool {
    let old = g.max_depth.min(qd);
    if up {
        if old == 1 && g.delay.unuse_delay() {
            return false;
        }
        if old < qd {
            g.max_depth = (old + scale_amount(qd, true)).min(qd);
            return true;
        }
        false
    } else {
        g.max_depth = (old >> 1).max(1);
        false
    }
}

/// What `check_scale_change` decided for a group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScaleOutcome {
    Unchanged,
    /// Depth changed or unthrottled: wake all sleepers that now fit.
    WakeAll,
}

/// Mirrors `check_scale_change`: group `g` (whose parent keeps `info`)
/// catches up with the parent's cookie.
pub fn check_scale_change(g: &mut Grp, info: &ChildLat, qd: u32) -> ScaleOutcome {
    let cur = info.scale_cookie;
    let mine = g.scale_cookie;
    if cur == mine {
        return ScaleOutcome::Unchanged;
    }
    let down = cur < mine;
    g.scale_cookie = cur;
    if down && g.min_lat_ns != 0 {
        // a group with a target as strict as (or stricter than) the one
        // that missed is not punished for it
        if info.scale_lat == 0 || g.min_lat_ns <= info.scale_lat {
            return ScaleOutcome::Unchanged;
        }
        // nor is one that did 5% or less of the I/O of the last summation
        let thresh = (info.nr_samples * 5 / 100).max(1);
        if g.nr_samples <= thresh {
            return ScaleOutcome::Unchanged;
        }
    }
    if g.max_depth == 1 && down {
        g.delay.use_delay();
        return ScaleOutcome::Unchanged;
    }
    if cur == DEFAULT_SCALE_COOKIE {
        g.delay.clear();
        g.max_depth = UNLIMITED;
        return ScaleOutcome::WakeAll;
    }
    if scale_change(g, qd, !down) {
        ScaleOutcome::WakeAll
    } else {
        ScaleOutcome::Unchanged
    }
}

/// Mirrors `iolatency_check_latencies`: group `g` (id `cg`) closes a window
/// with statistics `stat`; its parent's `info` may scale. `qd` is nr_requests.
pub fn check_latencies(
    g: &mut Grp,
    cg: CgId,
    info: &mut ChildLat,
    stat: LatStat,
    now: Ns,
    qd: u32,
) {
    g.update_lat_avg(&stat);
    if g.sum_ok(&stat) && info.scale_cookie == DEFAULT_SCALE_COOKIE {
        return;
    }
    g.cur_stat.merge(&stat);
    let samples = g.cur_stat.samples();
    info.nr_samples = info.nr_samples - g.nr_samples.min(info.nr_samples) + samples;
    g.nr_samples = samples;
    if info
        .last_scale_event
        .is_some_and(|t| t >= now || now - t < MIN_ADJUST_TIME_NS)
    {
        // too soon after the last scale event: keep accumulating
        return;
    }
    if g.sum_ok(&g.cur_stat) && g.sum_ok(&stat) {
        if samples < MIN_GOOD_SAMPLES {
            return;
        }
        if info.scale_grp == Some(cg) {
            // the group we throttled others for is fine again
            info.last_scale_event = Some(now);
            scale_cookie_change(info, qd, true);
        }
    } else if info.scale_lat == 0 || info.scale_lat >= g.min_lat_ns {
        info.last_scale_event = Some(now);
        if info.scale_grp.is_none() || info.scale_lat > g.min_lat_ns {
            info.scale_lat = g.min_lat_ns;
            info.scale_grp = Some(cg);
        }
        scale_cookie_change(info, qd, false);
    }
    g.cur_stat = LatStat::new(g.ssd);
}

/// Mirrors one parent's part of `blkiolatency_timer_fn`: a lowered cookie
/// with nobody asking for it creeps back up; a scale group that has not
/// caused a scale event for 5 s is forgotten.
pub fn timer_tick(info: &mut ChildLat, now: Ns, qd: u32) {
    if info.scale_cookie >= DEFAULT_SCALE_COOKIE || info.last_scale_event.is_some_and(|t| t >= now)
    {
        return;
    }
    if info.scale_grp.is_none() {
        scale_cookie_change(info, qd, true);
        return;
    }
    if info
        .last_scale_event
        .is_none_or(|t| now - t >= SCALE_GRP_EXPIRY_NS)
    {
        info.scale_grp = None;
    }
}
