//! iocost's QoS loop compared period by period. The kernel emits
//! `iocost:iocost_ioc_vrate_adj` from `ioc_adjust_base_vrate` (block/blk-iocost.c)
//! whenever it moves vrate, and in the periods where busy_level changed or
//! cgroups were lagging while it held vrate; the simulator emits the same
//! event under the same conditions (crates/core/src/block/iocost/vtime.rs), so
//! the two event streams are comparable line for line. What is compared is
//! their distributions — vrate, busy_level, missed_ppm, rq_wait_pct,
//! nr_lagging, nr_shortages — and how often the event fires, because the
//! guest's and the simulator's periods do not start at the same instants.
//!
//! The distributions are reported, not judged: on the capped disk the simulated
//! loop is known to run away from the kernel's (issue 13), and this table is
//! the measure of that gap.

use std::fmt::Write as _;

use blklab_core::block::iocost::VTIME_PER_USEC;
use blklab_core::sim::trace::TraceSink;

/// One `iocost_ioc_vrate_adj` event (TP_printk of include/trace/events/iocost.h:
/// `[dev] vrate=OLD->NEW busy=B missed_ppm=R:W rq_wait_pct=P lagging=L shortages=S`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VrateAdj {
    /// When it fired: the trace line's timestamp (the kernel's, or the
    /// simulator's clock), in ns.
    pub t_ns: u64,
    pub vrate_old: u64,
    pub vrate_new: u64,
    pub busy_level: i32,
    pub missed_ppm: [u32; 2],
    pub rq_wait_pct: u32,
    pub nr_lagging: i32,
    pub nr_shortages: i32,
}

const EVENT: &str = "iocost_ioc_vrate_adj: ";

fn field<T: std::str::FromStr>(payload: &str, key: &str) -> Result<T, String> {
    let v = payload
        .split_whitespace()
        .find_map(|w| w.strip_prefix(key)?.strip_prefix('='))
        .ok_or_else(|| format!("no {key}= in \"{payload}\""))?;
    v.parse()
        .map_err(|_| format!("{key}={v}: not a number in \"{payload}\""))
}

fn pair<T: std::str::FromStr>(payload: &str, key: &str, sep: &str) -> Result<(T, T), String> {
    let v: String = field(payload, key)?;
    let (a, b) = v
        .split_once(sep)
        .ok_or_else(|| format!("{key}={v}: expected A{sep}B"))?;
    let num = |x: &str| {
        x.parse::<T>()
            .map_err(|_| format!("{key}={v}: not a number"))
    };
    Ok((num(a)?, num(b)?))
}

impl VrateAdj {
    /// The event's payload (what follows `[dev]`), fired at `t_ns`.
    pub fn parse_payload(t_ns: u64, payload: &str) -> Result<VrateAdj, String> {
        let (vrate_old, vrate_new) = pair::<u64>(payload, "vrate", "->")?;
        let (r, w) = pair::<u32>(payload, "missed_ppm", ":")?;
        Ok(VrateAdj {
            t_ns,
            vrate_old,
            vrate_new,
            busy_level: field(payload, "busy")?,
            missed_ppm: [r, w],
            rq_wait_pct: field(payload, "rq_wait_pct")?,
            nr_lagging: field(payload, "lagging")?,
            nr_shortages: field(payload, "shortages")?,
        })
    }

    /// One line of ftrace's `trace` file: `None` for other lines (headers,
    /// other events), an error for this event with a payload it cannot read.
    pub fn parse_line(line: &str) -> Option<Result<VrateAdj, String>> {
        let at = line.find(EVENT)?;
        Some(
            timestamp_ns(&line[..at])
                .and_then(|t| Self::parse_payload(t, &line[at + EVENT.len()..])),
        )
    }

    /// vrate after the adjustment, in percent of the model's nominal rate.
    pub fn vrate_pct(&self) -> f64 {
        self.vrate_new as f64 * 100.0 / VTIME_PER_USEC as f64
    }
}

/// The timestamp that ends the part of an ftrace line before the event's
/// name (`... [000] ..s1.    12.345678: `): seconds with a fraction of up
/// to nine digits, as ns.
fn timestamp_ns(head: &str) -> Result<u64, String> {
    let tok = head
        .trim_end()
        .strip_suffix(':')
        .and_then(|h| h.split_whitespace().last())
        .ok_or_else(|| format!("no timestamp before the event in \"{}\"", head.trim()))?;
    blklab_host::events::seconds_ns(tok)
        .ok_or_else(|| format!("timestamp \"{tok}\": expected SECONDS.FRACTION"))
}

