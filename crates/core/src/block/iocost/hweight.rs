//! Hierarchical weights: `__propagate_weights`, `commit_weights`,
//! `current_hweight` (cached behind a generation counter exactly like the
//! kernel, so a value read between a propagation and its commit is the stale
//! cached one, as it is in `ioc_timer_fn`) and `current_hweight_max`.

use super::*;

impl IoCost {
    /// `__propagate_weights`: set the iocg's active/inuse and walk the sums up.
    pub(crate) fn propagate_weights_nc(
        &mut self,
        idx: usize,
        active: u32,
        inuse: u32,
        save: bool,
        now: &IocNow,
    ) {
        let g = &self.iocgs[idx];
        let inuse = if !g.on_active && g.child_active_sum != 0 {
            // inner node: inuse follows its children's inuse/active ratio
            div_round_up(
                (active as u64).wrapping_mul(g.child_inuse_sum),
                g.child_active_sum,
            ) as u32
        } else {
            // leaf: 1 <= inuse <= active; an iocg going idle (active 0) keeps 1
            // ("Avoid using clamp() on inuse in __propagate_weights()", v6.13)
            match inuse.min(active) {
                0 => 1,
                v => v,
            }
        };
        let g = &mut self.iocgs[idx];
        g.last_inuse = g.inuse;
        if save {
            g.saved_margin = now.vnow.wrapping_sub(g.vtime) as i64;
        }
        if active == g.active && inuse == g.inuse {
            return;
        }
        let level = g.level;
        let (mut active, mut inuse) = (active, inuse);
        for lvl in (0..level).rev() {
            let parent = self.iocgs[idx].ancestors[lvl];
            let child = self.iocgs[idx].ancestors[lvl + 1];
            let (ca, ci) = (self.iocgs[child].active, self.iocgs[child].inuse);
            {
                let p = &mut self.iocgs[parent];
                p.child_active_sum = p
                    .child_active_sum
                    .wrapping_add(active.wrapping_sub(ca) as i32 as i64 as u64);
                p.child_inuse_sum = p
                    .child_inuse_sum
                    .wrapping_add(inuse.wrapping_sub(ci) as i32 as i64 as u64);
            }
            self.iocgs[child].active = active;
            self.iocgs[child].inuse = inuse;
            let p = &self.iocgs[parent];
            let (pa, pi) = if p.child_active_sum != 0 {
                let pa = p.weight;
                (
                    pa,
                    div_round_up(
                        (pa as u64).wrapping_mul(p.child_inuse_sum),
                        p.child_active_sum,
                    ) as u32,
                )
            } else {
                (0, 0)
            };
            if pa == p.active && pi == p.inuse {
                break;
            }
            active = pa;
            inuse = pi;
        }
        self.weights_updated = true;
    }

    /// `commit_weights`
    pub(crate) fn commit_weights(&mut self) {
        if self.weights_updated {
            self.hweight_gen = self.hweight_gen.wrapping_add(1);
            self.weights_updated = false;
        }
    }

    /// `propagate_weights` = `__propagate_weights` + `commit_weights`.
    pub(crate) fn propagate_weights(
        &mut self,
        idx: usize,
        active: u32,
        inuse: u32,
        save: bool,
        now: &IocNow,
    ) {
        self.propagate_weights_nc(idx, active, inuse, save, now);
        self.commit_weights();
    }

    /// `current_hweight`: (hweight_active, hweight_inuse) out of WEIGHT_ONE.
    /// The cached pair while the iocg's generation is the device's (the
    /// per-I/O case, inlined into the callers), else the walk.
    #[inline]
    pub(crate) fn current_hweight(&mut self, idx: usize) -> (u32, u32) {
        let g = &self.iocgs[idx];
        if g.hweight_gen == self.hweight_gen {
            return (g.hweight_active, g.hweight_inuse);
        }
        self.current_hweight_walk(idx)
    }

    /// The walk up the tree of `current_hweight` when the weights changed
    /// since the iocg's cached pair.
    #[inline(never)]
    fn current_hweight_walk(&mut self, idx: usize) -> (u32, u32) {
        let (mut hwa, mut hwi) = (WEIGHT_ONE as u64, WEIGHT_ONE as u64);
        let level = self.iocgs[idx].level;
        for lvl in 0..level {
            let parent = &self.iocgs[self.iocgs[idx].ancestors[lvl]];
            let child = &self.iocgs[self.iocgs[idx].ancestors[lvl + 1]];
            let (asum, isum) = (parent.child_active_sum, parent.child_inuse_sum);
            if asum == 0 || isum == 0 {
                continue;
            }
            let asum = asum.max(child.active as u64);
            hwa = hwa * child.active as u64 / asum;
            let isum = isum.max(child.inuse as u64);
            hwi = hwi * child.inuse as u64 / isum;
        }
        let g = &mut self.iocgs[idx];
        g.hweight_active = (hwa as u32).max(1);
        g.hweight_inuse = (hwi as u32).max(1);
        g.hweight_gen = self.hweight_gen;
        (g.hweight_active, g.hweight_inuse)
    }

    /// `current_hweight_max`: the hwi the iocg would get with inuse = active.
    pub(crate) fn current_hweight_max(&self, idx: usize) -> u32 {
        let mut hwm: u64 = WEIGHT_ONE as u64;
        let mut inuse: u64 = self.iocgs[idx].active as u64;
        let level = self.iocgs[idx].level;
        for lvl in (0..level).rev() {
            let parent = &self.iocgs[self.iocgs[idx].ancestors[lvl]];
            let child = &self.iocgs[self.iocgs[idx].ancestors[lvl + 1]];
            let child_inuse_sum = (parent.child_inuse_sum + inuse).wrapping_sub(child.inuse as u64);
            if child_inuse_sum == 0 || parent.child_active_sum == 0 {
                break;
            }
            hwm = hwm * inuse / child_inuse_sum;
            inuse = div_round_up(
                (parent.active as u64).wrapping_mul(child_inuse_sum),
                parent.child_active_sum,
            );
        }
        (hwm as u32).max(1)
    }
}
