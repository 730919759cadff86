//! Same scenario and seed: byte-identical output. Another seed: different draws.

mod common;
use common::*;

#[test]
fn same_seed_byte_identical_json_and_text() {
    for ex in [
        "examples/ssd-mixed.toml",
        "examples/linear-two-cgroups.toml",
    ] {
        let a = blklab(&["run", ex, "--output-format", "json"]);
        let b = blklab(&["run", ex, "--output-format", "json"]);
        assert!(a.status.success(), "{}", stderr(&a));
        assert_eq!(a.stdout, b.stdout, "{ex}: JSON differs between two runs");
        let a = blklab(&["run", ex]);
        let b = blklab(&["run", ex]);
        assert_eq!(a.stdout, b.stdout, "{ex}: text differs between two runs");
    }
}

#[test]
fn another_seed_changes_random_draws() {
    let a = blklab(&[
        "run",
        "examples/ssd-mixed.toml",
        "--output-format",
        "json",
        "--seed",
        "1",
    ]);
    let b = blklab(&[
        "run",
        "examples/ssd-mixed.toml",
        "--output-format",
        "json",
        "--seed",
        "2",
    ]);
    assert!(a.status.success() && b.status.success());
    assert_ne!(a.stdout, b.stdout);
}

#[test]
fn host_cpus_same_seed_byte_identical() {
    // a host with CPUs and every tail drawn: the same seed gives the same
    // bytes, and the fio report carries the jobs' CPU figures
    let toml = "[run]\nseed = 3\n[host]\ncpus = 1\nirq_tail_ns = 800\nwake_tail_ns = 3000\n\
                timer_tail_ns = 200\n\
                [[device]]\nname = \"nullb0\"\ndevno = \"252:0\"\n[device.model]\nkind = \"nullb\"\n\
                completion_nsec = 4000\n\
                [[job]]\ncmdline = \"--name=a --filename=/dev/nullb0 --direct=1 --rw=randread \
                --bs=4k --ioengine=libaio --iodepth=1 --numjobs=2 --runtime=200ms --time_based\"\n";
    let dir = scratch("host-cpus-determinism");
    let p = dir.join("s.toml");
    std::fs::write(&p, toml).unwrap();
    let p = p.to_str().unwrap();
    let a = blklab(&["run", p, "--output-format", "json"]);
    let b = blklab(&["run", p, "--output-format", "json"]);
    let c = blklab(&["run", p, "--output-format", "json", "--seed", "4"]);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(a.status.success(), "{}", stderr(&a));
    assert_eq!(a.stdout, b.stdout, "JSON differs between two runs");
    assert_ne!(a.stdout, c.stdout, "another seed draws other tails");
    let out = stdout(&a);
    assert!(
        !out.contains("\"sys_cpu\" : 0.000000"),
        "sys_cpu filled: {out}"
    );
    assert!(!out.contains("\"ctx\" : 0,"), "ctx filled");
}
