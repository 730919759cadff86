//! Which writes blk-wbt counts, which of its three queues they wait in, and
//! how deep each may go (block/blk-wbt.c: `wbt_should_throttle`,
//! `bio_to_wbt_flags`, `calc_wb_limits`, `get_limit`, the wake limit of
//! `wbt_rqw_done`).

use crate::block::bio::{Bio, Op};

/// `enum wbt_flags`, kept on the bio and its request (`rq->wbt_flags`).
pub mod acct {
    /// A write (or discard) wbt counts in flight.
    pub const TRACKED: u8 = 1;
    /// A read: its issue and completion times mark "other I/O nearby".
    pub const READ: u8 = 2;
    /// From kswapd (never set: the model has no memory reclaim writeback).
    pub const KSWAPD: u8 = 4;
    pub const DISCARD: u8 = 8;
}

/// The three wait queues (`WBT_RWQ_BG`, `WBT_RWQ_KSWAPD`, `WBT_RWQ_DISCARD`).
pub const RWQ_BG: usize = 0;
pub const RWQ_KSWAPD: usize = 1;
pub const RWQ_DISCARD: usize = 2;
pub const NUM_RWQ: usize = 3;

/// Mirrors `get_rq_wait`: the queue of a tracked request.
pub fn rwq_of(flags: u8) -> usize {
    if flags & acct::KSWAPD != 0 {
        RWQ_KSWAPD
    } else if flags & acct::DISCARD != 0 {
        RWQ_DISCARD
    } else {
        RWQ_BG
    }
}

/// The bits of a bio's `bi_opf` `get_limit` looks at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Opf {
    pub discard: bool,
    /// REQ_SYNC, REQ_META or REQ_PRIO (`REQ_HIPRIO`).
    pub hiprio: bool,
    /// REQ_BACKGROUND.
    pub background: bool,
}

impl Opf {
    pub fn of(bio: &Bio) -> Opf {
        Opf {
            discard: bio.op == Op::Discard,
            hiprio: bio.flags.sync || bio.flags.meta,
            background: bio.flags.background,
        }
    }
}

/// Mirrors `wbt_should_throttle`: writes other than O_DIRECT ones (those
/// carry REQ_SYNC and REQ_IDLE together), and discards.
pub fn should_throttle(bio: &Bio) -> bool {
    match bio.op {
        Op::Write => !(bio.flags.sync && bio.flags.idle),
        Op::Discard => true,
        _ => false,
    }
}

/// Mirrors `bio_to_wbt_flags` (for an enabled wbt).
pub fn bio_flags(bio: &Bio) -> u8 {
    if bio.op == Op::Read {
        acct::READ
    } else if should_throttle(bio) {
        let mut f = acct::TRACKED;
        if bio.op == Op::Discard {
            f |= acct::DISCARD;
        }
        f
    } else {
        0
    }
}

/// `wb_normal` and `wb_background`, from `calc_wb_limits`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct WbLimits {
    pub normal: u32,
    pub background: u32,
}

/// Mirrors `calc_wb_limits`: half and a quarter of the scaled depth (both 0
/// while the target is 0, i.e. wbt switched off by a write of 0).
pub fn calc_wb_limits(min_lat_ns: u64, max_depth: u32) -> WbLimits {
    if min_lat_ns == 0 {
        WbLimits::default()
    } else if max_depth <= 2 {
        WbLimits {
            normal: max_depth,
            background: 1,
        }
    } else {
        WbLimits {
            normal: max_depth.div_ceil(2),
            background: (max_depth + 3) / 4,
        }
    }
}

/// What `get_limit` and the wake rule need to know about the moment.
#[derive(Clone, Copy, Debug)]
pub struct Moment {
    /// A task slept in `balance_dirty_pages` within the last second (`wb_recent_wait`).
    pub recent_dirty_wait: bool,
    /// A read was issued or completed within the last HZ/10 (`close_io`).
    pub close_io: bool,
}

/// Mirrors `get_limit`: how many tracked writes of this queue may be in
/// flight for a bio with these flags.
pub fn get_limit(max_depth: u32, lim: WbLimits, opf: Opf, m: Moment) -> u32 {
    if opf.discard {
        return lim.background;
    }
    if opf.hiprio || m.recent_dirty_wait {
        max_depth
    } else if opf.background || m.close_io {
        lim.background
    } else {
        lim.normal
    }
}

/// The limit below which `wbt_rqw_done` wakes sleepers: background for
/// discards; 0 (drain completely) on a device with a volatile write cache
/// unless a task recently slept for dirty pages; normal otherwise.
pub fn wake_limit(flags: u8, lim: WbLimits, write_cache: bool, recent_dirty_wait: bool) -> u32 {
    if flags & acct::DISCARD != 0 {
        lim.background
    } else if write_cache && !recent_dirty_wait {
        0
    } else {
        lim.normal
    }
}

/// Mirrors the tail of `wbt_rqw_done`: with `inflight` left after a
/// completion, should the queue's sleepers be woken?
pub fn should_wake(inflight: u32, limit: u32, background: u32) -> bool {
    if inflight > 0 && inflight >= limit {
        return false;
    }
    inflight == 0 || (limit - inflight) >= background / 2
}
