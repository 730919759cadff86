//! A page-cache model for buffered I/O and file-backed page faults: 4 KiB file
//! pages on a two-list LRU (mm/swap.c, mm/vmscan.c), readahead
//! (mm/readahead.c, `readahead.rs`), dirty accounting with a flusher
//! (mm/page-writeback.c, fs/fs-writeback.c, `writeback.rs`) and workingset
//! detection on refault (mm/workingset.c). It is as small as the
//! content-activity patch needs: which pages a bio carries and whether they
//! have PG_workingset. docs/fidelity/pagecache.md lists what it leaves out.
//!
//! This file is the pure model (no block layer): page lookup and insertion,
//! `folio_mark_accessed`, reclaim from the inactive tail with
//! `folio_check_references`, `shrink_active_list` balancing, eviction into
//! shadow entries and `workingset_refault`. The engine glue is `filemap.rs`.

pub mod filemap;
pub(crate) mod flusher;
pub mod lru;
mod params;
pub mod pcsys;
pub mod readahead;
pub mod report;
mod stall;
pub mod writeback;

#[cfg(test)]
mod tests;

use std::collections::{BTreeSet, HashMap, VecDeque};

use crate::block::blk_cgroup::CgId;
use crate::sim::time::Ns;
use lru::{List, Lru};
pub use params::{parse_size, LruKind, PageCacheParams};

pub const PAGE_SIZE: u64 = 4096;
pub const PAGE_SHIFT: u32 = 12;

pub type PageId = u32;
pub type FileId = u32;
pub const NO_PAGE: PageId = u32::MAX;

/// `SWAP_CLUSTER_MAX`: pages reclaimed / deactivated per batch.
pub const SWAP_CLUSTER_MAX: u64 = 32;

/// Page flags (a subset of `enum pageflags`, plus the PTE young bit of the
/// single mapping a memory user has).
pub mod pf {
    pub const UPTODATE: u16 = 1 << 0;
    pub const DIRTY: u16 = 1 << 1;
    pub const WRITEBACK: u16 = 1 << 2;
    pub const REFERENCED: u16 = 1 << 3;
    pub const WORKINGSET: u16 = 1 << 4;
    /// PG_readahead: hitting this page starts asynchronous readahead.
    pub const READAHEAD: u16 = 1 << 5;
    /// PG_reclaim: reclaim met it dirty or under writeback; rotate to the
    /// inactive tail when writeback ends.
    pub const RECLAIM: u16 = 1 << 6;
    /// Mapped into a memory user's page table.
    pub const MAPPED: u16 = 1 << 7;
    /// The PTE's accessed bit (cleared by `folio_referenced`).
    pub const YOUNG: u16 = 1 << 8;
    /// lru-gen's LRU_REFS field (LRU_REFS_WIDTH = 2 bits): accesses through a
    /// file descriptor beyond the two that PG_referenced and PG_workingset
    /// record.
    pub const LRU_REFS_SHIFT: u32 = 9;
    pub const LRU_REFS_MASK: u16 = 3 << LRU_REFS_SHIFT;
}

/// `BIT(LRU_REFS_WIDTH) - 1`: since "mm/mglru: fix underprotected page
/// cache" (v6.7, in 6.6.8 and 6.1.69), a refault whose shadow carries at
/// least this many references gets PG_workingset back.
pub const LRU_REFS_RESTORE: u8 = 3;

/// One resident page (`struct folio` of order 0).
#[derive(Clone, Copy, Debug)]
pub struct Page {
    pub file: FileId,
    pub index: u64,
    pub flags: u16,
    pub lru: Lru,
    pub(crate) prev: PageId,
    pub(crate) next: PageId,
}

impl Page {
    #[inline]
    pub fn has(&self, f: u16) -> bool {
        self.flags & f != 0
    }

    /// `folio_lru_refs`: the LRU_REFS counter plus PG_workingset, i.e. the
    /// accesses through a file descriptor beyond the first (0..=4).
    pub fn lru_refs(&self) -> u8 {
        ((self.flags & pf::LRU_REFS_MASK) >> pf::LRU_REFS_SHIFT) as u8
            + self.has(pf::WORKINGSET) as u8
    }
}

