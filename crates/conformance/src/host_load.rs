//! How busy this host's CPUs were during each real run of a case, and how
//! much of that fio's jobs used: a real run on saturated CPUs measures how
//! the CPU was shared as much as the kernel's I/O control (bfq's split
//! between weighted groups moves from 88 % to 50 % on this 2-core host when
//! other work takes the CPUs: docs/fidelity/conformance.md). The note says
//! so under the case; verdicts are not changed by it.

use std::io::Read as _;

use crate::proc_stat::CpuTicks;

/// A run is CPU-bound when the host's CPUs were busy (not idle or waiting
/// for I/O) at least this share of its time, in percent.
pub const CPU_BOUND_BUSY_PCT: f64 = 95.0;

/// /proc/stat is a few KiB; a read is cut off well above that.
const PROC_STAT_MAX_BYTES: u64 = 1 << 20;

/// One real run's CPU figures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunLoad {
    /// The host's CPUs busy, percent of all CPUs' time over the run.
    pub busy_pct: f64,
    /// fio's jobs (`usr_cpu` + `sys_cpu` summed), percent of one CPU.
    pub fio_cpu_pct: f64,
}

/// A reading of /proc/stat: the aggregate ticks and the number of CPUs.
pub fn read_proc_stat() -> Result<(CpuTicks, usize), String> {
    let mut text = String::new();
    std::fs::File::open("/proc/stat")
        .and_then(|f| f.take(PROC_STAT_MAX_BYTES).read_to_string(&mut text))
        .map_err(|e| format!("/proc/stat: {e}"))?;
    CpuTicks::from_proc_stat(&text).map_err(|e| format!("/proc/stat: {e}"))
}

/// This host's CPUs: /proc/stat's `cpuN` lines, or what the process may
/// use if /proc/stat cannot be read.
pub fn nr_cpus() -> u32 {
    match read_proc_stat() {
        Ok((_, n)) if n > 0 => n as u32,
        _ => std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
    }
}

/// The busy share (percent) between two readings.
pub fn busy_pct(before: &CpuTicks, after: &CpuTicks) -> Option<f64> {
    before.pct_until(after).map(|p| 100.0 - p[4])
}

/// The note under a case: each run's busy share and fio's CPU, and how many
/// runs were CPU-bound.
pub fn note(runs: &[RunLoad], nr_cpus: usize) -> String {
    let list = |f: fn(&RunLoad) -> f64| -> String {
        runs.iter()
            .map(|r| format!("{:.0}", f(r)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let bound = runs
        .iter()
        .filter(|r| r.busy_pct >= CPU_BOUND_BUSY_PCT)
        .count();
    let verdict = if bound == 0 {
        "not CPU-bound".to_string()
    } else {
        format!(
            "CPU-bound in {bound} of {} run(s) (busy >= {CPU_BOUND_BUSY_PCT:.0} %): those runs' figures depend on how the CPUs were shared, with each other and with other work on the host",
            runs.len()
        )
    };
    format!(
        "host CPUs during the real runs: busy {} % of {nr_cpus} CPU(s), fio's jobs {} % of one CPU; {verdict}",
        list(|r| r.busy_pct),
        list(|r| r.fio_cpu_pct)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_note_counts_the_cpu_bound_runs() {
        let r = |busy, fio| RunLoad {
            busy_pct: busy,
            fio_cpu_pct: fio,
        };
        let n = note(&[r(97.2, 140.0), r(99.0, 151.0), r(60.0, 80.4)], 2);
        assert!(n.starts_with("host CPUs during the real runs: busy 97, 99, 60 % of 2 CPU(s), fio's jobs 140, 151, 80 % of one CPU; CPU-bound in 2 of 3 run(s)"), "{n}");
        let n = note(&[r(94.9, 10.0)], 4);
        assert!(n.ends_with("; not CPU-bound"), "{n}");
    }

    #[test]
    fn the_busy_share_leaves_out_idle_and_iowait() {
        let a = CpuTicks(vec![0, 0, 0, 0, 0, 0, 0, 0]);
        let b = CpuTicks(vec![30, 0, 20, 40, 10, 0, 0, 0]);
        assert_eq!(busy_pct(&a, &b), Some(50.0));
        assert_eq!(busy_pct(&a, &a), None);
    }

    #[test]
    fn this_hosts_proc_stat_reads() {
        let (t, n) = read_proc_stat().unwrap();
        assert!(n >= 1 && t.0.len() >= 7, "{n} CPUs, {:?}", t.0);
    }
}
