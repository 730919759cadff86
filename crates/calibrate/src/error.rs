//! Why a calibration stopped, and the exit status each reason maps to.

use std::fmt;

/// A failed calibration. The message names the target, the fio run (when
/// one was running) and what was expected.
#[derive(Debug)]
pub enum CalError {
    /// The host cannot run a calibration here: not root, no fio or losetup,
    /// or the target was refused (mounted, held, has a signature). Exit 4.
    HostCannotRun(String),
    /// SIGINT or SIGTERM arrived; everything created was removed. Exit 1.
    Interrupted(String),
    /// Anything else (fio failed, the target disappeared, a fit failed). Exit 1.
    Failed(String),
}

impl CalError {
    /// The process exit status: 4 host cannot run, 1 anything else (3, a
    /// missed validation, is not an error but an outcome).
    pub fn exit_status(&self) -> u8 {
        match self {
            CalError::HostCannotRun(_) => 4,
            CalError::Interrupted(_) | CalError::Failed(_) => 1,
        }
    }
}

impl fmt::Display for CalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CalError::HostCannotRun(m) => write!(f, "cannot calibrate here: {m}"),
            CalError::Interrupted(m) => write!(f, "interrupted: {m}"),
            CalError::Failed(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for CalError {}

impl From<String> for CalError {
    fn from(s: String) -> Self {
        CalError::Failed(s)
    }
}

pub type Result<T> = std::result::Result<T, CalError>;
