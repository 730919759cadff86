//! Boots a stock Debian kernel once (fetching it into the cache if needed)
//! and runs, in that one boot, the guest probe and two controller cases
//! whose figures are set by the controllers' own timing, not by the speed of
//! the emulated CPU:
//!
//! (a) io.max riops=200 on a loop device over tmpfs, fio 4k randread QD1,
//!     5 s: 200 IOPS within 2 %;
//! (b) blk-iocost at a fixed vrate (min=max=100, linear model with
//!     rrandiops=2000), two groups io.weight 100 and 300, 4k randread QD32
//!     each, 10 s: the 300-weight group gets 75 % within 2 % of the total,
//!     and the total is 2000 IOPS within 3 %.
//!
//! (b)'s device is an 8 GiB sparse tmpfs file: blk-iocost charges an I/O
//! as sequential when it lands within 16 MiB (LCOEF_RANDIO_PAGES) of the
//! group's previous one, so on a small device a share of "random" reads
//! would cost rseqiops, not rrandiops (on 64 MiB: 2560 IOPS instead of 2000).
//! Reading holes of a tmpfs file allocates nothing.
//!
//! Prints `SKIP: <reason>` and passes when qemu, busybox, fio or losetup
//! are missing.

use std::time::{Duration, Instant};

use blklab_vm::probe::{self, Need};
use blklab_vm::{run_cases, BootOptions, CaseSpec, RunOptions};

const IO_MAX: &str = r#"set -e
. /blklab/lib.sh
truncate -s 1G "$BLKLAB_TMP/iomax.img"
dev=$(blk_loop "$BLKLAB_TMP/iomax.img")
blk_dio "$dev" > "$BLKLAB_OUT/dio"
mkdir /sys/fs/cgroup/iomax
echo "$(blk_devno "$dev") riops=200" > /sys/fs/cgroup/iomax/io.max
blk_in_cgroup /sys/fs/cgroup/iomax $FIO --name=iomax --filename="$dev" \
    --rw=randread --bs=4k --iodepth=1 --ioengine=psync --direct=1 \
    --time_based --runtime=5 --output-format=json
"#;

const IOCOST: &str = r#"set -e
. /blklab/lib.sh
truncate -s 8G "$BLKLAB_TMP/iocost.img"
dev=$(blk_loop "$BLKLAB_TMP/iocost.img")
no=$(blk_devno "$dev")
echo "$no ctrl=user model=linear rbps=100000000 rseqiops=4000 rrandiops=2000 wbps=100000000 wseqiops=4000 wrandiops=2000" > /sys/fs/cgroup/io.cost.model
echo "$no enable=1 ctrl=user rpct=0 rlat=0 wpct=0 wlat=0 min=100 max=100" > /sys/fs/cgroup/io.cost.qos
for w in 100 300; do
    mkdir "/sys/fs/cgroup/w$w"
    echo "default $w" > "/sys/fs/cgroup/w$w/io.weight"
done
for w in 100 300; do
    blk_in_cgroup "/sys/fs/cgroup/w$w" $FIO --name="w$w" --filename="$dev" \
        --rw=randread --bs=4k --iodepth=32 --ioengine=libaio --direct=1 \
        --time_based --runtime=10 "$(blk_barrier_opt "w$w")" \
        --output-format=json --output="$BLKLAB_OUT/w$w.json" &
    eval "pid$w=\$!"
done
blk_barrier_release 2
wait "$pid100"
wait "$pid300"
cat /sys/fs/cgroup/io.stat > "$BLKLAB_OUT/io.stat"
"#;

fn read_iops(json: &[u8]) -> f64 {
    let v: serde_json::Value = serde_json::from_slice(json)
        .unwrap_or_else(|e| panic!("fio JSON: {e}: {}", String::from_utf8_lossy(json)));
    v["jobs"][0]["read"]["iops"]
        .as_f64()
        .unwrap_or_else(|| panic!("no jobs[0].read.iops in {v}"))
}

fn within(x: f64, want: f64, rel: f64) -> bool {
    (x / want - 1.0).abs() <= rel
}

