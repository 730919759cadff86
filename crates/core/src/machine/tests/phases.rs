//! Phased runs (machine/phases.rs) and the machine side of a timed
//! io.cost.qos write (`ioc_qos_write`'s wbt tail).

use super::*;
use crate::block::wbt::{Wbt, WbtSetup};
use crate::machine::{PhaseSpec, TimedWrite, WbtConfig};
use crate::sim::time::NSEC_PER_MSEC;

fn two_jobs() -> SimConfig {
    config(
        vec![nullb_dev(100_000, 64)],
        vec![
            (job("a", RwPattern::RandRead, 4096, 4, 1), "/x"),
            (job("b", RwPattern::RandRead, 4096, 4, 1), "/x"),
        ],
    )
}

fn phase(name: &str, gap_ms: u64, jobs: Vec<u32>) -> PhaseSpec {
    PhaseSpec {
        name: name.into(),
        gap_ns: gap_ms * NSEC_PER_MSEC,
        jobs,
        writes: Vec::new(),
    }
}

#[test]
fn every_job_in_exactly_one_phase() {
    let twice = vec![phase("p", 0, vec![0, 1]), phase("q", 0, vec![1])];
    let e = Sim::with_phases(two_jobs(), Tracer::default(), twice)
        .err()
        .unwrap();
    assert!(e.to_string().contains("in two phases (p and q)"), "{e}");
    let missing = vec![phase("p", 0, vec![0])];
    let e = Sim::with_phases(two_jobs(), Tracer::default(), missing)
        .err()
        .unwrap();
    assert!(
        e.to_string().contains("every job must belong to a phase"),
        "{e}"
    );
    let empty = vec![phase("p", 0, vec![0, 1]), phase("q", 0, vec![])];
    let e = Sim::with_phases(two_jobs(), Tracer::default(), empty)
        .err()
        .unwrap();
    assert!(e.to_string().contains("at least one job"), "{e}");
}

#[test]
fn phases_run_back_to_back_and_a_late_write_is_dropped() {
    let mut p1 = phase("p1", 0, vec![0]);
    // phase 1 ends just after 1 s: a write due at 5 s into it never happens
    p1.writes.push(TimedWrite {
        at: 5000 * NSEC_PER_MSEC,
        cgroup: 1,
        file: "io.max".into(),
        value: "252:0 riops=10".into(),
    });
    let plan = vec![p1, phase("p2", 40, vec![1])];
    let mut sim = Sim::with_phases(two_jobs(), Tracer::default(), plan).unwrap();
    let r = sim.run();
    let m = sim.phase_marks();
    assert_eq!(m.len(), 2);
    let e1 = m[0].end.as_ref().unwrap();
    assert_eq!(e1.t_ns, r.jobs[0].end_ns);
    assert_eq!(m[1].start.t_ns, e1.t_ns + 40 * NSEC_PER_MSEC);
    assert_eq!(m[1].end.as_ref().unwrap().t_ns, r.end_time);
    // phase 2 was not capped at 10 IOPS: the dropped write did not apply
    let ios2 = r.jobs[1].stats.dirs[0].clat.stat.samples;
    assert!(ios2 > 30_000, "{ios2}");
    assert_eq!(sim.cgroups().file(1, "io.max"), None);
    // the boundary figures: phase 1's reads are job a's, no vrate (no iocost)
    assert_eq!(e1.stat[0][0], r.jobs[0].stats.dirs[0].clat.stat.samples);
    assert_eq!(e1.vrate, vec![None]);
}

/// wbt on by default, iocost configured: `enable=0` written mid-run gives
/// wbt back (`wbt_enable_default`), `enable=1` takes it away again.
#[test]
fn iocost_enable_toggles_default_wbt() {
    let mut cfg = two_jobs();
    cfg.devices[0].wbt = Some(WbtConfig {
        setup: WbtSetup::Default,
        write_cache: false,
    });
    let model = "252:0 ctrl=user model=linear rbps=1000000000 rseqiops=100000 rrandiops=100000 wbps=1000000000 wseqiops=100000 wrandiops=100000";
    cfg.cgroups.write_file(0, "io.cost.model", model);
    cfg.cgroups.write_file(0, "io.cost.qos", "252:0 enable=1");
    let w = |at_ms: u64, v: &str| TimedWrite {
        at: at_ms * NSEC_PER_MSEC,
        cgroup: 0,
        file: "io.cost.qos".into(),
        value: v.into(),
    };
    cfg.writes = vec![w(100, "252:0 enable=0"), w(200, "252:0 enable=1")];
    let mut sim = Sim::new(cfg, Tracer::default()).unwrap();
    let state = |s: &Sim| s.qos::<Wbt>(0).unwrap().describe();
    assert!(state(&sim).contains("state=OffDefault"), "{}", state(&sim));
    sim.observe_at(150 * NSEC_PER_MSEC);
    sim.run_until(150 * NSEC_PER_MSEC);
    assert!(state(&sim).contains("state=OnDefault"), "{}", state(&sim));
    let vrate = |s: &Sim| s.qos::<crate::block::iocost::IoCost>(0).unwrap().vrate();
    let at_150 = vrate(&sim);
    sim.observe_at(250 * NSEC_PER_MSEC);
    sim.run_until(250 * NSEC_PER_MSEC);
    assert!(state(&sim).contains("state=OffDefault"), "{}", state(&sim));
    assert!(sim
        .qos::<crate::block::iocost::IoCost>(0)
        .unwrap()
        .enabled());
    // re-enabling does not reset vrate (ioc_refresh_params keeps it)
    assert_eq!(vrate(&sim), at_150);
}
