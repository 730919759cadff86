//! JSON writer tests: a golden fio-3.33 document, the seed-000 jq harness,
//! unified_rw_reporting shapes, and printer details.

use super::*;
use crate::options::{JobSpec, UnifiedRw};
use crate::report::{group_jobs, DiskUtil, Report};
use crate::stats::{plat_idx_to_val, plat_val_to_idx, JobStats};
use crate::test_fixtures::{one_job_report, sample, GET_RESULT_JQ};

/// Smallest count c with c/n*100 printed by %f as `want`.
fn count_for(want: &str, n: u64) -> u64 {
    let target: f64 = want.parse().unwrap();
    let guess = (target / 100.0 * n as f64) as u64;
    for c in guess.saturating_sub(1000)..guess + 1000 {
        let mut v = c as f64 / n as f64 * 100.0;
        if v < 0.01 && c > 0 {
            v = 0.01;
        }
        if json_f(v) == want {
            return c;
        }
    }
    panic!("no count gives {want}");
}

/// Rebuild the statistics of a real fio-3.33 run (a psync sequential write,
/// JSON published on linux-fsdevel) and compare the whole document. blklab
/// does not simulate CPU usage, so usr_cpu/sys_cpu/ctx/minf are zeroed in the
/// expected text; every other byte must match.
#[test]
fn golden_fio_3_33_document() {
    let expected = include_str!("../tests/data/fio-3.33-psync-write.json")
        .replace("\"usr_cpu\" : 15.249596", "\"usr_cpu\" : 0.000000")
        .replace("\"sys_cpu\" : 84.560263", "\"sys_cpu\" : 0.000000")
        .replace("\"ctx\" : 177", "\"ctx\" : 0")
        .replace("\"minf\" : 11", "\"minf\" : 0");

    let n: u64 = 33_554_432;
    let mut spec = JobSpec::new("task_0");
    spec.iodepth = 32;
    spec.raw_options = vec![
        ("rw".into(), "write".into()),
        ("directory".into(), "/fs/sdb1".into()),
        ("numjobs".into(), "1".into()),
    ];
    let global: Vec<(String, String)> = [
        ("bs", "4k"),
        ("ioengine", "falloc"),
        ("iodepth", "32"),
        ("size", "137438953472"),
        ("direct", "0"),
        ("runtime", "300"),
        ("file_service_type", "roundrobin"),
        ("random_distribution", "random"),
        ("pre_read", "0"),
        ("nrfiles", "1"),
        ("filesize", "137438953472"),
        ("invalidate", "1"),
        ("fallocate", "posix"),
        ("io_size", "137438953472"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();

    let mut st = JobStats {
        name: "task_0".into(),
        groupid: 0,
        nr_jobs: 1,
        elapsed_s: 71,
        ..Default::default()
    };
    let w = &mut st.dirs[1];
    w.io_bytes = 137_438_953_472;
    w.total_ios = n;
    w.runtime_ms = 70_475;
    w.clat.stat = sample(1778, 71068, n, 1894.879822, 149.956185);
    w.lat.stat = sample(1812, 71102, n, 1929.203544, 150.831850);
    w.bw = sample(1_823_696, 1_925_208, 140, 1904624.685714, 19260.493657);
    w.iops = sample(455_924, 481_302, 140, 476156.171429, 4815.123414);
    // A histogram whose percentiles are fio's: each listed value's bucket
    // ends exactly at the rank of the highest percentile it answers.
    let rank = |p: f64| ((p * n as f64) / 100.0).ceil() as u64;
    let steps: [(u64, f64); 13] = [
        (1816, 5.0),
        (1832, 20.0),
        (1848, 40.0),
        (1864, 60.0),
        (1880, 70.0),
        (1896, 80.0),
        (1944, 90.0),
        (2192, 95.0),
        (2256, 99.0),
        (2288, 99.5),
        (4080, 99.9),
        (4512, 99.95),
        (5408, 100.0),
    ];
    let mut cum = 0;
    for (v, p) in steps {
        assert_eq!(plat_idx_to_val(plat_val_to_idx(v)), v);
        let upto = if p == 100.0 { n } else { rank(p) };
        for _ in cum..upto {
            w.clat.hist.add(v);
        }
        cum = upto;
    }
    st.job_runtime_ms = 70_474;
    st.iodepth_level[0] = n;
    st.iodepth_submit[1] = 1000;
    st.total_submit = 1000;
    st.iodepth_complete[1] = 1000;
    st.total_complete = 1000;
    let us = [
        "91.456613",
        "8.435845",
        "0.107190",
        "0.010000",
        "0.010000",
        "0.010000",
    ];
    for (i, v) in us.iter().enumerate() {
        st.lat_us[i] = if *v == "0.010000" { 1 } else { count_for(v, n) };
    }
    // util 1.103687 %: find io_ticks/msec giving fio's number
    let mut du = DiskUtil {
        name: "sdb".into(),
        read_ios: 0,
        write_ios: 18,
        read_merges: 0,
        write_merges: 6,
        read_ticks: 0,
        write_ticks: 5662,
        in_queue: 6085,
        io_ticks: 0,
        msec: 0,
    };
    'outer: for msec in 70_000..72_000u64 {
        for t in 770..800u64 {
            du.io_ticks = t;
            du.msec = msec;
            if json_f(du.util()) == "1.103687" {
                break 'outer;
            }
        }
    }
    assert_eq!(json_f(du.util()), "1.103687");

    let report = Report {
        timestamp_s: 1_718_334_968,
        timestamp_ms: 1_718_334_968_213,
        time_str: "Fri Jun 14 03:16:08 2024",
        global_options: &global,
        disk_util: vec![du],
        ..one_job_report(&spec, &st, 1)
    };
    let got = write_json(&report);
    if got != expected {
        for (i, (a, b)) in got.lines().zip(expected.lines()).enumerate() {
            assert_eq!(a, b, "first difference at line {}", i + 1);
        }
        assert_eq!(got.lines().count(), expected.lines().count());
    }
    assert_eq!(got, expected);
}

/// A cgB-like mixed randrw job of the seed-000 harness (rate_iops=100, QD 1).
fn cgb() -> (JobSpec, JobStats) {
    let args: Vec<String> = [
        "--name=cgB",
        "--filename=/path/B",
        "--direct=1",
        "--rw=randrw",
        "--rwmixread=50",
        "--ioengine=libaio",
        "--bs=4k",
        "--iodepth=1",
        "--size=4G",
        "--runtime=10",
        "--time_based",
        "--group_reporting",
        "--unified_rw_reporting=mixed",
        "--rate_iops=100",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let spec = crate::parse::parse_cmdline(&args).unwrap().remove(0);
    let mut st = JobStats {
        name: "cgB".into(),
        groupid: 0,
        nr_jobs: 1,
        elapsed_s: 11,
        ..Default::default()
    };
    for d in 0..2 {
        let ds = &mut st.dirs[d];
        for i in 0..1000u64 {
            // clat 1.5 ms .. ~8 ms with a long tail; slat ~10 µs
            let clat = 1_500_000 + (i * i * 6) + d as u64 * 1000;
            ds.clat.add(clat);
            ds.slat.add(9_000 + i * 3);
            ds.lat.add(clat + 9_000 + i * 3);
            st.lat_ms[crate::stats::latency_bin(clat).1] += 1;
        }
        ds.io_bytes = 1000 * 4096;
        ds.total_ios = 1000;
        ds.runtime_ms = 10_001 - d as u64;
        for s in 0..20 {
            ds.bw.add(400 + (s % 3));
            ds.iops.add(100 + (s % 2));
        }
    }
    st.iodepth_level[0] = 2000;
    st.iodepth_submit[1] = 2000;
    st.total_submit = 2000;
    st.iodepth_complete[1] = 2000;
    st.total_complete = 2000;
    st.job_runtime_ms = 10_001;
    (spec, st)
}

fn report<'a>(spec: &'a JobSpec, st: &'a JobStats, globals: &'a [(String, String)]) -> Report<'a> {
    Report {
        fio_version: "fio-3.33-blklab",
        timestamp_s: 1_700_000_000,
        timestamp_ms: 1_700_000_000_123,
        time_str: "Tue Nov 14 22:13:20 2023",
        global_options: globals,
        ..one_job_report(spec, st, 4242)
    }
}

