//! The figures compared per job: read from fio's JSON (the real fio's and the
//! simulator's, through the same code), combined over runs by the median, and
//! judged against a tolerance.

use serde_json::Value;

/// The metrics, in table order.
pub const METRICS: [Metric; 8] = [
    Metric::Iops,
    Metric::Mbps,
    Metric::SlatMean,
    Metric::ClatMean,
    Metric::P50,
    Metric::P90,
    Metric::P99,
    Metric::Max,
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Metric {
    Iops,
    Mbps,
    SlatMean,
    ClatMean,
    P50,
    P90,
    P99,
    Max,
}

impl Metric {
    pub fn name(self) -> &'static str {
        match self {
            Metric::Iops => "IOPS",
            Metric::Mbps => "MB/s",
            Metric::SlatMean => "slat mean",
            Metric::ClatMean => "clat mean",
            Metric::P50 => "clat p50",
            Metric::P90 => "clat p90",
            Metric::P99 => "clat p99",
            Metric::Max => "clat max",
        }
    }
    /// Latencies are shown in microseconds.
    pub fn is_latency(self) -> bool {
        !matches!(self, Metric::Iops | Metric::Mbps)
    }
    pub fn index(self) -> usize {
        self as usize
    }
}

/// One job's figures (MB/s is MiB/s, as fio's `bw` and the summary table;
/// latencies in µs).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Metrics(pub [f64; 8]);

impl Metrics {
    pub fn get(&self, m: Metric) -> f64 {
        self.0[m.index()]
    }

    /// The element-wise median of several runs.
    pub fn median(runs: &[Metrics]) -> Metrics {
        let mut out = [0.0; 8];
        for (i, o) in out.iter_mut().enumerate() {
            *o = median(runs.iter().map(|r| r.0[i]).collect());
        }
        Metrics(out)
    }

    /// (max - min) / median per metric: how much the real runs moved.
    pub fn spread(runs: &[Metrics]) -> [f64; 8] {
        let med = Metrics::median(runs);
        let mut out = [0.0; 8];
        for (i, o) in out.iter_mut().enumerate() {
            let lo = runs.iter().map(|r| r.0[i]).fold(f64::INFINITY, f64::min);
            let hi = runs
                .iter()
                .map(|r| r.0[i])
                .fold(f64::NEG_INFINITY, f64::max);
            *o = if med.0[i].abs() > 0.0 && runs.len() > 1 {
                (hi - lo) / med.0[i].abs()
            } else {
                0.0
            };
        }
        out
    }
}

/// The median of some figures (NaN for none).
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

pub(crate) fn num(v: &Value, path: &[&str]) -> f64 {
    let mut cur = v;
    for p in path {
        match cur.get(p) {
            Some(x) => cur = x,
            None => return 0.0,
        }
    }
    cur.as_f64().unwrap_or(0.0)
}

/// The per-job figures of one fio JSON document, by job name, in order.
/// Reads and writes are added for IOPS and MB/s; the latencies are those of
/// the direction that did more I/Os (the cases are single-direction).
pub fn from_fio_json(text: &str) -> Result<Vec<(String, Metrics)>, String> {
    let jobs = fio_jobs(text)?;
    let mut out = Vec::new();
    for j in jobs {
        let name = j
            .get("jobname")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_string();
        let dirs: Vec<&Value> = ["read", "write", "trim"]
            .iter()
            .filter_map(|d| j.get(*d))
            .collect();
        let iops: f64 = dirs.iter().map(|d| num(d, &["iops"])).sum();
        let bw: f64 = dirs.iter().map(|d| num(d, &["bw_bytes"])).sum();
        let main = dirs
            .iter()
            .max_by(|a, b| num(a, &["total_ios"]).total_cmp(&num(b, &["total_ios"])))
            .ok_or("fio's JSON job has no read/write section")?;
        let us = |p: &[&str]| num(main, p) / 1000.0;
        out.push((
            name,
            Metrics([
                iops,
                bw / 1024.0 / 1024.0,
                us(&["slat_ns", "mean"]),
                us(&["clat_ns", "mean"]),
                us(&["clat_ns", "percentile", "50.000000"]),
                us(&["clat_ns", "percentile", "90.000000"]),
                us(&["clat_ns", "percentile", "99.000000"]),
                us(&["clat_ns", "max"]),
            ]),
        ));
    }
    Ok(out)
}

/// The CPU fio's jobs in one JSON document used (`usr_cpu` + `sys_cpu`,
/// percent of one CPU, summed over the jobs).
pub fn fio_cpu_pct(text: &str) -> Result<f64, String> {
    let jobs = fio_jobs(text)?;
    Ok(jobs
        .iter()
        .map(|j| num(j, &["usr_cpu"]) + num(j, &["sys_cpu"]))
        .sum())
}

/// The `jobs` array of fio's JSON output; fio may print notices before
/// the document.
pub(crate) fn fio_jobs(text: &str) -> Result<Vec<Value>, String> {
    let start = text
        .find('{')
        .ok_or_else(|| format!("fio printed no JSON document: {}", head(text)))?;
    let mut doc: Value = serde_json::from_str(&text[start..])
        .map_err(|e| format!("fio's JSON does not parse ({e}): {}", head(&text[start..])))?;
    match doc.get_mut("jobs") {
        Some(Value::Array(jobs)) => Ok(std::mem::take(jobs)),
        _ => Err("fio's JSON has no \"jobs\" array".into()),
    }
}

