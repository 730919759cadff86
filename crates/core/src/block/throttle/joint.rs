//! The single-FIFO blk-throttle of Linux 6.1.y and 6.12.y (switch values
//! `joint-fifo` and `joint-fifo-min-wait`): per group and direction one FIFO
//! of bios, each checked against the bps and the iops limit together
//! (`tg_may_dispatch`) and charged bytes and one IO together
//! (`throtl_charge_bio`); the budget left over at a limit change is kept in
//! separate carryover fields (`tg_update_carryover`, a880ae93e5b5, v6.1) that
//! the next trim folds in (`throtl_trim_slice`, e8368b57c006 and eead0056648c,
//! v6.6, backported to 6.1.y). The carryover kept in the counters (Ming
//! Lei's "blk-throttle: carry over directly", 6cc477c36875, v6.15) and the
//! v6.16 split into bps and iops queues (Zizhi Wo's "Split the blkthrotl
//! queue to solve the IO delay issue") are the `current` era; v6.15 alone
//! (the first without the second) is not modelled.
//!
//! What differs between the two values (checked against Debian's 6.1.176 and
//! 6.12.117 sources):
//! * 6.1 evaluates `tg_within_bps_limit() && tg_within_iops_limit()`: a bio
//!   over its bps budget waits for that alone and is re-checked for iops when
//!   it is due; 6.12 computes both and waits for the larger (183daeb11de8,
//!   v6.2).
//! * 6.1 keeps the carryover unsigned (u64 / unsigned int), so a negative
//!   carryover (a debt at a limit change) wraps the budget to a huge value
//!   and lets bios through; 6.12 reads it signed and needs a positive budget
//!   (bb8d5587bdc3, v6.6).
//! * 6.12 waits at least `HZ/iops + 1` for iops (1beabab88ece, v6.11).
//! * 6.12 lets REQ_META / REQ_SWAP bios of a non-root group pass over the
//!   limit and charges them (`bio_issue_as_root_blkg`, 29390bb5661d, v6.12, charged directly
//!   without a trim as a9fc8868b350 made it, in 6.12.y); 6.1 throttles
//!   them like any bio.
//!
//! Split remainders (BIO_BPS_THROTTLED, v5.18 9f5ede3c01f9 and 320fb0f91e55,
//! v6.1) are re-checked for iops only and charged one IO in both.

use super::wait::{bps_wait_joint, bytes_allowed, io_allowed, iops_wait_joint, rounddown};
use super::{Era, QBio, Throttle, BPS_MAX, IOPS_MAX};
use crate::block::blk_cgroup::CgId;

impl Throttle {
    /// 6.1 / 6.12 `tg_may_dispatch` for the head bio (or a bio about to
    /// pass a level with nothing queued): (may go, wait in jiffies).
    pub(crate) fn may_dispatch_joint(&mut self, cg: CgId, qb: &QBio, j: u64) -> (bool, u64) {
        let d = qb.dir as usize;
        let Some((bps, iops)) = self.limits_in_force(cg, d) else {
            return (true, 0);
        };
        // a lapsed slice of an empty direction restarts cleared (carryover
        // too); otherwise it is extended to at least now + S
        self.update_slice(cg, d, j);
        let v612 = self.era == Era::JointFifoMinWait;
        let (s, hz) = (self.slice, self.hz);
        let tg = &self.tgs[cg as usize];
        let el = j - tg.slice_start[d];
        let bw = if bps == BPS_MAX || qb.bps_throttled {
            0
        } else {
            bps_wait_joint(
                tg.bytes_disp[d] as u64,
                tg.carryover_bytes[d],
                qb.size as u64,
                el,
                bps,
                s,
                hz,
                v612,
            )
        };
        // 6.1: `&&` skips the iops check while the bps check fails
        let iw = if iops == IOPS_MAX || (!v612 && bw != 0) {
            0
        } else {
            iops_wait_joint(
                tg.io_disp[d] as u32,
                tg.carryover_ios[d],
                el,
                iops,
                s,
                hz,
                v612,
                v612,
            )
        };
        if bw == 0 && iw == 0 {
            return (true, 0);
        }
        let w = bw.max(iw);
        self.extend_slice(cg, d, j + w);
        (false, w)
    }

