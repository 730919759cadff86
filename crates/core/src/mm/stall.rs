//! Remembering that reclaim just failed, so that a full cache is not
//! scanned again, in vain, for every page added while nothing changed.
//!
//! A scan that fails (`PageCache::reclaim` used its whole budget) has met
//! only pages it cannot free: locked for a read, dirty or under writeback,
//! with an inactive list not low enough to deactivate more. The model then
//! lets the cache overcommit (the kernel would stall in direct reclaim).
//! Until something happens that could make a page freeable — a read ends,
//! writeback ends, a page moves between lists or leaves, a page is added
//! that is not just one more locked inactive page — the same scan would fail
//! the same way; it is skipped and counted as the failure it would be.
//! Without this, a readahead window larger than the cache (a huge
//! read_ahead_kb) scanned the whole cache for each of its pages: O(n²).
//!
//! Simplification: a skipped scan does not set PG_reclaim on pages dirtied
//! since the failed one (the kernel's repeated scans would). Only runs whose
//! cache overcommits ("reclaim failures" in the page-cache block) can differ.

#[derive(Clone, Debug, Default)]
pub(crate) struct ReclaimStall {
    /// Bumped by every change that could make a page freeable.
    epoch: u64,
    /// The epoch of the last failed scan.
    failed_at: Option<u64>,
    /// Pages looked at by reclaim scans (for tests of the scan cost).
    pub scanned: u64,
}

impl ReclaimStall {
    /// Something changed that a new scan should see.
    pub fn changed(&mut self) {
        self.epoch += 1;
    }
    /// A scan failed; nothing has changed since.
    pub fn failed(&mut self) {
        self.failed_at = Some(self.epoch);
    }
    /// True when a scan now would repeat the last failed one.
    pub fn known_to_fail(&self) -> bool {
        self.failed_at == Some(self.epoch)
    }
}
