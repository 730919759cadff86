//! Every bundled example runs end to end, and the device examples show what
//! their models are for.

mod common;
use common::*;

fn json_of(example: &str) -> serde_json::Value {
    let o = blklab(&["run", example, "--output-format", "json"]);
    assert!(o.status.success(), "{example}: {}", stderr(&o));
    let text = stdout(&o);
    // one document per fio invocation; take the first
    let mut it = serde_json::Deserializer::from_str(&text).into_iter::<serde_json::Value>();
    it.next().expect("a JSON document").expect("valid JSON")
}

#[test]
fn every_example_checks_and_runs() {
    let dir = root().join("examples");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().and_then(|x| x.to_str()) != Some("toml") {
            continue;
        }
        let rel = p
            .strip_prefix(root())
            .unwrap()
            .to_str()
            .unwrap()
            .to_string();
        let c = blklab(&["check", &rel]);
        assert!(
            c.status.success(),
            "check {rel}: {}{}",
            stdout(&c),
            stderr(&c)
        );
        let o = blklab(&["run", &rel, "--output-format", "summary"]);
        assert!(o.status.success(), "run {rel}: {}", stderr(&o));
        assert!(stdout(&o).contains("CGROUP"), "{rel}: no summary table");
        n += 1;
    }
    assert!(n >= 4, "only {n} examples");
}

#[test]
fn nullb_qd32_is_cpu_bound_at_the_submit_cost() {
    // 2 µs of CPU per submit call: one job cannot exceed 500k IOPS, and a
    // 10 µs device at QD32 would allow far more, so IOPS sits just under 500k.
    let v = json_of("examples/nullb-randread.toml");
    let iops = v["jobs"][0]["read"]["iops"].as_f64().unwrap();
    assert!((480_000.0..=500_000.0).contains(&iops), "iops {iops}");
    let clat = v["jobs"][0]["read"]["clat_ns"]["mean"].as_f64().unwrap();
    assert!(clat > 10_000.0 && clat < 100_000.0, "clat {clat}");
}

#[test]
fn cloud_p20_saturated_runs_at_the_burst_rate_with_bursty_completions() {
    // 1 MiB random I/O at QD128 saturates the volume: throughput is its
    // burst bandwidth (173.47 MB/s = 165.4 MiB/s), latency is the queue:
    // 128 MiB at ~165 MiB/s ~ 0.77 s (the seed measured ~750 ms clat).
    let v = json_of("examples/cloud-p20-saturated.toml");
    let m = &v["jobs"][0]["mixed"];
    let mibps = m["bw_bytes"].as_f64().unwrap() / 1048576.0;
    assert!((160.0..=170.0).contains(&mibps), "MiB/s {mibps}");
    let clat_ms = m["clat_ns"]["mean"].as_f64().unwrap() / 1e6;
    assert!((650.0..=850.0).contains(&clat_ms), "clat {clat_ms} ms");
}
