//! The io.cost.qos search space: candidate values of each parameter of the
//! kernel's `io.cost.qos` (rpct, rlat, wpct, wlat, min, max) and,
//! optionally, scale factors of the `io.cost.model` line; the candidates
//! are their cross product, less those the kernel would refuse.

use anyhow::{anyhow, bail, Result};

/// The candidate values of each parameter. `wpct`/`wlat` empty: the same as
/// the read side (one knob, as for a mixed workload). `scale` empty: the
/// scenario's model as it is.
#[derive(Clone, Debug, PartialEq)]
pub struct Space {
    pub rpct: Vec<f64>,
    /// µs, as io.cost.qos takes them.
    pub rlat_us: Vec<u64>,
    pub wpct: Vec<f64>,
    pub wlat_us: Vec<u64>,
    /// vrate bounds, percent.
    pub min: Vec<f64>,
    pub max: Vec<f64>,
    pub scale: Vec<f64>,
}

impl Default for Space {
    fn default() -> Space {
        Space {
            rpct: vec![90.0, 95.0, 99.0],
            rlat_us: vec![500, 1000, 2500, 5000, 10000, 25000, 50000],
            wpct: Vec::new(),
            wlat_us: Vec::new(),
            min: vec![25.0, 50.0, 75.0, 100.0],
            max: vec![100.0, 150.0, 10000.0],
            scale: Vec::new(),
        }
    }
}

/// One setting to try.
#[derive(Clone, Debug, PartialEq)]
pub struct Qos {
    pub rpct: f64,
    pub rlat_us: u64,
    pub wpct: f64,
    pub wlat_us: u64,
    pub min: f64,
    pub max: f64,
    /// Factor on the model's rates (None: the scenario's model).
    pub scale: Option<f64>,
}

impl Qos {
    /// The `io.cost.qos` line for device `devno`.
    pub fn line(&self, devno: &str) -> String {
        format!(
            "{devno} enable=1 ctrl=user rpct={} rlat={} wpct={} wlat={} min={} max={}",
            self.rpct, self.rlat_us, self.wpct, self.wlat_us, self.min, self.max
        )
    }
}

/// A comma-separated list of numbers (`--rlat 1000,5000`).
pub fn parse_list<T: std::str::FromStr>(flag: &str, s: &str) -> Result<Vec<T>> {
    s.split(',')
        .map(|x| {
            x.trim()
                .parse::<T>()
                .map_err(|_| anyhow!("--{flag} {s}: '{}' is not a number", x.trim()))
        })
        .collect()
}

impl Space {
    /// Every candidate, in a fixed order (scale, rpct, rlat, wpct, wlat, min,
    /// max; the last varying fastest); `min > max` is left out (the kernel's
    /// `ioc_qos_write` refuses it with EINVAL).
    pub fn candidates(&self) -> Result<Vec<Qos>> {
        let check_pct = |name: &str, v: &[f64]| -> Result<()> {
            match v.iter().find(|p| !(0.0..=100.0).contains(*p)) {
                Some(p) => bail!("--{name} {p}: a percentile is 0..100"),
                None => Ok(()),
            }
        };
        check_pct("rpct", &self.rpct)?;
        check_pct("wpct", &self.wpct)?;
        for (name, v) in [("min", &self.min), ("max", &self.max)] {
            if let Some(p) = v.iter().find(|p| !(1.0..=10000.0).contains(*p)) {
                bail!("--{name} {p}: vrate bounds are 1..10000 percent");
            }
        }
        if let Some(s) = self.scale.iter().find(|s| !(**s > 0.0 && s.is_finite())) {
            bail!("--scale {s}: a scale factor is > 0");
        }
        for (name, v) in [("rpct", self.rpct.len()), ("rlat", self.rlat_us.len())] {
            if v == 0 {
                bail!("--{name}: no values");
            }
        }
        if self.min.is_empty() || self.max.is_empty() {
            bail!("--min/--max: no values");
        }
        let scales: Vec<Option<f64>> = if self.scale.is_empty() {
            vec![None]
        } else {
            self.scale.iter().map(|s| Some(*s)).collect()
        };
        let mut out = Vec::new();
        for &scale in &scales {
            for &rpct in &self.rpct {
                for &rlat_us in &self.rlat_us {
                    let wpcts = if self.wpct.is_empty() {
                        vec![rpct]
                    } else {
                        self.wpct.clone()
                    };
                    for wpct in wpcts {
                        let wlats = if self.wlat_us.is_empty() {
                            vec![rlat_us]
                        } else {
                            self.wlat_us.clone()
                        };
                        for wlat_us in wlats {
                            for &min in &self.min {
                                for &max in &self.max {
                                    if min > max {
                                        continue;
                                    }
                                    out.push(Qos {
                                        rpct,
                                        rlat_us,
                                        wpct,
                                        wlat_us,
                                        min,
                                        max,
                                        scale,
                                    });
                                }
                            }
                        }
                    }
                }
            }
        }
        Ok(out)
    }
}

/// The rate parameters of a linear `io.cost.model` line.
const MODEL_RATES: [&str; 6] = [
    "rbps",
    "rseqiops",
    "rrandiops",
    "wbps",
    "wseqiops",
    "wrandiops",
];

/// An `io.cost.model` line with its rates multiplied by `scale` (rounded,
/// at least 1), other keys as they were.
pub fn scale_model(line: &str, scale: f64) -> Result<String> {
    let mut out = Vec::new();
    for tok in line.split_whitespace() {
        match tok.split_once('=') {
            Some((k, v)) if MODEL_RATES.contains(&k) => {
                let n: f64 = v
                    .parse()
                    .map_err(|_| anyhow!("io.cost.model: {k}={v} is not a number"))?;
                out.push(format!("{k}={}", ((n * scale).round() as u64).max(1)));
            }
            _ => out.push(tok.to_string()),
        }
    }
    Ok(out.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_tie_writes_to_reads_and_skip_min_over_max() {
        let s = Space {
            rpct: vec![90.0],
            rlat_us: vec![1000, 5000],
            min: vec![50.0, 150.0],
            max: vec![100.0, 200.0],
            ..Space::default()
        };
        let c = s.candidates().unwrap();
        // 2 rlat x (50-100, 50-200, 150-200)
        assert_eq!(c.len(), 6);
        assert_eq!(
            c[3].line("8:0"),
            "8:0 enable=1 ctrl=user rpct=90 rlat=5000 wpct=90 wlat=5000 min=50 max=100"
        );
        assert!(Space {
            min: vec![0.5],
            ..s.clone()
        }
        .candidates()
        .is_err());
    }

    #[test]
    fn model_scaling_touches_rates_only() {
        assert_eq!(
            scale_model("8:0 ctrl=user model=linear rbps=1000 rrandiops=3", 0.5).unwrap(),
            "8:0 ctrl=user model=linear rbps=500 rrandiops=2"
        );
    }
}
