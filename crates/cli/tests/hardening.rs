//! Hostile and careless input (issue 19): every bad input gives the error
//! the kernel or fio gives, located, with the same exit status from
//! `check` and `run`; files that are not files, and sizes past the limits of
//! docs/scenario.md, are refused before memory is spent.

mod common;
use common::*;

use std::path::Path;
use std::process::{Command, Stdio};

const DEV: &str = "[[device]]\nname = \"sda\"\ndevno = \"8:0\"\n[device.model]\nkind = \"nullb\"\n";
const JOB_A: &str =
    "[[job]]\ncgroup = \"/a\"\ncmdline = \"--name=a --rw=randread --runtime=200ms --time_based\"\n";

fn write(at: &str, cgroup: &str, file: &str, value: &str) -> String {
    format!(
        "[[write]]\nat = \"{at}\"\ncgroup = \"{cgroup}\"\nfile = \"{file}\"\nvalue = \"{value}\"\n"
    )
}

#[test]
fn invalid_timed_writes_are_the_kernels_errors_in_check_and_run() {
    // line 13 is the value of the write
    let out = refused(
        "w-zero",
        &format!(
            "{DEV}{JOB_A}{}",
            write("100ms", "/a", "io.max", "8:0 riops=0")
        ),
        &["bad.toml:13:", "ERANGE"],
    );
    assert!(!out.contains("io.max: io.max:"), "{out}");
    refused(
        "w-abc",
        &format!(
            "{DEV}{JOB_A}{}",
            write("100ms", "/a", "io.max", "riops=abc")
        ),
        &["bad.toml:13:", "EINVAL"],
    );
    refused(
        "w-hex",
        &format!(
            "{DEV}{JOB_A}{}",
            write("100ms", "/a", "io.max", "8:0 riops=0x10")
        ),
        &["reads as 0", "ERANGE"],
    );
    refused(
        "w-prio",
        &format!(
            "{DEV}{JOB_A}{}",
            write("100ms", "/a", "io.prio.class", "rt")
        ),
        &["EINVAL"],
    );
    refused(
        "w-undeclared",
        &format!("{DEV}{JOB_A}{}", write("100ms", "/zz", "io.weight", "100")),
        &["bad.toml:11:", "no cgroup /zz"],
    );
    refused(
        "w-late",
        &format!(
            "{DEV}{JOB_A}{}",
            write("5s", "/a", "io.max", "8:0 riops=10")
        ),
        &["bad.toml:10:", "never happen"],
    );
}

/// A job that ends when its size is done can end before a write's time:
/// the run says the write was not applied.
#[test]
fn a_write_the_run_never_reached_is_reported() {
    let toml = format!(
        "{DEV}[[job]]\ncgroup = \"/a\"\ncmdline = \"--name=a --rw=read --size=1m\"\n{}",
        write("10s", "/a", "io.max", "8:0 riops=10")
    );
    let o = run_text("unreached", &toml, &[]);
    assert!(
        stderr(&o).contains(
            "warning: the write of \"8:0 riops=10\" to /a/io.max at 10.000s was not applied"
        ),
        "{}",
        stderr(&o)
    );
}

#[test]
fn cgroup_files_are_checked_as_the_kernel_checks_them() {
    let cg = |files: &str| format!("{DEV}[cgroup.\"/a\"]\n{files}\n{JOB_A}");
    refused(
        "weight-nodev",
        &cg("\"io.weight\" = \"9:9 100\""),
        &["ENODEV"],
    );
    refused(
        "max-empty",
        &cg("\"io.max\" = \"\""),
        &["empty write", "EINVAL"],
    );
    refused("prio-empty", &cg("\"io.prio.class\" = \"\""), &["EINVAL"]);
    let out = refused(
        "root-max",
        &format!("{DEV}[cgroup.\"/\"]\n\"io.max\" = \"8:0 riops=1\"\n{JOB_A}"),
        &["(ENOENT)"],
    );
    assert!(!out.contains("(EINVAL)"), "{out}");
    refused(
        "same-cgroup",
        &format!(
            "{DEV}[cgroup.\"/a\"]\n\"io.max\" = \"8:0 riops=10\"\n[cgroup.\"/a/\"]\n\"io.max\" = \"8:0 riops=20\"\n{JOB_A}"
        ),
        &["are the same cgroup /a"],
    );
    refused(
        "relative",
        &format!("{DEV}[cgroup.\"a\"]\n\"io.weight\" = \"100\"\n{JOB_A}"),
        &["relative"],
    );
}

