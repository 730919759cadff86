//! Slices: the window `[slice_start, slice_end]` (jiffies, inclusive) over
//! which a group's budget is counted, per direction (`throtl_start_new_slice`,
//! `throtl_start_new_slice_with_credit`, `throtl_set_slice_end`,
//! `throtl_extend_slice`, `throtl_slice_used`, `tg_update_slice`,
//! `throtl_trim_slice`), and the carryover of a limit change
//! (`tg_update_carryover`).
//!
//! The model's jiffies start at 0, not at INITIAL_JIFFIES. Budgets only use
//! differences; slice ends are rounded on absolute jiffies as in the kernel,
//! so their alignment differs from a real boot by a constant offset.

use super::wait::{bytes_allowed, io_allowed, rounddown, roundup};
use super::{Era, Throttle, BPS_MAX, IOPS_MAX};
use crate::block::blk_cgroup::CgId;

impl Throttle {
    /// `throtl_slice_used`: now lies outside the slice window.
    pub(crate) fn slice_used(&self, cg: CgId, d: usize, j: u64) -> bool {
        let tg = &self.tgs[cg as usize];
        !(tg.slice_start[d] <= j && j <= tg.slice_end[d])
    }

    /// `throtl_start_new_slice`; the 2018 kernels always clear. `clear`
    /// zeroes the counters; `clear_carryover` also the 6.1 / 6.12 carryover
    /// fields (those kernels always zero the counters and keep the carryover
    /// only on a limit change).
    pub(crate) fn start_new_slice(
        &mut self,
        cg: CgId,
        d: usize,
        clear: bool,
        clear_carryover: bool,
        j: u64,
    ) {
        let s = self.slice;
        let tg = &mut self.tgs[cg as usize];
        if clear {
            tg.bytes_disp[d] = 0;
            tg.io_disp[d] = 0;
        }
        if clear_carryover {
            tg.carryover_bytes[d] = 0;
            tg.carryover_ios[d] = 0;
        }
        tg.slice_start[d] = j;
        tg.slice_end[d] = j + s;
    }

    /// `throtl_start_new_slice_with_credit`: a parent whose slice lapsed
    /// starts a new one back-dated to the child's slice start, so the time
    /// the bio waited below counts as elapsed budget time here.
    pub(crate) fn start_new_slice_with_credit(&mut self, cg: CgId, d: usize, start: u64, j: u64) {
        let s = self.slice;
        let era = self.era;
        let tg = &mut self.tgs[cg as usize];
        tg.bytes_disp[d] = 0;
        tg.io_disp[d] = 0;
        tg.carryover_bytes[d] = 0;
        tg.carryover_ios[d] = 0;
        // 2018 and 6.1: time_after_eq; current: time_after (same result)
        let later = if matches!(era, Era::Current | Era::JointFifoMinWait) {
            start > tg.slice_start[d]
        } else {
            start >= tg.slice_start[d]
        };
        if later {
            tg.slice_start[d] = start;
        }
        tg.slice_end[d] = j + s;
    }

    /// `throtl_set_slice_end`: rounded up to a multiple of S in absolute jiffies.
    pub(crate) fn set_slice_end(&mut self, cg: CgId, d: usize, end: u64) {
        self.tgs[cg as usize].slice_end[d] = roundup(end, self.slice);
    }

    /// `throtl_extend_slice`: only ever moves the end later.
    pub(crate) fn extend_slice(&mut self, cg: CgId, d: usize, end: u64) {
        if self.tgs[cg as usize].slice_end[d] < end {
            self.set_slice_end(cg, d, end);
        }
    }

    /// `tg_update_slice` (and the same block inline in the 2018
    /// `tg_may_dispatch`): a new, cleared slice only if the old one is over
    /// and nothing waits in this direction; otherwise extend to now + S.
    pub(crate) fn update_slice(&mut self, cg: CgId, d: usize, j: u64) {
        if self.slice_used(cg, d, j) && self.tgs[cg as usize].sq.queued(d) == 0 {
            self.start_new_slice(cg, d, true, true, j);
        } else {
            self.extend_slice(cg, d, j + self.slice);
        }
    }

