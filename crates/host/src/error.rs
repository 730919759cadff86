//! Errors of host observation. Each environment problem has its own variant so
//! that the CLI (and tests) can tell "cannot trace here" from a real failure.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum HostError {
    #[error("tracing the block layer needs root (CAP_SYS_ADMIN); running as uid {uid}")]
    NotRoot { uid: u32 },
    #[error("no tracefs: {0} (mount it with `mount -t tracefs nodev /sys/kernel/tracing`)")]
    NoTracefs(String),
    #[error("the kernel has no `blk` ftrace tracer (CONFIG_BLK_DEV_IO_TRACE off?): available_tracers = {available:?}")]
    NoBlkTracer { available: String },
    #[error("the global ftrace tracer is in use (current_tracer = {current:?}); stop the other user first")]
    TracerBusy { current: String },
    #[error("device {dev}: {msg}")]
    Device { dev: String, msg: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("recording {path}: line {line}: {msg}")]
    BadRecording {
        path: PathBuf,
        line: u64,
        msg: String,
    },
    #[error("{0}")]
    Other(String),
}

impl HostError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        HostError::Io {
            path: path.into(),
            source,
        }
    }
    /// True when the error means "this machine cannot be traced" (tests SKIP on it).
    pub fn is_environment(&self) -> bool {
        matches!(
            self,
            HostError::NotRoot { .. }
                | HostError::NoTracefs(_)
                | HostError::NoBlkTracer { .. }
                | HostError::TracerBusy { .. }
        )
    }
}

pub type Result<T> = std::result::Result<T, HostError>;
