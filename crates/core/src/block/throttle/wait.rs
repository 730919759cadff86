//! Budget and wait formulas, one function per kernel era. All values are
//! jiffies, bytes or IO counts; `s` is the slice length and `hz` is HZ.
//!
//! * `*_2018`: v4.12..v5.2 (`tg_with_in_bps_limit`, `tg_with_in_iops_limit`);
//!   the iops wait exists in the pre-991f61fe form and the slice-capped form.
//! * `*_joint`: the single-FIFO kernels 6.1.y and v6.12..v6.14 (6.12.y)
//!   (`tg_within_bps_limit`, `tg_within_iops_limit` with the carryover fields);
//!   `signed` selects 6.12's reading of the carryover (bb8d5587bdc3, v6.6),
//!   `min_wait` its minimum iops wait (1beabab88ece, v6.11).
//! * `*_current`: today's kernel (`tg_within_bps_limit`, `tg_within_iops_limit`,
//!   `calculate_bytes_allowed`, `calculate_io_allowed`).

/// `roundup(x, s)` of the kernel: the next multiple of `s` at or above `x`.
#[inline]
pub(crate) fn roundup(x: u64, s: u64) -> u64 {
    x.div_ceil(s) * s
}

#[inline]
pub(crate) fn rounddown(x: u64, s: u64) -> u64 {
    x / s * s
}

/// Floor of log2, as the kernel's `ilog2` for non-zero values.
#[inline]
fn ilog2(x: u64) -> i64 {
    63 - x.leading_zeros() as i64
}

/// `calculate_io_allowed`: IOs earned in `j` jiffies, saturated at UINT_MAX.
/// Callers read the result as a signed int (UINT_MAX becomes -1).
#[inline]
pub(crate) fn io_allowed(iops: u32, j: u64, hz: u64) -> u32 {
    let x = (iops as u64).wrapping_mul(j) / hz;
    x.min(u32::MAX as u64) as u32
}

/// `calculate_bytes_allowed`: bytes earned in `j` jiffies with an exact
/// 128-bit intermediate, or U64_MAX when the result may not fit.
/// Callers read it as a signed 64-bit value (U64_MAX becomes -1).
#[inline]
pub(crate) fn bytes_allowed(bps: u64, j: u64, hz: u64) -> u64 {
    if j == 0 {
        return 0;
    }
    if ilog2(bps) + ilog2(j) - ilog2(hz) > 62 {
        return u64::MAX;
    }
    ((bps as u128 * j as u128) / hz as u128) as u64
}

/// Current `tg_within_iops_limit`: 0 if one more IO fits the budget of the
/// window ending at the next slice boundary after `el`; otherwise the time to
/// that boundary, at least `HZ/iops + 1` (the v6.11 minimum).
pub(crate) fn iops_wait_current(io_disp: i64, el: u64, iops: u32, s: u64, hz: u64) -> u64 {
    let rnd = roundup(el + 1, s);
    let allowed = io_allowed(iops, rnd, hz) as i32 as i64;
    if allowed > 0 && io_disp + 1 <= allowed {
        return 0;
    }
    (rnd - el).max(hz / iops as u64 + 1)
}

/// Current `tg_within_bps_limit`: 0 if `size` more bytes fit the budget of
/// the window rounded up to a slice boundary (el = 0 counts as one slice),
/// otherwise the time the excess needs at `bps` plus the rounding.
pub(crate) fn bps_wait_current(
    bytes_disp: i64,
    size: u64,
    el: u64,
    bps: u64,
    s: u64,
    hz: u64,
) -> u64 {
    let rnd = bps_window(el, s);
    let allowed = bytes_allowed(bps, rnd, hz) as i64;
    if (allowed > 0 && bytes_disp + size as i64 <= allowed) || allowed < 0 {
        return 0;
    }
    let extra = (bytes_disp + size as i64 - allowed) as u64;
    let mut wait = extra.wrapping_mul(hz) / bps;
    if wait == 0 {
        wait = 1;
    }
    wait + (rnd - el)
}

