//! The host's CPUs (`sim::cpus`): tasks hold a CPU for their kernel work,
//! completions interrupt the submitting CPU, woken tasks pay a wake-up.
//! On a fast device the CPUs, not the device, set the pace, and the pace
//! follows from the costs.

use super::*;
use crate::sim::host_cpus::HostCpus;

const SUBMIT_NS: u64 = 2_000;
pub(super) const REAP_NS: u64 = 1_000;
const IRQ_NS: u64 = 1_500;
pub(super) const WAKE_NS: u64 = 2_500;

pub(super) fn host(nr: u32) -> HostCpus {
    HostCpus {
        nr,
        irq_ns: IRQ_NS,
        wake_ns: WAKE_NS,
        timer_ns: 1_000,
        // the bio at the submit call's start, as on the free host: these
        // tests' arithmetic is about other costs (the split's own test is
        // the_bio_goes_in_where_the_submit_call_reaches_submit_bio)
        submit_return_ns: SUBMIT_NS,
        ..HostCpus::default()
    }
}

/// `nr_jobs` libaio QD1 jobs for 1 s on a nullb device completing in
/// `completion_ns`, on `cpus`: total I/Os and the run's results.
pub(super) fn run(
    cpus: HostCpus,
    nr_jobs: usize,
    completion_ns: u64,
    seed: u64,
) -> crate::machine::RunResult {
    let names = ["a", "b", "c", "d", "e", "f"];
    let jobs = (0..nr_jobs)
        .map(|i| (job(names[i], RwPattern::RandRead, 4096, 1, 1), "/"))
        .collect();
    let mut cfg = config(vec![nullb_dev(completion_ns, 64)], jobs);
    cfg.seed = seed;
    cfg.cpu.cpus = cpus;
    Sim::new(cfg, Tracer::default()).unwrap().run()
}

pub(super) fn ios(r: &crate::machine::RunResult) -> u64 {
    r.jobs.iter().map(|j| j.stats.dirs[0].total_ios).sum()
}

/// The CPU work of one QD1 libaio I/O whose completion comes after its task
/// blocked: the submit call, the completion interrupt, the wake-up, the reap.
pub(super) const PER_IO_NS: u64 = SUBMIT_NS + IRQ_NS + WAKE_NS + REAP_NS;

#[test]
fn one_cpu_throughput_is_one_over_the_cpu_cost_per_io() {
    // two jobs keep the CPU busy: while one waits for its 3 µs device, the
    // other runs; the device (3 µs > the 2 µs submit) completes after the
    // submitter blocked, so every I/O pays all four costs on the one CPU
    let r = run(host(1), 2, 3_000, 1);
    let want = 1e9 / PER_IO_NS as f64;
    let got = ios(&r) as f64;
    assert!(
        (got / want - 1.0).abs() < 0.02,
        "{got} I/Os, want {want:.0}"
    );
    // and the jobs share it evenly
    let (a, b) = (
        r.jobs[0].stats.dirs[0].total_ios,
        r.jobs[1].stats.dirs[0].total_ios,
    );
    assert!(a.abs_diff(b) * 100 < a + b, "{a} vs {b}");
    // each job's own kernel time is its bursts: submit + reap per I/O, over
    // its runtime (the rest: its wake-ups, the interrupts, the other job)
    let st = &r.jobs[0].stats;
    let sys_ns = st.sys_time_ns as f64;
    let want_sys = a as f64 * (SUBMIT_NS + REAP_NS) as f64;
    assert!(
        (sys_ns / want_sys - 1.0).abs() < 0.01,
        "{sys_ns} vs {want_sys}"
    );
    assert!(st.ctx >= a, "a context switch per I/O: {} < {a}", st.ctx);
}

#[test]
fn two_cpus_give_twice_the_throughput_of_one() {
    // four jobs: two per CPU keep both busy
    let one = ios(&run(host(1), 4, 3_000, 1)) as f64;
    let two = ios(&run(host(2), 4, 3_000, 1)) as f64;
    assert!((two / one - 2.0).abs() < 0.04, "1 CPU {one}, 2 CPUs {two}");
}

