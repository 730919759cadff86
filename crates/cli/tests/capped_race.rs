//! The capped disk's race on one CPU (docs/fidelity/conformance.md, "6.1
//! against 6.12: the fair class"): a QD1 job beside a QD128 job behind the
//! lower loop's io.max cap, both loop devices' workers spending CPU. Each
//! 100 ms slice the throttle releases the held bios and the two chains race
//! for the rest of the budget. Under CFS (the 6.1 profile, `cfs-vruntime`)
//! the QD1 chain, a sleeper at every wake-up, takes the sleeper credit and
//! nearly the whole race; under EEVDF (6.12) it keeps only its lag and
//! shares it.

mod common;
use common::*;

/// The stacked capped disk as `blklab conformance --show` builds it, with
/// the workers' CPU (6 µs per request each) and fio's submit (9 µs).
const SCENARIO: &str = r#"
[run]
seed = 1
hz = 250
submit_ns = 9000
reap_ns = 1000

[host]
cpus = 1
wakeup_preempt = true

[[device]]
name = "loop99"
devno = "7:99"
scheduler = "none"
queue_depth = 128
nr_requests = 128
rotational = false
capacity = "67108864"
[device.model]
kind = "loop"
backend = "loop99lower"
worker_ns = 6000

[[device]]
name = "loop99lower"
devno = "7:611"
rotational = false
capacity = "67108864"
[device.model]
kind = "loop"
backing = "tmpfs"
worker_ns = 6000

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

/// (A, B) IOPS of the summary table.
fn split(profile: &str) -> (f64, f64) {
    let o = run_text(
        &format!("capped-race-{profile}"),
        SCENARIO,
        &["--kernel-profile", profile],
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
    let (a61, b61) = split("6.1");
    let (a612, b612) = split("6.12");
    // both stay at the 2000 IOPS cap
    for (a, b) in [(a61, b61), (a612, b612)] {
        assert!((1950.0..=2060.0).contains(&(a + b)), "A {a} B {b}");
    }
    // 6.1: B gets its 128 released bios a slice, A nearly all of the 72
    // left (real 700-724)
    assert!(a61 >= 600.0, "6.1 A {a61}");
    // 6.12: A far below (real 212-225)
    assert!(a612 <= 350.0, "6.12 A {a612}");
}
