//! `blklab run --iotrack`: the iotrack report end to end on a scenario whose
//! every figure can be computed by hand.
//!
//! null_blk with irqmode=2 and completion_nsec=100000 completes every request
//! exactly 100 µs after dispatch; with zero CPU costs (submit_ns = reap_ns = 0)
//! and psync jobs (one I/O at a time, no queueing anywhere) each I/O has
//! Q = D and C = Q + 100 µs, and a job issues one I/O every 100 µs:
//! /p/a reads 4 KiB x 1000 (0..100 ms), /p/b writes 8 KiB x 500 (0..50 ms).
//! Per 20 ms interval: a completes 200 I/Os (10000 io/s, 1600 sectors =
//! 39.0625 MB/s), b 200 I/Os (10000 io/s, 3200 sectors = 78.125 MB/s) while
//! it runs. Q2C = D2C = 0.10 ms, %d2c = 100. Hit buckets use strict `<`: with
//! the default thresholds (50, 100, 200 µs, ...) a 100 µs Q2C is not in
//! bucket 1 but is in bucket 2; /p/b's own thresholds start at 100001 ns, so
//! all its I/Os are in its bucket 0, while its parent /p counts them with the
//! defaults.

use std::path::PathBuf;
use std::process::Command;

const SCENARIO: &str = r#"
[run]
seed = 1
submit_ns = 0
reap_ns = 0

[[device]]
name = "nullb0"
devno = "252:0"
[device.model]
kind = "nullb"
completion_nsec = 100000

[cgroup."/p/b"]
"io.iotrack.lat_thresh" = "252:0 100001 200000 300000 400000 1000000 2000000 4000000 8000000"

[[job]]
cgroup = "/p/a"
cmdline = "--name=a --direct=1 --rw=randread --bs=4k --ioengine=psync --number_ios=1000"

[[job]]
cgroup = "/p/b"
cmdline = "--name=b --direct=1 --rw=randwrite --bs=8k --ioengine=psync --number_ios=500"
"#;

fn scenario(tag: &str) -> PathBuf {
    let p = std::env::temp_dir().join(format!("blklab-iotrack-{tag}-{}.toml", std::process::id()));
    std::fs::write(&p, SCENARIO).unwrap();
    p
}

fn blklab(args: &[&str]) -> (String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_blklab"))
        .args(args)
        .output()
        .unwrap();
    let (out, err) = (
        String::from_utf8(o.stdout).unwrap(),
        String::from_utf8(o.stderr).unwrap(),
    );
    assert!(o.status.success(), "blklab {args:?} failed: {err}");
    (out, err)
}

/// The tool's basic cgroup row, built from the column widths of dublio/iotrack.
fn row(cells: &[&str], cgroup: &str) -> String {
    let widths = [8, 8, 6, 6, 6, 6, 6, 8, 8, 6, 6, 6, 6, 6, 6, 6, 6];
    let mut s = format!("{:<16} ", "nullb0");
    for (c, w) in cells.iter().zip(widths) {
        s.push_str(&format!("{c:<w$} "));
    }
    s.push_str(cgroup);
    s
}

fn blocks(text: &str) -> Vec<&str> {
    text.split("Time: ").skip(1).collect()
}

