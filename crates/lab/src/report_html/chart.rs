//! One plot of the report, drawn by plotters into an SVG string: lines (or
//! stacked areas) over a shared x axis, an optional log x axis and optional
//! vertical grid lines (the iocost period grid). The legend is HTML under
//! the plot (`super::legend_html`), so it never hides data. Long lines are thinned to
//! [`MAX_POINTS`] keeping each bucket's extremes, so spikes survive.

use anyhow::{anyhow, Result};
use plotters::prelude::*;

/// Points a line keeps at most (a 1000-pixel plot cannot show more).
pub const MAX_POINTS: usize = 1200;

/// A labelled vertical line: where a phase of the run begins.
#[derive(Clone, Debug)]
pub struct Mark {
    pub x: f64,
    pub label: String,
    pub color: RGBColor,
}

/// One line of a chart.
#[derive(Clone, Debug)]
pub struct Line {
    pub label: String,
    pub color: RGBColor,
    pub dashed: bool,
    pub points: Vec<(f64, f64)>,
}

/// What to draw.
#[derive(Clone, Debug, Default)]
pub struct Chart {
    pub title: String,
    pub x_desc: String,
    pub y_desc: String,
    pub lines: Vec<Line>,
    pub log_x: bool,
    /// Draw the lines as stacked areas (the first line at the bottom).
    pub stacked: bool,
    /// Vertical grid lines at these x values.
    pub grid_x: Vec<f64>,
    /// Force the y range (else from the data, from 0 when all are >= 0).
    pub y_range: Option<(f64, f64)>,
    pub x_range: Option<(f64, f64)>,
    /// The x axis is the run's time, so phase marks belong on it.
    pub time_x: bool,
    /// Dashed vertical lines with a label at the top (phase starts); those
    /// outside the x range are not drawn.
    pub marks: Vec<Mark>,
}

/// The palette: distinguishable on screen and in print.
pub const PALETTE: [RGBColor; 8] = [
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0xe3, 0x77, 0xc2),
    RGBColor(0x17, 0xbe, 0xcf),
];

/// Keep at most `max` points: per bucket, the lowest and the highest in x order.
pub fn thin(points: &[(f64, f64)], max: usize) -> Vec<(f64, f64)> {
    if points.len() <= max || max < 4 {
        return points.to_vec();
    }
    let per = points.len().div_ceil(max / 2);
    let mut out = Vec::with_capacity(max + 2);
    for b in points.chunks(per) {
        let lo = b
            .iter()
            .enumerate()
            .min_by(|a, c| a.1 .1.total_cmp(&c.1 .1))
            .map(|x| x.0)
            .unwrap_or(0);
        let hi = b
            .iter()
            .enumerate()
            .max_by(|a, c| a.1 .1.total_cmp(&c.1 .1))
            .map(|x| x.0)
            .unwrap_or(0);
        let (a, c) = (lo.min(hi), lo.max(hi));
        out.push(b[a]);
        if c != a {
            out.push(b[c]);
        }
    }
    out
}

fn bounds(c: &Chart) -> ((f64, f64), (f64, f64)) {
    let pts = c.lines.iter().flat_map(|l| l.points.iter());
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(x, y) in pts {
        if x.is_finite() && y.is_finite() {
            x0 = x0.min(x);
            x1 = x1.max(x);
            y0 = y0.min(y);
            y1 = y1.max(y);
        }
    }
    if x0 > x1 {
        (x0, x1, y0, y1) = (0.0, 1.0, 0.0, 1.0);
    }
    if y0 >= 0.0 && !c.log_x {
        y0 = 0.0;
    }
    if y1 <= y0 {
        y1 = y0 + 1.0;
    }
    if x1 <= x0 {
        x1 = x0 + 1.0;
    }
    let pad = (y1 - y0) * 0.05;
    let top = pad;
    let y = c
        .y_range
        .unwrap_or((if y0 == 0.0 { 0.0 } else { y0 - pad }, y1 + top));
    (c.x_range.unwrap_or((x0, x1)), y)
}

/// Draw the chart as an SVG document of `w` x `h` pixels.
pub fn svg(c: &Chart, w: u32, h: u32) -> Result<String> {
    let mut buf = String::new();
    draw(c, w, h, &mut buf).map_err(|e| anyhow!("plotting {}: {e}", c.title))?;
    Ok(buf)
}

type DrawResult = std::result::Result<(), Box<dyn std::error::Error>>;

