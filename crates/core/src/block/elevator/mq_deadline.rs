//! mq-deadline (block/mq-deadline.c, 6.17-era, plus the late-2025
//! "single dispatch list" fix), together with the parts of the generic
//! elevator merge code it relies on (block/elevator.c `elv_merge`,
//! `elv_attempt_insert_merge`, the back-merge hash and `last_merge` cache;
//! block/blk-merge.c `blk_rq_merge_ok`, `blk_try_merge`, `attempt_merge`,
//! `ll_back_merge_fn`/`ll_front_merge_fn`; block/blk-mq-sched.c
//! `blk_mq_sched_try_merge`).
//!
//! State per priority (RT, BE, IDLE — `ioprio_class_to_prio`, NONE counts as
//! BE): a sector-sorted tree and an insertion-ordered FIFO per direction, the
//! position of the last dispatched request per direction, and the
//! inserted/merged/dispatched/completed counters. Batch counter, starvation
//! counter and last direction are shared by all priorities. Times are jiffies.
//!
//! Requests merged away (a request-request merge after a bio merge, or an
//! insert merge) are handed back through [`MqDeadline::take_freed`]: the
//! caller must free them as `blk_mq_free_request` would (release the tag,
//! call rq_qos done, drop the request). Their bios have been moved to the
//! surviving request, and mq-deadline has already counted them completed.

use std::collections::{BTreeMap, VecDeque};

use super::Elevator;
use crate::block::bio::{Bio, BioId, Op};
use crate::block::ctx::Ctx;
use crate::block::ioprio::{Ioprio, IoprioClass};
use crate::block::request::{ReqId, Request};
use crate::block::disk::DeviceInfo;
use crate::sim::kerr::KernelError;
use crate::sim::slab::Slab;
use crate::sim::time::Hz;

/// `read_expire` default: HZ/2, i.e. 500 ms (kept in ms here, see `Tunables`).
pub const DEFAULT_READ_EXPIRE_MS: i32 = 500;
/// `write_expire` default: 5*HZ.
pub const DEFAULT_WRITE_EXPIRE_MS: i32 = 5000;
/// `prio_aging_expire` default: 10*HZ.
pub const DEFAULT_PRIO_AGING_EXPIRE_MS: i32 = 10_000;
pub const DEFAULT_WRITES_STARVED: i32 = 2;
pub const DEFAULT_FIFO_BATCH: i32 = 16;

const READ: usize = 0;
const WRITE: usize = 1;

/// `enum dd_prio`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum DdPrio {
    Rt = 0,
    Be = 1,
    Idle = 2,
}

impl DdPrio {
    pub const ALL: [DdPrio; 3] = [DdPrio::Rt, DdPrio::Be, DdPrio::Idle];

    /// `ioprio_class_to_prio[]`: levels and hints are ignored; NONE is BE.
    /// (The kernel table has no entry for classes 4..7, which validation keeps
    /// out; the model files them under BE.)
    pub fn of(prio: Ioprio) -> DdPrio {
        match prio.class() {
            IoprioClass::Rt => DdPrio::Rt,
            IoprioClass::Idle => DdPrio::Idle,
            _ => DdPrio::Be,
        }
    }
}

/// `rq_data_dir` / `bio_data_dir`: `op_is_write` of the op code. REQ_OP_FLUSH
/// (2) is even, so flushes count as READ here, unlike `Op::is_write`.
#[inline]
fn data_dir(op: Op) -> usize {
    match op {
        Op::Read | Op::Flush => READ,
        Op::Write | Op::Discard => WRITE,
    }
}

/// `struct io_stats_per_prio`. Counters wrap, as the kernel's u32 do.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PrioStats {
    pub inserted: u32,
    pub merged: u32,
    pub dispatched: u32,
    pub completed: u32,
}

#[derive(Default)]
struct PerPrio {
    /// sort_list: (start sector, insertion sequence) -> request. Equal
    /// sectors keep insertion order, as `elv_rb_add` sends equal keys right.
    sort: [BTreeMap<(u64, u64), ReqId>; 2],
    /// fifo_list: position key -> request (ascending = list order).
    fifo: [BTreeMap<u64, ReqId>; 2],
    latest_pos: [u64; 2],
    stats: PrioStats,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Loc {
    /// Not held: never inserted, dispatched, or freed.
    #[default]
    Out,
    /// On the at-head dispatch list.
    Dispatch,
    /// In a sort tree and a FIFO.
    Queued,
}

/// Per-request scheduler data (`rq->elv.priv[0]`, `rb_node`, `queuelist`,
/// `hash`, `fifo_time`, REQ_NOMERGE), indexed by ReqId.
#[derive(Clone, Copy, Debug, Default)]
struct DdRq {
    /// `elv.priv[0]` is set: the request was counted as inserted.
    counted: bool,
    prio: u8,
    dir: u8,
    loc: Loc,
    /// Key in the sort tree (valid when `loc == Queued`).
    sort_key: (u64, u64),
    /// Key in the FIFO (valid when `loc == Queued`).
    fifo_key: u64,
    /// Key in the back-merge hash, if hashed.
    hash_key: Option<(u64, u64)>,
    /// `rq->fifo_time`, jiffies.
    fifo_time: u64,
    /// REQ_NOMERGE (set by `req_set_nomerge` when a bio merge hit the size limit).
    nomerge: bool,
}

/// The mq-deadline tunables as written through sysfs. Expiry times are kept
/// in the milliseconds that were written (after clamping) and converted with
/// `msecs_to_jiffies` at the current HZ when used, which gives the same
/// jiffies as the kernel's store-time conversion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Tunables {
    read_expire_ms: i32,
    write_expire_ms: i32,
    prio_aging_expire_ms: i32,
    writes_starved: i32,
    fifo_batch: i32,
    front_merges: i32,
    async_depth: i32,
}

pub struct MqDeadline {
    t: Tunables,
    /// blk_rq_get_max_sectors (max_sectors_kb * 2).
    max_sectors: u64,
    nr_requests: u32,
    /// The HZ of the last call that had a Ctx (used for sysfs display).
    hz: Hz,

    dispatch: VecDeque<ReqId>,
    per_prio: [PerPrio; 3],
    last_dir: usize,
    batching: u32,
    starved: u32,

    /// elevator hash: (end sector, reverse insertion sequence) -> request;
    /// the newest entry for a key comes first, as `hash_add` puts it at the
    /// head of its bucket.
    hash: BTreeMap<(u64, u64), ReqId>,
    /// `q->last_merge`
    last_merge: Option<ReqId>,

    rqs: Vec<DdRq>,
    seq: u64,
    held: usize,
    freed: Vec<ReqId>,
}

impl MqDeadline {
    /// `dd_init_sched` + `dd_init_hctx` (async_depth = nr_requests).
    pub fn new(dev: &DeviceInfo) -> MqDeadline {
        MqDeadline {
            t: Tunables {
                read_expire_ms: DEFAULT_READ_EXPIRE_MS,
                write_expire_ms: DEFAULT_WRITE_EXPIRE_MS,
                prio_aging_expire_ms: DEFAULT_PRIO_AGING_EXPIRE_MS,
                writes_starved: DEFAULT_WRITES_STARVED,
                fifo_batch: DEFAULT_FIFO_BATCH,
                front_merges: 1,
                async_depth: dev.nr_requests.min(i32::MAX as u32) as i32,
            },
            max_sectors: (dev.max_sectors_kb as u64) * 2,
            nr_requests: dev.nr_requests,
            hz: Hz(1000),
            dispatch: VecDeque::new(),
            per_prio: Default::default(),
            last_dir: WRITE,
            batching: 0,
            starved: 0,
            hash: BTreeMap::new(),
            last_merge: None,
            rqs: Vec::new(),
            seq: 0,
            held: 0,
            freed: Vec::new(),
        }
    }

