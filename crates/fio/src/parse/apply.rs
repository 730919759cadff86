//! Applying one option to a job (fio `parse.c`: `handle_option`, with the
//! `options.c` callbacks of the options blklab models).

use super::draft::Draft;
use super::option_table::{Def, Ty};
use super::values::{
    boolean, bs_value, bssplit_dir, choice, int_range, int_u32, kb, no_postfix, per_dir,
    percentile_list, range_value, set_given, str_set, time_ns,
};
use crate::options::{Engine, FadviseHint, RateProcess, RwPattern, ThinkBlocksType, UnifiedRw};
use crate::value::{parse_bytes, parse_size, parse_time_us, IntVal};

/// Apply option `name` (canonical) with its value to the draft. The error is a
/// bare reason; the caller adds the option, job and location.
pub(super) fn apply(dr: &mut Draft, def: &Def, val: Option<&str>) -> Result<(), String> {
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
        "iodepth" => s.iodepth = int_range(v, k, 1, super::MAX_IODEPTH)?,
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
        // FIO_OPT_STR with a callback: the value, if any, is the file prefix
        "write_bw_log" => s.logs.bw = Some(v.to_string()),
        "write_lat_log" => s.logs.lat = Some(v.to_string()),
        "write_iops_log" => s.logs.iops = Some(v.to_string()),
        "write_hist_log" => s.logs.hist = Some(v.to_string()),
        "log_avg_msec" => s.logs.avg_msec = int_range(v, k, 0, u32::MAX)? as u64,
        "log_hist_msec" => s.logs.hist_msec = int_range(v, k, 0, u32::MAX)? as u64,
        "log_hist_coarseness" => s.logs.hist_coarseness = int_range(v, k, 0, u32::MAX)? as u32,
        "log_max_value" => s.logs.log_max = boolean(v)?,
        "log_offset" => s.logs.log_offset = boolean(v)?,
        "log_prio" => s.logs.log_prio = boolean(v)?,
        "per_job_logs" => s.logs.per_job_logs = boolean(v)?,
        other => return Err(format!("internal: option {other} has no handler")),
    }
    Ok(())
}
