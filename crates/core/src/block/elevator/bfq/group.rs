//! `struct bfq_group`: one per cgroup with I/O on the device, holding the
//! group's scheduling data (in [`super::wf2q`]) and its weight from
//! `io.bfq.weight` / `blkio.bfq.weight` (block/bfq-cgroup.c:
//! `bfq_pd_init`, `bfq_group_set_parent`, `bfq_bio_bfqg` /
//! `bfq_find_set_group`, `bfq_group_set_weight`).
//!
//! Groups are created on the first request of a cgroup, with every
//! ancestor, as `bfq_find_set_group` links a new blkg to its parent. A
//! weight written later (a timed write) is picked up at the group's next
//! request and takes effect at its next activation (`prio_changed`).

use super::wf2q::GId;
use super::Bfq;
use crate::block::blk_cgroup::CgId;
use crate::block::ctx::Ctx;

#[derive(Clone, Debug)]
pub struct Group {
    /// The cgroup (blkg) this group belongs to.
    pub cg: CgId,
    /// Total length of the weight files when the weight was last read:
    /// writes only append, so a change of length is a new write.
    files_len: usize,
}

impl Group {
    pub fn root() -> Group {
        Group {
            cg: crate::block::blk_cgroup::ROOT,
            files_len: 0,
        }
    }
}

fn weight_files_len(ctx: &Ctx, cg: CgId) -> usize {
    ["io.bfq.weight", "blkio.bfq.weight"]
        .iter()
        .map(|f| ctx.cgroups.file(cg, f).map_or(0, str::len))
        .sum()
}

impl Bfq {
    /// Every group's cgroup and current weight, in creation order (root
    /// first, weight 0 as it has no entity).
    pub fn group_weights(&self) -> Vec<(CgId, u32)> {
        self.groups
            .iter()
            .enumerate()
            .map(|(g, gr)| {
                let w = self
                    .w
                    .group_entity(g as GId)
                    .map_or(0, |e| self.w.ents[e as usize].weight);
                (gr.cg, w)
            })
            .collect()
    }

    /// The group of cgroup `cg`, created (with its ancestors) on first use;
    /// its weight refreshed if its weight files changed.
    pub(super) fn group_for(&mut self, ctx: &Ctx, cg: CgId) -> GId {
        if let Some(&g) = self.group_of_cg.get(&cg) {
            if g != 0 {
                let len = weight_files_len(ctx, cg);
                if len != self.groups[g as usize].files_len {
                    self.groups[g as usize].files_len = len;
                    let w = ctx.cgroups.bfq_weight(cg, self.devno);
                    if let Some(e) = self.w.group_entity(g) {
                        self.w.ents[e as usize].new_weight = w;
                    }
                }
            }
            return g;
        }
        let parent_cg = ctx
            .cgroups
            .parent(cg)
            .unwrap_or(crate::block::blk_cgroup::ROOT);
        let parent = self.group_for(ctx, parent_cg);
        let w = ctx.cgroups.bfq_weight(cg, self.devno);
        let g = self.w.add_group(parent, w);
        debug_assert_eq!(g as usize, self.groups.len());
        self.groups.push(Group {
            cg,
            files_len: weight_files_len(ctx, cg),
        });
        self.group_direct_pending.push(0);
        self.group_subtree_pending.push(0);
        self.group_of_cg.insert(cg, g);
        g
    }
}
