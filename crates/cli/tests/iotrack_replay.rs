//! Recorded workloads: a real blk-tracer capture (crates/host/tests/fixtures,
//! two fio jobs in two v1 blkio cgroups on loop0: /blklab-host/a did 2000 4k
//! random reads at 2000 IOPS for 1 s, /blklab-host/b 500 at 500 IOPS) turned
//! into a `blklab record` file, then
//! - replayed into the simulator as a scenario job (`replay = FILE`), with the
//!   recorded timing, as fast as possible, and under an io.max limit;
//! - reported with `blklab top --from FILE`.

use std::path::{Path, PathBuf};
use std::process::Command;

use blklab_host::events::{mkdev, LineParser, Parsed};
use blklab_host::record::RecordWriter;

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../host/tests/fixtures/blk_loop0_cgid_2fio.txt"
);

#[path = "../../host/tests/fixtures/capture_names.rs"]
mod capture_names;
use capture_names::Names;

const TICK_NS: u64 = 250_000_000;

/// The capture as a recording, with a /sys/block stat tick every 250 ms
/// from the first event (zero fields: the capture has no stat samples).
fn make_recording(dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(FIXTURE).unwrap();
    let mut p = LineParser::new();
    let mut events = Vec::new();
    for line in text.lines() {
        if let Ok(Parsed::Event(ev)) = p.parse_line(line) {
            events.push(ev);
        }
    }
    let t0 = events[0].time_ns;
    let dev = mkdev(7, 0);
    let mut w = RecordWriter::new(Vec::new(), t0, 1_700_000_000).unwrap();
    w.device(dev, "loop0").unwrap();
    let mut next_tick = t0;
    for ev in &events {
        while ev.time_ns >= next_tick {
            w.stat(next_tick, dev, "loop0", &[0; 11]).unwrap();
            next_tick += TICK_NS;
        }
        w.event(ev, &mut Names).unwrap();
    }
    w.stat(next_tick, dev, "loop0", &[0; 11]).unwrap();
    let bytes = w.finish().unwrap();
    let path = dir.join("capture.blkrec");
    std::fs::write(&path, bytes).unwrap();
    path
}

fn tmpdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("blklab-replay-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn scenario(dir: &Path, job: &str, extra: &str) -> PathBuf {
    let text = format!(
        r#"
[[device]]
name = "loop0"
devno = "7:0"
[device.model]
kind = "nullb"
completion_nsec = 50000
{extra}
[[job]]
{job}
"#
    );
    let p = dir.join("replay.toml");
    std::fs::write(&p, text).unwrap();
    p
}

fn run(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_blklab"))
        .args(args)
        .output()
        .unwrap()
}

/// (total_ios, io_bytes, runtime ms, clat mean ns) of the read side of the only job.
fn replay_stats(scenario: &Path) -> (u64, u64, u64, f64) {
    let o = run(&["run", scenario.to_str().unwrap(), "--output-format", "json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let r = &v["jobs"][0]["read"];
    (
        r["total_ios"].as_u64().unwrap(),
        r["io_bytes"].as_u64().unwrap(),
        r["runtime"].as_u64().unwrap(),
        r["clat_ns"]["mean"].as_f64().unwrap(),
    )
}

#[test]
fn replay_with_original_timing_asfast_and_under_io_max() {
    let dir = tmpdir("modes");
    let rec = make_recording(&dir);
    let recording = blklab_host::read_recording(&rec).unwrap();
    let a = recording
        .cgroups
        .iter()
        .find(|c| c.path == "/blklab-host/a")
        .unwrap();
    assert_eq!(a.ios.len(), 2000);
    let span_ms = (a.ios.last().unwrap().time_ns - a.ios[0].time_ns) / 1_000_000;
    let first_ms = a.ios[0].time_ns / 1_000_000;

    // recorded timing: the job lasts as long as the recorded stream
    let job = r#"label = "a"
replay = "capture.blkrec"
replay_cgroup = "/blklab-host/a"
timing = "original""#;
    let (ios, bytes, runtime, clat) = replay_stats(&scenario(&dir, job, ""));
    assert_eq!((ios, bytes), (2000, 2000 * 4096));
    let want = first_ms + span_ms;
    assert!(
        runtime.abs_diff(want) <= 2,
        "runtime {runtime} ms, recorded {want} ms"
    );
    // an unloaded 50 µs device, reaped as it completes: clat = 50 µs + reap
    // (1 µs) - the submit call's CPU time (2 µs), which clat does not cover
    // (an I/O completing while the job is busy issuing is reaped a little later)
    assert!((49_000.0..49_100.0).contains(&clat), "clat {clat}");

    // as fast as the queue depth allows: far shorter, all I/Os still there
    let fast = job.replace("\"original\"", "\"asfast\"");
    let (ios, _, runtime_fast, _) = replay_stats(&scenario(&dir, &fast, ""));
    assert_eq!(ios, 2000);
    assert!(
        runtime_fast * 10 < runtime,
        "asfast {runtime_fast} ms vs {runtime} ms"
    );

    // "what would io.max do to this workload": 500 IOPS stretch 2000 I/Os to ~4 s
    let capped = "[cgroup.\"/blklab-host/a\"]\n\"io.max\" = \"7:0 riops=500\"\n";
    let (ios, _, runtime_capped, clat_capped) = replay_stats(&scenario(&dir, job, capped));
    assert_eq!(ios, 2000);
    assert!(
        (3900..4100).contains(&runtime_capped),
        "runtime under riops=500: {runtime_capped} ms"
    );
    assert!(
        clat_capped > 100.0 * clat,
        "the backlog shows in clat: {clat_capped}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn replay_errors_name_the_problem() {
    let dir = tmpdir("errors");
    make_recording(&dir);
    let job = "replay = \"capture.blkrec\"\nreplay_cgroup = \"/nope\"";
    let o = run(&["check", scenario(&dir, job, "").to_str().unwrap()]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(2), "{out}");
    assert!(
        out.contains("no I/O from cgroup /nope (cgroups with I/O: /blklab-host/b, /blklab-host/a)"),
        "{out}"
    );
    let job = "replay = \"capture.blkrec\"\nreplay_cgroup = \"/blklab-host/a\"\ntiming = \"slow\"";
    let o = run(&["check", scenario(&dir, job, "").to_str().unwrap()]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("timing 'slow': expected \"original\" or \"asfast\""),
        "{out}"
    );
    let job = "cmdline = \"--name=x --rw=read\"\ntiming = \"asfast\"";
    let o = run(&["check", scenario(&dir, job, "").to_str().unwrap()]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("timing is only for a job with replay"),
        "{out}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn top_from_recording_reports_each_cgroup() {
    let dir = tmpdir("top");
    let rec = make_recording(&dir);
    let o = run(&[
        "top",
        "--from",
        rec.to_str().unwrap(),
        "--cgroup",
        "/blklab-host/a",
        "--cgroup",
        "/blklab-host/b",
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // each interval is one 250 ms tick: io/s x 0.25 = I/Os completed in it
    let mut sum = [0f64; 2];
    for l in out.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        for (k, cg) in ["/blklab-host/a", "/blklab-host/b"].iter().enumerate() {
            if f.first() == Some(&"loop0") && f.last() == Some(cg) {
                sum[k] += f[1].parse::<f64>().unwrap() * TICK_NS as f64 / 1e9;
            }
        }
    }
    assert_eq!(sum, [2000.0, 500.0], "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}
