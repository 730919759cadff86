//! mq-deadline's per-priority structures: the sector-sorted tree
//! (`deadline_add_rq_rb`, `deadline_latter_request`), the FIFO lists, the
//! elevator's back-merge hash (block/elevator.c `elv_rqhash_*`), and
//! `deadline_remove_request`.

use super::*;

impl MqDeadline {
    pub(super) fn sort_add(&mut self, id: ReqId, sector: u64) {
        let seq = self.next_seq();
        let d = self.get(id);
        self.per_prio[d.prio as usize].sort[d.dir as usize].insert((sector, seq), id);
        self.slot(id).sort_key = (sector, seq);
    }
    pub(super) fn sort_del(&mut self, id: ReqId) {
        let d = self.get(id);
        self.per_prio[d.prio as usize].sort[d.dir as usize].remove(&d.sort_key);
    }
    /// `deadline_from_pos`: the first request with start >= pos.
    pub(super) fn from_pos(&self, p: usize, dir: usize, pos: u64) -> Option<ReqId> {
        self.per_prio[p].sort[dir]
            .range((pos, 0)..)
            .next()
            .map(|(_, &id)| id)
    }
    /// `elv_rb_find`: a request starting exactly at `sector`. Among equal
    /// starts the model takes the oldest (the kernel's pick depends on the
    /// tree shape).
    pub(super) fn sort_find(&self, p: usize, dir: usize, sector: u64) -> Option<ReqId> {
        self.per_prio[p].sort[dir]
            .range((sector, 0)..=(sector, u64::MAX))
            .next()
            .map(|(_, &id)| id)
    }
    /// `elv_rb_latter_request`
    pub(super) fn latter(&self, id: ReqId) -> Option<ReqId> {
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
    pub(super) fn former(&self, id: ReqId) -> Option<ReqId> {
        let d = self.get(id);
        let tree = &self.per_prio[d.prio as usize].sort[d.dir as usize];
        tree.range(..d.sort_key).next_back().map(|(_, &r)| r)
    }

    pub(super) fn fifo_add_tail(&mut self, id: ReqId) {
        let key = self.next_seq();
        let d = self.get(id);
        self.per_prio[d.prio as usize].fifo[d.dir as usize].insert(key, id);
        self.slot(id).fifo_key = key;
    }
    pub(super) fn fifo_head(&self, p: usize, dir: usize) -> Option<ReqId> {
        self.per_prio[p].fifo[dir]
            .first_key_value()
            .map(|(_, &id)| id)
    }

    pub(super) fn hash_add(&mut self, id: ReqId, reqs: &Slab<Request>) {
        let key = (reqs.get(id).end_sector(), u64::MAX - self.next_seq());
        self.hash.insert(key, id);
        self.slot(id).hash_key = Some(key);
    }
    pub(super) fn hash_del(&mut self, id: ReqId) {
        if let Some(k) = self.slot(id).hash_key.take() {
            self.hash.remove(&k);
        }
    }
    /// `elv_rqhash_reposition`: re-key by the (new) end sector, newest first.
    pub(super) fn hash_reposition(&mut self, id: ReqId, reqs: &Slab<Request>) {
        if self.get(id).hash_key.is_some() {
            self.hash_del(id);
            self.hash_add(id, reqs);
        }
    }
    /// `elv_rqhash_find`: the newest hashed request ending at `sector`.
    /// Non-mergeable requests leave the hash when they become so (the kernel
    /// drops them lazily during lookups; same outcome).
    pub(super) fn hash_find(&self, sector: u64) -> Option<ReqId> {
        self.hash
            .range((sector, 0)..=(sector, u64::MAX))
            .next()
            .map(|(_, &id)| id)
    }

    /// `deadline_remove_request`: off the FIFO (or dispatch list), the sort
    /// tree and the hash; forget it as the merge cache.
    pub(super) fn remove_request(&mut self, id: ReqId) {
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
}
