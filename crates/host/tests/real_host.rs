//! End-to-end on the real kernel: a loop device on a tmpfs file, two cgroups
//! each running fio (4k randread at different rates), traced with `record`
//! (then `top_from_file`, `read_recording`) and with live `top`. Per-cgroup
//! IOs and bytes must match fio's JSON and the kernel's own per-cgroup stats
//! (io.stat on v2, blkio.throttle.io_serviced on a v1 blkio hierarchy), and the
//! Q2C figures must be consistent with the kernel's own latency accounting
//! (the device's stat file) and bounded by fio's latency.
//!
//! Needs root, fio, losetup, tracefs with the blk tracer; otherwise it prints
//! `SKIP: <reason>` and passes. Everything it creates is removed at the end,
//! also on failure (Drop guard). Run: `cargo test -p blklab-host --test real_host -- --nocapture`.

use blklab_host::iotrack::IotrackCounters;
use blklab_host::tracefs::current_tracer;
use blklab_host::{read_recording, record, top, top_from_file, RecordOptions, TopOptions};
use blklab_testkit::{fio_json, lab_or_skip, missing_basics, HostLab, LabSpec, Layout};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn skip_reason() -> Option<String> {
    if let Some(r) = missing_basics() {
        return Some(r);
    }
    match blklab_host::tracefs::check_environment() {
        Err(e) if e.is_environment() => return Some(e.to_string()),
        Err(e) => return Some(format!("tracefs check failed: {e}")),
        Ok(_) => {}
    }
    None
}

/// The loop device and groups a and b (cgroup v2 io where the host can give
/// it, else v1 blkio).
fn setup() -> Result<HostLab, String> {
    let lab = HostLab::setup(&LabSpec {
        name: "blklab-host-test",
        // 128 MiB of random data so that reads touch real pages
        file_mib: 128,
        random_data: true,
        groups: &["a", "b"],
        v1_only: false,
    })?;
    if lab.layout == Layout::V1 {
        // v1 only counts per-cgroup bios in blk-throttle, which needs a rule:
        // a limit far above the device's speed changes nothing else
        let mm = lab.devno()?;
        for g in ["a", "b"] {
            std::fs::write(
                lab.group_dir(g).join("blkio.throttle.read_iops_device"),
                format!("{mm} 100000000"),
            )
            .map_err(|e| e.to_string())?;
        }
    }
    Ok(lab)
}

/// (reads, read bytes) the kernel charged to group g
fn kernel_stat(lab: &HostLab, g: &str) -> (u64, u64) {
    let dir = lab.group_dir(g);
    let mm = lab.devno().unwrap_or_default();
    match lab.layout {
        Layout::V2 => {
            let s = std::fs::read_to_string(dir.join("io.stat")).unwrap_or_default();
            let line = s
                .lines()
                .find(|l| l.starts_with(&format!("{mm} ")))
                .unwrap_or("");
            let get = |k: &str| {
                line.split_whitespace()
                    .find_map(|kv| {
                        kv.strip_prefix(&format!("{k}="))
                            .and_then(|v| v.parse().ok())
                    })
                    .unwrap_or(0)
            };
            (get("rios"), get("rbytes"))
        }
        Layout::V1 => {
            let get = |f: &str| {
                let s = std::fs::read_to_string(dir.join(f)).unwrap_or_default();
                s.lines()
                    .find(|l| l.starts_with(&format!("{mm} Read ")))
                    .and_then(|l| l.split_whitespace().nth(2)?.parse().ok())
                    .unwrap_or(0)
            };
            (
                get("blkio.throttle.io_serviced"),
                get("blkio.throttle.io_service_bytes"),
            )
        }
    }
}

#[derive(Debug)]
struct FioRead {
    ios: u64,
    bytes: u64,
    clat_mean: f64,
    lat_mean: f64,
}

fn fio_read(path: &Path) -> FioRead {
    let job = fio_json::first_job(path).unwrap();
    let r = &job["read"];
    FioRead {
        ios: r["total_ios"].as_u64().unwrap(),
        bytes: r["io_bytes"].as_u64().unwrap(),
        clat_mean: r["clat_ns"]["mean"].as_f64().unwrap(),
        lat_mean: r["lat_ns"]["mean"].as_f64().unwrap(),
    }
}

/// The device's (reads completed, read ticks in ms) from /sys/block/DEV/stat
/// (Documentation/block/stat.rst): the kernel's own accounting of every read
/// request from its allocation (blk_mq_rq_time_init) to its end
/// (blk_account_io_done), summed in ns and printed in ms.
fn disk_reads(dev: &str) -> (u64, u64) {
    let s = std::fs::read_to_string(format!("/sys/block/{dev}/stat")).unwrap_or_default();
    let f: Vec<u64> = s
        .split_whitespace()
        .map(|v| v.parse().unwrap_or(0))
        .collect();
    (
        f.first().copied().unwrap_or(0),
        f.get(3).copied().unwrap_or(0),
    )
}

