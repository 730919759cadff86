//! The builtin linear cost model: `calc_lcoefs`, `calc_vtime_cost_builtin`
//! and `calc_size_vtime_cost_builtin`, in the kernel's integer arithmetic.

use crate::block::bio::Op;

use super::params::*;
use super::{
    div_round_up, IOC_PAGE_SIZE, IOC_SECT_TO_PAGE_SHIFT, LCOEF_RANDIO_PAGES, VTIME_PER_SEC,
};

/// `calc_lcoefs(bps, seqiops, randiops)` -> (page, seqio, randio) in vtime.
pub fn calc_lcoefs(bps: u64, seqiops: u64, randiops: u64) -> (u64, u64, u64) {
    let (mut page, mut seqio, mut randio) = (0, 0, 0);
    if bps != 0 {
        let bps_pages = div_round_up(bps, IOC_PAGE_SIZE);
        page = if bps_pages != 0 {
            div_round_up(VTIME_PER_SEC, bps_pages)
        } else {
            1
        };
    }
    if seqiops != 0 {
        let v = div_round_up(VTIME_PER_SEC, seqiops);
        if v > page {
            seqio = v - page;
        }
    }
    if randiops != 0 {
        let v = div_round_up(VTIME_PER_SEC, randiops);
        if v > page {
            randio = v - page;
        }
    }
    (page, seqio, randio)
}

/// `ioc_refresh_lcoefs`
pub fn lcoefs_from(u: &[u64; NR_I_LCOEFS]) -> [u64; NR_LCOEFS] {
    let (rp, rs, rr) = calc_lcoefs(u[I_LCOEF_RBPS], u[I_LCOEF_RSEQIOPS], u[I_LCOEF_RRANDIOPS]);
    let (wp, ws, wr) = calc_lcoefs(u[I_LCOEF_WBPS], u[I_LCOEF_WSEQIOPS], u[I_LCOEF_WRANDIOPS]);
    let mut c = [0; NR_LCOEFS];
    c[LCOEF_RPAGE] = rp;
    c[LCOEF_RSEQIO] = rs;
    c[LCOEF_RRANDIO] = rr;
    c[LCOEF_WPAGE] = wp;
    c[LCOEF_WSEQIO] = ws;
    c[LCOEF_WRANDIO] = wr;
    c
}

/// `calc_vtime_cost_builtin`: absolute cost (vtime at 100 %) of a bio of
/// `bytes` at `sector`, given the iocg's `cursor`. Ops other than read and
/// write cost 0 (and so bypass the controller).
#[inline]
pub fn vtime_cost(
    lcoefs: &[u64; NR_LCOEFS],
    op: Op,
    sector: u64,
    bytes: u32,
    cursor: u64,
    is_merge: bool,
) -> u64 {
    if bytes == 0 {
        return 0;
    }
    let (seqio, randio, page) = match op {
        Op::Read => (
            lcoefs[LCOEF_RSEQIO],
            lcoefs[LCOEF_RRANDIO],
            lcoefs[LCOEF_RPAGE],
        ),
        Op::Write => (
            lcoefs[LCOEF_WSEQIO],
            lcoefs[LCOEF_WRANDIO],
            lcoefs[LCOEF_WPAGE],
        ),
        _ => return 0,
    };
    let sectors = (bytes as u64) >> 9;
    let pages = (sectors >> IOC_SECT_TO_PAGE_SHIFT).max(1);
    let seek_pages = if cursor != 0 {
        sector.abs_diff(cursor) >> IOC_SECT_TO_PAGE_SHIFT
    } else {
        0
    };
    let mut cost = 0u64;
    if !is_merge {
        cost += if seek_pages > LCOEF_RANDIO_PAGES {
            randio
        } else {
            seqio
        };
    }
    cost.wrapping_add(pages.wrapping_mul(page))
}

/// `calc_size_vtime_cost_builtin`: the size-only cost of a completed request
/// (`blk_rq_stats_sectors >> 3` pages, no minimum of one).
#[inline]
pub fn size_vtime_cost(lcoefs: &[u64; NR_LCOEFS], op: Op, bytes: u32) -> u64 {
    let pages = ((bytes as u64) >> 9) >> IOC_SECT_TO_PAGE_SHIFT;
    match op {
        Op::Read => pages.wrapping_mul(lcoefs[LCOEF_RPAGE]),
        Op::Write => pages.wrapping_mul(lcoefs[LCOEF_WPAGE]),
        _ => 0,
    }
}
