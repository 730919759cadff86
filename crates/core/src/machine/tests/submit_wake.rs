//! `[host] submit_wake_ns` (`CpuCosts::submit_wake_part`): the part of
//! the submit call's way back that only a call whose dispatch woke a
//! sleeping task spends. A bio that joins work already queued (a loop
//! worker's item pending, its kworker awake) or goes to a device that
//! completes by interrupt wakes nobody, and its call returns that much
//! sooner; a call that wakes the loop worker costs the whole `submit_ns`.

use super::host_cpus::host;
use super::loop_worker::tmpfs_loop;
use super::*;
use crate::sim::host_cpus::HostCpus;

/// The tests' submit call (mod.rs `config`) and its way back.
const SUBMIT_NS: u64 = 2_000;
const WAKE_PART_NS: u64 = 500;

/// One job of `iodepth` on `dev` for 1 s on one CPU, with the wake part
/// `wake_part_ns`: its slat (min, max, mean) and its I/Os.
fn run(dev: DeviceConfig, iodepth: u32, wake_part_ns: u64) -> (u64, u64, f64, u64) {
    let mut cfg = config(
        vec![dev],
        vec![(job("a", RwPattern::RandRead, 4096, iodepth, 1), "/")],
    );
    cfg.cpu.cpus = HostCpus {
        submit_wake_ns: wake_part_ns,
        ..host(1)
    };
    assert_eq!(cfg.cpu.submit_ns, SUBMIT_NS);
    let r = Sim::new(cfg, Tracer::default()).unwrap().run();
    let d = &r.jobs[0].stats.dirs[0];
    let s = &d.slat.stat;
    (s.min, s.max, s.mean, d.total_ios)
}

#[test]
fn a_submit_that_wakes_nobody_returns_without_the_wake_part() {
    // null_blk completes by interrupt: no call wakes a task, so every
    // call ends WAKE_PART_NS early (the way back is host()'s whole call)
    let (min, max, _, _) = run(nullb_dev(20_000, 64), 1, WAKE_PART_NS);
    assert_eq!(
        (min, max),
        (SUBMIT_NS - WAKE_PART_NS, SUBMIT_NS - WAKE_PART_NS)
    );
    let (min, max, _, _) = run(nullb_dev(20_000, 64), 1, 0);
    assert_eq!((min, max), (SUBMIT_NS, SUBMIT_NS));
}

#[test]
fn a_submit_that_wakes_the_loop_worker_pays_the_whole_call() {
    // QD1 on a tmpfs loop: the worker sleeps between requests, so every
    // call's dispatch wakes it and the call costs all of submit_ns (FIFO,
    // no wake-up preemption: the worker runs once the job blocks)
    let with = run(tmpfs_loop(), 1, WAKE_PART_NS);
    let without = run(tmpfs_loop(), 1, 0);
    assert_eq!((with.0, with.1), (SUBMIT_NS, SUBMIT_NS));
    assert_eq!(
        with, without,
        "nothing moves when every call wakes the worker"
    );
}

#[test]
fn at_depth_only_the_calls_that_join_queued_work_are_cheaper() {
    // QD8 on the tmpfs loop: a call whose bio finds the worker's item
    // pending (or its kworker awake) wakes nobody; the one that finds it
    // asleep wakes it. Both kinds occur, and the cheap ones speed the job up.
    let (min, max, mean, ios) = run(tmpfs_loop(), 8, WAKE_PART_NS);
    assert_eq!(
        min,
        SUBMIT_NS - WAKE_PART_NS,
        "a call that joined queued work"
    );
    assert_eq!(max, SUBMIT_NS, "a call that woke the worker");
    assert!(
        mean > (SUBMIT_NS - WAKE_PART_NS) as f64 && mean < SUBMIT_NS as f64,
        "mean slat {mean}"
    );
    let (_, _, _, ios_flat) = run(tmpfs_loop(), 8, 0);
    assert!(
        ios > ios_flat,
        "{ios} I/Os with the wake part, {ios_flat} without"
    );
}
