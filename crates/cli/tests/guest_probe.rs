//! The harness's raw-speed probe (fio QD1 4k randread on one tmpfs loop
//! device, loop_device.rs) in the simulator's expression of a QEMU guest:
//! one CPU, the loop device's worker at 4 µs, wake-up preemption
//! (sim_request.rs). What the simulated fio's slat holds decides what the
//! guest's probe slat may stand for when it is fed back as `submit_ns`
//! (docs/fidelity/guest-slat.md).
//!
//! Under CFS (6.1's profile) the woken loop worker takes the CPU at the end
//! of fio's submit call and serves the request before fio is back, so the
//! simulated slat is fio's submit cost plus the worker's time and two
//! wake-ups, the clat nothing: the guests' probe slat (13.5 µs on 6.1)
//! already holds that work, and the harness's `submit_ns` = that slat
//! charges it a second time on this probe. Under EEVDF (6.12's profile) the
//! woken worker waits until fio blocks: the slat is the submit cost alone.

mod common;
use blklab_conformance::metrics::Metric;
use blklab_core::sim::host_cpus::DEFAULT_WAKE_NS;
use common::*;

/// The loop worker's cost per request in the guest expression.
const WORKER_NS: u64 = blklab_conformance::guest_costs::GUEST_LOOP_WORKER_NS;

/// The probe on the guest expression's machine with fio's submit cost
/// `submit_ns`.
fn probe_toml(submit_ns: u64) -> String {
    format!("\n[run]\nseed = 1\nhz = 250\nsubmit_ns = {submit_ns}\nreap_ns = 1000\n{GUEST_MACHINE_LOOP99}worker_ns = {WORKER_NS}\n{PROBE_REST}")
}

const PROBE_REST: &str = r#"backing = "tmpfs"

[[job]]
label = "raw"
cgroup = "/"
cmdline = "--name=raw --direct=1 --ioengine=libaio --rw=randread --bs=4k --iodepth=1 --runtime=1 --time_based"
device = "loop99"
"#;

/// (slat mean, clat mean) in ns of the simulated probe under kernel
/// profile `profile` with fio's submit cost `submit_ns`.
fn probe(profile: &str, submit_ns: u64) -> (f64, f64) {
    let dir = scratch(&format!("guest-probe-{profile}-{submit_ns}"));
    let p = dir.join("probe.toml");
    std::fs::write(&p, probe_toml(submit_ns)).unwrap();
    let o = blklab(&[
        "run",
        "--output-format",
        "json",
        "--kernel-profile",
        profile,
        p.to_str().unwrap(),
    ]);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(o.status.success(), "{}", stderr(&o));
    let jobs = blklab_conformance::metrics::from_fio_json(&stdout(&o)).unwrap();
    let m = &jobs.first().expect("the probe's job").1;
    // the metrics are in µs
    (
        m.get(Metric::SlatMean) * 1000.0,
        m.get(Metric::ClatMean) * 1000.0,
    )
}

#[test]
fn under_cfs_the_simulated_probe_slat_holds_the_loop_work_on_top_of_the_submit_cost() {
    for submit_ns in [7_000u64, 13_500] {
        let (slat, clat) = probe("6.1", submit_ns);
        let want = (submit_ns + WORKER_NS + 2 * DEFAULT_WAKE_NS) as f64;
        // the first request finds the worker asleep without a pending
        // reschedule: a few ns of difference over the second's requests
        assert!(
            (slat - want).abs() <= 100.0,
            "6.1 submit {submit_ns}: slat {slat} ns, want {want}"
        );
        assert!(clat < 100.0, "6.1 submit {submit_ns}: clat {clat} ns");
    }
}

#[test]
fn under_eevdf_the_simulated_probe_slat_is_the_submit_cost_alone() {
    let (slat, clat) = probe("6.12", 7_000);
    assert!((slat - 7_000.0).abs() <= 100.0, "6.12: slat {slat} ns");
    // the worker and both wake-ups come after fio blocks
    assert!(
        clat >= (WORKER_NS + 2 * DEFAULT_WAKE_NS) as f64,
        "6.12: clat {clat} ns"
    );
}
