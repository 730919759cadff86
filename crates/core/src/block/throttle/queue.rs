//! Queues of held bios: qnodes (one per source), service queues with their
//! round-robin qnode lists, pending trees of child groups ordered by
//! `disptime`, and the pending timers (`throtl_qnode_*`, `throtl_peek_queued`,
//! `throtl_pop_queued`, `throtl_enqueue_tg`, `throtl_schedule_pending_timer`).

use std::collections::{BTreeSet, VecDeque};

use super::{QBio, Throttle};
use crate::block::blk_cgroup::CgId;
use crate::sim::timer::wheel_expiry;

/// Service queue id: 0 is the device level, `cg + 1` is group cg's queue.
pub(crate) type SqId = u32;
pub(crate) const TD_SQ: SqId = 0;

/// A source slot: `qnode_on_self` (bios submitted in this cgroup) or
/// `qnode_on_parent` (bios this group forwards into its parent's queue).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct QnRef {
    pub owner: CgId,
    pub on_parent: bool,
}

/// `struct throtl_qnode`, with the current kernel's two lists. The 2018,
/// 6.1 and 6.12 eras only use `bps` (their single FIFO).
#[derive(Default)]
pub(crate) struct Qnode {
    pub bps: VecDeque<QBio>,
    pub iops: VecDeque<QBio>,
    pub on_list: bool,
}

impl Qnode {
    fn head(&self) -> Option<&QBio> {
        self.iops.front().or_else(|| self.bps.front())
    }
}

/// `struct throtl_service_queue`. `repr(C)`, the counts every submission
/// reads first (see `Tg`).
#[derive(Default)]
#[repr(C)]
pub(crate) struct Sq {
    pub nr_queued_bps: [u32; 2],
    pub nr_queued_iops: [u32; 2],
    /// Qnodes with bios, per direction, served round-robin.
    pub queued: [VecDeque<QnRef>; 2],
    /// Child groups with bios: (disptime, insertion seq, cg).
    pub pending: BTreeSet<(u64, u64, CgId)>,
    /// Armed pending timer (expiry jiffy, after timer-wheel rounding).
    pub timer: Option<u64>,
    /// The timer callback is spinning (slice-capped zero wait) and resumes at
    /// `timer`; `spin_dispatched` carries what it had dispatched so far.
    pub spinning: bool,
    pub spin_dispatched: bool,
}

impl Sq {
    pub fn queued(&self, d: usize) -> u32 {
        self.nr_queued_bps[d] + self.nr_queued_iops[d]
    }
}

impl Throttle {
    pub(crate) fn sq(&self, id: SqId) -> &Sq {
        if id == TD_SQ {
            &self.td_sq
        } else {
            &self.tgs[id as usize - 1].sq
        }
    }
    pub(crate) fn sq_mut(&mut self, id: SqId) -> &mut Sq {
        if id == TD_SQ {
            &mut self.td_sq
        } else {
            &mut self.tgs[id as usize - 1].sq
        }
    }
    /// The service queue group `cg` hangs off (its parent's, or the device's).
    pub(crate) fn parent_sq(&self, cg: CgId) -> SqId {
        match self.tgs[cg as usize].parent {
            Some(p) => p + 1,
            None => TD_SQ,
        }
    }
    fn qn_mut(&mut self, r: QnRef, d: usize) -> &mut Qnode {
        let tg = &mut self.tgs[r.owner as usize];
        if r.on_parent {
            &mut tg.qn_parent[d]
        } else {
            &mut tg.qn_self[d]
        }
    }
    fn qn(&self, r: QnRef, d: usize) -> &Qnode {
        let tg = &self.tgs[r.owner as usize];
        if r.on_parent {
            &tg.qn_parent[d]
        } else {
            &tg.qn_self[d]
        }
    }

    /// `throtl_qnode_add_bio`: append to the qnode's iops list (bytes already
    /// charged here or everywhere) or bps list, and put the qnode on the
    /// service queue's round-robin list if it was not there.
    pub(crate) fn qnode_add(&mut self, qb: QBio, r: QnRef, sq: SqId) {
        let d = qb.dir as usize;
        // before v6.16 there is one list: split remainders and bios handed
        // up by a child queue behind everything else
        let to_iops = self.era == super::Era::Current && (qb.tg_bps || qb.bps_throttled);
        let qn = self.qn_mut(r, d);
        if to_iops {
            qn.iops.push_back(qb);
        } else {
            qn.bps.push_back(qb);
        }
        let newly = !qn.on_list;
        qn.on_list = true;
        let s = self.sq_mut(sq);
        if to_iops {
            s.nr_queued_iops[d] += 1;
        } else {
            s.nr_queued_bps[d] += 1;
        }
        if newly {
            s.queued[d].push_back(r);
        }
    }