/// Boots `kernel`, runs the probe and the cases; returns (probe, iops of
/// (a), (w100, w300) of (b) when run).
fn boot_and_check(kernel: &str, with_iocost: bool) {
    let missing = blklab_vm::preflight();
    if let Some(e) = missing.first() {
        println!("SKIP: {e}");
        return;
    }
    let mut cases = vec![
        probe::guest_info_case(),
        CaseSpec {
            name: "iomax".into(),
            script: IO_MAX.into(),
            time_limit_secs: 60,
        },
    ];
    if with_iocost {
        cases.push(CaseSpec {
            name: "iocost".into(),
            script: IOCOST.into(),
            time_limit_secs: 120,
        });
    }
    let opts = RunOptions {
        boot: BootOptions {
            wall_limit: Duration::from_secs(300),
            ..BootOptions::default()
        },
        ..RunOptions::default()
    };
    let t0 = Instant::now();
    let run = run_cases(kernel, &cases, &opts).unwrap_or_else(|e| panic!("{kernel}: {e}"));
    println!(
        "{kernel}: {} {}: initramfs {} MB, /init ready after {:.1} s wall ({} ms guest), whole boot {:.1} s, with fetch/build {:.1} s",
        run.kernel.pin.package,
        run.kernel.pin.version,
        run.initramfs_bytes >> 20,
        run.ready_wall_secs.unwrap_or(f64::NAN),
        run.ready_uptime_ms.unwrap_or(0),
        run.wall_secs,
        t0.elapsed().as_secs_f64()
    );
    if let Some(why) = run.failure() {
        panic!("{kernel}: {why}");
    }
    assert!(run.setup_errors.is_empty(), "{:?}", run.setup_errors);
    for c in &run.cases {
        println!(
            "  case {}: {:?}, {} ms guest, {:.1} s wall",
            c.name,
            c.outcome,
            c.virtual_elapsed_ms.unwrap_or(0),
            c.wall_secs.unwrap_or(f64::NAN)
        );
        assert!(
            c.succeeded(),
            "{}: {:?} {:?}\nstderr: {}",
            c.name,
            c.outcome,
            c.problems,
            String::from_utf8_lossy(&c.stderr)
        );
    }

    let info = probe::parse(&run.cases[0].stdout).unwrap();
    println!("  guest_info: {info:?}");
    assert_eq!(info.uname_r, run.kernel.pin.release);
    assert_eq!(info.hz(), Some(250));
    assert_eq!(info.cannot_run(&Need::IoMax), None);
    assert_eq!(info.cannot_run(&Need::Iocost), None);
    assert_eq!(info.cannot_run(&Need::IoWeight), None);
    assert_eq!(
        info.cannot_run(&Need::Tracepoint("iocost:iocost_ioc_vrate_adj".into())),
        None
    );

    let a = run.case("iomax").unwrap();
    let iops = read_iops(&a.stdout);
    let dio = String::from_utf8_lossy(&a.files["dio"]).trim().to_string();
    println!("  (a) io.max riops=200: {iops:.2} IOPS (loop dio={dio})");
    assert_eq!(Some(dio == "1"), info.loop_dio);
    assert!(within(iops, 200.0, 0.02), "(a) {iops} IOPS, want 200 ± 2 %");

    if with_iocost {
        let b = run.case("iocost").unwrap();
        let w100 = read_iops(&b.files["w100.json"]);
        let w300 = read_iops(&b.files["w300.json"]);
        let total = w100 + w300;
        let share = w300 / total;
        println!(
            "  (b) iocost: w100 {w100:.1} + w300 {w300:.1} = {total:.1} IOPS, w300 share {:.2} %",
            share * 100.0
        );
        println!(
            "      io.stat: {}",
            String::from_utf8_lossy(&b.files["io.stat"]).trim()
        );
        assert!(
            within(share, 0.75, 0.02),
            "(b) share {share}, want 0.75 ± 2 %"
        );
        assert!(
            within(total, 2000.0, 0.03),
            "(b) total {total}, want 2000 ± 3 %"
        );
    }
}

#[test]
fn debian_6_12_runs_io_max_and_iocost_cases_in_one_boot() {
    boot_and_check("debian-6.12", true);
}

/// By hand: `cargo test --release -p blklab-vm --test boot_debian -- --ignored --nocapture`.
#[test]
#[ignore = "a second kernel download and boot; run by hand"]
fn debian_6_1_runs_the_io_max_case() {
    boot_and_check("debian-6.1", true);
}
