//! Option values the way fio's parser reads them (`parse.c`:
//! `__handle_option` for each `FIO_OPT_*` type; `options.c` callbacks such as
//! `str_bssplit_cb`).

use super::draft::Draft;
use crate::value::{parse_bytes, parse_plain_int, parse_size, parse_time_us, IntVal};

pub(super) fn kb(d: &Draft) -> u32 {
    d.spec.kb_base
}

/// fio's per-direction list rule (`handle_option`): `a` applies to read, write
/// and trim; `a,b` is read a, write and trim b; `a,b,c` one each; an empty
/// element keeps the default; a trailing comma stops the last value from
/// applying to the following directions (`bs=8k,32k,` leaves trim at default).
/// Store the directions a per-direction list gave (`bs=8k,32k`), keeping the
/// others as they were.
pub(super) fn set_given<T, U>(dst: &mut [U; 3], given: [Option<T>; 3], conv: impl Fn(T) -> U) {
    for (d, v) in dst.iter_mut().zip(given) {
        if let Some(v) = v {
            *d = conv(v);
        }
    }
}

pub(super) fn per_dir<T: Clone>(
    val: &str,
    mut one: impl FnMut(&str) -> Result<T, String>,
) -> Result<[Option<T>; 3], String> {
    let segs: Vec<&str> = val.split(',').collect();
    if segs.len() > 3 && !(segs.len() == 4 && segs[3].trim().is_empty()) {
        return Err("at most three comma-separated values (read,write,trim) are allowed".into());
    }
    let n = segs.len();
    let mut out: [Option<T>; 3] = [None, None, None];
    let mut any = false;
    for (i, seg) in segs.iter().enumerate().take(3) {
        let seg = seg.trim();
        if seg.is_empty() {
            continue;
        }
        let v = one(seg)?;
        any = true;
        let more = i + 1 < n;
        out[i] = Some(v.clone());
        if !more {
            for slot in out.iter_mut().skip(i + 1) {
                *slot = Some(v.clone());
            }
        }
    }
    if !any {
        return Err("a value is required".into());
    }
    Ok(out)
}

pub(super) fn int_u32(s: &str, k: u32) -> Result<u32, String> {
    let v = match parse_size(s, k)? {
        IntVal::Abs(v) => v,
        IntVal::Percent(_) => return Err("a percentage is not accepted here".into()),
    };
    u32::try_from(v).map_err(|_| format!("{v} is out of range (max {})", u32::MAX))
}

pub(super) fn int_range(s: &str, k: u32, lo: u32, hi: u32) -> Result<u32, String> {
    let v = int_u32(s, k)?;
    if v < lo {
        return Err(format!("min value out of range: {v} ({lo} min)"));
    }
    if v > hi {
        return Err(format!("max value out of range: {v} ({hi} max)"));
    }
    Ok(v)
}

/// fio `FIO_OPT_BOOL`: 0 or 1.
pub(super) fn boolean(s: &str) -> Result<bool, String> {
    match parse_plain_int(s)? {
        0 => Ok(false),
        1 => Ok(true),
        v => Err(format!(
            "max value out of range: {v} (1 max); expected 0 or 1"
        )),
    }
}

/// fio `FIO_OPT_STR_SET`: bare means set; `=N` sets N != 0.
pub(super) fn str_set(val: Option<&str>) -> Result<bool, String> {
    match val {
        None => Ok(true),
        Some(s) => Ok(parse_plain_int(s)? != 0),
    }
}

/// fio `FIO_OPT_STR`: the value (before any `:` postfix) must equal one of the
/// choices exactly.
pub(super) fn choice<'a>(
    s: &'a str,
    choices: &[&str],
) -> Result<(&'a str, Option<&'a str>), String> {
    let (head, post) = match s.find(':') {
        Some(i) => (&s[..i], Some(s[i + 1..].trim())),
        None => (s, None),
    };
    let head = head.trim();
    if choices.contains(&head) {
        Ok((head, post))
    } else {
        Err(format!("expected one of: {}", choices.join(", ")))
    }
}

pub(super) fn no_postfix(post: Option<&str>) -> Result<(), String> {
    match post {
        None => Ok(()),
        Some(p) => Err(format!("unexpected ':{p}' after the value")),
    }
}

pub(super) fn time_ns(s: &str, seconds_default: bool) -> Result<u64, String> {
    parse_time_us(s, seconds_default).map(|us| us.saturating_mul(1000))
}