    // ----- accounting visible to the engine and reports -------------------

    /// `dd_queued`: inserted - completed, i.e. requests in the scheduler
    /// **and** at the device.
    pub fn dd_queued(&self, p: DdPrio) -> u32 {
        let s = &self.per_prio[p as usize].stats;
        s.inserted.wrapping_sub(s.completed)
    }
    /// `dd_owned_by_driver`: dispatched + merged - completed.
    pub fn owned_by_driver(&self, p: DdPrio) -> u32 {
        let s = &self.per_prio[p as usize].stats;
        s.dispatched
            .wrapping_add(s.merged)
            .wrapping_sub(s.completed)
    }
    pub fn stats(&self, p: DdPrio) -> PrioStats {
        self.per_prio[p as usize].stats
    }
    /// debugfs `batching` and `starved`.
    pub fn batching(&self) -> u32 {
        self.batching
    }
    pub fn starved(&self) -> u32 {
        self.starved
    }

    /// `dd_limit_depth`: the shallow tag depth for a request allocation, or
    /// None when synchronous reads are not limited. The engine applies it to
    /// scheduler-tag allocation (simplification: as a plain cap on tags in
    /// use, not sbitmap's per-word shallow depth).
    pub fn limit_depth(&self, op: Op, sync: bool) -> Option<u32> {
        if sync && data_dir(op) == READ {
            None
        } else {
            Some(self.t.async_depth as u32)
        }
    }

    /// `dd_depth_updated`: nr_requests changed; async_depth follows it.
    pub fn depth_updated(&mut self, nr_requests: u32) {
        self.nr_requests = nr_requests;
        self.t.async_depth = nr_requests.min(i32::MAX as u32) as i32;
    }

    /// Requests merged away since the last call (see the module comment).
    pub fn take_freed(&mut self, out: &mut Vec<ReqId>) {
        out.append(&mut self.freed);
    }

    /// `dd_insert_request` with BLK_MQ_INSERT_AT_HEAD (requeues, flush
    /// sequences): onto the single dispatch list, served before anything else.
    pub fn insert_at_head(&mut self, ctx: &mut Ctx, reqs: &mut Slab<Request>, rq: ReqId) {
        self.insert_request(ctx, reqs, rq, true);
    }

    // ----- time -------------------------------------------------------------

    #[inline]
    fn msecs_to_jiffies(&self, ms: i32) -> u64 {
        self.hz.msecs_to_jiffies(ms.max(0) as u64)
    }
    #[inline]
    fn fifo_expire(&self, dir: usize) -> u64 {
        self.msecs_to_jiffies(if dir == READ {
            self.t.read_expire_ms
        } else {
            self.t.write_expire_ms
        })
    }
    /// `jiffies_to_msecs`, rounding up for HZ that do not divide 1000.
    fn jiffies_to_msecs(&self, j: u64) -> u64 {
        (j * 1000).div_ceil(self.hz.0 as u64)
    }

    // ----- side table ---------------------------------------------------

    #[inline]
    fn slot(&mut self, id: ReqId) -> &mut DdRq {
        let i = id as usize;
        if i >= self.rqs.len() {
            self.rqs.resize(i + 1, DdRq::default());
        }
        &mut self.rqs[i]
    }
    #[inline]
    fn get(&self, id: ReqId) -> DdRq {
        self.rqs.get(id as usize).copied().unwrap_or_default()
    }
    #[inline]
    fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    // ----- sort tree, FIFO, hash ------------------------------------------

    fn sort_add(&mut self, id: ReqId, sector: u64) {
        let seq = self.next_seq();
        let d = self.get(id);
        self.per_prio[d.prio as usize].sort[d.dir as usize].insert((sector, seq), id);
        self.slot(id).sort_key = (sector, seq);
    }
    fn sort_del(&mut self, id: ReqId) {
        let d = self.get(id);
        self.per_prio[d.prio as usize].sort[d.dir as usize].remove(&d.sort_key);
    }
    /// `deadline_from_pos`: the first request with start >= pos.
    fn from_pos(&self, p: usize, dir: usize, pos: u64) -> Option<ReqId> {
        self.per_prio[p].sort[dir]
            .range((pos, 0)..)
            .next()
            .map(|(_, &id)| id)
    }
    /// `elv_rb_find`: a request starting exactly at `sector`. Among equal
    /// starts the model takes the oldest (the kernel's pick depends on the
    /// tree shape).
    fn sort_find(&self, p: usize, dir: usize, sector: u64) -> Option<ReqId> {
        self.per_prio[p].sort[dir]
            .range((sector, 0)..=(sector, u64::MAX))
            .next()
            .map(|(_, &id)| id)
    }
    /// `elv_rb_latter_request`
    fn latter(&self, id: ReqId) -> Option<ReqId> {
        let d = self.get(id);
        let tree = &self.per_prio[d.prio as usize].sort[d.dir as usize];
        tree.range((
            std::ops::Bound::Excluded(d.sort_key),
            std::ops::Bound::Unbounded,
        ))
        .next()
        .map(|(_, &r)| r)
    }
    /// `elv_rb_former_request`
    fn former(&self, id: ReqId) -> Option<ReqId> {
        let d = self.get(id);
        let tree = &self.per_prio[d.prio as usize].sort[d.dir as usize];
        tree.range(..d.sort_key).next_back().map(|(_, &r)| r)
    }

    fn fifo_add_tail(&mut self, id: ReqId) {
        let key = self.next_seq();
        let d = self.get(id);
        self.per_prio[d.prio as usize].fifo[d.dir as usize].insert(key, id);
        self.slot(id).fifo_key = key;
    }
    fn fifo_head(&self, p: usize, dir: usize) -> Option<ReqId> {
        self.per_prio[p].fifo[dir]
            .first_key_value()
            .map(|(_, &id)| id)
    }

    fn hash_add(&mut self, id: ReqId, reqs: &Slab<Request>) {
        let key = (reqs.get(id).end_sector(), u64::MAX - self.next_seq());
        self.hash.insert(key, id);
        self.slot(id).hash_key = Some(key);
    }
    fn hash_del(&mut self, id: ReqId) {
        if let Some(k) = self.slot(id).hash_key.take() {
            self.hash.remove(&k);
        }
    }
    /// `elv_rqhash_reposition`: re-key by the (new) end sector, newest first.
    fn hash_reposition(&mut self, id: ReqId, reqs: &Slab<Request>) {
        if self.get(id).hash_key.is_some() {
            self.hash_del(id);
            self.hash_add(id, reqs);
        }
    }
    /// `elv_rqhash_find`: the newest hashed request ending at `sector`.
    /// Non-mergeable requests leave the hash when they become so (the kernel
    /// drops them lazily during lookups; same outcome).
    fn hash_find(&self, sector: u64) -> Option<ReqId> {
        self.hash
            .range((sector, 0)..=(sector, u64::MAX))
            .next()
            .map(|(_, &id)| id)
    }

    /// `deadline_remove_request`: off the FIFO (or dispatch list), the sort
    /// tree and the hash; forget it as the merge cache.
    fn remove_request(&mut self, id: ReqId) {
        let d = self.get(id);
        match d.loc {
            Loc::Queued => {
                self.per_prio[d.prio as usize].fifo[d.dir as usize].remove(&d.fifo_key);
                self.sort_del(id);
                self.held -= 1;
            }
            Loc::Dispatch => {
                if let Some(pos) = self.dispatch.iter().position(|&r| r == id) {
                    self.dispatch.remove(pos);
                }
                self.held -= 1;
            }
            Loc::Out => {}
        }
        self.slot(id).loc = Loc::Out;
        self.hash_del(id);
        if self.last_merge == Some(id) {
            self.last_merge = None;
        }
    }

