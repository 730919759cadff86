//! The quiet-machine calibration of a tmpfs loop device, fitted again from
//! its printed figures and validated against its real validation figures:
//! the fit, the printed block and the validation together (a module of its
//! own because it uses all three).

use crate::facts::DeviceFacts;
use crate::fio_run::{DirFigures, FioResult};
use crate::fit::{fit, HostCosts, HostFacts, LoopFile, Measured};
use crate::plan::{self, Job};
use crate::sim_run;
use crate::validate::Row;
use blklab_core::drivers::ModelSpec;

/// One fio figure line of calibrate's table: (IOPS, B/s, clat mean, p50,
/// p99 in µs, slat mean in ns).
fn fig(iops: f64, bw: f64, mean_us: f64, p50_us: f64, p99_us: f64, slat_ns: f64) -> DirFigures {
    DirFigures {
        iops,
        bw_bytes_per_s: bw,
        ios: (iops * 3.0) as u64,
        slat_mean_ns: slat_ns,
        clat_mean_ns: mean_us * 1e3,
        clat_pct_ns: vec![(50.0, p50_us * 1e3), (99.0, p99_us * 1e3)],
        ..DirFigures::default()
    }
}

fn one(d: DirFigures, write: bool) -> FioResult {
    if write {
        FioResult {
            write: d,
            ..FioResult::default()
        }
    } else {
        FioResult {
            read: d,
            ..FioResult::default()
        }
    }
}

