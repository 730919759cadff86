//! mq-deadline's priorities through the whole machine.

use blklab_fio::options::RwPattern;

use super::{config, job, nullb_dev};
use crate::machine::Sim;
use crate::sim::trace::Tracer;

/// End to end through the engine: an RT job keeps requests in flight, so
/// a BE job on the same mq-deadline queue is served only in the gaps
/// (and by aging after 10 s, beyond this 1 s run).
#[test]
fn engine_rt_job_starves_be_job() {
    let mut dev = nullb_dev(50_000, 64);
    dev.scheduler = "mq-deadline".into();
    let mut rt = job("rt", RwPattern::RandRead, 4096, 8, 1);
    rt.prioclass = Some(1);
    let be = job("be", RwPattern::RandRead, 4096, 8, 1);
    let cfg = config(vec![dev], vec![(rt, "/"), (be, "/")]);
    let mut sim = Sim::new(cfg, Tracer::default()).unwrap();
    let r = sim.run();
    let n_rt = r.jobs[0].stats.dirs[0].total_ios;
    let n_be = r.jobs[1].stats.dirs[0].total_ios;
    assert!(n_rt > 100_000, "rt {n_rt}");
    assert!(n_be * 20 < n_rt, "be {n_be} vs rt {n_rt}");
}

/// mq-deadline's `async_depth` through the engine (`dd_limit_depth`): on 64
/// scheduler tags (4 bitmap words of 16), async_depth 16 is a shallow depth
/// of 4 bits per word, 16 tags, for writes; reads are not limited. A QD64
/// writer beside a QD64 reader then holds at most 16 of the 64 tags, and the
/// reader, on the same fixed 1 ms device, does at least 3 times its I/Os
/// (more: the reader's tags also sit in the writer's low bits, 3.6 here);
/// at the default async_depth (= nr_requests) they split about evenly.
#[test]
fn engine_async_depth_limits_writes_to_their_shallow_depth() {
    let run = |async_depth: Option<&str>| {
        let mut dev = nullb_dev(1_000_000, 64);
        dev.scheduler = "mq-deadline".into();
        if let Some(d) = async_depth {
            dev.iosched.push(("async_depth".into(), d.into()));
        }
        let w = job("w", RwPattern::RandWrite, 4096, 64, 1);
        let r = job("r", RwPattern::RandRead, 4096, 64, 1);
        let cfg = config(vec![dev], vec![(w, "/"), (r, "/")]);
        let res = Sim::new(cfg, Tracer::default()).unwrap().run();
        let writes = res.jobs[0].stats.dirs[1].total_ios as f64;
        let reads = res.jobs[1].stats.dirs[0].total_ios as f64;
        reads / writes
    };
    let limited = run(Some("16"));
    let open = run(None);
    assert!((3.0..4.5).contains(&limited), "reads/writes {limited}");
    assert!((0.7..1.4).contains(&open), "reads/writes {open}");
}

/// A woken tag waiter runs a pass of `blk_mq_get_tag`'s loop, mostly for
/// nothing (`[host] tag_retry_ns`, machine/kernel.rs `defer_tag_retry`):
/// the writer of the test above, on one CPU, sleeps for a tag whenever its
/// 16 shallow bits are taken, and every freed tag (wake_batch 1) wakes it,
/// mostly for a reader's tag its shallow depth cannot use. Each wake-up of
/// the sleeping writer costs it `tag_retry_ns` more of its own CPU time:
/// its CPU beyond its I/Os' is a whole number of passes, hundreds in the
/// 1 s run. The free host has no CPU to spend it on.
#[test]
fn a_futile_tag_retry_costs_the_woken_task_its_cpu() {
    use super::host_cpus::host;
    use crate::sim::host_cpus::HostCpus;
    const RETRY_NS: u64 = 4_000;
    let run = |retry_ns: u64, cpus: u32| {
        let mut dev = nullb_dev(1_000_000, 64);
        dev.scheduler = "mq-deadline".into();
        dev.iosched.push(("async_depth".into(), "16".into()));
        let w = job("w", RwPattern::RandWrite, 4096, 64, 1);
        let r = job("r", RwPattern::RandRead, 4096, 64, 1);
        let mut cfg = config(vec![dev], vec![(w, "/"), (r, "/")]);
        cfg.cpu.cpus = HostCpus {
            tag_retry_ns: retry_ns,
            ..host(cpus)
        };
        if cpus == 0 {
            cfg.cpu.cpus = HostCpus {
                tag_retry_ns: retry_ns,
                ..HostCpus::default()
            };
        }
        let res = Sim::new(cfg, Tracer::default()).unwrap().run();
        let st = &res.jobs[0].stats;
        (st.sys_time_ns, st.ctx, st.dirs[1].total_ios)
    };
    let (sys0, _, ios0) = run(0, 1);
    let (sys1, _, ios1) = run(RETRY_NS, 1);
    // its CPU beyond what its I/Os cost without the retries: whole retries
    let per_io = sys0 as f64 / ios0 as f64;
    let retries = (sys1 as f64 - per_io * ios1 as f64) / RETRY_NS as f64;
    assert!(retries > 100.0, "{retries:.1} retries");
    assert!(
        (retries - retries.round()).abs() < 0.5,
        "{retries:.2}: not whole retries"
    );
    assert_eq!(run(RETRY_NS, 0), run(0, 0), "the free host");
}
