//! A sweep's rows as CSV: `index`, the parameters, `seed`, then the metrics
//! (the columns of the first row; every run of a plan has the same groups).

use super::RunRow;

/// One CSV field, quoted when it holds a comma, a quote or a line break (RFC 4180).
pub fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The header and rows as CSV text.
pub fn csv(rows: &[RunRow]) -> String {
    let Some(first) = rows.first() else {
        return String::new();
    };
    let mut head: Vec<String> = vec!["index".into()];
    head.extend(first.params.iter().map(|(k, _)| field(k)));
    head.push("seed".into());
    head.extend(first.metrics.iter().map(|(k, _)| field(k)));
    let mut s = head.join(",") + "\n";
    for r in rows {
        let mut cells: Vec<String> = vec![r.index.to_string()];
        cells.extend(r.params.iter().map(|(_, v)| field(v)));
        cells.push(r.seed.to_string());
        cells.extend(r.metrics.iter().map(|(_, v)| v.to_string()));
        s.push_str(&cells.join(","));
        s.push('\n');
    }
    s
}