#[test]
fn intervals_match_hand_computed_figures() {
    let p = scenario("intervals");
    let (out, _) = blklab(&[
        "run",
        p.to_str().unwrap(),
        "--iotrack",
        "20",
        "--output-format",
        "summary",
    ]);
    let _ = std::fs::remove_file(&p);
    let (intervals, totals) = out.split_once("iotrack totals").expect("totals");
    let b = blocks(intervals);
    assert_eq!(b.len(), 5, "100 ms in 20 ms intervals:\n{intervals}");
    assert!(b[0].starts_with("1970-01-01 00:00:00.020\n"), "{}", b[0]);
    let hits_default = [
        "0.00", "0.00", "100.00", "100.00", "100.00", "100.00", "100.00", "100.00",
    ];
    let mk = |head: [&str; 9], hits: [&str; 8], cg: &str| {
        let cells: Vec<&str> = head.iter().chain(hits.iter()).copied().collect();
        row(&cells, cg)
    };
    let first = b[0];
    for want in [
        mk(
            [
                "20000", "117.19", "100.00", "100.00", "100.00", "100.00", "100.00", "0.10", "0.10",
            ],
            hits_default,
            "/",
        ),
        mk(
            [
                "10000", "39.06", "50.00", "33.33", "50.00", "50.00", "100.00", "0.10", "0.10",
            ],
            hits_default,
            "/p/a",
        ),
        mk(
            [
                "10000", "78.12", "50.00", "66.67", "50.00", "50.00", "100.00", "0.10", "0.10",
            ],
            ["100.00"; 8],
            "/p/b",
        ),
    ] {
        assert!(
            first.lines().any(|l| l == want),
            "missing\n{want}\nin\n{first}"
        );
    }
    // the device line: 10000 reads/s and 10000 writes/s
    let dev: Vec<&str> = first.lines().nth(2).unwrap().split_whitespace().collect();
    assert_eq!(
        &dev[..7],
        ["nullb0", "0", "0", "10000", "10000", "39.06", "78.12"]
    );
    // third interval: b ends at 50 ms (100 of its I/Os), a goes on
    let third = b[2];
    assert!(
        third.lines().any(|l| l
            == mk(
                ["5000", "39.06", "33.33", "50.00", "33.33", "33.33", "100.00", "0.10", "0.10"],
                ["100.00"; 8],
                "/p/b"
            )),
        "{third}"
    );
    assert!(
        third.lines().any(|l| l
            == mk(
                ["10000", "39.06", "66.67", "50.00", "66.67", "66.67", "100.00", "0.10", "0.10"],
                hits_default,
                "/p/a"
            )),
        "{third}"
    );
    // last interval: a alone
    assert!(
        b[4].lines().any(|l| l
            == mk(
                ["0", "0.00", "0.00", "0.00", "0.00", "0.00", "0.00", "0.00", "0.00"],
                ["0.00"; 8],
                "/p/b"
            )),
        "{}",
        b[4]
    );
    // totals over the 100 ms run: a 1000 I/Os, b 500
    assert!(totals.contains("(0.100 s)"), "{totals}");
    assert!(
        totals.lines().any(|l| l
            == mk(
                ["10000", "39.06", "66.67", "50.00", "66.67", "66.67", "100.00", "0.10", "0.10"],
                hits_default,
                "/p/a"
            )),
        "{totals}"
    );
    assert!(
        totals.lines().any(|l| l
            == mk(
                ["5000", "39.06", "33.33", "50.00", "33.33", "33.33", "100.00", "0.10", "0.10"],
                ["100.00"; 8],
                "/p/b"
            )),
        "{totals}"
    );
}

#[test]
fn hit_bucket_edge_and_ancestor_rollup_in_the_stat_files() {
    let p = scenario("files");
    let (out, _) = blklab(&[
        "run",
        p.to_str().unwrap(),
        "--show-files",
        "--output-format",
        "summary",
    ]);
    let _ = std::fs::remove_file(&p);
    let file = |name: &str| -> String {
        let head = format!("==> {name} <==\n");
        let i = out
            .find(&head)
            .unwrap_or_else(|| panic!("no {name} in\n{out}"))
            + head.len();
        out[i..].lines().next().unwrap().to_string()
    };
    let zeros = "0 0 0 0 0 0 0 0";
    // a: Q2C = 100000 ns exactly = default threshold 1: not counted there (strict <)
    assert_eq!(
        file("/sys/fs/cgroup/p/a/io.iotrack.stat"),
        format!("252:0 mean: 100000 min: 100000 max: 100000 sum: 0 rios: 1000 wios: 0 oios:0 rsts: 8000 wsts: 0 osts: 0 rtms: 100000000 wtms: 0 otms: 0 rdtms: 100000000 wdtms: 0 odtms: 0 rhit: 0 0 1000 1000 1000 1000 1000 1000 whit: {zeros} ohit: {zeros}")
    );
    // b: its own threshold 0 is 100001 ns: every I/O is in bucket 0
    assert_eq!(
        file("/sys/fs/cgroup/p/b/io.iotrack.stat"),
        format!("252:0 mean: 100000 min: 100000 max: 100000 sum: 0 rios: 0 wios: 500 oios:0 rsts: 0 wsts: 8000 osts: 0 rtms: 0 wtms: 50000000 otms: 0 rdtms: 0 wdtms: 50000000 odtms: 0 rhit: {zeros} whit: 500 500 500 500 500 500 500 500 ohit: {zeros}")
    );
    // the parent and the root hold a + b, bucketed with their own (default) thresholds
    let sum = format!("252:0 mean: 100000 min: 100000 max: 100000 sum: 0 rios: 1000 wios: 500 oios:0 rsts: 8000 wsts: 8000 osts: 0 rtms: 100000000 wtms: 50000000 otms: 0 rdtms: 100000000 wdtms: 50000000 odtms: 0 rhit: 0 0 1000 1000 1000 1000 1000 1000 whit: 0 0 500 500 500 500 500 500 ohit: {zeros}");
    assert_eq!(file("/sys/fs/cgroup/p/io.iotrack.stat"), sum);
    assert_eq!(file("/sys/fs/cgroup/io.iotrack.stat"), sum);
    // /sys/block/nullb0/stat: reads 1000, 8000 sectors, 100 ms; writes 500, 8000, 50 ms
    let st: Vec<u64> = file("/sys/block/nullb0/stat")
        .split_whitespace()
        .map(|v| v.parse().unwrap())
        .collect();
    assert_eq!(&st[..8], [1000, 0, 8000, 100, 500, 0, 8000, 50]);
    assert_eq!(st[9], 100, "io_ticks: busy for the whole 100 ms");
}