/// A live calibration's printed figures: the measurement table's rows
/// (job, IOPS, B/s, clat mean, p50, p99 µs, slat ns, writes; the big
/// blocks' B/s from the io.cost.model line, rbps and wbps), the 70/30 mix's
/// row (IOPS, MiB/s, mean, p50, p99), fio's CPU share at QD64, and the real
/// side of the validation table (job, IOPS, clat mean, p99 µs).
struct Fixture {
    rows: [(String, f64, f64, f64, f64, f64, f64, bool); 10],
    mix: (f64, f64, f64, f64, f64),
    q64_cpu_pct: f64,
    real: [(&'static str, f64, f64, f64); 4],
}

/// The quiet-machine calibration of a 256 MiB tmpfs loop device (load
/// 0.3–2; the stop note's issue-20 table, raw output in
/// /work/notes/calib/tmpfs2.out). fio's QD1 slat is not in the table:
/// 1/IOPS − clat mean − 0.5 µs of fio's own time per I/O (the 0.5 µs from
/// the run before, which printed its slat).
fn quiet_tmpfs() -> Fixture {
    let mib = 1048576.0;
    let q1_slat = 1e9 / 33442.0 - 18.5e3 - 500.0;
    #[rustfmt::skip]
    let rows = [
        (plan::LAT_READ_4K.to_string(), 33442.0, 130.6 * mib, 18.5, 1.3, 71.2, q1_slat, false),
        (plan::LAT_WRITE_4K.to_string(), 27412.0, 107.1 * mib, 24.3, 18.8, 73.2, 0.0, true),
        (plan::LAT_READ_64K.to_string(), 17252.0, 1078.2 * mib, 38.2, 44.3, 98.8, 0.0, false),
        (plan::rand_read_id(8), 208698.0, 815.2 * mib, 35.1, 28.5, 89.6, 0.0, false),
        (plan::rand_read_id(64), 274437.0, 1072.0 * mib, 230.2, 205.8, 399.4, 2643.0, false),
        (plan::RAND_WRITE_QD64.to_string(), 261856.0, 1022.9 * mib, 241.4, 207.9, 485.4, 0.0, true),
        (plan::SEQ_READ_4K.to_string(), 286902.0, 1120.7 * mib, 220.2, 205.8, 391.2, 0.0, false),
        (plan::SEQ_WRITE_4K.to_string(), 260238.0, 1016.6 * mib, 242.8, 214.0, 440.3, 0.0, true),
        (plan::SEQ_READ_BIG.to_string(), 304.0, 5102464426.0, 2775.4, 2670.6, 4014.1, 0.0, false),
        (plan::SEQ_WRITE_BIG.to_string(), 242.0, 4056030241.0, 3349.4, 3031.0, 4685.8, 0.0, true),
    ];
    Fixture {
        rows,
        mix: (174641.0, 682.2, 125.2, 107.0, 252.9),
        q64_cpu_pct: 0.0,
        real: [
            ("val-randread-4k-qd1", 33631.0, 19.3, 64.3),
            ("val-randread-4k-qd32", 274732.0, 113.6, 226.3),
            ("val-write-128k-qd8", 33505.0, 231.5, 374.8),
            ("val-randrw-70-30-4k-qd16", 264797.0, 57.6, 125.4),
        ],
    }
}

/// Refit a fixture's figures with the host facts `hf` and validate the
/// printed block against the fixture's real validation figures: the
/// printed block, the validation rows and table.
fn refitted(fx: &Fixture, hf: HostFacts) -> (String, Vec<Row>, String) {
    let mib = 1048576.0;
    let mut m = Measured::new();
    for (id, iops, bw, mean, p50, p99, slat, w) in fx.rows.iter().cloned() {
        let mut r = one(fig(iops, bw, mean, p50, p99, slat), w);
        if id == plan::rand_read_id(64) {
            r.cpu_pct = fx.q64_cpu_pct;
        }
        m.insert(id, r);
    }
    let (iops, mibs, mean, p50, p99) = fx.mix;
    let mix = fig(iops, mibs * mib, mean, p50, p99, 0.0);
    m.insert(
        plan::MIX.to_string(),
        FioResult {
            read: DirFigures {
                iops: mix.iops * 0.7,
                ..mix.clone()
            },
            write: DirFigures {
                iops: mix.iops * 0.3,
                ios: mix.ios / 3,
                ..mix
            },
            ..FioResult::default()
        },
    );
    let f = DeviceFacts {
        name: "loop0".into(),
        devno: "7:0".into(),
        size_bytes: 256 << 20,
        max_sectors_kb: 1280,
        logical_block_size: 512,
        nr_requests: 128,
        rotational: false,
    };
    let jobs = plan::plan(true, 256 << 20, true);
    let simf = |model: &ModelSpec, h: &HostCosts, j: &Job| {
        sim_run::simulate(&f.device(model.clone(), h.idle_wake_ns), h.cpu, &j.args)
    };
    let fitted = fit(&m, &f, None, &simf, &jobs, hf).unwrap();
    // validation as calibrate runs it: the printed block read back
    let block = crate::render::device_block(&f, &fitted, fitted.chosen);
    let (dev, cpu) = sim_run::block_from_toml(&block).unwrap();
    let cpu = cpu.unwrap_or(fitted.host.cpu);
    let mut rows = Vec::new();
    for (j, (id, iops, mean, p99)) in crate::validate::jobs(true, true).iter().zip(fx.real) {
        assert_eq!(j.id, id);
        let s = sim_run::simulate(&dev, cpu, &j.args).unwrap();
        let r = one(fig(iops, 0.0, mean, mean, p99, 0.0), false);
        rows.extend(crate::validate::compare(id, &r, &s));
    }
    let table = crate::validate::table(&rows, false);
    println!("{block}\n{table}\n{:?}", fitted.notes);
    (block, rows, table)
}

fn quiet_run_refitted(hf: HostFacts) -> (String, Vec<Row>, String) {
    let out = refitted(&quiet_tmpfs(), hf);
    let idle_wake_ns = out
        .0
        .lines()
        .find_map(|l| l.strip_prefix("idle_wake_ns = "))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok());
    assert!(idle_wake_ns > Some(7_000), "{}", out.0);
    out
}

/// The figures that missed, except the clat p99 of the jobs `excused`.
fn missed_but_p99_of(rows: &[Row], excused: &[&str]) -> Vec<String> {
    rows.iter()
        .filter(|r| !r.pass())
        .filter(|r| !(r.metric == "clat p99" && excused.contains(&r.job.as_str())))
        .map(|r| format!("{} {}", r.job, r.metric))
        .collect()
}

/// The free-host `ssd` fit (what calibrate printed before it knew the
/// host's CPUs; still what it prints for a device that is not a loop over
/// a file in memory).
#[test]
fn the_quiet_tmpfs_loop_calibration_validates_when_refitted() {
    let (_, rows, table) = quiet_run_refitted(HostFacts::default());
    // Before idle_wake_ns and the per-direction unit bandwidths the same
    // figures gave QD1 IOPS +40 % and the 128 KiB writes +21 % (IOPS) and
    // -15.5 % (clat mean). Still missed: the p99 of the two deep jobs (real
    // p99 twice the mean at QD32, 1.6× for the writes; the model's 1.5× and
    // 1.2×). That spread comes from the loop worker and fio sharing two CPUs
    // (the worker preempted, completions reaped in bursts), CPU contention
    // the model does not have (docs/fidelity.md); a heavier per-request
    // tail would break the QD1 p99, which passes.
    let host_tails = ["val-randread-4k-qd32", "val-write-128k-qd8"];
    let missed = missed_but_p99_of(&rows, &host_tails);
    assert!(missed.is_empty(), "{missed:?}\n{table}");
    assert!(rows.iter().filter(|r| r.pass()).count() >= 10, "{table}");
}

/// The same run fitted as calibrate now fits a tmpfs loop device: the loop
/// worker as a task on the host's 2 CPUs (`loop_fit`) and the host's
/// background work (`stall_fit`). Every figure passes. Without the stalls
/// the p99s of the deep jobs missed by about −33 % (QD32), −30 % (128 KiB
/// writes) and −25 % (the 70/30 mix): their real spread grows with the
/// queue depth (p99 − mean 55, 113 and 170 µs at QD8, 32 and 64) while the
/// whole per-I/O time is 3.64 µs, which neither a constant worker cost nor
/// an exponential tail expresses; stalls of the busy CPUs (fitted from QD8
/// and QD64 of the measurement, not from these validation jobs: 88 µs
/// every 5.7 ms per CPU) do.
#[test]
fn the_quiet_tmpfs_loop_refitted_with_the_worker_on_two_cpus() {
    let hf = HostFacts {
        cpus: Some(2),
        loop_file: Some(LoopFile::Tmpfs),
    };
    let (block, rows, table) = quiet_run_refitted(hf);
    assert!(
        block.contains("[host]\ncpus = 2") && block.contains("backing = \"tmpfs\""),
        "{block}"
    );
    assert!(block.contains("stall_interval_ns = "), "{block}");
    let missed = missed_but_p99_of(&rows, &[]);
    assert!(missed.is_empty(), "{missed:?}\n{table}");
    assert_eq!(rows.iter().filter(|r| r.pass()).count(), 12, "{table}");
}

/// The file-backed loop device (a 256 MiB file on ext4, its pages cached;
/// /work/notes/calib6/file-2.out, load 1.2–1.6): not over tmpfs, so the
/// `ssd` model on the host's CPUs, fio CPU-bound at QD64 (96 %).
fn file_loop() -> Fixture {
    let mib = 1048576.0;
    #[rustfmt::skip]
    let rows = [
        (plan::LAT_READ_4K.to_string(), 32365.0, 126.4 * mib, 21.3, 26.5, 54.0, 9230.0, false),
        (plan::LAT_WRITE_4K.to_string(), 19310.0, 75.4 * mib, 40.9, 44.3, 75.3, 0.0, true),
        (plan::LAT_READ_64K.to_string(), 34965.0, 2185.3 * mib, 17.5, 13.0, 46.8, 0.0, false),
        (plan::rand_read_id(8), 242313.0, 946.5 * mib, 29.7, 28.5, 67.1, 0.0, false),
        (plan::rand_read_id(64), 248192.0, 969.5 * mib, 254.5, 242.7, 544.8, 3092.0, false),
        (plan::RAND_WRITE_QD64.to_string(), 162475.0, 634.7 * mib, 391.1, 337.9, 921.6, 0.0, true),
        (plan::SEQ_READ_4K.to_string(), 254147.0, 992.8 * mib, 248.4, 240.6, 403.5, 0.0, false),
        (plan::SEQ_WRITE_4K.to_string(), 253911.0, 991.8 * mib, 249.4, 199.7, 440.3, 0.0, true),
        (plan::SEQ_READ_BIG.to_string(), 663.0, 11127060978.0, 1027.4, 987.1, 1810.4, 0.0, false),
        (plan::SEQ_WRITE_BIG.to_string(), 462.0, 7742900419.0, 1565.1, 1531.9, 2146.3, 0.0, true),
    ];
    Fixture {
        rows,
        mix: (150491.0, 587.9, 145.4, 108.0, 333.8),
        q64_cpu_pct: 96.0,
        real: [
            ("val-randread-4k-qd1", 35271.0, 19.0, 57.6),
            ("val-randread-4k-qd32", 251521.0, 123.9, 250.9),
            ("val-write-128k-qd8", 60357.0, 125.5, 238.6),
            ("val-randrw-70-30-4k-qd16", 164763.0, 94.2, 234.5),
        ],
    }
}

/// The file-backed loop refitted as calibrate fits it: the loop worker
/// over a cached file (`backing = "file"`) on the host's 2 CPUs, its writes
/// at their own cost (`worker_write_ns`: 162k random write IOPS against 248k
/// reads), the busy CPUs' stalls. QD1, QD32 and the 128 KiB writes pass but
/// for the deep p99s (+27 % and +30 %: the stalls fitted from QD8 and QD64
/// overshoot QD32 here). The 70/30 mix misses all three figures (+29 %
/// IOPS): on this file a mix costs more than its parts (150k real against
/// about 215k from the pure read and write rates), an interference of the
/// file system the model does not have (docs/fidelity/devices.md).
#[test]
fn the_file_backed_loop_refitted_as_a_cached_file_loop() {
    let hf = HostFacts {
        cpus: Some(2),
        loop_file: Some(LoopFile::Cached),
    };
    let (block, rows, table) = refitted(&file_loop(), hf);
    assert!(
        block.contains("backing = \"file\"") && block.contains("worker_write_ns = "),
        "{block}"
    );
    let deep = ["val-randread-4k-qd32", "val-write-128k-qd8"];
    let missed: Vec<String> = missed_but_p99_of(&rows, &deep)
        .into_iter()
        .filter(|m| !m.starts_with("val-randrw"))
        .collect();
    assert!(missed.is_empty(), "{missed:?}\n{table}");
}

/// The same figures fitted as `--model ssd` on the host's CPUs: fio's CPU
/// sets the rate at depth (`irq_ns` from QD64's time per I/O; with the fixed
/// 3 µs the model ran QD32 at 153k against 252k real, −39.5 %), so QD1 and
/// QD32 pass but for QD32's p99; the 128 KiB writes run 15 % slow (six
/// units where one worker copies in turn) and the mix's p99 is short.
#[test]
fn the_file_backed_loop_refitted_as_an_ssd_on_two_cpus() {
    let hf = HostFacts {
        cpus: Some(2),
        loop_file: None,
    };
    let (block, rows, table) = refitted(&file_loop(), hf);
    assert!(
        block.contains("[host]\ncpus = 2") && block.contains("kind = \"ssd\""),
        "{block}"
    );
    let missed: Vec<String> = missed_but_p99_of(&rows, &["val-randread-4k-qd32"])
        .into_iter()
        .filter(|m| m.starts_with("val-randread"))
        .collect();
    assert!(missed.is_empty(), "{missed:?}\n{table}");
}
