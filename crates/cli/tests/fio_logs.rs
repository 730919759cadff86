//! fio's log files from `blklab run`: fio 3.33's names and line shapes
//! (checked against real fio runs, docs/fidelity/fio.md), read back with the
//! fio crate's reader; line counts follow log_avg_msec over the runtime.

use std::path::{Path, PathBuf};
use std::process::Command;

use blklab_fio::log::reader::{parse_hist_log, parse_log};

const DEVICE: &str = r#"[run]
seed = 1

[[device]]
name = "nullb0"
devno = "252:0"
[device.model]
kind = "nullb"
completion_nsec = 10000
hw_queue_depth = 64
"#;

/// A fresh directory holding `s.toml` with one job of these fio options.
fn scenario(tag: &str, opts: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("blklab-fio-logs-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let job = format!(
        "{DEVICE}\n[[job]]\ncmdline = \"--name=rr --filename=/dev/nullb0 --direct=1 --ioengine=libaio --bs=4k {opts}\"\n"
    );
    std::fs::write(dir.join("s.toml"), job).unwrap();
    dir
}

fn blklab(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_blklab"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("running blklab")
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn averaged_logs_have_one_entry_per_window_and_direction() {
    let dir = scenario(
        "avg",
        "--rw=randrw --iodepth=4 --runtime=2 --time_based --numjobs=2 --write_bw_log=a --write_lat_log=a --write_iops_log=a --write_hist_log=a --log_avg_msec=100 --log_hist_msec=500",
    );
    let out = blklab(&dir, &["run", "s.toml", "--output-format", "summary"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for n in 1..=2 {
        // 2 s of I/O in 100 ms windows: 20 entries per direction
        for kind in ["bw", "iops"] {
            let name = format!("a_{kind}.{n}.log");
            let e = parse_log(&name, &read(&dir, &name)).unwrap();
            for d in 0..2 {
                let t: Vec<u64> = e
                    .iter()
                    .filter(|x| x.ddir == d)
                    .map(|x| x.time_ms)
                    .collect();
                assert_eq!(
                    t,
                    (1..=20).map(|k| k * 100).collect::<Vec<_>>(),
                    "{name} ddir {d}"
                );
            }
            assert!(e
                .iter()
                .all(|x| x.value > 0 && x.bs == 0 && x.offset.is_none()));
        }
        // I/O-path logs: an entry when a window is over, and the last partial one
        for kind in ["clat", "slat", "lat"] {
            let name = format!("a_{kind}.{n}.log");
            let e = parse_log(&name, &read(&dir, &name)).unwrap();
            for d in 0..2 {
                let c = e.iter().filter(|x| x.ddir == d).count();
                assert!((20..=21).contains(&c), "{name} ddir {d}: {c} entries");
            }
        }
        let name = format!("a_clat_hist.{n}.log");
        let h = parse_hist_log(&name, &read(&dir, &name)).unwrap();
        // every 500 ms per direction after the first sample: 3 or 4 in 2 s
        assert!((6..=8).contains(&h.len()), "{name}: {} entries", h.len());
        assert!(h.iter().all(|x| x.bins.len() == 1856 && x.bs == 4096));
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn per_io_logs_carry_offsets_and_one_line_per_io() {
    let dir = scenario(
        "unit",
        "--rw=randread --iodepth=1 --rate_iops=500 --runtime=1 --time_based --write_lat_log=u --write_bw_log=u --log_offset=1 --log_prio=1 --per_job_logs=0",
    );
    let out = blklab(&dir, &["run", "s.toml", "--output-format", "json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(
        &out.stdout[..out.stdout.iter().rposition(|&b| b == b'}').unwrap() + 1],
    )
    .expect("fio JSON");
    let ios = json["jobs"][0]["read"]["total_ios"].as_u64().unwrap();
    // per_job_logs=0: no job number in the names
    let e = parse_log("u_clat.log", &read(&dir, "u_clat.log")).unwrap();
    assert_eq!(e.len() as u64, ios);
    assert!(e
        .iter()
        .all(|x| x.bs == 4096 && x.offset.is_some_and(|o| o % 4096 == 0)));
    let bw = parse_log("u_bw.log", &read(&dir, "u_bw.log")).unwrap();
    assert_eq!(bw.len() as u64, ios);
    assert!(read(&dir, "u_bw.log")
        .lines()
        .next()
        .unwrap()
        .ends_with(", 0x0000"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bad_log_option_gives_fios_error() {
    let dir = scenario(
        "bad",
        "--rw=randread --runtime=1 --time_based --write_bw_log=x --log_offset=2",
    );
    let out = blklab(&dir, &["run", "s.toml"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("max value out of range: 2 (1 max)"), "{err}");
    assert!(!dir.join("x_bw.1.log").exists());
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn unwritable_report_is_an_error_and_leaves_nothing() {
    let dir = scenario("report", "--rw=randread --runtime=1 --time_based");
    let target = dir.join("no-such-dir/r.html");
    let out = blklab(
        &dir,
        &["run", "s.toml", "--report", target.to_str().unwrap()],
    );
    assert!(!out.status.success(), "an unwritable report path must fail");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--report") && err.contains("r.html"), "{err}");
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        left,
        vec![std::ffi::OsString::from("s.toml")],
        "something was written"
    );
    std::fs::remove_dir_all(&dir).ok();
}