/// Split a stream of JSON documents (what `jq` reads).
fn documents(text: &str) -> Vec<serde_json::Value> {
    serde_json::Deserializer::from_str(text)
        .into_iter::<serde_json::Value>()
        .map(|d| d.unwrap())
        .collect()
}

#[test]
fn json_carries_the_same_figures_and_fio_documents_are_untouched() {
    let p = scenario("json");
    let ps = p.to_str().unwrap();
    let (plain, _) = blklab(&["run", ps, "--output-format", "json"]);
    let (with, err) = blklab(&["run", ps, "--output-format", "json", "--iotrack", "20"]);
    let file = std::env::temp_dir().join(format!("blklab-iotrack-{}.json", std::process::id()));
    let (sep, _) = blklab(&[
        "run",
        ps,
        "--output-format",
        "json",
        "--iotrack",
        "20",
        "--iotrack-json",
        file.to_str().unwrap(),
    ]);
    let _ = std::fs::remove_file(&p);
    // the text report goes to stderr in JSON mode; stdout is fio's documents, then ours
    assert!(err.contains("Time: 1970-01-01 00:00:00.020"), "{err}");
    assert_eq!(
        sep, plain,
        "--iotrack-json leaves stdout as fio's documents only"
    );
    assert!(
        with.starts_with(&plain),
        "fio's documents come first, unchanged"
    );
    let docs = documents(&with);
    assert_eq!(docs.len(), 3);
    assert!(docs[0].get("jobs").is_some() && docs[1].get("jobs").is_some());
    let it = &docs[2]["iotrack"];
    let from_file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let _ = std::fs::remove_file(&file);
    assert_eq!(&from_file["iotrack"], it);
    assert_eq!(it["interval_ms"], 20);
    assert_eq!(it["cgroups"], serde_json::json!(["/", "/p/a", "/p/b"]));
    assert_eq!(it["intervals"].as_array().unwrap().len(), 5);
    let find = |block: &serde_json::Value, cg: &str| {
        block["cgroups"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["cgroup"] == cg)
            .unwrap()
            .clone()
    };
    let a = find(&it["intervals"][0], "/p/a");
    assert_eq!(a["time_ms"], serde_json::Value::Null);
    assert_eq!(it["intervals"][0]["time_ms"], 20);
    assert_eq!(a["ios"]["read"], 200);
    assert_eq!(a["sectors"]["total"], 1600);
    assert_eq!(a["q2c_ns"]["total"], 200u64 * 100_000);
    assert_eq!(a["d2c_ns"]["total"], 200u64 * 100_000);
    assert_eq!(a["iops"]["total"], 10000.0);
    assert_eq!(a["mbps"]["read"], 39.06);
    assert_eq!(a["byte_pct"]["total"], 33.33);
    assert_eq!(a["d2c_pct"]["total"], 100.0);
    assert_eq!(a["aq2c_ms"]["total"], 0.1);
    assert_eq!(
        a["hit_pct"]["total"],
        serde_json::json!([0.0, 0.0, 100.0, 100.0, 100.0, 100.0, 100.0, 100.0])
    );
    let t = &it["totals"];
    assert_eq!(t["elapsed_ms"], 100.0);
    let b = find(t, "/p/b");
    assert_eq!(b["ios"]["write"], 500);
    assert_eq!(b["io_pct"]["total"], 33.33);
    assert_eq!(b["hit_pct"]["write"][0], 100.0);
    assert_eq!(find(t, "/")["ios"]["total"], 1500);
    assert_eq!(t["devices"][0]["r_s"], 10000.0);
}