    /// `req_set_nomerge`
    fn set_nomerge(&mut self, id: ReqId) {
        self.slot(id).nomerge = true;
        self.hash_del(id);
        if self.last_merge == Some(id) {
            self.last_merge = None;
        }
    }

    // ----- merge rules (blk-merge.c) ------------------------------------

    /// `rq_mergeable` (no passthrough, flush or write-zeroes in the model).
    fn rq_mergeable(&self, rq: &Request, id: ReqId) -> bool {
        rq.op != Op::Flush && !self.get(id).nomerge
    }

    /// `blk_rq_merge_ok` (through `elv_bio_merge_ok`; mq-deadline has no
    /// `allow_merge` hook): both mergeable, same op (hence direction), same
    /// blkg, same full 16-bit priority.
    fn bio_merge_ok(&self, rq: &Request, id: ReqId, bio: &Bio) -> bool {
        self.rq_mergeable(rq, id)
            && bio_mergeable(bio)
            && rq.op == bio.op
            && rq.cg == bio.cg
            && rq.ioprio == bio.ioprio
    }

    /// `attempt_merge(req, next)`: merge `next` (which starts where `req`
    /// ends) into `req`. On success `next` is emptied, removed from the
    /// scheduler, counted completed, and queued on `freed`.
    fn attempt_merge(&mut self, reqs: &mut Slab<Request>, req: ReqId, next: ReqId) -> bool {
        {
            let a = reqs.get(req);
            let b = reqs.get(next);
            if !self.rq_mergeable(a, req) || !self.rq_mergeable(b, next) {
                return false;
            }
            if a.op != b.op || data_dir(a.op) != data_dir(b.op) || a.ioprio != b.ioprio {
                return false;
            }
            // blk_try_req_merge: only a back merge (discards are treated like
            // any other op: max_discard_segments is taken as 1).
            if a.end_sector() != b.sector {
                return false;
            }
            // ll_merge_requests_fn: size limit (no REQ_NOMERGE here) and cgroup.
            if a.sectors() + b.sectors() > self.max_sectors || a.cg != b.cg {
                return false;
            }
        }
        let (nbytes, nstart, nbios) = {
            let b = reqs.get_mut(next);
            let bios = std::mem::take(&mut b.bios);
            let bytes = b.bytes;
            b.bytes = 0;
            (bytes, b.start_time, bios)
        };
        {
            let a = reqs.get_mut(req);
            if nstart < a.start_time {
                a.start_time = nstart;
            }
            a.bios.extend_from_slice(&nbios);
            a.bytes += nbytes;
        }
        // elv_merge_requests -> dd_merged_requests
        let dn = self.get(next);
        let dr = self.get(req);
        self.per_prio[dn.prio as usize].stats.merged =
            self.per_prio[dn.prio as usize].stats.merged.wrapping_add(1);
        let take_over = dr.loc == Loc::Queued
            && dn.loc == Loc::Queued
            && time_before(dn.fifo_time, dr.fifo_time);
        self.remove_request(next);
        if take_over {
            // req takes next's place in the FIFO and its earlier deadline.
            let fifo = &mut self.per_prio[dr.prio as usize].fifo[dr.dir as usize];
            fifo.remove(&dr.fifo_key);
            fifo.insert(dn.fifo_key, req);
            let s = self.slot(req);
            s.fifo_key = dn.fifo_key;
            s.fifo_time = dn.fifo_time;
            reqs.get_mut(req).fifo_time = self.hz.jiffies_to_ns(dn.fifo_time);
        }
        self.hash_reposition(req, reqs);
        self.last_merge = Some(req);
        // blk_mq_free_request(next) -> dd_finish_request
        self.finish(next);
        self.freed.push(next);
        true
    }

    /// `dd_finish_request`: count a counted request completed and forget it.
    fn finish(&mut self, id: ReqId) {
        let d = self.get(id);
        if d.counted {
            let s = &mut self.per_prio[d.prio as usize].stats;
            s.completed = s.completed.wrapping_add(1);
        }
        if (id as usize) < self.rqs.len() {
            self.rqs[id as usize] = DdRq::default();
        }
    }

    /// `elv_attempt_insert_merge`: the cached request, then a chain of
    /// hash lookups (the grown request may in turn back-merge into another).
    fn try_insert_merge(&mut self, reqs: &mut Slab<Request>, rq: ReqId) -> bool {
        if let Some(lm) = self.last_merge {
            if lm != rq && self.attempt_merge(reqs, lm, rq) {
                return true;
            }
        }
        let mut cur = rq;
        let mut merged = false;
        while let Some(h) = self.hash_find(reqs.get(cur).sector) {
            if h == cur || !self.attempt_merge(reqs, h, cur) {
                break;
            }
            merged = true;
            cur = h;
        }
        merged
    }

    fn insert_request(
        &mut self,
        ctx: &mut Ctx,
        reqs: &mut Slab<Request>,
        id: ReqId,
        at_head: bool,
    ) {
        self.hz = ctx.hz;
        let now = ctx.jiffies();
        let (prio, dir, sector, mergeable) = {
            let rq = reqs.get(id);
            (
                DdPrio::of(rq.ioprio) as u8,
                data_dir(rq.op) as u8,
                rq.sector,
                rq.op != Op::Flush,
            )
        };
        debug_assert!(
            self.get(id).loc == Loc::Out,
            "mq-deadline: request {id} inserted twice"
        );
        {
            let counted = self.get(id).counted;
            if !counted {
                let s = &mut self.per_prio[prio as usize].stats;
                s.inserted = s.inserted.wrapping_add(1);
            }
            let s = self.slot(id);
            s.counted = true;
            s.prio = prio;
            s.dir = dir;
        }
        if self.try_insert_merge(reqs, id) {
            return;
        }
        if at_head {
            self.dispatch.push_front(id);
            let s = self.slot(id);
            s.loc = Loc::Dispatch;
            s.fifo_time = now;
        } else {
            self.sort_add(id, sector);
            if mergeable && !self.get(id).nomerge {
                self.hash_add(id, reqs);
                if self.last_merge.is_none() {
                    self.last_merge = Some(id);
                }
            }
            let ft = now.wrapping_add(self.fifo_expire(dir as usize));
            self.fifo_add_tail(id);
            let s = self.slot(id);
            s.loc = Loc::Queued;
            s.fifo_time = ft;
        }
        self.held += 1;
        let ft = self.get(id).fifo_time;
        reqs.get_mut(id).fifo_time = self.hz.jiffies_to_ns(ft);
    }

    // ----- dispatch --------------------------------------------------------

    /// `started_after`: the request's insertion time (fifo_time minus the
    /// *current* expiry of its direction) is after `latest_start`.
    fn started_after(&self, id: ReqId, latest_start: u64) -> bool {
        let d = self.get(id);
        let start = d.fifo_time.wrapping_sub(self.fifo_expire(d.dir as usize));
        time_after(start, latest_start)
    }

    /// `dd_start_request`
    fn start_request(&mut self, reqs: &Slab<Request>, id: ReqId, dir: usize) {
        let rq = reqs.get(id);
        let p = DdPrio::of(rq.ioprio) as usize;
        self.per_prio[p].latest_pos[dir] = rq.sector;
        self.per_prio[p].stats.dispatched = self.per_prio[p].stats.dispatched.wrapping_add(1);
    }