    /// `throtl_peek_queued`: the head bio of direction d (iops list of the
    /// first qnode first, then its bps list).
    pub(crate) fn peek(&self, sq: SqId, d: usize) -> Option<QBio> {
        let r = *self.sq(sq).queued[d].front()?;
        self.qn(r, d).head().copied()
    }

    /// Write back a modified head (flags changed by the dispatch-time check).
    pub(crate) fn set_head(&mut self, sq: SqId, d: usize, qb: QBio) {
        let r = *self.sq(sq).queued[d]
            .front()
            .expect("set_head on empty queue");
        let qn = self.qn_mut(r, d);
        let h = if let Some(h) = qn.iops.front_mut() {
            h
        } else {
            qn.bps.front_mut().expect("qnode on list is empty")
        };
        debug_assert_eq!(h.id, qb.id);
        *h = qb;
    }

    /// `throtl_pop_queued`: pop the head; the qnode then leaves the list if
    /// empty or moves to its tail (round-robin between sources).
    pub(crate) fn pop(&mut self, sq: SqId, d: usize) -> Option<QBio> {
        let r = *self.sq(sq).queued[d].front()?;
        let qn = self.qn_mut(r, d);
        let (qb, from_iops) = match qn.iops.pop_front() {
            Some(b) => (b, true),
            None => (qn.bps.pop_front().expect("qnode on list is empty"), false),
        };
        let empty = qn.iops.is_empty() && qn.bps.is_empty();
        if empty {
            qn.on_list = false;
        }
        let s = self.sq_mut(sq);
        if from_iops {
            s.nr_queued_iops[d] -= 1;
        } else {
            s.nr_queued_bps[d] -= 1;
        }
        s.queued[d].pop_front();
        if !empty {
            s.queued[d].push_back(r);
        }
        Some(qb)
    }

    /// `throtl_enqueue_tg`: put group cg into its parent's pending tree with
    /// its current disptime, if it is not there yet.
    pub(crate) fn enqueue_tg(&mut self, cg: CgId) {
        if self.tgs[cg as usize].pend_key.is_some() {
            return;
        }
        self.seq += 1;
        let key = (self.tgs[cg as usize].disptime, self.seq);
        self.tgs[cg as usize].pend_key = Some(key);
        let psq = self.parent_sq(cg);
        self.sq_mut(psq).pending.insert((key.0, key.1, cg));
    }

    /// `throtl_dequeue_tg`.
    pub(crate) fn dequeue_tg(&mut self, cg: CgId) {
        if let Some(k) = self.tgs[cg as usize].pend_key.take() {
            let psq = self.parent_sq(cg);
            self.sq_mut(psq).pending.remove(&(k.0, k.1, cg));
        }
    }

    /// `throtl_schedule_pending_timer`: arm (or move) the queue's timer for
    /// `expires`, never more than 8 slices ahead.
    pub(crate) fn schedule_pending_timer(&mut self, sq: SqId, expires: u64, now: u64) {
        let max_expire = now + 8 * self.slice;
        let mut at = wheel_expiry(now, expires.min(max_expire));
        let s = self.sq(sq);
        if s.spinning {
            // a spinning callback resumes at the next jiffy whatever happens
            at = at.min(s.timer.unwrap_or(at));
        }
        self.arm(sq, at);
    }

    /// Set the queue's timer to exactly `at` (already a firing jiffy).
    pub(crate) fn arm(&mut self, sq: SqId, at: u64) {
        if let Some(old) = self.sq(sq).timer {
            self.timers.remove(&(old, u32::MAX - sq));
        }
        self.sq_mut(sq).timer = Some(at);
        self.timers.insert((at, u32::MAX - sq));
    }

    /// `throtl_schedule_next_dispatch`: arm the timer for the earliest child
    /// if forced or if it lies in the future. Returns false when the earliest
    /// child is already due (the caller keeps dispatching).
    pub(crate) fn schedule_next_dispatch(&mut self, sq: SqId, force: bool, now: u64) -> bool {
        let Some(&(first, _, _)) = self.sq(sq).pending.first() else {
            return true;
        };
        if force || first > now {
            self.schedule_pending_timer(sq, first, now);
            return true;
        }
        false
    }
}
