//! Tests of `sim::cpus` (kept apart: the module is long).

use super::*;

fn host(nr: u32) -> Cpus {
    let cfg = HostCpus {
        nr,
        irq_ns: 1_000,
        wake_ns: 500,
        timer_ns: 300,
        ..HostCpus::default()
    };
    Cpus::new(cfg, 3, 1)
}

#[test]
fn wake_takes_idle_cpu_then_queues() {
    let mut h = host(1);
    assert_eq!(h.wake(0, 100, 2_000), Woken::Runs(100 + 500 + 2_000));
    assert_eq!(h.wake(1, 200, 1_000), Woken::Queued);
    assert_eq!(h.wake(2, 300, 1_000), Woken::Queued);
    // FIFO: task 1 gets the CPU task 0 releases, and pays its wake-up
    assert_eq!(h.block(0, 3_000), Some((1, 3_000 + 500 + 1_000)));
    assert_eq!(h.block(1, 4_500), Some((2, 4_500 + 500 + 1_000)));
    assert_eq!(h.block(2, 6_000), None);
    assert_eq!(h.usage(0, 6_000), (2_400, 1));
}

#[test]
fn wake_affine_prefers_last_cpu() {
    let mut h = host(2);
    h.wake(0, 0, 0);
    h.wake(1, 0, 0);
    assert_eq!(h.irq_cpu(Some(1)), 1);
    h.block(0, 1_000);
    h.block(1, 1_000);
    h.wake(1, 2_000, 0);
    assert_eq!(h.irq_cpu(Some(1)), 1, "task 1 back on its own CPU");
    assert_eq!(h.irq_cpu(None), 0);
}

#[test]
fn interrupt_during_burst_delays_its_end_by_irq_ns() {
    let mut h = host(1);
    let end = match h.wake(0, 0, 10_000) {
        Woken::Runs(t) => t,
        Woken::Queued => unreachable!(),
    };
    assert_eq!(end, 10_500);
    // two completions and a timer while it runs: they queue on the CPU
    assert_eq!(h.complete_irq(0, 2_000), 3_000);
    assert_eq!(h.complete_irq(0, 2_500), 4_000);
    assert_eq!(h.timer_irq(2_600), 4_300);
    assert_eq!(h.burst_end(0, end), Some(end + 2_300));
    assert_eq!(h.burst_end(0, end + 2_300), None);
    // its own time excludes the wake-up and what was stolen
    assert_eq!(h.usage(0, end + 2_300), (10_000, 0));
}

#[test]
fn a_task_past_its_slice_yields_to_a_waiting_one() {
    let mut h = host(1);
    assert_eq!(h.wake(0, 0, 0), Woken::Runs(500));
    assert_eq!(h.preempt(0, 500), None, "nobody waits");
    assert_eq!(h.wake(1, 600, 0), Woken::Queued);
    assert_eq!(h.preempt(0, SLICE_NS - 1), None, "within its slice");
    assert_eq!(h.preempt(0, SLICE_NS), Some((1, SLICE_NS + 500)));
    assert!(h.waiting(), "task 0 waits now");
    assert_eq!(h.block(1, SLICE_NS + 700), Some((0, SLICE_NS + 1_200)));
    assert_eq!(h.usage(0, SLICE_NS).1, 1, "an involuntary switch counts");
}

#[test]
fn a_kernel_thread_is_numbered_after_the_jobs_and_queues_like_them() {
    let mut h = host(1);
    let kt = h.add_task(1024);
    assert_eq!(kt, 3, "after the 3 tasks the host was made with");
    assert_eq!(h.wake(0, 0, 1_000), Woken::Runs(1_500));
    assert_eq!(h.wake(kt, 100, 4_000), Woken::Queued);
    // it gets the CPU the job releases, pays its wake-up, does its work
    assert_eq!(h.block(0, 1_500), Some((kt, 1_500 + 500 + 4_000)));
    // and goes on with a second item without blocking
    assert_eq!(h.continue_burst(kt, 6_000, 2_000), 8_000);
    assert_eq!(h.block(kt, 8_000), None);
    assert_eq!(h.usage(kt, 8_000), (6_000, 1));
}

