//! kblockd's queue runs (`machine::kblockd`): on a host with CPUs and
//! switch `blk_mq.insert_run = kblockd`, an insertion into an I/O
//! scheduler does not dispatch in the submitter's call; a kblockd kworker,
//! woken by it, runs the queue once it has a CPU.

use super::host_cpus::{host, REAP_NS, WAKE_NS};
use super::*;
use crate::drivers::loop_dev::LoopSpec;
use crate::sim::host_cpus::HostCpus;

const WORKER_NS: u64 = 4_000;
const KBLOCKD_NS: u64 = 3_000;

/// One QD1 reader on a tmpfs loop device under mq-deadline, on one CPU
/// with wake-up preemption; returns its I/Os in the 1 s run and its clat's
/// minimum. `every`: `[host] reap_every_call`.
fn qd1(insert_run: &str, cpus: u32, every: bool) -> (u64, u64) {
    qd1_on("mq-deadline", insert_run, "off", cpus, every)
}

/// [`qd1`] under scheduler `sched`, with switch `blk_mq.submit_bio_plug`.
fn qd1_on(sched: &str, insert_run: &str, plug: &str, cpus: u32, every: bool) -> (u64, u64) {
    qd1_waker(sched, insert_run, plug, cpus, 0, every)
}

/// [`qd1_on`] with `[host] waker_ns`.
fn qd1_waker(
    sched: &str,
    insert_run: &str,
    plug: &str,
    cpus: u32,
    waker_ns: u64,
    every: bool,
) -> (u64, u64) {
    let mut d = nullb_dev(0, 128);
    d.info.name = "loop0".into();
    d.info.major = 7;
    d.scheduler = sched.into();
    d.model = ModelSpec::Loop(LoopSpec {
        backing: Some("tmpfs".into()),
        worker_ns: WORKER_NS as i64,
        ..LoopSpec::default()
    });
    let mut cfg = config(
        vec![d],
        vec![(job("a", RwPattern::RandRead, 4096, 1, 1), "/")],
    );
    cfg.switches.set("blk_mq.insert_run", insert_run).unwrap();
    cfg.switches.set("blk_mq.submit_bio_plug", plug).unwrap();
    if cpus > 0 {
        cfg.cpu.cpus = HostCpus {
            wakeup_preempt: true,
            kblockd_ns: KBLOCKD_NS,
            waker_ns,
            reap_every_call: every,
            ..host(cpus)
        };
    }
    let r = Sim::new(cfg, Tracer::default()).unwrap().run();
    let d = &r.jobs[0].stats.dirs[0];
    (d.total_ios, d.clat.stat.min)
}

#[test]
fn an_insertion_is_dispatched_by_the_kblockd_kworker() {
    for every in [false, true] {
        // inline: the job submits (2 µs) and dispatches in its own call;
        // the worker, woken, preempts it at the call's end (2.5 µs) and
        // copies (4 µs), completing the request before the job is switched
        // back in (2.5 µs), which then reaps it: 11 µs a request, and the
        // request is done when fio's clat starts. With reap_every_call the
        // getevents call that finds it there costs 1 µs more (fio/reap.rs),
        // and is then the whole clat
        let reap_ns = if every { REAP_NS } else { 0 };
        let inline_ns = 2_000 + WAKE_NS + WORKER_NS + WAKE_NS + reap_ns;
        let (ios, clat_min) = qd1("inline", 1, every);
        let want = 1e9 / inline_ns as f64;
        assert!(
            (ios as f64 / want - 1.0).abs() < 0.01,
            "{every}: {ios} vs {want:.0}"
        );
        assert_eq!(clat_min, reap_ns, "{every}");
        // kblockd: the submit call only queues the run and wakes the
        // kworker, which preempts the job at the end of its call and pays
        // its wake-up and its run (2.5 + 3 µs) before the request reaches
        // the driver; the request is no longer done when the call returns.
        // At least those 5.5 µs more per request, at most one more switch
        // (2.5 µs) and the reap (1 µs) besides
        let (ios, clat_min) = qd1("kblockd", 1, every);
        let per_io = 1e9 / ios as f64;
        let hop = (WAKE_NS + KBLOCKD_NS) as f64;
        let extra = per_io - inline_ns as f64;
        assert!(
            extra >= hop * 0.99 && extra <= (hop + WAKE_NS as f64 + 1_000.0) * 1.01,
            "{every}: {per_io:.0} ns per request, {extra:.0} more than inline"
        );
        assert!(clat_min >= WORKER_NS, "{every}: clat min {clat_min}");
    }
}

