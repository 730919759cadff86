//! fio, as blklab needs it: the job options (parsed from job files and command
//! lines exactly as fio reads them), fio's statistics (the clat histogram and its
//! percentile rule, online mean/stddev, bandwidth/IOPS interval samples), and
//! fio's JSON and normal text output.
//!
//! Nothing here simulates anything: the core's fio job model records into
//! [`stats::JobStats`] and these writers print it the way fio does.

pub mod cfmt;
pub mod error;
pub mod json;
pub mod log;
pub mod num2str;
pub mod options;
pub mod parse;
pub mod report;
pub mod stats;
pub mod text;
pub mod value;

#[cfg(test)]
mod test_fixtures;

pub use error::FioError;
pub use options::{BsSpec, Ddir, Engine, JobSpec, RateProcess, RwPattern, UnifiedRw};
pub use parse::{assign_groupids, parse_cmdline, parse_job_file, split_cmdline};
pub use report::{group_jobs, DiskUtil, JobReport, Report};
pub use stats::{DirStats, JobStats, LatStat, PlatHist, SampleStat};
