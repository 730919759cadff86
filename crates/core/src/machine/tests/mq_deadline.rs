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