#[test]
fn mixed_satisfies_seed_000_jq_harness() {
    let (spec, st) = cgb();
    // group_reporting: the caller merges; with one job the fold equals mixed()
    let grouped = group_jobs(&[(&spec, &st)]);
    assert_eq!(grouped.len(), 1);
    let out = write_json(&report(&spec, &grouped[0].1, &[]));
    let direct = write_json(&report(&spec, &st, &[]));
    assert_eq!(out, direct, "folding in group_jobs and in the writer agree");

    let v: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
    let job = &v["jobs"][0];
    let keys: Vec<&str> = job
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.as_str())
        .collect();
    assert_eq!(
        &keys[..7],
        &[
            "jobname",
            "groupid",
            "error",
            "eta",
            "elapsed",
            "job options",
            "mixed"
        ]
    );
    assert!(!keys.contains(&"read") && !keys.contains(&"sync"));
    let m = &job["mixed"];
    let mixed = st.mixed();
    assert_eq!(m["io_bytes"], 2000 * 4096);
    assert_eq!(m["total_ios"], 2000);
    assert_eq!(m["runtime"], 10_001);
    assert_eq!(m["bw_bytes"], 2000u64 * 4096 * 1000 / 10_001);
    assert!((m["iops"].as_f64().unwrap() - 2000.0 * 1000.0 / 10_001.0).abs() < 1e-6);
    assert!((m["slat_ns"]["mean"].as_f64().unwrap() - mixed.slat.stat.mean).abs() < 1e-6);
    assert!((m["clat_ns"]["mean"].as_f64().unwrap() - mixed.clat.stat.mean).abs() < 1e-6);
    assert_eq!(m["clat_ns"]["max"], mixed.clat.stat.max);
    let pct = mixed.clat.hist.percentiles(&[90.0, 99.0, 99.9, 99.99]);
    for (k, (_, val)) in ["90.000000", "99.000000", "99.900000", "99.990000"]
        .iter()
        .zip(&pct)
    {
        assert_eq!(m["clat_ns"]["percentile"][*k], *val, "{k}");
    }
    assert!(
        m["lat_ns"].get("percentile").is_none(),
        "lat percentiles are off by default"
    );
    assert!(m["slat_ns"].get("percentile").is_none());
    // bw/iops samples are pure-summed across directions
    assert_eq!(m["bw_samples"], 40);
    assert_eq!(m["bw_min"], 800);
    // job options: bare flags are dropped, values are strings
    let jo = &job["job options"];
    assert_eq!(jo["name"], "cgB");
    assert_eq!(jo["iodepth"], "1");
    assert!(jo.get("time_based").is_none());

    let jq = std::path::Path::new("/usr/bin/jq");
    if !jq.exists() {
        println!("SKIPPED the jq half of this test: /usr/bin/jq is not installed");
        return;
    }
    let dir = std::env::temp_dir().join(format!("blklab-fio-jq-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("cgB.json");
    std::fs::write(&file, &out).unwrap();
    let res = std::process::Command::new(jq)
        .arg("-r")
        .arg(GET_RESULT_JQ)
        .arg(&file)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        res.status.success(),
        "jq failed: {}",
        String::from_utf8_lossy(&res.stderr)
    );
    let line = String::from_utf8(res.stdout).unwrap();
    let f: Vec<f64> = line
        .trim()
        .split('|')
        .map(|x| x.parse::<f64>().expect(x))
        .collect();
    let expect = [
        (2000.0f64 * 1000.0 / 10_001.0).round(),
        (2000u64 * 4096 * 1000 / 10_001) as f64 / 1024.0 / 1024.0,
        mixed.slat.stat.mean / 1e6,
        mixed.clat.stat.mean / 1e6,
        mixed.clat.stat.max as f64 / 1e6,
        pct[0].1 as f64 / 1e6,
        pct[1].1 as f64 / 1e6,
        pct[2].1 as f64 / 1e6,
        pct[3].1 as f64 / 1e6,
    ];
    assert_eq!(f.len(), 9, "{line}");
    for (i, (a, b)) in f.iter().zip(expect).enumerate() {
        assert!(
            (a - b).abs() <= 1e-9 * b.abs().max(1.0),
            "field {i}: jq {a} vs {b}"
        );
    }
}