    /// `__dd_dispatch_request` for priority `p`, accepting only requests
    /// inserted at or before `latest_start` (jiffies).
    fn dispatch_from(
        &mut self,
        reqs: &Slab<Request>,
        p: usize,
        now: u64,
        latest_start: u64,
    ) -> Option<ReqId> {
        let cont = self.from_pos(p, self.last_dir, self.per_prio[p].latest_pos[self.last_dir]);
        let rq = match cont {
            // Still entitled to batch: no deadline check.
            Some(r) if self.batching < self.t.fifo_batch as u32 => r,
            _ => {
                let pp = &self.per_prio[p];
                let dir = if !pp.fifo[READ].is_empty() {
                    if !pp.fifo[WRITE].is_empty() && {
                        let s = self.starved;
                        self.starved = s.wrapping_add(1);
                        s >= self.t.writes_starved as u32
                    } {
                        self.starved = 0;
                        WRITE
                    } else {
                        READ
                    }
                } else if !pp.fifo[WRITE].is_empty() {
                    self.starved = 0;
                    WRITE
                } else {
                    return None;
                };
                let next = self.from_pos(p, dir, self.per_prio[p].latest_pos[dir]);
                let head = self.fifo_head(p, dir).expect("non-empty FIFO");
                // deadline_check_fifo: the head expired (fifo_time <= jiffies).
                let expired = !time_after(self.get(head).fifo_time, now);
                let r = match next {
                    Some(n) if !expired => n,
                    _ => head,
                };
                self.last_dir = dir;
                self.batching = 0;
                r
            }
        };
        if self.started_after(rq, latest_start) {
            return None;
        }
        self.batching += 1;
        let dir = self.get(rq).dir as usize;
        self.remove_request(rq);
        self.start_request(reqs, rq, dir);
        Some(rq)
    }

    /// `dd_dispatch_prio_aged_requests`
    fn dispatch_aged(&mut self, reqs: &Slab<Request>, now: u64) -> Option<ReqId> {
        let cnt = DdPrio::ALL
            .iter()
            .filter(|&&p| self.dd_queued(p) != 0)
            .count();
        if cnt < 2 {
            return None;
        }
        let latest = now.wrapping_sub(self.msecs_to_jiffies(self.t.prio_aging_expire_ms));
        for p in [DdPrio::Be as usize, DdPrio::Idle as usize] {
            if let Some(r) = self.dispatch_from(reqs, p, now, latest) {
                return Some(r);
            }
        }
        None
    }

    fn store(&mut self, name: &str, value: &str) -> Result<(), KernelError> {
        let v = kstrtoint(value).map_err(|e| KernelError {
            errno: e.errno,
            msg: format!("mq-deadline {name}: {}", e.msg),
        })?;
        // STORE_FUNCTION clamps instead of rejecting.
        let c = |lo: i32, hi: i32| v.clamp(lo, hi);
        match name {
            "read_expire" => self.t.read_expire_ms = c(0, i32::MAX),
            "write_expire" => self.t.write_expire_ms = c(0, i32::MAX),
            "prio_aging_expire" => self.t.prio_aging_expire_ms = c(0, i32::MAX),
            "writes_starved" => self.t.writes_starved = v,
            "front_merges" => self.t.front_merges = c(0, 1),
            "async_depth" => self.t.async_depth = c(1, i32::MAX),
            "fifo_batch" => self.t.fifo_batch = c(0, i32::MAX),
            _ => unreachable!(),
        }
        Ok(())
    }
}

/// `bio_mergeable`: REQ_NOMERGE_FLAGS (FUA, PREFLUSH) and flushes never merge.
#[inline]
fn bio_mergeable(bio: &Bio) -> bool {
    !bio.flags.fua && bio.op != Op::Flush
}

/// `time_after(a, b)` on wrapping jiffies.
#[inline]
fn time_after(a: u64, b: u64) -> bool {
    (b.wrapping_sub(a) as i64) < 0
}
#[inline]
fn time_before(a: u64, b: u64) -> bool {
    time_after(b, a)
}

const TUNABLES: [&str; 7] = [
    "async_depth",
    "fifo_batch",
    "front_merges",
    "prio_aging_expire",
    "read_expire",
    "write_expire",
    "writes_starved",
];

/// `kstrtoint(s, 0, &v)`: optional sign, base from the prefix (0x hex, 0
/// octal, else decimal), one trailing newline allowed; -EINVAL for anything
/// else, -ERANGE when the value does not fit an int.
pub fn kstrtoint(s: &str) -> Result<i32, KernelError> {
    let bad = || KernelError::einval(format!("'{}' is not an integer", s.escape_debug()));
    let b = s.as_bytes();
    let (neg, mut i) = match b.first() {
        Some(b'-') => (true, 1),
        Some(b'+') => (false, 1),
        _ => (false, 0),
    };
    let radix: u32 = if b.get(i) == Some(&b'0') {
        if matches!(b.get(i + 1), Some(b'x') | Some(b'X'))
            && b.get(i + 2).is_some_and(|c| c.is_ascii_hexdigit())
        {
            i += 2;
            16
        } else {
            8
        }
    } else {
        10
    };
    let mut val: u64 = 0;
    let mut digits = 0;
    let mut overflow = false;
    while let Some(&c) = b.get(i) {
        let Some(d) = (c as char).to_digit(radix) else {
            break;
        };
        match val
            .checked_mul(radix as u64)
            .and_then(|x| x.checked_add(d as u64))
        {
            Some(x) => val = x,
            None => overflow = true,
        }
        digits += 1;
        i += 1;
    }
    if digits == 0 {
        return Err(bad());
    }
    if b.get(i) == Some(&b'\n') {
        i += 1;
    }
    if i != b.len() {
        return Err(bad());
    }
    let range = || KernelError::erange(format!("'{}' does not fit in an int", s.trim_end()));
    if overflow {
        return Err(range());
    }
    let v: i64 = if neg {
        if val > i64::MAX as u64 + 1 {
            return Err(range());
        }
        (val as i64).wrapping_neg()
    } else {
        if val > i64::MAX as u64 {
            return Err(range());
        }
        val as i64
    };
    i32::try_from(v).map_err(|_| range())
}

