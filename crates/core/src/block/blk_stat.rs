//! blk-stat's latency summary (block/blk-stat.c): what blk-wbt gets per
//! window and blk-iolatency keeps per group on rotational devices.

/// `struct blk_rq_stat`: min, max, mean and count of the latencies (issue
/// to the driver to completion) of one direction in one window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RqStat {
    pub min_ns: u64,
    pub max_ns: u64,
    pub sum_ns: u64,
    pub nr_samples: u64,
}

impl Default for RqStat {
    fn default() -> Self {
        RqStat {
            min_ns: u64::MAX,
            max_ns: 0,
            sum_ns: 0,
            nr_samples: 0,
        }
    }
}

impl RqStat {
    /// Mirrors `blk_rq_stat_add`.
    pub fn add(&mut self, lat_ns: u64) {
        self.min_ns = self.min_ns.min(lat_ns);
        self.max_ns = self.max_ns.max(lat_ns);
        self.sum_ns = self.sum_ns.saturating_add(lat_ns);
        self.nr_samples += 1;
    }
    /// Mirrors `blk_rq_stat_sum`: fold `src` into this summary.
    pub fn merge(&mut self, src: &RqStat) {
        if src.nr_samples == 0 {
            return;
        }
        self.min_ns = self.min_ns.min(src.min_ns);
        self.max_ns = self.max_ns.max(src.max_ns);
        self.sum_ns = self.sum_ns.saturating_add(src.sum_ns);
        self.nr_samples += src.nr_samples;
    }
    /// The mean (the kernel keeps it as a running mean; the model keeps
    /// the sum, which gives the same value up to rounding).
    pub fn mean_ns(&self) -> u64 {
        self.sum_ns.checked_div(self.nr_samples).unwrap_or(0)
    }
}
