//! `ssd`: a flash device as N parallel units (channels / dies), each serving one
//! command at a time, with random per-operation latencies drawn from a seeded
//! stream and a per-unit transfer bandwidth.
//!
//! Parameters (TOML keys of `[device.model]` with `kind = "ssd"`):
//! * `units` (default 8, 1..=1024): parallel units.
//! * `read`, `write` (tables): the media latency of one command, one of
//!   - `{ dist = "fixed", us = 80 }`
//!   - `{ dist = "fixed_exp", fixed_us = 20, exp_mean_us = 10 }`: a constant plus
//!     an exponential tail;
//!   - `{ dist = "lognormal", median_us = 80, sigma = 0.3 }`: `median × e^(σZ)`.
//!
//!   Defaults: read lognormal median 80 µs σ 0.3; write fixed_exp 20 µs + 10 µs.
//! * `unit_bps` (bytes/s per unit, default 500 000 000; 0 = no transfer time):
//!   the command's bytes take `bytes / unit_bps` on its unit after the latency.
//! * `unit_write_bps` (bytes/s per unit; default: `unit_bps`): the same for
//!   writes, when the device writes at another speed than it reads.
//! * `placement` (default `"least_busy"`): `"least_busy"` sends a command to the
//!   unit that becomes free first (lowest index on ties); `"stripe"` sends it to
//!   unit `(byte offset / stripe_kb KiB) mod units`.
//! * `stripe_kb` (KiB, default 128): the stripe size for `"stripe"`.
//! * `queue_depth` (default 128).
//!
//! A command starts when it is issued or when its unit frees, whichever is later,
//! occupies the unit for latency + transfer, and completes at the end of it.
//! Flush and discard draw from the write distribution with no transfer.
//!
//! Simplifications: a command is never split across units (a large striped
//! command stays on the unit of its first byte); no write buffer, garbage
//! collection, read/write suspend or die/channel distinction; latency draws are
//! independent. The draws use f64 (`ln`, `exp`, `cos`), rounded to whole ns:
//! identical for a given seed on one platform and libm.

use serde::Deserialize;

use super::DeviceModel;
use crate::block::bio::Op;
use crate::sim::rng::Rng;
use crate::sim::time::{Ns, NSEC_PER_SEC, NSEC_PER_USEC};

#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(tag = "dist", rename_all = "snake_case", deny_unknown_fields)]
pub enum LatencyDist {
    Fixed { us: f64 },
    FixedExp { fixed_us: f64, exp_mean_us: f64 },
    Lognormal { median_us: f64, sigma: f64 },
}

impl LatencyDist {
    fn validate(&self, which: &str) -> Result<(), String> {
        let ok = |v: f64| v.is_finite() && (0.0..=1e9).contains(&v);
        let bad = |k: &str, v: f64| {
            Err(format!(
                "ssd {which}.{k}={v} must be a number in 0..=1e9 µs"
            ))
        };
        match *self {
            LatencyDist::Fixed { us } if !ok(us) => bad("us", us),
            LatencyDist::FixedExp { fixed_us, .. } if !ok(fixed_us) => bad("fixed_us", fixed_us),
            LatencyDist::FixedExp { exp_mean_us, .. } if !ok(exp_mean_us) => {
                bad("exp_mean_us", exp_mean_us)
            }
            LatencyDist::Lognormal { median_us, .. } if !ok(median_us) => {
                bad("median_us", median_us)
            }
            LatencyDist::Lognormal { sigma, .. }
                if !(sigma.is_finite() && (0.0..=5.0).contains(&sigma)) =>
            {
                Err(format!("ssd {which}.sigma={sigma} must be in 0..=5"))
            }
            _ => Ok(()),
        }
    }

    /// One draw, in ns.
    pub fn sample(&self, rng: &mut Rng) -> Ns {
        let us = match *self {
            LatencyDist::Fixed { us } => us,
            LatencyDist::FixedExp {
                fixed_us,
                exp_mean_us,
            } => {
                fixed_us
                    + if exp_mean_us > 0.0 {
                        rng.exp(exp_mean_us)
                    } else {
                        0.0
                    }
            }
            LatencyDist::Lognormal { median_us, sigma } => {
                // Box-Muller; u1 in (0, 1] so ln is finite.
                let u1 = 1.0 - rng.unit();
                let u2 = rng.unit();
                let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
                median_us * (sigma * z).exp()
            }
        };
        // Clamp the far tail at 1000 s so the ns value stays small.
        (us.min(1e9) * NSEC_PER_USEC as f64).round() as Ns
    }
}

