//! blk-throttle's dispatch work on the host's CPUs (`machine::kthrotld`,
//! `[host] kthrotld = true`): held bios leave when a nice-0 kworker runs
//! `blk_throtl_dispatch_work_fn`, after the tick's other timers' work, at a
//! CPU cost per bio; the free host, and a host without the key, still
//! issue them in the timer call.

use std::cell::RefCell;
use std::rc::Rc;

use super::host_cpus::{host, WAKE_NS};
use super::*;
use crate::sim::host_cpus::HostCpus;
use crate::sim::time::Ns;
use crate::sim::trace::TraceSink;

const WORK_FN: &str = "function blk_throtl_dispatch_work_fn";
const RUN_WORK_FN: &str = "function blk_mq_run_work_fn";

/// Every trace event with its exact instant.
#[derive(Clone, Default)]
struct Events(Rc<RefCell<Vec<(Ns, String, String)>>>);
impl TraceSink for Events {
    fn event(&mut self, t: Ns, name: &str, payload: &str) {
        self.0
            .borrow_mut()
            .push((t, name.to_string(), payload.to_string()));
    }
}

impl Events {
    /// The instants of the work item lines of `function` (`start`: its
    /// `workqueue_execute_start`, else `_end`).
    fn item(&self, function: &str, start: bool) -> Vec<Ns> {
        let name = if start {
            "workqueue:workqueue_execute_start"
        } else {
            "workqueue:workqueue_execute_end"
        };
        self.0
            .borrow()
            .iter()
            .filter(|(_, n, p)| n == name && p.ends_with(function))
            .map(|(t, _, _)| *t)
            .collect()
    }

    /// How many events named `name` fall in `[from, to)`.
    fn count(&self, name: &str, from: Ns, to: Ns) -> usize {
        self.0
            .borrow()
            .iter()
            .filter(|(t, n, _)| n == name && *t >= from && *t < to)
            .count()
    }
}

/// A QD64 random reader under riops=2000 on nullb0 (10 µs) for 1 s, with
/// `cpus`: its I/Os and the trace.
fn held_reader(cpus: HostCpus) -> (u64, Events) {
    let mut cfg = config(
        vec![nullb_dev(10_000, 256)],
        vec![(job("a", RwPattern::RandRead, 4096, 64, 1), "/p")],
    );
    let p = cfg.cgroups.find("/p").unwrap();
    cfg.cgroups.write_file(p, "io.max", "252:0 riops=2000");
    cfg.cpu.cpus = cpus;
    let ev = Events::default();
    let r = Sim::new(cfg, Tracer::new(Some(Box::new(ev.clone()))))
        .unwrap()
        .run();
    (r.jobs[0].stats.dirs[0].total_ios, ev)
}

#[test]
fn each_bio_the_work_issues_costs_its_kworker() {
    // no interrupt or timer work to stretch the kworker's bursts: an
    // execution lasts its bios' cost exactly
    const PER_BIO_NS: Ns = 5_000;
    let cpus = HostCpus {
        irq_ns: 0,
        timer_ns: 0,
        kthrotld: true,
        throtl_dispatch_ns_per_bio: PER_BIO_NS,
        ..host(1)
    };
    let (ios, ev) = held_reader(cpus);
    assert!((1900..=2100).contains(&ios), "{ios} I/Os: the cap holds");
    let (starts, ends) = (ev.item(WORK_FN, true), ev.item(WORK_FN, false));
    assert_eq!(starts.len(), ends.len());
    assert!(starts.len() >= 8, "{} executions", starts.len());
    let mut big = 0;
    for (&s, &e) in starts.iter().zip(&ends) {
        // the bios it took are traced as dispatched at its start
        let n = ev.count("throttle:throtl_dispatch", s, s + 1);
        assert!(n > 0, "an execution at {s} took nothing");
        assert_eq!(e - s, n as Ns * PER_BIO_NS, "{n} bios from {s} to {e}");
        // they reach the device at the plug's flushes: the first 32 after
        // 32 bios' cost, not before
        let first_flush = s + n.min(32) as Ns * PER_BIO_NS;
        assert_eq!(ev.count("block:block_rq_issue", s, first_flush), 0);
        assert!(ev.count("block:block_rq_issue", first_flush, first_flush + 1) >= n.min(32));
        big += usize::from(n > 32);
    }
    assert!(big > 0, "no execution needed two flushes");
}

