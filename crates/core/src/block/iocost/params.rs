//! The user interface of blk-iocost: `io.cost.qos` (`ioc_qos_write`),
//! `io.cost.model` (`ioc_cost_model_write`), `io.weight` (`ioc_weight_write`),
//! the kernel's number syntax (`match_token` + `match_u64`, `cgroup_parse_float`)
//! and the autop presets (`autop[]`).

use crate::sim::kerr::KernelError;

use super::{CGROUP_WEIGHT_MAX, CGROUP_WEIGHT_MIN, VRATE_MAX_PPM, VRATE_MIN_PPM};

// io.cost.qos params (QOS_*)
pub const QOS_RPPM: usize = 0;
pub const QOS_RLAT: usize = 1;
pub const QOS_WPPM: usize = 2;
pub const QOS_WLAT: usize = 3;
pub const QOS_MIN: usize = 4;
pub const QOS_MAX: usize = 5;
pub const NR_QOS_PARAMS: usize = 6;

// io.cost.model inputs (I_LCOEF_*)
pub const I_LCOEF_RBPS: usize = 0;
pub const I_LCOEF_RSEQIOPS: usize = 1;
pub const I_LCOEF_RRANDIOPS: usize = 2;
pub const I_LCOEF_WBPS: usize = 3;
pub const I_LCOEF_WSEQIOPS: usize = 4;
pub const I_LCOEF_WRANDIOPS: usize = 5;
pub const NR_I_LCOEFS: usize = 6;

// derived linear coefficients (LCOEF_*)
pub const LCOEF_RPAGE: usize = 0;
pub const LCOEF_RSEQIO: usize = 1;
pub const LCOEF_RRANDIO: usize = 2;
pub const LCOEF_WPAGE: usize = 3;
pub const LCOEF_WSEQIO: usize = 4;
pub const LCOEF_WRANDIO: usize = 5;
pub const NR_LCOEFS: usize = 6;

// autop preset indices
pub const AUTOP_INVALID: usize = 0;
pub const AUTOP_HDD: usize = 1;
pub const AUTOP_SSD_QD1: usize = 2;
pub const AUTOP_SSD_DFL: usize = 3;
pub const AUTOP_SSD_FAST: usize = 4;

/// One entry of `autop[]`.
#[derive(Clone, Copy, Debug)]
pub struct Autop {
    pub qos: [u32; NR_QOS_PARAMS],
    pub i_lcoefs: [u64; NR_I_LCOEFS],
    pub too_fast_vrate_pct: u32,
    pub too_slow_vrate_pct: u32,
}

const fn preset(lat: u32, l: [u64; 6], fast: u32, slow: u32) -> Autop {
    Autop {
        qos: [0, lat, 0, lat, VRATE_MIN_PPM as u32, VRATE_MAX_PPM as u32],
        i_lcoefs: l,
        too_fast_vrate_pct: fast,
        too_slow_vrate_pct: slow,
    }
}

/// `autop[]`, indexed by AUTOP_*. Entry 0 (AUTOP_INVALID) is all zeros.
pub const AUTOP: [Autop; 5] = [
    Autop {
        qos: [0; 6],
        i_lcoefs: [0; 6],
        too_fast_vrate_pct: 0,
        too_slow_vrate_pct: 0,
    },
    preset(
        250_000,
        [174_019_176, 41_708, 370, 178_075_866, 42_705, 378],
        0,
        0,
    ),
    preset(
        25_000,
        [245_855_193, 61_575, 6_946, 141_365_009, 33_716, 26_796],
        0,
        0,
    ),
    preset(
        25_000,
        [488_636_629, 8_932, 8_518, 427_891_549, 28_755, 21_940],
        500,
        0,
    ),
    preset(
        5_000,
        [
            3_102_524_156,
            724_816,
            778_122,
            1_742_780_862,
            425_702,
            443_193,
        ],
        0,
        10,
    ),
];

/// The number a `%u` token of `match_token` accepts and `match_u64` converts:
/// base 0 (`0x` hex, leading `0` octal, else decimal), digits only, no sign,
/// the whole value consumed, and no u64 overflow (kstrtoull's -ERANGE).
pub fn parse_kernel_u64(s: &str) -> Option<u64> {
    let b = s.as_bytes();
    let (radix, digits) =
        if b.len() >= 3 && b[0] == b'0' && (b[1] | 0x20) == b'x' && b[2].is_ascii_hexdigit() {
            (16, &s[2..])
        } else if b.first() == Some(&b'0') {
            (8, s)
        } else {
            (10, s)
        };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    u64::from_str_radix(digits, radix).ok()
}

/// Parse `%lld` the way the kernel's `vsscanf` does at the start of `s`: an
/// optional '-' directly followed by a digit, then decimal digits. Returns
/// the value and the bytes consumed, or None when nothing matched.
fn scan_lld(s: &[u8]) -> Option<(i64, usize)> {
    let mut i = 0;
    while i < s.len() && (s[i] == b' ' || s[i] == b'\t' || s[i] == b'\n') {
        i += 1;
    }
    let neg = i < s.len() && s[i] == b'-';
    if neg {
        i += 1;
    }
    let start = i;
    let mut v: i64 = 0;
    while i < s.len() && s[i].is_ascii_digit() {
        v = v.checked_mul(10)?.checked_add((s[i] - b'0') as i64)?;
        i += 1;
    }
    if i == start {
        return None;
    }
    Some((if neg { -v } else { v }, i))
}