#[test]
fn a_woken_kernel_thread_preempts_an_fio_task_at_its_burst_end() {
    for preempt in [false, true] {
        let mut h = Cpus::new(
            HostCpus {
                wakeup_preempt: preempt,
                ..host(1).cfg
            },
            3,
            1,
        );
        let kt = h.add_task(1024);
        // task 0 runs, task 1 waits, then the kernel thread is woken
        assert_eq!(h.wake(0, 0, 1_000), Woken::Runs(1_500));
        assert_eq!(h.wake(1, 100, 1_000), Woken::Queued);
        assert_eq!(h.wake(kt, 200, 4_000), Woken::Queued);
        if !preempt {
            // today's behaviour: FIFO, no preemption before the slice
            assert_eq!(h.preempt(0, 1_500), None);
            assert_eq!(h.block(0, 1_500), Some((1, 1_500 + 500 + 1_000)));
            continue;
        }
        // the thread jumps the queue and takes the CPU at the burst's
        // end, though task 0 is far from its slice
        assert_eq!(h.preempt(0, 1_500), Some((kt, 1_500 + 500 + 4_000)));
        assert_eq!(h.usage(0, 1_500).1, 1, "an involuntary switch");
        // task 0 queues behind task 1
        assert_eq!(h.block(kt, 6_000), Some((1, 6_000 + 500 + 1_000)));
        assert_eq!(h.block(1, 7_500), Some((0, 7_500 + 500)));
        // a woken fio task never preempts
        assert_eq!(h.wake(1, 7_600, 0), Woken::Queued);
        assert_eq!(h.preempt(0, 8_000), None);
    }
}

#[test]
fn under_eevdf_the_task_owed_service_preempts_whoever_runs() {
    let mut h = Cpus::new(
        HostCpus {
            wakeup_preempt: true,
            fair: FairModel::Eevdf,
            tick_ns: 4_000_000,
            ..host(1).cfg
        },
        3,
        1,
    );
    let kt = h.add_task(1024);
    // the kernel thread runs 100 µs while task 0 waits, then sleeps
    // ahead of its share (delayed); task 0 runs 10 µs and sleeps owed
    // 45 µs (V = (100 + 10) / 2 µs)
    assert_eq!(h.wake(kt, 0, 0), Woken::Runs(500));
    assert_eq!(h.wake(0, 0, 0), Woken::Queued);
    assert_eq!(h.block(kt, 100_000), Some((0, 100_500)));
    assert_eq!(h.block(0, 110_000), None, "the delayed thread leaves");
    // the thread wakes onto the idle CPU; 100 µs into its request,
    // task 0 wakes with its lag: it is picked, so the thread is
    // preempted at its burst's end (the fair class's rule, not "a
    // kernel thread always wins")
    assert_eq!(h.wake(kt, 200_000, 0), Woken::Runs(200_500));
    assert_eq!(h.wake(0, 300_000, 1_000), Woken::Queued);
    assert_eq!(h.preempt(kt, 300_000), Some((0, 300_000 + 500 + 1_000)));
    // task 0, eligible and within its request, keeps the CPU
    // (RUN_TO_PARITY) though the thread waits
    assert_eq!(h.preempt(0, 301_500), None);
}

#[test]
fn task_given_a_cpu_mid_interrupt_starts_after_it() {
    let mut h = host(1);
    assert_eq!(h.complete_irq(0, 0), 1_000);
    assert_eq!(h.wake(0, 200, 1_000), Woken::Runs(1_000 + 500 + 1_000));
    assert_eq!(
        h.burst_end(0, 2_500),
        None,
        "the interrupt was before it ran"
    );
}

