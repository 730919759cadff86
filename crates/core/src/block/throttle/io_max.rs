//! The cgroup v2 `io.max` file: the write parser (`tg_set_limit`) and the
//! read formatter (`tg_prfill_limit`), byte-compatible with the kernel.
//!
//! Kernel facts reproduced here (block/blk-throttle.c, lib/vsprintf.c):
//! * the body is cut into whitespace-separated tokens of at most 26
//!   characters (`"%26s"`); a longer token is continued as the next token;
//! * each token is split at its first `=`; no `=` is EINVAL;
//! * the value is read with the kernel's `%llu`: leading decimal digits, the
//!   rest of the token ignored, no sign accepted, overflow wraps modulo 2^64;
//!   the literal `max` is the only other accepted value;
//! * a numeric 0 is ERANGE (checked before the key name);
//! * unknown keys are EINVAL; `riops`/`wiops` are clamped to `UINT_MAX`;
//! * keys not written keep their value; the last occurrence of a key wins.

use crate::sim::kerr::{split_devno, KernelError};

/// "No limit" for a bandwidth (`U64_MAX`).
pub const BPS_MAX: u64 = u64::MAX;
/// "No limit" for an IO rate (`UINT_MAX`).
pub const IOPS_MAX: u32 = u32::MAX;

/// The four io.max values of one (cgroup, device) pair; the sentinels
/// [`BPS_MAX`] / [`IOPS_MAX`] mean unlimited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoMaxLimits {
    /// Bytes per second, indexed READ = 0, WRITE = 1.
    pub bps: [u64; 2],
    /// IOs per second, indexed READ = 0, WRITE = 1.
    pub iops: [u32; 2],
}

impl Default for IoMaxLimits {
    fn default() -> Self {
        IoMaxLimits::UNLIMITED
    }
}

impl IoMaxLimits {
    pub const UNLIMITED: IoMaxLimits = IoMaxLimits {
        bps: [BPS_MAX; 2],
        iops: [IOPS_MAX; 2],
    };

    pub fn is_unlimited(&self) -> bool {
        *self == IoMaxLimits::UNLIMITED
    }

    /// The line `tg_prfill_limit` prints for this device, with its newline,
    /// or "" when all four values are unlimited.
    pub fn format(&self, devno: (u32, u32)) -> String {
        if self.is_unlimited() {
            return String::new();
        }
        let b = |v: u64| {
            if v == BPS_MAX {
                "max".to_string()
            } else {
                v.to_string()
            }
        };
        let i = |v: u32| {
            if v == IOPS_MAX {
                "max".to_string()
            } else {
                v.to_string()
            }
        };
        format!(
            "{}:{} rbps={} wbps={} riops={} wiops={}\n",
            devno.0,
            devno.1,
            b(self.bps[0]),
            b(self.bps[1]),
            i(self.iops[0]),
            i(self.iops[1])
        )
    }
}

/// Parse one io.max line (`MAJ:MIN key=value ...`) for a group that had no
/// limits yet. Mirrors `tg_set_limit` (device prefix as `blkg_conf_open_bdev`).
pub fn parse_io_max(line: &str) -> Result<((u32, u32), IoMaxLimits), KernelError> {
    let (devno, body) = split_devno(line)?;
    let mut lim = IoMaxLimits::UNLIMITED;
    apply_body(body, &mut lim)?;
    Ok((devno, lim))
}

