//! Background work on the host's CPUs (`sim::background`): stalls taken
//! from busy CPUs' tasks, none from idle CPUs.

use super::host_cpus::{host, ios, run, PER_IO_NS};
use super::*;
use crate::sim::background::{Background, StallDist, Stalls};
use crate::sim::host_cpus::HostCpus;

/// 100 µs stalls starting every 1 ms on average: 10 % of a busy CPU.
const STALLS: Background = Background {
    interval_ns: 1_000_000,
    stall_ns: 100_000,
    dist: StallDist::Fixed,
};

fn with_stalls(nr: u32, b: Background) -> HostCpus {
    HostCpus {
        background: b,
        ..host(nr)
    }
}

#[test]
fn a_cpu_bound_run_on_one_cpu_loses_exactly_the_stalled_share() {
    // Two QD1 jobs keep one CPU busy all the time (host_cpus: 1 / PER_IO_NS
    // I/Os a second): every stall is taken from a task, so the run does
    // (1 s − stalled time) / PER_IO_NS I/Os. The stalled time is the stall
    // process's own over the run's second (the same seeded stream), about
    // 10 % (1 000 stalls ± 32 of 100 µs).
    let seed = 5;
    let plain = ios(&run(host(1), 2, 3_000, seed)) as f64;
    let stalled = ios(&run(with_stalls(1, STALLS), 2, 3_000, seed)) as f64;
    let stalled_ns = Stalls::new(STALLS, 1, seed).take(0, NSEC_PER_SEC, true) as f64;
    let share = stalled_ns / NSEC_PER_SEC as f64;
    assert!((share - 0.1).abs() < 0.01, "{share}");
    let want = plain * (1.0 - share);
    assert!(
        (stalled / want - 1.0).abs() < 0.002,
        "{stalled} I/Os, want {want:.0} ({plain} less {share:.4}; 1/PER_IO_NS = {:.0})",
        1e9 / PER_IO_NS as f64
    );
}

#[test]
fn a_mostly_idle_cpu_loses_only_its_busy_share() {
    // One QD1 job on a 1 ms device: its CPU is busy about PER_IO_NS (7 µs)
    // per 1 ms I/O, 0.7 % of the time; stalls landing on the idle CPU cost
    // nothing, so it loses about 0.7 % × 10 % = 0.07 % of its I/Os (a few
    // stalls more or less: at most 0.3 %), not 10 %.
    let plain = ios(&run(host(1), 1, 1_000_000, 1)) as f64;
    let stalled = ios(&run(with_stalls(1, STALLS), 1, 1_000_000, 1)) as f64;
    let loss = 1.0 - stalled / plain;
    assert!((0.0..0.003).contains(&loss), "{plain} → {stalled}: {loss}");
}

#[test]
fn stalls_are_seeded_and_reproducible() {
    let b = Background {
        dist: StallDist::Exp,
        ..STALLS
    };
    let figures = |seed| {
        let r = run(with_stalls(2, b), 3, 3_000, seed);
        let s = &r.jobs[0].stats.dirs[0];
        (ios(&r), s.clat.stat.max, r.jobs[0].stats.sys_time_ns)
    };
    assert_eq!(figures(7), figures(7));
    assert_ne!(figures(7), figures(8), "another seed, other stalls");
    // the stalls are not the task's own time: its sys time stays its bursts'
    let r = run(with_stalls(1, STALLS), 2, 3_000, 1);
    let st = &r.jobs[0].stats;
    let want_sys = st.dirs[0].total_ios as f64 * (2_000 + 1_000) as f64;
    assert!(
        (st.sys_time_ns as f64 / want_sys - 1.0).abs() < 0.01,
        "{} vs {want_sys}",
        st.sys_time_ns
    );
}
