//! Result tables: the summary the seed experiments print (one row per job or
//! group: IOPS, MiB/s, slat avg, clat avg/max/p90/p99/p99.9/p99.99 in ms) and
//! the side-by-side table of `blklab compare`.

use std::fmt::Write as _;

use blklab_fio::DirStats;

use crate::runner::GroupResult;

/// Widest column a table pads to. Labels are shorter (scenario limits),
/// but a table built from other rows must not make the formatter panic
/// (a width past 65535 does).
const MAX_COL: usize = 1024;

/// Width of a comparison table's value columns: the longest variant name,
/// at least 10.
fn variant_width<T>(variants: &[(String, T)]) -> usize {
    variants
        .iter()
        .map(|v| v.0.len())
        .max()
        .unwrap_or(0)
        .clamp(10, MAX_COL)
}

/// The comparison tables' last column: the change from the first variant
/// to the last, in percent ("-" when the first is zero; none for one variant).
fn change_cell(s: &mut String, vals: &[f64]) {
    if vals.len() > 1 {
        let (a, b) = (vals[0], vals[vals.len() - 1]);
        if a.abs() > 1e-12 {
            let _ = write!(s, " {:>8.1}%", (b - a) / a * 100.0);
        } else {
            let _ = write!(s, " {:>9}", "-");
        }
    }
}

