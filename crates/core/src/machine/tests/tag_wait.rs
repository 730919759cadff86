//! Sleeping for a request tag (`blk_mq_get_tag`, block/blk_mq/tag.rs): on
//! a host with CPUs a woken fio task goes on with its allocation when the
//! scheduler runs it, not inside the completion that freed the tag.

use super::host_cpus::{host, WAKE_NS};
use super::*;

const DEVICE_NS: u64 = 20_000;

/// Two QD1 readers on a nullb device with one tag, on `cpus` CPUs (0: the
/// free host): the I/Os of the 1 s run.
fn one_tag(cpus: u32) -> u64 {
    let mut d = nullb_dev(DEVICE_NS, 1);
    d.info.nr_requests = 1;
    let mut cfg = config(
        vec![d],
        vec![
            (job("a", RwPattern::RandRead, 4096, 1, 1), "/"),
            (job("b", RwPattern::RandRead, 4096, 1, 1), "/"),
        ],
    );
    if cpus > 0 {
        cfg.cpu.cpus = host(cpus);
    }
    let r = Sim::new(cfg, Tracer::default()).unwrap().run();
    r.jobs.iter().map(|j| j.stats.dirs[0].total_ios).sum()
}

/// With one tag one reader always sleeps for it. The free host hands the
/// freed tag to the sleeper inside the completion, so the device never
/// waits: 1 s / 20 µs (and the one in flight at the end). With CPUs the sleeper's task is woken (2.5 µs)
/// and takes the tag when it runs, so each I/O's device time is followed
/// by at least that wake-up before the next request reaches the device.
/// Fails if the woken sleeper retries in the freeing context on a host
/// with CPUs (the device then stays busy, about 50 k I/Os).
#[test]
fn a_woken_tag_sleeper_allocates_when_its_task_runs() {
    let free = one_tag(0);
    let busy_device = NSEC_PER_SEC / DEVICE_NS;
    assert!(
        (busy_device..=busy_device + 2).contains(&free),
        "free host: {free} vs {busy_device}"
    );
    let with_cpus = one_tag(2);
    let bound = NSEC_PER_SEC / (DEVICE_NS + WAKE_NS);
    assert!(
        with_cpus <= bound,
        "2 CPUs: {with_cpus} I/Os, at most {bound}"
    );
}

/// Eight QD32 readers in each of /A (bfq weight 800) and /B (100) on a
/// 54 µs nullb device with 1024 scheduler tags, free host, HZ 250, fio's
/// submit 10 µs, 1 s: the I/Os.
fn two_groups_deep() -> u64 {
    let mut d = nullb_dev(54_000, 128);
    d.info.nr_requests = 1024;
    d.scheduler = "bfq".into();
    let mut jobs = Vec::new();
    for g in ["/A", "/B"] {
        for i in 0..8 {
            jobs.push((job(&format!("{g}{i}"), RwPattern::RandRead, 4096, 32, 1), g));
        }
    }
    let mut cfg = config(vec![d], jobs);
    cfg.hz = crate::sim::time::Hz(250);
    cfg.cpu.submit_ns = 10_000;
    let a = cfg.cgroups.ensure("/A").unwrap();
    let b = cfg.cgroups.ensure("/B").unwrap();
    cfg.cgroups.write_file(a, "io.bfq.weight", "800");
    cfg.cgroups.write_file(b, "io.bfq.weight", "100");
    let r = Sim::new(cfg, Tracer::default()).unwrap().run();
    r.jobs.iter().map(|j| j.stats.dirs[0].total_ios).sum()
}

/// `bfq_limit_depth` holds /B's group to round(1024 × 100 / 900) = 114
/// requests and each /B process to 114 / 8 = 14; past that an allocation
/// may use one bit of each of the 16 bitmap words, and keeps that limit
/// until it gets a tag (`data->shallow_depth` is set once, before
/// `blk_mq_get_tag`'s loop). A /B queue in service whose process sleeps
/// there is idled for, with the drive empty, until bfq's idle timer or a
/// bit 0 frees. Asking the scheduler again at each retry lets the process
/// of the idled-for queue, whose requests have all completed, take a
/// full-depth tag at the next free, and the idling stretches grow: 27.0 k
/// I/Os in this run, against 41.0 k with the kernel's loop (18.4 k and
/// 26.9 k while injection took the queues in activation order instead of
/// `bfqd->active_list`'s, docs/fidelity/bfq-lowmode.md). Fails if the
/// retry asks `limit_depth` again.
#[test]
fn a_sleeper_keeps_the_shallow_depth_it_was_given() {
    let ios = two_groups_deep();
    assert!((36_000..=46_000).contains(&ios), "{ios}");
}

/// `readers` QD1 readers on a tmpfs loop device (worker 4 µs) with one
/// tag, on one CPU, waker_ns 2 µs and `[host] tag_waker_ns` `tag_waker`:
/// the I/Os of the 1 s run.
fn one_tag_loop(readers: usize, tag_waker: Option<u64>) -> u64 {
    use crate::drivers::loop_dev::LoopSpec;
    use crate::sim::host_cpus::HostCpus;
    let mut d = nullb_dev(0, 1);
    d.info.name = "loop0".into();
    d.info.major = 7;
    d.model = ModelSpec::Loop(LoopSpec {
        backing: Some("tmpfs".into()),
        worker_ns: 4_000,
        ..LoopSpec::default()
    });
    let jobs = ["a", "b"][..readers]
        .iter()
        .map(|n| (job(n, RwPattern::RandRead, 4096, 1, 1), "/"))
        .collect();
    let mut cfg = config(vec![d], jobs);
    cfg.cpu.cpus = HostCpus {
        waker_ns: 2_000,
        tag_waker_ns: tag_waker,
        ..host(1)
    };
    let r = Sim::new(cfg, Tracer::default()).unwrap().run();
    r.jobs.iter().map(|j| j.stats.dirs[0].total_ios).sum()
}

/// The loop worker's completion frees the one tag and wakes the reader
/// asleep for it (`sbitmap_queue_wake_up`'s walk): that wake-up costs the
/// worker `tag_waker_ns`, its other wake-ups (the reader whose I/O it
/// ended) `waker_ns`. Unset, `tag_waker_ns` is `waker_ns`. Fails if the
/// tag waiter's wake-up is charged as any other (50 µs changes nothing),
/// or if every wake-up is charged `tag_waker_ns` (the lone reader, which
/// never waits for a tag, slows down).
#[test]
fn the_tag_waiter_s_waker_pays_tag_waker_ns() {
    let unset = one_tag_loop(2, None);
    assert_eq!(one_tag_loop(2, Some(2_000)), unset, "unset: waker_ns");
    // each I/O ends with a tag waiter's wake-up: 50 µs of the one CPU each
    let slow = one_tag_loop(2, Some(50_000));
    assert!(
        slow <= NSEC_PER_SEC / 50_000,
        "{slow} I/Os with a 50 µs walk ({unset} without)"
    );
    // a lone reader never sleeps for the tag: its wake-ups cost waker_ns
    assert_eq!(one_tag_loop(1, Some(50_000)), one_tag_loop(1, None));
}
