//! The sweep result cache: one small JSON file per run, under a directory
//! per scenario, named by a hash of everything that determines the run
//! (blklab's version, the scenario file's text and path, the overrides and
//! the seed). Files are written whole through a rename, so a sweep killed
//! at any point leaves only complete entries, and running it again takes
//! them and runs the rest.
//!
//! What the key does not see: files the scenario reads (`job_file`,
//! recordings) and changes to blklab between builds of the same version;
//! clear the directory after changing either.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::{Plan, RunRow, RunSpec};

pub struct Cache {
    dir: PathBuf,
}

fn hex(d: &[u8]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// Length-prefixed fields, so that no two different inputs hash the same bytes.
fn feed(h: &mut Sha256, field: &str) {
    h.update((field.len() as u64).to_le_bytes());
    h.update(field.as_bytes());
}

impl Cache {
    pub fn new(dir: &Path) -> Result<Cache> {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        Ok(Cache {
            dir: dir.to_path_buf(),
        })
    }

    /// The scenario's part of the key: version, path and text.
    pub fn scenario_hash(plan: &Plan) -> String {
        let mut h = Sha256::new();
        feed(&mut h, env!("CARGO_PKG_VERSION"));
        feed(&mut h, &plan.path.display().to_string());
        feed(&mut h, &plan.text);
        hex(&h.finalize())[..16].to_string()
    }

    /// The cache file of one run: `DIR/SCENARIO_HASH/RUN_HASH.json`.
    pub fn key(&self, plan: &Plan, r: RunSpec) -> PathBuf {
        let mut h = Sha256::new();
        for (k, v) in plan.sets(r.combo) {
            feed(&mut h, &k);
            feed(&mut h, &v);
        }
        feed(&mut h, &r.seed_k.to_string());
        self.dir
            .join(Self::scenario_hash(plan))
            .join(format!("{}.json", &hex(&h.finalize())[..32]))
    }

    /// A cached row, if there is one; an unreadable entry is an error (not
    /// silently re-run), naming the file to delete.
    pub fn get(&self, key: &Path) -> Result<Option<RunRow>> {
        match std::fs::read(key) {
            Ok(b) => serde_json::from_slice::<Entry>(&b)
                .map_err(anyhow::Error::from)
                .and_then(Entry::row)
                .map(Some)
                .with_context(|| format!("{}: damaged cache entry (delete it)", key.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e).with_context(|| format!("reading {}", key.display())),
        }
    }

    pub fn put(&self, key: &Path, row: &RunRow) -> Result<()> {
        if let Some(d) = key.parent() {
            std::fs::create_dir_all(d).with_context(|| format!("creating {}", d.display()))?;
        }
        crate::output::write_atomic(key, &serde_json::to_vec(&Entry::of(row))?)
    }
}

/// A cache file: the row with its numbers as Rust's shortest round-trip
/// decimal strings (JSON numbers would go through serde_json's float
/// parser, which is not exact without a workspace-wide feature).
#[derive(Serialize, Deserialize)]
struct Entry {
    index: usize,
    params: Vec<(String, String)>,
    seed: u64,
    metrics: Vec<(String, String)>,
}

impl Entry {
    fn of(r: &RunRow) -> Entry {
        Entry {
            index: r.index,
            params: r.params.clone(),
            seed: r.seed,
            metrics: r
                .metrics
                .iter()
                .map(|(k, v)| (k.clone(), v.to_string()))
                .collect(),
        }
    }
    fn row(self) -> Result<RunRow> {
        let metrics = self
            .metrics
            .into_iter()
            .map(|(k, v)| {
                let x: f64 = v
                    .parse()
                    .with_context(|| format!("{k}: '{v}' is not a number"))?;
                Ok((k, x))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(RunRow {
            index: self.index,
            params: self.params,
            seed: self.seed,
            metrics,
        })
    }
}
