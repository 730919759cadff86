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
