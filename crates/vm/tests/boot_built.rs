//! Boots the kernel built from Debian's 6.1 source at HZ=1000 (building it
//! into the cache first if needed; crates/vm/src/kbuild.rs) and runs the
//! guest probe: the booted kernel is the built one, its HZ is 1000, and
//! the probe finds what the stock kernels lack — io.latency and
//! io.prio.class in a cgroup — besides iocost, io.max, bfq's weights and
//! the iocost tracepoint.
//!
//! Prints `SKIP: <reason>` and passes when qemu, busybox, fio or losetup
//! are missing, or the kernel is not cached and cannot be built here (a
//! build tool missing, or BLKLAB_SKIP_KERNEL_BUILD=1).

use std::time::Duration;

use blklab_vm::probe::{self, Need};
use blklab_vm::{run_cases, BootOptions, RunOptions};

const KERNEL: &str = "built-6.1-hz1000";

#[test]
fn built_6_1_hz1000_offers_iolatency_and_ioprio() {
    if let Some(e) = blklab_vm::preflight().first() {
        println!("SKIP: {e}");
        return;
    }
    let cache = blklab_vm::kernels::default_cache_dir().expect("kernel cache");
    if let Some(why) = blklab_vm::kbuild::unavailable(KERNEL, &cache) {
        println!("SKIP: {why}");
        return;
    }
    let opts = RunOptions {
        boot: BootOptions {
            wall_limit: Duration::from_secs(300),
            ..BootOptions::default()
        },
        ..RunOptions::default()
    };
    let run = run_cases(KERNEL, &[probe::guest_info_case()], &opts)
        .unwrap_or_else(|e| panic!("{KERNEL}: {e}"));
    if let Some(why) = run.failure() {
        panic!("{KERNEL}: {why}");
    }
    // everything is built in: /init loads no module and reports no failed step
    assert!(run.kernel.modules.is_empty());
    assert!(run.setup_errors.is_empty(), "{:?}", run.setup_errors);
    let info = probe::parse(&run.cases[0].stdout).unwrap();
    println!("guest_info: {info:?}");
    assert_eq!(info.uname_r, "6.1.176-blklab-hz1000");
    assert_eq!(info.hz(), Some(1000));
    for need in [
        Need::IoLatency,
        Need::IoMax,
        Need::Iocost,
        Need::IoWeight,
        Need::BfqWeight,
        Need::Tracepoint("iocost:iocost_ioc_vrate_adj".into()),
    ] {
        assert_eq!(info.cannot_run(&need), None, "{need:?}");
    }
    assert!(
        info.child_io_files.iter().any(|f| f == "io.prio.class"),
        "{:?}",
        info.child_io_files
    );
    assert!(info.modules.is_empty(), "{:?}", info.modules);
}