/// `cgroup_parse_float(input, dec_shift)`: "90" -> 90*10^shift, "90.5" ->
/// 9050 (shift 2), extra fraction digits rounded to nearest. Like the kernel's
/// `sscanf("%lld.%n%lld%n")`, text after the whole part that is not '.' is
/// ignored and a negative fraction is rejected. Overflowing numbers are
/// rejected (the kernel's simple_strtoll would wrap).
pub fn cgroup_parse_float(input: &str, dec_shift: u32) -> Result<i64, ()> {
    let b = input.as_bytes();
    let (whole, n) = scan_lld(b).ok_or(())?;
    let mut frac: i64 = 0;
    let mut flen: u32 = 0;
    if n < b.len() && b[n] == b'.' {
        let fstart = n + 1;
        if let Some((f, m)) = scan_lld(&b[fstart..]) {
            frac = f;
            flen = m as u32;
        }
    }
    if frac < 0 {
        return Err(());
    }
    let pow10 = |e: u32| -> Option<i64> { 10i64.checked_pow(e) };
    if flen < dec_shift {
        frac *= pow10(dec_shift - flen).ok_or(())?;
    } else {
        frac = match pow10(flen - dec_shift) {
            // DIV_ROUND_CLOSEST_ULL
            Some(d) => ((frac as u64 + d as u64 / 2) / d as u64) as i64,
            None => 0,
        };
    }
    whole
        .checked_mul(pow10(dec_shift).ok_or(())?)
        .and_then(|w| w.checked_add(frac))
        .ok_or(())
}

/// Match `key=%s` (non-empty value) or `key=%u` style tokens: the value after `key=`.
fn token_value<'a>(tok: &'a str, key: &str) -> Option<&'a str> {
    let rest = tok.strip_prefix(key)?.strip_prefix('=')?;
    Some(rest)
}

/// The body tokens: split on space, tab and newline, empty tokens skipped (strsep).
fn tokens(body: &str) -> impl Iterator<Item = &str> {
    body.split([' ', '\t', '\n']).filter(|t| !t.is_empty())
}

fn einval(msg: String) -> KernelError {
    KernelError::einval(msg)
}

/// The outcome of a valid io.cost.qos write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QosWrite {
    pub qos: [u32; NR_QOS_PARAMS],
    pub enable: bool,
    pub user: bool,
}

/// `ioc_qos_write` body parsing, starting from the current values. Nothing is
/// applied on error.
pub fn parse_qos_body(
    body: &str,
    cur: [u32; NR_QOS_PARAMS],
    enable: bool,
    user: bool,
) -> Result<QosWrite, KernelError> {
    let mut qos = cur;
    let mut enable = enable;
    let mut user = user;
    for p in tokens(body) {
        // qos_ctrl_tokens
        if let Some(v) = token_value(p, "enable") {
            let n = parse_kernel_u64(v).ok_or_else(|| {
                einval(format!(
                    "io.cost.qos: 'enable={v}': expected an unsigned number"
                ))
            })?;
            enable = n != 0;
            continue;
        }
        if let Some(v) = token_value(p, "ctrl").filter(|v| !v.is_empty()) {
            match v {
                "auto" => user = false,
                "user" => user = true,
                _ => {
                    return Err(einval(format!(
                        "io.cost.qos: 'ctrl={v}': expected auto or user"
                    )))
                }
            }
            continue;
        }
        // qos_tokens
        let (key, idx) = match p.split_once('=') {
            Some(("rpct", _)) => ("rpct", QOS_RPPM),
            Some(("rlat", _)) => ("rlat", QOS_RLAT),
            Some(("wpct", _)) => ("wpct", QOS_WPPM),
            Some(("wlat", _)) => ("wlat", QOS_WLAT),
            Some(("min", _)) => ("min", QOS_MIN),
            Some(("max", _)) => ("max", QOS_MAX),
            _ => {
                return Err(einval(format!(
                    "io.cost.qos: unknown key '{p}' (expected enable, ctrl, rpct, rlat, wpct, wlat, min or max)"
                )))
            }
        };
        let v = token_value(p, key).unwrap_or("");
        match idx {
            QOS_RPPM | QOS_WPPM | QOS_MIN | QOS_MAX => {
                if v.is_empty() || v.len() >= 32 {
                    return Err(einval(format!("io.cost.qos: '{p}': expected a percentage")));
                }
                let f = cgroup_parse_float(v, 2).map_err(|_| {
                    einval(format!(
                        "io.cost.qos: '{p}': expected a percentage such as 90 or 95.5"
                    ))
                })?;
                if idx == QOS_RPPM || idx == QOS_WPPM {
                    if !(0..=10000).contains(&f) {
                        return Err(einval(format!(
                            "io.cost.qos: '{p}': the percentile must be within 0..100"
                        )));
                    }
                    qos[idx] = (f * 100) as u32;
                } else {
                    if f < 0 {
                        return Err(einval(format!("io.cost.qos: '{p}': must not be negative")));
                    }
                    let ppm = (f as i128 * 100).clamp(VRATE_MIN_PPM as i128, VRATE_MAX_PPM as i128);
                    qos[idx] = ppm as u32;
                }
            }
            _ => {
                let n = parse_kernel_u64(v).ok_or_else(|| {
                    einval(format!(
                        "io.cost.qos: '{p}': expected a latency in microseconds"
                    ))
                })?;
                // stored in a u32, silently truncated as in the kernel
                qos[idx] = n as u32;
            }
        }
        user = true;
    }
    if qos[QOS_MIN] > qos[QOS_MAX] {
        return Err(einval(format!(
            "io.cost.qos: min ({}.{:02}) is above max ({}.{:02})",
            qos[QOS_MIN] / 10000,
            qos[QOS_MIN] % 10000 / 100,
            qos[QOS_MAX] / 10000,
            qos[QOS_MAX] % 10000 / 100
        )));
    }
    Ok(QosWrite { qos, enable, user })
}

