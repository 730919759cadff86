//! Targets of the protected cgroups: `p99<=5ms`, `iops>=190`, `mbps>=50`.
//! The metric names are the sweep's figures (`sweep::metrics::FIGURES`)
//! with short aliases; latencies are fio's completion latency (clat) over
//! all directions, as the summary table prints them.

use anyhow::{anyhow, bail, Result};

/// Which way a target bounds its metric.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    AtMost,
    AtLeast,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Target {
    /// As the user wrote it.
    pub text: String,
    /// The sweep figure it bounds (`p99_ms`, `iops`, ...).
    pub figure: &'static str,
    pub bound: Bound,
    /// In the figure's unit (ms for latencies).
    pub value: f64,
}

/// (alias, figure, is a latency).
const METRICS: &[(&str, &str, bool)] = &[
    ("iops", "iops", false),
    ("mbps", "mbps", false),
    ("bw", "mbps", false),
    ("lat", "clat_ms", true),
    ("clat", "clat_ms", true),
    ("mean", "clat_ms", true),
    ("max", "clat_max_ms", true),
    ("p90", "p90_ms", true),
    ("p99", "p99_ms", true),
    ("p99.9", "p999_ms", true),
    ("p999", "p999_ms", true),
    ("p99.99", "p9999_ms", true),
    ("p9999", "p9999_ms", true),
];

/// A latency with a unit (ns, us, ms, s; ms when none) in milliseconds.
fn latency_ms(s: &str) -> Result<f64> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let v: f64 = num
        .parse()
        .map_err(|_| anyhow!("'{s}' is not a latency (e.g. 5ms, 500us)"))?;
    let scale = match unit.trim() {
        "ns" => 1e-6,
        "us" | "µs" => 1e-3,
        "" | "ms" => 1.0,
        "s" => 1e3,
        u => bail!("'{s}': unknown unit '{u}' (ns, us, ms, s)"),
    };
    Ok(v * scale)
}

impl Target {
    pub fn parse(s: &str) -> Result<Target> {
        let (name, bound, value) = if let Some((a, b)) = s.split_once("<=") {
            (a, Bound::AtMost, b)
        } else if let Some((a, b)) = s.split_once(">=") {
            (a, Bound::AtLeast, b)
        } else {
            bail!(
                "--target {s}: expected METRIC<=VALUE or METRIC>=VALUE (e.g. p99<=5ms, iops>=190)"
            );
        };
        let name = name.trim();
        let &(_, figure, is_lat) = METRICS.iter().find(|m| m.0 == name).ok_or_else(|| {
            let known: Vec<&str> = METRICS.iter().map(|m| m.0).collect();
            anyhow!(
                "--target {s}: unknown metric '{name}' (known: {})",
                known.join(", ")
            )
        })?;
        let value = if is_lat {
            latency_ms(value).map_err(|e| anyhow!("--target {s}: {e}"))?
        } else {
            value
                .trim()
                .parse::<f64>()
                .map_err(|_| anyhow!("--target {s}: '{}' is not a number", value.trim()))?
        };
        if !value.is_finite() || value < 0.0 {
            bail!("--target {s}: the value must be a finite number >= 0");
        }
        Ok(Target {
            text: s.trim().to_string(),
            figure,
            bound,
            value,
        })
    }

    pub fn met(&self, v: f64) -> bool {
        match self.bound {
            Bound::AtMost => v <= self.value,
            Bound::AtLeast => v >= self.value,
        }
    }

    /// Whether `a` is better than `b` for this target.
    pub fn better(&self, a: f64, b: f64) -> bool {
        match self.bound {
            Bound::AtMost => a < b,
            Bound::AtLeast => a > b,
        }
    }

    /// The worse of two values.
    pub fn worse(&self, a: f64, b: f64) -> f64 {
        if self.better(a, b) {
            b
        } else {
            a
        }
    }

    /// The metric's name as written in tables (`p99`, `iops`).
    pub fn unit(&self) -> &'static str {
        if self.figure.ends_with("_ms") {
            "ms"
        } else if self.figure == "mbps" {
            "MB/s"
        } else {
            ""
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse_with_units() {
        let t = Target::parse("p99<=5ms").unwrap();
        assert_eq!((t.figure, t.bound, t.value), ("p99_ms", Bound::AtMost, 5.0));
        assert_eq!(Target::parse("p90 <= 500us").unwrap().value, 0.5);
        assert_eq!(Target::parse("p99.9<=0.01s").unwrap().value, 10.0);
        let t = Target::parse("iops>=190").unwrap();
        assert_eq!(
            (t.figure, t.bound, t.value),
            ("iops", Bound::AtLeast, 190.0)
        );
        assert!(t.met(190.0) && !t.met(189.0));
        for bad in [
            "p99<5ms",
            "p42<=1ms",
            "p99<=5parsecs",
            "iops>=many",
            "iops>=-1",
        ] {
            assert!(Target::parse(bad).is_err(), "{bad}");
        }
    }
}