impl Elevator for MqDeadline {
    fn take_freed(&mut self, out: &mut Vec<ReqId>) {
        MqDeadline::take_freed(self, out)
    }
    fn name(&self) -> &'static str {
        "mq-deadline"
    }

    /// `dd_bio_merge` -> `blk_mq_sched_try_merge` -> `elv_merge`: the cached
    /// `last_merge` request (back or front, regardless of `front_merges`),
    /// then the back-merge hash, then `dd_request_merge` (front merge within
    /// the bio's priority and direction, if `front_merges`). A merge that
    /// would exceed max_sectors marks the request REQ_NOMERGE and fails.
    /// After a bio merge the grown request may absorb its neighbour in sector
    /// order (`attempt_back_merge` / `attempt_front_merge`); the returned id
    /// is the request that now holds the bio.
    fn bio_merge(
        &mut self,
        ctx: &mut Ctx,
        reqs: &mut Slab<Request>,
        id: BioId,
        bio: &Bio,
    ) -> Option<ReqId> {
        self.hz = ctx.hz;
        if !bio_mergeable(bio) {
            return None;
        }
        #[derive(PartialEq)]
        enum Kind {
            Back,
            Front,
        }
        let mut found: Option<(ReqId, Kind)> = None;
        if let Some(lm) = self.last_merge {
            let rq = reqs.get(lm);
            if self.bio_merge_ok(rq, lm, bio) {
                if rq.end_sector() == bio.sector {
                    found = Some((lm, Kind::Back));
                } else if rq.sector.wrapping_sub(bio.sectors()) == bio.sector {
                    found = Some((lm, Kind::Front));
                }
            }
        }
        if found.is_none() {
            if let Some(h) = self.hash_find(bio.sector) {
                if self.bio_merge_ok(reqs.get(h), h, bio) {
                    found = Some((h, Kind::Back));
                }
            }
        }
        if found.is_none() && self.t.front_merges != 0 {
            let p = DdPrio::of(bio.ioprio) as usize;
            if let Some(r) = self.sort_find(p, data_dir(bio.op), bio.end_sector()) {
                if self.bio_merge_ok(reqs.get(r), r, bio) {
                    found = Some((r, Kind::Front));
                }
            }
        }
        let (rq, kind) = found?;
        // ll_back_merge_fn / ll_front_merge_fn: size limit.
        if reqs.get(rq).sectors() + bio.sectors() > self.max_sectors {
            self.set_nomerge(rq);
            return None;
        }
        match kind {
            Kind::Back => {
                let r = reqs.get_mut(rq);
                r.bytes += bio.bytes;
                r.bios.push(id);
                if let Some(next) = self.latter(rq) {
                    if self.attempt_merge(reqs, rq, next) {
                        return Some(rq);
                    }
                }
                // elv_merged_request(BACK)
                self.hash_reposition(rq, reqs);
                self.last_merge = Some(rq);
                Some(rq)
            }
            Kind::Front => {
                let r = reqs.get_mut(rq);
                r.sector = bio.sector;
                r.bytes += bio.bytes;
                r.bios.insert(0, id);
                if let Some(prev) = self.former(rq) {
                    if self.attempt_merge(reqs, prev, rq) {
                        return Some(prev);
                    }
                }
                // elv_merged_request(FRONT) -> dd_request_merged: re-sort.
                if self.get(rq).loc == Loc::Queued {
                    self.sort_del(rq);
                    let s = reqs.get(rq).sector;
                    self.sort_add(rq, s);
                }
                self.last_merge = Some(rq);
                Some(rq)
            }
        }
    }

    /// `dd_insert_request` (not at head).
    fn insert(&mut self, ctx: &mut Ctx, reqs: &mut Slab<Request>, rq: ReqId) {
        self.insert_request(ctx, reqs, rq, false);
    }

    /// `dd_dispatch_request`: the dispatch list first; then an aged BE/IDLE
    /// request; then RT, BE, IDLE in order, where a priority with requests
    /// queued *or in flight* blocks the lower ones even when it has nothing
    /// to dispatch right now.
    fn dispatch(&mut self, ctx: &mut Ctx, reqs: &mut Slab<Request>) -> Option<ReqId> {
        self.hz = ctx.hz;
        let now = ctx.jiffies();
        if let Some(rq) = self.dispatch.pop_front() {
            self.slot(rq).loc = Loc::Out;
            self.held -= 1;
            let dir = self.get(rq).dir as usize;
            self.start_request(reqs, rq, dir);
            return Some(rq);
        }
        if let Some(rq) = self.dispatch_aged(reqs, now) {
            return Some(rq);
        }
        for p in DdPrio::ALL {
            let rq = self.dispatch_from(reqs, p as usize, now, now);
            if rq.is_some() || self.dd_queued(p) != 0 {
                return rq;
            }
        }
        None
    }

    fn has_work(&self) -> bool {
        self.held > 0
    }

    /// `dd_finish_request` for a request that completed (or was freed).
    fn completed(&mut self, _ctx: &mut Ctx, _reqs: &Slab<Request>, rq: ReqId) {
        debug_assert!(
            self.get(rq).loc == Loc::Out,
            "mq-deadline: request {rq} completed while queued"
        );
        self.finish(rq);
    }

    fn queued(&self) -> usize {
        self.held
    }

    fn set_tunable(&mut self, name: &str, value: &str) -> Result<(), String> {
        if !TUNABLES.contains(&name) {
            return Err(format!(
                "mq-deadline has no tunable '{name}' (it has: {})",
                TUNABLES.join(", ")
            ));
        }
        self.store(name, value).map_err(|e| e.to_string())
    }

    /// As sysfs shows them: expiry times in ms (`jiffies_to_msecs` of the
    /// stored jiffies, so values that are not whole jiffies read back rounded).
    fn tunables(&self) -> Vec<(String, String)> {
        let ms = |v: i32| self.jiffies_to_msecs(self.msecs_to_jiffies(v)).to_string();
        TUNABLES
            .iter()
            .map(|&n| {
                let v = match n {
                    "async_depth" => self.t.async_depth.to_string(),
                    "fifo_batch" => self.t.fifo_batch.to_string(),
                    "front_merges" => self.t.front_merges.to_string(),
                    "prio_aging_expire" => ms(self.t.prio_aging_expire_ms),
                    "read_expire" => ms(self.t.read_expire_ms),
                    "write_expire" => ms(self.t.write_expire_ms),
                    _ => self.t.writes_starved.to_string(),
                };
                (n.to_string(), v)
            })
            .collect()
    }
}

