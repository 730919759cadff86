//! Helpers shared by the CLI tests: run the built binary.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("repo root")
}

pub fn blklab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_blklab"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("run blklab")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

/// A scratch directory for a test, removed first if left over.
pub fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("blklab-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Why this host cannot boot blklab-vm guests for `blklab conformance
/// --kernel …` (a missing tool, or not root), if it cannot.
pub fn vm_unavailable() -> Option<String> {
    if let Some(e) = blklab_vm::preflight().first() {
        return Some(e.to_string());
    }
    if !rustix::process::geteuid().is_root() {
        return Some("not root".into());
    }
    None
}

/// `blklab conformance --kernel KERNEL --quick --repeat 1 CASES…`, its
/// output and wall time printed; the output and stdout.
pub fn conformance_quick(kernel: &str, cases: &[&str]) -> (Output, String) {
    let t0 = std::time::Instant::now();
    let mut args = vec![
        "conformance",
        "--kernel",
        kernel,
        "--quick",
        "--repeat",
        "1",
    ];
    args.extend_from_slice(cases);
    let o = blklab(&args);
    let out = stdout(&o);
    println!("{out}\n{}", stderr(&o));
    println!("wall time: {:.1} s", t0.elapsed().as_secs_f64());
    (o, out)
}

/// `check` and `run --output-format summary` of a scenario text: (check
/// status, run status, check's output, run's stderr).
pub fn both(name: &str, toml: &str) -> (i32, i32, String, String) {
    let dir = scratch(name);
    let p = dir.join("bad.toml");
    std::fs::write(&p, toml).unwrap();
    let c = blklab(&["check", p.to_str().unwrap()]);
    let r = blklab(&["run", "--output-format", "summary", p.to_str().unwrap()]);
    let _ = std::fs::remove_dir_all(&dir);
    (
        c.status.code().unwrap_or(-1),
        r.status.code().unwrap_or(-1),
        format!("{}{}", stdout(&c), stderr(&c)),
        stderr(&r),
    )
}

/// The input is refused with status 2 by both commands, and both say `want`.
pub fn refused(name: &str, toml: &str, want: &[&str]) -> String {
    let (c, r, out, err) = both(name, toml);
    assert_eq!((c, r), (2, 2), "check/run status\ncheck: {out}\nrun: {err}");
    for w in want {
        assert!(out.contains(w), "check lacks {w:?}: {out}");
        assert!(err.contains(w), "run lacks {w:?}: {err}");
    }
    out
}

/// `run --output-format summary ARGS` of a scenario text, which must succeed.
pub fn run_text(name: &str, toml: &str, args: &[&str]) -> std::process::Output {
    let dir = scratch(name);
    let p = dir.join("s.toml");
    std::fs::write(&p, toml).unwrap();
    let mut all = vec!["run", "--output-format", "summary"];
    all.extend_from_slice(args);
    all.push(p.to_str().unwrap());
    let o = blklab(&all);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(o.status.success(), "{}", stderr(&o));
    o
}

/// The QEMU guest's machine as `blklab conformance --show` expresses it
/// against a QEMU kernel (one CPU, wake-up preemption) and its loop device
/// `loop99` up to the model's kind: the caller adds the model's own keys
/// (sim_request.rs, sim.rs's `scenario_text`).
pub const GUEST_MACHINE_LOOP99: &str = r#"
[host]
cpus = 1
wakeup_preempt = true

[[device]]
name = "loop99"
devno = "7:99"
scheduler = "none"
queue_depth = 128
nr_requests = 128
rotational = false
capacity = "67108864"
[device.model]
kind = "loop"
"#;