/// What the cache holds at a file index: a page or a shadow entry left by
/// eviction (`workingset_eviction` / `lru_gen_eviction`: the eviction clock,
/// PG_workingset and, for lru-gen, `folio_lru_refs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slot {
    Page(PageId),
    Shadow {
        eviction: u64,
        workingset: bool,
        refs: u8,
    },
}

/// What a lookup found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lookup {
    /// Resident and uptodate.
    Hit(PageId),
    /// Resident, its read is still in flight (the folio is locked).
    Locked(PageId),
    Miss,
}

/// Per-file state (`struct address_space` + its inode's writeback state).
#[derive(Clone, Debug)]
pub struct FileState {
    pub dev: crate::block::bio::DevId,
    /// The cgroup its dirty pages are written back for (the dirtier's).
    pub cg: CgId,
    /// Byte offset of page 0 on the device (the model has no filesystem:
    /// a file is a contiguous device region).
    pub base: u64,
    /// Size in pages (readahead stops here).
    pub pages: u64,
    /// `inode->dirtied_when`: when the file went from clean to dirty.
    pub dirtied_when: Option<Ns>,
    /// `mapping->writeback_index`: where the next writeback pass starts.
    pub wb_index: u64,
    pub nr_dirty: u64,
}

/// Counters for reports and tests (like /proc/vmstat's).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PcStats {
    pub pgactivate: u64,
    pub pgdeactivate: u64,
    pub pgsteal: u64,
    pub workingset_refault: u64,
    pub workingset_activate: u64,
    pub workingset_restore: u64,
    pub pgpgin_pages: u64,
    pub pgpgout_pages: u64,
    pub nr_overcommit: u64,
    pub read_bios: u64,
    pub write_bios: u64,
    /// Bios whose priority the content-activity rule changed.
    pub promoted_bios: u64,
}

pub struct PageCache {
    pub params: PageCacheParams,
    pub(crate) pages: Vec<Page>,
    free: Vec<PageId>,
    map: HashMap<u64, Slot>,
    inactive: List,
    active: List,
    /// `lruvec->nonresident_age`: ages on every eviction and activation.
    pub nonresident_age: u64,
    /// lru-gen's stand-in for generations: evictions of pages that had been
    /// used more than once (see `evict`).
    pub gen_clock: u64,
    /// The last `capacity` evictions (key, clock): older shadows can never
    /// pass the refault-distance test (the distance would exceed every
    /// possible active list), so dropping them loses nothing; this bounds
    /// the shadow memory like the kernel's shadow-node shrinker.
    shadow_fifo: VecDeque<(u64, u64)>,
    pub files: Vec<FileState>,
    /// Dirty pages in (file, index) order: what writeback walks.
    pub(crate) dirty: BTreeSet<u64>,
    pub nr_dirty: u64,
    pub nr_writeback: u64,
    pub stats: PcStats,
    pub(crate) stall: stall::ReclaimStall,
}

#[inline]
pub fn key(file: FileId, index: u64) -> u64 {
    ((file as u64) << 40) | index
}
#[inline]
pub fn unkey(k: u64) -> (FileId, u64) {
    ((k >> 40) as FileId, k & ((1 << 40) - 1))
}

/// `int_sqrt` (integer Newton iteration, no floating point).
fn int_sqrt(x: u64) -> u64 {
    if x < 2 {
        return x;
    }
    let mut r = x;
    let mut y = (r + 1) / 2;
    while y < r {
        r = y;
        y = (r + x / r) / 2;
    }
    r
}

impl PageCache {
    pub fn new(params: PageCacheParams) -> PageCache {
        PageCache {
            params,
            pages: Vec::new(),
            free: Vec::new(),
            map: HashMap::new(),
            inactive: List::default(),
            active: List::default(),
            nonresident_age: 0,
            gen_clock: 0,
            shadow_fifo: VecDeque::new(),
            files: Vec::new(),
            dirty: BTreeSet::new(),
            nr_dirty: 0,
            nr_writeback: 0,
            stats: PcStats::default(),
            stall: Default::default(),
        }
    }

