//! The report's plots, section by section, from each variant's tables. In a
//! comparison every chart overlays the variants (one colour each); a single
//! run is a comparison of one.

use super::chart::{Chart, Line, PALETTE};
use super::series_view::{keys, max, points, steps, sum};
use super::Variant;

/// A titled group of charts with a sentence saying how to read them.
pub struct Section {
    pub heading: String,
    pub note: String,
    pub charts: Vec<Chart>,
}

fn chart(title: String, y: &str) -> Chart {
    Chart {
        title,
        x_desc: "time (s)".into(),
        y_desc: y.into(),
        time_x: true,
        ..Default::default()
    }
}

/// Every key of text column `col` of table `table` across the variants.
fn all_keys(vs: &[Variant<'_>], table: &str, col: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for v in vs {
        if let Some(t) = v.series.table(table) {
            for k in keys(t, col) {
                if !out.contains(&k) {
                    out.push(k);
                }
            }
        }
    }
    out
}

/// One line per variant of `y` against time from `table`, rows filtered.
fn per_variant(
    vs: &[Variant<'_>],
    table: &str,
    y: &str,
    filter: &[(&str, &str)],
    fold: fn(f64, f64) -> f64,
    step: bool,
) -> Vec<Line> {
    vs.iter()
        .enumerate()
        .filter_map(|(i, v)| {
            let t = v.series.table(table)?;
            let p = points(t, "time_s", y, filter, fold);
            (!p.is_empty()).then(|| Line {
                label: v.name.clone(),
                color: PALETTE[i % PALETTE.len()],
                dashed: false,
                points: if step { steps(&p) } else { p },
            })
        })
        .collect()
}

pub fn iocost(vs: &[Variant<'_>]) -> Option<Section> {
    let devs = all_keys(vs, "iocost_period", "device");
    if devs.is_empty() {
        return None;
    }
    let mut charts = Vec::new();
    for d in &devs {
        let f = [("device", d.as_str())];
        let mut c = chart(format!("{d}: vrate (iocost period)"), "vrate (%)");
        c.lines = per_variant(vs, "iocost_period", "vrate_pct", &f, max, true);
        charts.push(c);
        let mut c = chart(format!("{d}: busy_level"), "busy_level");
        c.lines = per_variant(vs, "iocost_period", "busy_level", &f, max, true);
        charts.push(c);
        if let Some(z) = zoom(vs, d) {
            charts.extend(z);
        }
    }
    Some(Section {
        heading: "blk-iocost: vrate and busy_level per period".into(),
        note: "One point per ioc_timer_fn period (blklab's iocost_period probe, taken where the kernel emits iocost_ioc_vrate_adj). The zoomed charts show the periods around the first fall of busy_level from its peak to 0 in the first variant, with a grid line at every period.".into(),
        charts,
    })
}

/// busy_level, vrate, completions and lagging iocgs over the 48 periods
/// from just before the first reset of busy_level to 0 in the first variant, with the
/// period grid: the signals the busy_level state machine reads, period by
/// period.
fn zoom(vs: &[Variant<'_>], dev: &str) -> Option<Vec<Chart>> {
    let t = vs.first()?.series.table("iocost_period")?;
    let f = [("device", dev)];
    let busy = points(t, "time_s", "busy_level", &f, max);
    let at = busy
        .windows(2)
        .position(|w| w[0].1 > 0.0 && w[1].1 == 0.0)?;
    let lo = at.saturating_sub(12);
    let hi = (at + 36).min(busy.len() - 1);
    let (x0, x1) = (busy[lo].0, busy[hi].0);
    let grid: Vec<f64> = busy[lo..=hi].iter().map(|p| p.0).collect();
    let clip = |mut lines: Vec<Line>| {
        for l in &mut lines {
            l.points.retain(|p| p.0 >= x0 && p.0 <= x1);
        }
        lines
    };
    let mut b = chart(
        format!(
            "{dev}: busy_level, periods around the first reset (t = {:.3} s)",
            busy[at + 1].0
        ),
        "busy_level",
    );
    b.lines = clip(per_variant(
        vs,
        "iocost_period",
        "busy_level",
        &f,
        max,
        true,
    ));
    b.grid_x = grid.clone();
    b.x_range = Some((x0, x1));
    let mut out = vec![b];
    for (col, title, y) in [
        ("vrate_pct", "vrate", "vrate (%)"),
        ("nr_done", "I/Os completed in the period (nr_done)", "I/Os"),
        ("nr_lagging", "iocgs lagging (nr_lagging)", "iocgs"),
        (
            "missed_ppm_read",
            "reads over the latency target (missed_ppm)",
            "ppm",
        ),
    ] {
        let mut c = chart(format!("{dev}: {title}, the same periods"), y);
        c.lines = clip(per_variant(vs, "iocost_period", col, &f, max, true));
        c.grid_x = grid.clone();
        c.x_range = Some((x0, x1));
        out.push(c);
    }
    Some(out)
}

pub fn cgroup_io(vs: &[Variant<'_>]) -> Option<Section> {
    let cgs = all_keys(vs, "cgroup_io", "cgroup");
    if cgs.is_empty() {
        return None;
    }
    let mut charts = Vec::new();
    for cg in &cgs {
        let f = [("cgroup", cg.as_str())];
        let mut c = chart(format!("{cg}: IOPS (read + write)"), "IOPS");
        c.lines = per_variant(vs, "cgroup_io", "iops", &f, sum, false);
        charts.push(c);
        let mut c = chart(format!("{cg}: bandwidth (read + write)"), "MiB/s");
        c.lines = per_variant(vs, "cgroup_io", "bw_mib_s", &f, sum, false);
        charts.push(c);
        let mut c = chart(
            format!("{cg}: completion latency P50 (dashed) and P99"),
            "clat (ms)",
        );
        for (i, v) in vs.iter().enumerate() {
            let Some(t) = v.series.table("cgroup_io") else {
                continue;
            };
            for (col, dashed, what) in [("clat_p50_us", true, "P50"), ("clat_p99_us", false, "P99")]
            {
                let p: Vec<(f64, f64)> = points(t, "time_s", col, &f, max)
                    .into_iter()
                    .map(|(x, y)| (x, y / 1000.0))
                    .collect();
                c.lines.push(Line {
                    label: format!("{} {what}", v.name),
                    color: PALETTE[i % PALETTE.len()],
                    dashed,
                    points: p,
                });
            }
        }
        charts.push(c);
    }
    Some(Section {
        heading: "Per-cgroup I/O over time".into(),
        note: "fio's completions per interval, by the cgroup of the job. Latency percentiles come from fio's latency histogram of the interval, the larger of read and write.".into(),
        charts,
    })
}

pub fn latency_cdf(vs: &[Variant<'_>]) -> Option<Section> {
    let cgs = all_keys(vs, "latency_cdf", "cgroup");
    if cgs.is_empty() {
        return None;
    }
    let mut charts = Vec::new();
    for cg in &cgs {
        let mut c = Chart {
            title: format!("{cg}: completion latency distribution (CDF)"),
            x_desc: "clat (ms, log scale)".into(),
            y_desc: "fraction of I/Os".into(),
            log_x: true,
            y_range: Some((0.0, 1.02)),
            ..Default::default()
        };
        for (i, v) in vs.iter().enumerate() {
            let Some(t) = v.series.table("latency_cdf") else {
                continue;
            };
            for (k, dd) in keys(t, "ddir").iter().enumerate() {
                let p: Vec<(f64, f64)> = points(
                    t,
                    "clat_us",
                    "fraction",
                    &[("cgroup", cg), ("ddir", dd)],
                    max,
                )
                .into_iter()
                .map(|(x, y)| (x / 1000.0, y))
                .collect();
                if p.is_empty() {
                    continue;
                }
                c.lines.push(Line {
                    label: format!("{} {dd}", v.name),
                    color: PALETTE[i % PALETTE.len()],
                    dashed: k > 0,
                    points: p,
                });
            }
        }
        charts.push(c);
    }
    Some(Section {
        heading: "Latency distributions".into(),
        note: "Whole run, from fio's latency histogram (write dashed).".into(),
        charts,
    })
}

pub fn hweight(vs: &[Variant<'_>]) -> Option<Section> {
    let cgs = all_keys(vs, "iocost_cgroup", "cgroup");
    if cgs.is_empty() {
        return None;
    }
    let mut charts = Vec::new();
    for v in vs {
        let Some(t) = v.series.table("iocost_cgroup") else {
            continue;
        };
        for d in keys(t, "device") {
            let mut c = chart(
                format!("{}: {d}: hweight_inuse, stacked", v.name),
                "% of the device",
            );
            c.stacked = true;
            c.y_range = Some((0.0, 105.0));
            for (i, cg) in cgs.iter().enumerate() {
                let p = points(
                    t,
                    "time_s",
                    "hweight_inuse_pct",
                    &[("device", &d), ("cgroup", cg)],
                    max,
                );
                c.lines.push(Line {
                    label: cg.clone(),
                    color: PALETTE[(i + 2) % PALETTE.len()],
                    dashed: false,
                    points: steps(&p),
                });
            }
            charts.push(c);
        }
    }
    Some(Section {
        heading: "blk-iocost: hierarchical weights".into(),
        note: "Each active cgroup's hweight_inuse at the end of every period, stacked (iocost_monitor.py's hweight column).".into(),
        charts,
    })
}

pub fn throttle(vs: &[Variant<'_>]) -> Option<Section> {
    let cgs = all_keys(vs, "throttle", "cgroup");
    if cgs.is_empty() {
        return None;
    }
    let mut charts = Vec::new();
    for cg in &cgs {
        let f = [("cgroup", cg.as_str())];
        let mut c = chart(format!("{cg}: bios held by blk-throttle"), "bios");
        c.lines = per_variant(vs, "throttle", "queued_bios", &f, sum, false);
        charts.push(c);
        let mut c = chart(
            format!("{cg}: throttle wait of dispatched bios (max)"),
            "ms",
        );
        c.lines = per_variant(vs, "throttle", "wait_max_ms", &f, max, false);
        charts.push(c);
    }
    Some(Section {
        heading: "blk-throttle queues".into(),
        note: "Bios held at the end of each interval, and the longest wait of the bios let go during it.".into(),
        charts,
    })
}

/// blk-iotrack's view per cgroup: where its latency is spent (Q2C against
/// D2C) and its share of the device's time (%dtm, the figure seed 004 reads
/// weights by).
pub fn iotrack(vs: &[Variant<'_>]) -> Option<Section> {
    let devs = all_keys(vs, "iotrack", "device");
    let cgs: Vec<String> = all_keys(vs, "iotrack", "cgroup");
    // the root row is the device's totals: shown only when it is the only one
    let shown: Vec<&String> = match cgs.iter().filter(|c| *c != "/").collect::<Vec<_>>() {
        v if v.is_empty() => cgs.iter().collect(),
        v => v,
    };
    if devs.is_empty() || shown.is_empty() {
        return None;
    }
    let mut charts = Vec::new();
    for d in &devs {
        for cg in &shown {
            let f = [("device", d.as_str()), ("cgroup", cg.as_str())];
            let mut c = chart(format!("{d} {cg}: Q2C and D2C (blk-iotrack)"), "ms");
            for (col, what, dashed) in [("aq2c_ms", "Q2C", false), ("ad2c_ms", "D2C", true)] {
                for (i, v) in vs.iter().enumerate() {
                    let Some(t) = v.series.table("iotrack") else {
                        continue;
                    };
                    // an interval without I/O has no latency (the tool prints
                    // 0): it is left out rather than drawn as a fall to zero
                    let ios = points(t, "time_s", "ios", &f, max);
                    let p: Vec<(f64, f64)> = points(t, "time_s", col, &f, max)
                        .into_iter()
                        .zip(ios)
                        .filter(|(_, n)| n.1 > 0.0)
                        .map(|(p, _)| p)
                        .collect();
                    if !p.is_empty() {
                        c.lines.push(Line {
                            label: format!("{} {what}", v.name),
                            color: PALETTE[i % PALETTE.len()],
                            dashed,
                            points: p,
                        });
                    }
                }
            }
            charts.push(c);
            let mut c = chart(format!("{d} {cg}: share of device time (%dtm)"), "%");
            c.lines = per_variant(vs, "iotrack", "dtm_pct", &f, max, false);
            c.y_range = Some((0.0, 105.0));
            charts.push(c);
        }
    }
    Some(Section {
        heading: "blk-iotrack per cgroup".into(),
        note: "Mean latency from submission (Q2C, solid) and at the device (D2C, dashed) of the bios each cgroup completed in each interval, page-cache writeback included; and the cgroup's share of the device's summed D2C time.".into(),
        charts,
    })
}

pub fn device(vs: &[Variant<'_>]) -> Option<Section> {
    let devs = all_keys(vs, "device", "device");
    if devs.is_empty() {
        return None;
    }
    let mut charts = Vec::new();
    for d in &devs {
        let f = [("device", d.as_str())];
        let mut c = chart(format!("{d}: utilisation"), "% busy");
        c.lines = per_variant(vs, "device", "util_pct", &f, max, false);
        c.y_range = Some((0.0, 105.0));
        charts.push(c);
        let mut c = chart(format!("{d}: requests at the device (mean)"), "requests");
        c.lines = per_variant(vs, "device", "in_flight_avg", &f, max, false);
        charts.push(c);
    }
    Some(Section {
        heading: "Devices".into(),
        note: "Time with at least one request at the device, and the time-weighted mean number of requests there, per interval.".into(),
        charts,
    })
}
