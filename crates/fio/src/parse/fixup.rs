//! The checks and derived values fio computes once a job's options are all
//! in (fio `init.c`: `fixup_options`).

use super::draft::Draft;
use crate::options::{BsSpec, JobSpec};

/// fio's `fixup_options` for what blklab models, then the typed block sizes.
pub(super) fn finish(mut dr: Draft) -> Result<JobSpec, String> {
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
    // add_job: a bw/iops log averaged over log_avg_msec makes that the
    // stats' sampling window too, unless bwavgtime/iopsavgtime was given
    // (then the log uses the smaller of the two)
    let given = |opt: &str| {
        s.raw_options
            .iter()
            .chain(s.global_options.iter())
            .any(|(n, _)| n == opt)
    };
    let avg = s.logs.avg_msec;
    if avg > 0 && s.logs.bw.is_some() && !given("bwavgtime") {
        s.bwavgtime_ms = avg;
    }
    if avg > 0 && s.logs.iops.is_some() && !given("iopsavgtime") {
        s.iopsavgtime_ms = avg;
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