    pub fn add_file(&mut self, f: FileState) -> FileId {
        self.files.push(f);
        (self.files.len() - 1) as FileId
    }

    pub fn capacity(&self) -> u64 {
        self.params.capacity_pages()
    }
    pub fn nr_resident(&self) -> u64 {
        self.inactive.len + self.active.len
    }
    pub fn nr_active(&self) -> u64 {
        self.active.len
    }
    pub fn nr_inactive(&self) -> u64 {
        self.inactive.len
    }
    #[inline]
    pub fn page(&self, p: PageId) -> &Page {
        &self.pages[p as usize]
    }
    #[inline]
    pub fn page_mut(&mut self, p: PageId) -> &mut Page {
        self.stall.changed();
        &mut self.pages[p as usize]
    }

    pub fn lookup(&self, file: FileId, index: u64) -> Lookup {
        match self.map.get(&key(file, index)) {
            Some(Slot::Page(p)) => {
                if self.pages[*p as usize].has(pf::UPTODATE) {
                    Lookup::Hit(*p)
                } else {
                    Lookup::Locked(*p)
                }
            }
            _ => Lookup::Miss,
        }
    }

    pub fn is_resident(&self, file: FileId, index: u64) -> bool {
        matches!(self.map.get(&key(file, index)), Some(Slot::Page(_)))
    }

    /// The shadow entry at an index, if any: (eviction clock, workingset).
    pub fn shadow(&self, file: FileId, index: u64) -> Option<(u64, bool)> {
        match self.map.get(&key(file, index)) {
            Some(Slot::Shadow {
                eviction,
                workingset,
                ..
            }) => Some((*eviction, *workingset)),
            _ => None,
        }
    }

    fn list(&mut self, l: Lru) -> &mut List {
        match l {
            Lru::Active => &mut self.active,
            _ => &mut self.inactive,
        }
    }

    fn move_to(&mut self, p: PageId, to: Lru, tail: bool) {
        if to != self.pages[p as usize].lru {
            self.stall.changed();
        }
        let from = self.pages[p as usize].lru;
        if from != Lru::None {
            let mut l = *self.list(from);
            l.unlink(&mut self.pages, p);
            *self.list(from) = l;
        }
        let mut l = *self.list(to);
        if tail {
            l.push_tail(&mut self.pages, p);
        } else {
            l.push_head(&mut self.pages, p);
        }
        *self.list(to) = l;
        self.pages[p as usize].lru = to;
    }

    /// `workingset_age_nonresident`.
    fn age(&mut self, nr: u64) {
        self.nonresident_age += nr;
    }

    /// `folio_mark_accessed` for an access through a file descriptor: the
    /// first access sets PG_referenced, the second activates the page
    /// (`workingset_activation` ages the clock). With lru-gen it is
    /// `folio_inc_refs` (6.6): 1st access PG_referenced, 2nd PG_workingset,
    /// later ones count in LRU_REFS up to its maximum; the model activates
    /// at the 2nd access, standing in for the protection MGLRU's tiers give.
    pub fn mark_accessed(&mut self, p: PageId) {
        let lru_gen = self.params.lru == LruKind::LruGen;
        let pg = &mut self.pages[p as usize];
        if !pg.has(pf::REFERENCED) {
            pg.flags |= pf::REFERENCED;
            return;
        }
        if lru_gen {
            if pg.has(pf::WORKINGSET) {
                if pg.flags & pf::LRU_REFS_MASK != pf::LRU_REFS_MASK {
                    pg.flags += 1 << pf::LRU_REFS_SHIFT;
                }
                return;
            }
            pg.flags |= pf::WORKINGSET;
            if pg.lru == Lru::Inactive {
                self.move_to(p, Lru::Active, false);
                self.stats.pgactivate += 1;
                self.age(1);
            }
            return;
        }
        if pg.lru == Lru::Inactive {
            pg.flags &= !pf::REFERENCED;
            self.move_to(p, Lru::Active, false);
            self.stats.pgactivate += 1;
            self.age(1);
        }
    }

