//! The capped disk's race on one CPU (docs/fidelity/capped-race.md): a QD1
//! job beside a QD128 job behind the lower loop's io.max cap, both loop
//! devices' workers spending CPU on the kworkers of the one unbound pool
//! they share. Each 100 ms slice the throttle releases the held bios and
//! the two chains race for the rest of the budget. Under CFS (the 6.1
//! profile, `cfs-vruntime`) the QD1 chain, a sleeper at every wake-up,
//! takes the sleeper credit and nearly the whole race, with or without
//! wake-up preemption; under EEVDF (6.12) it keeps only its lag and
//! shares it.

mod common;
use common::*;

/// The stacked capped disk as `blklab conformance --show --sim-cpus 1
/// --sim-loop worker:4000 --sim-wakeup-preempt` builds it (the workers' CPU,
/// 4 µs per request at each level), with the guests' measured fio submit
/// (17.3 µs).
fn scenario() -> String {
    format!("{RUN}{GUEST_MACHINE_LOOP99}{REST}")
}

const RUN: &str = r#"
[run]
seed = 1
hz = 250
submit_ns = 17300
reap_ns = 1000
"#;

const REST: &str = r#"backend = "loop99lower"
worker_ns = 4000

[[device]]
name = "loop99lower"
devno = "7:611"
rotational = false
capacity = "67108864"
[device.model]
kind = "loop"
backing = "tmpfs"
worker_ns = 4000

[cgroup."/capped"]
"io.max" = "7:611 riops=2000"

[cgroup."/capped/A"]

[cgroup."/capped/B"]

[[job]]
label = "A"
cgroup = "/capped/A"
cmdline = "--name=A --direct=1 --ioengine=libaio --rw=randread --bs=4k --iodepth=1 --runtime=4 --time_based"
device = "loop99"

[[job]]
label = "B"
cgroup = "/capped/B"
cmdline = "--name=B --direct=1 --ioengine=libaio --rw=randread --bs=4k --iodepth=128 --runtime=4 --time_based"
device = "loop99"
"#;

/// (A, B) IOPS of the summary table, under kernel profile `profile` with
/// the fair class's features `features` turned off.
fn split(profile: &str, features: &str) -> (f64, f64) {
    split_at(profile, features, 17_300)
}

/// [`split`] with fio's submit cost `submit_ns`.
fn split_at(profile: &str, features: &str, submit_ns: u64) -> (f64, f64) {
    let o = run_text(
        &format!("capped-race-{profile}-{submit_ns}"),
        &scenario(),
        &[
            "--kernel-profile",
            profile,
            "--set",
            &format!("host.sched_features={features}"),
            "--set",
            &format!("run.submit_ns={submit_ns}"),
        ],
    );
    let out = stdout(&o);
    let iops = |label: &str| -> f64 {
        out.lines()
            .find_map(|l| {
                let mut w = l.split_whitespace();
                (w.next() == Some(label)).then(|| w.next()?.parse().ok())?
            })
            .unwrap_or_else(|| panic!("no row {label} in:\n{out}"))
    };
    (iops("A"), iops("B"))
}

#[test]
fn cfs_gives_the_light_chain_the_race_and_eevdf_shares_it() {
    let (a61, b61) = split("6.1", "");
    let (a61_nowp, b61_nowp) = split("6.1", "NO_WAKEUP_PREEMPTION");
    let (a612, b612) = split("6.12", "");
    // all stay at the 2000 IOPS cap
    for (a, b) in [(a61, b61), (a61_nowp, b61_nowp), (a612, b612)] {
        assert!((1950.0..=2060.0).contains(&(a + b)), "A {a} B {b}");
    }
    // 6.1: B gets its 128 released bios a slice, A nearly all of the 72
    // left (real 700-724)
    assert!((650.0..=760.0).contains(&a61), "6.1 A {a61}");
    // without wake-up preemption too (real 725): the chain's wake-ups find
    // a kworker that has slept, not a worker of its own that B's work
    // never runs on (a task per (device, blkcg) gave A 30)
    assert!(
        (650.0..=760.0).contains(&a61_nowp),
        "6.1 NO_WAKEUP_PREEMPTION A {a61_nowp}"
    );
    // 6.12: A far below (real 212-225)
    assert!((120.0..=300.0).contains(&a612), "6.12 A {a612}");
}

