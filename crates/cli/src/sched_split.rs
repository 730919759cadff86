//! `blklab run --trace FILE --sched-split`: the run's scheduler trace
//! (on a host with CPUs, sim::sched_tracepoints) read by the same code that
//! reads a QEMU guest's (blklab-conformance's vm/sched_trace.rs), so that
//! the two can be set side by side: fio job `j` is pid `FIO_PID_BASE + j`,
//! tagged with its job name; the device is the first job's.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{bail, Context, Result};
use blklab_conformance::vm::sched_trace::{describe, parse_line, split};
use blklab_core::sim::sched_tracepoints::TaskName;
use blklab_lab::scenario::Scenario;

/// A window of the run, `FROM..TO` in ms of simulated time.
pub fn parse_window(s: &str) -> Result<(u64, u64)> {
    let bad = || format!("--sched-window {s}: expected FROM..TO in ms (e.g. 2000..2250)");
    let (a, b) = s.split_once("..").with_context(bad)?;
    let ns = |ms: &str| -> Result<u64> {
        let ms: u64 = ms.trim().parse().with_context(bad)?;
        ms.checked_mul(1_000_000).with_context(bad)
    };
    let (a, b) = (ns(a)?, ns(b)?);
    if b <= a {
        bail!(bad());
    }
    Ok((a, b))
}

/// The analysis of trace file `path` of a run of `sc`, over `window` (ns)
/// or the whole run.
pub fn report(sc: &Scenario, path: &Path, window: Option<(u64, u64)>) -> Result<String> {
    if sc.config.cpu.cpus.nr == 0 {
        bail!(
            "--sched-split: the scenario's host has no CPUs ([host] cpus = 0): no scheduler trace"
        );
    }
    let text = blklab_input::read_text(path, "trace file", blklab_input::MAX_TRACE_BYTES)?;
    let text = match window {
        None => text,
        Some((from, to)) => text
            .lines()
            .filter(|l| parse_line(l).is_ok_and(|e| e.ts_ns >= from && e.ts_ns < to))
            .map(|l| format!("{l}\n"))
            .collect(),
    };
    let procs: BTreeMap<u32, String> = sc
        .config
        .jobs
        .iter()
        .enumerate()
        .map(|(j, jc)| (TaskName::fio(j as u32).pid, jc.spec.name.clone()))
        .collect();
    let Some(first) = sc.config.jobs.first() else {
        bail!("--sched-split: the scenario has no jobs");
    };
    let info = &sc.config.devices[first.dev as usize].info;
    let devno = format!("{}:{}", info.major, info.minor);
    let s = split(&text, &procs, &devno).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    if s.ios == 0 {
        bail!(
            "--sched-split: no request issued on {devno} in the trace's {:.1} ms",
            s.window_ns as f64 / 1e6
        );
    }
    Ok(describe(0, &s).replacen("guest sched trace, run 0", "sim sched trace", 1) + "\n")
}
