//! `blklab conformance --kernel debian-6.12 --quick`: a stock kernel booted
//! under QEMU with deterministic virtual time checks the simulator where
//! this host cannot (cgroup v2: blk-iocost, v2 io.max). One boot runs a few
//! cases: io.max pacing (riops, rbps), blk-iocost at a fixed vrate (a 1:3
//! weight split, one group alone) and iocost's QoS loop on the capped disk
//! (its `iocost_ioc_vrate_adj` events traced in the guest), each judged by
//! the case's own tolerances (docs/fidelity/conformance.md).
//!
//! Needs root, qemu-system-x86, busybox-static, fio and losetup (`.ci/run`
//! installs them) and the kernel package (fetched once into the cache);
//! prints `SKIP:` with the reason when the host tools are missing.

mod common;
use common::*;

#[test]
fn debian_6_12_quick_subset_passes() {
    if let Some(why) = vm_unavailable() {
        println!("SKIP: {why}");
        return;
    }
    let (o, out) = conformance_quick(
        "debian-6.12",
        &[
            "throttle-riops",
            "throttle-rbps",
            "iocost-vrate-100-300-4k-rand",
            "iocost-vrate-alone-64k-seq",
            "capped-qos-iocost-on",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "exit status");
    assert!(out.contains("summary: 5 PASS"), "{out}");
    // iocost's QoS loop came back from the guest's tracepoint and was read
    let qos = out
        .lines()
        .find(|l| l.contains("QoS loop (iocost_ioc_vrate_adj"))
        .unwrap_or_else(|| panic!("no QoS loop line: {out}"));
    let real: usize = qos
        .split("real ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no real event count: {qos}"));
    // a 4 s run with 10 ms periods: the kernel adjusts vrate in most of them
    assert!(real >= 100, "{qos}");
    // the simulator ran with the booted kernel's profile and the guest's device
    assert!(out.contains("6.12.117") && out.contains("dio=1"), "{out}");
}

#[test]
fn unknown_kernel_lists_the_known_ones() {
    let o = blklab(&["conformance", "--kernel", "debian-5.4", "--quick"]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(
        e.contains("unknown kernel 'debian-5.4'") && e.contains("debian-6.1") && e.contains("all"),
        "{e}"
    );
}

#[test]
fn a_local_kernel_is_checked_before_anything_runs() {
    let d = scratch("local-kernel");
    let arg = format!("local:{}", d.display());
    let o = blklab(&["conformance", "--kernel", &arg, "--quick", "throttle-riops"]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(
        e.contains(&format!("local kernel {}: no kernel image", d.display()))
            && e.contains("arch/x86/boot/bzImage"),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&d);
    // the fragment it points to is printed whole
    let o = blklab(&["conformance", "--kconfig-fragment"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let f = stdout(&o);
    assert!(
        f.contains("CONFIG_BLK_CGROUP_IOCOST=y") && f.contains("CONFIG_BLK_DEV_LOOP=y"),
        "{f}"
    );
}

#[test]
fn list_kernels_names_the_pinned_packages() {
    let o = blklab(&["conformance", "--list-kernels"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    for want in [
        "host",
        "debian-6.1",
        "linux-image-6.1.0-",
        "debian-6.12",
        "6.12.117",
        "built-6.1-hz1000",
        "built from linux-source-6.1 6.1.176-1",
        "built-6.1-hz250",
        "all",
    ] {
        assert!(out.contains(want), "{want} missing in:\n{out}");
    }
}

#[test]
fn show_prints_the_kernel_profile_switches() {
    let o = blklab(&[
        "conformance",
        "--kernel",
        "debian-6.1",
        "--show",
        "throttle-riops",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("[run.switches]") && out.contains("\"iocost.busy_level_fix\" = \"off\""),
        "{out}"
    );
}

#[test]
fn show_runs_a_built_kernel_with_its_series_profile_and_hz() {
    // nothing is built for --show: the profile comes from the series (6.1),
    // the simulator's HZ from the pin
    let o = blklab(&[
        "conformance",
        "--kernel",
        "built-6.1-hz1000",
        "--show",
        "throttle-riops",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("hz = 1000\n") && out.contains("\"iocost.busy_level_fix\" = \"off\""),
        "{out}"
    );
}