#[test]
fn device_settings_the_kernel_refuses() {
    for (k, want) in [
        ("max_sectors_kb = 1", "max_sectors_kb"),
        ("max_sectors_kb = 3", "max_sectors_kb"),
        ("nr_hw_queues = 0", "nr_hw_queues"),
    ] {
        let dev = DEV.replace("devno = \"8:0\"\n", &format!("devno = \"8:0\"\n{k}\n"));
        refused(k, &format!("{dev}{JOB_A}"), &[want, "EINVAL"]);
    }
    // 0 is the kernel's "back to the default" (1280 KiB), not an error
    let dev = DEV.replace("devno = \"8:0\"\n", "devno = \"8:0\"\nmax_sectors_kb = 0\n");
    run_text("msk0", &format!("{dev}{JOB_A}"), &[]);
    // the idle driver wake-up is a host CPU cost: at most 1 s, like submit_ns
    let dev = DEV.replace(
        "devno = \"8:0\"\n",
        "devno = \"8:0\"\nidle_wake_ns = 2000000000\n",
    );
    refused(
        "idlewake",
        &format!("{dev}{JOB_A}"),
        &["idle_wake_ns", "at most"],
    );
    let dev = DEV.replace(
        "devno = \"8:0\"\n",
        "devno = \"8:0\"\nidle_wake_ns = 7000\n",
    );
    let o = run_text("idlewake-ok", &format!("{dev}{JOB_A}"), &[]);
    assert!(o.status.success(), "{o:?}");
}

#[test]
fn messages_say_each_thing_once_and_plainly() {
    let out = refused(
        "cmdline",
        &format!("{DEV}[[job]]\ncmdline = \"--name=a --bogus\"\n"),
        &["bogus"],
    );
    assert!(!out.contains("command line: command line:"), "{out}");
    // a device error is not followed by a made-up "several devices" one
    let out = refused(
        "devfail",
        "[[device]]\nname = \"sda\"\ndevno = \"8:0\"\nnr_hw_queues = 0\n[device.model]\nkind = \"nullb\"\n[[job]]\ncmdline = \"--name=a\"\n",
        &["nr_hw_queues"],
    );
    assert!(!out.contains("several devices"), "{out}");
    let out = refused(
        "negative",
        &format!("[run]\nduration = \"-5s\"\n{DEV}{JOB_A}"),
        &["bad.toml:2:", "negative"],
    );
    assert!(!out.contains("unknown time unit"), "{out}");
    // control characters in the input are escaped in the message
    let out = refused(
        "ctrl",
        &format!("{DEV}[[job]]\ncmdline = \"--name=a --x\\u001b[2J=1\"\n"),
        &["\\u{1b}"],
    );
    assert!(!out.contains('\u{1b}'), "{out}");
}

