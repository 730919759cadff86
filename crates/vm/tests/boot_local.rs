//! Boots a kernel the way a user's own build is booted, `local:DIR`: the
//! built-6.1-hz1000 cache entry's image and config copied into a directory
//! laid out as a kernel build tree (arch/x86/boot/bzImage, .config). The
//! release comes from the image's boot header, HZ from the config, no
//! module is loaded, and the guest probe finds what the config promises.
//!
//! Prints `SKIP: <reason>` and passes when qemu, busybox, fio or losetup
//! are missing, or the built kernel is not cached and cannot be built here.

use std::time::Duration;

use blklab_vm::probe::{self, Need};
use blklab_vm::{run_cases, BootOptions, RunOptions};

const BUILT: &str = "built-6.1-hz1000";

#[test]
fn a_local_build_tree_boots_and_is_what_its_image_says() {
    if let Some(e) = blklab_vm::preflight().first() {
        println!("SKIP: {e}");
        return;
    }
    let cache = blklab_vm::kernels::default_cache_dir().expect("kernel cache");
    if let Some(why) = blklab_vm::kbuild::unavailable(BUILT, &cache) {
        println!("SKIP: {why}");
        return;
    }
    let built = blklab_vm::ensure(BUILT, &cache).unwrap_or_else(|e| panic!("{BUILT}: {e}"));
    let tree = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tree.path().join("arch/x86/boot")).unwrap();
    std::fs::copy(&built.vmlinuz, tree.path().join("arch/x86/boot/bzImage")).unwrap();
    std::fs::copy(built.dir.join("config"), tree.path().join(".config")).unwrap();
    let name = format!("local:{}", tree.path().display());

    let opts = RunOptions {
        boot: BootOptions {
            wall_limit: Duration::from_secs(300),
            ..BootOptions::default()
        },
        ..RunOptions::default()
    };
    let run = run_cases(&name, &[probe::guest_info_case()], &opts)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    if let Some(why) = run.failure() {
        panic!("{name}: {why}");
    }
    assert_eq!(run.kernel.pin.name, name);
    assert_eq!(run.kernel.pin.release, "6.1.176-blklab-hz1000");
    assert_eq!(run.kernel.pin.series(), "6.1");
    assert!(run.kernel.modules.is_empty());
    assert!(run.setup_errors.is_empty(), "{:?}", run.setup_errors);
    let info = probe::parse(&run.cases[0].stdout).unwrap();
    assert_eq!(info.uname_r, "6.1.176-blklab-hz1000");
    assert_eq!(info.hz(), Some(1000));
    for need in [Need::IoLatency, Need::IoMax, Need::Iocost, Need::BfqWeight] {
        assert_eq!(info.cannot_run(&need), None, "{need:?}");
    }
}