/// `tg_within_bps_limit` of 6.1.y / 6.12.y: 0 when `size` more bytes fit
/// the budget of the window rounded up to a slice boundary (el = 0 counts as
/// one slice) plus the carryover, else the wait (at least 1 jiffy, plus the
/// rounding). Counters and carryover are bit patterns in the kernel's u64 /
/// long long: 6.1 adds and compares unsigned (a negative carryover wraps to a
/// huge budget and lets bios through, the bug bb8d5587bdc3 fixed); 6.12 adds
/// signed and requires a positive budget.
pub(crate) fn bps_wait_joint(
    bytes_disp: u64,
    carryover: u64,
    size: u64,
    el: u64,
    bps: u64,
    s: u64,
    hz: u64,
    signed: bool,
) -> u64 {
    let rnd = bps_window(el, s);
    let allowed = bytes_allowed(bps, rnd, hz).wrapping_add(carryover);
    let need = bytes_disp.wrapping_add(size);
    let within = if signed {
        (allowed as i64) > 0 && need <= allowed
    } else {
        need <= allowed
    };
    if within {
        return 0;
    }
    let extra = need.wrapping_sub(allowed);
    let wait = (extra.wrapping_mul(hz) / bps).max(1);
    wait + (rnd - el)
}

/// `tg_within_iops_limit` of 6.1.y / 6.12.y: 0 when one more IO fits the
/// budget of the window ending at the next slice boundary after `el` plus
/// the carryover (32-bit: unsigned in 6.1, signed and positive in 6.12),
/// else the time to that boundary; with `min_wait` (v6.11+) at least
/// `HZ/iops + 1`.
pub(crate) fn iops_wait_joint(
    io_disp: u32,
    carryover: u32,
    el: u64,
    iops: u32,
    s: u64,
    hz: u64,
    signed: bool,
    min_wait: bool,
) -> u64 {
    let rnd = roundup(el + 1, s);
    let allowed = io_allowed(iops, rnd, hz).wrapping_add(carryover);
    let need = io_disp.wrapping_add(1);
    let within = if signed {
        (allowed as i32) > 0 && need <= allowed
    } else {
        need <= allowed
    };
    if within {
        return 0;
    }
    let wait = rnd - el;
    if min_wait {
        wait.max(hz / iops as u64 + 1)
    } else {
        wait
    }
}

/// The bps budget window of every era since v4.12 (`tg_with_in_bps_limit`,
/// `tg_within_bps_limit`): the elapsed time rounded up to a slice boundary,
/// el = 0 counting as one slice.
#[inline]
pub(super) fn bps_window(el: u64, s: u64) -> u64 {
    roundup(if el == 0 { s } else { el }, s)
}

/// v4.12..v5.2 `tg_with_in_bps_limit`: `None` when within the limit, else
/// the wait. The product `bps * rnd` is 64-bit and wraps (for the unlimited
/// value it stays huge, so it never throttles).
pub(crate) fn bps_wait_2018(
    bytes_disp: u64,
    size: u64,
    el: u64,
    bps: u64,
    s: u64,
    hz: u64,
) -> Option<u64> {
    let rnd = bps_window(el, s);
    let allowed = bps.wrapping_mul(rnd) / hz;
    if bytes_disp.wrapping_add(size) <= allowed {
        return None;
    }
    let extra = bytes_disp.wrapping_add(size) - allowed;
    let mut wait = extra.wrapping_mul(hz) / bps;
    if wait == 0 {
        wait = 1;
    }
    Some(wait + (rnd - el))
}

