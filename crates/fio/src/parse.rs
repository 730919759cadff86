//! fio job files and command lines, read the way fio reads them (fio `init.c`:
//! `__parse_jobs_ini`, `parse_cmd_line`; `parse.c`: `handle_option`,
//! `__handle_option`; `options.c`: the option table and its callbacks;
//! `init.c`: `fixup_options`).
//!
//! * Job files are INI: `[global]` sections set defaults for the jobs *below*
//!   them; `;` and `#` start comments (anywhere on a line, as in fio); options are
//!   `name=value`, or a bare `name` for fio's "string set" options
//!   (`time_based`, `group_reporting`, `norandommap`, `stonewall`, `new_group`,
//!   `thread`). Within a section fio applies `kb_base` first and `filename`
//!   last (option priorities); the recorded option order follows that too.
//! * Command lines: `--name=X` starts a job; options before the first `--name`
//!   are global. Options taking a value accept `--opt=val` and `--opt val`
//!   (getopt's required-argument rule); the string-set options accept a bare
//!   `--opt` or `--opt=N`. A leading `fio` program name is skipped.
//!
//! Each job records its own options as written (`raw_options`, canonical option
//! names as fio prints them in the JSON `"job options"`) and the global options
//! in force (`global_options`).

use crate::error::FioError;
use crate::options::{
    BsSpec, Engine, FadviseHint, JobSpec, RateProcess, RwPattern, ThinkBlocksType, UnifiedRw,
};
use crate::value::{parse_bytes, parse_plain_int, parse_size, parse_time_us, IntVal};

/// How an option takes its value (fio's `FIO_OPT_STR_SET` vs everything else).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ty {
    /// May be given bare (means 1), or `=N`.
    StrSet,
    /// Requires a value.
    Value,
}

struct Def {
    name: &'static str,
    alias: &'static str,
    ty: Ty,
    /// fio's option priority: higher is applied first within a job-file section.
    prio: i8,
    /// Accepted but without effect on the simulation.
    ignored: bool,
}

const fn d(name: &'static str, alias: &'static str, ty: Ty) -> Def {
    Def {
        name,
        alias,
        ty,
        prio: 0,
        ignored: false,
    }
}
const fn ign(name: &'static str, ty: Ty) -> Def {
    Def {
        name,
        alias: "",
        ty,
        prio: 0,
        ignored: true,
    }
}

use Ty::{StrSet as S, Value as V};

/// The job options blklab understands, with fio's canonical names and aliases.
static OPTIONS: &[Def] = &[
    d("name", "", V),
    d("description", "", V),
    Def {
        name: "filename",
        alias: "",
        ty: V,
        prio: -1,
        ignored: false,
    },
    d("rw", "readwrite", V),
    d("rwmixread", "", V),
    d("rwmixwrite", "", V),
    d("bs", "blocksize", V),
    d("bsrange", "blocksize_range", V),
    d("bssplit", "", V),
    d("iodepth", "", V),
    d("iodepth_batch", "iodepth_batch_submit", V),
    d("iodepth_batch_complete_min", "iodepth_batch_complete", V),
    d("iodepth_batch_complete_max", "", V),
    d("iodepth_low", "", V),
    d("direct", "", V),
    d("buffered", "", V),
    d("ioengine", "", V),
    d("size", "", V),
    d("offset", "fileoffset", V),
    d("runtime", "timeout", V),
    d("time_based", "", S),
    d("ramp_time", "", V),
    d("startdelay", "", V),
    d("numjobs", "", V),
    d("group_reporting", "", S),
    d("rate", "", V),
    d("rate_iops", "", V),
    d("rate_process", "", V),
    d("rate_ignore_thinktime", "", V),
    d("thinktime", "", V),
    d("thinktime_spin", "", V),
    d("thinktime_blocks", "", V),
    d("thinktime_blocks_type", "", V),
    d("norandommap", "", S),
    d("fadvise_hint", "", V),
    d("randrepeat", "", V),
    d("unified_rw_reporting", "", V),
    d("prio", "", V),
    d("prioclass", "", V),
    d("percentile_list", "", V),
    d("clat_percentiles", "", V),
    d("lat_percentiles", "", V),
    d("slat_percentiles", "", V),
    d("bwavgtime", "", V),
    d("iopsavgtime", "", V),
    d("cgroup", "", V),
    d("stonewall", "wait_for_previous", S),
    d("new_group", "", S),
    d("number_ios", "", V),
    Def {
        name: "kb_base",
        alias: "",
        ty: V,
        prio: 1,
        ignored: false,
    },
    d("thread", "", S),
    // Accepted, no effect on the simulation (the front-end warns).
    ign("invalidate", V),
    ign("randseed", V),
    ign("random_generator", V),
    ign("allrandrepeat", V),
    ign("exitall", S),
    ign("exitall_on_error", S),
    ign("create_serialize", V),
    ign("create_fsync", V),
    ign("create_on_open", V),
    ign("pre_read", V),
    ign("end_fsync", V),
    ign("fsync_on_close", V),
    ign("unlink", V),
    ign("unlink_each_loop", V),
    ign("refill_buffers", S),
    ign("zero_buffers", S),
    ign("scramble_buffers", V),
    ign("buffer_compress_percentage", V),
    ign("buffer_compress_chunk", V),
    ign("buffer_pattern", V),
    ign("dedupe_percentage", V),
    ign("lockmem", V),
    ign("clocksource", V),
    ign("cpus_allowed", V),
    ign("cpumask", V),
    ign("cpus_allowed_policy", V),
    ign("nice", V),
    ign("write_bw_log", V),
    ign("write_lat_log", V),
    ign("write_iops_log", V),
    ign("write_hist_log", V),
    ign("log_avg_msec", V),
    ign("log_hist_msec", V),
    ign("per_job_logs", V),
    ign("log_offset", V),
    ign("disk_util", V),
    ign("allow_file_create", V),
    ign("allow_mounted_write", V),
    ign("overwrite", V),
    ign("file_service_type", V),
    ign("iomem", V),
    ign("mem", V),
    ign("iomem_align", V),
];

