//! Result tables: the summary the seed experiments print (one row per job or
//! group: IOPS, MB/s, slat avg, clat avg/max/p90/p99/p99.9/p99.99 in ms) and
//! the side-by-side table of `blklab compare`.

use std::fmt::Write as _;

use blklab_fio::DirStats;

use crate::runner::GroupResult;

/// The figures of one row, from the unified (all directions) view, computed
/// the way the seed's jq program reads fio's JSON.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub label: String,
    pub iops: f64,
    pub mbps: f64,
    pub slat_ms: f64,
    pub clat_ms: f64,
    pub clat_max_ms: f64,
    pub p90: f64,
    pub p99: f64,
    pub p999: f64,
    pub p9999: f64,
}

impl Row {
    pub fn from_group(g: &GroupResult) -> Row {
        let m: DirStats = g.stats.mixed();
        let pct = m.clat.hist.percentiles(&[90.0, 99.0, 99.9, 99.99]);
        let p = |i: usize| pct.get(i).map(|x| x.1 as f64 / 1e6).unwrap_or(0.0);
        Row {
            label: g.label.clone(),
            iops: m.iops().round(),
            mbps: m.bw_bytes() as f64 / 1024.0 / 1024.0,
            slat_ms: m.slat.stat.mean / 1e6,
            clat_ms: m.clat.stat.mean / 1e6,
            clat_max_ms: m.clat.stat.max as f64 / 1e6,
            p90: p(0),
            p99: p(1),
            p999: p(2),
            p9999: p(3),
        }
    }
    pub const METRICS: [&'static str; 10] = [
        "IOPS",
        "MB/s",
        "slat avg(ms)",
        "clat avg(ms)",
        "clat max(ms)",
        "clat P90(ms)",
        "P99",
        "P99.9",
        "P99.99",
        "",
    ];
    pub fn values(&self) -> [f64; 9] {
        [
            self.iops,
            self.mbps,
            self.slat_ms,
            self.clat_ms,
            self.clat_max_ms,
            self.p90,
            self.p99,
            self.p999,
            self.p9999,
        ]
    }
}

/// The summary table, in the seed script's layout (`%-8s %-6s %-7.2f %-8.2f ...`).
pub fn summary_table(groups: &[GroupResult]) -> String {
    let rows: Vec<Row> = groups.iter().map(Row::from_group).collect();
    let w = rows.iter().map(|r| r.label.len()).max().unwrap_or(0).max(8);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<w$} {:<6} {:<7} {:<8} {:<8} {:<8} {:<8} {:<8} {:<8} {:<8}",
        "", "", "", "slat", "clat", "clat", "clat", "clat", "clat", "clat"
    );
    let _ = writeln!(
        s,
        "{:<w$} {:<6} {:<7} {:<8} {:<8} {:<8} {:<8} {:<8} {:<8} {:<8}\n",
        "CGROUP",
        "IOPS",
        "MB/s",
        "avg(ms)",
        "avg(ms)",
        "max(ms)",
        "P90(ms)",
        "P99",
        "P99.9",
        "P99.99"
    );
    for r in &rows {
        let _ = writeln!(
            s,
            "{:<w$} {:<6} {:<7.2} {:<8.2} {:<8.2} {:<8.2} {:<8.2} {:<8.2} {:<8.2} {:<8.2}",
            r.label,
            r.iops as u64,
            r.mbps,
            r.slat_ms,
            r.clat_ms,
            r.clat_max_ms,
            r.p90,
            r.p99,
            r.p999,
            r.p9999
        );
    }
    s
}

/// `blklab compare`: every row's metrics under each variant, with the change
/// from the first variant.
pub fn compare_table(variants: &[(String, Vec<GroupResult>)]) -> String {
    let mut s = String::new();
    let Some((_, first)) = variants.first() else {
        return s;
    };
    let w = first
        .iter()
        .map(|g| g.label.len())
        .max()
        .unwrap_or(0)
        .max(8);
    let vw = variants
        .iter()
        .map(|v| v.0.len())
        .max()
        .unwrap_or(0)
        .max(10);
    let _ = write!(s, "{:<w$}  {:<13}", "CGROUP", "METRIC");
    for (name, _) in variants {
        let _ = write!(s, " {:>vw$}", name);
    }
    if variants.len() > 1 {
        let _ = write!(s, " {:>9}", "change");
    }
    s.push('\n');
    for (i, g) in first.iter().enumerate() {
        let rows: Vec<Option<Row>> = variants
            .iter()
            .map(|(_, gs)| gs.get(i).map(Row::from_group))
            .collect();
        for (m, metric) in Row::METRICS.iter().take(9).enumerate() {
            let label = if m == 0 { g.label.as_str() } else { "" };
            let _ = write!(s, "{:<w$}  {:<13}", label, metric);
            let vals: Vec<f64> = rows
                .iter()
                .map(|r| r.as_ref().map(|r| r.values()[m]).unwrap_or(f64::NAN))
                .collect();
            for v in &vals {
                if m == 0 {
                    let _ = write!(s, " {:>vw$.0}", v);
                } else {
                    let _ = write!(s, " {:>vw$.2}", v);
                }
            }
            if vals.len() > 1 {
                let (a, b) = (vals[0], vals[vals.len() - 1]);
                if a.abs() > 1e-12 {
                    let _ = write!(s, " {:>8.1}%", (b - a) / a * 100.0);
                } else {
                    let _ = write!(s, " {:>9}", "-");
                }
            }
            s.push('\n');
        }
    }
    s
}

/// The `--io-stat` section: each cgroup's io.stat lines at the end of the run,
/// prefixed by the cgroup path (`cat CGROUP/io.stat`).
pub fn io_stat_section(stats: &[(String, String)]) -> String {
    let mut s = String::from("\nio.stat at the end of the run:\n");
    for (path, lines) in stats {
        for l in lines.lines() {
            s.push_str(&format!("{path:<10} {l}\n"));
        }
    }
    s
}
