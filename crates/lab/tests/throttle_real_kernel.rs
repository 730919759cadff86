//! The seed's fio job under today's blk-throttle, on the real kernel and in
//! the simulator (examples/throttle-real-kernel.toml: throttle.wait=current,
//! 100 ms slice, HZ=250), compared figure by figure.
//!
//! The real side needs root, fio, losetup, a tmpfs at /dev/shm and the cgroup
//! v1 blkio hierarchy at /sys/fs/cgroup/blkio (cgroup v2's io.max cannot be
//! enabled on the test VM; v1's blkio.throttle.read_iops_device drives the
//! same blk-throttle code, flat instead of hierarchical). Without them the
//! test prints `SKIP: <reason>` and passes.
//!
//! Tolerances come from six real runs on the test VM (kernel 6.18, HZ=250,
//! 2 vCPUs shared with other builds; loop on tmpfs, direct I/O); "held" is
//! the share of IOs above 50 ms:
//!
//! | run | IOPS | clat mean | p50 | p90 | p95 | p99 | max (ms) |
//! |---|---|---|---|---|---|---|---|
//! | 10 s | 100.04 | 5.965 | 0.041 | 4.112 | 59.507 | 59.507 | 63.321 |
//! | 25 s | 99.99 | 5.702 | 0.033 | 15.794 | 55.837 | 59.507 | 70.781 |
//! | 25 s | 100.01 | 5.837 | 0.032 | 12.911 | 58.982 | 62.652 | 67.033 |
//! | 25 s | 100.01 | 5.868 | 0.035 | 6.062 | 58.982 | 60.555 | 63.470 |
//! | 20 s | 100.01 | 5.889 | 0.025 | 7.897 | – | 59.507 | 67.083 |
//! | 20 s | 99.98 | 5.786 | 0.033 | 10.289 | – | 63.177 | 84.249 |
//! | sim | 100 | 5.997 | 0.034 | 0.034 | 59.507 | 59.507 | 63.674 |
//!
//! Held share: real 8.0-9.9 %, sim 10.0 %. The maximum is the host's: a
//! late wake-up of fio after the release adds directly to the held IO's clat.
//!
//! p90 is not compared: exactly 10 % of the IOs wait, so the 90th
//! percentile sits on the edge between the two modes and moves with every
//! late wake-up of fio on a busy host. The share of IOs that waited is
//! compared instead.

use std::path::Path;

use blklab_testkit::{fio_json, missing_basics, missing_v1_blkio, HostLab, LabSpec};

use blklab_lab::report::Row;
use blklab_lab::runner;
use blklab_lab::scenario::Scenario;

const NAME: &str = "blklab-e2e-throttle";
const RUNTIME_S: u32 = 20;

/// Why the real side cannot run here, if it cannot.
fn missing() -> Option<String> {
    missing_basics().or_else(missing_v1_blkio)
}

/// One real run of the seed job; fio's JSON object for the job.
fn real_run() -> serde_json::Value {
    // the loop device (1 GiB sparse) and one v1 blkio group: the lab's own
    let mut lab = HostLab::setup(&LabSpec {
        name: NAME,
        file_mib: 1024,
        random_data: false,
        groups: &[],
        v1_only: true,
    })
    .unwrap();
    let majmin = lab.devno().unwrap();
    let dio = std::fs::read_to_string(format!("/sys/block/{}/loop/dio", lab.dev_name()))
        .unwrap_or_default();
    std::fs::write(
        lab.group_dir("").join("blkio.throttle.read_iops_device"),
        format!("{majmin} 100"),
    )
    .unwrap();
    let out = std::env::temp_dir().join(format!("{NAME}-{}.json", std::process::id()));
    lab.spawn_fio(
        "",
        &format!(
            "--name=file1 --rw=randread --bs=4k --direct=1 --numjobs=1 --time_based=1 \
             --runtime={RUNTIME_S} --group_reporting=1 --size=1G --ioengine=libaio --iodepth=1 \
             --rate_iops=50000 --norandommap=1 --thinktime=4ms --output-format=json --output={}",
            out.display()
        ),
    )
    .unwrap();
    lab.wait_fio().unwrap();
    let job = fio_json::first_job(&out).unwrap();
    let _ = std::fs::remove_file(&out);
    eprintln!("real: {} ({majmin}) dio={}", lab.dev_path(), dio.trim());
    job
}