/// fio's process-level command-line arguments that blklab accepts (not job
/// options; fio does not list them in "job options").
#[derive(Clone, Copy, PartialEq, Eq)]
enum ArgTy {
    Required,
    NoArg,
    Optional,
}

static TOP_ARGS: &[(&str, ArgTy)] = &[
    ("output", ArgTy::Required),
    ("output-format", ArgTy::Required),
    ("minimal", ArgTy::NoArg),
    ("eta", ArgTy::Required),
    ("eta-newline", ArgTy::Required),
    ("eta-interval", ArgTy::Required),
    ("status-interval", ArgTy::Required),
    ("warnings-fatal", ArgTy::NoArg),
    ("terse-version", ArgTy::Required),
    ("readonly", ArgTy::NoArg),
    ("bandwidth-log", ArgTy::NoArg),
    ("append-terse", ArgTy::Optional),
    ("max-jobs", ArgTy::Required),
    ("aux-path", ArgTy::Required),
];

fn find_option(name: &str) -> Option<&'static Def> {
    OPTIONS
        .iter()
        .find(|o| o.name == name || (!o.alias.is_empty() && o.alias == name))
}

/// A job while its options are being applied: the typed spec plus fio's raw
/// per-option fields that `fixup_options` later combines.
#[derive(Clone, Debug)]
struct Draft {
    spec: JobSpec,
    bs: [u64; 3],
    range: [Option<(u64, u64)>; 3],
    split: [Option<Vec<(u32, u32)>>; 3],
    iodepth_batch: u32,
    complete_min: u32,
    complete_max: u32,
    iodepth_low: u32,
}

impl Draft {
    fn new() -> Draft {
        Draft {
            spec: JobSpec::new(""),
            bs: [4096; 3],
            range: [None, None, None],
            split: [None, None, None],
            iodepth_batch: 1,
            complete_min: 1,
            complete_max: 0,
            iodepth_low: 0,
        }
    }

    /// A new job below the current global options (fio's `get_new_job` from
    /// `def_thread`): the global values, none of the global option list.
    fn job_from(global: &Draft, name: &str) -> Draft {
        let mut d = global.clone();
        d.spec.name = name.to_string();
        d.spec.global_options = global.spec.raw_options.clone();
        d.spec.raw_options = Vec::new();
        d
    }
}

// ---------------------------------------------------------------------------
// Value helpers

fn kb(d: &Draft) -> u32 {
    d.spec.kb_base
}

