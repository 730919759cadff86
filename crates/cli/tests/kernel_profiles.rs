//! Kernel profiles: `blklab switches --kernel NAME` prints a kernel's value
//! of every switch, and `--kernel-profile NAME` runs a scenario as that
//! kernel does (before `--set`).

mod common;
use common::*;

#[test]
fn a_profile_is_the_same_run_as_its_switches_spelled_out() {
    let ex = "examples/iocost-busy-level.toml";
    let by_profile = blklab(&[
        "run",
        ex,
        "--output-format",
        "json",
        "--kernel-profile",
        "debian-6.1",
    ]);
    assert!(by_profile.status.success(), "{}", stderr(&by_profile));
    let spelled = blklab(&[
        "run",
        ex,
        "--output-format",
        "json",
        "--set",
        "iocost.busy_level_fix=off",
        "--set",
        "throttle.slice=100ms",
    ]);
    assert_eq!(
        by_profile.stdout, spelled.stdout,
        "6.1 is busy_level_fix=off, 100 ms slices"
    );
    let mainline = blklab(&["run", ex, "--output-format", "json"]);
    assert_ne!(
        by_profile.stdout, mainline.stdout,
        "the fix changes the seed's run"
    );
    // --set after the profile wins
    let back = blklab(&[
        "run",
        ex,
        "--output-format",
        "json",
        "--kernel-profile",
        "6.1",
        "--set",
        "iocost.busy_level_fix=on",
    ]);
    assert_eq!(back.stdout, mainline.stdout);
}

#[test]
fn switches_lists_a_profile_and_refuses_an_unknown_one() {
    let o = blklab(&["switches", "--kernel", "6.12"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("kernel profile 6.12") && out.contains("iocost.busy_level_fix = off"),
        "{out}"
    );
    let o = blklab(&["switches", "--kernel", "4.19"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("unknown kernel profile '4.19' (known: 6.1, 6.12, 6.18, mainline)"),
        "{}",
        stderr(&o)
    );
    let o = blklab(&[
        "run",
        "examples/nullb-randread.toml",
        "--kernel-profile",
        "2.6",
    ]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("--kernel-profile: unknown kernel profile '2.6'"),
        "{}",
        stderr(&o)
    );
}
