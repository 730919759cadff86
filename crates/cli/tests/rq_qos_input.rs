//! io.latency and wbt_lat_usec as a user writes them (issue 21): the kernel's
//! errors, located, from `check` and `run` alike; valid settings run and
//! show in the output.

mod common;
use common::*;

const DEV: &str = "[[device]]\nname = \"sda\"\ndevno = \"8:0\"\n[device.model]\nkind = \"nullb\"\n";
const JOB_A: &str =
    "[[job]]\ncgroup = \"/a\"\ncmdline = \"--name=a --rw=randread --runtime=200ms --time_based\"\n";

/// `run --output-format summary --io-stat` of a scenario text, which must
/// succeed: its stdout and stderr.
fn runs(name: &str, toml: &str) -> String {
    let o = run_text(name, toml, &["--io-stat"]);
    stdout(&o) + &stderr(&o)
}

#[test]
fn io_latency_errors_are_the_kernels() {
    let cg = |v: &str| format!("{DEV}[cgroup.\"/a\"]\n\"io.latency\" = \"{v}\"\n{JOB_A}");
    refused("lat-key", &cg("8:0 lat=100"), &["unknown key", "EINVAL"]);
    refused("lat-noeq", &cg("8:0 target"), &["EINVAL"]);
    refused("lat-body", &cg("8:0"), &["EINVAL"]);
    refused("lat-neg", &cg("8:0 target=-1"), &["EINVAL"]);
    refused(
        "lat-range",
        &cg("8:0 target=18446744073709552"),
        &["ERANGE"],
    );
    refused("lat-nodev", &cg("9:9 target=100"), &["ENODEV"]);
    refused(
        "lat-root",
        &format!("{DEV}[cgroup.\"/\"]\n\"io.latency\" = \"8:0 target=100\"\n{JOB_A}"),
        &["ENOENT"],
    );
    // a valid target runs, and the group's io.stat shows iolatency's fields
    let out = runs("lat-ok", &cg("8:0 target=100"));
    assert!(out.contains("/a") && out.contains("depth="), "{out}");
    assert!(!out.contains("not simulated"), "{out}");
}

#[test]
fn wbt_lat_usec_errors_are_the_kernels() {
    let dev = |k: &str| DEV.replace("devno = \"8:0\"\n", &format!("devno = \"8:0\"\n{k}\n"));
    refused(
        "wbt-m2",
        &format!("{}{JOB_A}", dev("wbt_lat_usec = -2")),
        &["EINVAL"],
    );
    refused(
        "wbt-word",
        &format!("{}{JOB_A}", dev("wbt_lat_usec = \"fast\"")),
        &["EINVAL"],
    );
    refused(
        "wbt-wc",
        &format!(
            "{}{JOB_A}",
            dev("wbt_lat_usec = 0\nwrite_cache = \"sometimes\"")
        ),
        &["write_cache", "EINVAL"],
    );
    for (k, want) in [
        ("wbt_lat_usec = \"default\"", "state=OnDefault"),
        ("wbt_lat_usec = 5000", "lat=5000us state=OnManual"),
        ("wbt_lat_usec = 0", "state=OffManual"),
    ] {
        let out = runs("wbt-ok", &format!("{}{JOB_A}", dev(k)));
        assert!(out.contains(want), "{k}: {out}");
    }
    // wbt is switched off by an enabled blk-iocost (wbt_disable_default)
    let iocost = "[cgroup.\"/\"]\n\"io.cost.qos\" = \"8:0 enable=1\"\n";
    let out = runs(
        "wbt-iocost",
        &format!("{}{iocost}{JOB_A}", dev("wbt_lat_usec = \"default\"")),
    );
    assert!(out.contains("state=OffDefault"), "{out}");
    // and by bfq
    let bfq = dev("wbt_lat_usec = \"default\"\nscheduler = \"bfq\"");
    let out = runs("wbt-bfq", &format!("{bfq}{JOB_A}"));
    assert!(out.contains("state=OffDefault"), "{out}");
}