/// Every `iocost_ioc_vrate_adj` event of a `trace` file's text.
pub fn parse_trace(text: &str) -> Result<Vec<VrateAdj>, String> {
    text.lines()
        .enumerate()
        .filter_map(|(i, l)| VrateAdj::parse_line(l).map(|r| (i, r)))
        .map(|(i, r)| r.map_err(|e| format!("trace line {}: {e}", i + 1)))
        .collect()
}

/// The simulator's events as it emits them, and the first payload that did
/// not parse (a simulator bug the comparison must show, not hide).
#[derive(Debug, Default)]
pub struct Collected {
    pub events: Vec<VrateAdj>,
    pub error: Option<String>,
}

/// A trace sink keeping only `iocost_ioc_vrate_adj`, shared with the caller
/// (the sink itself moves into the simulation).
#[derive(Debug, Default, Clone)]
pub struct Collect(pub std::rc::Rc<std::cell::RefCell<Collected>>);

impl TraceSink for Collect {
    fn event(&mut self, t: u64, name: &str, payload: &str) {
        if name != "iocost:iocost_ioc_vrate_adj" {
            return;
        }
        let mut c = self.0.borrow_mut();
        match VrateAdj::parse_payload(t, payload) {
            Ok(ev) => c.events.push(ev),
            Err(e) => {
                c.error.get_or_insert(e);
            }
        }
    }
}

impl Collect {
    /// The events, or the first unreadable payload.
    pub fn take(&self) -> Result<Vec<VrateAdj>, String> {
        let mut c = self.0.borrow_mut();
        match c.error.take() {
            Some(e) => Err(format!("the simulator's iocost_ioc_vrate_adj: {e}")),
            None => Ok(std::mem::take(&mut c.events)),
        }
    }
}

/// The quantities compared, in table order.
pub const FIELDS: [&str; 7] = [
    "vrate %",
    "busy_level",
    "missed_ppm read",
    "missed_ppm write",
    "rq_wait_pct",
    "nr_lagging",
    "nr_shortages",
];

fn values(ev: &VrateAdj) -> [f64; 7] {
    [
        ev.vrate_pct(),
        ev.busy_level as f64,
        ev.missed_ppm[0] as f64,
        ev.missed_ppm[1] as f64,
        ev.rq_wait_pct as f64,
        ev.nr_lagging as f64,
        ev.nr_shortages as f64,
    ]
}

/// One quantity over a run's events.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Dist {
    pub p10: f64,
    pub p50: f64,
    pub p90: f64,
    pub max: f64,
    /// Share of events with a non-zero value.
    pub nonzero: f64,
}

/// The nearest-rank percentile of sorted `v` (p in 0..=100).
fn pct(v: &[f64], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let rank = ((p / 100.0) * v.len() as f64).ceil().max(1.0) as usize;
    v[rank.min(v.len()) - 1]
}

/// A run's events summarised.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub events: usize,
    /// Events per second of the run.
    pub per_s: f64,
    /// iocost's period as the events show it: the median time between
    /// consecutive events, in ms (NaN with fewer than two). In a busy or
    /// lagging period `ioc_adjust_base_vrate` always fires, so on a
    /// saturated device most consecutive events are one period apart and
    /// the median is the period the timer really keeps
    /// (`ioc_refresh_period_us`'s length, rounded by `usecs_to_jiffies`
    /// and run by the timer wheel). Gaps over `MAX_PERIOD_NS` (the kernel's
    /// longest period, with slack) are not periods: they are the pauses
    /// between repetitions, whose events are concatenated.
    pub period_ms: f64,
    pub fields: [Dist; 7],
}

/// blk-iocost's `MAX_PERIOD` (1 s) and a jiffy of slack at HZ=100.
const MAX_PERIOD_NS: u64 = 1_010_000_000;

/// The median of the intervals between consecutive events (ms).
fn period_ms(events: &[VrateAdj]) -> f64 {
    let mut gaps: Vec<f64> = events
        .windows(2)
        .filter_map(|w| w[1].t_ns.checked_sub(w[0].t_ns))
        .filter(|&d| d > 0 && d <= MAX_PERIOD_NS)
        .map(|d| d as f64 / 1e6)
        .collect();
    gaps.sort_by(f64::total_cmp);
    pct(&gaps, 50.0)
}

