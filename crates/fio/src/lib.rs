//! fio, as blklab needs it: the job options (parsed from job files and command
//! lines exactly as fio reads them), fio's statistics (the clat histogram and its
//! percentile rule, online mean/stddev, bandwidth/IOPS interval samples), and
//! fio's JSON and normal text output.
//!
//! Nothing here simulates anything: the core's fio job model records into
//! [`stats::JobStats`] and these writers print it the way fio does.

pub mod options;
pub mod stats;

pub use options::{BsSpec, Ddir, Engine, JobSpec, RateProcess, RwPattern, UnifiedRw};
pub use stats::{DirStats, JobStats, LatStat, PlatHist, SampleStat};