pub(super) fn bs_value(s: &str, k: u32) -> Result<u64, String> {
    if s.contains('-') || s.contains(':') {
        return Err("expected one block size per direction (for a range use bsrange=lo-hi)".into());
    }
    let v = parse_bytes(s, k)?;
    if v == 0 {
        return Err("min value out of range: 0 (1 min)".into());
    }
    if v > u32::MAX as u64 {
        return Err(format!("block size {v} is too large"));
    }
    Ok(v)
}

/// One direction of `bssplit` (fio `split_parse_ddir` + `bssplit_ddir`):
/// `bs/perc:bs/perc:...`; a blank or zero percentage shares what the others
/// leave of 100 evenly (integer division, as fio); sorted by percentage.
pub(super) fn bssplit_dir(s: &str, k: u32) -> Result<Vec<(u32, u32)>, String> {
    let mut entries: Vec<(u32, Option<u32>)> = Vec::new();
    for part in s.split(':') {
        let part = part.trim();
        if part.is_empty() {
            break;
        }
        let (b, p) = match part.find('/') {
            Some(i) => (&part[..i], Some(part[i + 1..].trim())),
            None => (part, None),
        };
        let bs = bs_value(b.trim(), k).map_err(|e| format!("bad block size '{b}': {e}"))?;
        let perc = match p {
            None | Some("") => None,
            Some(p) => {
                let v: u32 = p
                    .parse()
                    .map_err(|_| format!("bad percentage '{p}': expected 0..100"))?;
                if v > 100 {
                    return Err(format!("percentage {v} is above 100"));
                }
                if v == 0 {
                    None
                } else {
                    Some(v)
                }
            }
        };
        entries.push((bs as u32, perc));
        if entries.len() > 64 {
            return Err("fio allows at most 64 bssplit entries per direction".into());
        }
    }
    if entries.is_empty() {
        return Err("expected bs/percentage[:bs/percentage...]".into());
    }
    let given: u32 = entries.iter().filter_map(|e| e.1).sum();
    let missing = entries.iter().filter(|e| e.1.is_none()).count() as u32;
    if given > 100 {
        return Err(format!("percentages add up to {given}, more than 100"));
    }
    let fill = if entries.len() == 1 && missing == 1 {
        // fio stores 0 here and then always picks this (only) size: 100 %.
        100
    } else {
        (100 - given).checked_div(missing).unwrap_or(0)
    };
    let mut out: Vec<(u32, u32)> = entries
        .into_iter()
        .map(|(b, p)| (b, p.unwrap_or(fill)))
        .collect();
    out.sort_by_key(|e| e.1);
    Ok(out)
}

pub(super) fn range_value(s: &str, k: u32) -> Result<(u64, u64), String> {
    let i = s
        .find(['-', ':'])
        .ok_or_else(|| "expected a range lo-hi (e.g. 4k-64k)".to_string())?;
    let lo = bs_value(s[..i].trim(), k)?;
    let hi = bs_value(s[i + 1..].trim(), k)?;
    Ok(if lo > hi { (hi, lo) } else { (lo, hi) })
}

pub(super) fn percentile_list(s: &str) -> Result<(Vec<f64>, u32), String> {
    let mut list = Vec::new();
    let mut prec = 0u32;
    for p in s.split(':') {
        let p = p.trim();
        let v: f64 = p
            .parse()
            .map_err(|_| format!("not a floating point value: '{p}'"))?;
        if !(0.0..=100.0).contains(&v) {
            return Err(format!("value out of range: {p} (expected 0 to 100)"));
        }
        if let Some(i) = p.find('.') {
            let n = p[i + 1..]
                .chars()
                .take_while(|c| c.is_ascii_digit())
                .count() as u32;
            prec = prec.max(n);
        }
        list.push(v);
        if list.len() > 20 {
            return Err("the list exceeds the maximum length of 20".into());
        }
    }
    Ok((list, prec))
}

pub(super) fn reject_substitutions(v: &str) -> Result<(), String> {
    if v.contains("${") {
        return Err(
            "environment variable substitution (${VAR}) is not supported; write the value".into(),
        );
    }
    for k in ["$pagesize", "$mb_memory", "$ncpus"] {
        if v.contains(k) {
            return Err(format!(
                "fio's {k} keyword is not supported; write the value"
            ));
        }
    }
    Ok(())
}