    /// 6.1 / 6.12 `throtl_charge_bio`: the bytes (unless the bio carries
    /// BIO_BPS_THROTTLED) and one IO.
    pub(crate) fn charge_joint(&mut self, cg: CgId, qb: &QBio) {
        let d = qb.dir as usize;
        let tg = &mut self.tgs[cg as usize];
        if !qb.bps_throttled {
            tg.bytes_disp[d] = (tg.bytes_disp[d] as u64).wrapping_add(qb.size as u64) as i64;
        }
        tg.io_disp[d] = (tg.io_disp[d] as u32).wrapping_add(1) as i64;
    }

    /// 6.1.y / 6.12.y `throtl_trim_slice` after `throtl_set_slice_end` (done
    /// by the caller): forget every whole slice elapsed since slice_start,
    /// the budget of that time plus the carryover taken off the counters
    /// (never below 0), the carryover cleared. The limits' budgets are
    /// computed even when unlimited (`calculate_bytes_allowed(U64_MAX, ..)`
    /// may give U64_MAX, read as -1), as in those kernels; the sums are
    /// read as long long / int.
    pub(crate) fn trim_slice_joint(&mut self, cg: CgId, d: usize, j: u64) {
        let (s, hz) = (self.slice, self.hz);
        let tg = &mut self.tgs[cg as usize];
        let elapsed = rounddown(j - tg.slice_start[d], s);
        if elapsed == 0 {
            return;
        }
        let bytes_trim =
            bytes_allowed(tg.conf.bps[d], elapsed, hz).wrapping_add(tg.carryover_bytes[d]) as i64;
        let io_trim =
            io_allowed(tg.conf.iops[d], elapsed, hz).wrapping_add(tg.carryover_ios[d]) as i32;
        if bytes_trim <= 0 && io_trim <= 0 {
            return;
        }
        tg.carryover_bytes[d] = 0;
        tg.bytes_disp[d] = if tg.bytes_disp[d] >= bytes_trim {
            (tg.bytes_disp[d] as u64).wrapping_sub(bytes_trim as u64) as i64
        } else {
            0
        };
        tg.carryover_ios[d] = 0;
        let io = tg.io_disp[d] as u32;
        tg.io_disp[d] = if io as i32 >= io_trim {
            io.wrapping_sub(io_trim as u32) as i64
        } else {
            0
        };
        tg.slice_start[d] += elapsed;
    }

    /// 6.1 / 6.12 `tg_update_carryover` (before the new limits are parsed):
    /// for each direction with bios waiting, add the budget earned since
    /// slice_start under the old limits minus what was dispatched to the
    /// carryover (wrapping, as the kernel's unsigned / signed fields).
    /// Directions with nothing waiting keep their carryover; the slice
    /// restart of `tg_conf_updated` then clears the counters but not it.
    pub(crate) fn update_carryover_joint(&mut self, cg: CgId, j: u64) {
        let hz = self.hz;
        let tg = &mut self.tgs[cg as usize];
        for d in 0..2 {
            if tg.sq.queued(d) == 0 {
                continue;
            }
            let el = j - tg.slice_start[d];
            if tg.conf.bps[d] != BPS_MAX {
                let earned = bytes_allowed(tg.conf.bps[d], el, hz);
                tg.carryover_bytes[d] = tg.carryover_bytes[d]
                    .wrapping_add(earned.wrapping_sub(tg.bytes_disp[d] as u64));
            }
            if tg.conf.iops[d] != IOPS_MAX {
                let earned = io_allowed(tg.conf.iops[d], el, hz);
                tg.carryover_ios[d] =
                    tg.carryover_ios[d].wrapping_add(earned.wrapping_sub(tg.io_disp[d] as u32));
            }
        }
    }
}
