//! The page cache's part of a run's result: per-task figures and the
//! cache's own counters.

use super::PcStats;

/// Per-job page-cache figures (reported next to fio's output).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PcJobStats {
    /// Pages found uptodate in the cache by buffered reads.
    pub read_hit_pages: u64,
    /// Pages buffered reads had to wait for.
    pub read_miss_pages: u64,
    pub minor_faults: u64,
    /// Faults that waited for a read (page missing or still locked).
    pub major_faults: u64,
    /// Total and largest time spent waiting in major faults.
    pub fault_wait_ns: u64,
    pub fault_wait_max_ns: u64,
    /// Writes that blocked in balance_dirty_pages, and for how long.
    pub dirty_waits: u64,
    pub dirty_wait_ns: u64,
    /// Read bios this job submitted, and how many of them the
    /// content-activity rule promoted (class RT after it).
    pub read_bios: u64,
    pub read_bios_rt: u64,
}

impl PcJobStats {
    pub fn mean_fault_wait_ns(&self) -> u64 {
        self.fault_wait_ns
            .checked_div(self.major_faults)
            .unwrap_or(0)
    }
}

/// The page cache's part of a run's result.
#[derive(Clone, Debug, Default)]
pub struct PcReport {
    pub stats: PcStats,
    /// Per job instance (None for direct-I/O jobs).
    pub jobs: Vec<Option<PcJobStats>>,
    /// Writeback bios and how many the rule promoted to RT.
    pub write_bios: u64,
    pub write_bios_rt: u64,
}