impl Summary {
    pub fn of(events: &[VrateAdj], runtime_s: f64) -> Summary {
        let fields = std::array::from_fn(|k| {
            let mut v: Vec<f64> = events.iter().map(|e| values(e)[k]).collect();
            v.sort_by(f64::total_cmp);
            Dist {
                p10: pct(&v, 10.0),
                p50: pct(&v, 50.0),
                p90: pct(&v, 90.0),
                max: v.last().copied().unwrap_or(f64::NAN),
                nonzero: if v.is_empty() {
                    f64::NAN
                } else {
                    v.iter().filter(|x| **x != 0.0).count() as f64 / v.len() as f64
                },
            }
        });
        Summary {
            events: events.len(),
            per_s: events.len() as f64 / runtime_s.max(1e-9),
            period_ms: period_ms(events),
            fields,
        }
    }
}

/// Both sides of a case's QoS loop.
#[derive(Debug, Clone, PartialEq)]
pub struct QosLoop {
    /// The real kernel's events of its first run (None: not traced).
    pub real: Option<Summary>,
    pub sim: Option<Summary>,
}

fn num(x: f64) -> String {
    if x.is_nan() {
        "-".into()
    } else if x.fract() == 0.0 || x.abs() >= 100.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    }
}

fn dist(d: Option<&Dist>) -> String {
    match d {
        Some(d) => format!(
            "{}/{}/{} max {} nz {:.0}%",
            num(d.p10),
            num(d.p50),
            num(d.p90),
            num(d.max),
            d.nonzero * 100.0
        ),
        None => "-".into(),
    }
}

impl QosLoop {
    /// Text lines: one per quantity, real and simulated p10/p50/p90, max and
    /// the share of events where it is non-zero.
    pub fn text(&self, indent: &str) -> String {
        let mut s = String::new();
        let count = |x: &Option<Summary>| {
            x.as_ref()
                .map(|x| {
                    format!(
                        "{} events ({:.1}/s, period {} ms)",
                        x.events,
                        x.per_s,
                        num(x.period_ms)
                    )
                })
                .unwrap_or_else(|| "not traced".into())
        };
        let _ = writeln!(
            s,
            "{indent}QoS loop (iocost_ioc_vrate_adj; p10/p50/p90, max, share non-zero): real {}, sim {}",
            count(&self.real),
            count(&self.sim)
        );
        for (k, f) in FIELDS.iter().enumerate() {
            let _ = writeln!(
                s,
                "{indent}  {f:<17} real {:<34} sim {}",
                dist(self.real.as_ref().map(|x| &x.fields[k])),
                dist(self.sim.as_ref().map(|x| &x.fields[k]))
            );
        }
        s
    }

