//! `blklab run --iotrack`: the report and the JSON figures against values
//! computed by hand for a deterministic scenario.
//!
//! One psync job (QD1) reads 4 KiB blocks from a null_blk that completes every
//! request 100 µs after issue; nothing waits between Q and D. Each I/O: Q = D
//! = the submit instant, C = Q + 100 µs, fio's syscall returns 1 µs later
//! (reap cost) and the next I/O starts at once: one I/O per 101 µs.
//! So Q2C = D2C = 100 µs exactly, %d2c = 100, and with the default thresholds
//! (50, 100, 200 µs, ...) and the strict `<` rule, a 100 µs I/O is not a hit
//! for 50 µs nor for 100 µs (the edge), and is for 200 µs and above.

mod common;
use common::*;

const SCEN: &str = r#"
[run]
submit_ns = 2000
reap_ns = 1000
[[device]]
name = "nullb0"
devno = "252:0"
[device.model]
kind = "nullb"
completion_nsec = 100000
[[job]]
cgroup = "/a/b"
cmdline = "--name=q1 --direct=1 --rw=randread --bs=4k --ioengine=psync --runtime=2 --time_based"
"#;

#[test]
fn report_and_json_match_hand_computed_figures() {
    let dir = scratch("iotrack");
    let p = dir.join("s.toml");
    std::fs::write(&p, SCEN).unwrap();
    let o = blklab(&[
        "run",
        p.to_str().unwrap(),
        "--iotrack",
        "1000",
        "--output-format",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let it = v["iotrack"]
        .as_array()
        .expect("an iotrack array in the fio document");
    // root, then /a, then /a/b: the ancestors hold the same I/Os (roll-up)
    let paths: Vec<&str> = it.iter().map(|e| e["cgroup"].as_str().unwrap()).collect();
    assert_eq!(paths, ["/", "/a", "/a/b"]);
    let ios = it[2]["ios"][0].as_u64().unwrap();
    // 2 s / 101 µs per I/O, plus the one in flight at the end
    assert!((19_801..=19_803).contains(&ios), "ios {ios}");
    for e in it {
        assert_eq!(e["ios"][0].as_u64().unwrap(), ios, "{}", e["cgroup"]);
        assert_eq!(e["q2c_ns"][0].as_u64().unwrap(), ios * 100_000);
        assert_eq!(e["d2c_ns"][0].as_u64().unwrap(), ios * 100_000);
        assert_eq!(e["sectors"][0].as_u64().unwrap(), ios * 8);
        assert_eq!(e["d2c_pct"].as_f64().unwrap(), 100.0);
        assert_eq!(e["aq2c_ms"].as_f64().unwrap(), 0.1);
        let hits: Vec<f64> = e["hit_pct"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h.as_f64().unwrap())
            .collect();
        assert_eq!(hits, [0.0, 0.0, 100.0, 100.0, 100.0, 100.0, 100.0, 100.0]);
    }
    // the text report (on stderr with JSON): two full intervals, then the totals
    let rep = stderr(&o);
    assert_eq!(rep.matches("Time: 1970-01-01 00:00:0").count(), 3, "{rep}");
    let row = rep
        .lines()
        .find(|l| l.ends_with("/a/b"))
        .expect("a row for /a/b");
    let f: Vec<&str> = row.split_whitespace().collect();
    // Device io/s MB/s %io %byte %tm %dtm %d2c ad2c aq2c %hit0..7 cgroup
    assert_eq!(f[0], "nullb0");
    let iops: f64 = f[1].parse().unwrap();
    assert!((9_900.0..=9_902.0).contains(&iops), "{row}");
    assert_eq!(
        &f[3..10],
        ["100.00", "100.00", "100.00", "100.00", "100.00", "0.10", "0.10"],
        "{row}"
    );
    assert_eq!(
        &f[10..18],
        ["0.00", "0.00", "100.00", "100.00", "100.00", "100.00", "100.00", "100.00"],
        "{row}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn software_wait_shows_as_low_d2c_share() {
    let o = blklab(&[
        "run",
        "examples/iotrack-throttled-vs-disk.toml",
        "--iotrack",
        "3000",
        "--output-format",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let mut docs = serde_json::Deserializer::from_str(&text).into_iter::<serde_json::Value>();
    let v = docs.next().unwrap().unwrap();
    let it = v["iotrack"].as_array().unwrap();
    let get = |cg: &str, k: &str| {
        it.iter().find(|e| e["cgroup"] == cg).unwrap()[k]
            .as_f64()
            .unwrap()
    };
    // /batch waits in iocost (inside Q2C, before D): most of its Q2C is not disk time
    assert!(
        get("/batch", "d2c_pct") < 40.0,
        "batch %d2c {}",
        get("/batch", "d2c_pct")
    );
    assert!(
        get("/web", "d2c_pct") > 70.0,
        "web %d2c {}",
        get("/web", "d2c_pct")
    );
    assert!(get("/batch", "aq2c_ms") > 2.0 * get("/web", "aq2c_ms"));
    // weights 100 : 1000 on a device as fast as the model
    let ratio = get("/web", "iops") / get("/batch", "iops");
    assert!((9.5..=10.5).contains(&ratio), "ratio {ratio}");
}