#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    #[default]
    LeastBusy,
    Stripe,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SsdSpec {
    #[serde(default = "default_units")]
    pub units: u32,
    #[serde(default = "default_read")]
    pub read: LatencyDist,
    #[serde(default = "default_write")]
    pub write: LatencyDist,
    #[serde(default = "default_unit_bps")]
    pub unit_bps: u64,
    /// Per-unit write bandwidth; None = `unit_bps`.
    #[serde(default)]
    pub unit_write_bps: Option<u64>,
    #[serde(default)]
    pub placement: Placement,
    #[serde(default = "default_stripe_kb")]
    pub stripe_kb: u32,
    #[serde(default = "default_qd")]
    pub queue_depth: u32,
}

fn default_units() -> u32 {
    8
}
fn default_read() -> LatencyDist {
    LatencyDist::Lognormal {
        median_us: 80.0,
        sigma: 0.3,
    }
}
fn default_write() -> LatencyDist {
    LatencyDist::FixedExp {
        fixed_us: 20.0,
        exp_mean_us: 10.0,
    }
}
fn default_unit_bps() -> u64 {
    500_000_000
}
fn default_stripe_kb() -> u32 {
    128
}
fn default_qd() -> u32 {
    128
}

impl Default for SsdSpec {
    fn default() -> Self {
        SsdSpec {
            units: default_units(),
            read: default_read(),
            write: default_write(),
            unit_bps: default_unit_bps(),
            unit_write_bps: None,
            placement: Placement::default(),
            stripe_kb: default_stripe_kb(),
            queue_depth: default_qd(),
        }
    }
}

pub struct Ssd {
    spec: SsdSpec,
    /// When each unit becomes free.
    free: Vec<Ns>,
    stripe_bytes: u64,
    rng: Rng,
}

impl Ssd {
    pub fn new(spec: &SsdSpec, seed: u64) -> Result<Ssd, String> {
        if spec.units == 0 || spec.units > 1024 {
            return Err(format!("ssd units={} must be in 1..=1024", spec.units));
        }
        if spec.stripe_kb == 0 {
            return Err("ssd stripe_kb must be at least 1".into());
        }
        if spec.queue_depth == 0 {
            return Err("ssd queue_depth must be at least 1".into());
        }
        spec.read.validate("read")?;
        spec.write.validate("write")?;
        Ok(Ssd {
            free: vec![0; spec.units as usize],
            stripe_bytes: spec.stripe_kb as u64 * 1024,
            rng: Rng::stream(seed, "device/ssd"),
            spec: spec.clone(),
        })
    }

    fn pick_unit(&self, sector: u64) -> usize {
        match self.spec.placement {
            Placement::Stripe => {
                ((sector * 512 / self.stripe_bytes) % self.free.len() as u64) as usize
            }
            Placement::LeastBusy => {
                let mut best = 0;
                for (i, &f) in self.free.iter().enumerate() {
                    if f < self.free[best] {
                        best = i;
                    }
                }
                best
            }
        }
    }
}