    /// A memory user touched a mapped page: the PTE's accessed bit.
    pub fn touch_mapped(&mut self, p: PageId) {
        self.pages[p as usize].flags |= pf::MAPPED | pf::YOUNG;
    }

    /// `inactive_is_low` for the file LRU: the target ratio is
    /// `int_sqrt(10 * size in GiB)` (1 below 1 GiB).
    pub fn inactive_is_low(&self) -> bool {
        let gb = (self.inactive.len + self.active.len) >> (30 - PAGE_SHIFT);
        let ratio = if gb > 0 { int_sqrt(10 * gb) } else { 1 };
        self.inactive.len * ratio < self.active.len
    }

    /// `shrink_active_list`: move up to `nr` pages from the active tail to
    /// the inactive head, setting PG_workingset ("it was part of the working
    /// set") and clearing the young bit (`folio_referenced`). Executable
    /// mappings, which the kernel keeps active, do not exist in the model.
    pub fn shrink_active(&mut self, nr: u64) {
        for _ in 0..nr {
            let p = self.active.tail;
            if p == NO_PAGE {
                break;
            }
            let pg = &mut self.pages[p as usize];
            pg.flags &= !pf::YOUNG;
            pg.flags |= pf::WORKINGSET;
            self.move_to(p, Lru::Inactive, false);
            self.stats.pgdeactivate += 1;
        }
    }

    /// Reclaim until the cache holds fewer than `capacity` pages (plus room
    /// for `want` more). Returns false if nothing could be reclaimed (every
    /// page locked, dirty or under writeback): the model then lets the cache
    /// overcommit, counted in `nr_overcommit`, where the kernel would stall
    /// the allocation in direct reclaim.
    pub fn reclaim(&mut self, want: u64) -> bool {
        let cap = self.capacity();
        // Bounded scan: every page can be rotated or activated at most twice.
        let mut budget = 3 * (self.nr_resident() + 1) + 2 * SWAP_CLUSTER_MAX;
        while self.nr_resident() + want > cap {
            if budget == 0 || self.stall.known_to_fail() {
                self.stats.nr_overcommit += 1;
                self.stall.failed();
                return false;
            }
            budget -= 1;
            self.stall.scanned += 1;
            if self.inactive.len == 0 || self.inactive_is_low() {
                if self.active.len == 0 {
                    self.stats.nr_overcommit += 1;
                    return false;
                }
                self.shrink_active(SWAP_CLUSTER_MAX);
                continue;
            }
            let p = self.inactive.tail;
            let pg = self.pages[p as usize];
            if !pg.has(pf::UPTODATE) || pg.has(pf::WRITEBACK) || pg.has(pf::DIRTY) {
                // Locked for read, or dirty/under writeback (file pages are
                // not written from reclaim; the flusher is asked and the page
                // rotates with PG_reclaim set).
                if pg.has(pf::DIRTY) || pg.has(pf::WRITEBACK) {
                    self.pages[p as usize].flags |= pf::RECLAIM;
                }
                self.move_to(p, Lru::Inactive, false);
                continue;
            }
            // folio_check_references
            let referenced_folio = pg.has(pf::REFERENCED);
            self.pages[p as usize].flags &= !pf::REFERENCED;
            if pg.has(pf::YOUNG) {
                let pgm = &mut self.pages[p as usize];
                pgm.flags &= !pf::YOUNG;
                pgm.flags |= pf::REFERENCED;
                if referenced_folio {
                    self.move_to(p, Lru::Active, false);
                    self.stats.pgactivate += 1;
                } else {
                    self.move_to(p, Lru::Inactive, false); // FOLIOREF_KEEP
                }
                continue;
            }
            self.evict(p);
        }
        true
    }

