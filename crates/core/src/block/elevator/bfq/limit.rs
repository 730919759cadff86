//! `bfq_limit_depth` (block/bfq-iosched.c, as in 6.1.176 and 6.12.117):
//! the scheduler-tag depth a request allocation may use.
//!
//! Jan Kara's 76f1df88bbc2 "bfq: Limit number of requests consumed by each
//! cgroup" (v5.19) added the per-cgroup part: every entity counts the
//! requests of its queue, or of the queues below its group, inserted and not
//! yet finished (`entity->allocated`: `bfqq_request_allocated` in
//! `bfq_init_rq`, `bfqq_request_freed` in `bfq_finish_requeue_request`).
//! `bfqq_request_over_limit` walks the submitting process's queue and its
//! groups from the top: each level's share of the tags is the level
//! above's times the entity's weight over its service tree's weight sum
//! (for the queue itself, the sums of its group's trees of its class and
//! the classes above, each higher class counted `IOPRIO_BE_NR` times), and
//! an entity holding that many requests or more is over its limit. Then the
//! allocation may use one bit of each bitmap word (`shallow_depth` 1): the
//! cgroup's submitters mostly sleep for a tag (TASK_UNINTERRUPTIBLE in
//! `blk_mq_get_tag`) until one of the few such bits is free.
//!
//! Why it matters on one CPU (issue 14, docs/fidelity/bfq-qemu.md): at 800:100
//! with four QD8 jobs per group, /B's limit is round(256 × 100 / 900) = 28
//! requests for the group and 7 per job, so /B cannot fill the drive with
//! injected requests.
//!
//! Sync reads get the whole depth otherwise; async requests and sync writes
//! are limited to `bfqd->word_depths` (`bfq_update_depths`: a half and three
//! quarters of a word, or 3/16 and 6/16 while queues are weight-raised),
//! and their cgroup limit starts from that share of `nr_requests`.
//!
//! Switch `bfq.cgroup_request_limit` (`off`: before v5.19, no per-cgroup
//! limit; the word depths stay).
//!
//! Simplified: the kernel finds the process's queue through its I/O
//! context (`bfq_bic_lookup`); here by the submitter and the group of the
//! bio's cgroup, the queue its request would go to.

use super::wf2q::{EntId, Owner, CLASSES};
use super::Bfq;
use crate::block::bio::Op;
use crate::block::elevator::Alloc;
use crate::block::sbitmap::calculate_shift;
use smallvec::{smallvec, SmallVec};

/// `IOPRIO_BE_NR`: the weight-sum factor between priority classes.
const IOPRIO_BE_NR: u64 = 8;

impl Bfq {
    /// The entities from queue `q` up to its top group (the root group has
    /// no entity): `for_each_entity`. Inline up to four levels: this runs
    /// at every allocation, insertion and completion under bfq.
    fn entity_chain(&self, q: u32) -> SmallVec<[EntId; 4]> {
        let mut chain: SmallVec<[EntId; 4]> = smallvec![self.queues[q as usize].ent];
        let mut g = self.w.ents[chain[0] as usize].parent;
        while let Some(e) = self.w.group_entity(g) {
            chain.push(e);
            g = self.w.ents[e as usize].parent;
        }
        chain
    }

    /// `bfqq_request_allocated` (`up`) / `bfqq_request_freed`: one request
    /// more or less on queue `q` and each of its groups.
    pub(super) fn count_allocated(&mut self, q: u32, up: bool) {
        for e in self.entity_chain(q) {
            let a = &mut self.w.ents[e as usize].allocated;
            *a = if up { *a + 1 } else { a.saturating_sub(1) };
        }
    }

    /// Mirrors `bfqq_request_over_limit`: whether queue `q` or one of its
    /// groups holds its weight's share of `limit` requests or more. An
    /// entity not on a service tree nor in service (a level not yet active)
    /// is never over: its first requests must reach bfq to activate it.
    pub(super) fn request_over_limit(&self, q: u32, limit: u64) -> bool {
        let chain = self.entity_chain(q);
        if chain
            .iter()
            .any(|&e| !(self.w.ents[e as usize].on_st || self.w.ents[e as usize].in_service))
        {
            return false;
        }
        let mut limit = limit;
        for (level, &e) in chain.iter().enumerate().rev() {
            let en = &self.w.ents[e as usize];
            let sd = &self.w.sds[en.parent as usize];
            let wsum = if level > 0 {
                sd.st[en.class].wsum
            } else {
                debug_assert!(matches!(en.owner, Owner::Queue(_)));
                let class_idx = self.queues[q as usize].class.min(CLASSES - 1);
                (0..=class_idx).fold(0, |s, i| s * IOPRIO_BE_NR + sd.st[i].wsum)
            };
            if wsum == 0 {
                continue;
            }
            // DIV_ROUND_CLOSEST
            limit = (limit * en.weight as u64 + wsum / 2) / wsum;
            if en.allocated as u64 >= limit {
                return true;
            }
        }
        false
    }

    /// Mirrors `bfq_limit_depth` for allocation `a` on `nr_requests`
    /// scheduler tags: the shallow depth (bits per word), or None for the
    /// whole bitmap.
    pub(super) fn limit_depth_of(&self, a: &Alloc, nr_requests: u32) -> Option<u32> {
        let shift = calculate_shift(nr_requests);
        let (mut depth, limit) = if a.sync && a.op == Op::Read {
            (0, nr_requests as u64)
        } else {
            let d = self.word_depth(shift, a.sync);
            (d, (nr_requests as u64 * d as u64) >> shift)
        };
        let over = self.sw_cgroup_limit
            && self
                .group_of_cg
                .get(&a.cg)
                .and_then(|&g| self.find_queue(a.sync, a.submitter, a.ioprio, g))
                .is_some_and(|q| self.request_over_limit(q, limit));
        if over {
            depth = 1;
        }
        (depth > 0).then_some(depth)
    }

    /// `bfqd->word_depths[!!wr_busy_queues][sync]` (`bfq_update_depths`)
    /// for words of `1 << shift` bits.
    fn word_depth(&self, shift: u32, sync: bool) -> u32 {
        let depth = 1u32 << shift;
        let d = match (self.wr_busy_queues > 0, sync) {
            (false, false) => depth >> 1,
            (false, true) => (depth * 3) >> 2,
            (true, false) => (depth * 3) >> 4,
            (true, true) => (depth * 6) >> 4,
        };
        d.max(1)
    }
}