/// `ioc_cost_model_write` body parsing: returns the new inputs and the user flag.
pub fn parse_model_body(
    body: &str,
    cur: [u64; NR_I_LCOEFS],
    user: bool,
) -> Result<([u64; NR_I_LCOEFS], bool), KernelError> {
    let mut u = cur;
    let mut user = user;
    for p in tokens(body) {
        if let Some(v) = token_value(p, "ctrl").filter(|v| !v.is_empty()) {
            match v {
                "auto" => user = false,
                "user" => user = true,
                _ => {
                    return Err(einval(format!(
                        "io.cost.model: 'ctrl={v}': expected auto or user"
                    )))
                }
            }
            continue;
        }
        if let Some(v) = token_value(p, "model").filter(|v| !v.is_empty()) {
            if v != "linear" {
                return Err(einval(format!(
                    "io.cost.model: 'model={v}': the only model is linear"
                )));
            }
            continue;
        }
        let idx = match p.split_once('=').map(|(k, _)| k) {
            Some("rbps") => I_LCOEF_RBPS,
            Some("rseqiops") => I_LCOEF_RSEQIOPS,
            Some("rrandiops") => I_LCOEF_RRANDIOPS,
            Some("wbps") => I_LCOEF_WBPS,
            Some("wseqiops") => I_LCOEF_WSEQIOPS,
            Some("wrandiops") => I_LCOEF_WRANDIOPS,
            _ => {
                return Err(einval(format!(
                    "io.cost.model: unknown key '{p}' (expected ctrl, model, rbps, rseqiops, rrandiops, wbps, wseqiops or wrandiops)"
                )))
            }
        };
        let v = p.split_once('=').map(|(_, v)| v).unwrap_or("");
        u[idx] = parse_kernel_u64(v)
            .ok_or_else(|| einval(format!("io.cost.model: '{p}': expected an unsigned number")))?;
        user = true;
    }
    Ok((u, user))
}

/// One io.weight write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WeightLine {
    /// `default N` or `N`: the cgroup's default weight.
    Default(u32),
    /// `MAJ:MIN N` (N = 0 for `MAJ:MIN default`, which clears the override).
    Dev((u32, u32), u32),
}

/// `sscanf("%u")` at the start of `s` (leading blanks skipped, trailing text ignored).
fn sscanf_u(s: &str) -> Option<u64> {
    let t = s.trim_start();
    let end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    if end == 0 {
        return None;
    }
    // out-of-range values are rejected by the caller's range check
    Some(t[..end].parse::<u64>().unwrap_or(u64::MAX))
}

fn weight_in_range(v: u64, what: &str) -> Result<u32, KernelError> {
    if v < CGROUP_WEIGHT_MIN as u64 || v > CGROUP_WEIGHT_MAX as u64 {
        return Err(einval(format!("io.weight: {what} {v} is outside 1..10000")));
    }
    Ok(v as u32)
}

/// `ioc_weight_write` syntax.
pub fn parse_weight_line(line: &str) -> Result<WeightLine, KernelError> {
    if !line.contains(':') {
        let t = line.trim_start();
        let v = if let Some(rest) = t.strip_prefix("default") {
            sscanf_u(rest).or_else(|| sscanf_u(t))
        } else {
            sscanf_u(t)
        };
        let v = v.ok_or_else(|| {
            einval(format!(
                "io.weight: '{}': expected 'default N' or N",
                line.trim()
            ))
        })?;
        return Ok(WeightLine::Default(weight_in_range(v, "weight")?));
    }
    let (dev, body) = crate::sim::kerr::split_devno(line)?;
    if body.starts_with("default") {
        return Ok(WeightLine::Dev(dev, 0));
    }
    let v = sscanf_u(body).ok_or_else(|| {
        einval(format!(
            "io.weight: '{}': expected 'MAJ:MIN N' or 'MAJ:MIN default'",
            line.trim()
        ))
    })?;
    Ok(WeightLine::Dev(dev, weight_in_range(v, "weight")?))
}