impl DeviceModel for Ssd {
    fn kind(&self) -> &'static str {
        "ssd"
    }
    fn default_queue_depth(&self) -> u32 {
        self.spec.queue_depth
    }
    fn issue(&mut self, now: Ns, op: Op, sector: u64, bytes: u32) -> Ns {
        let (lat, xfer_bytes, bps) = match op {
            Op::Read => (
                self.spec.read.sample(&mut self.rng),
                bytes,
                self.spec.unit_bps,
            ),
            Op::Write => (
                self.spec.write.sample(&mut self.rng),
                bytes,
                self.spec.unit_write_bps.unwrap_or(self.spec.unit_bps),
            ),
            Op::Flush | Op::Discard => (self.spec.write.sample(&mut self.rng), 0, 0),
        };
        let xfer = if bps == 0 {
            0
        } else {
            (xfer_bytes as u64 * NSEC_PER_SEC).div_ceil(bps)
        };
        let u = self.pick_unit(sector);
        let start = now.max(self.free[u]);
        self.free[u] = start + lat + xfer;
        self.free[u]
    }
    fn describe(&self) -> String {
        let s = &self.spec;
        let wbps = s
            .unit_write_bps
            .map(|b| format!(" unit_write_bps={b}"))
            .unwrap_or_default();
        format!(
            "ssd units={} read={:?} write={:?} unit_bps={}{wbps} placement={:?} stripe_kb={} queue_depth={}",
            s.units, s.read, s.write, s.unit_bps, s.placement, s.stripe_kb, s.queue_depth
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixed(units: u32, us: f64, placement: Placement) -> SsdSpec {
        SsdSpec {
            units,
            read: LatencyDist::Fixed { us },
            write: LatencyDist::Fixed { us },
            unit_bps: 0,
            placement,
            ..SsdSpec::default()
        }
    }

    #[test]
    fn writes_transfer_at_unit_write_bps() {
        let mut spec = fixed(1, 10.0, Placement::LeastBusy);
        spec.unit_bps = 1_000_000_000;
        // 128 KiB: 131 072 ns at 1 GB/s (reads and, without the key, writes)
        let mut d = Ssd::new(&spec, 0).unwrap();
        assert_eq!(d.issue(0, Op::Read, 0, 131_072), 10_000 + 131_072);
        let mut d = Ssd::new(&spec, 0).unwrap();
        assert_eq!(d.issue(0, Op::Write, 0, 131_072), 10_000 + 131_072);
        // writes at 0.5 GB/s, reads unchanged
        spec.unit_write_bps = Some(500_000_000);
        let mut d = Ssd::new(&spec, 0).unwrap();
        assert_eq!(d.issue(0, Op::Write, 0, 131_072), 10_000 + 262_144);
        let mut d = Ssd::new(&spec, 0).unwrap();
        assert_eq!(d.issue(0, Op::Read, 0, 131_072), 10_000 + 131_072);
        assert!(d.describe().contains("unit_write_bps=500000000"));
    }

    #[test]
    fn least_busy_bounds_parallelism() {
        let mut d = Ssd::new(&fixed(4, 100.0, Placement::LeastBusy), 0).unwrap();
        let c: Vec<Ns> = (0..100)
            .map(|i| d.issue(0, Op::Read, i * 8, 4096))
            .collect();
        for (i, &ci) in c.iter().enumerate() {
            assert_eq!(ci, (i as u64 / 4 + 1) * 100_000, "command {i}");
        }
    }

    #[test]
    fn stripe_placement_serialises_one_stripe() {
        let mut d = Ssd::new(&fixed(4, 100.0, Placement::Stripe), 0).unwrap();
        // All in the first 128 KiB stripe: one unit, one after another.
        let c: Vec<Ns> = (0..10)
            .map(|i| d.issue(0, Op::Write, i * 8, 4096))
            .collect();
        assert_eq!(c.last().copied(), Some(1_000_000));
        // The next stripe is another unit, idle.
        assert_eq!(d.issue(0, Op::Read, 256, 4096), 100_000);
        // Stripe 4 wraps to unit 0, busy until 1 ms.
        assert_eq!(d.issue(0, Op::Read, 4 * 256, 4096), 1_100_000);
    }

    #[test]
    fn transfer_time_per_unit() {
        let mut s = fixed(1, 10.0, Placement::LeastBusy);
        s.unit_bps = 1_000_000_000;
        let mut d = Ssd::new(&s, 0).unwrap();
        // 10 µs + 128 KiB at 1 GB/s (131 072 ns).
        assert_eq!(d.issue(0, Op::Read, 0, 128 << 10), 10_000 + 131_072);
        assert_eq!(d.issue(0, Op::Flush, 0, 0), 10_000 + 131_072 + 10_000);
    }

    #[test]
    fn same_seed_same_times_other_seed_other_times() {
        let run = |seed| {
            let mut d = Ssd::new(&SsdSpec::default(), seed).unwrap();
            (0..200u64)
                .map(|i| {
                    d.issue(
                        i * 1000,
                        if i % 3 == 0 { Op::Write } else { Op::Read },
                        i * 8,
                        4096,
                    )
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(run(7), run(7));
        assert_ne!(run(7), run(8));
    }

    #[test]
    fn lognormal_median_and_fixed_exp_mean() {
        let mut rng = Rng::stream(1, "t");
        let d = LatencyDist::Lognormal {
            median_us: 80.0,
            sigma: 0.3,
        };
        let mut v: Vec<Ns> = (0..10_001).map(|_| d.sample(&mut rng)).collect();
        v.sort_unstable();
        let med = v[5000] as f64;
        assert!((med - 80_000.0).abs() < 2_000.0, "{med}");
        let d = LatencyDist::FixedExp {
            fixed_us: 20.0,
            exp_mean_us: 10.0,
        };
        let v: Vec<Ns> = (0..20_000).map(|_| d.sample(&mut rng)).collect();
        assert!(v.iter().all(|&x| x >= 20_000));
        let mean = v.iter().sum::<u64>() as f64 / v.len() as f64;
        assert!((mean - 30_000.0).abs() < 500.0, "{mean}");
    }

    #[test]
    fn validation_names_the_parameter() {
        let mut s = SsdSpec::default();
        s.units = 0;
        assert!(Ssd::new(&s, 0).err().unwrap().contains("units"));
        let mut s = SsdSpec::default();
        s.read = LatencyDist::Lognormal {
            median_us: 80.0,
            sigma: -1.0,
        };
        assert!(Ssd::new(&s, 0).err().unwrap().contains("read.sigma"));
        let mut s = SsdSpec::default();
        s.write = LatencyDist::Fixed { us: f64::NAN };
        assert!(Ssd::new(&s, 0).err().unwrap().contains("write.us"));
    }
}