/// fio's per-direction list rule (`handle_option`): `a` applies to read, write
/// and trim; `a,b` is read a, write and trim b; `a,b,c` one each; an empty
/// element keeps the default; a trailing comma stops the last value from
/// applying to the following directions (`bs=8k,32k,` leaves trim at default).
/// Store the directions a per-direction list gave (`bs=8k,32k`), keeping the
/// others as they were.
fn set_given<T, U>(dst: &mut [U; 3], given: [Option<T>; 3], conv: impl Fn(T) -> U) {
    for (d, v) in dst.iter_mut().zip(given) {
        if let Some(v) = v {
            *d = conv(v);
        }
    }
}

fn per_dir<T: Clone>(
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

fn int_u32(s: &str, k: u32) -> Result<u32, String> {
    let v = match parse_size(s, k)? {
        IntVal::Abs(v) => v,
        IntVal::Percent(_) => return Err("a percentage is not accepted here".into()),
    };
    u32::try_from(v).map_err(|_| format!("{v} is out of range (max {})", u32::MAX))
}

fn int_range(s: &str, k: u32, lo: u32, hi: u32) -> Result<u32, String> {
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
fn boolean(s: &str) -> Result<bool, String> {
    match parse_plain_int(s)? {
        0 => Ok(false),
        1 => Ok(true),
        v => Err(format!(
            "max value out of range: {v} (1 max); expected 0 or 1"
        )),
    }
}

/// fio `FIO_OPT_STR_SET`: bare means set; `=N` sets N != 0.
fn str_set(val: Option<&str>) -> Result<bool, String> {
    match val {
        None => Ok(true),
        Some(s) => Ok(parse_plain_int(s)? != 0),
    }
}

/// fio `FIO_OPT_STR`: the value (before any `:` postfix) must equal one of the
/// choices exactly.
fn choice<'a>(s: &'a str, choices: &[&str]) -> Result<(&'a str, Option<&'a str>), String> {
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

fn no_postfix(post: Option<&str>) -> Result<(), String> {
    match post {
        None => Ok(()),
        Some(p) => Err(format!("unexpected ':{p}' after the value")),
    }
}

fn time_ns(s: &str, seconds_default: bool) -> Result<u64, String> {
    parse_time_us(s, seconds_default).map(|us| us.saturating_mul(1000))
}

fn bs_value(s: &str, k: u32) -> Result<u64, String> {
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
fn bssplit_dir(s: &str, k: u32) -> Result<Vec<(u32, u32)>, String> {
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
    } else if missing > 0 {
        (100 - given) / missing
    } else {
        0
    };
    let mut out: Vec<(u32, u32)> = entries
        .into_iter()
        .map(|(b, p)| (b, p.unwrap_or(fill)))
        .collect();
    out.sort_by_key(|e| e.1);
    Ok(out)
}

fn range_value(s: &str, k: u32) -> Result<(u64, u64), String> {
    let i = s
        .find(['-', ':'])
        .ok_or_else(|| "expected a range lo-hi (e.g. 4k-64k)".to_string())?;
    let lo = bs_value(s[..i].trim(), k)?;
    let hi = bs_value(s[i + 1..].trim(), k)?;
    Ok(if lo > hi { (hi, lo) } else { (lo, hi) })
}

fn percentile_list(s: &str) -> Result<(Vec<f64>, u32), String> {
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

fn reject_substitutions(v: &str) -> Result<(), String> {
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

// ---------------------------------------------------------------------------
// Applying one option

/// Apply option `name` (canonical) with its value to the draft. The error is a
/// bare reason; the caller adds the option, job and location.
fn apply(dr: &mut Draft, def: &Def, val: Option<&str>) -> Result<(), String> {
    let name = def.name;
    if def.ty == Ty::Value && val.is_none() {
        return Err("requires an argument".into());
    }
    let v = val.unwrap_or("").trim();
    if def.ignored {
        if def.ty == Ty::StrSet {
            str_set(val)?;
        } else if v.is_empty() {
            return Err("requires an argument".into());
        }
        dr.spec.ignored.push(match val {
            Some(x) => format!("{name}={x}"),
            None => name.to_string(),
        });
        return Ok(());
    }
    let k = kb(dr);
    let s = &mut dr.spec;
    match name {
        "name" | "description" | "filename" | "cgroup" => {
            if v.is_empty() {
                return Err("requires a non-empty string".into());
            }
            match name {
                "name" => s.name = v.to_string(),
                "description" => s.description = Some(v.to_string()),
                "filename" => s.filename = Some(v.to_string()),
                _ => s.cgroup = Some(v.to_string()),
            }
        }
        "rw" => {
            let (head, post) = choice(
                v,
                &[
                    "read",
                    "write",
                    "trim",
                    "randread",
                    "randwrite",
                    "randtrim",
                    "rw",
                    "readwrite",
                    "randrw",
                    "trimwrite",
                    "randtrimwrite",
                ],
            )?;
            s.rw = match head {
                "read" => RwPattern::Read,
                "write" => RwPattern::Write,
                "trim" => RwPattern::Trim,
                "randread" => RwPattern::RandRead,
                "randwrite" => RwPattern::RandWrite,
                "randtrim" => RwPattern::RandTrim,
                "rw" | "readwrite" => RwPattern::ReadWrite,
                "randrw" => RwPattern::RandRw,
                "trimwrite" => RwPattern::TrimWrite,
                _ => return Err("randtrimwrite is not supported by blklab".into()),
            };
            s.rw_seq_nr = 1;
            if let Some(p) = post {
                if !s.rw.is_random() {
                    return Err(format!(
                        "the sequential skip postfix ':{p}' (holes between IOs) is not supported by blklab"
                    ));
                }
                let n: u32 = p.parse().map_err(|_| {
                    format!("bad postfix ':{p}': expected a positive number of IOs")
                })?;
                if n == 0 {
                    return Err("the postfix must be at least 1".into());
                }
                s.rw_seq_nr = n;
            }
        }
        "rwmixread" => {
            let p = int_range(v, k, 0, 100)?;
            s.rwmixread = p;
        }
        "rwmixwrite" => {
            let p = int_range(v, k, 0, 100)?;
            s.rwmixread = 100 - p;
        }
        "bs" => {
            let r = per_dir(v, |x| bs_value(x, k))?;
            set_given(&mut dr.bs, r, |x| x);
        }
        "bsrange" => {
            let r = per_dir(v, |x| range_value(x, k))?;
            set_given(&mut dr.range, r, Some);
        }
        "bssplit" => {
            let r = per_dir(v, |x| bssplit_dir(x, k))?;
            set_given(&mut dr.split, r, Some);
        }
        "iodepth" => s.iodepth = int_range(v, k, 1, u32::MAX)?,
        "iodepth_batch" => dr.iodepth_batch = int_u32(v, k)?,
        "iodepth_batch_complete_min" => dr.complete_min = int_u32(v, k)?,
        "iodepth_batch_complete_max" => dr.complete_max = int_u32(v, k)?,
        "iodepth_low" => dr.iodepth_low = int_u32(v, k)?,
        "direct" => s.direct = boolean(v)?,
        "buffered" => s.direct = !boolean(v)?,
        "ioengine" => {
            let (e, n) = match v {
                "psync" | "sync" | "vsync" | "pvsync" | "pvsync2" => (Engine::Sync, v),
                "libaio" => (Engine::Libaio, v),
                "io_uring" => (Engine::IoUring, v),
                "mmap" => (Engine::Mmap, v),
                _ => {
                    return Err(format!(
                        "unsupported ioengine '{v}' (blklab models psync, sync, vsync, pvsync, pvsync2, libaio, io_uring and mmap)"
                    ))
                }
            };
            s.ioengine = e;
            s.ioengine_name = n.to_string();
        }
        "size" | "offset" => {
            if v.ends_with('z') || v.ends_with('Z') {
                return Err("zone-based values (the 'z' suffix) are not supported".into());
            }
            match parse_size(v, k)? {
                IntVal::Abs(x) => {
                    if name == "size" {
                        s.size = if x == 0 { None } else { Some(x) };
                    } else {
                        s.offset = x;
                    }
                }
                IntVal::Percent(_) => return Err(
                    "a percentage of the target is not supported by blklab; give an absolute size"
                        .into(),
                ),
            }
        }
        "runtime" => {
            let ns = time_ns(v, true)?;
            s.runtime_ns = if ns == 0 { None } else { Some(ns) };
        }
        "time_based" => s.time_based = str_set(val)?,
        "ramp_time" => s.ramp_time_ns = time_ns(v, true)?,
        "startdelay" => {
            // fio splits a time range at ',', ':' or '-'.
            let parts: Vec<&str> = v.split([',', ':', '-']).collect();
            if parts.len() > 2 {
                return Err("expected a time or a range lo-hi".into());
            }
            let lo = time_ns(parts[0], true)?;
            let hi = if parts.len() == 2 {
                time_ns(parts[1], true)?
            } else {
                lo
            };
            s.startdelay_ns = if lo <= hi { (lo, hi) } else { (hi, lo) };
        }
        "numjobs" => s.numjobs = int_range(v, k, 1, u32::MAX)?,
        "group_reporting" => s.group_reporting = str_set(val)?,
        "rate" => {
            let r = per_dir(v, |x| parse_bytes(x, k))?;
            set_given(&mut s.rate_bps, r, |x| x);
        }
        "rate_iops" => {
            let r = per_dir(v, |x| int_u32(x, k))?;
            set_given(&mut s.rate_iops, r, |x| x as u64);
        }
        "rate_process" => {
            let (c, p) = choice(v, &["linear", "poisson"])?;
            no_postfix(p)?;
            s.rate_process = if c == "linear" {
                RateProcess::Linear
            } else {
                RateProcess::Poisson
            };
        }
        "rate_ignore_thinktime" => s.rate_ignore_thinktime = boolean(v)?,
        "thinktime" | "thinktime_spin" => {
            let us = parse_time_us(v, false)?;
            if us > u32::MAX as u64 {
                return Err("time too large".into());
            }
            if name == "thinktime" {
                s.thinktime_ns = us * 1000;
            } else {
                s.thinktime_spin_ns = us * 1000;
            }
        }
        "thinktime_blocks" => s.thinktime_blocks = int_u32(v, k)?,
        "thinktime_blocks_type" => {
            let (c, p) = choice(v, &["complete", "issue"])?;
            no_postfix(p)?;
            s.thinktime_blocks_type = if c == "complete" {
                ThinkBlocksType::Complete
            } else {
                ThinkBlocksType::Issue
            };
        }
        "norandommap" => s.norandommap = str_set(val)?,
        "fadvise_hint" => {
            let (c, p) = choice(v, &["0", "1", "random", "sequential", "noreuse"])?;
            no_postfix(p)?;
            s.fadvise_hint = match c {
                "0" => FadviseHint::None,
                "1" => FadviseHint::Type,
                "random" => FadviseHint::Random,
                "sequential" => FadviseHint::Sequential,
                _ => FadviseHint::Noreuse,
            };
        }
        "randrepeat" => {
            // Accepted: a blklab run is always repeatable from its seed.
            boolean(v)?;
        }
        "unified_rw_reporting" => {
            let (c, p) = choice(v, &["none", "mixed", "both", "0", "1", "2"])?;
            no_postfix(p)?;
            s.unified_rw_reporting = match c {
                "none" | "0" => UnifiedRw::None,
                "mixed" | "1" => UnifiedRw::Mixed,
                _ => UnifiedRw::Both,
            };
        }
        "prio" => s.prio = Some(int_range(v, k, 0, 7)? as u8),
        "prioclass" => s.prioclass = Some(int_range(v, k, 0, 3)? as u8),
        "percentile_list" => {
            let (l, p) = percentile_list(v)?;
            s.percentile_list = l;
            s.percentile_precision = p;
        }
        "clat_percentiles" => s.clat_percentiles = boolean(v)?,
        "lat_percentiles" => s.lat_percentiles = boolean(v)?,
        "slat_percentiles" => s.slat_percentiles = boolean(v)?,
        "bwavgtime" => s.bwavgtime_ms = int_range(v, k, 1, u32::MAX)? as u64,
        "iopsavgtime" => s.iopsavgtime_ms = int_range(v, k, 1, u32::MAX)? as u64,
        "stonewall" => s.stonewall = str_set(val)?,
        "new_group" => s.new_group = str_set(val)?,
        "number_ios" => s.number_ios = parse_bytes(v, k)?,
        "kb_base" => {
            let (c, p) = choice(v, &["1024", "1000"])?;
            no_postfix(p)?;
            s.kb_base = if c == "1024" { 1024 } else { 1000 };
        }
        "thread" => s.thread = str_set(val)?,
        other => return Err(format!("internal: option {other} has no handler")),
    }
    Ok(())
}

/// fio's `fixup_options` for what blklab models, then the typed block sizes.
fn finish(mut dr: Draft) -> Result<JobSpec, String> {
    let s = &mut dr.spec;
    if dr.iodepth_low == 0 || dr.iodepth_low > s.iodepth {
        dr.iodepth_low = s.iodepth;
    }
    if dr.iodepth_batch == 0 || dr.iodepth_batch > s.iodepth {
        dr.iodepth_batch = s.iodepth;
    }
    if dr.complete_min > dr.complete_max {
        dr.complete_max = dr.complete_min;
    }
    s.iodepth_low = dr.iodepth_low;
    s.iodepth_batch_submit = dr.iodepth_batch;
    s.iodepth_batch_complete_min = dr.complete_min;
    s.iodepth_batch_complete_max = dr.complete_max;
    if s.thinktime_spin_ns > s.thinktime_ns {
        s.thinktime_spin_ns = s.thinktime_ns;
    }
    let rate_set = s.rate_bps.iter().any(|&r| r > 0);
    let iops_set = s.rate_iops.iter().any(|&r| r > 0);
    if rate_set && iops_set {
        return Err("rate and rate_iops are mutually exclusive".into());
    }
    if s.time_based && s.runtime_ns.is_none() {
        // fio: "time_based requires a runtime/timeout setting" and drops it.
        s.time_based = false;
        s.ignored
            .push("time_based (no runtime given, so fio ignores it)".into());
    }
    for i in 0..3 {
        s.bs[i] = if let Some(sp) = dr.split[i].take() {
            BsSpec::Split(sp)
        } else if let Some((lo, hi)) = dr.range[i] {
            if lo == hi {
                BsSpec::Fixed(lo as u32)
            } else {
                BsSpec::Range {
                    lo: lo as u32,
                    hi: hi as u32,
                }
            }
        } else {
            BsSpec::Fixed(dr.bs[i] as u32)
        };
    }
    Ok(dr.spec)
}

fn scope(global: bool, name: &str) -> String {
    if global {
        "global options".to_string()
    } else {
        format!("job '{name}'")
    }
}

// ---------------------------------------------------------------------------
// Job files

struct SectionLines {
    name: String,
    global: bool,
    line: usize,
    opts: Vec<(usize, String)>,
}

/// Parse a fio job file. `origin` names it in errors (usually its path).
/// `include` and `${VAR}` substitution are rejected with a clear error.
pub fn parse_job_file(text: &str, origin: &str) -> Result<Vec<JobSpec>, FioError> {
    let mut global = Draft::new();
    let mut jobs = Vec::new();
    let mut cur: Option<SectionLines> = None;

    for (i, raw) in text.lines().enumerate() {
        let lineno = i + 1;
        // fio's strip_blank_end: a ';' or '#' anywhere ends the line.
        let mut line = raw;
        if let Some(p) = line.find(';') {
            line = &line[..p];
        }
        if let Some(p) = line.find('#') {
            line = &line[..p];
        }
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if line.starts_with('[') {
            if !line.ends_with(']') || line.len() < 3 {
                return Err(FioError::at_line(
                    origin,
                    lineno,
                    format!("malformed section header '{line}': expected [name]"),
                ));
            }
            if let Some(sec) = cur.take() {
                finish_section(sec, &mut global, &mut jobs, origin)?;
            }
            let name = line[1..line.len() - 1].trim().to_string();
            if name.is_empty() {
                return Err(FioError::at_line(origin, lineno, "empty section name '[]'"));
            }
            // fio treats any section whose name starts with "global" as global.
            let g = name.starts_with("global");
            cur = Some(SectionLines {
                name,
                global: g,
                line: lineno,
                opts: Vec::new(),
            });
            continue;
        }
        if line == "include" || line.starts_with("include ") || line.starts_with("include\t") {
            return Err(FioError::at_line(
                origin,
                lineno,
                "'include' is not supported: paste the included options into this file",
            ));
        }
        match cur.as_mut() {
            None => {
                return Err(FioError::at_line(
                    origin,
                    lineno,
                    format!("option '{line}' outside of a [job] section"),
                ));
            }
            Some(sec) => sec.opts.push((lineno, line.to_string())),
        }
    }
    if let Some(sec) = cur.take() {
        finish_section(sec, &mut global, &mut jobs, origin)?;
    }
    if jobs.is_empty() {
        return Err(FioError::general(
            origin,
            "no jobs defined (only [global] sections, or an empty file)",
        ));
    }
    Ok(jobs)
}

fn finish_section(
    sec: SectionLines,
    global: &mut Draft,
    jobs: &mut Vec<JobSpec>,
    origin: &str,
) -> Result<(), FioError> {
    // Split each line into (def, key, value) first, so the option priorities
    // can order them as fio's sort_options does (stable: equal priorities keep
    // their written order).
    let mut parsed: Vec<(usize, &'static Def, Option<String>)> = Vec::new();
    let sc = scope(sec.global, &sec.name);
    for (lineno, line) in &sec.opts {
        let (key, val) = match line.find('=') {
            Some(p) => (line[..p].trim(), Some(line[p + 1..].trim().to_string())),
            None => (line.trim(), None),
        };
        if let Some(v) = &val {
            reject_substitutions(v).map_err(|e| {
                FioError::at_line(origin, *lineno, format!("{key}={v} in {sc}: {e}"))
            })?;
        }
        let def = match find_option(key) {
            Some(d) => d,
            None => {
                let hint = if TOP_ARGS.iter().any(|(n, _)| *n == key) {
                    " (it is a fio command-line argument, not a job option)"
                } else {
                    ""
                };
                return Err(FioError::at_line(
                    origin,
                    *lineno,
                    format!("unknown option '{key}' in {sc}{hint}"),
                ));
            }
        };
        parsed.push((*lineno, def, val));
    }
    parsed.sort_by_key(|p| -(p.1.prio as i32));

    let mut dr = if sec.global {
        global.clone()
    } else {
        Draft::job_from(global, &sec.name)
    };
    for (lineno, def, val) in parsed {
        apply(&mut dr, def, val.as_deref()).map_err(|e| {
            let shown = match &val {
                Some(v) => format!("{}={}", def.name, v),
                None => def.name.to_string(),
            };
            FioError::at_line(origin, lineno, format!("{shown} in {sc}: {e}"))
        })?;
        dr.spec
            .raw_options
            .push((def.name.to_string(), val.unwrap_or_default()));
    }
    if sec.global {
        *global = dr;
    } else {
        let spec =
            finish(dr).map_err(|e| FioError::at_line(origin, sec.line, format!("{sc}: {e}")))?;
        jobs.push(spec);
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Command lines

const CMDLINE: &str = "command line";

/// Parse a fio command line (the arguments, with or without a leading `fio`).
pub fn parse_cmdline(args: &[String]) -> Result<Vec<JobSpec>, FioError> {
    let mut global = Draft::new();
    let mut cur: Option<Draft> = None;
    let mut jobs: Vec<JobSpec> = Vec::new();
    let mut top: Vec<(String, Option<String>)> = Vec::new();

    let mut i = 0;
    if let Some(first) = args.first() {
        let base = first.rsplit('/').next().unwrap_or(first);
        if base == "fio" {
            i = 1;
        }
    }
    while i < args.len() {
        let argno = i + 1;
        let arg = &args[i];
        i += 1;
        let body = if let Some(b) = arg.strip_prefix("--") {
            b
        } else if let Some(b) = arg.strip_prefix('-') {
            b
        } else {
            return Err(FioError::at_arg(
                CMDLINE,
                argno,
                format!("unexpected argument '{arg}': job files are not read from a command line here (give options as --name=job --opt=value, or use a job file)"),
            ));
        };
        let (name, mut val) = match body.find('=') {
            Some(p) => (&body[..p], Some(body[p + 1..].to_string())),
            None => (body, None),
        };
        if name.is_empty() {
            return Err(FioError::at_arg(
                CMDLINE,
                argno,
                format!("malformed argument '{arg}'"),
            ));
        }

        if let Some((_, ty)) = TOP_ARGS.iter().find(|(n, _)| *n == name) {
            match ty {
                ArgTy::Required => {
                    if val.is_none() && i < args.len() {
                        val = Some(args[i].clone());
                        i += 1;
                    }
                    if val.as_deref().map(str::is_empty).unwrap_or(true) {
                        return Err(FioError::at_arg(
                            CMDLINE,
                            argno,
                            format!("option {name} requires an argument"),
                        ));
                    }
                }
                ArgTy::NoArg => {
                    if val.is_some() {
                        return Err(FioError::at_arg(
                            CMDLINE,
                            argno,
                            format!("option {name} takes no argument"),
                        ));
                    }
                }
                ArgTy::Optional => {}
            }
            top.push((name.to_string(), val));
            continue;
        }

        let def = find_option(name).ok_or_else(|| {
            let sc = match &cur {
                Some(d) => format!("job '{}'", d.spec.name),
                None => "global options".to_string(),
            };
            FioError::at_arg(
                CMDLINE,
                argno,
                format!("unknown option '{name}' ('{arg}') in {sc}"),
            )
        })?;
        if def.ty == Ty::Value {
            if val.is_none() && i < args.len() {
                // getopt's required_argument: the next word is the value.
                val = Some(args[i].clone());
                i += 1;
            }
            if val.as_deref().map(str::is_empty).unwrap_or(true) {
                return Err(FioError::at_arg(
                    CMDLINE,
                    argno,
                    format!("option {name} requires an argument"),
                ));
            }
        }

        if def.name == "name" {
            let v = val.clone().unwrap_or_default();
            if let Some(d) = cur.take() {
                let sc = scope(false, &d.spec.name);
                jobs.push(
                    finish(d)
                        .map_err(|e| FioError::at_arg(CMDLINE, argno, format!("{sc}: {e}")))?,
                );
            }
            if !v.starts_with("global") {
                cur = Some(Draft::job_from(&global, &v));
            }
        }
        let is_job = cur.is_some();
        let target = match cur.as_mut() {
            Some(d) => d,
            None => &mut global,
        };
        let sc = if is_job {
            scope(false, &target.spec.name)
        } else {
            scope(true, "")
        };
        apply(target, def, val.as_deref())
            .map_err(|e| FioError::at_arg(CMDLINE, argno, format!("{} in {sc}: {e}", arg)))?;
        target
            .spec
            .raw_options
            .push((def.name.to_string(), val.unwrap_or_default()));
    }
    if let Some(d) = cur.take() {
        let sc = scope(false, &d.spec.name);
        jobs.push(finish(d).map_err(|e| FioError::general(CMDLINE, format!("{sc}: {e}")))?);
    }
    if jobs.is_empty() {
        return Err(FioError::general(
            CMDLINE,
            "no jobs defined: give at least one --name=<job>",
        ));
    }

    // Process-level arguments apply to every job.
    for (name, val) in &top {
        for j in jobs.iter_mut() {
            match name.as_str() {
                "output-format" => j.output_format = val.clone(),
                "minimal" => j.output_format = Some("terse".into()),
                "output" => j.output = val.clone(),
                _ => j.ignored.push(match val {
                    Some(v) => format!("{name}={v}"),
                    None => name.clone(),
                }),
            }
        }
    }
    Ok(jobs)
}

/// Split one string into arguments like a POSIX shell would for a simple
/// command: whitespace separates words; single quotes keep everything literal;
/// double quotes keep whitespace and allow `\"`, `\\`, `\$` and `` \` ``;
/// outside quotes a backslash escapes the next character. No expansion.
pub fn split_cmdline(s: &str) -> Result<Vec<String>, FioError> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(x) => cur.push(x),
                        None => {
                            return Err(FioError::general(CMDLINE, "unterminated single quote"))
                        }
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.peek() {
                            Some(&n) if matches!(n, '"' | '\\' | '$' | '`') => {
                                cur.push(n);
                                chars.next();
                            }
                            Some('\n') => {
                                chars.next();
                            }
                            _ => cur.push('\\'),
                        },
                        Some(x) => cur.push(x),
                        None => {
                            return Err(FioError::general(CMDLINE, "unterminated double quote"))
                        }
                    }
                }
            }
            '\\' => match chars.next() {
                // line continuation: not part of any word
                Some('\n') => {}
                Some(x) => {
                    in_word = true;
                    cur.push(x);
                }
                None => return Err(FioError::general(CMDLINE, "trailing backslash")),
            },
            _ => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        out.push(cur);
    }
    Ok(out)
}

/// fio's reporting group of each job (`add_job`): a job with `stonewall` or
/// `new_group` starts a new group unless the current one is still empty. All
/// `numjobs` clones of a job share its group.
pub fn assign_groupids(jobs: &[JobSpec]) -> Vec<u32> {
    let mut gid = 0u32;
    let mut members = 0u32;
    let mut out = Vec::with_capacity(jobs.len());
    for j in jobs {
        if (j.stonewall || j.new_group) && members > 0 {
            members = 0;
            gid += 1;
        }
        out.push(gid);
        members += j.numjobs.max(1);
    }
    out
}

#[cfg(test)]
#[path = "parse_tests.rs"]
mod tests;
