//! Reading fio's JSON output (`--output-format=json --output=FILE`).

use std::path::Path;

use serde_json::Value;

/// The first job object of fio's JSON output in `path`.
pub fn first_job(path: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let v: Value = serde_json::from_str(&text)
        .map_err(|e| format!("{}: not fio JSON: {e}", path.display()))?;
    Ok(v["jobs"][0].clone())
}