#[test]
fn unified_none_and_both_shapes() {
    let (mut spec, st) = cgb();
    spec.unified_rw_reporting = UnifiedRw::None;
    let v: serde_json::Value = serde_json::from_str(&write_json(&report(&spec, &st, &[]))).unwrap();
    let keys: Vec<String> = v["jobs"][0].as_object().unwrap().keys().cloned().collect();
    let pos = |k: &str| keys.iter().position(|x| x == k);
    assert_eq!(
        (pos("read"), pos("write"), pos("trim"), pos("sync")),
        (Some(6), Some(7), Some(8), Some(9))
    );
    assert_eq!(pos("mixed"), None);
    assert_eq!(pos("job_runtime"), Some(10));
    assert_eq!(v["jobs"][0]["read"]["runtime"], 10_001);
    assert_eq!(v["jobs"][0]["write"]["runtime"], 10_000);
    assert_eq!(v["jobs"][0]["trim"]["io_bytes"], 0);
    // a single job is its whole group: per = 100 % capped
    assert_eq!(v["jobs"][0]["read"]["bw_agg"], 100.0);

    spec.unified_rw_reporting = UnifiedRw::Both;
    let v: serde_json::Value = serde_json::from_str(&write_json(&report(&spec, &st, &[]))).unwrap();
    let keys: Vec<String> = v["jobs"][0].as_object().unwrap().keys().cloned().collect();
    assert_eq!(
        keys.iter().position(|k| k == "mixed"),
        Some(10),
        "mixed follows sync"
    );
    assert_eq!(v["jobs"][0]["mixed"]["total_ios"], 2000);
}

