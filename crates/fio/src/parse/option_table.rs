//! The option table: every fio job option blklab accepts, with fio's
//! canonical name, alias, how it takes a value and its priority (fio
//! `options.c`: `fio_options[]`), and fio's process-level arguments.

/// How an option takes its value (fio's `FIO_OPT_STR_SET` vs everything else).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Ty {
    /// May be given bare (means 1), or `=N`.
    StrSet,
    /// Requires a value.
    Value,
}

pub(super) struct Def {
    pub(super) name: &'static str,
    pub(super) alias: &'static str,
    pub(super) ty: Ty,
    /// fio's option priority: higher is applied first within a job-file section.
    pub(super) prio: i8,
    /// Accepted but without effect on the simulation.
    pub(super) ignored: bool,
}

pub(super) const fn d(name: &'static str, alias: &'static str, ty: Ty) -> Def {
    Def {
        name,
        alias,
        ty,
        prio: 0,
        ignored: false,
    }
}
pub(super) const fn ign(name: &'static str, ty: Ty) -> Def {
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
pub(super) static OPTIONS: &[Def] = &[
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
    // fio's log files (crate::log): the prefix is optional.
    d("write_bw_log", "", S),
    d("write_lat_log", "", S),
    d("write_iops_log", "", S),
    d("write_hist_log", "", S),
    d("log_avg_msec", "", V),
    d("log_hist_msec", "", V),
    d("log_hist_coarseness", "", V),
    d("log_max_value", "", V),
    d("log_offset", "", V),
    d("log_prio", "", V),
    d("per_job_logs", "", V),
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
pub(super) enum ArgTy {
    Required,
    NoArg,
    Optional,
}

pub(super) static TOP_ARGS: &[(&str, ArgTy)] = &[
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

pub(super) fn find_option(name: &str) -> Option<&'static Def> {
    OPTIONS
        .iter()
        .find(|o| o.name == name || (!o.alias.is_empty() && o.alias == name))
}
