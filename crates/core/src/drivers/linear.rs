//! `linear`: a device whose service times follow blk-iocost's linear cost model
//! (`calc_lcoefs` and `calc_vtime_cost_builtin` in block/blk-iocost.c), so a
//! device described by the same six numbers as `io.cost.model` runs exactly as
//! fast as iocost believes at vrate 100 %.
//!
//! Parameters (TOML keys of `[device.model]` with `kind = "linear"`):
//! * `rbps`, `wbps` (bytes/s, required, > 0): sequential transfer rate.
//! * `rseqiops`, `rrandiops`, `wseqiops`, `wrandiops` (IO/s, required, > 0):
//!   4 KiB IOs per second, sequential and random.
//! * `parallelism` (default 1): internal units serving requests concurrently.
//!   Each request goes, in issue order, to the unit that becomes free first
//!   (lowest index on ties) and starts when both it and that unit are ready.
//! * `latency_ns` (default 0): a fixed delay added after service (transport,
//!   interrupt), which does not occupy a unit.
//! * `queue_depth` (default 64): the device's hardware queue depth.
//!
//! Service time of one request, as iocost computes a bio's absolute cost but in
//! nanoseconds instead of vtime:
//! * `page = ceil(1e9 / ceil(bps / 4096))` ns per 4 KiB page;
//! * `seqio = ceil(1e9 / seqiops) - page` (0 if negative), `randio` likewise;
//! * `pages = max(bytes / 4096, 1)`; time = (`randio` or `seqio`) + `pages × page`.
//!
//! So a 4 KiB IO costs exactly 1/iops and each further 4 KiB costs 4096/bps.
//! Sequential or random is decided as iocost does, with one cursor per direction
//! (reads and writes) in place of iocost's per-cgroup cursor: the request is random
//! if it starts more than 4096 pages (16 MiB) away from where the previous request
//! of that direction ended; the first request (cursor 0) counts as sequential.
//! Flush and discard take no service time (iocost charges them nothing) but still
//! wait for a unit and take `latency_ns`.
//!
//! Simplifications: no internal caching, no read/write interference beyond
//! sharing units, no size-dependent parallelism.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use serde::Deserialize;

use super::DeviceModel;
use crate::block::bio::Op;
use crate::sim::time::{Ns, NSEC_PER_SEC};

/// iocost's `LCOEF_RANDIO_PAGES`: a seek of more than this many pages is random.
pub const RANDIO_PAGES: u64 = 4096;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinearSpec {
    pub rbps: u64,
    pub rseqiops: u64,
    pub rrandiops: u64,
    pub wbps: u64,
    pub wseqiops: u64,
    pub wrandiops: u64,
    #[serde(default = "one")]
    pub parallelism: u32,
    #[serde(default)]
    pub latency_ns: u64,
    #[serde(default = "default_qd")]
    pub queue_depth: u32,
}

fn one() -> u32 {
    1
}
fn default_qd() -> u32 {
    64
}

/// Per-direction coefficients in ns (`calc_lcoefs` with 1e9 in place of VTIME_PER_SEC).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Coefs {
    pub page: u64,
    pub seqio: u64,
    pub randio: u64,
}

impl Coefs {
    pub fn new(bps: u64, seqiops: u64, randiops: u64) -> Coefs {
        let page = if bps > 0 {
            NSEC_PER_SEC.div_ceil(bps.div_ceil(4096).max(1))
        } else {
            0
        };
        let per_io = |iops: u64| {
            if iops == 0 {
                0
            } else {
                NSEC_PER_SEC.div_ceil(iops).saturating_sub(page)
            }
        };
        Coefs {
            page,
            seqio: per_io(seqiops),
            randio: per_io(randiops),
        }
    }
}

pub struct Linear {
    spec: LinearSpec,
    coefs: [Coefs; 2],
    /// End sector of the previous read / write (0 = none yet).
    cursor: [u64; 2],
    /// When each unit becomes free (min-heap).
    units: BinaryHeap<Reverse<Ns>>,
}

