//! A shortcut through one level of `__blk_throtl_bio` (current era) for the
//! common case where the level's limits cannot bind and its slice is left as
//! it is: the bio is charged and goes on, nothing else changes.
//!
//! At a level with nothing queued in the bio's direction, the kernel's steps
//! for a bio that passes are `tg_within_limit` (`tg_dispatch_bps_time`,
//! `throtl_charge_bps_bio`, `tg_dispatch_iops_time`, each time check
//! `tg_update_slice` and `throtl_extend_slice`), `throtl_charge_iops_bio` and
//! `throtl_trim_slice`. Whether the slice steps change anything, and how many
//! bytes and IOs the budgets admit, depend only on the jiffy, the slice window
//! and the limits: not on the counters. So one evaluation per (jiffy, window)
//! is kept, and every further bio of that jiffy compares the live counters
//! with it. When the window steps would do something (a new slice, an
//! extension, a trim) or a budget is exhausted, the gate stays shut and the
//! full path runs. This is not a kernel structure; the outcome is the kernel's
//! bit for bit (`throttle::tests_gate` drives both paths side by side).

use super::queue::QnRef;
use super::wait::{bps_window, bytes_allowed, io_allowed, rounddown, roundup};
use super::{Tg, Throttle, BPS_MAX, IOPS_MAX};
use crate::block::blk_cgroup::CgId;

/// What a bio passing one level in one direction needs, evaluated for one
/// jiffy and one slice window.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Gate {
    /// The jiffy and the window (`slice_start`, `slice_end`) evaluated;
    /// `j == u64::MAX` before the first evaluation (no jiffy reaches it).
    pub(super) j: u64,
    start: u64,
    end: u64,
    /// A bio of `size` bytes passes if `bytes_disp + size <= bytes_cap` and
    /// `io_disp < io_cap` (`i64::MAX` for an unlimited direction). When the
    /// slice steps would change the window or a budget admits nothing, the
    /// gate is shut (`io_cap == i64::MIN`) and every bio takes the full path.
    bytes_cap: i64,
    pub(super) io_cap: i64,
}

impl Gate {
    pub(crate) const NONE: Gate = Gate {
        j: u64::MAX,
        start: 0,
        end: 0,
        bytes_cap: i64::MIN,
        io_cap: i64::MIN,
    };

    /// The gate of direction `d` of `tg` at jiffy `j` (slice length `s`, HZ
    /// `hz`). Mirrors the checks of `tg_dispatch_bps_time` /
    /// `tg_within_bps_limit` and `tg_dispatch_iops_time` /
    /// `tg_within_iops_limit` (block/blk-throttle.c) on a window that
    /// `tg_update_slice`, `throtl_extend_slice` and `throtl_trim_slice` leave
    /// unchanged.
    ///
    /// Out of line: it runs once per jiffy and window, and inlined it made
    /// `pass_gate`, which runs at every level of every bio, too large to be
    /// inlined into its two callers.
    #[cold]
    #[inline(never)]
    fn evaluate(tg: &Tg, d: usize, j: u64, s: u64, hz: u64) -> Gate {
        let (start, end) = (tg.slice_start[d], tg.slice_end[d]);
        let (bps, iops) = (tg.conf.bps[d], tg.conf.iops[d]);
        let shut = Gate {
            j,
            start,
            end,
            ..Gate::NONE
        };
        let in_window = start <= j && j <= end;
        // throtl_trim_slice, when the window holds `j`, sets its end to the
        // slice boundary after j + S: a no-op only if it is there already
        let end_kept = end == roundup(j + s, s);
        if bps == BPS_MAX && iops == IOPS_MAX {
            // no tg_update_slice; the trim trims nothing (both budgets
            // unlimited) and at most moves the end
            if in_window && !end_kept {
                return shut;
            }
            return Gate {
                bytes_cap: i64::MAX,
                io_cap: i64::MAX,
                ..shut
            };
        }
        // tg_update_slice extends a window that holds j to at least j + S
        // (end_kept implies end >= j + S); the trim starts at two slices
        if !(in_window && end_kept && rounddown(j - start, s) < 2 * s) {
            return shut;
        }
        let el = j - start;
        let bytes_cap = if bps == BPS_MAX {
            i64::MAX
        } else {
            match bytes_allowed(bps, bps_window(el, s), hz) as i64 {
                // U64_MAX read signed: the budget may not fit, nothing waits
                a if a < 0 => i64::MAX,
                0 => return shut,
                a => a,
            }
        };
        let io_cap = if iops == IOPS_MAX {
            i64::MAX
        } else {
            match io_allowed(iops, roundup(el + 1, s), hz) as i32 as i64 {
                a if a <= 0 => return shut,
                a => a,
            }
        };
        Gate {
            bytes_cap,
            io_cap,
            ..shut
        }
    }
}

impl Tg {
    /// One level of `__blk_throtl_bio` for a bio whose bytes are not yet
    /// charged anywhere (no BIO_BPS_THROTTLED), when the gate lets it through:
    /// `throtl_charge_bps_bio` and `throtl_charge_iops_bio`, the window left
    /// as it is. False, with nothing changed, when the full path must decide.
    #[inline]
    pub(crate) fn pass_gate(&mut self, d: usize, size: u32, j: u64, s: u64, hz: u64) -> bool {
        if self.sq.queued(d) != 0 {
            return false;
        }
        let g = &self.gate[d];
        if g.j != j || g.start != self.slice_start[d] || g.end != self.slice_end[d] {
            self.gate[d] = Gate::evaluate(self, d, j, s, hz);
        }
        let g = &self.gate[d];
        let size = size as i64;
        // io_disp + 1 <= allowed as io_disp < allowed (2^63 IOs away)
        if self.io_disp[d] >= g.io_cap || self.bytes_disp[d].wrapping_add(size) > g.bytes_cap {
            return false;
        }
        self.bytes_disp[d] += size;
        self.io_disp[d] += 1;
        true
    }
}

impl Throttle {
    /// The levels of `__blk_throtl_bio` (current era) that the gates let a
    /// bio through, from its group `cg` up, each charged and counted as the
    /// full path would. `None`: it passed the top level (the caller sets
    /// BIO_BPS_THROTTLED). Otherwise the level where the full path must
    /// decide, with nothing changed there, and the qnode of the level below
    /// that the bio passed (`None` at its own group).
    #[inline]
    pub(super) fn pass_gates(
        &mut self,
        cg: CgId,
        d: usize,
        size: u32,
        bytes: u32,
        j: u64,
    ) -> Option<(CgId, Option<QnRef>)> {
        let (s, hz) = (self.slice, self.hz);
        let mut tg = cg;
        let mut below = None;
        loop {
            let t = &mut self.tgs[tg as usize];
            if !t.pass_gate(d, size, j, s, hz) {
                return Some((tg, below));
            }
            t.stats.count_pass(d, bytes);
            below = Some(QnRef {
                owner: tg,
                on_parent: true,
            });
            match t.parent {
                Some(p) => tg = p,
                None => return None,
            }
        }
    }
}
