//! The flusher's choice of what to write next (fs/fs-writeback.c
//! `wb_writeback` / `writeback_sb_inodes`, mm/page-writeback.c
//! `write_cache_pages`), without the block layer: which file, which run of
//! dirty pages. The engine (`io.rs`) builds the bio and submits it as the
//! flusher kworker.
//!
//! Work kinds, as `wb_do_writeback` checks them: *background* writeback while
//! the dirty pages exceed the background threshold (`wb_over_bg_thresh`,
//! dirty pages only, not those under writeback), and *kupdate* (periodic)
//! writeback of files dirtied more than `dirty_expire` ago, run when the
//! periodic timer (`dirty_writeback_interval`) fires. Files are served round
//! robin in chunks of `WB_CHUNK_PAGES` (the inode goes to `b_more_io` and the
//! next one is written); within a file, writeback is cyclic from
//! `writeback_index`. Pages under writeback are skipped (WB_SYNC_NONE).

use super::{key, pf, unkey, FileId, PageCache, PageId};
use crate::block::bio::DevId;
use crate::sim::time::Ns;

/// `MIN_WRITEBACK_PAGES` (4 MiB of 4 KiB pages): the per-file chunk of one
/// writeback pass (`writeback_chunk_size` rounds to it).
pub const WB_CHUNK_PAGES: u64 = 1024;

/// One device's flusher (`struct bdi_writeback` + its kworker).
#[derive(Clone, Debug, Default)]
pub struct Flusher {
    pub dev: DevId,
    /// A bio of ours is in `submit_bio` (the kworker sleeps for a tag).
    pub in_submit: bool,
    /// When the flusher's work item is queued to run.
    pub armed: Option<Ns>,
    /// The next periodic (kupdate) wake-up.
    pub next_periodic: Ns,
    /// A kupdate pass is in progress.
    pub kupdate: bool,
    /// The file being written and what is left of its chunk.
    pub cur: Option<FileId>,
    pub chunk_left: u64,
}

/// What the flusher should do now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkKind {
    Background,
    Kupdate,
}

impl PageCache {
    /// `wb_over_bg_thresh`.
    pub fn over_bg_thresh(&self) -> bool {
        self.nr_dirty > self.params.thresholds().1
    }

    /// `balance_dirty_pages`'s limit test: dirty + writeback above dirty_thresh.
    pub fn over_dirty_thresh(&self) -> bool {
        self.nr_dirty + self.nr_writeback > self.params.thresholds().0
    }

    fn file_eligible(&self, f: FileId, dev: DevId, kind: WorkKind, now: Ns) -> bool {
        let fs = &self.files[f as usize];
        if fs.dev != dev || fs.nr_dirty == 0 {
            return false;
        }
        match kind {
            WorkKind::Background => true,
            WorkKind::Kupdate => fs
                .dirtied_when
                .is_some_and(|t| t + self.params.expire_ns() <= now),
        }
    }

    /// The next run of dirty pages the flusher of `dev` writes, as page ids
    /// in index order (at most `max_bio_pages`), or None when there is no
    /// work of this kind. Advances the file's `writeback_index` and the
    /// flusher's round robin.
    pub fn next_writeback_run(
        &mut self,
        fl: &mut Flusher,
        kind: WorkKind,
        now: Ns,
        out: &mut Vec<PageId>,
    ) -> bool {
        out.clear();
        let nfiles = self.files.len() as FileId;
        if nfiles == 0 {
            return false;
        }
        // Stay on the current file while its chunk lasts.
        let mut f = match fl.cur {
            Some(c) if fl.chunk_left > 0 && self.file_eligible(c, fl.dev, kind, now) => c,
            _ => {
                let after = fl.cur.map(|c| c + 1).unwrap_or(0);
                let mut found = None;
                for i in 0..nfiles {
                    let c = (after + i) % nfiles;
                    if self.file_eligible(c, fl.dev, kind, now) {
                        found = Some(c);
                        break;
                    }
                }
                let Some(c) = found else {
                    fl.cur = None;
                    return false;
                };
                fl.cur = Some(c);
                fl.chunk_left = WB_CHUNK_PAGES;
                c
            }
        };
        // write_cache_pages, range_cyclic: from writeback_index to the end,
        // then from 0. Pages under writeback are skipped.
        for _pass in 0..2 {
            let start = self.files[f as usize].wb_index;
            let mut it = self.dirty.range(key(f, start)..key(f + 1, 0));
            let mut first = None;
            for &k in it.by_ref() {
                let (_, idx) = unkey(k);
                let p = self.page_at(f, idx).expect("dirty page is resident");
                if !self.page(p).has(pf::WRITEBACK) {
                    first = Some(idx);
                    break;
                }
            }
            let Some(first) = first else {
                if start == 0 {
                    break;
                }
                self.files[f as usize].wb_index = 0;
                continue;
            };
            let max = (self.params.max_bio_pages as u64).min(fl.chunk_left.max(1));
            let mut idx = first;
            while (out.len() as u64) < max {
                match self.page_at(f, idx) {
                    Some(p) if self.page(p).has(pf::DIRTY) && !self.page(p).has(pf::WRITEBACK) => {
                        out.push(p)
                    }
                    _ => break,
                }
                idx += 1;
            }
            self.files[f as usize].wb_index = idx;
            fl.chunk_left = fl.chunk_left.saturating_sub(out.len() as u64);
            return true;
        }
        // Every dirty page of the file is under writeback already: next file.
        fl.chunk_left = 0;
        // Try the others once (no recursion beyond one step).
        let cur = f;
        for i in 1..nfiles {
            let c = (cur + i) % nfiles;
            if self.file_eligible(c, fl.dev, kind, now) {
                let writable = self.dirty.range(key(c, 0)..key(c + 1, 0)).any(|&k| {
                    let (_, idx) = unkey(k);
                    self.page_at(c, idx)
                        .is_some_and(|p| !self.page(p).has(pf::WRITEBACK))
                });
                if writable {
                    f = c;
                    fl.cur = Some(f);
                    fl.chunk_left = WB_CHUNK_PAGES;
                    return self.next_writeback_run(fl, kind, now, out);
                }
            }
        }
        fl.cur = None;
        false
    }
}