/// The figures of one row, from the unified (all directions) view, computed
/// the way the seed's jq program reads fio's JSON.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub label: String,
    /// As fio's text prints it (truncated).
    pub iops: f64,
    /// MiB/s (fio's "BW=...MiB/s").
    pub mibps: f64,
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
            iops: m.iops_truncated() as f64,
            mibps: m.bw_bytes() as f64 / 1024.0 / 1024.0,
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
        "MiB/s",
        "slat avg(ms)",
        "clat avg(ms)",
        "clat max(ms)",
        "clat P90(ms)",
        "clat P99(ms)",
        "clat P99.9(ms)",
        "clat P99.99(ms)",
        "",
    ];
    pub fn values(&self) -> [f64; 9] {
        [
            self.iops,
            self.mibps,
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

/// The summary table: the seed script's columns (IOPS, then bandwidth and
/// latencies with two decimals), each as wide as its widest cell, numbers
/// right-aligned under headers that carry their unit.
pub fn summary_table(groups: &[GroupResult]) -> String {
    const TOP: [&str; 10] = [
        "", "", "", "slat", "clat", "clat", "clat", "clat", "clat", "clat",
    ];
    const HEAD: [&str; 10] = [
        "CGROUP",
        "IOPS",
        "MiB/s",
        "avg(ms)",
        "avg(ms)",
        "max(ms)",
        "P90(ms)",
        "P99(ms)",
        "P99.9(ms)",
        "P99.99(ms)",
    ];
    let rows: Vec<[String; 10]> = groups
        .iter()
        .map(|g| {
            let r = Row::from_group(g);
            let v = r.values();
            let mut cells: [String; 10] = Default::default();
            cells[0] = r.label.clone();
            cells[1] = format!("{}", v[0] as u64);
            for k in 1..9 {
                cells[k + 1] = format!("{:.2}", v[k]);
            }
            cells
        })
        .collect();
    let mut w = [0usize; 10];
    for (k, wk) in w.iter_mut().enumerate() {
        *wk = rows
            .iter()
            .map(|r| r[k].chars().count())
            .chain([HEAD[k].len(), TOP[k].len()])
            .max()
            .unwrap_or(0)
            .min(MAX_COL);
    }
    w[0] = w[0].max(8);
    let line = |cells: [&str; 10]| {
        let mut l = format!("{:<w0$}", cells[0], w0 = w[0]);
        for k in 1..10 {
            let _ = write!(l, "  {:>wk$}", cells[k], wk = w[k]);
        }
        l.trim_end().to_string() + "\n"
    };
    let mut s = line(TOP);
    s.push_str(&line(HEAD));
    s.push('\n');
    for r in &rows {
        s.push_str(&line(std::array::from_fn(|k| r[k].as_str())));
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
        .clamp(8, MAX_COL);
    let vw = variant_width(variants);
    let _ = write!(s, "{:<w$}  {:<15}", "CGROUP", "METRIC");
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
            let _ = write!(s, "{:<w$}  {:<15}", label, metric);
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
            change_cell(&mut s, &vals);
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

/// Page-cache figures of a run, per invocation (its label, or the first job's
/// name): `(row name, value)`; empty when no job used the page cache.
/// "fault wait" is the mean time a memory user's major fault waited for its
/// page (the seed's "io wait during page fault").
pub fn pagecache_rows(
    sc: &crate::scenario::Scenario,
    r: &blklab_core::RunResult,
) -> Vec<(String, f64)> {
    let mut rows = Vec::new();
    let Some(pc) = &r.pagecache else {
        return rows;
    };
    for inv in &sc.invocations {
        let mut t = blklab_core::mm::report::PcJobStats::default();
        let mut any = false;
        for &ji in &inv.jobs {
            if let Some(Some(j)) = pc.jobs.get(ji) {
                any = true;
                t.read_hit_pages += j.read_hit_pages;
                t.read_miss_pages += j.read_miss_pages;
                t.minor_faults += j.minor_faults;
                t.major_faults += j.major_faults;
                t.fault_wait_ns += j.fault_wait_ns;
                t.fault_wait_max_ns = t.fault_wait_max_ns.max(j.fault_wait_max_ns);
                t.dirty_waits += j.dirty_waits;
                t.dirty_wait_ns += j.dirty_wait_ns;
                t.read_bios += j.read_bios;
                t.read_bios_rt += j.read_bios_rt;
            }
        }
        if !any {
            continue;
        }
        let label = inv
            .label
            .clone()
            .or_else(|| inv.jobs.first().map(|&ji| r.jobs[ji].name.clone()))
            .unwrap_or_default();
        if t.major_faults > 0 {
            rows.push((format!("{label}: major faults"), t.major_faults as f64));
            rows.push((
                format!("{label}: fault wait avg (us)"),
                t.mean_fault_wait_ns() as f64 / 1000.0,
            ));
            rows.push((
                format!("{label}: fault wait max (us)"),
                t.fault_wait_max_ns as f64 / 1000.0,
            ));
        }
        let pages = t.read_hit_pages + t.read_miss_pages;
        if pages > 0 {
            rows.push((
                format!("{label}: read hit (%)"),
                t.read_hit_pages as f64 * 100.0 / pages as f64,
            ));
        }
        if t.read_bios > 0 {
            rows.push((format!("{label}: read bios"), t.read_bios as f64));
            rows.push((
                format!("{label}: read bios RT (%)"),
                t.read_bios_rt as f64 * 100.0 / t.read_bios as f64,
            ));
        }
        if t.dirty_waits > 0 {
            rows.push((format!("{label}: dirty throttled"), t.dirty_waits as f64));
        }
    }
    let s = &pc.stats;
    rows.push(("evictions".into(), s.pgsteal as f64));
    if s.nr_overcommit > 0 {
        rows.push(("reclaim failures".into(), s.nr_overcommit as f64));
    }
    rows.push(("refaults".into(), s.workingset_refault as f64));
    rows.push(("refault activations".into(), s.workingset_activate as f64));
    rows.push(("workingset restores".into(), s.workingset_restore as f64));
    rows.push(("writeback bios".into(), pc.write_bios as f64));
    rows.push(("writeback bios RT".into(), pc.write_bios_rt as f64));
    rows
}

/// The page-cache block printed after a run's summary.
pub fn pagecache_block(rows: &[(String, f64)]) -> String {
    let mut s = String::new();
    if rows.is_empty() {
        return s;
    }
    let w = rows
        .iter()
        .map(|r| r.0.len())
        .max()
        .unwrap_or(0)
        .min(MAX_COL);
    s.push_str("\npage cache:\n");
    for (k, v) in rows {
        let _ = writeln!(s, "  {k:<w$}  {v:>12.1}");
    }
    s
}

/// The devices' blk-wbt state at the end of the run (nothing without wbt).
pub fn wbt_block(r: &blklab_core::RunResult) -> String {
    let mut s = String::new();
    for d in &r.devices {
        if let Some(w) = &d.wbt {
            if s.is_empty() {
                s.push_str("\nwriteback throttling:\n");
            }
            let _ = writeln!(s, "  {}: {w}", d.name);
        }
    }
    s
}

/// `blklab compare`: the page-cache rows under each variant.
pub fn pagecache_compare(variants: &[(String, Vec<(String, f64)>)]) -> String {
    let mut s = String::new();
    let Some((_, first)) = variants.first() else {
        return s;
    };
    if first.is_empty() {
        return s;
    }
    let w = first
        .iter()
        .map(|r| r.0.len())
        .max()
        .unwrap_or(0)
        .clamp(10, MAX_COL);
    let vw = variant_width(variants);
    let _ = write!(s, "\n{:<w$}", "PAGE CACHE");
    for (name, _) in variants {
        let _ = write!(s, " {:>vw$}", name);
    }
    if variants.len() > 1 {
        let _ = write!(s, " {:>9}", "change");
    }
    s.push('\n');
    for (i, (k, _)) in first.iter().enumerate() {
        let _ = write!(s, "{:<w$}", k);
        let vals: Vec<f64> = variants
            .iter()
            .map(|(_, rows)| {
                rows.iter()
                    .find(|r| &r.0 == k)
                    .or(rows.get(i))
                    .map(|r| r.1)
                    .unwrap_or(f64::NAN)
            })
            .collect();
        for v in &vals {
            let _ = write!(s, " {:>vw$.1}", v);
        }
        change_cell(&mut s, &vals);
        s.push('\n');
    }
    s
}
