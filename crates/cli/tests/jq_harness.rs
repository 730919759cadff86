//! The seed's jq program (`get_result` in seeds/000) runs unchanged on our
//! JSON and prints sensible values.

mod common;
use common::*;
use std::process::Command;

/// The jq program of seeds/000 (`get_result`), shared with blklab-fio's JSON tests.
const GET_RESULT: &str = include_str!("../../fio/testdata/get_result.jq");

#[test]
fn seed_jq_program_reads_our_json() {
    if Command::new("jq").arg("--version").output().is_err() {
        println!("SKIP: jq is not installed (apt-get install jq); the JSON fields are still checked below");
    }
    let dir = scratch("jq");
    let scen = dir.join("s.toml");
    let out = dir.join("cgA.json");
    std::fs::write(
        &scen,
        format!(
            r#"
[[device]]
name = "sda"
devno = "8:0"
[device.model]
kind = "cloud"
preset = "azure-p20"
[[job]]
cgroup = "/cgA"
output = "{}"
cmdline = "--name=cgA --filename=/x --direct=1 --rw=randrw --rwmixread=50 --ioengine=libaio --bs=1m --iodepth=128 --size=4G --runtime=3 --time_based --group_reporting --unified_rw_reporting=mixed --output-format=json"
"#,
            out.display()
        ),
    )
    .unwrap();
    let o = blklab(&["run", scen.to_str().unwrap(), "--output-format", "summary"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&out).expect("the job's output file");
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let m = &v["jobs"][0]["mixed"];
    assert!(m["iops"].as_f64().unwrap() > 100.0);
    for k in ["90.000000", "99.000000", "99.900000", "99.990000"] {
        assert!(
            m["clat_ns"]["percentile"][k].as_u64().unwrap() > 0,
            "percentile {k}"
        );
    }
    if let Ok(j) = Command::new("jq")
        .arg("-r")
        .arg(GET_RESULT)
        .arg(&out)
        .output()
    {
        assert!(
            j.status.success(),
            "jq failed: {}",
            String::from_utf8_lossy(&j.stderr)
        );
        let line = String::from_utf8_lossy(&j.stdout).trim().to_string();
        let f: Vec<f64> = line.split('|').map(|x| x.parse().unwrap()).collect();
        assert_eq!(f.len(), 9, "{line}");
        let (iops, mbps, avg, max, p90, p99) = (f[0], f[1], f[3], f[4], f[5], f[6]);
        assert!((150.0..=180.0).contains(&iops), "{line}");
        assert!((150.0..=180.0).contains(&mbps), "{line}");
        assert!(
            avg > 100.0 && p90 >= avg * 0.5 && p99 >= p90 && max >= p99 * 0.99,
            "{line}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
