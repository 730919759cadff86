//! Fixtures shared by the crate's unit tests (parse, text and JSON writers).

use crate::options::JobSpec;
use crate::report::{JobReport, Report};
use crate::stats::{JobStats, SampleStat};

/// The job file of the blk-throttle commit in seeds/003.
pub const SEED_003_JOB: &str = "[global]
name=fio-rand-read
filename=/dev/nullb1
rw=randread
bs=4k
direct=1
numjobs=1
time_based=1
runtime=60
group_reporting=1
[file1]
size=4G
ioengine=libaio
iodepth=1
rate_iops=50000
norandommap=1
thinktime=4ms
";

/// The jq program of seeds/000 (`get_result`); the CLI's jq test runs the
/// same file.
pub const GET_RESULT_JQ: &str = include_str!("../testdata/get_result.jq");

/// A sample statistic with fio's fields from its printed figures.
pub fn sample(min: u64, max: u64, n: u64, mean: f64, stddev: f64) -> SampleStat {
    SampleStat {
        min,
        max,
        samples: n,
        mean,
        s: stddev * stddev * (n.saturating_sub(1)) as f64,
    }
}

/// A report of one job as fio 3.33 would write it, at time 0 with no global
/// options and no disk statistics; tests change what they need with
/// `Report { field, ..one_job_report(…) }`.
pub fn one_job_report<'a>(spec: &'a JobSpec, stats: &'a JobStats, pid: u32) -> Report<'a> {
    Report {
        fio_version: "fio-3.33",
        timestamp_s: 0,
        timestamp_ms: 0,
        time_str: "",
        global_options: &[],
        jobs: vec![JobReport { spec, stats, pid }],
        disk_util: vec![],
        json_plus: false,
    }
}
