//! fio's scalar value syntax (fio `parse.c`: `str_to_decimal`, `get_mult_bytes`,
//! `get_mult_time`, `check_int`).
//!
//! Where fio silently accepts something surprising (an unknown suffix taken as
//! 1, `10sec` read as 10 µs, trailing garbage after the digits), these parsers
//! return an error instead; each such case is listed in docs/fidelity/fio.md.

/// An integer option value: a plain number or `N%` (fio encodes the percent
/// form as `-1 - N`; here it is explicit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntVal {
    Abs(u64),
    Percent(u64),
}

const SIZE_HELP: &str =
    "a whole number with an optional k/m/g/t/p suffix (optionally followed by i and/or b), or 0x-prefixed hex";

/// Split a trimmed string into its leading decimal digits and the rest.
fn split_digits(s: &str) -> (&str, &str) {
    let s = s.strip_prefix('+').unwrap_or(s);
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    (&s[..end], &s[end..])
}

fn reject_common(s: &str) -> Result<(), String> {
    if s.is_empty() {
        return Err("a value is required".into());
    }
    if s.starts_with('(') {
        return Err("arithmetic expressions '(...)' are not supported; give the number".into());
    }
    if s.starts_with('-') {
        return Err("negative values are not allowed".into());
    }
    Ok(())
}

/// Multiplier of a size suffix, fio's `__get_mult_bytes`. With the default
/// `kb_base=1024`, `k/m/g/t/p` are powers of 1024 and the IEC spellings
/// `kib/mib/...` are powers of 1000 (inverted, for compatibility); with
/// `kb_base=1000` it is the other way round. fio recognises the inverted form
/// only when the `b` is present: `4ki` is the same as `4k`.
fn size_mult(suffix: &str, kb_base: u32) -> Option<(u64, bool)> {
    let s = suffix.to_ascii_lowercase();
    if s.is_empty() || s == "b" {
        return Some((1, false));
    }
    if s == "%" {
        return Some((1, true));
    }
    let pow = match s.as_bytes()[0] {
        b'k' => 1,
        b'm' => 2,
        b'g' => 3,
        b't' => 4,
        b'p' => 5,
        _ => return None,
    };
    let rest = &s[1..];
    let mult: u64 = match rest {
        "" | "b" | "i" => kb_base as u64,
        "ib" => {
            if kb_base == 1000 {
                1024
            } else {
                1000
            }
        }
        _ => return None,
    };
    let mut r: u64 = 1;
    for _ in 0..pow {
        r = r.checked_mul(mult)?;
    }
    Some((r, false))
}

/// A size or count (`check_str_bytes`): `4k`, `1m`, `4096`, `0x1000`, `50%`.
pub fn parse_size(s: &str, kb_base: u32) -> Result<IntVal, String> {
    let s = s.trim();
    reject_common(s)?;
    if s.contains("0x") || s.contains("0X") {
        let h = s.trim_start_matches('+');
        let h = h
            .strip_prefix("0x")
            .or_else(|| h.strip_prefix("0X"))
            .ok_or_else(|| format!("expected {SIZE_HELP}"))?;
        return u64::from_str_radix(h, 16)
            .map(IntVal::Abs)
            .map_err(|_| format!("expected {SIZE_HELP}"));
    }
    let (digits, suffix) = split_digits(s);
    if digits.is_empty() {
        return Err(format!("expected {SIZE_HELP}"));
    }
    if suffix.starts_with('.') {
        return Err("fractional values are not accepted here; give a whole number (e.g. 1536k instead of 1.5m)".into());
    }
    let n: u64 = digits.parse().map_err(|_| "number too large".to_string())?;
    let (mult, pct) = size_mult(suffix, kb_base)
        .ok_or_else(|| format!("unknown suffix '{suffix}': expected {SIZE_HELP}"))?;
    if pct {
        return Ok(IntVal::Percent(n));
    }
    n.checked_mul(mult)
        .map(IntVal::Abs)
        .ok_or_else(|| "number too large".to_string())
}

/// A size that must be absolute (no `%`).
pub fn parse_bytes(s: &str, kb_base: u32) -> Result<u64, String> {
    match parse_size(s, kb_base)? {
        IntVal::Abs(v) => Ok(v),
        IntVal::Percent(_) => Err("a percentage is not accepted here".into()),
    }
}