    /// `__remove_mapping` + `workingset_eviction`: the page leaves, a shadow
    /// entry with the eviction clock and its PG_workingset takes its place.
    fn evict(&mut self, p: PageId) {
        let pg = self.pages[p as usize];
        let mut l = *self.list(pg.lru);
        l.unlink(&mut self.pages, p);
        *self.list(pg.lru) = l;
        self.pages[p as usize].lru = Lru::None;
        self.age(1);
        // lru-gen: only pages the LRU had seen used again (mapped and
        // referenced, or PG_workingset) move the generations on; a page used
        // once is evicted from the oldest generation without aging the rest.
        if pg.has(pf::MAPPED) || pg.has(pf::WORKINGSET) {
            self.gen_clock += 1;
        }
        let eviction = match self.params.lru {
            LruKind::Classic => self.nonresident_age,
            LruKind::LruGen => self.gen_clock,
        };
        let k = key(pg.file, pg.index);
        self.map.insert(
            k,
            Slot::Shadow {
                eviction,
                workingset: pg.has(pf::WORKINGSET),
                refs: pg.lru_refs(),
            },
        );
        self.shadow_fifo.push_back((k, eviction));
        let cap = self.capacity();
        while let Some(&(ok, oe)) = self.shadow_fifo.front() {
            let expired = match self.params.lru {
                LruKind::Classic => self.shadow_fifo.len() as u64 > cap,
                LruKind::LruGen => {
                    self.gen_clock - oe > cap || self.shadow_fifo.len() as u64 > 8 * cap
                }
            };
            if !expired {
                break;
            }
            self.shadow_fifo.pop_front();
            if let Some(Slot::Shadow { eviction, .. }) = self.map.get(&ok) {
                if *eviction == oe {
                    self.map.remove(&ok);
                }
            }
        }
        self.free.push(p);
        self.stats.pgsteal += 1;
        self.stall.changed();
    }

    /// `filemap_add_folio` of a new page at (file, index), not uptodate
    /// (locked for its read) unless `uptodate`. Reclaims first if the cache is
    /// full. A shadow entry there means a refault: `workingset_refault`
    /// activates the page if the refault distance (evictions and activations
    /// since it left) is at most the active list's size, and then restores
    /// PG_workingset if the page had it when evicted.
    /// Returns the page; the caller must know the index was not resident.
    /// `in_fault`: the page is added by a page fault (matters for `lru-gen`).
    pub fn add_page(&mut self, file: FileId, index: u64, uptodate: bool, in_fault: bool) -> PageId {
        if self.nr_resident() >= self.capacity() {
            self.reclaim(1);
        }
        let k = key(file, index);
        let shadow = match self.map.get(&k) {
            Some(Slot::Shadow {
                eviction,
                workingset,
                refs,
            }) => Some((*eviction, *workingset, *refs)),
            Some(Slot::Page(_)) => panic!("add_page: index already resident"),
            None => None,
        };
        let page = Page {
            file,
            index,
            flags: if uptodate { pf::UPTODATE } else { 0 },
            lru: Lru::None,
            prev: NO_PAGE,
            next: NO_PAGE,
        };
        let p = match self.free.pop() {
            Some(p) => {
                self.pages[p as usize] = page;
                p
            }
            None => {
                self.pages.push(page);
                (self.pages.len() - 1) as PageId
            }
        };
        self.map.insert(k, Slot::Page(p));
        let mut to = Lru::Inactive;
        if let Some((eviction, workingset, refs)) = shadow {
            self.stats.workingset_refault += 1;
            let clock = match self.params.lru {
                LruKind::Classic => self.nonresident_age,
                LruKind::LruGen => self.gen_clock,
            };
            let distance = clock.wrapping_sub(eviction);
            match self.params.lru {
                LruKind::Classic => {
                    // workingset_test_recent: file pages, no swap, so the
                    // working set is the active file list.
                    if distance <= self.active.len {
                        to = Lru::Active;
                        self.age(1);
                        self.stats.workingset_activate += 1;
                        if workingset {
                            self.pages[p as usize].flags |= pf::WORKINGSET;
                            self.stats.workingset_restore += 1;
                        }
                    }
                }
                LruKind::LruGen => {
                    // lru_gen_refault: recent if the shadow's generation is
                    // still held (here: evicted within `capacity` evictions,
                    // which the shadow FIFO already guarantees). A refault in
                    // a page fault, or of a folio used through a file
                    // descriptor at least four times (refs >= 3), gets
                    // PG_workingset and a saturated LRU_REFS.
                    if distance <= self.capacity() {
                        self.stats.workingset_activate += 1;
                        if in_fault || refs >= LRU_REFS_RESTORE {
                            self.pages[p as usize].flags |= pf::WORKINGSET | pf::LRU_REFS_MASK;
                            self.stats.workingset_restore += 1;
                        }
                    }
                }
            }
        }
        // one more locked page on an inactive list that is not low leaves a
        // failed scan's outcome as it was (stall.rs); anything else may not
        let same = !uptodate && to == Lru::Inactive;
        let epoch_kept = self.stall.clone();
        self.move_to(p, to, false);
        if same && !self.inactive_is_low() {
            self.stall = epoch_kept;
        } else {
            self.stall.changed();
        }
        p
    }