fn draw(c: &Chart, w: u32, h: u32, buf: &mut String) -> DrawResult {
    let root = SVGBackend::with_string(buf, (w, h)).into_drawing_area();
    root.fill(&WHITE)?;
    let ((x0, x1), (y0, y1)) = bounds(c);
    let mut b = ChartBuilder::on(&root);
    b.caption(&c.title, ("sans-serif", 17))
        .margin(10)
        .x_label_area_size(38)
        .y_label_area_size(62);
    if c.log_x {
        let mut ch = b.build_cartesian_2d((x0.max(1e-3)..x1).log_scale(), y0..y1)?;
        ch.configure_mesh()
            .x_label_formatter(&|v| num(*v))
            .y_label_formatter(&|v| num(*v))
            .x_desc(&c.x_desc)
            .y_desc(&c.y_desc)
            .light_line_style(RGBColor(0xee, 0xee, 0xee))
            .draw()?;
        for l in &c.lines {
            let pts = thin(&l.points, MAX_POINTS);
            let st = l.color.stroke_width(2);
            ch.draw_series(LineSeries::new(pts, st))?;
        }
    } else {
        let mut ch = b.build_cartesian_2d(x0..x1, y0..y1)?;
        // with a grid of its own (the periods), the mesh keeps its bold lines only
        let light = if c.grid_x.is_empty() {
            RGBColor(0xee, 0xee, 0xee).into()
        } else {
            TRANSPARENT
        };
        ch.configure_mesh()
            .x_label_formatter(&|v| num(*v))
            .y_label_formatter(&|v| num(*v))
            .x_desc(&c.x_desc)
            .y_desc(&c.y_desc)
            .light_line_style(light)
            .draw()?;
        for &g in &c.grid_x {
            ch.draw_series(std::iter::once(PathElement::new(
                vec![(g, y0), (g, y1)],
                RGBColor(0xc8, 0xc8, 0xd8).stroke_width(1),
            )))?;
        }
        for m in c.marks.iter().filter(|m| m.x >= x0 && m.x <= x1) {
            ch.draw_series(DashedLineSeries::new(
                [(m.x, y0), (m.x, y1)],
                3,
                3,
                m.color.mix(0.6).stroke_width(1),
            ))?;
            ch.draw_series(std::iter::once(Text::new(
                m.label.clone(),
                (m.x, y1),
                ("sans-serif", 12).into_font().color(&m.color),
            )))?;
        }
        if c.stacked {
            // cumulative tops, drawn from the top down so each band shows
            let mut tops: Vec<Vec<(f64, f64)>> = Vec::new();
            for (i, l) in c.lines.iter().enumerate() {
                let pts = thin(&l.points, MAX_POINTS);
                let top: Vec<(f64, f64)> = if i == 0 {
                    pts
                } else {
                    pts.iter()
                        .map(|&(x, y)| (x, y + value_at(&tops[i - 1], x)))
                        .collect()
                };
                tops.push(top);
            }
            for (l, top) in c.lines.iter().zip(tops.iter()).rev() {
                let color = l.color;
                ch.draw_series(AreaSeries::new(top.clone(), 0.0, color.mix(0.75)))?;
            }
        } else {
            for (i, l) in c.lines.iter().enumerate() {
                let pts = thin(&l.points, MAX_POINTS);
                let color = l.color;
                // dense lines thinner, so that overlaid variants stay apart;
                // the first line (drawn first, underneath) wider so that it
                // shows where a later one runs on top of it
                let w =
                    if pts.len() > 400 { 1 } else { 2 } + u32::from(i == 0 && c.lines.len() > 1);
                if l.dashed {
                    ch.draw_series(DashedLineSeries::new(
                        pts,
                        5,
                        4,
                        color.stroke_width(w).into(),
                    ))?;
                } else {
                    ch.draw_series(LineSeries::new(pts, color.stroke_width(w)))?;
                }
            }
        }
    }
    root.present()?;
    Ok(())
}

/// The y of a polyline at `x` (the last point at or before it; 0 before the first).
fn value_at(pts: &[(f64, f64)], x: f64) -> f64 {
    match pts.partition_point(|p| p.0 <= x) {
        0 => 0.0,
        i => pts[i - 1].1,
    }
}

/// An axis label: no trailing ".0", thousands as "k"/"M".
fn num(v: f64) -> String {
    let a = v.abs();
    let (x, suffix) = if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e4 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    let s = if x.fract().abs() < 1e-9 {
        format!("{x:.0}")
    } else if x.abs() >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.3}")
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    };
    format!("{s}{suffix}")
}
