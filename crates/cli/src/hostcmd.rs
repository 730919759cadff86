//! `blklab top` and `blklab record`: real-host observation through
//! blklab-host (the ftrace `blk` tracer), with exit statuses that tell the
//! environment problems apart.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use blklab_host::{HostError, RecordOptions, TopOptions, TopSummary};

/// Exit status when the command is not run as root.
pub const EXIT_NOT_ROOT: u8 = 3;
/// Exit status when block tracing is unavailable (no tracefs, no `blk`
/// tracer, or another user holds the global tracer).
pub const EXIT_NO_TRACING: u8 = 4;
/// Exit status for other failures (bad device, I/O error, bad recording).
pub const EXIT_FAILURE: u8 = 1;

/// The exit status and message for a host error.
pub fn host_error(e: &HostError) -> (ExitCode, String) {
    let code = match e {
        HostError::NotRoot { .. } => EXIT_NOT_ROOT,
        HostError::NoTracefs(_) | HostError::NoBlkTracer { .. } | HostError::TracerBusy { .. } => {
            EXIT_NO_TRACING
        }
        _ => EXIT_FAILURE,
    };
    (ExitCode::from(code), format!("blklab: {e}"))
}

fn losses(s: &TopSummary) -> Option<String> {
    let a = &s.account;
    let any = s.ring_overrun
        + s.ring_dropped
        + s.parse.malformed
        + a.unmatched_complete
        + a.evicted_stale
        + a.dropped_full;
    (any > 0).then(|| {
        format!(
            "blklab top: {} intervals; trace losses: ring overrun={} dropped={}, malformed lines={}, completions without a Q={}, evicted={}, dropped (table full)={}",
            s.intervals,
            s.ring_overrun,
            s.ring_dropped,
            s.parse.malformed,
            a.unmatched_complete,
            a.evicted_stale,
            a.dropped_full
        )
    })
}

/// `blklab top [--device DEV]... [--cgroup PATH]... [--interval MS] [-x] [--count N] [--from FILE]`
pub fn top(
    devices: Vec<String>,
    cgroups: Vec<String>,
    interval_ms: u64,
    extended: bool,
    count: Option<u64>,
    from: Option<PathBuf>,
) -> ExitCode {
    if interval_ms == 0 {
        eprintln!("blklab top: --interval must be at least 1 ms");
        return ExitCode::from(2);
    }
    let opts = TopOptions {
        devices,
        cgroups,
        interval_ms,
        count,
        extended,
        ..Default::default()
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let r = match &from {
        Some(p) => blklab_host::top_from_file(p, &opts, &mut out),
        None => blklab_host::top(&opts, &mut out),
    };
    let _ = out.flush();
    match r {
        Ok(s) => {
            if let Some(l) = losses(&s) {
                eprintln!("{l}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            let (code, msg) = host_error(&e);
            eprintln!("{msg}");
            code
        }
    }
}

/// `blklab record --device DEV... --duration S -o FILE [--interval MS]`
pub fn record(
    devices: Vec<String>,
    duration_s: Option<f64>,
    output: &Path,
    interval_ms: u64,
) -> ExitCode {
    let duration_ms = match duration_s {
        None => None,
        Some(s) if s.is_finite() && s > 0.0 => Some((s * 1000.0).round() as u64),
        Some(s) => {
            eprintln!("blklab record: --duration {s}: expected a positive number of seconds");
            return ExitCode::from(2);
        }
    };
    let opts = RecordOptions {
        devices,
        output: output.to_path_buf(),
        duration_ms,
        stat_interval_ms: interval_ms.max(1),
        ..Default::default()
    };
    match blklab_host::record(&opts) {
        Ok(s) => {
            eprintln!(
                "blklab record: {} events to {}; lost: ring overrun={} dropped={}, malformed lines={}",
                s.events,
                output.display(),
                s.ring_overrun,
                s.ring_dropped,
                s.parse.malformed
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            let (code, msg) = host_error(&e);
            eprintln!("{msg}");
            code
        }
    }
}
