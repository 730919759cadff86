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
