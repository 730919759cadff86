//! fio's normal (text) output, as fio 3.33 prints it (fio `init.c`: the job
//! header line in `add_job`; `backend.c`: "Starting N processes"; `stat.c`:
//! `show_thread_status_normal`, `show_ddir_status`, `display_lat`,
//! `show_clat_percentiles`, `show_latencies`, `show_group_stats`,
//! `print_disk_util`).
//!
//! CPU usage, context switches and page faults are not simulated and print as 0.

use crate::cfmt::{fixed, fixed_w};
use crate::num2str::{num2str, Unit};
use crate::options::{JobSpec, UnifiedRw};
use crate::report::{
    active_percentiles, bw_agg_percent, calc_dist, calc_lat, effective_dirs, group_run_stats,
    GroupRunStats, JobReport, Report,
};
use crate::stats::{DirStats, PlatHist, SampleStat};
use std::fmt::Write;

/// fio's default `significant_figures`.
const SIG_FIGS: usize = 4;

fn i2p(kb_base: u32) -> bool {
    kb_base.is_power_of_two()
}

/// The lines fio prints before running: one header line per job (`...` once
/// for its `numjobs` clones), the version line and "Starting N processes".
/// `groupids` are the jobs' reporting groups (see `parse::assign_groupids`).
pub fn write_header(jobs: &[JobSpec], groupids: &[u32], fio_version: &str) -> String {
    let mut out = String::new();
    let mut procs = 0u32;
    let mut threads = 0u32;
    for (i, j) in jobs.iter().enumerate() {
        let p2 = i2p(j.kb_base);
        let b = |v: u32| num2str(v as u64, SIG_FIGS, 1, p2, Unit::Byte);
        let gid = groupids.get(i).copied().unwrap_or(0);
        let _ = writeln!(
            out,
            "{}: (g={}): rw={}, bs=(R) {}-{}, (W) {}-{}, (T) {}-{}, ioengine={}, iodepth={}",
            j.name,
            gid,
            j.rw.fio_name(),
            b(j.bs[0].min()),
            b(j.bs[0].max()),
            b(j.bs[1].min()),
            b(j.bs[1].max()),
            b(j.bs[2].min()),
            b(j.bs[2].max()),
            j.ioengine_name,
            j.iodepth
        );
        if j.numjobs > 1 {
            out.push_str("...\n");
        }
        if j.thread {
            threads += j.numjobs.max(1);
        } else {
            procs += j.numjobs.max(1);
        }
    }
    let _ = writeln!(out, "{fio_version}");
    out.push_str("Starting ");
    if threads > 0 {
        let _ = write!(
            out,
            "{} thread{}",
            threads,
            if threads > 1 { "s" } else { "" }
        );
    }
    if procs > 0 {
        if threads > 0 {
            out.push_str(" and ");
        }
        let _ = write!(
            out,
            "{} process{}",
            procs,
            if procs > 1 { "es" } else { "" }
        );
    }
    out.push('\n');
    out
}

/// fio's `display_lat`: the unit is msec or usec only when min, max *and*
/// stdev are all large enough; min and max are truncated.
pub fn display_lat(name: &str, st: &SampleStat) -> String {
    let (mut min, mut max, mut mean, mut dev) = (st.min, st.max, st.mean, st.stddev());
    let base = if min > 2_000_000 && max > 99_999_999 && dev > 1_000_000.0 {
        min /= 1_000_000;
        max /= 1_000_000;
        mean /= 1_000_000.0;
        dev /= 1_000_000.0;
        "(msec)"
    } else if min > 2000 && max > 99_999 && dev > 1000.0 {
        min /= 1000;
        max /= 1000;
        mean /= 1000.0;
        dev /= 1000.0;
        "(usec)"
    } else {
        "(nsec)"
    };
    format!(
        "    {} {}: min={}, max={}, avg={}, stdev={}\n",
        name,
        base,
        num2str(min, 6, 1, false, Unit::None),
        num2str(max, 6, 1, false, Unit::None),
        fixed_w(mean, 5, 2),
        fixed_w(dev, 5, 2)
    )
}