    /// Mark a page dirty (`folio_mark_dirty` → `__folio_mark_dirty`), and the
    /// file with it (`__mark_inode_dirty` keeps the first dirtying time).
    /// Returns true if it was clean.
    pub fn set_dirty(&mut self, p: PageId, now: Ns) -> bool {
        let pg = &mut self.pages[p as usize];
        if pg.has(pf::DIRTY) {
            return false;
        }
        pg.flags |= pf::DIRTY | pf::UPTODATE;
        let (file, index) = (pg.file, pg.index);
        self.nr_dirty += 1;
        self.dirty.insert(key(file, index));
        let f = &mut self.files[file as usize];
        f.nr_dirty += 1;
        if f.dirtied_when.is_none() {
            f.dirtied_when = Some(now);
        }
        true
    }

    /// Writeback starts on a dirty page (`folio_clear_dirty_for_io` +
    /// `folio_start_writeback`).
    pub fn start_writeback(&mut self, p: PageId) {
        let pg = &mut self.pages[p as usize];
        debug_assert!(pg.has(pf::DIRTY));
        pg.flags &= !pf::DIRTY;
        pg.flags |= pf::WRITEBACK;
        let (file, index) = (pg.file, pg.index);
        self.dirty.remove(&key(file, index));
        self.nr_dirty -= 1;
        self.nr_writeback += 1;
        let f = &mut self.files[file as usize];
        f.nr_dirty -= 1;
        if f.nr_dirty == 0 {
            f.dirtied_when = None;
        }
    }

    /// `folio_end_writeback`: a page met by reclaim (PG_reclaim) goes to the
    /// inactive tail so the next scan frees it (`folio_rotate_reclaimable`).
    pub fn end_writeback(&mut self, p: PageId) {
        let pg = &mut self.pages[p as usize];
        debug_assert!(pg.has(pf::WRITEBACK));
        pg.flags &= !pf::WRITEBACK;
        self.nr_writeback -= 1;
        self.stall.changed();
        if pg.has(pf::RECLAIM) && !pg.has(pf::DIRTY) {
            pg.flags &= !pf::RECLAIM;
            if pg.lru == Lru::Inactive {
                self.move_to(p, Lru::Inactive, true);
            }
        }
    }

    /// The page at (file, index), resident or not.
    pub fn page_at(&self, file: FileId, index: u64) -> Option<PageId> {
        match self.map.get(&key(file, index)) {
            Some(Slot::Page(p)) => Some(*p),
            _ => None,
        }
    }

    /// Pages on a list from head to tail (for tests).
    pub fn list_pages(&self, l: Lru) -> Vec<(FileId, u64)> {
        let mut v = Vec::new();
        let mut p = match l {
            Lru::Active => self.active.head,
            _ => self.inactive.head,
        };
        while p != NO_PAGE {
            let pg = &self.pages[p as usize];
            v.push((pg.file, pg.index));
            p = pg.next;
        }
        v
    }
}
