//! Merging (block/elevator.c `elv_merge`, `elv_attempt_insert_merge`;
//! block/blk-merge.c `blk_rq_merge_ok`, `attempt_merge`, the
//! `ll_*_merge_fn` size checks) as mq-deadline uses it.

use super::*;
use crate::sim::time::time_before;

impl MqDeadline {
    /// `req_set_nomerge`
    pub(super) fn set_nomerge(&mut self, id: ReqId) {
        self.slot(id).nomerge = true;
        self.hash_del(id);
        if self.last_merge == Some(id) {
            self.last_merge = None;
        }
    }

    // ----- merge rules (blk-merge.c) ------------------------------------

    /// `rq_mergeable` (no passthrough, flush or write-zeroes in the model).
    pub(super) fn rq_mergeable(&self, rq: &Request, id: ReqId) -> bool {
        rq.op != Op::Flush && !self.get(id).nomerge
    }

    /// `blk_rq_merge_ok` (through `elv_bio_merge_ok`; mq-deadline has no
    /// `allow_merge` hook): both mergeable, same op (hence direction), same
    /// blkg, same full 16-bit priority.
    pub(super) fn bio_merge_ok(&self, rq: &Request, id: ReqId, bio: &Bio) -> bool {
        self.rq_mergeable(rq, id)
            && bio_mergeable(bio)
            && rq.op == bio.op
            && rq.cg == bio.cg
            && rq.ioprio == bio.ioprio
    }

    /// `attempt_merge(req, next)`: merge `next` (which starts where `req`
    /// ends) into `req`. On success `next` is emptied, removed from the
    /// scheduler, counted completed, and queued on `freed`.
    pub(super) fn attempt_merge(
        &mut self,
        reqs: &mut Slab<Request>,
        req: ReqId,
        next: ReqId,
    ) -> bool {
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
    pub(super) fn finish(&mut self, id: ReqId) {
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
    pub(super) fn try_insert_merge(&mut self, reqs: &mut Slab<Request>, rq: ReqId) -> bool {
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
}

/// `bio_mergeable`: REQ_NOMERGE_FLAGS (FUA, PREFLUSH) and flushes never merge.
#[inline]
pub(super) fn bio_mergeable(bio: &Bio) -> bool {
    !bio.flags.fua && bio.op != Op::Flush
}
