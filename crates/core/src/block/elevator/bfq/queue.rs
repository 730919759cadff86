//! `struct bfq_queue`: the requests of one process (sync) or of one
//! cgroup and priority (async), sorted by sector and in arrival order, and
//! the per-queue state BFQ's heuristics read (block/bfq-iosched.c:
//! `bfq_init_bfqq`, `bfq_get_queue`, `bfq_add_request`, `bfq_remove_request`,
//! `bfq_choose_req`, `bfq_find_next_rq`, `bfq_check_fifo`,
//! `bfq_update_io_thinktime`, `bfq_update_io_seektime`).

use std::collections::BTreeMap;

use super::wf2q::{EntId, GId};
use crate::block::ioprio::{Ioprio, IoprioClass, IOPRIO_NORM};
use crate::block::request::{ReqId, Submitter};
use crate::sim::time::Ns;

/// `BFQ_WEIGHT_CONVERSION_COEFF`
pub const WEIGHT_CONVERSION_COEFF: u32 = 10;
/// `IOPRIO_NR_LEVELS` as BFQ uses it (`IOPRIO_BE_NR`).
const BE_NR: u32 = 8;
/// `BFQQ_SEEK_THR`: sectors of distance beyond which a request is a seek.
pub const SEEK_THR: u64 = 8 * 100;
/// `BFQQ_SECT_THR_NONROT` (2 * 32 sectors): on non-rotational devices only
/// requests smaller than this are seeky (4 KiB random reads are), and
/// injection allows one request of this size or more in the drive.
pub const SECT_THR_NONROT: u64 = 2 * 32;
/// `BFQQ_SEEKY`: more than 19 of the last 32 requests were seeks.
const SEEKY_THRESHOLD: u32 = 19;

/// The kind of queue: a process's sync queue, or a cgroup's async queue for
/// one class and level.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum QueueKey {
    Sync(Submitter, GId),
    Async(GId, u8, u8),
}

/// `bfq_ioprio_to_weight`
pub fn ioprio_to_weight(level: u8) -> u32 {
    (BE_NR - (level as u32).min(BE_NR - 1)) * WEIGHT_CONVERSION_COEFF
}

/// `bfq_set_next_ioprio_data`: class index (0 RT, 1 BE, 2 IDLE) and level
/// of a request's priority. Class NONE means the task's nice-derived
/// best-effort level, which is 4 (`IOPRIO_NORM`) for fio's default nice 0.
pub fn class_level(p: Ioprio) -> (usize, u8) {
    match p.class() {
        IoprioClass::Rt => (0, p.level().min(7)),
        IoprioClass::Idle => (2, 7),
        IoprioClass::Be => (1, p.level().min(7)),
        _ => (1, IOPRIO_NORM),
    }
}

/// `struct bfq_ttime`
#[derive(Clone, Copy, Debug, Default)]
pub struct Ttime {
    pub last_end_request: Ns,
    pub samples: u64,
    pub total: u64,
    pub mean: u64,
}

#[derive(Clone, Debug)]
pub struct Queue {
    pub ent: EntId,
    pub group: GId,
    pub sync: bool,
    /// Class index (0 RT, 1 BE, 2 IDLE).
    pub class: usize,
    /// sort_list: (sector, arrival) -> request.
    pub sort: BTreeMap<(u64, u64), ReqId>,
    /// fifo: arrival -> (request, fifo_time).
    pub fifo: BTreeMap<u64, (ReqId, Ns)>,
    pub next_rq: Option<ReqId>,
    pub dispatched: u32,
    /// `bfqq->max_budget`: the budget the feedback settled on.
    pub max_budget: u64,
    /// `bfq_bfqq_busy`: on a service tree or in service with work.
    pub busy: bool,
    /// Counted in the weights tree / pending-groups counters.
    pub pending_counted: bool,
    /// `budget_timeout` in jiffies.
    pub budget_timeout: u64,
    pub wait_request: bool,
    pub fifo_expire_checked: bool,
    pub io_bound: bool,
    pub has_short_ttime: bool,
    pub ttime: Ttime,
    pub seek_history: u32,
    pub last_request_pos: u64,
    /// Injection state (`inject_limit`, `last_serv_time_ns`,
    /// `decrease_time_jif`).
    pub inject_limit: u32,
    pub last_serv_time_ns: u64,
    pub decrease_time_jif: u64,
    /// `requests_within_timer`
    pub requests_within_timer: u32,
    /// Weight raising (`wr_coeff`, `last_wr_start_finish`, `wr_cur_max_time`).
    pub wr_coeff: u32,
    pub last_wr_start_finish: u64,
    pub wr_cur_max_time: u64,
    pub in_large_burst: bool,
    pub just_created: bool,
    /// Base weight from the ioprio (`entity.orig_weight`).
    pub orig_weight: u32,
}