/// fio's `show_clat_percentiles`: unit from the smallest and largest reported
/// value, values rounded up when scaled, `%{p+3}.{p}f` labels, value width
/// max(5, digits), and 73/(p+10+width) entries per line.
pub fn percentiles_block(hist: &PlatHist, plist: &[f64], precision: u32, pre: &str) -> String {
    let vals = hist.percentiles(plist);
    if vals.is_empty() {
        return String::new();
    }
    let minv = vals.iter().map(|v| v.1).min().unwrap_or(0);
    let maxv = vals.iter().map(|v| v.1).max().unwrap_or(0);
    let (scale_down, divisor, unit) = if minv > 2_000_000 && maxv > 99_999_999 {
        (2, 1_000_000u64, "msec")
    } else if minv > 2000 && maxv > 99_999 {
        (1, 1000, "usec")
    } else {
        (0, 1, "nsec")
    };
    let mut out = format!("    {pre} percentiles ({unit}):\n     |");
    let scaled_max = maxv / divisor;
    let digits = if scaled_max == 0 {
        0
    } else {
        ((scaled_max as f64).log10() + 1.0) as usize
    };
    let width = digits.max(5);
    let prec = precision as usize;
    let per_line = (73 / (prec + 10 + width)).max(1);
    let len = vals.len();
    for (j, (p, v)) in vals.iter().enumerate() {
        if j != 0 && j % per_line == 0 {
            out.push_str("     |");
        }
        let is_last = j == len - 1;
        let mut v = *v;
        for _ in 0..scale_down {
            v = v.div_ceil(1000);
        }
        let _ = write!(
            out,
            " {}th=[{:>w$}]{}",
            fixed_w(*p, prec + 3, prec),
            v,
            if is_last { '\n' } else { ',' },
            w = width
        );
        if is_last {
            break;
        }
        if j % per_line == per_line - 1 {
            out.push('\n');
        }
    }
    out
}

/// fio's `show_ddir_status` for one direction (or the mixed one).
fn ddir_status(
    out: &mut String,
    rs: &GroupRunStats,
    agg_ddir: usize,
    ds: &DirStats,
    label: &str,
    spec: &JobSpec,
) {
    let runt = ds.runtime_ms;
    if runt == 0 {
        return;
    }
    let p2 = i2p(rs.kb_base);
    let bw = 1000 * ds.io_bytes / runt;
    let iops = ds.iops_truncated();
    let _ = writeln!(
        out,
        "  {}: IOPS={}, BW={} ({})({}/{}msec)",
        label,
        num2str(iops, SIG_FIGS, 1, false, Unit::None),
        num2str(bw, SIG_FIGS, 1, p2, Unit::BytePerSec),
        num2str(bw, SIG_FIGS, 1, !p2, Unit::BytePerSec),
        num2str(ds.io_bytes, SIG_FIGS, 1, p2, Unit::Byte),
        runt
    );
    if ds.slat.stat.samples > 0 {
        out.push_str(&display_lat("slat", &ds.slat.stat));
    }
    if ds.clat.stat.samples > 0 {
        out.push_str(&display_lat("clat", &ds.clat.stat));
    }
    if ds.lat.stat.samples > 0 {
        out.push_str(&display_lat(" lat", &ds.lat.stat));
    }
    let plist = active_percentiles(spec);
    let prec = spec.percentile_precision;
    if spec.slat_percentiles && ds.slat.stat.samples > 0 {
        out.push_str(&percentiles_block(&ds.slat.hist, &plist, prec, "slat"));
    }
    if spec.clat_percentiles && ds.clat.stat.samples > 0 {
        out.push_str(&percentiles_block(&ds.clat.hist, &plist, prec, "clat"));
    }
    if spec.lat_percentiles && ds.lat.stat.samples > 0 {
        out.push_str(&percentiles_block(&ds.lat.hist, &plist, prec, "lat"));
    }
    let b = &ds.bw;
    if b.samples > 0 {
        let (mut min, mut max, mut mean, mut dev) = (b.min, b.max, b.mean, b.stddev());
        let per = bw_agg_percent(rs, agg_ddir, mean);
        let fkb = rs.kb_base as f64;
        let mut unit = if p2 { "KiB" } else { "kB" };
        if mean > fkb * fkb {
            min = (min as f64 / fkb) as u64;
            max = (max as f64 / fkb) as u64;
            mean /= fkb;
            dev /= fkb;
            unit = "MiB";
        }
        let _ = writeln!(
            out,
            "   bw ({:>5}/s): min={:>5}, max={:>5}, per={}%, avg={}, stdev={}, samples={}",
            unit,
            min,
            max,
            fixed_w(per, 3, 2),
            fixed_w(mean, 5, 2),
            fixed_w(dev, 5, 2),
            b.samples
        );
    }
    let i = &ds.iops;
    if i.samples > 0 {
        let _ = writeln!(
            out,
            "   iops        : min={:>5}, max={:>5}, avg={}, stdev={}, samples={}",
            i.min,
            i.max,
            fixed_w(i.mean, 5, 2),
            fixed_w(i.stddev(), 5, 2),
            i.samples
        );
    }
}

