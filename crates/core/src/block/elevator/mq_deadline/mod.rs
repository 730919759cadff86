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

mod dispatch;
mod merge;
mod sort;
#[cfg(test)]
mod tests;
mod tunables;

use std::collections::{BTreeMap, VecDeque};

use super::queue_run::QueueRun;
use super::Elevator;
use crate::block::bio::{Bio, BioId, Op};
use crate::block::ctx::Ctx;
use crate::block::disk::DeviceInfo;
use crate::block::ioprio::{Ioprio, IoprioClass};
use crate::block::request::{ReqId, Request};
use crate::sim::kerr::KernelError;
use crate::sim::slab::Slab;
use crate::sim::time::Hz;
use merge::bio_mergeable;
use tunables::TUNABLES;

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
    /// The hardware-queue run under way and the delayed re-run: a request
    /// held behind a higher priority goes out at the next insertion's run
    /// or at the 3 ms re-run, not at a completion (queue_run.rs).
    run: QueueRun,
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
            run: QueueRun::default(),
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
}

impl Elevator for MqDeadline {
    fn take_freed(&mut self, out: &mut Vec<ReqId>) {
        MqDeadline::take_freed(self, out)
    }
    /// `dd_depth_updated`: 1 on the scheduler tags.
    fn min_shallow_depth(&self) -> u32 {
        1
    }
    /// `dd_limit_depth`: writes and async requests are limited to
    /// `async_depth` requests, as bits per bitmap word (`dd_to_word_depth`:
    /// scaled by the word size over nr_requests, rounded up); sync reads
    /// are not.
    fn limit_depth(&self, a: &crate::block::elevator::Alloc, nr_requests: u32) -> Option<u32> {
        let depth = MqDeadline::limit_depth(self, a.op, a.sync)?;
        let shift = crate::block::sbitmap::calculate_shift(nr_requests);
        let bits = ((depth as u64) << shift).div_ceil(nr_requests.max(1) as u64);
        Some(bits.min(u32::MAX as u64) as u32)
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

    /// `dd_dispatch_request` ([`MqDeadline::dispatch_request`]).
    ///
    /// Only the runs the kernel makes reach it ([`QueueRun::may_run`]).
    fn dispatch(&mut self, ctx: &mut Ctx, reqs: &mut Slab<Request>) -> Option<ReqId> {
        self.hz = ctx.hz;
        // the run's switches were read at the insertion (`insert_request`):
        // a dispatch uses none of them
        if !self.run.may_run(ctx.now) {
            return None;
        }
        let rq = self.dispatch_request(ctx, reqs);
        match rq {
            Some(_) => self.run.dispatched(self.held),
            None => self.run.ended_empty(self.held > 0, ctx.hz, ctx.now),
        }
        rq
    }

    /// The delayed re-run of a pass that got no request ([`QueueRun`]).
    fn next_run(&self) -> Option<crate::sim::time::Ns> {
        self.run.delayed()
    }

    /// A run is under way, or the delayed re-run is due.
    fn wants_run(&self, now: crate::sim::time::Ns) -> bool {
        self.run.wants_run(now)
    }

    /// `mod_delayed_work(.., 0)` of `hctx->run_work` ([`QueueRun::async_run`]).
    fn run_async(&mut self) {
        self.run.async_run();
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