impl Linear {
    pub fn new(spec: &LinearSpec) -> Result<Linear, String> {
        for (name, v) in [
            ("rbps", spec.rbps),
            ("rseqiops", spec.rseqiops),
            ("rrandiops", spec.rrandiops),
            ("wbps", spec.wbps),
            ("wseqiops", spec.wseqiops),
            ("wrandiops", spec.wrandiops),
        ] {
            if v == 0 {
                return Err(format!("linear {name} must be greater than 0"));
            }
        }
        if spec.parallelism == 0 {
            return Err("linear parallelism must be at least 1".into());
        }
        if spec.parallelism > 65_536 {
            return Err(format!(
                "linear parallelism={} is too large (at most 65536)",
                spec.parallelism
            ));
        }
        if spec.queue_depth == 0 {
            return Err("linear queue_depth must be at least 1".into());
        }
        let mut units = BinaryHeap::with_capacity(spec.parallelism as usize);
        for _ in 0..spec.parallelism {
            units.push(Reverse(0));
        }
        Ok(Linear {
            coefs: [
                Coefs::new(spec.rbps, spec.rseqiops, spec.rrandiops),
                Coefs::new(spec.wbps, spec.wseqiops, spec.wrandiops),
            ],
            spec: spec.clone(),
            cursor: [0; 2],
            units,
        })
    }

    /// Service time of a request (ns), updating the direction's cursor.
    pub fn service_ns(&mut self, op: Op, sector: u64, bytes: u32) -> Ns {
        let dir = match op {
            Op::Read => 0,
            Op::Write => 1,
            _ => return 0,
        };
        if bytes == 0 {
            return 0;
        }
        let c = self.coefs[dir];
        let pages = ((bytes as u64) >> 12).max(1);
        let cur = self.cursor[dir];
        let seek_pages = if cur != 0 {
            sector.abs_diff(cur) >> 3
        } else {
            0
        };
        self.cursor[dir] = sector + ((bytes as u64) >> 9);
        let per_io = if seek_pages > RANDIO_PAGES {
            c.randio
        } else {
            c.seqio
        };
        per_io + pages * c.page
    }
}