/// fio's `show_lat`: the non-zero buckets, five per line.
fn lat_lines(out: &mut String, vals: &[f64], ranges: &[&str], unit: &str) {
    let mut new_line = true;
    let mut shown = false;
    let mut line = 0;
    for (v, r) in vals.iter().zip(ranges) {
        if *v <= 0.0 {
            continue;
        }
        shown = true;
        if new_line {
            if line > 0 {
                out.push('\n');
            }
            let _ = write!(out, "  lat ({unit})   : ");
            new_line = false;
            line = 0;
        }
        if line > 0 {
            out.push_str(", ");
        }
        let _ = write!(out, "{}={}%", r, fixed_w(*v, 3, 2));
        line += 1;
        if line == 5 {
            new_line = true;
        }
    }
    if shown {
        out.push('\n');
    }
}

fn dist_line(out: &mut String, prefix: &str, keys: &[&str], vals: &[f64]) {
    out.push_str(prefix);
    for (i, (k, v)) in keys.iter().zip(vals).enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        let _ = write!(out, "{}={}%", k, fixed_w(*v, 3, 1));
    }
    out.push('\n');
}

/// One entry's block (fio's `show_thread_status_normal`).
pub fn job_text(r: &JobReport, rs: &GroupRunStats, time_str: &str) -> String {
    let spec = r.spec;
    let st = r.stats;
    let unified = spec.unified_rw_reporting;
    let dirs = effective_dirs(st, unified);
    let total_bytes: u64 = dirs.iter().map(|d| d.io_bytes).sum();
    let total_ios: u64 = dirs.iter().map(|d| d.total_ios).sum();
    let mut out = String::new();
    if total_bytes == 0 && total_ios == 0 {
        return out;
    }
    let name = if st.name.is_empty() {
        spec.name.as_str()
    } else {
        st.name.as_str()
    };
    let _ = writeln!(
        out,
        "{}: (groupid={}, jobs={}): err={:>2}: pid={}: {}",
        name,
        st.groupid,
        st.nr_jobs.max(1),
        0,
        r.pid,
        time_str
    );
    if let Some(d) = &spec.description {
        let _ = writeln!(out, "  Description  : [{d}]");
    }
    const NAMES: [&str; 3] = ["read", "write", "trim"];
    for (d, ds) in dirs.iter().enumerate() {
        if ds.io_bytes > 0 {
            let label = if unified == UnifiedRw::Mixed {
                "mixed"
            } else {
                NAMES[d]
            };
            ddir_status(&mut out, rs, d, ds, label, spec);
        }
    }
    if unified == UnifiedRw::Both {
        let m = st.mixed();
        ddir_status(&mut out, rs, 0, &m, "mixed", spec);
    }
    let ranges = [
        "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000",
    ];
    lat_lines(&mut out, &calc_lat(&st.lat_ns, total_ios), &ranges, "nsec");
    lat_lines(&mut out, &calc_lat(&st.lat_us, total_ios), &ranges, "usec");
    let mranges = [
        "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000",
    ];
    lat_lines(&mut out, &calc_lat(&st.lat_ms, total_ios), &mranges, "msec");
    let (usr_cpu, sys_cpu) = st.cpu_pct();
    let _ = writeln!(
        out,
        "  cpu          : usr={usr_cpu:.2}%, sys={sys_cpu:.2}%, ctx={}, majf=0, minf=0",
        st.ctx
    );
    dist_line(
        &mut out,
        "  IO depths    : ",
        &["1", "2", "4", "8", "16", "32", ">=64"],
        &calc_dist(&st.iodepth_level, total_ios),
    );
    let bkeys = ["0", "4", "8", "16", "32", "64", ">=64"];
    dist_line(
        &mut out,
        "     submit    : ",
        &bkeys,
        &calc_dist(&st.iodepth_submit, st.total_submit),
    );
    dist_line(
        &mut out,
        "     complete  : ",
        &bkeys,
        &calc_dist(&st.iodepth_complete, st.total_complete),
    );
    let _ = writeln!(
        out,
        "     issued rwts: total={},{},{},{} short={},{},{},0 dropped={},{},{},0",
        dirs[0].total_ios,
        dirs[1].total_ios,
        dirs[2].total_ios,
        st.sync_total_ios,
        dirs[0].short_ios,
        dirs[1].short_ios,
        dirs[2].short_ios,
        dirs[0].drop_ios,
        dirs[1].drop_ios,
        dirs[2].drop_ios
    );
    let _ = writeln!(
        out,
        "     latency   : target=0, window=0, percentile=100.00%, depth={}",
        spec.iodepth
    );
    out
}