fn head(s: &str) -> String {
    s.chars().take(200).collect()
}

/// How far the simulator may be from the real kernel on one metric: pass when
/// |sim - real| <= max(rel * |real|, abs) (abs in the metric's unit, µs for
/// latencies: a floor for figures dominated by host noise), and the real
/// figure may in addition be up to `real_lower` below the simulator's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerance {
    pub rel: f64,
    pub abs: f64,
    /// One-sided slack (metric's unit) for a real figure the host can only
    /// lower: with fio's thinktime, a late wake-up of fio on a busy host
    /// issues the next I/O later, and the throttle's wait shrinks by as much
    /// (the rate is unchanged). 0 for a symmetric tolerance.
    pub real_lower: f64,
}

impl Tolerance {
    pub const fn rel(rel: f64) -> Tolerance {
        Tolerance {
            rel,
            abs: 0.0,
            real_lower: 0.0,
        }
    }
    pub const fn rel_abs(rel: f64, abs: f64) -> Tolerance {
        Tolerance {
            rel,
            abs,
            real_lower: 0.0,
        }
    }
    /// The same tolerance, letting the real figure be `by` further below.
    pub const fn real_lower_by(self, by: f64) -> Tolerance {
        Tolerance {
            real_lower: by,
            ..self
        }
    }
    pub fn allows(&self, real: f64, sim: f64) -> bool {
        let band = (self.rel * real.abs()).max(self.abs);
        if real < sim {
            sim - real <= band + self.real_lower
        } else {
            real - sim <= band
        }
    }
    pub fn describe(&self, m: Metric) -> String {
        let unit = if m.is_latency() { "us" } else { "" };
        let mut s = if self.abs > 0.0 {
            format!("±{}% or {}{unit}", fmt_pct(self.rel), self.abs)
        } else {
            format!("±{}%", fmt_pct(self.rel))
        };
        if self.real_lower > 0.0 {
            s.push_str(&format!(" (real may be {}{unit} lower)", self.real_lower));
        }
        s
    }
}

fn fmt_pct(r: f64) -> String {
    let p = r * 100.0;
    if (p - p.round()).abs() < 1e-9 {
        format!("{}", p.round())
    } else {
        format!("{p:.1}")
    }
}

/// The relative difference of the simulator from the real kernel.
pub fn rel_diff(real: f64, sim: f64) -> f64 {
    if real.abs() > 0.0 {
        (sim - real) / real.abs()
    } else if sim == 0.0 {
        0.0
    } else {
        f64::INFINITY
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_fio_json_and_adds_directions() {
        let t = r#"note: something
{"jobs":[{"jobname":"a","read":{"iops":100.0,"bw_bytes":409600,"total_ios":300,
 "slat_ns":{"mean":2000.0},"clat_ns":{"mean":8000.0,"max":99000,
 "percentile":{"50.000000":5000,"90.000000":9000,"99.000000":20000}}},
 "write":{"iops":10.0,"bw_bytes":40960,"total_ios":30,"slat_ns":{"mean":1.0},"clat_ns":{"mean":1.0}}}]}"#;
        let v = from_fio_json(t).unwrap();
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].0, "a");
        let m = v[0].1;
        assert_eq!(m.get(Metric::Iops), 110.0);
        assert!((m.get(Metric::Mbps) - 450560.0 / 1048576.0).abs() < 1e-12);
        assert_eq!(m.get(Metric::SlatMean), 2.0);
        assert_eq!(m.get(Metric::P99), 20.0);
        assert_eq!(m.get(Metric::Max), 99.0);
        assert!(from_fio_json("no json").is_err());
    }

    #[test]
    fn median_spread_and_tolerance() {
        let r = |x: f64| Metrics([x; 8]);
        let m = Metrics::median(&[r(3.0), r(1.0), r(2.0)]);
        assert_eq!(m.0[0], 2.0);
        assert_eq!(Metrics::median(&[r(1.0), r(2.0)]).0[5], 1.5);
        assert_eq!(Metrics::spread(&[r(90.0), r(100.0), r(110.0)])[0], 0.2);
        let t = Tolerance::rel_abs(0.05, 10.0);
        assert!(t.allows(1000.0, 1049.0));
        assert!(!t.allows(1000.0, 1051.0));
        assert!(t.allows(20.0, 29.0)); // the absolute floor
        assert!(!t.allows(20.0, 31.0));
        assert_eq!(rel_diff(100.0, 103.0), 0.03);
    }

    #[test]
    fn real_lower_slack_is_one_sided() {
        // throttle-rbps-thinktime under two CPU hogs: real 9979 us, sim 11535 us
        let sym = Tolerance::rel_abs(0.15, 200.0);
        let t = sym.real_lower_by(4000.0);
        assert!(!sym.allows(9979.0, 11535.0));
        assert!(t.allows(9979.0, 11535.0));
        // a real figure above the simulator's gets no extra slack
        assert!(!t.allows(14000.0, 11535.0));
        assert!(t.allows(13000.0, 11535.0));
        assert_eq!(
            t.describe(Metric::ClatMean),
            "±15% or 200us (real may be 4000us lower)"
        );
    }
}