impl DeviceModel for Linear {
    fn kind(&self) -> &'static str {
        "linear"
    }
    fn default_queue_depth(&self) -> u32 {
        self.spec.queue_depth
    }
    fn issue(&mut self, now: Ns, op: Op, sector: u64, bytes: u32) -> Ns {
        let service = self.service_ns(op, sector, bytes);
        let mut unit = self.units.peek_mut().expect("at least one unit");
        let start = now.max(unit.0);
        unit.0 = start + service;
        let end = unit.0;
        drop(unit);
        end + self.spec.latency_ns
    }
    fn describe(&self) -> String {
        let s = &self.spec;
        format!(
            "linear rbps={} rseqiops={} rrandiops={} wbps={} wseqiops={} wrandiops={} parallelism={} latency_ns={} queue_depth={}",
            s.rbps, s.rseqiops, s.rrandiops, s.wbps, s.wseqiops, s.wrandiops, s.parallelism, s.latency_ns, s.queue_depth
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The seed's io.cost.model line.
    fn seed_spec() -> LinearSpec {
        LinearSpec {
            rbps: 173_471_131,
            rseqiops: 3566,
            rrandiops: 3566,
            wbps: 173_333_269,
            wseqiops: 3566,
            wrandiops: 3566,
            parallelism: 1,
            latency_ns: 0,
            queue_depth: 64,
        }
    }

    fn spec_seq_rand() -> LinearSpec {
        LinearSpec {
            rbps: 409_600_000, // page = ceil(1e9 / 100 000) = 10 000 ns
            rseqiops: 20_000,  // 50 000 ns → seqio 40 000
            rrandiops: 5_000,  // 200 000 ns → randio 190 000
            wbps: 409_600_000,
            wseqiops: 10_000, // 100 000 → 90 000
            wrandiops: 2_000, // 500 000 → 490 000
            parallelism: 1,
            latency_ns: 0,
            queue_depth: 64,
        }
    }

    #[test]
    fn coefficients_match_iocost_fixture() {
        // iocost-spec §12.1: page 23.612 µs, seqio = randio 256.816 µs; a 1 MiB
        // random read costs 6 301.4 µs.
        let c = Coefs::new(173_471_131, 3566, 3566);
        assert_eq!(c.page, 23_612);
        assert_eq!(c.seqio, 280_427 - 23_612);
        assert_eq!(c.randio, c.seqio);
        let mut d = Linear::new(&seed_spec()).unwrap();
        assert_eq!(
            d.issue(0, Op::Read, 1 << 30, 1 << 20),
            256_815 + 256 * 23_612
        );
    }

    #[test]
    fn sequential_versus_random() {
        let mut d = Linear::new(&spec_seq_rand()).unwrap();
        // First read (cursor 0): sequential. 4 KiB = 40 000 + 10 000.
        assert_eq!(d.issue(0, Op::Read, 1000, 4096), 50_000);
        // Starts where the previous read ended: sequential, queued behind it.
        assert_eq!(d.issue(0, Op::Read, 1008, 4096), 100_000);
        // 16 MiB away exactly (4096 pages): still sequential (iocost: > 4096 is random).
        assert_eq!(d.issue(0, Op::Read, 1016 + 4096 * 8, 4096), 150_000);
        // One page further: random (190 000 + 10 000).
        let cur = 1016 + 4096 * 8 + 8;
        assert_eq!(d.issue(0, Op::Read, cur + 4097 * 8, 4096), 350_000);
        // Writes keep their own cursor: first write is sequential (90 000 + 10 000).
        assert_eq!(d.issue(0, Op::Write, 0, 4096), 450_000);
        // 64 KiB random write: 490 000 + 16 × 10 000.
        assert_eq!(d.issue(0, Op::Write, 1 << 30, 65536), 450_000 + 650_000);
        // Sub-4 KiB IOs pay one page.
        assert_eq!(
            d.issue(2_000_000, Op::Read, cur + 4097 * 8 + 8, 512),
            2_050_000
        );
        // Flush: no service, waits for nothing here.
        assert_eq!(d.issue(3_000_000, Op::Flush, 0, 0), 3_000_000);
    }

    #[test]
    fn parallel_units_fifo_and_latency() {
        let mut s = spec_seq_rand();
        s.parallelism = 2;
        s.latency_ns = 7;
        let mut d = Linear::new(&s).unwrap();
        // Four sequential 4 KiB reads at 0 on two units: 50 µs each.
        let c: Vec<Ns> = (0..4).map(|i| d.issue(0, Op::Read, 8 * i, 4096)).collect();
        assert_eq!(c, vec![50_007, 50_007, 100_007, 100_007]);
        // A request arriving after both units went idle starts at once.
        assert_eq!(d.issue(1_000_000, Op::Read, 32, 4096), 1_050_007);
    }

    #[test]
    fn saturated_throughput_is_the_model_rate() {
        // 1 MiB random reads back to back: 1e9 / 6 301 487 ns ≈ 158.7 per second,
        // the figure iocost-spec §12.1 gives for vrate 100 %.
        let mut d = Linear::new(&seed_spec()).unwrap();
        let mut last = 0;
        for i in 0..159u64 {
            last = d.issue(0, Op::Read, (i * 997 % 64) << 21, 1 << 20);
        }
        assert!(last > 990_000_000 && last < 1_010_000_000, "{last}");
    }

    #[test]
    fn validation_names_the_parameter() {
        let mut s = seed_spec();
        s.wrandiops = 0;
        assert!(Linear::new(&s).err().unwrap().contains("wrandiops"));
        let mut s = seed_spec();
        s.parallelism = 0;
        assert!(Linear::new(&s).err().unwrap().contains("parallelism"));
    }
}