#[test]
fn layout_and_strings() {
    let (mut spec, st) = cgb();
    spec.description = Some(r#"say "hi" \o/"#.into());
    spec.lat_percentiles = true;
    spec.percentile_list = vec![99.0, 50.0, 0.0, 10.0];
    let globals = vec![
        ("rw".to_string(), "randrw".to_string()),
        ("norandommap".to_string(), String::new()),
    ];
    let out = write_json(&report(&spec, &st, &globals));
    let head = "{\n  \"fio version\" : \"fio-3.33-blklab\",\n  \"timestamp\" : 1700000000,\n  \"timestamp_ms\" : 1700000000123,\n  \"time\" : \"Tue Nov 14 22:13:20 2023\",\n  \"global options\" : {\n    \"rw\" : \"randrw\"\n  },\n  \"jobs\" : [\n    {\n      \"jobname\" : \"cgB\",\n      \"groupid\" : 0,\n";
    assert!(out.starts_with(head), "{}", &out[..400]);
    assert!(out.ends_with("\n    }\n  ]\n}\n"));
    assert!(
        out.contains("      \"desc\" : \"say \\\"hi\\\" \\\\o/\"\n    }"),
        "desc is last, escaped"
    );
    // the list ends at the first 0 (fio) and is sorted: 50, 99
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let p = v["jobs"][0]["mixed"]["lat_ns"]["percentile"]
        .as_object()
        .unwrap();
    assert_eq!(p.keys().collect::<Vec<_>>(), vec!["50.000000", "99.000000"]);
    assert!(out.contains("            \"50.000000\" : "));

    let mut r = report(&spec, &st, &[]);
    r.json_plus = true;
    let v: serde_json::Value = serde_json::from_str(&write_json(&r)).unwrap();
    let bins = v["jobs"][0]["mixed"]["clat_ns"]["bins"]
        .as_object()
        .unwrap();
    let total: u64 = bins.values().map(|x| x.as_u64().unwrap()).sum();
    assert_eq!(total, 2000);
    assert!(v["jobs"][0]["mixed"]["slat_ns"].get("bins").is_none());
}
