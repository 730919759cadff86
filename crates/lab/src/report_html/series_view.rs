//! Reading the report's lines out of the time-series tables.

use std::collections::BTreeSet;

use crate::timeseries::{Cell, Table};

/// The distinct values of text column `col`, in order of first appearance.
pub fn keys(t: &Table, col: &str) -> Vec<String> {
    let Some(c) = t.col(col) else {
        return Vec::new();
    };
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for r in &t.rows {
        if let Some(s) = r[c].as_str() {
            if seen.insert(s.to_string()) {
                out.push(s.to_string());
            }
        }
    }
    out
}

/// (x, y) of the rows whose text columns match `filter`. Rows sharing an x
/// are combined with `fold` (e.g. read + write).
pub fn points(
    t: &Table,
    x: &str,
    y: &str,
    filter: &[(&str, &str)],
    fold: fn(f64, f64) -> f64,
) -> Vec<(f64, f64)> {
    let (Some(xc), Some(yc)) = (t.col(x), t.col(y)) else {
        return Vec::new();
    };
    let fc: Vec<(usize, &str)> = filter
        .iter()
        .filter_map(|(c, v)| t.col(c).map(|i| (i, *v)))
        .collect();
    let mut out: Vec<(f64, f64)> = Vec::new();
    for r in &t.rows {
        if !fc
            .iter()
            .all(|(i, v)| matches!(&r[*i], Cell::Text(s) if s == v))
        {
            continue;
        }
        let (px, py) = (r[xc].as_f64(), r[yc].as_f64());
        match out.last_mut() {
            Some(last) if last.0 == px => last.1 = fold(last.1, py),
            _ => out.push((px, py)),
        }
    }
    out
}

pub fn sum(a: f64, b: f64) -> f64 {
    a + b
}

pub fn max(a: f64, b: f64) -> f64 {
    a.max(b)
}

/// A step line: each value holds until the next point.
pub fn steps(p: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(p.len() * 2);
    for (i, &(x, y)) in p.iter().enumerate() {
        if i > 0 {
            out.push((x, p[i - 1].1));
        }
        out.push((x, y));
    }
    out
}