#[test]
fn a_kblockd_run_queued_in_the_same_tick_runs_first() {
    // One CPU, idle: a timer queues the throttle's work item, then another
    // timer of the same tick queues a kblockd run (nice -20). The kernel's
    // timer softirq runs both before the scheduler picks, so kblockd's
    // kworker gets the CPU first; the kthrotld kworker runs after it.
    let mut dev = nullb_dev(10_000, 64);
    dev.scheduler = "mq-deadline".into();
    let mut cfg = config(vec![dev], vec![]);
    cfg.cpu.cpus = HostCpus {
        kblockd_ns: 3_000,
        ..host(1)
    };
    let ev = Events::default();
    let mut sim = Sim::new(cfg, Tracer::new(Some(Box::new(ev.clone())))).unwrap();
    sim.k.kthrotld_queue(0);
    sim.k.kthrotld_queue(0); // pending: the same item
    sim.k.kblockd_queue(0);
    while let Some(next) = sim.k.clk.q.next() {
        let (t, e) = sim.k.clk.q.take(next);
        sim.k.clk.now = t;
        sim.dispatch_event(e);
    }
    let run = (ev.item(RUN_WORK_FN, true), ev.item(RUN_WORK_FN, false));
    let work = (ev.item(WORK_FN, true), ev.item(WORK_FN, false));
    assert_eq!((run.0.len(), work.0.len()), (1, 1), "one execution each");
    // kblockd: its wake-up, its run's cost, then the run (traced there)
    assert_eq!(run.0[0], WAKE_NS + 3_000);
    // kthrotld: switched in when kblockd's kworker sleeps, after its own
    // wake-up; nothing to issue
    assert_eq!(work.0[0], run.1[0] + WAKE_NS);
    assert_eq!(work.1[0], work.0[0]);
}

#[test]
fn the_free_host_issues_in_the_timer_whatever_the_cost() {
    let free = |per_bio_ns: Ns| {
        held_reader(HostCpus {
            kthrotld: true,
            throtl_dispatch_ns_per_bio: per_bio_ns,
            ..HostCpus::default()
        })
    };
    let (ios, ev) = free(0);
    let (ios_costed, _) = free(5_000);
    assert_eq!(ios, ios_costed, "no CPU to charge");
    assert!(ev.item(WORK_FN, true).is_empty(), "no kworker");
    // each held bio leaves in the timer call: at a tick (HZ 1000)
    let dispatched: Vec<Ns> =
        ev.0.borrow()
            .iter()
            .filter(|(_, n, _)| n == "throttle:throtl_dispatch")
            .map(|(t, _, _)| *t)
            .collect();
    assert!(!dispatched.is_empty());
    for t in dispatched {
        assert_eq!(t % 1_000_000, 0, "dispatched at {t} ns, not at a tick");
    }
    // with CPUs and without [host] kthrotld, the same
    let (_, ev) = held_reader(host(1));
    assert!(ev.item(WORK_FN, true).is_empty(), "kthrotld off");
    // with it, the work's start is after its kworker's wake-up
    let (_, ev) = held_reader(HostCpus {
        kthrotld: true,
        ..host(1)
    });
    assert!(!ev.item(WORK_FN, true).is_empty());
    for t in ev.item(WORK_FN, true) {
        assert!(t % 1_000_000 >= WAKE_NS, "the work started at {t} ns");
    }
}
