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
/// Exit status for bad arguments (as clap's usage errors).
pub const EXIT_USAGE: u8 = 2;

/// A device as the user names it: `vda` or `/dev/vda` (the name under
/// /sys/class/block either way).
pub fn device_name(dev: &str) -> String {
    dev.strip_prefix("/dev/").unwrap_or(dev).to_string()
}

/// A report interval: at least 1 ms (`top` and `record` alike).
fn interval_ok(cmd: &str, ms: u64) -> bool {
    if ms == 0 {
        eprintln!("blklab {cmd}: --interval must be at least 1 ms");
        return false;
    }
    true
}

/// The exit status and message for a host error.
pub fn host_error(e: &HostError) -> (ExitCode, String) {
    if let HostError::Io { source, .. } = e {
        // `blklab top | head`: the reader has all it wanted
        if source.kind() == std::io::ErrorKind::BrokenPipe {
            return (ExitCode::SUCCESS, String::new());
        }
    }
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
    interval_ms: Option<u64>,
    extended: bool,
    count: Option<u64>,
    from: Option<PathBuf>,
) -> ExitCode {
    if from.is_some() && interval_ms.is_some() {
        eprintln!(
            "blklab top: --interval does not apply to --from: a recording is reported at its own period (record --interval)"
        );
        return ExitCode::from(EXIT_USAGE);
    }
    let interval_ms = interval_ms.unwrap_or(1000);
    if !interval_ok("top", interval_ms) {
        return ExitCode::from(EXIT_USAGE);
    }
    let opts = TopOptions {
        devices: devices.iter().map(|d| device_name(d)).collect(),
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
            if !msg.is_empty() {
                eprintln!("{msg}");
            }
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
            return ExitCode::from(EXIT_USAGE);
        }
    };
    if !interval_ok("record", interval_ms) {
        return ExitCode::from(EXIT_USAGE);
    }
    let opts = RecordOptions {
        devices: devices.iter().map(|d| device_name(d)).collect(),
        output: output.to_path_buf(),
        duration_ms,
        stat_interval_ms: interval_ms,
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
