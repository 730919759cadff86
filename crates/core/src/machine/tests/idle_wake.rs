//! `DeviceConfig::idle_wake_ns`: a submit call that dispatches to a device
//! with nothing in flight pays for waking the driver's worker (loop's
//! `queue_work` → `try_to_wake_up`); one that finds the device busy does not.
//! The request is dispatched (D) inside the call, before the wake-up, so the
//! device works while the call returns: a QD1 I/O takes
//! max(submit + wake, device + reap) (the reap's wake-up is paid only by a
//! task that waits for the completion).

use super::*;

fn run(completion_ns: u64, idle_wake_ns: u64, iodepth: u32) -> blklab_fio::DirStats {
    let mut dev = nullb_dev(completion_ns, 64);
    dev.idle_wake_ns = idle_wake_ns;
    let cfg = config(
        vec![dev],
        vec![(job("a", RwPattern::RandRead, 4096, iodepth, 1), "/")],
    );
    let mut sim = Sim::new(cfg, Tracer::default()).unwrap();
    let r = sim.run();
    r.jobs[0].stats.dirs[0].clone()
}

#[test]
fn qd1_pays_the_wake_in_slat_and_the_device_overlaps_it() {
    // submit 2 µs + wake 5 µs = 7 µs of call; the 10 µs device works through it.
    let st = run(10_000, 5_000, 1);
    assert_eq!(st.slat.stat.min, 7_000);
    assert_eq!(st.slat.stat.max, 7_000);
    // clat = device done (+10) + reap (1) - call returned (+7)
    assert_eq!(st.clat.stat.min, 4_000);
    assert_eq!(st.clat.stat.max, 4_000);
    // 1 s / max(2 + 5, 10 + 1) µs: the slower of call and device sets the pace
    let n = st.total_ios;
    assert!((90_900..=90_910).contains(&n), "{n}");
    // without the wake: the same pace, the time moves from slat to clat
    let base = run(10_000, 0, 1);
    assert_eq!(base.slat.stat.max, 2_000);
    assert_eq!(base.clat.stat.max, 9_000);
    assert_eq!(base.total_ios, n);
}

#[test]
fn qd1_rate_is_bounded_by_the_call_when_the_device_is_faster() {
    // device 3 µs < submit 2 + wake 6: the I/O is done when the call
    // returns, fio reaps it without waiting, and each I/O takes submit + wake.
    let st = run(3_000, 6_000, 1);
    assert_eq!(st.slat.stat.max, 8_000);
    let per_io_ns = 1e9 / st.total_ios as f64;
    assert!((per_io_ns - 8_000.0).abs() < 10.0, "{per_io_ns} ns per I/O");
    // the same device without the wake: device + reap, 4 µs
    let base = run(3_000, 0, 1);
    let per_io_ns = 1e9 / base.total_ios as f64;
    assert!((per_io_ns - 4_000.0).abs() < 10.0, "{per_io_ns} ns per I/O");
}

#[test]
fn a_busy_device_is_not_woken() {
    // QD8 on a 10 µs device: after the first I/O the device always has
    // requests in flight, so only the first submission pays the wake.
    let st = run(10_000, 5_000, 8);
    assert_eq!(st.slat.stat.max, 7_000);
    assert_eq!(st.slat.stat.min, 2_000);
    let extra = st.slat.stat.mean - 2_000.0;
    assert!(
        extra * (st.total_ios as f64) < 10_000.0,
        "mean slat {}",
        st.slat.stat.mean
    );
}
