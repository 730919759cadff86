//! The tuner's report: one self-contained HTML page (through the HTML
//! report's plotting, `report_html`) with the trade-off plot — the
//! protected jobs' first target against the other jobs' throughput, the
//! Pareto front as a line, the target as a dashed vertical line, the
//! recommendation as a short cross — the Pareto table and the verdict.

use anyhow::Result;

use super::{render, Outcome, Setup};
use crate::report_html::{esc, svg, Chart, Line, PALETTE};

/// The trade-off plot as SVG.
pub fn plot(setup: &Setup, out: &Outcome) -> Result<String> {
    let t0 = &setup.targets[0];
    let name = t0
        .text
        .split(['<', '>'])
        .next()
        .unwrap_or("")
        .trim()
        .to_string();
    let mut front: Vec<(f64, f64)> = out
        .front
        .iter()
        .map(|&i| (out.scored[i].worst[0], out.scored[i].others_mbps))
        .collect();
    front.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let ys = out.scored.iter().map(|s| s.others_mbps);
    let (lo, hi) = ys.fold((f64::MAX, f64::MIN), |(l, h), y| (l.min(y), h.max(y)));
    let xs = out.scored.iter().map(|s| s.worst[0]).chain([t0.value]);
    let (xlo, xhi) = xs.fold((f64::MAX, f64::MIN), |(l, h), x| (l.min(x), h.max(x)));
    let (dx, dy) = ((xhi - xlo).max(1e-9) * 0.03, (hi - lo).max(1e-9) * 0.05);
    let mut lines = vec![Line {
        label: "Pareto front".into(),
        color: PALETTE[1],
        dashed: false,
        points: front,
    }];
    lines.push(Line {
        label: format!("target {}", t0.text),
        color: PALETTE[0],
        dashed: true,
        points: vec![(t0.value, lo), (t0.value, hi)],
    });
    if let Some(r) = out.recommended {
        let (x, y) = (out.scored[r].worst[0], out.scored[r].others_mbps);
        lines.push(Line {
            label: "recommended".into(),
            color: PALETTE[2],
            dashed: false,
            points: vec![(x - dx, y), (x + dx, y)],
        });
    }
    let chart = Chart {
        title: format!(
            "{name} of {} against the others' throughput",
            setup.protected.join(", ")
        ),
        x_desc: format!("{name} ({}), worst over seeds", t0.unit()),
        y_desc: "others' MB/s (mean over seeds)".into(),
        lines,
        x_range: Some((xlo - dx, xhi + dx)),
        y_range: Some((lo - dy, hi + dy)),
        ..Chart::default()
    };
    svg(&chart, 720, 360)
}

/// The page.
pub fn html(setup: &Setup, out: &Outcome) -> Result<String> {
    let mut h = String::from(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>blklab tune iocost</title>\
<style>body{font-family:sans-serif;margin:24px;color:#222}pre{background:#f6f6f6;padding:10px}</style>\
</head><body>",
    );
    h.push_str(&format!(
        "<h1>blklab tune iocost: {}</h1><p>{} candidates x {} seeds; protected: {}; others: {}</p>",
        esc(&setup.plan.path.display().to_string()),
        out.scored.len(),
        setup.plan.seeds,
        esc(&setup.protected.join(", ")),
        esc(&setup.others.join(", "))
    ));
    h.push_str(&format!("<figure>{}</figure>", plot(setup, out)?));
    h.push_str(&format!(
        "<h2>Verdict</h2><pre>{}</pre>",
        esc(&render::verdict(setup, out))
    ));
    h.push_str(&format!(
        "<h2>Pareto front</h2><pre>{}</pre>",
        esc(&render::table(setup, out))
    ));
    h.push_str("</body></html>\n");
    Ok(h)
}