    /// `throtl_trim_slice`, after every IO charged at this level.
    pub(crate) fn trim_slice(&mut self, cg: CgId, d: usize, j: u64) {
        if self.slice_used(cg, d, j) {
            return;
        }
        let s = self.slice;
        self.set_slice_end(cg, d, j + s);
        if self.era.is_2018() {
            self.trim_slice_2018(cg, d, j);
            return;
        }
        if self.era.is_joint() {
            self.trim_slice_joint(cg, d, j);
            return;
        }
        let tg = &mut self.tgs[cg as usize];
        let mut elapsed = rounddown(j - tg.slice_start[d], s);
        // keep at least two slices, and one slice of slack after the trim
        if elapsed < 2 * s {
            return;
        }
        elapsed -= s;
        let hz = self.hz;
        let b = if tg.conf.bps[d] == BPS_MAX {
            0
        } else {
            let allowed = bytes_allowed(tg.conf.bps[d], elapsed, hz) as i64;
            if allowed <= 0 || tg.bytes_disp[d] < allowed {
                std::mem::take(&mut tg.bytes_disp[d])
            } else {
                tg.bytes_disp[d] -= allowed;
                allowed
            }
        };
        let i = if tg.conf.iops[d] == IOPS_MAX {
            0
        } else {
            let allowed = io_allowed(tg.conf.iops[d], elapsed, hz) as i32 as i64;
            if allowed <= 0 || tg.io_disp[d] < allowed {
                std::mem::take(&mut tg.io_disp[d])
            } else {
                tg.io_disp[d] -= allowed;
                allowed
            }
        };
        if b == 0 && i == 0 {
            return;
        }
        tg.slice_start[d] += elapsed;
    }

    /// The v4.12..v5.2 trim: forget every whole slice elapsed since
    /// slice_start (no two-slice minimum, no retained slack). The products
    /// are 64-bit and wrap for the unlimited values, as in the kernel.
    fn trim_slice_2018(&mut self, cg: CgId, d: usize, j: u64) {
        let s = self.slice;
        let hz = self.hz;
        let tg = &mut self.tgs[cg as usize];
        let nr = (j - tg.slice_start[d]) / s;
        if nr == 0 {
            return;
        }
        let bytes_trim = tg.conf.bps[d].wrapping_mul(s).wrapping_mul(nr) / hz;
        let io_trim = (tg.conf.iops[d] as u64).wrapping_mul(s).wrapping_mul(nr) / hz;
        if bytes_trim == 0 && io_trim == 0 {
            return;
        }
        let bd = tg.bytes_disp[d] as u64;
        tg.bytes_disp[d] = if bd >= bytes_trim {
            (bd - bytes_trim) as i64
        } else {
            0
        };
        let id = tg.io_disp[d] as u64;
        tg.io_disp[d] = if id >= io_trim {
            (id - io_trim) as i64
        } else {
            0
        };
        tg.slice_start[d] += nr * s;
    }

    /// `tg_update_carryover` (current kernel, run before the new limits are
    /// parsed): with bios waiting, the budget earned under the old limits
    /// but not used becomes a negative `*_disp` (credit; positive = debt);
    /// with nothing waiting the counters are cleared. The 2018 kernels have
    /// no carryover: `tg_conf_updated` restarts cleared slices instead.
    pub(crate) fn update_carryover(&mut self, cg: CgId, j: u64) {
        let hz = self.hz;
        let tg = &mut self.tgs[cg as usize];
        for d in 0..2 {
            if tg.sq.queued(d) == 0 {
                tg.bytes_disp[d] = 0;
                tg.io_disp[d] = 0;
                continue;
            }
            let el = j - tg.slice_start[d];
            let mut bytes = 0i64;
            let mut ios = 0i64;
            if tg.conf.bps[d] != BPS_MAX {
                let a = bytes_allowed(tg.conf.bps[d], el, hz) as i64;
                if a > 0 {
                    bytes = a - tg.bytes_disp[d];
                }
            }
            if tg.conf.iops[d] != IOPS_MAX {
                let a = io_allowed(tg.conf.iops[d], el, hz) as i32 as i64;
                if a > 0 {
                    ios = a - tg.io_disp[d];
                }
            }
            tg.bytes_disp[d] = -bytes;
            tg.io_disp[d] = -ios;
        }
    }
}