#[test]
fn the_free_host_runs_the_queue_inline_whatever_the_switch() {
    // no CPUs: no kernel thread to hop to; only the 3 ms re-run's
    // replacement (bfq) depends on the switch
    assert_eq!(qd1("kblockd", 0, false), qd1("inline", 0, false));
}

#[test]
fn under_the_per_bio_plug_the_submitter_dispatches_itself() {
    // blk_mq.submit_bio_plug = on (6.12): the insertion's run is the flush
    // of the plug __submit_bio holds, synchronous, in the job's own call,
    // so the request is dispatched there and done when the call returns.
    // Under bfq a lone QD1 reader's completion makes no run (nothing
    // queued); but the loop worker woken by the dispatch preempts the job
    // (wakeup_preempt), so the run ends with blk_mq_do_dispatch_sched's
    // need_resched() hand-off: a kblockd run that finds nothing, its
    // wake-up and run (2.5 + 3 µs) added to each request. Done: its clat
    // is 0, or with reap_every_call the getevents call that reaps it
    for every in [false, true] {
        let reap_ns = if every { REAP_NS } else { 0 };
        let inline = qd1_on("bfq", "inline", "off", 1, every);
        assert_eq!(
            inline.1, reap_ns,
            "{every}: done when the submit call returns"
        );
        let (ios, clat_min) = qd1_on("bfq", "kblockd", "on", 1, every);
        assert_eq!(
            clat_min, reap_ns,
            "{every}: dispatched in the job's own call"
        );
        let extra = 1e9 / ios as f64 - 1e9 / inline.0 as f64;
        let hop = (WAKE_NS + KBLOCKD_NS) as f64;
        assert!(
            (extra / hop - 1.0).abs() < 0.01,
            "{every}: {extra:.0} ns more per request than inline, not the hand-off's {hop}"
        );
        // without the plug (6.1) the same insertion hops to the kworker:
        // its wake-up and run, at least, are added to every request
        let (ios, clat_min) = qd1_on("bfq", "kblockd", "off", 1, every);
        let extra = 1e9 / ios as f64 - 1e9 / inline.0 as f64;
        assert!(
            extra >= (WAKE_NS + KBLOCKD_NS) as f64 * 0.99,
            "{every}: {extra:.0} ns more per request than inline"
        );
        assert!(clat_min >= WORKER_NS, "{every}: clat min {clat_min}");
    }
    // the free host has no kworker: the plug changes nothing there for a
    // lone reader
    assert_eq!(
        qd1_on("bfq", "kblockd", "on", 0, false),
        qd1_on("bfq", "kblockd", "off", 0, false)
    );
}

#[test]
fn each_wake_up_of_a_sleeper_costs_its_waker() {
    // [host] waker_ns: try_to_wake_up's work in the waker's context. Per
    // request of the QD1 reader under kblockd (FIFO run queue), three
    // tasks are woken from sleep, each by a task: kblockd by the job's
    // submit call, the loop kworker by kblockd's run (it queues behind the
    // job, which kblockd preempted), and the job, which meanwhile reaped
    // too early and blocked, by the kworker's completion. So exactly three
    // waker costs per request (a runnable task's wake-up costs nothing:
    // sim/cpus_tests.rs)
    const WAKER_NS: u64 = 1_500;
    let (base, _) = qd1_waker("mq-deadline", "kblockd", "off", 1, 0, false);
    let (ios, _) = qd1_waker("mq-deadline", "kblockd", "off", 1, WAKER_NS, false);
    let extra = 1e9 / ios as f64 - 1e9 / base as f64;
    assert!(
        (extra / (3 * WAKER_NS) as f64 - 1.0).abs() < 0.01,
        "{extra:.0} ns more per request, not three wakers' {}",
        3 * WAKER_NS
    );
    // the free host has no CPU to charge: no figure moves
    assert_eq!(
        qd1_waker("mq-deadline", "kblockd", "off", 0, WAKER_NS, false),
        qd1_waker("mq-deadline", "kblockd", "off", 0, 0, false)
    );
}