#[test]
fn extended_layout() {
    let p = scenario("x");
    let (out, _) = blklab(&[
        "run",
        p.to_str().unwrap(),
        "--iotrack",
        "20",
        "-x",
        "--output-format",
        "summary",
    ]);
    let _ = std::fs::remove_file(&p);
    let first = blocks(&out)[0];
    let header = first
        .lines()
        .find(|l| l.contains("mean(us)"))
        .expect("extended header");
    assert!(header.starts_with("Device           mean(us) min(us)  max(us)  io/s     rio/s    wio/s    oio/s    MB/s     rMB/s"), "{header}");
    assert!(header.ends_with("%ohit7 cgroup"), "{header}");
    let b: Vec<&str> = first
        .lines()
        .find(|l| l.ends_with("/p/b"))
        .unwrap()
        .split_whitespace()
        .collect();
    // Device, mean/min/max (µs, cumulative), io/s total/r/w/o, MB/s total/r/w/o
    assert_eq!(
        &b[..12],
        [
            "nullb0", "100.00", "100.00", "100.00", "10000", "0", "10000", "0", "78.12", "0.00",
            "78.12", "0.00"
        ]
    );
    assert_eq!(b.len(), 1 + 3 + 9 * 4 + 8 * 4 + 1);
}

/// The `iotrack` time-series table carries the same hand-computed figures,
/// and the tool, the time series and `--show-files` work in one run.
#[test]
fn timeseries_table_matches_hand_computed_figures_beside_the_tool() {
    let p = scenario("timeseries");
    let dir = std::env::temp_dir().join(format!("blklab-iotrack-ts-{}", std::process::id()));
    let (out, _) = blklab(&[
        "run",
        p.to_str().unwrap(),
        "--iotrack",
        "20",
        "--timeseries",
        dir.to_str().unwrap(),
        "--interval-ms",
        "20",
        "--show-files",
        "--output-format",
        "summary",
    ]);
    let _ = std::fs::remove_file(&p);
    assert_eq!(blocks(out.split("iotrack totals").next().unwrap()).len(), 5);
    assert!(out.contains("==> /sys/fs/cgroup/p/a/io.stat <=="), "{out}");
    let csv = std::fs::read_to_string(dir.join("iotrack.csv")).expect("iotrack.csv");
    let _ = std::fs::remove_dir_all(&dir);
    let mut lines = csv.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |n: &str| head.iter().position(|h| *h == n).unwrap();
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    let at = |t: &str, cg: &str| {
        rows.iter()
            .find(|r| r[col("time_s")] == t && r[col("cgroup")] == cg)
            .unwrap_or_else(|| panic!("no row for {cg} at {t}:\n{csv}"))
    };
    // first interval: a and b each 200 I/Os, 100 µs Q2C = D2C
    for (cg, ios, iops, io_pct) in [("/", "400", "20000", "100"), ("/p/a", "200", "10000", "50")] {
        let r = at("0.02", cg);
        assert_eq!(r[col("ios")], ios, "{cg}");
        assert_eq!(r[col("iops")], iops, "{cg}");
        assert_eq!(r[col("io_pct")], io_pct, "{cg}");
        assert_eq!(r[col("aq2c_ms")], "0.1", "{cg}");
        assert_eq!(r[col("ad2c_ms")], "0.1", "{cg}");
        assert_eq!(r[col("d2c_pct")], "100", "{cg}");
        // strict `<`: 100 µs is not below the 100 µs threshold, is below 200 µs
        assert_eq!(r[col("hit1_pct")], "0", "{cg}");
        assert_eq!(r[col("hit2_pct")], "100", "{cg}");
    }
    // /p/b's own thresholds start at 100001 ns: every I/O in its bucket 0
    assert_eq!(at("0.02", "/p/b")[col("hit0_pct")], "100");
    // b is done at 50 ms: the last interval has a alone
    let r = at("0.1", "/p/a");
    assert_eq!(r[col("io_pct")], "100");
    assert_eq!(at("0.1", "/p/b")[col("ios")], "0");
}
