//! Printing results: a side-by-side text table per case, the list of cases,
//! and the Markdown table for docs/fidelity (`--markdown`).

use std::fmt::Write as _;

use crate::cases::{Case, Need};
use crate::env::{HostEnv, ThrottleVia};
use crate::loop_device::RawSpeed;
use crate::metrics::{rel_diff, Metric, METRICS};
use crate::result::{CaseResult, Status};

fn val(m: Metric, v: f64) -> String {
    if v.is_nan() {
        "-".into()
    } else if m == Metric::Iops || v >= 1000.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

fn diff(real: f64, sim: f64) -> String {
    let d = rel_diff(real, sim);
    if d.is_infinite() {
        "inf".into()
    } else {
        format!("{:+.1}%", d * 100.0)
    }
}

/// `--list`: one line per case.
pub fn list(cases: &[Case], env: &HostEnv) -> String {
    let mut s = String::new();
    let w = cases.iter().map(|c| c.name.len()).max().unwrap_or(0);
    for c in cases {
        let here = match crate::host::runnable(c, env) {
            Ok(()) => "runnable here".to_string(),
            Err(_) => "not runnable here".to_string(),
        };
        let need = match c.need {
            Need::Throttle => "throttle",
            Need::Iocost => "iocost",
            Need::Bfq => "bfq",
            Need::Ioprio => "ioprio",
            Need::IoLatency => "iolatency",
        };
        let _ = writeln!(
            s,
            "{:<w$}  {:<8} {:<13} {:<17} {}",
            c.name,
            need,
            if c.deterministic {
                "deterministic"
            } else {
                "reported"
            },
            here,
            c.about
        );
    }
    s
}

/// What the host offers, for the header.
pub fn host_summary(env: &HostEnv) -> String {
    let mut s = String::new();
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let _ = write!(s, "host: kernel {}", kernel.trim());
    if let Some((_, v)) = &env.fio {
        let _ = write!(s, ", {v}");
    }
    match &env.throttle {
        Some(ThrottleVia::V2(p)) => {
            let _ = write!(s, ", io controller on cgroup v2 ({})", p.display());
        }
        Some(ThrottleVia::V1(p)) => {
            let _ = write!(s, ", io controller on cgroup v1 blkio ({})", p.display());
        }
        None => {}
    }
    let _ = write!(
        s,
        ", blk-iocost {}",
        if env.iocost.is_some() {
            "available"
        } else {
            "unavailable"
        }
    );
    s
}

pub fn raw_summary(raw: &RawSpeed) -> String {
    let costs = if raw.quiet.is_some() {
        format!("; {}", crate::fio_costs::describe(raw))
    } else {
        String::new()
    };
    format!(
        "simulated loop device: null_blk timer mode, completion {:.1} us, submit {:.1} us ({} fio QD1 4k randread: {:.0} IOPS){costs}",
        raw.clat_ns.saturating_sub(1000) as f64 / 1000.0,
        raw.slat_ns as f64 / 1000.0,
        if raw.measured { "measured with" } else { "default, not measured:" },
        raw.iops
    )
}

/// The text block of one case.
pub fn case_text(r: &CaseResult) -> String {
    let mut s = String::new();
    let c = &r.case;
    let _ = writeln!(s, "== {}  {}", c.name, r.status.word());
    let _ = writeln!(s, "   {}", c.about);
    match &r.status {
        Status::NotRunnable(why) => {
            let _ = writeln!(s, "   not runnable here: {why}");
        }
        Status::Error(e) => {
            let _ = writeln!(s, "   error: {e}");
        }
        Status::HostStalled { why, .. } => {
            let _ = writeln!(s, "   not judged: {why}");
        }
        _ => {}
    }
    if let Some(d) = &r.device {
        let runs = r.jobs.first().map(|j| j.runs).unwrap_or(0);
        let _ = writeln!(
            s,
            "   real: {d}, {runs} run(s) of {} s, medians",
            r.runtime_s
        );
    }
    for n in &r.notes {
        let _ = writeln!(s, "   note: {n}");
    }
    let _ = writeln!(
        s,
        "   {:<4} {:<10} {:>10} {:>10} {:>8}  {:<14} {:>7}  ok",
        "job", "metric", "real", "sim", "diff", "tolerance", "spread"
    );
    for j in &r.jobs {
        for (k, m) in METRICS.iter().enumerate() {
            let real = j.real.map(|x| x.get(*m)).unwrap_or(f64::NAN);
            let sim = j.sim.map(|x| x.get(*m)).unwrap_or(f64::NAN);
            let tol = c.tol(*m);
            let ok = match (tol, j.real.is_some() && j.sim.is_some()) {
                (Some(t), true) => {
                    if t.allows(real, sim) {
                        "ok"
                    } else {
                        "OUT"
                    }
                }
                (None, true) => "(reported)",
                _ => "",
            };
            let _ = writeln!(
                s,
                "   {:<4} {:<10} {:>10} {:>10} {:>8}  {:<14} {:>7}  {}",
                if k == 0 { j.label.as_str() } else { "" },
                m.name(),
                val(*m, real),
                val(*m, sim),
                if j.real.is_some() && j.sim.is_some() {
                    diff(real, sim)
                } else {
                    "-".into()
                },
                tol.map(|t| t.describe(*m)).unwrap_or_else(|| "-".into()),
                j.spread
                    .map(|sp| format!("{:.1}%", sp[k] * 100.0))
                    .unwrap_or_else(|| "-".into()),
                ok
            );
        }
    }
    if let Some(sh) = &r.share {
        s.push_str(&sh.text("   "));
    }
    if let Status::Fail(bad) | Status::HostStalled { bad, .. } = &r.status {
        for b in bad {
            let _ = writeln!(s, "   out of tolerance: {b}");
        }
    }
    if let Some(q) = &r.qos {
        s.push_str(&q.text("   "));
    }
    s
}

/// The Markdown document for docs/fidelity/conformance.md's results section.
pub fn markdown(results: &[CaseResult], header: &str, raw: &RawSpeed, repeat: u32) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "<!-- generated by `blklab conformance --markdown` -->");
    let _ = writeln!(s, "{header}; {repeat} real run(s) per case, medians.  ");
    let _ = writeln!(s, "{}.\n", raw_summary(raw));
    let _ = writeln!(
        s,
        "Each cell: real kernel / simulator (simulator's difference). Latencies in µs, MB/s is MiB/s.\n"
    );
    let _ = write!(s, "| case | job | verdict |");
    for m in METRICS {
        let _ = write!(s, " {} |", m.name());
    }
    s.push('\n');
    let _ = write!(s, "|---|---|---|");
    for _ in METRICS {
        s.push_str("---|");
    }
    s.push('\n');
    for r in results {
        for (i, j) in r.jobs.iter().enumerate() {
            let _ = write!(
                s,
                "| {} | {} | {} |",
                if i == 0 { r.case.name.as_str() } else { "" },
                j.label,
                if i == 0 { r.status.word() } else { "" }
            );
            for m in METRICS {
                let sim = j.sim.map(|x| x.get(m)).unwrap_or(f64::NAN);
                let cell = match j.real {
                    Some(real) => {
                        let rv = real.get(m);
                        format!("{} / {} ({})", val(m, rv), val(m, sim), diff(rv, sim))
                    }
                    None => format!("— / {}", val(m, sim)),
                };
                let _ = write!(s, " {cell} |");
            }
            s.push('\n');
        }
    }
    let shares: Vec<(&str, &crate::share::ShareResult)> = results
        .iter()
        .filter_map(|r| Some((r.case.name.as_str(), r.share.as_ref()?)))
        .collect();
    s.push_str(&crate::share::markdown(&shares));
    s.push('\n');
    let cost = crate::sched_cost::lines(results);
    if !cost.is_empty() {
        let _ = writeln!(s, "Schedulers' cost in throughput (reported):\n");
        for l in cost {
            let _ = writeln!(s, "- {l}");
        }
        s.push('\n');
    }
    let _ = writeln!(
        s,
        "Tolerances (|sim − real| ≤ max(rel·real, abs); other metrics are reported):\n"
    );
    let mut seen: Vec<String> = Vec::new();
    for r in results {
        let mut t: Vec<String> = METRICS
            .iter()
            .filter_map(|m| {
                r.case
                    .tol(*m)
                    .map(|t| format!("{} {}", m.name(), t.describe(*m)))
            })
            .collect();
        t.extend(r.share.as_ref().and_then(|sh| sh.tolerance_line()));
        t.extend(r.case.period_tol_ms.map(|ms| {
            format!("iocost period (median gap between `iocost_ioc_vrate_adj` events) ±{ms} ms")
        }));
        let line = if t.is_empty() {
            "reported only".into()
        } else {
            t.join(", ")
        };
        let fam = match r.case.name.split('-').next().unwrap_or("") {
            "throttle" if r.case.name.ends_with("-thinktime") => "throttle-*-thinktime",
            "throttle" => "throttle-*",
            "iocost" if r.case.name.starts_with("iocost-period") => "iocost-period-*",
            "iocost" => "iocost-vrate-*",
            "iolatency" => "iolatency-*",
            "ioprio" => "ioprio-*",
            // judged per shape
            "bfq" => r.case.name.as_str(),
            _ => "capped-qos-*",
        };
        let key = format!("{fam}|{line}");
        if !seen.contains(&key) {
            seen.push(key);
            let _ = writeln!(s, "- `{fam}`: {line}");
        }
    }
    let loops: Vec<String> = results
        .iter()
        .filter_map(|r| Some(r.qos.as_ref()?.markdown(&r.case.name)))
        .collect();
    if !loops.is_empty() {
        let _ = writeln!(
            s,
            "\niocost's QoS loop, period by period (the period judged where a tolerance above says so; the rest reported):\n"
        );
        for l in loops {
            let _ = writeln!(s, "{l}");
        }
    }
    let mut reasons: Vec<(String, String)> = Vec::new();
    for r in results {
        match &r.status {
            Status::NotRunnable(why) | Status::Error(why) => {
                reasons.push((r.case.name.clone(), why.clone()))
            }
            Status::HostStalled { why, .. } => {
                reasons.push((r.case.name.clone(), format!("not judged: {why}")))
            }
            _ => {}
        }
    }
    if !reasons.is_empty() {
        let _ = writeln!(s, "\nNot run on this host:\n");
        let mut last = String::new();
        let mut names: Vec<String> = Vec::new();
        for (n, w) in reasons {
            if w != last && !names.is_empty() {
                let _ = writeln!(s, "- {}: {last}", names.join(", "));
                names.clear();
            }
            last = w;
            names.push(format!("`{n}`"));
        }
        let _ = writeln!(s, "- {}: {last}", names.join(", "));
    }
    s
}