#[test]
fn current_kernel_matches_the_real_one() {
    if let Some(why) = missing() {
        println!("SKIP: {why}");
        return;
    }
    // the simulator
    let sc = Scenario::load(Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/throttle-real-kernel.toml"
    )))
    .unwrap();
    assert_eq!(sc.config.switches.get("throttle.wait"), "current");
    let out = runner::run(&sc, &sc.config, None).unwrap();
    let g = &out.groups[0];
    let sim = Row::from_group(g);
    let m = g.stats.mixed();
    let p50_sim = m.clat.hist.percentiles(&[50.0])[0].1 as f64 / 1e6;
    let held_sim = {
        let (mut n, mut held) = (0u64, 0u64);
        for (v, c) in m.clat.hist.bins() {
            n += c;
            if v > 50_000_000 {
                held += c;
            }
        }
        held as f64 / n as f64
    };

    // The real kernel, run again while this host stalls (a CPU of the VM
    // descheduled for 0.1-3 s when the machine is busy: fio misses
    // hundreds of its 10 ms periods and the IOPS fall below the limit,
    // which no kernel behaviour explains; blklab_host::stall). If every
    // run stalled, only the simulator's side and the bounds a stall cannot
    // break are checked.
    let tries = blklab_host::stall::until_unstalled(3, || Ok::<_, ()>(real_run())).unwrap();
    let stalled = !tries.clean();
    eprintln!(
        "host stalls, latest wake-up per run: {} ms{}",
        blklab_host::stall::late_list(&tries.stalls),
        if stalled {
            " (every run stalled: the rate and latencies are not judged)"
        } else {
            ""
        }
    );
    let job = tries.value;
    let r = &job["read"];
    let c = &r["clat_ns"];
    let ms = |v: &serde_json::Value| v.as_f64().unwrap() / 1e6;
    let pct = |k: &str| ms(&c["percentile"][k]);
    let iops = r["iops"].as_f64().unwrap();
    let mean = ms(&c["mean"]);
    let max = ms(&c["max"]);
    let (p50, p90, p99) = (pct("50.000000"), pct("90.000000"), pct("99.000000"));
    // fio's latency_ms buckets: percent of IOs in (previous key, key] ms
    let lm = &job["latency_ms"];
    let held_real: f64 = ["100", "250", "500", "750", "1000", "2000", ">=2000"]
        .iter()
        .map(|k| lm[*k].as_f64().unwrap_or(0.0))
        .sum::<f64>()
        / 100.0;
    eprintln!(
        "| | IOPS | clat mean | p50 | p90 | p99 | max | held |\n\
         | real | {iops:.2} | {mean:.3} | {p50:.3} | {p90:.3} | {p99:.3} | {max:.3} | {held_real:.3} |\n\
         | sim | {:.2} | {:.3} | {p50_sim:.3} | {:.3} | {:.3} | {:.3} | {held_sim:.3} |",
        sim.iops, sim.clat_ms, sim.p90, sim.p99, sim.clat_max_ms
    );
    // the simulator paces at the limit, and its mechanism shows
    assert!((sim.iops - 100.0).abs() <= 1.0, "sim IOPS {}", sim.iops);
    assert!(
        held_sim > 0.05 && p50_sim < 0.2,
        "held {held_sim}, p50 {p50_sim}"
    );
    // a stalled host never passes the limit either
    assert!(iops <= sim.iops + 1.5, "IOPS {iops} vs {}", sim.iops);
    if stalled {
        return;
    }
    // same rate: the limit, to within fio's rounding (real 99.99-100.04)
    assert!(
        (iops - sim.iops).abs() <= 1.5,
        "IOPS {iops} vs {}",
        sim.iops
    );
    // One IO in ten waits ~58 ms: mean ~6 ms (real 5.70-5.97 on a quiet
    // host). The rate is fixed, so each IO's period is 10 ms = clat +
    // thinktime + fio's own time: when a busy host wakes fio late from its
    // 4 ms thinktime, the budget has grown meanwhile and fewer IOs are held
    // (measured beside a parallel build: mean 4.46 ms, 1.5 % held). So the
    // real figures can only fall below the simulator's, which wakes fio on
    // time: they are bounded from above, and the slice mechanism must still
    // show (some IOs held for the next window).
    assert!(mean <= sim.clat_ms + 0.6, "mean {mean} vs {}", sim.clat_ms);
    assert!(
        held_real > 0.0 && held_real <= held_sim + 0.03,
        "held share {held_real} vs {held_sim}"
    );
    // the IOs that pass: tens of µs on both
    assert!(p50 < 0.2 && p50_sim < 0.2, "p50 {p50} vs {p50_sim}");
    // the held IOs wait for the next 100 ms window (real p99 59.5-62.7 on a
    // quiet host); p99 is a held IO's wait only while more than 1 % are
    // held. A late-woken fio submits later in the window and so waits less:
    // on a loaded host (load 6-9, p99 and max came out below the
    // simulator's) only the upper bound holds.
    if held_real > 0.02 {
        assert!(p99 <= sim.p99 + 4.0, "p99 {p99} vs {}", sim.p99);
    }
    // the longest wait: a window's wait plus the host's noise (real 63.3-84.2
    // quiet, 56.0 and 112.7 loaded: a held IO whose completion is then reaped
    // by a descheduled fio). The noise has no bound on a busy host, so only
    // the window shows: an IO counted as held waited more than 50 ms. The
    // held IOs' wait itself is bounded by p99 above.
    assert!(max > 50.0, "max {max} vs {}", sim.clat_max_ms);
}
