//! `--timeseries DIR`: one CSV file per table (`DIR/NAME.csv`), a header
//! line of column names, rows streamed as the run produces them. Each file
//! is written under a temporary name and renamed when the run is over, so a
//! failed run leaves no half-written table.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context, Result};

use super::{Cell, RowSink, TABLES};

pub struct CsvDir {
    files: Vec<(PathBuf, PathBuf, csv::Writer<BufWriter<File>>)>,
    /// The first write error (the probe has no error path; it is reported at the end).
    error: Option<String>,
}

impl CsvDir {
    /// Create `dir` if needed and open a temporary file per table.
    pub fn create(dir: &Path) -> Result<CsvDir> {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let mut files = Vec::new();
        for t in TABLES {
            let path = dir.join(format!("{}.csv", t.name));
            let tmp = dir.join(format!(".{}.csv.tmp", t.name));
            let f = File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
            let mut w = csv::Writer::from_writer(BufWriter::new(f));
            w.write_record(t.columns.iter().map(|c| c.name))
                .with_context(|| format!("writing {}", tmp.display()))?;
            files.push((tmp, path, w));
        }
        Ok(CsvDir { files, error: None })
    }
}

fn field(c: &Cell) -> String {
    match c {
        Cell::Int(i) => i.to_string(),
        // six significant decimals are plenty for rates and percentages
        Cell::Float(f) => format!("{f:.6}")
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string(),
        Cell::Text(s) => s.clone(),
    }
}

impl RowSink for CsvDir {
    fn row(&mut self, table: usize, _tick: u64, cells: &[Cell]) {
        if self.error.is_some() {
            return;
        }
        let (tmp, _, w) = &mut self.files[table];
        if let Err(e) = w.write_record(cells.iter().map(field)) {
            self.error = Some(format!("writing {}: {e}", tmp.display()));
        }
    }

    fn finish(&mut self) -> Result<()> {
        if let Some(e) = self.error.take() {
            for (tmp, _, _) in &self.files {
                let _ = std::fs::remove_file(tmp);
            }
            return Err(anyhow!(e));
        }
        for (tmp, _, w) in &mut self.files {
            w.flush()
                .with_context(|| format!("writing {}", tmp.display()))?;
        }
        for (tmp, path, _) in &self.files {
            std::fs::rename(tmp, path)
                .with_context(|| format!("renaming {} to {}", tmp.display(), path.display()))?;
        }
        Ok(())
    }
}
