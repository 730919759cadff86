//! `--report FILE.html`: one self-contained HTML page for a run or a
//! comparison — the scenario, the summary tables and SVG plots of the time
//! series (`crate::timeseries`), every variant overlaid on each plot. The
//! plots are drawn by plotters as inline SVG: nothing is fetched, nothing
//! depends on a script (a few lines of script only count what rendered, for
//! the browser test), and the same run gives the same bytes.
//!
//! Not to be confused with `crate::report`, the text tables.

mod chart;
mod sections;
mod series_view;

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context, Result};
use plotters::style::RGBColor;

pub use chart::{svg, thin, Chart, Line, Mark, MAX_POINTS, PALETTE};

use crate::timeseries::Series;

/// One run of the report: its name (the variant's values, or "run"), data
/// and, for a scenario with `[[phase]]`, where each phase began.
pub struct Variant<'a> {
    pub name: String,
    pub series: &'a Series,
    /// (phase name, start in seconds of the run), in phase order.
    pub phase_starts: Vec<(String, f64)>,
}

/// Everything the page shows.
pub struct Input<'a> {
    pub title: String,
    /// Paragraphs under the title (the scenario's description, what the
    /// compared switches mean).
    pub notes: Vec<String>,
    /// The command that produced the report.
    pub command: String,
    pub scenario_path: String,
    pub scenario_text: String,
    pub variants: Vec<Variant<'a>>,
    /// The text tables (summary, or comparison), in order.
    pub tables: Vec<(String, String)>,
}

/// Plot size, pixels.
const W: u32 = 640;
const H: u32 = 300;

/// Text made safe for HTML.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const STYLE: &str = "body{font-family:sans-serif;margin:24px;color:#222;max-width:1400px}\
h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ccc}\
p.note{color:#555;font-size:14px;max-width:1100px}\
pre{background:#f6f6f6;padding:10px;font-size:12.5px;overflow-x:auto}\
.grid{display:flex;flex-wrap:wrap;gap:12px}\
figure{margin:0;border:1px solid #e4e4e4}figcaption{display:none}\
.sw{display:inline-block;width:14px;height:14px;margin:0 4px 0 12px;vertical-align:middle}\
.legend{font-size:12.5px;padding:0 10px 8px 70px;max-width:560px}.key{display:inline-block;margin-right:14px}\
.mark{display:inline-block;width:22px;margin-right:5px;vertical-align:middle}";

/// The self-check the browser test reads: every figure has a drawn SVG.
const CHECK: &str =
    "addEventListener('load',function(){var f=document.querySelectorAll('figure'),ok=0;\
f.forEach(function(x){var s=x.querySelector('svg');if(s){var r=s.getBoundingClientRect();\
if(r.width>0&&r.height>0&&s.querySelectorAll('polyline,path,polygon,rect').length>3)ok++;}});\
document.body.setAttribute('data-charts',ok+'/'+f.length);});";

/// The page.
pub fn render(inp: &Input<'_>) -> Result<String> {
    let vs = &inp.variants;
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}</style></head><body>\n",
        esc(&inp.title)
    );
    let _ = writeln!(h, "<h1>{}</h1>", esc(&inp.title));
    for n in &inp.notes {
        let _ = writeln!(h, "<p>{}</p>", esc(n));
    }
    let _ = writeln!(
        h,
        "<p class=\"note\"><code>{}</code></p>",
        esc(&inp.command)
    );
    if vs.len() > 1 {
        h.push_str("<p>Variants:");
        for (i, v) in vs.iter().enumerate() {
            let c = chart::PALETTE[i % chart::PALETTE.len()];
            let _ = write!(
                h,
                "<span class=\"sw\" style=\"background:#{:02x}{:02x}{:02x}\"></span>{}",
                c.0,
                c.1,
                c.2,
                esc(&v.name)
            );
        }
        h.push_str("</p>\n");
    }
    for (name, text) in &inp.tables {
        let _ = writeln!(h, "<h2>{}</h2>\n<pre>{}</pre>", esc(name), esc(text));
    }
    let secs = [
        sections::iocost(vs),
        sections::hweight(vs),
        sections::cgroup_io(vs),
        sections::latency_cdf(vs),
        sections::throttle(vs),
        sections::iotrack(vs),
        sections::device(vs),
    ];
    let marks = phase_marks(vs);
    let mut n = 0;
    for mut s in secs.into_iter().flatten() {
        for c in s.charts.iter_mut().filter(|c| c.time_x) {
            c.marks.clone_from(&marks);
        }
        let _ = writeln!(
            h,
            "<h2>{}</h2>\n<p class=\"note\">{}</p>\n<div class=\"grid\">",
            esc(&s.heading),
            esc(&s.note)
        );
        for c in &s.charts {
            n += 1;
            let _ = writeln!(
                h,
                "<figure id=\"chart-{n}\" data-title=\"{}\">{}{}<figcaption>{}</figcaption></figure>",
                esc(&c.title),
                chart::svg(c, W, H)?,
                legend_html(c),
                esc(&c.title)
            );
        }
        h.push_str("</div>\n");
    }
    if n == 0 {
        h.push_str("<p>No time series: the run had no controller activity or completions.</p>\n");
    }
    let _ = write!(
        h,
        "<h2>Scenario</h2>\n<p class=\"note\">{}</p>\n<pre>{}</pre>\n<script>{CHECK}</script>\n</body></html>\n",
        esc(&inp.scenario_path),
        esc(&inp.scenario_text)
    );
    Ok(h)
}

/// The phases' starts as marks on a time axis: a phase that begins at 0 is
/// the run's start and needs none; in a comparison each variant's marks
/// take its colour and its name (the phases end when their jobs do, which
/// differs between variants), in a single run the phase's name alone.
fn phase_marks(vs: &[Variant<'_>]) -> Vec<Mark> {
    let mut out = Vec::new();
    for (i, v) in vs.iter().enumerate() {
        for (name, t) in v.phase_starts.iter().filter(|(_, t)| *t > 0.0) {
            out.push(Mark {
                x: *t,
                label: if vs.len() > 1 {
                    format!("{name} ({})", v.name)
                } else {
                    name.clone()
                },
                color: if vs.len() > 1 {
                    chart::PALETTE[i % chart::PALETTE.len()]
                } else {
                    RGBColor(0x44, 0x44, 0x44)
                },
            });
        }
    }
    out
}

/// A chart's legend: one swatch per line (a band for stacked areas, a
/// dashed stroke for dashed lines), in drawing order.
fn legend_html(c: &Chart) -> String {
    let mut h = String::from("<div class=\"legend\">");
    for l in &c.lines {
        let rgb = format!("#{:02x}{:02x}{:02x}", l.color.0, l.color.1, l.color.2);
        let style = if c.stacked {
            format!("background:{rgb};height:10px")
        } else {
            let kind = if l.dashed { "dashed" } else { "solid" };
            format!("border-top:3px {kind} {rgb}")
        };
        let _ = write!(
            h,
            "<span class=\"key\"><span class=\"mark\" style=\"{style}\"></span>{}</span>",
            esc(&l.label)
        );
    }
    h.push_str("</div>");
    h
}

/// Write the page: to a temporary file beside `path`, then renamed over it,
/// so a failure leaves nothing half-written.
pub fn write(path: &Path, html: &str) -> Result<()> {
    crate::output::write_atomic(path, html.as_bytes())
        .with_context(|| format!("--report {}", path.display()))
}
