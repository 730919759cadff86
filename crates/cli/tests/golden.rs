//! Every bundled example's output, byte for byte: fio JSON, fio's normal text
//! with the summary table, the kernel files with blk-iotrack's report, and
//! the controller trace (by SHA-256, the traces
//! are megabytes). A change that is meant to keep behaviour (a refactor, a
//! speed-up) must leave all of them unchanged; a change that is meant to alter
//! behaviour regenerates them with `BLKLAB_BLESS=1 cargo test --release
//! --test golden`, and the diff of `crates/cli/tests/golden/` shows reviewers
//! what moved.

mod common;
use common::*;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

/// The examples, in name order.
fn examples() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(root().join("examples"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().and_then(|x| x.to_str()) == Some("toml"))
        .map(|p| p.file_stem().unwrap().to_str().unwrap().to_string())
        .collect();
    v.sort();
    v
}

/// What one example produces: (golden file name, bytes).
fn outputs(ex: &str) -> Vec<(String, Vec<u8>)> {
    let path = format!("examples/{ex}.toml");
    let json = blklab(&["run", &path, "--output-format", "json"]);
    assert!(json.status.success(), "{ex} json: {}", stderr(&json));
    let text = blklab(&["run", &path]);
    assert!(text.status.success(), "{ex} text: {}", stderr(&text));
    // The kernel files and blk-iotrack's report, which the other two leave out.
    let files = blklab(&[
        "run",
        &path,
        "--output-format",
        "summary",
        "--show-files",
        "--iotrack",
        "1000",
    ]);
    assert!(files.status.success(), "{ex} files: {}", stderr(&files));
    let dir = scratch(&format!("golden-{ex}"));
    let trace_path = dir.join("trace");
    let tr = blklab(&[
        "run",
        &path,
        "--output-format",
        "summary",
        "--trace",
        trace_path.to_str().unwrap(),
    ]);
    assert!(tr.status.success(), "{ex} trace: {}", stderr(&tr));
    let trace = std::fs::read(&trace_path).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&dir);
    let digest: String = Sha256::digest(&trace)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    vec![
        (format!("{ex}.json"), json.stdout),
        (format!("{ex}.txt"), text.stdout),
        (format!("{ex}.files.txt"), files.stdout),
        (
            format!("{ex}.trace.sha256"),
            format!("{digest}  {} bytes\n", trace.len()).into_bytes(),
        ),
    ]
}

#[test]
fn every_example_output_is_unchanged() {
    let bless = std::env::var_os("BLKLAB_BLESS").is_some();
    let exs = examples();
    assert!(exs.len() >= 10, "only {} examples", exs.len());
    // Two at a time: the examples are independent processes.
    let results: Vec<Vec<(String, Vec<u8>)>> = std::thread::scope(|s| {
        let handles: Vec<_> = exs
            .chunks(exs.len().div_ceil(2))
            .map(|chunk| s.spawn(move || chunk.iter().map(|e| outputs(e)).collect::<Vec<_>>()))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    let mut changed = Vec::new();
    for (name, bytes) in results.into_iter().flatten() {
        let p = golden_dir().join(&name);
        if bless {
            std::fs::write(&p, &bytes).unwrap();
            continue;
        }
        match std::fs::read(&p) {
            Ok(want) if want == bytes => {}
            Ok(_) => changed.push(format!("{name}: differs")),
            Err(e) => changed.push(format!("{name}: {e}")),
        }
    }
    assert!(
        changed.is_empty(),
        "outputs changed (BLKLAB_BLESS=1 regenerates them if the change is meant):\n{}",
        changed.join("\n")
    );
}
