//! The error type of fio input parsing (job files and command lines).

use std::fmt;

/// A parse error, located the way a user finds it again: the origin (a job file
/// path, or "command line"), the 1-based line of a job file or the 1-based
/// argument number of a command line, and a message naming the option, the
/// value and what was expected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FioError {
    pub origin: String,
    /// 1-based line in a job file.
    pub line: Option<usize>,
    /// 1-based argument number on a command line.
    pub arg: Option<usize>,
    pub message: String,
}

impl FioError {
    pub fn at_line(origin: &str, line: usize, message: impl Into<String>) -> FioError {
        FioError {
            origin: origin.to_string(),
            line: Some(line),
            arg: None,
            message: message.into(),
        }
    }
    pub fn at_arg(origin: &str, arg: usize, message: impl Into<String>) -> FioError {
        FioError {
            origin: origin.to_string(),
            line: None,
            arg: Some(arg),
            message: message.into(),
        }
    }
    pub fn general(origin: &str, message: impl Into<String>) -> FioError {
        FioError {
            origin: origin.to_string(),
            line: None,
            arg: None,
            message: message.into(),
        }
    }
}

impl fmt::Display for FioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.arg) {
            (Some(l), _) => write!(f, "{}:{}: {}", self.origin, l, self.message),
            (None, Some(a)) => write!(f, "{}: argument {}: {}", self.origin, a, self.message),
            (None, None) => write!(f, "{}: {}", self.origin, self.message),
        }
    }
}

impl std::error::Error for FioError {}
