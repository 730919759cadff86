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
