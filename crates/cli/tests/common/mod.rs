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