#[test]
fn free_host_is_not_cpu_bound() {
    // without CPUs the same two jobs each run at 1 / (submit + device -
    // overlap + reap): the device sets the pace, not the host
    let r = run(HostCpus::default(), 2, 3_000, 1);
    let per_job = 1e9 / (3_000 + REAP_NS) as f64;
    let got = ios(&r) as f64;
    assert!((got / (2.0 * per_job) - 1.0).abs() < 0.01, "{got}");
    assert_eq!(r.jobs[0].stats.sys_time_ns, 0);
    assert_eq!(r.jobs[0].stats.ctx, 0);
}

#[test]
fn an_interrupt_during_a_burst_delays_its_end_by_irq_ns() {
    // one job at QD2 on one CPU: the first I/O's completion (device 1 µs)
    // arrives while the job is still in its first submit call; the call
    // returns irq_ns later, so the first slat is the wake-up's start delay
    // free (the job starts on an idle CPU: wake_ns before its loop) ...
    let mut j = job("a", RwPattern::RandRead, 4096, 2, 1);
    j.number_ios = 2;
    let mut cfg = config(vec![nullb_dev(1_000, 64)], vec![(j, "/")]);
    cfg.cpu.cpus = host(1);
    let r = Sim::new(cfg, Tracer::default()).unwrap().run();
    let st = &r.jobs[0].stats.dirs[0];
    // first call: submit 2 µs, plus the interrupt of its own I/O's completion
    // at +1 µs, 1.5 µs: slat 3.5 µs; the second call starts after it and its
    // completion interrupts it the same way
    assert_eq!(st.slat.stat.min, SUBMIT_NS + IRQ_NS);
    assert_eq!(st.slat.stat.max, SUBMIT_NS + IRQ_NS);
    // and without the interrupt cost, the plain submit cost
    let mut j = job("a", RwPattern::RandRead, 4096, 2, 1);
    j.number_ios = 2;
    let mut cfg = config(vec![nullb_dev(1_000, 64)], vec![(j, "/")]);
    cfg.cpu.cpus = HostCpus {
        irq_ns: 0,
        ..host(1)
    };
    let r = Sim::new(cfg, Tracer::default()).unwrap().run();
    assert_eq!(r.jobs[0].stats.dirs[0].slat.stat.max, SUBMIT_NS);
}

#[test]
fn tails_are_seeded_and_reproducible() {
    let tails = HostCpus {
        irq_tail_ns: 500,
        wake_tail_ns: 2_000,
        timer_tail_ns: 100,
        ..host(2)
    };
    let a = run(tails, 3, 3_000, 7);
    let b = run(tails, 3, 3_000, 7);
    let c = run(tails, 3, 3_000, 8);
    let lat = |r: &crate::machine::RunResult| -> Vec<(u64, u64, u64)> {
        r.jobs
            .iter()
            .map(|j| {
                let s = &j.stats.dirs[0];
                (s.total_ios, s.clat.stat.max, j.stats.sys_time_ns)
            })
            .collect()
    };
    assert_eq!(lat(&a), lat(&b));
    assert_ne!(lat(&a), lat(&c), "another seed draws other tails");
    // the tails cost CPU: fewer I/Os than without them
    assert!(ios(&a) < ios(&run(host(2), 3, 3_000, 7)));
}

