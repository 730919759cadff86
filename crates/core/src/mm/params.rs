//! The page cache's scenario parameters (`[pagecache]`): memory, the
//! vm.dirty_* sysctls, readahead and the LRU flavour, with Linux's defaults,
//! and the size syntax every scenario size uses.

use serde::Deserialize;

use super::PAGE_SIZE;
use crate::sim::time::{Ns, NSEC_PER_MSEC};

/// Scenario parameters (`[pagecache]`), with Linux's defaults where Linux has one.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct PageCacheParams {
    /// Memory available to the page cache, bytes (a size string in TOML).
    #[serde(deserialize_with = "de_size")]
    pub memory: u64,
    /// vm.dirty_ratio (% of `memory`).
    pub dirty_ratio: u32,
    /// vm.dirty_background_ratio (%).
    pub dirty_background_ratio: u32,
    /// vm.dirty_expire_centisecs.
    pub dirty_expire_centisecs: u32,
    /// vm.dirty_writeback_centisecs (the flusher's periodic wake-up).
    pub dirty_writeback_centisecs: u32,
    /// /sys/block/DEV/queue/read_ahead_kb (ra_pages = this / 4).
    pub read_ahead_kb: u32,
    /// CPU time of copying one cached page to or from user space, or of a
    /// memory user's touch of a mapped page (ns).
    pub page_copy_ns: Ns,
    /// Percentage of page adds that `bvec_try_merge_page` merges into the
    /// previous bvec (the new page frame happens to follow the previous one
    /// physically). Page frames are not modelled; this draws it per add.
    pub bvec_merge_pct: u32,
    /// Largest bio the page cache builds, in pages (BIO_MAX_VECS = 256).
    pub max_bio_pages: u32,
    /// Which LRU's PG_workingset rules apply: `classic` (two lists,
    /// mm/workingset.c) or `lru-gen` (the multi-gen LRU of 6.6, which the
    /// patch depends on; see `Lru rules` in docs/fidelity/pagecache.md).
    pub lru: LruKind,
}

/// The PG_workingset rules.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum LruKind {
    /// `workingset_refault`: a refault whose distance is at most the active
    /// list is activated, and gets PG_workingset back if it had it when
    /// evicted (set by `shrink_active_list` deactivation).
    Classic,
    /// 6.6 `lru_gen_refault` / `folio_inc_refs`, approximated on the two
    /// lists: the second access through a file descriptor sets
    /// PG_workingset; a refault is recent if the page left within the last
    /// `capacity` evictions (about the generations the LRU still holds);
    /// a recent refault inside a page fault, or of a page that had
    /// PG_workingset, gets PG_workingset.
    #[default]
    LruGen,
}

fn de_size<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum S {
        N(u64),
        S(String),
    }
    match S::deserialize(d)? {
        S::N(n) => Ok(n),
        S::S(s) => parse_size(&s).map_err(serde::de::Error::custom),
    }
}

/// A size like "512G", "4k", "2MiB", "1048576" (powers of 1024; a
/// trailing `b`/`ib` is allowed). The one parser for every size a scenario
/// or `[pagecache]` section gives.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("'{s}' is not a size (e.g. 512G, 4k, 1048576)"))?;
    let mult: u64 = match unit
        .trim()
        .to_ascii_lowercase()
        .trim_end_matches('b')
        .trim_end_matches('i')
    {
        "" => 1,
        "k" => 1 << 10,
        "m" => 1 << 20,
        "g" => 1 << 30,
        "t" => 1 << 40,
        "p" => 1 << 50,
        _ => return Err(format!("'{s}': unknown size unit (use k, m, g, t or p)")),
    };
    n.checked_mul(mult)
        .ok_or_else(|| format!("size '{s}' is too large"))
}

impl Default for PageCacheParams {
    fn default() -> Self {
        PageCacheParams {
            memory: 1 << 30,
            dirty_ratio: 20,
            dirty_background_ratio: 10,
            dirty_expire_centisecs: 3000,
            dirty_writeback_centisecs: 500,
            read_ahead_kb: 128,
            page_copy_ns: 500,
            bvec_merge_pct: 0,
            max_bio_pages: 256,
            lru: LruKind::LruGen,
        }
    }
}

impl PageCacheParams {
    pub fn validate(&self) -> Result<(), String> {
        if self.memory < 64 * PAGE_SIZE {
            return Err(format!(
                "pagecache.memory = {} bytes: at least 256K (64 pages) expected",
                self.memory
            ));
        }
        if self.dirty_ratio == 0 || self.dirty_ratio > 100 {
            return Err("pagecache.dirty_ratio: expected 1..=100 (%)".into());
        }
        if self.dirty_background_ratio > 100 {
            return Err("pagecache.dirty_background_ratio: expected 0..=100 (%)".into());
        }
        if self.dirty_writeback_centisecs == 0 {
            return Err("pagecache.dirty_writeback_centisecs: 0 (periodic writeback off) is not modelled; expected >= 1".into());
        }
        if self.bvec_merge_pct > 100 {
            return Err("pagecache.bvec_merge_pct: expected 0..=100".into());
        }
        if self.max_bio_pages == 0 || self.max_bio_pages > 256 {
            return Err("pagecache.max_bio_pages: expected 1..=256 (BIO_MAX_VECS)".into());
        }
        Ok(())
    }
    pub fn capacity_pages(&self) -> u64 {
        self.memory / PAGE_SIZE
    }
    pub fn ra_pages(&self) -> u64 {
        self.read_ahead_kb as u64 / 4
    }
    /// `dirty_thresh` and `background_thresh` in pages (`domain_dirty_limits`
    /// with the whole of `memory` counted as dirtyable).
    pub fn thresholds(&self) -> (u64, u64) {
        let pages = self.capacity_pages();
        let thresh = pages * self.dirty_ratio as u64 / 100;
        let mut bg = pages * self.dirty_background_ratio as u64 / 100;
        if bg >= thresh {
            bg = thresh / 2;
        }
        (thresh.max(1), bg)
    }
    pub fn expire_ns(&self) -> Ns {
        self.dirty_expire_centisecs as Ns * 10 * NSEC_PER_MSEC
    }
    pub fn writeback_interval_ns(&self) -> Ns {
        self.dirty_writeback_centisecs as Ns * 10 * NSEC_PER_MSEC
    }
}
