//! fio-compatible output for a run: fio's normal text and JSON, one document
//! per fio invocation (`[[job]]` of the scenario), written the way fio's
//! `--output` would write them.
//!
//! Time stamps: the simulation starts at the Unix epoch, so `timestamp` is the
//! simulated second at which the invocation's jobs ended and `time` its
//! ctime rendering. This keeps output byte-identical for the same scenario and
//! seed (the real wall clock would not).

use std::path::Path;

use anyhow::{Context, Result};
use blklab_fio::report::{group_jobs, DiskUtil, JobReport, Report};
use blklab_fio::{JobSpec, JobStats};

use crate::runner::Outcome;
use crate::scenario::Scenario;

/// What our output claims to be: fio's format, produced by a simulator.
pub const FIO_VERSION: &str = "fio-3.33-blklab";

/// A UTC calendar instant: (year, month 1-12, day 1-31, hh, mm, ss, days since the epoch).
pub fn civil(secs: u64) -> (u64, usize, u64, u64, u64, u64, u64) {
    let days = secs / 86400;
    let rem = secs % 86400;
    let leap = |y: u64| (y.is_multiple_of(4) && !y.is_multiple_of(100)) || y.is_multiple_of(400);
    let (mut y, mut d) = (1970u64, days);
    while d >= if leap(y) { 366 } else { 365 } {
        d -= if leap(y) { 366 } else { 365 };
        y += 1;
    }
    let mlen = [
        31,
        if leap(y) { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    let mut m = 0;
    while d >= mlen[m] {
        d -= mlen[m];
        m += 1;
    }
    (
        y,
        m + 1,
        d + 1,
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60,
        days,
    )
}

/// ctime(3) without the newline, for a count of seconds since the epoch (UTC).
pub fn ctime(secs: u64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let (y, m, d, hh, mm, ss, days) = civil(secs);
    format!(
        "{} {} {:>2} {:02}:{:02}:{:02} {}",
        DAYS[(days % 7) as usize],
        MONTHS[m - 1],
        d,
        hh,
        mm,
        ss,
        y
    )
}

/// One invocation's jobs (every numjobs clone, in order) with their stats.
fn invocation_jobs<'a>(
    sc: &'a Scenario,
    out: &'a Outcome,
    inv: usize,
) -> Vec<(&'a JobSpec, &'a JobStats)> {
    sc.invocations[inv]
        .jobs
        .iter()
        .map(|&ji| (&sc.config.jobs[ji].spec, &out.result.jobs[ji].stats))
        .collect()
}

fn disk_util(sc: &Scenario, out: &Outcome, inv: usize) -> Vec<DiskUtil> {
    // the devices this invocation's jobs ran on, in device order
    let mut devs: Vec<u16> = sc.invocations[inv]
        .jobs
        .iter()
        .map(|&ji| sc.config.jobs[ji].dev)
        .collect();
    devs.sort_unstable();
    devs.dedup();
    // a phase's fio sees the disk over its own phase (crate::phases)
    let phase = crate::phases::of_invocation(&sc.phases, inv);
    let whole = out.result.end_time / 1_000_000;
    devs.into_iter()
        .map(|d| {
            let r = &out.result.devices[d as usize];
            let (f, msec) = phase
                .and_then(|p| crate::phase_report::disk_delta(out, p, d as usize))
                .unwrap_or((r.stat, whole));
            DiskUtil {
                name: r.name.clone(),
                read_ios: f[0],
                write_ios: f[4],
                read_merges: f[1],
                write_merges: f[5],
                read_ticks: f[3],
                write_ticks: f[7],
                in_queue: f[10],
                io_ticks: f[9],
                msec,
            }
        })
        .collect()
}

fn with_report<T>(sc: &Scenario, out: &Outcome, inv: usize, f: impl FnOnce(&Report) -> T) -> T {
    let jobs = invocation_jobs(sc, out, inv);
    let groups = group_jobs(&jobs);
    let end_ns = sc.invocations[inv]
        .jobs
        .iter()
        .map(|&ji| out.result.jobs[ji].end_ns)
        .max()
        .unwrap_or(0);
    let secs = end_ns.div_ceil(1_000_000_000);
    let time_str = ctime(secs);
    let reports: Vec<JobReport> = groups
        .iter()
        .enumerate()
        .map(|(k, (first, stats))| JobReport {
            spec: jobs[*first].0,
            stats,
            pid: 1000 + (inv as u32) * 100 + k as u32,
        })
        .collect();
    let global = sc.invocations[inv].global_options.clone();
    let r = Report {
        fio_version: FIO_VERSION,
        timestamp_s: secs,
        timestamp_ms: end_ns / 1_000_000,
        time_str: &time_str,
        global_options: &global,
        jobs: reports,
        disk_util: disk_util(sc, out, inv),
        json_plus: false,
    };
    f(&r)
}

/// fio's JSON for one invocation.
pub fn json(sc: &Scenario, out: &Outcome, inv: usize) -> String {
    with_report(sc, out, inv, blklab_fio::json::write_json)
}

/// Every invocation's JSON, one document after another (jq reads them as a stream).
pub fn json_all(sc: &Scenario, out: &Outcome) -> String {
    (0..sc.invocations.len())
        .map(|i| json(sc, out, i))
        .collect()
}

/// fio's normal output for each invocation, then the summary table.
pub fn normal(sc: &Scenario, out: &Outcome) -> String {
    let mut s = String::new();
    if !sc.phases.is_empty() {
        // phase after phase: its fio outputs, then its figures
        for (pi, p) in sc.phases.iter().enumerate() {
            s.push_str(&format!("=== phase {} ===\n", p.spec.name));
            for &i in &p.invocations {
                invocation_text(sc, out, i, &mut s);
            }
            s.push_str(&crate::phase_report::report(sc, out, pi));
        }
        s.push_str(&crate::report::summary_table(&out.groups));
        return s;
    }
    for i in 0..sc.invocations.len() {
        invocation_text(sc, out, i, &mut s);
    }
    s.push_str(&crate::report::summary_table(&out.groups));
    s
}

/// fio's normal output for invocation `i` (its header, then its report).
fn invocation_text(sc: &Scenario, out: &Outcome, i: usize, s: &mut String) {
    let inv = &sc.invocations[i];
    let specs: Vec<JobSpec> = inv
        .jobs
        .iter()
        .map(|&ji| sc.config.jobs[ji].spec.clone())
        .collect();
    let gids: Vec<u32> = inv
        .jobs
        .iter()
        .map(|&ji| sc.config.jobs[ji].groupid)
        .collect();
    s.push_str(&blklab_fio::text::write_header(&specs, &gids, FIO_VERSION));
    s.push_str(&with_report(sc, out, i, blklab_fio::text::write_text));
    s.push('\n');
}

/// Write each invocation's JSON to its `output` file, whole or not at all.
pub fn write_job_outputs(sc: &Scenario, out: &Outcome) -> Result<()> {
    for (i, inv) in sc.invocations.iter().enumerate() {
        if let Some(p) = &inv.output {
            write_atomic(p, json(sc, out, i).as_bytes())?;
        }
    }
    Ok(())
}

/// Write a file through a temporary beside it and a rename.
pub fn write_atomic(path: &Path, data: &[u8]) -> Result<()> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| "out".into());
    let tmp = path.with_file_name(format!(".{name}.tmp"));
    std::fs::write(&tmp, data).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path)
        .with_context(|| format!("renaming {} to {}", tmp.display(), path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::ctime;
    #[test]
    fn ctime_matches_libc_layout() {
        assert_eq!(ctime(0), "Thu Jan  1 00:00:00 1970");
        assert_eq!(ctime(86400 * 59 + 3661), "Sun Mar  1 01:01:01 1970");
        assert_eq!(ctime(951782400), "Tue Feb 29 00:00:00 2000");
    }
}
