//! blk-wbt's set-up on the real kernels of the QEMU harness against the
//! model (`block::wbt::Wbt::new` and its enable/disable calls): what
//! /sys/block/LOOP/queue/wbt_lat_usec reads on a fresh loop device, under
//! mq-deadline and bfq, with blk-iocost enabled and disabled again
//! (`ioc_qos_write` calls `wbt_disable_default` / `wbt_enable_default`),
//! after a manual write of -1 (which iocost then leaves alone) and of 0.
//! These are controller facts, not timings: no tolerance. Found on the
//! harness (2026-11-24): 6.12.y matches the current code; 6.1.y shows the
//! target while wbt is disabled (switch `wbt.lat_show=target` in the 6.1
//! profile) and its loop device got the rotational default (75 ms) at
//! registration.
//!
//! Prints `SKIP: <reason>` and passes when qemu, busybox, fio or losetup
//! are missing (`.ci/run` installs them).

use std::collections::BTreeMap;
use std::time::Duration;

use blklab_core::block::wbt::{default_latency_ns, Wbt, WbtSetup};
use blklab_core::sim::switches::{profile, Switches};
use blklab_vm::{run_cases, BootOptions, CaseSpec, RunOptions};

const SCRIPT: &str = r#"set -e
. /blklab/lib.sh
truncate -s 64M "$BLKLAB_TMP/wbt.img"
dev=$(blk_loop "$BLKLAB_TMP/wbt.img")
q="/sys/block/${dev#/dev/}/queue"
no=$(blk_devno "$dev")
echo "rotational=$(cat "$q/rotational")"
echo "scheduler=$(cat "$q/scheduler")"
echo "fresh=$(cat "$q/wbt_lat_usec")"
echo mq-deadline > "$q/scheduler"
echo "mq-deadline=$(cat "$q/wbt_lat_usec")"
if echo bfq > "$q/scheduler" 2>/dev/null; then
    echo "bfq=$(cat "$q/wbt_lat_usec")"
    echo none > "$q/scheduler"
else
    echo "bfq=unavailable"
    echo none > "$q/scheduler"
fi
echo "$no enable=1 ctrl=user min=100 max=100" > /sys/fs/cgroup/io.cost.qos
echo "iocost=$(cat "$q/wbt_lat_usec")"
echo "$no enable=0" > /sys/fs/cgroup/io.cost.qos
echo "iocost-off=$(cat "$q/wbt_lat_usec")"
echo -1 > "$q/wbt_lat_usec"
echo "manual-default=$(cat "$q/wbt_lat_usec")"
echo "$no enable=1 ctrl=user min=100 max=100" > /sys/fs/cgroup/io.cost.qos
echo "manual-then-iocost=$(cat "$q/wbt_lat_usec")"
echo "$no enable=0" > /sys/fs/cgroup/io.cost.qos
echo 0 > "$q/wbt_lat_usec"
echo "manual-0=$(cat "$q/wbt_lat_usec")"
if echo -2 > "$q/wbt_lat_usec" 2>/dev/null; then echo "minus-2=accepted"; else echo "minus-2=refused"; fi
"#;

/// The model's reading of each step, for a device of `rotational` on
/// `kernel` (its profile's switches). `registered_rotational`: the loop
/// queue was still rotational when the disk was registered, so `wbt_init`
/// took the rotational default target (75 ms) although the queue is
/// non-rotational by the time the case reads it — Debian's 6.1 loop driver
/// clears QUEUE_FLAG_NONROT late; 6.12's sets its features at allocation.
fn model(
    kernel: &str,
    rotational: bool,
    registered_rotational: bool,
) -> BTreeMap<&'static str, String> {
    let mut sw = Switches::default();
    for (k, v) in profile(kernel)
        .expect("a profile per harness kernel")
        .values
    {
        sw.set(k, v).unwrap();
    }
    let new = |setup, bfq, iocost| {
        let mut w = Wbt::new(rotational, 64, false, WbtSetup::Default, bfq, iocost);
        if registered_rotational {
            w.min_lat_ns = default_latency_ns(true);
        }
        if let WbtSetup::LatUsec(v) = setup {
            w.set_lat_usec(v);
        }
        w
    };
    let mut m = BTreeMap::new();
    let shown = |w: &Wbt| w.lat_usec_shown(&sw).to_string();
    m.insert("fresh", shown(&new(WbtSetup::Default, false, false)));
    m.insert("mq-deadline", shown(&new(WbtSetup::Default, false, false)));
    m.insert("bfq", shown(&new(WbtSetup::Default, true, false)));
    let mut w = new(WbtSetup::Default, false, true);
    m.insert("iocost", shown(&w));
    w.enable_default();
    m.insert("iocost-off", shown(&w));
    w.set_lat_usec(-1);
    m.insert("manual-default", shown(&w));
    w.disable_default();
    m.insert("manual-then-iocost", shown(&w));
    w.set_lat_usec(0);
    m.insert("manual-0", shown(&w));
    m.insert(
        "minus-2",
        if blklab_core::block::wbt::parse_lat_usec("-2").is_err() {
            "refused".into()
        } else {
            "accepted".into()
        },
    );
    m
}

fn check(kernel: &str) {
    let missing = blklab_vm::preflight();
    if let Some(e) = missing.first() {
        println!("SKIP: {e}");
        return;
    }
    let cases = vec![CaseSpec {
        name: "wbt-defaults".into(),
        script: SCRIPT.into(),
        time_limit_secs: 60,
    }];
    let opts = RunOptions {
        boot: BootOptions {
            wall_limit: Duration::from_secs(300),
            ..BootOptions::default()
        },
        ..RunOptions::default()
    };
    let run = run_cases(kernel, &cases, &opts).unwrap_or_else(|e| panic!("{kernel}: {e}"));
    if let Some(why) = run.failure() {
        panic!("{kernel}: {why}");
    }
    let c = run.case("wbt-defaults").expect("case ran");
    let out = String::from_utf8_lossy(&c.stdout).to_string();
    println!("{kernel}:\n{out}{}", String::from_utf8_lossy(&c.stderr));
    let real: BTreeMap<&str, &str> = out.lines().filter_map(|l| l.split_once('=')).collect();
    let rotational = real.get("rotational").copied() == Some("1");
    let registered_rotational = kernel == "debian-6.1";
    let mut diffs = Vec::new();
    for (k, want) in model(kernel, rotational, registered_rotational) {
        match real.get(k) {
            Some(&"unavailable") => println!("{kernel}: {k}: not available in the guest"),
            Some(&got) if got == want => {}
            got => diffs.push(format!("{k}: kernel {got:?}, model {want}")),
        }
    }
    assert!(diffs.is_empty(), "{kernel}: {}", diffs.join("; "));
}

#[test]
fn wbt_defaults_debian_6_12() {
    check("debian-6.12");
}

#[test]
fn wbt_defaults_debian_6_1() {
    check("debian-6.1");
}