/// One direction's (or the mixed) figures of a run-status group line.
struct GroupFigures {
    agg: u64,
    min_bw: u64,
    max_bw: u64,
    io: u64,
    min_run: u64,
    max_run: u64,
}

impl GroupFigures {
    /// Direction `d` of the group.
    fn of(rs: &GroupRunStats, d: usize) -> GroupFigures {
        GroupFigures {
            agg: rs.agg[d],
            min_bw: rs.min_bw[d],
            max_bw: rs.max_bw[d],
            io: rs.iobytes[d],
            min_run: rs.min_run[d],
            max_run: rs.max_run[d],
        }
    }

    /// The `MIXED` line of `unified_rw_reporting=both`: sums and extremes
    /// over the directions (fio's `show_mixed_group_stats`).
    fn merge(self, o: GroupFigures) -> GroupFigures {
        GroupFigures {
            agg: self.agg + o.agg,
            min_bw: self.min_bw.min(o.min_bw),
            max_bw: self.max_bw.max(o.max_bw),
            io: self.io + o.io,
            min_run: self.min_run.min(o.min_run),
            max_run: self.max_run.max(o.max_run),
        }
    }
}

fn group_line(out: &mut String, label: &str, p2: bool, g: GroupFigures) {
    let GroupFigures {
        agg,
        min_bw,
        max_bw,
        io,
        min_run,
        max_run,
    } = g;
    let n = |v: u64, p: bool, u: Unit| num2str(v, SIG_FIGS, 1, p, u);
    let _ = writeln!(
        out,
        "{}: bw={} ({}), {}-{} ({}-{}), io={} ({}), run={}-{}msec",
        label,
        n(agg, p2, Unit::BytePerSec),
        n(agg, !p2, Unit::BytePerSec),
        n(min_bw, p2, Unit::BytePerSec),
        n(max_bw, p2, Unit::BytePerSec),
        n(min_bw, !p2, Unit::BytePerSec),
        n(max_bw, !p2, Unit::BytePerSec),
        n(io, p2, Unit::Byte),
        n(io, !p2, Unit::Byte),
        min_run,
        max_run
    );
}

/// fio's `show_group_stats` (and `show_mixed_group_stats` for `both`).
pub fn group_text(rs: &GroupRunStats) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "\nRun status group {} (all jobs):", rs.groupid);
    let p2 = i2p(rs.kb_base);
    const LABELS: [&str; 3] = ["   READ", "  WRITE", "   TRIM"];
    for (d, dir_label) in LABELS.iter().enumerate() {
        if rs.max_run[d] == 0 {
            continue;
        }
        let label = if rs.unified == 1 {
            "  MIXED"
        } else {
            dir_label
        };
        group_line(&mut out, label, p2, GroupFigures::of(rs, d));
    }
    if rs.unified == 2 {
        let none = GroupFigures {
            agg: 0,
            min_bw: u64::MAX,
            max_bw: 0,
            io: 0,
            min_run: u64::MAX,
            max_run: 0,
        };
        let mixed = (0..3)
            .filter(|&d| rs.max_run[d] != 0)
            .fold(none, |m, d| m.merge(GroupFigures::of(rs, d)));
        group_line(&mut out, "  MIXED", p2, mixed);
    }
    out
}

/// The results part of fio's normal output: a blank line, each entry's block,
/// the run-status groups and, when given, the disk statistics.
pub fn write_text(r: &Report) -> String {
    let groups = group_run_stats(&r.jobs);
    let mut out = String::from("\n");
    for j in &r.jobs {
        out.push_str(&job_text(j, &groups[j.stats.groupid as usize], r.time_str));
    }
    for g in &groups {
        out.push_str(&group_text(g));
    }
    if !r.disk_util.is_empty() {
        out.push_str("\nDisk stats (read/write):\n");
        for d in &r.disk_util {
            let _ = writeln!(
                out,
                "  {}: ios={}/{}, merge={}/{}, ticks={}/{}, in_queue={}, util={}%",
                d.name,
                d.read_ios,
                d.write_ios,
                d.read_merges,
                d.write_merges,
                d.read_ticks,
                d.write_ticks,
                d.in_queue,
                fixed(d.util(), 2)
            );
        }
    }
    out
}

#[cfg(test)]
#[path = "text_tests.rs"]
mod tests;