    /// A Markdown table of the same.
    pub fn markdown(&self, case: &str) -> String {
        let mut s = String::new();
        let count = |x: &Option<Summary>| {
            x.as_ref()
                .map(|x| {
                    format!(
                        "{} ({:.1}/s, period {} ms)",
                        x.events,
                        x.per_s,
                        num(x.period_ms)
                    )
                })
                .unwrap_or_else(|| "—".into())
        };
        let _ = writeln!(
            s,
            "`{case}`: `iocost_ioc_vrate_adj` events, real {} / simulator {}. Cells: p10 / p50 / p90, max, share of events non-zero.\n",
            count(&self.real),
            count(&self.sim)
        );
        let _ = writeln!(s, "| quantity | real kernel | simulator |\n|---|---|---|");
        for (k, f) in FIELDS.iter().enumerate() {
            let _ = writeln!(
                s,
                "| {f} | {} | {} |",
                dist(self.real.as_ref().map(|x| &x.fields[k])),
                dist(self.sim.as_ref().map(|x| &x.fields[k]))
            );
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KERNEL: &str = "# tracer: nop\n#\n\
        fio-61      [000] ..s1.    12.345678: iocost_ioc_vrate_adj: [loop1] vrate=137438->131940 busy=1 missed_ppm=20000:0 rq_wait_pct=3 lagging=0 shortages=1\n\
        <idle>-0       [000] ..s1.    12.395678: iocost_ioc_vrate_adj: [loop1] vrate=131940->131940 busy=0 missed_ppm=0:0 rq_wait_pct=0 lagging=2 shortages=0\n\
        fio-61      [000] ..s1.    12.445678: iocost_ioc_vrate_adj: [loop1] vrate=131940->137438 busy=-2 missed_ppm=0:0 rq_wait_pct=0 lagging=0 shortages=0\n";

    #[test]
    fn reads_the_kernels_lines_and_skips_the_rest() {
        let ev = parse_trace(KERNEL).unwrap();
        assert_eq!(ev.len(), 3);
        assert_eq!(
            ev[0],
            VrateAdj {
                t_ns: 12_345_678_000,
                vrate_old: 137438,
                vrate_new: 131940,
                busy_level: 1,
                missed_ppm: [20000, 0],
                rq_wait_pct: 3,
                nr_lagging: 0,
                nr_shortages: 1
            }
        );
        assert_eq!(ev[2].busy_level, -2);
        // 131940 of VTIME_PER_USEC (137438) is 96 %
        assert!(
            (ev[0].vrate_pct() - 96.0).abs() < 0.01,
            "{}",
            ev[0].vrate_pct()
        );
    }

    #[test]
    fn a_damaged_event_is_an_error_naming_the_line() {
        let t = "x\n y: iocost_ioc_vrate_adj: [loop1] vrate=1->x busy=0\n";
        let e = parse_trace(t).unwrap_err();
        assert!(e.starts_with("trace line 2: timestamp \"y\""), "{e}");
        let t = "x\n y 1.5: iocost_ioc_vrate_adj: [loop1] vrate=1->x busy=0\n";
        let e = parse_trace(t).unwrap_err();
        assert!(e.starts_with("trace line 2: vrate=1->x"), "{e}");
        let t = "y 1.x5: iocost_ioc_vrate_adj: [loop1] vrate=1->2 busy=0\n";
        let e = parse_trace(t).unwrap_err();
        assert!(e.contains("timestamp \"1.x5\""), "{e}");
    }

    #[test]
    fn the_period_is_the_median_gap_and_skips_pauses_between_repetitions() {
        let at = |t_ns| VrateAdj {
            t_ns,
            vrate_old: 1,
            vrate_new: 1,
            busy_level: 1,
            missed_ppm: [0, 0],
            rq_wait_pct: 0,
            nr_lagging: 0,
            nr_shortages: 0,
        };
        // two repetitions of 16 ms periods with one period missing, 3 s apart
        let ms = 1_000_000;
        let ev: Vec<VrateAdj> = [0, 16, 32, 64, 80, 3080, 3096, 3112, 3128]
            .iter()
            .map(|&t| at(t * ms))
            .collect();
        assert_eq!(period_ms(&ev), 16.0);
        assert!(period_ms(&ev[..1]).is_nan());
    }

    #[test]
    fn the_simulators_lines_parse_as_the_kernels() {
        // the simulator's own event format, from a real run of its iocost
        let line = blklab_core::sim::trace::format_line(
            1_500_000,
            "iocost:iocost_ioc_vrate_adj",
            "[sda] vrate=137438->142936 busy=-1 missed_ppm=0:0 rq_wait_pct=0 lagging=0 shortages=3",
        );
        let ev = VrateAdj::parse_line(&line).unwrap().unwrap();
        assert_eq!(
            (ev.t_ns, ev.vrate_new, ev.nr_shortages),
            (1_500_000, 142936, 3)
        );
    }

    #[test]
    fn summary_percentiles_and_shares() {
        let ev = parse_trace(KERNEL).unwrap();
        let s = Summary::of(&ev, 2.0);
        assert_eq!(s.events, 3);
        assert!((s.per_s - 1.5).abs() < 1e-9);
        let busy = s.fields[1];
        assert_eq!(
            (busy.p10, busy.p50, busy.p90, busy.max),
            (-2.0, 0.0, 1.0, 1.0)
        );
        assert!((busy.nonzero - 2.0 / 3.0).abs() < 1e-9);
        let empty = Summary::of(&[], 1.0);
        assert!(empty.fields[0].p50.is_nan());
        // events 50 ms apart: the period
        assert!((s.period_ms - 50.0).abs() < 1e-9, "{}", s.period_ms);
        let q = QosLoop {
            real: Some(s),
            sim: None,
        };
        let t = q.text("");
        assert!(
            t.contains("real 3 events (1.5/s, period 50 ms), sim not traced"),
            "{t}"
        );
        assert!(q
            .markdown("c")
            .contains("| busy_level | -2/0/1 max 1 nz 67% | - |"));
    }
}
