//! A run's metrics for a sweep table: the summary table's figures (fio's
//! unified view of each job or reporting group, as `report::Row` computes
//! them), one column per (group, figure), named `LABEL.FIGURE`.

use crate::report::Row;
use crate::runner::GroupResult;

/// The figures of each group, in `Row::values` order, with units in the names.
pub const FIGURES: [&str; 9] = [
    "iops",
    "mbps",
    "slat_ms",
    "clat_ms",
    "clat_max_ms",
    "p90_ms",
    "p99_ms",
    "p999_ms",
    "p9999_ms",
];

/// Every group's figures as (`LABEL.FIGURE`, value), groups in report order.
pub fn of(groups: &[GroupResult]) -> Vec<(String, f64)> {
    let mut out = Vec::with_capacity(groups.len() * FIGURES.len());
    for g in groups {
        let row = Row::from_group(g);
        for (name, v) in FIGURES.iter().zip(row.values()) {
            out.push((format!("{}.{name}", g.label), v));
        }
    }
    out
}
