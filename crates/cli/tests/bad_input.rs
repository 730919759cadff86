//! Bad input: every problem is reported with where it is and what was
//! expected, the exit status says it failed, and nothing is half-written.

mod common;
use common::*;

fn check_text(name: &str, toml: &str) -> (bool, String) {
    let dir = scratch(name);
    let p = dir.join("bad.toml");
    std::fs::write(&p, toml).unwrap();
    let o = blklab(&["check", p.to_str().unwrap()]);
    let _ = std::fs::remove_dir_all(&dir);
    (o.status.success(), format!("{}{}", stdout(&o), stderr(&o)))
}

const DEV: &str = "[[device]]\nname = \"sda\"\ndevno = \"8:0\"\n[device.model]\nkind = \"nullb\"\n";

#[test]
fn malformed_toml_names_line_and_column() {
    let (ok, out) = check_text("toml", "[run]\nseed = \n");
    assert!(!ok);
    assert!(out.contains("bad.toml:2:"), "{out}");
}

#[test]
fn unknown_keys_and_bad_values_are_located() {
    let (ok, out) = check_text("keys", &format!("[run]\nsed = 1\n{DEV}"));
    assert!(!ok);
    assert!(out.contains("bad.toml:2:") && out.contains("sed"), "{out}");
    let (ok, out) = check_text(
        "hz",
        &format!("[run]\nhz = 333\n{DEV}[[job]]\ncmdline = \"--name=a\"\n"),
    );
    assert!(!ok);
    assert!(
        out.contains("bad.toml:2:") && out.contains("CONFIG_HZ"),
        "{out}"
    );
    let (ok, out) = check_text("model", "[[device]]\nname = \"sda\"\ndevno = \"8:0\"\n[device.model]\nkind = \"nullb\"\ncompletion_nsecs = 5\n");
    assert!(!ok);
    assert!(out.contains("completion_nsecs"), "{out}");
}

#[test]
fn bad_fio_options_are_reported() {
    let (ok, out) = check_text(
        "fio",
        &format!("{DEV}[[job]]\ncmdline = \"--name=a --rw=randread --iodepht=4\"\n"),
    );
    assert!(!ok);
    assert!(
        out.contains("bad.toml:7:") && out.contains("iodepht"),
        "{out}"
    );
    let (ok, out) = check_text(
        "fio2",
        &format!("{DEV}[[job]]\ncmdline = \"--name=a --bs=4q\"\n"),
    );
    assert!(!ok);
    assert!(out.contains("bs"), "{out}");
    let (ok, out) = check_text(
        "fio3",
        &format!("{DEV}[[job]]\ncmdline = \"--name=a --ioengine=spdk\"\n"),
    );
    assert!(!ok);
    assert!(out.contains("spdk"), "{out}");
}

#[test]
fn bad_kernel_strings_carry_the_errno() {
    let job = "[[job]]\ncgroup = \"/a\"\ncmdline = \"--name=a\"\n";
    let (ok, out) = check_text(
        "weight",
        &format!("{DEV}[cgroup.\"/a\"]\n\"io.weight\" = \"default 0\"\n{job}"),
    );
    assert!(!ok);
    // ioc_weight_write: a weight outside 1..10000 is -EINVAL
    assert!(out.contains("outside 1..10000 (EINVAL)"), "{out}");
    let (ok, out) = check_text(
        "nodev",
        &format!("{DEV}[cgroup.\"/a\"]\n\"io.max\" = \"9:9 riops=10\"\n{job}"),
    );
    assert!(!ok);
    assert!(out.contains("ENODEV"), "{out}");
    let (ok, out) = check_text(
        "iomax",
        &format!("{DEV}[cgroup.\"/a\"]\n\"io.max\" = \"8:0 riops=abc\"\n{job}"),
    );
    assert!(!ok);
    assert!(out.contains("EINVAL"), "{out}");
    let (ok, out) = check_text(
        "qos",
        &format!("{DEV}[cgroup.\"/\"]\n\"io.cost.qos\" = \"8:0 enable=1 rpct=101\"\n{job}"),
    );
    assert!(!ok);
    assert!(out.contains("io.cost.qos"), "{out}");
    let (ok, out) = check_text(
        "file",
        &format!("{DEV}[cgroup.\"/a\"]\n\"io.maxx\" = \"8:0 riops=1\"\n{job}"),
    );
    assert!(!ok);
    assert!(
        out.contains("io.maxx") && out.contains("bad.toml:7:"),
        "{out}"
    );
}

#[test]
fn every_problem_is_listed_at_once() {
    let (ok, out) = check_text(
        "many",
        &format!("[run]\nhz = 7\n{DEV}[cgroup.\"/a\"]\n\"io.weight\" = \"default 0\"\n[[job]]\ncmdline = \"--name=a --nope=1\"\n"),
    );
    assert!(!ok);
    assert!(
        out.contains("CONFIG_HZ") && out.contains("1..10000 (EINVAL)") && out.contains("nope"),
        "{out}"
    );
}

#[test]
fn failed_run_leaves_no_half_written_output() {
    let dir = scratch("nohalf");
    let out = dir.join("result.txt");
    let o = blklab(&[
        "run",
        "examples/does-not-exist.toml",
        "--output",
        out.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("does-not-exist.toml"));
    assert!(!out.exists());
    let _ = std::fs::remove_dir_all(&dir);
}
