//! fio's CPU figures from a probe's JSON: each job's I/Os, slat and CPU
//! time, fio's CPU per I/O, and the guest's quiet-submit probe (several
//! jobs at QD > 1 on one loop device, its kworker backlogged), whose slat is
//! fio's own in-call cost (`fio_costs`, `--sim-costs measured`; issue 13).

use crate::metrics::{fio_jobs, num};
use blklab_core::sim::host_cpus::DEFAULT_WAKE_NS;

/// The jobs per quiet-submit probe and their depth: the bfq none twin's
/// group (4 jobs at QD8), whose real slat on debian-6.12 is 6.2 µs against
/// the QD1 probe's 17.3.
pub const QUIET_JOBS: u32 = 4;
pub const QUIET_IODEPTH: u32 = 8;

/// fio's options for the quiet-submit probe (4k random reads for
/// `seconds`, JSON out, one report per job), without the device.
pub fn quiet_fio_options(seconds: u32) -> String {
    format!(
        "--name=quiet --direct=1 --ioengine=libaio --rw=randread --bs=4k --iodepth={QUIET_IODEPTH} --numjobs={QUIET_JOBS} --runtime={seconds} --time_based --output-format=json"
    )
}

/// One fio job's I/Os, mean slat and CPU time, from its JSON.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JobCpu {
    pub ios: u64,
    pub slat_mean_ns: f64,
    /// `usr_cpu` + `sys_cpu` (percent of `job_runtime`) as time. The
    /// kernel's user/system split is sampled at its ticks, but their sum
    /// is scaled to the task's exact `sum_exec_runtime`
    /// (`cputime_adjust`); fio keeps each in whole ms over the job's run
    /// (`mtime_since` of the rusage at its start and end).
    pub cpu_ns: f64,
    /// Context switches (rusage's voluntary and involuntary, `ctx`).
    pub ctx: u64,
}

/// Every job of one fio JSON document.
pub fn jobs_cpu(json: &str) -> Result<Vec<JobCpu>, String> {
    let jobs = fio_jobs(json)?;
    if jobs.is_empty() {
        return Err("no job in fio's output".into());
    }
    Ok(jobs
        .iter()
        .map(|j| {
            let ios = num(j, &["read", "total_ios"]) + num(j, &["write", "total_ios"]);
            JobCpu {
                ios: ios.max(0.0) as u64,
                slat_mean_ns: num(j, &["read", "slat_ns", "mean"]),
                cpu_ns: (num(j, &["usr_cpu"]) + num(j, &["sys_cpu"])) / 100.0
                    * num(j, &["job_runtime"])
                    * 1e6,
                ctx: num(j, &["ctx"]).max(0.0) as u64,
            }
        })
        .collect())
}

/// fio's CPU per I/O over `jobs` (ns), or why there is none.
pub fn cpu_per_io_ns(jobs: &[JobCpu]) -> Result<u64, String> {
    let ios: u64 = jobs.iter().map(|j| j.ios).sum();
    let cpu: f64 = jobs.iter().map(|j| j.cpu_ns).sum();
    if ios == 0 || cpu <= 0.0 {
        return Err(format!(
            "fio reports {ios} I/Os and {:.0} µs of CPU: no CPU per I/O",
            cpu / 1000.0
        ));
    }
    Ok((cpu / ios as f64).round() as u64)
}

/// The quiet-submit probe's figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuietProbe {
    pub jobs: u32,
    pub ios: u64,
    /// The jobs' slat mean, weighted by their I/Os: fio's own in-call cost.
    pub slat_ns: u64,
    /// fio's CPU per I/O over all jobs.
    pub cpu_per_io_ns: u64,
    /// fio's context switches per 1000 I/Os.
    pub ctx_per_kio: u64,
    /// The kworkers' figures from the probe's scheduler trace, the loop
    /// worker's cost under `--sim-costs measured` (quiet_kworkers.rs);
    /// `None` until the trace is read (vm/mod.rs), or when it was not.
    pub kworkers: Option<crate::quiet_kworkers::QuietKworkers>,
}

impl QuietProbe {
    pub fn from_fio_json(json: &str) -> Result<QuietProbe, String> {
        let jobs = jobs_cpu(json)?;
        let ios: u64 = jobs.iter().map(|j| j.ios).sum();
        let slat: f64 = jobs.iter().map(|j| j.slat_mean_ns * j.ios as f64).sum();
        let cpu_per_io_ns = cpu_per_io_ns(&jobs)?;
        let ctx: u64 = jobs.iter().map(|j| j.ctx).sum();
        Ok(QuietProbe {
            jobs: jobs.len() as u32,
            ios,
            slat_ns: (slat / ios as f64).round() as u64,
            cpu_per_io_ns,
            ctx_per_kio: (ctx as f64 * 1000.0 / ios as f64).round() as u64,
            kworkers: None,
        })
    }

    /// The model's switches in per I/O that fio's CPU figure holds:
    /// `wake_ns` for each of fio's context switches.
    pub fn switch_ns(&self) -> u64 {
        self.ctx_per_kio * DEFAULT_WAKE_NS / 1000
    }
}