/// Under CFS the light chain's share rises with fio's submit cost, where
/// the guests give it its share at a smaller one: fio's real slat in this
/// case is 7.2 µs on debian-6.1 and 5.5 µs on built-6.1-hz1000 (A 716 and
/// 712), the harness feeds the QD1 probe's 13.5 / 9.7 µs (which hold the
/// loop work, tests/guest_probe.rs). With the upper request completed in
/// the lower worker's context (stack.rs; 568 at 7.2 µs before) the 6.1
/// guest's own slat gives A within 15 %; hz1000's does not yet
/// (docs/fidelity/guest-slat.md).
#[test]
fn under_cfs_the_light_chains_share_needs_more_than_the_guests_submit_cost() {
    let (a_probe, _) = split_at("6.1", "", 13_500);
    let (a_slat, _) = split_at("6.1", "", 7_200);
    // built-6.1-hz1000's real slat (HZ aside: the same 6.1 scheduler)
    let (a_5500, _) = split_at("6.1", "", 5_500);
    // at the probe's cost: the guests' ~715 (real 704-724)
    assert!(
        (650.0..=760.0).contains(&a_probe),
        "6.1 A at 13.5 µs {a_probe}"
    );
    // at 6.1's own slat: within 15 % (661 here)
    assert!(
        (0.85 * 716.0..=1.15 * 716.0).contains(&a_slat),
        "6.1 A at 7.2 µs {a_slat}"
    );
    // at hz1000's: more than 15 % below (about 370 here)
    assert!(a_5500 < 0.85 * 712.0, "6.1 A at 5.5 µs {a_5500}");
}

/// Against a QEMU kernel the harness's default is the guest's machine this
/// file's scenario is (one CPU, both loop levels' workers at 4 µs, wake-up
/// preemption); `--sim-cpus 0` and the host keep the free host.
#[test]
fn the_harness_expresses_a_qemu_guest_as_its_own_machine_by_default() {
    let show = |args: &[&str]| {
        let mut all = vec!["conformance", "--show", "capped-qd1-beside-qd128"];
        all.extend_from_slice(args);
        let o = blklab(&all);
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o)
    };
    let guest = show(&["--kernel", "debian-6.12"]);
    assert!(
        guest.contains("[host]\ncpus = 1\nwakeup_preempt = true\n"),
        "{guest}"
    );
    assert_eq!(guest.matches("worker_ns = 4000").count(), 2, "{guest}");
    // the guest's way back: 3 µs after a wake-up, all of it paid by every
    // call unless asked (the guests' measured 2 µs only after a wake-up)
    assert!(guest.contains("submit_return_ns = 3000\n"), "{guest}");
    assert!(!guest.contains("submit_wake_ns"), "{guest}");
    let wake = show(&["--kernel", "debian-6.12", "--sim-submit-wake"]);
    assert!(
        wake.contains(&format!(
            "submit_wake_ns = {}\n",
            blklab_conformance::guest_costs::GUEST_SUBMIT_WAKE_NS
        )),
        "{wake}"
    );
    for free in [
        show(&["--kernel", "debian-6.12", "--sim-cpus", "0"]),
        show(&["--kernel", "host"]),
    ] {
        assert!(!free.contains("[host]"), "{free}");
        assert!(!free.contains("submit_wake_ns"), "{free}");
        assert!(!free.contains("worker_ns"), "{free}");
    }
    // an option given keeps its value: the guest's CPU with null_blk
    let nullb = show(&[
        "--kernel",
        "debian-6.1",
        "--sim-loop",
        "nullb",
        "--sim-wakeup-preempt=false",
    ]);
    assert!(nullb.contains("[host]\ncpus = 1\n"), "{nullb}");
    assert!(
        !nullb.contains("wakeup_preempt") && !nullb.contains("worker_ns"),
        "{nullb}"
    );
    // a CPU option without CPUs is refused, naming the option
    let o = blklab(&[
        "conformance",
        "--show",
        "--kernel",
        "debian-6.12",
        "--sim-cpus",
        "0",
        "--sim-wakeup-preempt",
        "capped-qd1-beside-qd128",
    ]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("--sim-wakeup-preempt needs --sim-cpus > 0"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn measured_costs_need_the_guests_probes_and_are_refused_elsewhere() {
    let refused = |args: &[&str], why: &str| {
        let mut all = vec!["conformance", "capped-qd1-beside-qd128"];
        all.extend_from_slice(args);
        let o = blklab(&all);
        assert!(!o.status.success(), "{args:?}");
        assert!(stderr(&o).contains(why), "{args:?}: {}", stderr(&o));
    };
    // no guest, so no quiet-submit probe: --show, --sim-only, this host
    let guest_only = "--sim-costs measured needs";
    refused(
        &[
            "--show",
            "--kernel",
            "debian-6.12",
            "--sim-costs",
            "measured",
        ],
        guest_only,
    );
    refused(
        &[
            "--sim-only",
            "--kernel",
            "debian-6.1",
            "--sim-costs",
            "probe,measured",
        ],
        guest_only,
    );
    refused(
        &["--show", "--kernel", "host", "--sim-costs", "measured"],
        guest_only,
    );
    refused(
        &[
            "--show",
            "--kernel",
            "debian-6.12",
            "--sim-costs",
            "measured,measured",
        ],
        "at most two",
    );
    refused(
        &["--show", "--kernel", "debian-6.12", "--sim-costs", "probes"],
        "expected",
    );
    // the default and `probe` are today's expression
    let o = blklab(&[
        "conformance",
        "--show",
        "--kernel",
        "debian-6.12",
        "--sim-costs",
        "probe",
        "capped-qd1-beside-qd128",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("reap_ns = 1000\n"), "{}", stdout(&o));
}