#[test]
fn a_task_that_never_blocks_yields_after_its_slice() {
    // on one CPU, a QD32 job always finds a completion when it reaps, so it
    // never blocks; a QD1 job beside it gets the CPU once per slice of the
    // other (3 ms): about one I/O each time, ~333 a second, not none
    let mut cfg = config(
        vec![nullb_dev(3_000, 64)],
        vec![
            (job("deep", RwPattern::RandRead, 4096, 32, 1), "/"),
            (job("qd1", RwPattern::RandRead, 4096, 1, 1), "/"),
        ],
    );
    cfg.cpu.cpus = host(1);
    let r = Sim::new(cfg, Tracer::default()).unwrap().run();
    let qd1 = r.jobs[1].stats.dirs[0].total_ios;
    let per_slice = 1e9 / crate::sim::cpus::SLICE_NS as f64;
    assert!(
        (qd1 as f64 / per_slice - 1.0).abs() < 0.1,
        "{qd1} I/Os, ~{per_slice:.0} expected"
    );
    // and its clat holds the other's slice
    assert!(r.jobs[1].stats.dirs[0].clat.stat.max >= crate::sim::cpus::SLICE_NS);
}

#[test]
fn the_bio_goes_in_where_the_submit_call_reaches_submit_bio() {
    // one QD1 job on a 20 µs device, alone on one CPU: its I/O takes the
    // part of the submit call before submit_bio, the device, the
    // interrupt, the wake-up and the reap; the part after submit_bio runs
    // while the device works (CpuCosts::submit_split)
    let device_ns = 20_000;
    for return_ns in [0, 500, SUBMIT_NS] {
        let r = run(
            HostCpus {
                submit_return_ns: return_ns,
                ..host(1)
            },
            1,
            device_ns,
            1,
        );
        let per_io = SUBMIT_NS - return_ns + device_ns + IRQ_NS + WAKE_NS + REAP_NS;
        let want = 1e9 / per_io as f64;
        let got = ios(&r) as f64;
        assert!(
            (got / want - 1.0).abs() < 0.005,
            "submit_return_ns {return_ns}: {got} I/Os, want {want:.0}"
        );
        // slat: the whole call, whatever the split
        let slat = &r.jobs[0].stats.dirs[0].slat.stat;
        assert_eq!((slat.min, slat.max), (SUBMIT_NS, SUBMIT_NS));
    }
    // the free host keeps the bio at the call's start
    let r = run(HostCpus::default(), 1, device_ns, 1);
    let want = 1e9 / (device_ns + REAP_NS) as f64;
    let got = ios(&r) as f64;
    assert!(
        (got / want - 1.0).abs() < 0.005,
        "free host: {got} I/Os, want {want:.0}"
    );
}

#[test]
fn a_job_that_never_sleeps_pays_each_reap_too() {
    // one QD8 job alone on one CPU, a 3 µs device and no interrupt cost:
    // each I/O's completion is there long before the queue is full again,
    // so the job never blocks in getevents. With `reap_every_call` every
    // call still costs its reap_ns (fio's io_u_queued_complete →
    // td_io_getevents; reap.rs): the CPU per I/O is submit + reap, the
    // job's only work, and sets the pace; without it (the default) the
    // reap is free and the CPU per I/O is the submit call alone
    for (every, want_ns) in [(true, SUBMIT_NS + REAP_NS), (false, SUBMIT_NS)] {
        let mut cfg = config(
            vec![nullb_dev(3_000, 64)],
            vec![(job("deep", RwPattern::RandRead, 4096, 8, 1), "/")],
        );
        cfg.cpu.cpus = HostCpus {
            irq_ns: 0,
            reap_every_call: every,
            ..host(1)
        };
        let r = Sim::new(cfg, Tracer::default()).unwrap().run();
        let st = &r.jobs[0].stats;
        let n = st.dirs[0].total_ios;
        let per_io_ns = st.sys_time_ns as f64 / n as f64;
        let want_ns = want_ns as f64;
        assert!(
            (per_io_ns / want_ns - 1.0).abs() < 0.005,
            "{every}: {per_io_ns:.0} ns of CPU per I/O, want {want_ns}"
        );
        let want_ios = 1e9 / want_ns;
        assert!(
            (n as f64 / want_ios - 1.0).abs() < 0.01,
            "{every}: {n} I/Os, want {want_ios:.0}"
        );
        // it never slept in the loop: its switch-ins are its start and the
        // wait for the last completions at its end (io_u_quiesce)
        assert!(st.ctx <= 2, "{every}: {} context switches", st.ctx);
    }
}