/// A time (`check_str_time`), returned in microseconds. Without a suffix the
/// value is in seconds when `seconds_default`, otherwise in microseconds.
/// Suffixes (any case): `d`, `h`, `m` (minutes), `s`, `ms`/`msec`, `us`/`usec`.
pub fn parse_time_us(s: &str, seconds_default: bool) -> Result<u64, String> {
    let s = s.trim();
    reject_common(s)?;
    let (digits, suffix) = split_digits(s);
    if digits.is_empty() {
        return Err(
            "expected a whole number with an optional time suffix (us, ms, s, m, h, d)".into(),
        );
    }
    if suffix.starts_with('.') {
        return Err("fractional times are not accepted; use a smaller unit (e.g. 1500ms)".into());
    }
    let n: u64 = digits.parse().map_err(|_| "number too large".to_string())?;
    let mult: u64 = match suffix.to_ascii_lowercase().as_str() {
        "" => {
            if seconds_default {
                1_000_000
            } else {
                1
            }
        }
        "us" | "usec" => 1,
        "ms" | "msec" => 1_000,
        "s" => 1_000_000,
        "m" => 60_000_000,
        "h" => 3_600_000_000,
        "d" => 86_400_000_000,
        "sec" | "secs" | "min" => {
            return Err(format!(
                "suffix '{suffix}' is not understood by fio (it would silently treat it as microseconds); use s or m"
            ))
        }
        _ => return Err(format!("unknown time suffix '{suffix}': expected us, ms, s, m, h or d")),
    };
    n.checked_mul(mult)
        .ok_or_else(|| "time too large".to_string())
}

/// A plain integer as fio's `check_int` reads booleans: decimal or 0x hex.
pub fn parse_plain_int(s: &str) -> Result<u64, String> {
    let s = s.trim();
    if s.is_empty() {
        return Err("a value is required".into());
    }
    let r = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u64::from_str_radix(h, 16)
    } else {
        s.parse::<u64>()
    };
    r.map_err(|_| "expected an integer (0 or 1 for a boolean)".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_default_kb_base() {
        let p = |s| parse_size(s, 1024).unwrap();
        assert_eq!(p("4096"), IntVal::Abs(4096));
        assert_eq!(p("4k"), IntVal::Abs(4096));
        assert_eq!(p("4K"), IntVal::Abs(4096));
        assert_eq!(p("4kb"), IntVal::Abs(4096));
        assert_eq!(p("4KB"), IntVal::Abs(4096));
        assert_eq!(p("4096b"), IntVal::Abs(4096));
        assert_eq!(p("1m"), IntVal::Abs(1 << 20));
        assert_eq!(p("4G"), IntVal::Abs(4 << 30));
        assert_eq!(p("1t"), IntVal::Abs(1 << 40));
        // inverted IEC spellings (fio's compatibility rule, needs the 'b')
        assert_eq!(p("4kib"), IntVal::Abs(4000));
        assert_eq!(p("4KiB"), IntVal::Abs(4000));
        assert_eq!(p("1mib"), IntVal::Abs(1_000_000));
        assert_eq!(p("1000mib"), IntVal::Abs(1_000_000_000));
        // without the 'b', fio's prefix match reads "ki" as "k"
        assert_eq!(p("4ki"), IntVal::Abs(4096));
        assert_eq!(p("0x1000"), IntVal::Abs(4096));
        assert_eq!(p("50%"), IntVal::Percent(50));
        assert_eq!(p(" 8k "), IntVal::Abs(8192));
    }

    #[test]
    fn sizes_kb_base_1000() {
        let p = |s| parse_size(s, 1000).unwrap();
        assert_eq!(p("4k"), IntVal::Abs(4000));
        assert_eq!(p("4kib"), IntVal::Abs(4096));
        assert_eq!(p("1m"), IntVal::Abs(1_000_000));
        assert_eq!(p("1mib"), IntVal::Abs(1 << 20));
    }

    #[test]
    fn bad_sizes() {
        for s in [
            "",
            "k",
            "4q",
            "4kk",
            "1.5m",
            "-4k",
            "(4*1024)",
            "0xzz",
            "99999999999999999999",
            "16384p",
        ] {
            assert!(parse_size(s, 1024).is_err(), "{s:?} should fail");
        }
        assert!(parse_bytes("50%", 1024).is_err());
    }

    #[test]
    fn times() {
        assert_eq!(parse_time_us("60", true).unwrap(), 60_000_000);
        assert_eq!(parse_time_us("4ms", false).unwrap(), 4_000);
        assert_eq!(parse_time_us("4", false).unwrap(), 4);
        assert_eq!(parse_time_us("10m", true).unwrap(), 600_000_000);
        assert_eq!(parse_time_us("2h", true).unwrap(), 7_200_000_000);
        assert_eq!(parse_time_us("1d", true).unwrap(), 86_400_000_000);
        assert_eq!(parse_time_us("250usec", true).unwrap(), 250);
        assert_eq!(parse_time_us("3MSEC", true).unwrap(), 3000);
        for s in ["10x", "10sec", "1.5s", "s", "", "-1"] {
            assert!(parse_time_us(s, true).is_err(), "{s:?} should fail");
        }
    }

    #[test]
    fn plain_ints() {
        assert_eq!(parse_plain_int("1").unwrap(), 1);
        assert_eq!(parse_plain_int("0x10").unwrap(), 16);
        assert!(parse_plain_int("true").is_err());
        assert!(parse_plain_int("").is_err());
    }
}