#[test]
fn sizes_past_the_limits_are_refused_before_they_cost() {
    let long = "x".repeat(65_518);
    refused(
        "label",
        &format!("{DEV}[[job]]\nlabel = \"{long}\"\ncmdline = \"--name=a\"\n"),
        &["65518 bytes", "at most 255"],
    );
    refused(
        "name",
        &format!("{DEV}[[job]]\ncmdline = \"--name={long}\"\n"),
        &["at most 255"],
    );
    refused(
        "numjobs",
        &format!("{DEV}[[job]]\ncmdline = \"--name=a --numjobs=4294967295\"\n"),
        &["at most 1024"],
    );
    refused(
        "jitter",
        &format!("[run]\nwake_jitter_ns = 1000000000000000000\n{DEV}{JOB_A}"),
        &["wake_jitter_ns", "at most"],
    );
    refused(
        "devzero",
        &format!("{DEV}[[job]]\njob_file = \"/dev/zero\"\n"),
        &["/dev/zero", "not a regular file"],
    );
    refused(
        "replayzero",
        &format!("{DEV}[[job]]\nreplay = \"/dev/urandom\"\nreplay_cgroup = \"/\"\n"),
        &["/dev/urandom", "not a regular file"],
    );
    let o = blklab(&["check", "/dev/zero"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stdout(&o).contains("not a regular file"), "{}", stdout(&o));
}

/// A recording of `ticks` stat ticks, one I/O each.
fn recording(path: &Path, ticks: u64) {
    let mut s =
        String::from("blklab-host-record 1\nstart 0 1700000000\ndev 0 8:0 sda\ncg 0 - /a\n");
    for t in 0..ticks {
        let ns = t * 1_000_000_000;
        s.push_str(&format!(
            "Q {} 0 R {} 8 0 0\nC {} 0 R {} 8 0 -\ns {} 0 {} 0 {} 1 0 0 0 0 0 1 1\n",
            ns + 1000,
            t * 8,
            ns + 2000,
            t * 8,
            ns + 500_000_000,
            t,
            t * 8
        ));
    }
    s.push_str(&format!("end {}\n", 2 * ticks));
    std::fs::write(path, s).unwrap();
}

#[test]
fn top_and_record_arguments() {
    let dir = scratch("toprec");
    let rec = dir.join("r.rec");
    recording(&rec, 5);
    let r = rec.to_str().unwrap();
    let o = blklab(&["top", "--from", r, "--interval", "5"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--interval does not apply to --from"));
    let o = blklab(&["top", "--from", r, "--device", "/dev/sda"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("sda"), "{}", stdout(&o));
    let o = blklab(&["top", "--from", r, "--device", "vdb"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("not in the recording"),
        "{}",
        stderr(&o)
    );
    let o = blklab(&["top", "--from", "/dev/zero"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("not a regular file"), "{}", stderr(&o));
    let o = blklab(&[
        "record",
        "--device",
        "/dev/sda",
        "--interval",
        "0",
        "-o",
        "x",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("at least 1 ms"), "{}", stderr(&o));
    // a line with no end is refused at the line cap, not read forever
    std::fs::write(
        &rec,
        format!("blklab-host-record 1\n{}", "9".repeat(100_000)),
    )
    .unwrap();
    let o = blklab(&["top", "--from", r]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("longer than 4096 bytes"),
        "{}",
        stderr(&o)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `blklab top --from FILE | head -1`: the reader goes away, top stops
/// quietly with status 0.
#[test]
fn top_into_a_closed_pipe_is_quiet() {
    let dir = scratch("toppipe");
    let rec = dir.join("r.rec");
    recording(&rec, 3000);
    let mut child = Command::new(env!("CARGO_BIN_EXE_blklab"))
        .args(["top", "--from", rec.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "status {:?}", o.status);
    assert_eq!(stderr(&o), "", "nothing on stderr");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn io_stat_names_the_device_once() {
    let toml = format!("{DEV}[cgroup.\"/a\"]\n\"io.max\" = \"8:0 riops=500\"\n{JOB_A}");
    let o = run_text("iostat", &toml, &["--io-stat"]);
    let out = stdout(&o);
    let line = out
        .lines()
        .find(|l| l.contains("throttled_rios="))
        .unwrap_or_else(|| panic!("no io.stat line: {out}"));
    assert_eq!(line.matches("8:0").count(), 1, "{line}");
}

/// A readahead window far larger than the cache used to scan the whole
/// cache for every page added; the run now ends (its page-cache block shows
/// the cache overcommitted) instead of hanging.
#[test]
fn huge_read_ahead_does_not_hang() {
    let toml = format!(
        "[pagecache]\nmemory = \"1M\"\nread_ahead_kb = 1048576\n{DEV}[[job]]\ncmdline = \"--name=a --rw=read --bs=4k --size=64m --runtime=100ms --time_based\"\n"
    );
    let o = run_text("ra", &toml, &[]);
    assert!(stdout(&o).contains("page cache:"), "{}", stdout(&o));
}

#[test]
fn summary_table_headers_carry_units_and_line_up() {
    let toml = std::fs::read_to_string(root().join("examples/ssd-mixed.toml")).unwrap();
    let o = run_text("table", &toml, &[]);
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    let head = lines[1];
    for h in ["MiB/s", "P99(ms)", "P99.9(ms)", "P99.99(ms)"] {
        assert!(head.contains(h), "{head}");
    }
    assert!(!head.contains("MB/s"), "{head}");
    // every header ends where its column's numbers end (right-aligned)
    let row = lines[3];
    let ends = |l: &str| -> Vec<usize> {
        let mut v = Vec::new();
        let b = l.as_bytes();
        for i in 0..b.len() {
            if b[i] != b' ' && (i + 1 == b.len() || b[i + 1] == b' ') {
                v.push(i);
            }
        }
        v
    };
    let (he, re) = (ends(head), ends(row));
    assert_eq!(he.len(), re.len(), "{head}\n{row}");
    assert_eq!(he[1..], re[1..], "\n{head}\n{row}");
}