/// v4.12..v5.2 `tg_with_in_iops_limit`: `None` when within the limit, else
/// the wait. `capped` selects the 991f61fe form (v4.19..v5.2): wait until the
/// end of the current window, which is 0 when `el` is a non-zero multiple of
/// S (the bug fixed by 3a10f999 in v5.3). Otherwise the pre-fix form: wait
/// until the IO would be due at the exact rate counted from slice_start.
pub(crate) fn iops_wait_2018(
    io_disp: u64,
    el: u64,
    iops: u32,
    s: u64,
    hz: u64,
    capped: bool,
) -> Option<u64> {
    let rnd = bps_window(el, s);
    let allowed = ((iops as u64).wrapping_mul(rnd) / hz).min(u32::MAX as u64);
    if io_disp + 1 <= allowed {
        return None;
    }
    if capped {
        return Some(rnd - el);
    }
    let target = (io_disp + 1) * hz / iops as u64 + 1;
    Some(if target > el { target - el } else { 1 })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    /// Spec §8 (HZ=1000, S=100).
    #[test]
    fn spec_section_8_table() {
        assert_eq!(iops_wait_current(10, 0, 100, 100, 1000), 100);
        assert_eq!(iops_wait_current(10, 41, 100, 100, 1000), 59);
        assert_eq!(iops_wait_current(0, 0, 5, 100, 1000), 201);
        // The spec's table says 999 (899 + 100); the exact arithmetic gives
        // extra = 943719, 943719 * 1000 / 1048576 = 900.0006 -> 900, + 100.
        assert_eq!(bps_wait_current(0, MIB, 0, MIB, 100, 1000), 1000);
        assert_eq!(
            bps_wait_current(200 * 1024, 64 * 1024, 250, MIB, 100, 1000),
            0
        );
        // within budget
        assert_eq!(iops_wait_current(9, 41, 100, 100, 1000), 0);
    }

    /// Spec §12.4: third IO of a 20-jiffy slice at el = 8, iops = 100, HZ = 1000.
    #[test]
    fn seed_fix_effect() {
        assert_eq!(iops_wait_2018(2, 8, 100, 20, 1000, false), Some(23));
        assert_eq!(iops_wait_2018(2, 8, 100, 20, 1000, true), Some(12));
        assert_eq!(iops_wait_2018(1, 8, 100, 20, 1000, false), None);
        // steady state of the seed: el = 19 -> 12 (pre) vs 1 (capped)
        assert_eq!(iops_wait_2018(2, 19, 100, 20, 1000, false), Some(12));
        assert_eq!(iops_wait_2018(2, 19, 100, 20, 1000, true), Some(1));
        // the zero-wait case of the capped form at an exact boundary
        assert_eq!(iops_wait_2018(2, 20, 100, 20, 1000, true), Some(0));
        // v5.3+ rounding: at an exact boundary the next window already counts
        assert_eq!(iops_wait_current(2, 20, 100, 20, 1000), 0);
        assert_eq!(iops_wait_current(4, 20, 100, 20, 1000), 20);
        // a bigger slice: the budget of the rounded window admits more
        assert_eq!(iops_wait_2018(2, 39, 100, 40, 1000, false), None);
        assert_eq!(iops_wait_2018(4, 39, 100, 40, 1000, false), Some(12));
        assert_eq!(iops_wait_2018(6, 60, 100, 20, 1000, false), Some(11));
    }

    #[test]
    fn bps_eras_agree() {
        assert_eq!(bps_wait_2018(0, MIB, 0, MIB, 100, 1000), Some(1000));
        assert_eq!(bps_wait_2018(0, 4096, 0, u64::MAX, 100, 1000), None);
        assert_eq!(bps_wait_current(0, 4096, 0, u64::MAX, 100, 1000), 0);
    }

    #[test]
    fn overflow_guards() {
        assert_eq!(bytes_allowed(u64::MAX, 100, 1000), u64::MAX / 10); // 63 + 6 - 9 <= 62: exact
        assert_eq!(bytes_allowed(u64::MAX, 100_000, 1000), u64::MAX); // 63 + 16 - 9 > 62
        assert_eq!(bytes_allowed(1 << 40, 100, 1000), (1u64 << 40) / 10);
        assert_eq!(io_allowed(u32::MAX, 1000, 1000), u32::MAX);
        assert_eq!(io_allowed(u32::MAX, 2000, 1000), u32::MAX);
        assert_eq!(roundup(41, 20), 60);
        assert_eq!(roundup(40, 20), 40);
        assert_eq!(rounddown(59, 20), 40);
    }
}