/// Apply the `key=value` body of an io.max write onto `lim` (keys not named
/// keep their value). On error `lim` is left untouched, as the kernel stores
/// the four values only after the whole body parsed.
pub fn apply_body(body: &str, lim: &mut IoMaxLimits) -> Result<(), KernelError> {
    let mut v = *lim;
    for tok in tokens(body) {
        let Some((key, val)) = tok.split_once('=') else {
            return Err(KernelError::einval(format!(
                "io.max: '{tok}' is not key=value (expected rbps=, wbps=, riops= or wiops=)"
            )));
        };
        let num = match scan_llu(val) {
            Some(n) => n,
            None if val == "max" => u64::MAX,
            None => {
                return Err(KernelError::einval(format!(
                    "io.max: value '{val}' of '{key}' is neither a decimal number nor 'max'"
                )))
            }
        };
        if num == 0 {
            let digits = val.bytes().take_while(u8::is_ascii_digit).count();
            let read_as = if digits < val.len() {
                // "0x10", "0.5": %llu stops at the first non-digit
                format!(
                    " reads as 0 (the kernel's %llu takes the leading digits '{}' and ignores the rest)",
                    &val[..digits]
                )
            } else {
                " is zero".to_string()
            };
            return Err(KernelError::erange(format!(
                "io.max: '{key}={val}'{read_as}; 0 is not a valid limit (write 'max' to remove a limit)"
            )));
        }
        match key {
            "rbps" => v.bps[0] = num,
            "wbps" => v.bps[1] = num,
            "riops" => v.iops[0] = num.min(u32::MAX as u64) as u32,
            "wiops" => v.iops[1] = num.min(u32::MAX as u64) as u32,
            _ => {
                return Err(KernelError::einval(format!(
                    "io.max: unknown key '{key}' (expected rbps, wbps, riops or wiops)"
                )))
            }
        }
    }
    *lim = v;
    Ok(())
}

/// The tokens `sscanf(body, "%26s%n")` produces in a loop: runs of
/// non-whitespace, each cut after 26 bytes.
fn tokens(body: &str) -> impl Iterator<Item = &str> {
    let mut rest = body;
    std::iter::from_fn(move || {
        rest = rest.trim_start_matches(|c: char| c.is_ascii_whitespace());
        if rest.is_empty() {
            return None;
        }
        let end = rest
            .find(|c: char| c.is_ascii_whitespace())
            .unwrap_or(rest.len());
        // cut after at most 26 bytes, on a char boundary (kernel input is bytes)
        let mut cut = end.min(26);
        while !rest.is_char_boundary(cut) {
            cut -= 1;
        }
        if cut == 0 {
            cut = rest
                .char_indices()
                .nth(1)
                .map(|(i, _)| i)
                .unwrap_or(rest.len());
        }
        let (t, r) = rest.split_at(cut);
        rest = r;
        Some(t)
    })
}