#[cfg(test)]
impl MqDeadline {
    /// FIFO contents in list order (tests).
    fn fifo_order(&self, p: DdPrio, dir: usize) -> Vec<ReqId> {
        self.per_prio[p as usize].fifo[dir]
            .values()
            .copied()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::bio::{BioFlags, Origin};
    use crate::block::blk_cgroup::{CgId, CgroupTree};
    use crate::sim::kerr::Errno;
    use crate::sim::switches::Switches;
    use crate::sim::time::{Ns, NSEC_PER_MSEC};
    use crate::sim::trace::Tracer;

    const RT: Ioprio = Ioprio(1 << 13 | 4);
    const BE: Ioprio = Ioprio(2 << 13 | 4);
    const IDLE: Ioprio = Ioprio(3 << 13);

    fn dev() -> DeviceInfo {
        DeviceInfo {
            name: "nullb0".into(),
            major: 252,
            minor: 0,
            rotational: false,
            nr_requests: 64,
            queue_depth: 64,
            nr_hw_queues: 1,
            max_sectors_kb: 128,
            logical_block_size: 512,
            capacity_bytes: 1 << 40,
        }
    }

    struct H {
        reqs: Slab<Request>,
        dev: DeviceInfo,
        cg: CgroupTree,
        sw: Switches,
        tr: Tracer,
        now: Ns,
        hz: Hz,
        dd: MqDeadline,
        next_bio: BioId,
    }

    macro_rules! ctx {
        ($h:expr) => {
            Ctx {
                now: $h.now,
                hz: $h.hz,
                dev: &$h.dev,
                cgroups: &$h.cg,
                switches: &$h.sw,
                trace: &mut $h.tr,
            }
        };
    }

    impl H {
        fn new() -> H {
            let d = dev();
            let dd = MqDeadline::new(&d);
            H {
                reqs: Slab::default(),
                dev: d,
                cg: CgroupTree::new(),
                sw: Switches::default(),
                tr: Tracer::default(),
                now: 0,
                hz: Hz(1000),
                dd,
                next_bio: 0,
            }
        }
        fn at_ms(&mut self, ms: u64) {
            self.now = ms * NSEC_PER_MSEC;
        }
        fn mkreq(&mut self, op: Op, sector: u64, sectors: u64, prio: Ioprio, cg: CgId) -> ReqId {
            let b = self.next_bio;
            self.next_bio += 1;
            self.reqs.insert(Request {
                dev: 0,
                op,
                cg,
                ioprio: prio,
                sector,
                bytes: (sectors << 9) as u32,
                sync: op == Op::Read,
                bios: vec![b],
                alloc_time: self.now,
                start_time: self.now,
                insert_time: self.now,
                issue_time: 0,
                fifo_time: 0,
                done_time: 0,
            })
        }
        fn ins(&mut self, op: Op, sector: u64, sectors: u64, prio: Ioprio) -> ReqId {
            let id = self.mkreq(op, sector, sectors, prio, 0);
            let mut c = ctx!(self);
            self.dd.insert(&mut c, &mut self.reqs, id);
            id
        }
        fn disp(&mut self) -> Option<ReqId> {
            let mut c = ctx!(self);
            self.dd.dispatch(&mut c, &mut self.reqs)
        }
        /// Dispatch and complete at once; returns (op, sector) of each.
        fn drain(&mut self) -> Vec<(Op, u64)> {
            let mut out = Vec::new();
            while let Some(r) = self.disp() {
                let rq = self.reqs.get(r);
                out.push((rq.op, rq.sector));
                self.done(r);
            }
            out
        }
        fn done(&mut self, r: ReqId) {
            self.reqs.remove(r);
            let mut c = ctx!(self);
            self.dd.completed(&mut c, &self.reqs, r);
        }
        fn bio(
            &mut self,
            op: Op,
            sector: u64,
            sectors: u64,
            prio: Ioprio,
            cg: CgId,
        ) -> (BioId, Bio) {
            let id = self.next_bio;
            self.next_bio += 1;
            let b = Bio {
                dev: 0,
                cg,
                op,
                flags: BioFlags::default(),
                sector,
                bytes: (sectors << 9) as u32,
                ioprio: prio,
                origin: Origin::Kernel { tag: 0 },
                t_submit: self.now,
                t_alloc: self.now,
                t_queue: self.now,
                t_issue: 0,
                t_done: 0,
                pending_frags: 0,
                qos_cost: 0,
                chain_next: crate::block::bio::NO_BIO,
                qos_pos: 0,
            };
            (id, b)
        }
        fn merge(&mut self, b: &(BioId, Bio)) -> Option<ReqId> {
            let mut c = ctx!(self);
            self.dd.bio_merge(&mut c, &mut self.reqs, b.0, &b.1)
        }
        fn mb(
            &mut self,
            op: Op,
            sector: u64,
            sectors: u64,
            prio: Ioprio,
            cg: CgId,
        ) -> Option<ReqId> {
            let b = self.bio(op, sector, sectors, prio, cg);
            self.merge(&b)
        }
        fn freed(&mut self) -> Vec<ReqId> {
            let mut v = Vec::new();
            self.dd.take_freed(&mut v);
            v
        }
    }

    fn sectors(v: &[(Op, u64)]) -> Vec<u64> {
        v.iter().map(|x| x.1).collect()
    }

    #[test]
    fn sorted_within_a_batch() {
        let mut h = H::new();
        for s in [800, 100, 500, 300] {
            h.ins(Op::Read, s, 8, BE);
        }
        assert_eq!(sectors(&h.drain()), vec![100, 300, 500, 800]);
    }

    /// A batch continues upward from the last position; a new batch starts
    /// from the FIFO head only if it has expired.
    #[test]
    fn fifo_expiry_picks_the_next_batch_start() {
        // Not expired: sector order.
        let mut h = H::new();
        h.ins(Op::Read, 800, 8, BE);
        h.at_ms(100);
        h.ins(Op::Read, 100, 8, BE);
        h.at_ms(499);
        assert_eq!(sectors(&h.drain()), vec![100, 800]);
        // Expired (read_expire 500 ms): the oldest request first.
        let mut h = H::new();
        h.ins(Op::Read, 800, 8, BE);
        h.at_ms(100);
        h.ins(Op::Read, 100, 8, BE);
        h.at_ms(500);
        assert_eq!(sectors(&h.drain()), vec![800, 100]);
        // A running batch ignores expiry: soft deadlines.
        let mut h = H::new();
        h.dd.set_tunable("fifo_batch", "4").unwrap();
        h.ins(Op::Read, 10, 8, BE);
        h.ins(Op::Read, 20, 8, BE);
        h.at_ms(100);
        h.ins(Op::Read, 5, 8, BE); // oldest is sector 10; 5 comes later
        h.at_ms(1000);
        // Batch starts at the expired head (10), continues to 20, then 5.
        assert_eq!(sectors(&h.drain()), vec![10, 20, 5]);
    }

    /// Reads and writes in one priority: batches of fifo_batch (16) in
    /// sector order; with writes waiting, the third direction choice goes to
    /// writes.
    #[test]
    fn batches_and_writes_starved() {
        let mut h = H::new();
        for i in 0..40 {
            // Gaps between requests, or they would be insert-merged.
            h.ins(Op::Read, 10_000 + i * 16, 8, BE);
            h.ins(Op::Write, 50_000 + i * 16, 8, BE);
        }
        let got = h.drain();
        let ops: Vec<Op> = got.iter().map(|x| x.0).collect();
        // A fresh scheduler has last_dir = WRITE and batching = 0, so the very
        // first dispatch "continues" a write batch (a quirk of the code).
        // Then: two read batches, writes on the third choice, the last reads,
        // the last writes.
        let mut want = vec![Op::Write; 16];
        want.extend([Op::Read; 32]);
        want.extend([Op::Write; 16]);
        want.extend([Op::Read; 8]);
        want.extend([Op::Write; 8]);
        assert_eq!(ops, want);
        let r: Vec<u64> = got
            .iter()
            .filter(|x| x.0 == Op::Read)
            .map(|x| x.1)
            .collect();
        assert!(r.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn writes_starved_counts_direction_choices() {
        let run = |ws: &str| {
            let mut h = H::new();
            h.dd.set_tunable("fifo_batch", "1").unwrap();
            h.dd.set_tunable("writes_starved", ws).unwrap();
            for i in 0..6 {
                h.ins(Op::Read, 1000 + i * 16, 8, BE);
                h.ins(Op::Write, 9000 + i * 16, 8, BE);
            }
            h.drain()
                .iter()
                .map(|x| if x.0 == Op::Read { 'R' } else { 'W' })
                .collect::<String>()
        };
        // The first W is the initial write "batch" (see above); then every
        // third direction choice goes to writes.
        assert_eq!(run("2"), "WRRWRRWRRWWW");
        assert_eq!(run("1"), "WRWRWRWRWRWR");
        assert_eq!(run("0"), "WWWWWWRRRRRR");
        // Negative values compare as huge unsigned numbers: writes wait for all reads.
        assert_eq!(run("-1"), "WRRRRRRWWWWW");
    }

    /// RT before BE before IDLE, and a priority with requests at the device
    /// blocks the lower ones (dd_queued counts in-flight requests).
    #[test]
    fn strict_priority_counts_in_flight() {
        let mut h = H::new();
        let i = h.ins(Op::Read, 300, 8, IDLE);
        let b = h.ins(Op::Read, 200, 8, BE);
        let r = h.ins(Op::Read, 100, 8, RT);
        assert_eq!(h.disp(), Some(r));
        assert_eq!(h.dd.dd_queued(DdPrio::Rt), 1);
        assert_eq!(
            h.disp(),
            None,
            "BE waits while the RT request is at the device"
        );
        assert!(h.dd.has_work());
        h.done(r);
        assert_eq!(h.dd.dd_queued(DdPrio::Rt), 0);
        assert_eq!(h.disp(), Some(b));
        assert_eq!(h.disp(), None);
        h.done(b);
        assert_eq!(h.disp(), Some(i));
        let s = h.dd.stats(DdPrio::Idle);
        assert_eq!((s.inserted, s.dispatched, s.completed), (1, 1, 0));
        assert_eq!(h.dd.owned_by_driver(DdPrio::Idle), 1);
        // NONE-class requests are BE.
        assert_eq!(DdPrio::of(Ioprio(0)), DdPrio::Be);
        assert_eq!(DdPrio::of(Ioprio::new(IoprioClass::Rt, 7, 5)), DdPrio::Rt);
    }

    /// A steady RT stream: BE gets nothing until its request is
    /// prio_aging_expire (10 s) old, then the aging path serves it.
    #[test]
    fn prio_aging_rescues_starved_be() {
        let mut h = H::new();
        let b = h.ins(Op::Read, 5000, 8, BE);
        let mut rt_in_flight = None;
        let mut served_at = None;
        for ms in (0..=12_000u64).step_by(100) {
            h.at_ms(ms);
            if let Some(r) = rt_in_flight.take() {
                h.done(r);
            }
            h.ins(Op::Read, ms, 8, RT);
            let got = h.disp().unwrap();
            if got == b {
                served_at = Some(ms);
                break;
            }
            rt_in_flight = Some(got);
        }
        assert_eq!(served_at, Some(10_000));
        // The same with a shorter aging time, set in ms through sysfs.
        let mut h = H::new();
        h.dd.set_tunable("prio_aging_expire", "250").unwrap();
        h.ins(Op::Read, 5000, 8, BE);
        let r = h.ins(Op::Read, 0, 8, RT);
        assert_eq!(h.disp(), Some(r));
        h.at_ms(249);
        assert_eq!(h.disp(), None);
        h.at_ms(250);
        let d = h.disp().unwrap();
        assert_eq!(h.reqs.get(d).ioprio, BE);
    }

    /// IDLE is rescued by aging too, ahead of a waiting BE request that is
    /// not yet old enough.
    #[test]
    fn prio_aging_idle() {
        let mut h = H::new();
        let i = h.ins(Op::Read, 9000, 8, IDLE);
        h.at_ms(5000);
        let b = h.ins(Op::Read, 8000, 8, BE);
        let r = h.ins(Op::Read, 100, 8, RT);
        assert_eq!(h.disp(), Some(r));
        h.at_ms(10_000);
        assert_eq!(h.disp(), Some(i), "IDLE is 10 s old, BE only 5 s");
        assert_eq!(h.disp(), None);
        h.at_ms(15_000);
        assert_eq!(h.disp(), Some(b));
    }

    #[test]
    fn at_head_inserts_go_first() {
        let mut h = H::new();
        let r = h.ins(Op::Read, 0, 8, RT);
        assert_eq!(h.disp(), Some(r));
        let b = h.mkreq(Op::Write, 100, 8, IDLE, 0);
        let mut c = ctx!(h);
        h.dd.insert_at_head(&mut c, &mut h.reqs, b);
        // Served although an RT request is in flight and the request is IDLE.
        assert_eq!(h.disp(), Some(b));
        // A requeue (at-head insert of a dispatched request) is not counted twice.
        let mut c = ctx!(h);
        h.dd.insert_at_head(&mut c, &mut h.reqs, r);
        assert_eq!(h.dd.stats(DdPrio::Rt).inserted, 1);
        assert_eq!(h.disp(), Some(r));
        h.done(r);
        h.done(b);
        assert_eq!(h.dd.dd_queued(DdPrio::Rt), 0);
        assert_eq!(h.dd.dd_queued(DdPrio::Idle), 0);
        assert!(!h.dd.has_work());
    }

    #[test]
    fn back_and_front_merges_need_equal_priority() {
        let mut h = H::new();
        let a = h.ins(Op::Read, 100, 8, BE);
        let b = h.ins(Op::Read, 300, 8, BE);
        // Back merge into a.
        let bio = h.bio(Op::Read, 108, 8, BE, 0);
        assert_eq!(h.merge(&bio), Some(a));
        assert_eq!((h.reqs.get(a).sector, h.reqs.get(a).sectors()), (100, 16));
        assert_eq!(h.reqs.get(a).bios.last(), Some(&bio.0));
        // Same place, other priority / cgroup / op / FUA: no merge.
        let mut cg = CgroupTree::new();
        let other = cg.ensure("/x").unwrap();
        h.cg = cg;
        assert_eq!(h.mb(Op::Read, 116, 8, RT, 0), None);
        assert_eq!(
            h.mb(Op::Read, 116, 8, Ioprio(2 << 13 | 3), 0),
            None,
            "level differs"
        );
        assert_eq!(h.mb(Op::Read, 116, 8, BE, other), None);
        assert_eq!(h.mb(Op::Write, 116, 8, BE, 0), None);
        let mut fua = h.bio(Op::Read, 116, 8, BE, 0);
        fua.1.flags.fua = true;
        assert_eq!(h.merge(&fua), None);
        // Front merge into b (b is not the cached last_merge request).
        let fb = h.bio(Op::Read, 292, 8, BE, 0);
        assert_eq!(h.merge(&fb), Some(b));
        assert_eq!(h.reqs.get(b).sector, 292);
        assert_eq!(h.reqs.get(b).bios[0], fb.0);
        assert_eq!(h.mb(Op::Read, 284, 8, IDLE, 0), None);
        assert!(h.freed().is_empty());
    }

    #[test]
    fn front_merges_tunable() {
        let mut h = H::new();
        let _a = h.ins(Op::Read, 100, 8, BE); // becomes the cached last_merge
        let b = h.ins(Op::Read, 300, 8, BE);
        h.dd.set_tunable("front_merges", "0").unwrap();
        assert_eq!(h.mb(Op::Read, 292, 8, BE, 0), None);
        // The one-hit cache still front-merges (blk_try_merge ignores front_merges).
        let m = h.bio(Op::Read, 92, 8, BE, 0);
        assert_eq!(h.merge(&m), Some(0));
        h.dd.set_tunable("front_merges", "1").unwrap();
        assert_eq!(h.mb(Op::Read, 292, 8, BE, 0), Some(b));
    }

    /// A front merge re-sorts the request: it is dispatched at its new position.
    #[test]
    fn front_merge_moves_request_in_sort_order() {
        let mut h = H::new();
        h.ins(Op::Read, 1000, 8, BE);
        h.ins(Op::Read, 1850, 8, BE);
        let b = h.ins(Op::Read, 2000, 8, BE);
        let bio = h.bio(Op::Read, 1808, 192, BE, 0);
        assert_eq!(h.merge(&bio), Some(b));
        assert_eq!(sectors(&h.drain()), vec![1000, 1808, 1850]);
    }

    /// Filling the gap between two requests merges them; the survivor keeps
    /// the earlier deadline and the FIFO position of the merged-away one.
    #[test]
    fn request_merge_keeps_earlier_deadline() {
        let mut h = H::new();
        let b = h.ins(Op::Read, 16, 8, BE); // t = 0: deadline 500
        h.at_ms(50);
        let c = h.ins(Op::Read, 5000, 8, BE); // deadline 550
        h.at_ms(100);
        let a = h.ins(Op::Read, 0, 8, BE); // deadline 600
        assert_eq!(h.dd.fifo_order(DdPrio::Be, READ), vec![b, c, a]);
        let gap = h.bio(Op::Read, 8, 8, BE, 0);
        assert_eq!(h.merge(&gap), Some(a));
        assert_eq!(h.freed(), vec![b]);
        let ra = h.reqs.get(a);
        assert_eq!((ra.sector, ra.sectors(), ra.bios.len()), (0, 24, 3));
        assert_eq!(ra.start_time, 0, "the earlier start_time_ns is kept");
        assert_eq!(ra.fifo_time, 500 * NSEC_PER_MSEC);
        assert!(h.reqs.get(b).bios.is_empty());
        assert_eq!(h.dd.fifo_order(DdPrio::Be, READ), vec![a, c]);
        let s = h.dd.stats(DdPrio::Be);
        assert_eq!((s.inserted, s.merged, s.completed), (3, 1, 1));
        assert_eq!(h.dd.dd_queued(DdPrio::Be), 2);
        assert_eq!(h.dd.queued(), 2);
        h.reqs.remove(b);
        // At 520 ms a's (inherited) deadline has passed, c's has not.
        h.at_ms(520);
        let mut c2 = ctx!(h);
        h.dd.set_tunable("fifo_batch", "1").unwrap();
        let first = h.dd.dispatch(&mut c2, &mut h.reqs);
        assert_eq!(first, Some(a));
        // Requests of different priority are never merged with each other.
        let mut h = H::new();
        h.ins(Op::Read, 0, 8, BE);
        h.ins(Op::Read, 16, 8, RT);
        assert_eq!(h.mb(Op::Read, 8, 8, BE, 0), Some(0));
        assert!(h.freed().is_empty());
        assert_eq!(h.dd.queued(), 2);
    }

    /// A bio merge that would exceed max_sectors fails and marks the request
    /// REQ_NOMERGE: later small bios do not merge into it either.
    #[test]
    fn size_limit_sets_nomerge() {
        let mut h = H::new(); // max 128 KiB = 256 sectors
        let a = h.ins(Op::Write, 0, 252, BE);
        assert_eq!(h.mb(Op::Write, 252, 8, BE, 0), None);
        assert_eq!(h.mb(Op::Write, 252, 4, BE, 0), None);
        let b = h.ins(Op::Write, 1000, 248, BE);
        assert_eq!(h.mb(Op::Write, 1248, 8, BE, 0), Some(b));
        assert_eq!(h.reqs.get(b).sectors(), 256);
        assert_eq!(h.reqs.get(a).sectors(), 252);
    }

    /// elv_attempt_insert_merge: a request inserted right after a queued one
    /// is merged into it at insert time.
    #[test]
    fn insert_merge() {
        let mut h = H::new();
        let a = h.ins(Op::Write, 0, 8, BE);
        let r = h.ins(Op::Write, 8, 8, BE);
        assert_eq!(h.freed(), vec![r]);
        assert_eq!(h.reqs.get(a).sectors(), 16);
        let s = h.dd.stats(DdPrio::Be);
        assert_eq!((s.inserted, s.merged, s.completed), (2, 1, 1));
        assert_eq!(h.dd.queued(), 1);
        // Different priority: kept apart.
        let x = h.ins(Op::Write, 16, 8, IDLE);
        assert!(h.freed().is_empty());
        assert_eq!(h.dd.queued(), 2);
        let _ = x;
    }

    #[test]
    fn tunables_units_and_validation() {
        let mut h = H::new();
        let t: Vec<(String, String)> = h.dd.tunables();
        let want = [
            ("async_depth", "64"),
            ("fifo_batch", "16"),
            ("front_merges", "1"),
            ("prio_aging_expire", "10000"),
            ("read_expire", "500"),
            ("write_expire", "5000"),
            ("writes_starved", "2"),
        ];
        assert_eq!(
            t,
            want.iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect::<Vec<_>>()
        );
        let get =
            |dd: &MqDeadline, n: &str| dd.tunables().into_iter().find(|x| x.0 == n).unwrap().1;
        h.dd.set_tunable("read_expire", "100\n").unwrap();
        assert_eq!(get(&h.dd, "read_expire"), "100");
        h.dd.set_tunable("write_expire", "0x20").unwrap();
        assert_eq!(get(&h.dd, "write_expire"), "32");
        h.dd.set_tunable("read_expire", "-5").unwrap();
        assert_eq!(get(&h.dd, "read_expire"), "0");
        h.dd.set_tunable("front_merges", "7").unwrap();
        assert_eq!(get(&h.dd, "front_merges"), "1");
        h.dd.set_tunable("async_depth", "0").unwrap();
        assert_eq!(get(&h.dd, "async_depth"), "1");
        h.dd.set_tunable("fifo_batch", "-3").unwrap();
        assert_eq!(get(&h.dd, "fifo_batch"), "0");
        assert!(h
            .dd
            .set_tunable("read_expire", "fast")
            .unwrap_err()
            .contains("EINVAL"));
        assert!(h
            .dd
            .set_tunable("read_expire", "99999999999")
            .unwrap_err()
            .contains("ERANGE"));
        assert!(h.dd.set_tunable("quantum", "4").is_err());
        // At HZ=250 a jiffy is 4 ms: 1 ms is stored as one jiffy and reads back as 4.
        h.hz = Hz(250);
        h.ins(Op::Read, 0, 8, BE);
        h.dd.set_tunable("read_expire", "1").unwrap();
        assert_eq!(get(&h.dd, "read_expire"), "4");
        assert_eq!(h.dd.limit_depth(Op::Read, true), None);
        assert_eq!(h.dd.limit_depth(Op::Write, true), Some(1));
        h.dd.depth_updated(32);
        assert_eq!(h.dd.limit_depth(Op::Read, false), Some(32));
    }

    /// read_expire is converted with the run's HZ: 500 ms at HZ=250 is 125 jiffies.
    #[test]
    fn expiry_in_jiffies() {
        for (ms, first) in [(11, 100), (12, 800)] {
            let mut h = H::new();
            h.hz = Hz(250);
            h.dd.set_tunable("read_expire", "10").unwrap(); // 3 jiffies = 12 ms
            h.ins(Op::Read, 800, 8, BE);
            h.ins(Op::Read, 100, 8, BE);
            h.at_ms(ms); // 11 ms = jiffy 2 (not expired), 12 ms = jiffy 3 (expired)
            let d = h.disp().unwrap();
            assert_eq!(h.reqs.get(d).sector, first, "at {ms} ms");
        }
    }

    #[test]
    fn kstrtoint_like_the_kernel() {
        assert_eq!(kstrtoint("42").unwrap(), 42);
        assert_eq!(kstrtoint("42\n").unwrap(), 42);
        assert_eq!(kstrtoint("+7").unwrap(), 7);
        assert_eq!(kstrtoint("-0x10").unwrap(), -16);
        assert_eq!(kstrtoint("010").unwrap(), 8);
        assert_eq!(kstrtoint("0").unwrap(), 0);
        assert_eq!(kstrtoint("-2147483648").unwrap(), i32::MIN);
        for bad in [
            "", "\n", "08", "0x", "1 ", " 1", "1\n\n", "+-1", "1.5", "ten",
        ] {
            assert_eq!(kstrtoint(bad).unwrap_err().errno, Errno::Einval, "{bad:?}");
        }
        for big in ["2147483648", "-2147483649", "99999999999999999999999"] {
            assert_eq!(kstrtoint(big).unwrap_err().errno, Errno::Erange, "{big:?}");
        }
    }

    /// End to end through the engine: an RT job keeps requests in flight, so
    /// a BE job on the same mq-deadline queue is served only in the gaps
    /// (and by aging after 10 s, beyond this 1 s run).
    #[test]
    fn engine_rt_job_starves_be_job() {
        use crate::machine::tests::{config, job, nullb_dev};
        use crate::machine::Sim;
        use blklab_fio::options::RwPattern;
        let mut dev = nullb_dev(50_000, 64);
        dev.scheduler = "mq-deadline".into();
        let mut rt = job("rt", RwPattern::RandRead, 4096, 8, 1);
        rt.prioclass = Some(1);
        let be = job("be", RwPattern::RandRead, 4096, 8, 1);
        let cfg = config(vec![dev], vec![(rt, "/"), (be, "/")]);
        let mut sim = Sim::new(cfg, Tracer::default()).unwrap();
        let r = sim.run();
        let n_rt = r.jobs[0].stats.dirs[0].total_ios;
        let n_be = r.jobs[1].stats.dirs[0].total_ios;
        assert!(n_rt > 100_000, "rt {n_rt}");
        assert!(n_be * 20 < n_rt, "be {n_be} vs rt {n_rt}");
    }

    #[test]
    fn registered_in_build() {
        let e = crate::block::elevator::build("mq-deadline", &dev()).unwrap();
        assert_eq!(e.name(), "mq-deadline");
        assert!(crate::block::elevator::build("deadline", &dev()).is_ok());
    }
}