impl Queue {
    /// `bfq_init_bfqq`
    pub fn new(
        key: QueueKey,
        ent: EntId,
        group: GId,
        class: usize,
        level: u8,
        max_budget: u64,
    ) -> Queue {
        let sync = matches!(key, QueueKey::Sync(..));
        Queue {
            ent,
            group,
            sync,
            class,
            sort: BTreeMap::new(),
            fifo: BTreeMap::new(),
            next_rq: None,
            dispatched: 0,
            max_budget: (2 * max_budget) / 3,
            busy: false,
            pending_counted: false,
            budget_timeout: 0,
            wait_request: false,
            fifo_expire_checked: false,
            io_bound: sync,
            has_short_ttime: sync,
            ttime: Ttime::default(),
            seek_history: 1,
            last_request_pos: 0,
            inject_limit: 0,
            last_serv_time_ns: 0,
            decrease_time_jif: 0,
            requests_within_timer: 0,
            wr_coeff: 1,
            last_wr_start_finish: 0,
            wr_cur_max_time: 0,
            in_large_burst: false,
            just_created: true,
            orig_weight: ioprio_to_weight(level),
        }
    }

    pub fn queued(&self) -> usize {
        self.sort.len()
    }

    /// `BFQQ_SEEKY`
    pub fn seeky(&self) -> bool {
        self.seek_history.count_ones() > SEEKY_THRESHOLD
    }

    /// `bfq_update_io_seektime`: shift in whether this request is a seek
    /// (`BFQ_RQ_SEEKY`).
    pub fn update_seektime(&mut self, sector: u64, sectors: u64, nonrot: bool) {
        let last = self.last_request_pos;
        let sdist = sector.abs_diff(last);
        let seek = sdist > SEEK_THR && (!nonrot || sectors < SECT_THR_NONROT);
        self.seek_history = (self.seek_history << 1) | seek as u32;
    }

    /// `bfq_update_io_thinktime`: the exponentially weighted think time
    /// (arrival after the last completion), capped at twice slice_idle.
    pub fn update_thinktime(&mut self, now: Ns, slice_idle_ns: u64) {
        let t = &mut self.ttime;
        let elapsed = now
            .saturating_sub(t.last_end_request)
            .min(2 * slice_idle_ns);
        t.samples = (7 * t.samples + 256) / 8;
        t.total = (7 * t.total + 256 * elapsed) / 8;
        t.mean = (t.total + 128) / t.samples.max(1);
    }

    /// `bfq_update_has_short_ttime` (without the merge/split and icq
    /// reference details): short when the mean think time is at most half
    /// slice_idle once enough samples were taken (`BFQ_SAMPLE_VALID`: 80).
    pub fn update_has_short_ttime(&mut self, slice_idle_ns: u64) {
        if !self.sync || self.class == 2 || slice_idle_ns == 0 {
            return;
        }
        let valid = self.ttime.samples > 80;
        self.has_short_ttime = !(valid && self.ttime.mean > slice_idle_ns >> 1);
    }

    /// `bfq_find_next_rq` after `last` left the queue: an expired FIFO
    /// head (checked once per budget, `bfq_check_fifo`), else the closer of
    /// the requests after and before `last` in sector order.
    pub fn find_next_rq(
        &mut self,
        last_sector: u64,
        last_key: (u64, u64),
        now: Ns,
        back_max: u64,
        back_penalty: u64,
    ) -> Option<ReqId> {
        if !self.fifo_expire_checked {
            self.fifo_expire_checked = true;
            if let Some((_, &(rq, ft))) = self.fifo.iter().next() {
                if now >= ft {
                    return Some(rq);
                }
            }
        }
        let next = self
            .sort
            .range(last_key..)
            .next()
            .or_else(|| self.sort.iter().next())
            .map(|(&k, &r)| (k.0, r));
        let prev = self
            .sort
            .range(..last_key)
            .next_back()
            .map(|(&k, &r)| (k.0, r));
        match (next, prev) {
            (None, None) => None,
            (Some(n), None) => Some(n.1),
            (None, Some(p)) => Some(p.1),
            (Some(n), Some(p)) => Some(choose_req(n, p, last_sector, back_max, back_penalty)),
        }
    }
}

/// `bfq_choose_req` for two requests of the same queue (both sync or both
/// async, no REQ_META difference): the one closer ahead of `last`, where
/// a backward seek within `back_max` sectors costs `back_penalty` times
/// its distance; beyond it a request "wraps" and loses.
pub fn choose_req(
    r1: (u64, ReqId),
    r2: (u64, ReqId),
    last: u64,
    back_max: u64,
    back_penalty: u64,
) -> ReqId {
    let dist = |s: u64| -> Option<u64> {
        if s >= last {
            Some(s - last)
        } else if s + back_max >= last {
            Some((last - s) * back_penalty)
        } else {
            None
        }
    };
    let (s1, s2) = (r1.0, r2.0);
    match (dist(s1), dist(s2)) {
        (Some(d1), Some(d2)) => {
            if d1 < d2 || (d1 == d2 && s1 >= s2) {
                r1.1
            } else {
                r2.1
            }
        }
        (Some(_), None) => r1.1,
        (None, Some(_)) => r2.1,
        (None, None) => {
            if s1 <= s2 {
                r1.1
            } else {
                r2.1
            }
        }
    }
}