#[test]
fn the_waker_pays_its_side_of_a_wake_up_of_a_sleeping_task() {
    // one CPU, waker_ns 2 µs; task 0 runs a 10 µs burst from 0
    let running = || {
        let mut h = Cpus::new(
            HostCpus {
                waker_ns: 2_000,
                ..host(1).cfg
            },
            3,
            1,
        );
        assert_eq!(h.wake(0, 0, 10_000), Woken::Runs(10_500));
        h
    };
    let mut h = running();
    // task 0's code wakes task 1, asleep: task 0's burst ends 2 µs later
    h.set_context(Some(0));
    assert_eq!(h.wake(1, 1_000, 1_000), Woken::Queued);
    assert_eq!(h.burst_end(0, 10_500), Some(12_500));
    // a second wake-up of the queued task is no wake-up (`ttwu_runnable`)
    assert_eq!(h.wake(1, 2_000, 0), Woken::Queued);
    // nor is one from an interrupt (its irq_ns holds it)
    h.set_context(None);
    assert_eq!(h.wake(2, 3_000, 0), Woken::Queued);
    assert_eq!(h.burst_end(0, 12_500), None);
    // the waker's work is its own CPU time
    assert_eq!(h.usage(0, 12_500), (12_000, 0));
    // a waker that blocks at once: the next task starts after its work
    let mut h = running();
    h.set_context(Some(0));
    assert_eq!(h.wake(1, 10_500, 1_000), Woken::Queued);
    assert_eq!(h.block(0, 10_500), Some((1, 10_500 + 2_000 + 500 + 1_000)));
    assert_eq!(h.usage(0, 20_000), (12_000, 1));
    assert_eq!(h.usage(1, 14_000), (1_000, 0), "not task 1's time");
}

#[test]
fn a_tag_waiter_s_waker_pays_tag_waker_ns_and_a_kworker_s_waker_ns() {
    // one CPU, waker_ns 2 µs, tag_waker_ns 4 µs; task 0 (a loop worker
    // ending a request) runs a 10 µs burst from 0 and wakes task 1 (fio
    // asleep for a tag) and task 2 (a kworker)
    let cfg = HostCpus {
        waker_ns: 2_000,
        tag_waker_ns: Some(4_000),
        ..host(1).cfg
    };
    let mut h = Cpus::new(cfg, 3, 1);
    assert_eq!(h.wake(0, 0, 10_000), Woken::Runs(10_500));
    h.set_context(Some(0));
    assert_eq!(h.wake_from(1, 1_000, 0, SleptOn::Tag), Woken::Queued);
    assert_eq!(h.burst_end(0, 10_500), Some(14_500), "the walk's 4 µs");
    assert_eq!(h.wake_from(2, 14_500, 0, SleptOn::Other), Woken::Queued);
    assert_eq!(
        h.burst_end(0, 14_500),
        Some(16_500),
        "wake_up_process's 2 µs"
    );
    assert_eq!(h.usage(0, 16_500), (16_000, 0));
    // unset, a tag waiter's waker pays waker_ns as any other
    let mut h = Cpus::new(
        HostCpus {
            tag_waker_ns: None,
            ..cfg
        },
        3,
        1,
    );
    assert_eq!(h.wake(0, 0, 10_000), Woken::Runs(10_500));
    h.set_context(Some(0));
    assert_eq!(h.wake_from(1, 1_000, 0, SleptOn::Tag), Woken::Queued);
    assert_eq!(h.burst_end(0, 10_500), Some(12_500));
}

#[test]
fn the_waker_s_work_goes_to_its_own_virtual_runtime() {
    // CFS with virtual runtimes, one CPU, waker_ns 2 µs: task 0 runs 10 µs,
    // wakes task 1 and blocks at once (a kblockd run waking the loop
    // kworker); task 1 gets the CPU at that instant but starts 2 µs later
    for fair in [FairModel::CfsVruntime, FairModel::Eevdf] {
        let mut h = Cpus::new(
            HostCpus {
                waker_ns: 2_000,
                fair,
                tick_ns: 4_000_000,
                ..host(1).cfg
            },
            2,
            1,
        );
        let end = match h.wake(0, 0, 10_000) {
            Woken::Runs(t) => t,
            Woken::Queued => unreachable!(),
        };
        h.set_context(Some(0));
        assert_eq!(h.wake(1, end, 1_000), Woken::Queued);
        let v0 = h.fair.as_deref().unwrap().vruntime(0);
        assert_eq!(h.block(0, end), Some((1, end + 2_000 + 500 + 1_000)));
        let f = h.fair.as_deref().unwrap();
        // `update_curr` at its `schedule()` counts the 2 µs as task 0's
        assert_eq!(f.vruntime(0) - v0, 2_000, "{fair:?}");
        // and task 1's time starts after them
        let v1 = f.vruntime(1);
        h.block(1, end + 2_000 + 500 + 1_000);
        let f = h.fair.as_deref().unwrap();
        assert_eq!(f.vruntime(1) - v1, 1_500, "{fair:?}: its wake-up and burst");
    }
}