/// The kernel's `sscanf(s, "%llu")`: succeeds when `s` starts with a decimal
/// digit; reads all leading digits, wrapping modulo 2^64 on overflow
/// (`simple_strntoull`); ignores what follows. No sign is accepted.
fn scan_llu(s: &str) -> Option<u64> {
    let digits: &str = &s[..s.bytes().take_while(|b| b.is_ascii_digit()).count()];
    if digits.is_empty() {
        return None;
    }
    Some(digits.bytes().fold(0u64, |acc, b| {
        acc.wrapping_mul(10).wrapping_add((b - b'0') as u64)
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::kerr::Errno;

    fn err(line: &str) -> Errno {
        parse_io_max(line).unwrap_err().errno
    }

    #[test]
    fn valid_lines() {
        let (dev, l) = parse_io_max("8:16 rbps=2097152 wiops=120").unwrap();
        assert_eq!(dev, (8, 16));
        assert_eq!(l.bps, [2097152, BPS_MAX]);
        assert_eq!(l.iops, [IOPS_MAX, 120]);
        assert_eq!(
            l.format(dev),
            "8:16 rbps=2097152 wbps=max riops=max wiops=120\n"
        );
        let (_, l) = parse_io_max("253:1 riops=100 rbps=max").unwrap();
        assert_eq!(l.iops[0], 100);
        assert_eq!(l.bps[0], BPS_MAX);
        // all max: nothing to print
        let (d, l) = parse_io_max("253:1 rbps=max wbps=max riops=max wiops=max").unwrap();
        assert_eq!(l.format(d), "");
        // empty body is accepted and changes nothing
        assert!(parse_io_max("8:0").unwrap().1.is_unlimited());
        // last key wins
        assert_eq!(parse_io_max("8:0 riops=5 riops=7").unwrap().1.iops[0], 7);
        // extra white space, tabs
        assert_eq!(
            parse_io_max("8:0   wbps=10\t riops=3 ").unwrap().1.bps[1],
            10
        );
    }

    #[test]
    fn scanf_quirks() {
        // leading digits followed by junk are accepted
        assert_eq!(parse_io_max("8:0 rbps=12abc").unwrap().1.bps[0], 12);
        assert_eq!(parse_io_max("8:0 rbps=1k").unwrap().1.bps[0], 1);
        // hex is read as decimal "0" -> zero -> ERANGE
        assert_eq!(err("8:0 rbps=0x10"), Errno::Erange);
        // the kernel's %llu takes no sign
        assert_eq!(err("8:0 rbps=-1"), Errno::Einval);
        assert_eq!(err("8:0 rbps=+5"), Errno::Einval);
        // 'max' must be exact
        assert_eq!(err("8:0 rbps=maxx"), Errno::Einval);
        assert_eq!(err("8:0 rbps=MAX"), Errno::Einval);
        assert_eq!(err("8:0 rbps="), Errno::Einval);
    }

    #[test]
    fn zero_read_from_a_longer_value_says_how() {
        let e = parse_io_max("8:0 riops=0x10").unwrap_err();
        assert_eq!(e.errno, Errno::Erange);
        assert!(e.msg.contains("reads as 0"), "{}", e.msg);
        assert!(e.msg.contains("'0'"), "{}", e.msg);
        let e = parse_io_max("8:0 riops=0").unwrap_err();
        assert!(e.msg.contains("is zero"), "{}", e.msg);
    }

    #[test]
    fn errors() {
        assert_eq!(err("8:0 rbps"), Errno::Einval);
        assert_eq!(err("8:0 rbps=0"), Errno::Erange);
        assert_eq!(err("8:0 riops=000"), Errno::Erange);
        // value is checked before the key: zero with an unknown key is ERANGE
        assert_eq!(err("8:0 foo=0"), Errno::Erange);
        assert_eq!(err("8:0 foo=1"), Errno::Einval);
        assert_eq!(err("8:0 =5"), Errno::Einval);
        assert_eq!(err("sda rbps=1"), Errno::Einval);
        assert_eq!(err("8-0 rbps=1"), Errno::Einval);
        let e = parse_io_max("8:0 rbps=0").unwrap_err();
        assert!(e.msg.contains("rbps"), "{}", e.msg);
    }

    #[test]
    fn boundaries() {
        // U64_MAX written as a number is the "unlimited" sentinel
        let (d, l) = parse_io_max("8:0 rbps=18446744073709551615").unwrap();
        assert_eq!(l.bps[0], BPS_MAX);
        assert_eq!(l.format(d), "");
        // 2^64 wraps to 0 -> ERANGE; 2^64+1 wraps to 1
        assert_eq!(err("8:0 rbps=18446744073709551616"), Errno::Erange);
        assert_eq!(
            parse_io_max("8:0 rbps=18446744073709551617").unwrap().1.bps[0],
            1
        );
        // iops clamp to UINT_MAX, which means unlimited
        assert_eq!(
            parse_io_max("8:0 riops=4294967294").unwrap().1.iops[0],
            4294967294
        );
        assert_eq!(
            parse_io_max("8:0 riops=4294967295").unwrap().1.iops[0],
            IOPS_MAX
        );
        assert_eq!(
            parse_io_max("8:0 riops=99999999999").unwrap().1.iops[0],
            IOPS_MAX
        );
        // a token longer than 26 characters continues as a new token without '='
        assert_eq!(err("8:0 rbps=1234567890123456789012345"), Errno::Einval);
        // exactly 26 characters is one token
        assert_eq!(
            parse_io_max("8:0 wiops=12345678901234567890")
                .unwrap()
                .1
                .iops[1],
            IOPS_MAX
        );
        assert_eq!(
            parse_io_max("8:0 rbps=1 wbps=1 riops=1 wiops=1")
                .unwrap()
                .1
                .format((8, 0)),
            "8:0 rbps=1 wbps=1 riops=1 wiops=1\n"
        );
    }

    #[test]
    fn failed_write_changes_nothing() {
        let mut l = IoMaxLimits::UNLIMITED;
        l.iops[0] = 50;
        assert!(apply_body("riops=10 wbps=0", &mut l).is_err());
        assert_eq!(l.iops[0], 50);
        apply_body("wbps=1000", &mut l).unwrap();
        assert_eq!((l.iops[0], l.bps[1]), (50, 1000));
    }
}