/// What one run of the two fio jobs produced: per group (name, fio's
/// figures, the kernel's per-cgroup (ios, bytes) delta), and the device's
/// (reads, read ticks ms) delta.
struct Workload {
    groups: Vec<(String, FioRead, (u64, u64))>,
    disk: (u64, u64),
}

fn within(a: f64, b: f64, frac: f64) -> bool {
    (a - b).abs() <= frac * b.abs().max(1.0)
}

/// Run both fio jobs while `tracer` runs; returns fio's figures and the kernel's stat deltas.
fn workload(lab: &mut HostLab, ready: &AtomicBool, tag: &str) -> Result<Workload, String> {
    let t0 = Instant::now();
    while !ready.load(Ordering::SeqCst) {
        // a condition wait: a loaded machine only delays the tracer's start
        if t0.elapsed() > Duration::from_secs(60) {
            return Err("tracer did not start".into());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let before: Vec<(u64, u64)> = ["a", "b"].iter().map(|g| kernel_stat(lab, g)).collect();
    let disk_before = disk_reads(&lab.dev_name());
    let dir = std::env::temp_dir();
    let outs: Vec<PathBuf> = ["a", "b"]
        .iter()
        .map(|g| dir.join(format!("blklab-host-{tag}-{g}-{}.json", std::process::id())))
        .collect();
    lab.spawn_randread("a", 4, 3000, 2, &outs[0])?;
    lab.spawn_randread("b", 1, 800, 2, &outs[1])?;
    lab.wait_fio()?;
    std::thread::sleep(Duration::from_millis(300));
    let disk_after = disk_reads(&lab.dev_name());
    let mut res = Vec::new();
    for (k, g) in ["a", "b"].iter().enumerate() {
        let after = kernel_stat(lab, g);
        let f = fio_read(&outs[k]);
        let _ = std::fs::remove_file(&outs[k]);
        res.push((
            g.to_string(),
            f,
            (after.0 - before[k].0, after.1 - before[k].1),
        ));
    }
    Ok(Workload {
        groups: res,
        disk: (disk_after.0 - disk_before.0, disk_after.1 - disk_before.1),
    })
}

fn check(label: &str, lab: &HostLab, w: &Workload, last: &[(String, IotrackCounters)]) {
    let res = &w.groups;
    let get = |p: &str| {
        last.iter()
            .find(|x| x.0 == p)
            .map(|x| x.1.clone())
            .unwrap_or_default()
    };
    let mut sum = 0;
    for (g, f, ks) in res {
        let c = get(&lab.rel(g));
        let ios = c.ios[0];
        let bytes = c.sectors[0] * 512;
        let q2c = c.tms[0] as f64 / ios.max(1) as f64;
        let d2c = c.dtms[0] as f64 / ios.max(1) as f64;
        eprintln!(
            "[{label}] {g}: traced ios={ios} bytes={bytes} q2c_mean={q2c:.0}ns d2c_mean={d2c:.0}ns | \
             fio ios={} bytes={} clat_mean={:.0}ns lat_mean={:.0}ns | kernel ios={} bytes={}",
            f.ios, f.bytes, f.clat_mean, f.lat_mean, ks.0, ks.1
        );
        assert!(
            within(ios as f64, f.ios as f64, 0.02),
            "{label} {g}: ios {ios} vs fio {}",
            f.ios
        );
        assert!(
            within(bytes as f64, f.bytes as f64, 0.02),
            "{label} {g}: bytes {bytes} vs fio {}",
            f.bytes
        );
        assert!(
            within(ios as f64, ks.0 as f64, 0.02),
            "{label} {g}: ios {ios} vs kernel {}",
            ks.0
        );
        assert!(
            within(bytes as f64, ks.1 as f64, 0.02),
            "{label} {g}: bytes {bytes} vs kernel {}",
            ks.1
        );
        // Upper bound: Q is inside io_submit and C is before fio reaps the
        // completion, while fio's lat runs from before io_submit to the reap:
        // every I/O's Q2C lies inside its lat, whatever the load.
        // No lower bound from fio: its clat also holds the delay before the
        // fio process runs again to reap (io_getevents returning, then fio's
        // timestamp), which on a CPU-starved 2-core host is as long as the
        // device time itself (CI: q2c 26 us vs clat 54 us). The lower bound
        // is the kernel's own accounting, checked below for the device.
        assert!(
            q2c <= f.lat_mean * 1.05,
            "{label} {g}: q2c {q2c} > fio lat {}",
            f.lat_mean
        );
        // D (issue to the driver) lies between Q and C
        assert!(
            d2c > 0.0 && d2c <= q2c,
            "{label} {g}: d2c {d2c} vs q2c {q2c}"
        );
        sum += ios;
    }
    let parent = get(lab.rel("").trim_end_matches('/'));
    assert_eq!(parent.ios[0], sum, "{label}: parent = a + b");
    // The kernel's read ticks time each request from its start time to
    // blk_account_io_done, nearly the traced Q..C of the same I/O: both are
    // kernel timestamps, so fio's scheduling does not enter. Not exactly:
    // the start time is the plug's cached clock (blk_time_get_ns), taken at
    // the first bio of an io_submit batch, so later bios of the batch start
    // before their Q (measured: ticks 2-15 % above Q2C, e.g. 61 vs 53 us
    // per I/O).
    // A floor of 75 % of the kernel's figure leaves room for that and still
    // catches lost or misattributed completion times; 2 ms covers the stat
    // file's truncation to whole ms at both reads.
    let (disk_ios, disk_ms) = w.disk;
    let q2c_ms = parent.tms[0] as f64 / 1e6;
    eprintln!(
        "[{label}] device: stat reads={disk_ios} read_ticks={disk_ms}ms ({:.0}ns/io) | traced ios={sum} q2c_total={q2c_ms:.1}ms ({:.0}ns/io)",
        disk_ms as f64 * 1e6 / disk_ios.max(1) as f64,
        q2c_ms * 1e6 / sum.max(1) as f64
    );
    assert!(
        within(sum as f64, disk_ios as f64, 0.02),
        "{label}: traced ios {sum} vs device stat reads {disk_ios}"
    );
    assert!(
        q2c_ms >= 0.75 * disk_ms as f64 - 2.0,
        "{label}: traced q2c total {q2c_ms:.1} ms vs the device's read ticks {disk_ms} ms"
    );
    assert!(get("/").ios[0] >= sum);
}

#[test]
fn two_cgroups_fio_record_replay_and_top() {
    let Some(mut lab) = lab_or_skip(skip_reason(), setup) else {
        return;
    };
    eprintln!("layout {:?}, device {}", lab.layout, lab.dev_name());
    let tracer_before = current_tracer();
    let dev = lab.dev_name();

    // 1. record, then replay the file
    let rec_path =
        std::env::temp_dir().join(format!("blklab-host-test-{}.rec", std::process::id()));
    let ready = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let ropts = RecordOptions {
        devices: vec![dev.clone()],
        output: rec_path.clone(),
        stat_interval_ms: 500,
        stop: Some(stop.clone()),
        ready: Some(ready.clone()),
        ..Default::default()
    };
    let h = std::thread::spawn(move || record(&ropts));
    let res = workload(&mut lab, &ready, "rec");
    stop.store(true, Ordering::SeqCst);
    let summary = h.join().unwrap().expect("record");
    let res = res.expect("workload");
    eprintln!("record: {summary:?}");
    assert_eq!(summary.parse.malformed, 0);
    let mut text = Vec::new();
    let topts = TopOptions {
        cgroups: vec![lab.rel("a"), lab.rel("b")],
        ..Default::default()
    };
    let s = top_from_file(&rec_path, &topts, &mut text).expect("top --from");
    let text = String::from_utf8(text).unwrap();
    eprintln!("{}", text.lines().take(8).collect::<Vec<_>>().join("\n"));
    assert!(s.intervals >= 3, "{text}");
    assert!(text.contains(&lab.rel("a")) && text.contains("Device"));
    // ancestors too: replay again without the -g filter to get the parent
    let s = top_from_file(&rec_path, &TopOptions::default(), &mut std::io::sink()).unwrap();
    check("record+replay", &lab, &res, &s.last[0].cgroups);
    let rec = read_recording(&rec_path).expect("read_recording");
    let _ = std::fs::remove_file(&rec_path);
    assert!(!rec.truncated);
    for (g, f, _) in &res.groups {
        let st = rec
            .cgroups
            .iter()
            .find(|c| c.path == lab.rel(g))
            .expect("stream");
        assert!(within(st.ios.len() as f64, f.ios as f64, 0.02));
        assert!(st.ios.iter().all(|io| io.bytes == 4096));
        assert!(st.ios.windows(2).all(|w| w[0].time_ns <= w[1].time_ns));
    }

    // 2. live top
    let ready = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let topts = TopOptions {
        devices: vec![dev.clone()],
        interval_ms: 500,
        extended: true,
        stop: Some(stop.clone()),
        ready: Some(ready.clone()),
        ..Default::default()
    };
    let h = std::thread::spawn(move || {
        let mut out = Vec::new();
        let r = top(&topts, &mut out);
        (r, out)
    });
    let res = workload(&mut lab, &ready, "top");
    stop.store(true, Ordering::SeqCst);
    let (r, out) = h.join().unwrap();
    let s = r.expect("top");
    let res = res.expect("workload");
    let out = String::from_utf8(out).unwrap();
    assert!(out.contains("mean(us)"), "extended header");
    eprintln!(
        "top: intervals={} parse={:?} account={:?}",
        s.intervals, s.parse, s.account
    );
    check("live top", &lab, &res, &s.last[0].cgroups);
    // tracefs is back as it was (unmounted again if it was not mounted)
    assert_eq!(current_tracer(), tracer_before);
    let en =
        std::fs::read_to_string(format!("/sys/class/block/{dev}/trace/enable")).unwrap_or_default();
    assert_eq!(en.trim(), "0");
}
