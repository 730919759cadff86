//! Unit tests of the page-cache model: LRU promotion and reclaim, refault
//! distance and PG_workingset, readahead windows, writeback timing.

use super::readahead::{self, get_init_ra_size, get_next_ra_size, ondemand, RaState, RaWindow};
use super::writeback::{Flusher, WorkKind};
use super::*;

fn params(pages: u64, lru: LruKind) -> PageCacheParams {
    PageCacheParams {
        memory: pages * PAGE_SIZE,
        lru,
        ..Default::default()
    }
}

fn cache(pages: u64, lru: LruKind) -> (PageCache, FileId) {
    let mut pc = PageCache::new(params(pages, lru));
    let f = pc.add_file(FileState {
        dev: 0,
        cg: 0,
        base: 0,
        pages: 1 << 20,
        dirtied_when: None,
        wb_index: 0,
        nr_dirty: 0,
    });
    (pc, f)
}

/// folio_mark_accessed: the first access only sets PG_referenced, the
/// second moves the page to the active list (and ages the clock).
#[test]
fn mark_accessed_promotes_on_second_access() {
    let (mut pc, f) = cache(64, LruKind::Classic);
    let p = pc.add_page(f, 0, true, false);
    pc.mark_accessed(p);
    assert_eq!(pc.page(p).lru, Lru::Inactive);
    assert!(pc.page(p).has(pf::REFERENCED));
    let age = pc.nonresident_age;
    pc.mark_accessed(p);
    assert_eq!(pc.page(p).lru, Lru::Active);
    assert!(!pc.page(p).has(pf::REFERENCED));
    assert_eq!(pc.nonresident_age, age + 1);
    assert!(
        !pc.page(p).has(pf::WORKINGSET),
        "classic: no PG_workingset on activation"
    );
}

/// Reclaim takes the inactive tail (oldest) first; a dirty page is skipped
/// (rotated with PG_reclaim); a young mapped page gets a second chance and is
/// activated the next time it is found young.
#[test]
fn reclaim_order_dirty_skip_and_young_second_chance() {
    let (mut pc, f) = cache(64, LruKind::Classic);
    for i in 0..64 {
        pc.add_page(f, i, true, false);
    }
    // page 0 (tail) dirty, page 1 young+mapped
    let p0 = pc.page_at(f, 0).unwrap();
    let p1 = pc.page_at(f, 1).unwrap();
    pc.set_dirty(p0, 0);
    pc.touch_mapped(p1);
    pc.add_page(f, 100, true, false); // forces one eviction
    assert!(pc.is_resident(f, 0), "dirty page not reclaimed");
    assert!(pc.page(p0).has(pf::RECLAIM));
    assert!(pc.is_resident(f, 1), "young page kept");
    assert!(pc.page(p1).has(pf::REFERENCED) && !pc.page(p1).has(pf::YOUNG));
    assert!(
        !pc.is_resident(f, 2),
        "the oldest clean, unreferenced page went"
    );
    assert_eq!(pc.stats.pgsteal, 1);
    // young again when reclaim meets it: activated
    pc.touch_mapped(p1);
    for i in 200..262 {
        pc.add_page(f, i, true, false);
    }
    assert_eq!(pc.page(p1).lru, Lru::Active);
    assert!(pc.nr_resident() <= 64 + 1);
}

/// Classic workingset_refault: a refault is activated iff its distance
/// (evictions + activations since it left) is at most the active list's size,
/// and gets PG_workingset back only if it had it when evicted.
#[test]
fn refault_distance_decides_classic() {
    let (mut pc, f) = cache(64, LruKind::Classic);
    // 20 active pages
    for i in 0..20 {
        let p = pc.add_page(f, i, true, false);
        pc.mark_accessed(p);
        pc.mark_accessed(p);
    }
    // page 1000 was in the working set (deactivated -> PG_workingset), and is
    // the oldest inactive page
    let w = pc.add_page(f, 1000, true, false);
    pc.page_mut(w).flags |= pf::WORKINGSET;
    for i in 20..64 {
        pc.add_page(f, i, true, false);
    }
    assert_eq!(pc.nr_active(), 20);
    pc.add_page(f, 2000, true, false); // evicts page 1000
    assert!(!pc.is_resident(f, 1000));
    let (ev, ws) = pc.shadow(f, 1000).unwrap();
    assert!(ws);
    // 18 more evictions; the refault's own allocation evicts one more, so
    // the distance is then 20 = the active list: still recent.
    for i in 0..18 {
        pc.add_page(f, 3000 + i, true, false);
    }
    assert_eq!(pc.nonresident_age - ev + 1, pc.nr_active());
    let r = pc.add_page(f, 1000, false, false);
    assert_eq!(pc.page(r).lru, Lru::Active);
    assert!(pc.page(r).has(pf::WORKINGSET));

    // Far refault: distance > active list -> inactive, no PG_workingset.
    let (mut pc, f) = cache(64, LruKind::Classic);
    for i in 0..10 {
        let p = pc.add_page(f, i, true, false);
        pc.mark_accessed(p);
        pc.mark_accessed(p);
    }
    let w = pc.add_page(f, 1000, true, false);
    pc.page_mut(w).flags |= pf::WORKINGSET;
    for i in 10..64 {
        pc.add_page(f, i, true, false);
    }
    pc.add_page(f, 2000, true, false);
    let (ev, _) = pc.shadow(f, 1000).unwrap();
    for i in 0..40 {
        pc.add_page(f, 3000 + i, true, false);
    }
    assert!(pc.nonresident_age - ev > pc.nr_active());
    let r = pc.add_page(f, 1000, false, false);
    assert_eq!(pc.page(r).lru, Lru::Inactive);
    assert!(!pc.page(r).has(pf::WORKINGSET));
    assert_eq!(pc.stats.workingset_refault, 1);
    assert_eq!(pc.stats.workingset_activate, 0);
}

/// lru-gen: a recent refault in a page fault gets PG_workingset; a recent
/// refault through read() of a page used once does not; once-used pages do
/// not move the generation clock, used-again ones do.
#[test]
fn lru_gen_fault_refault_sets_workingset() {
    let (mut pc, f) = cache(64, LruKind::LruGen);
    for i in 0..64 {
        pc.add_page(f, i, true, false);
    }
    for i in 64..74 {
        pc.add_page(f, i, true, false); // evicts 0..10, once-used
    }
    assert_eq!(
        pc.gen_clock, 0,
        "streaming evictions do not age generations"
    );
    let r = pc.add_page(f, 0, false, false);
    assert!(
        !pc.page(r).has(pf::WORKINGSET),
        "read() refault of a once-used page"
    );
    let r = pc.add_page(f, 1, false, true);
    assert!(pc.page(r).has(pf::WORKINGSET), "refault in a fault");
    // second access through read() sets PG_workingset
    let p = pc.page_at(f, 70).unwrap();
    pc.mark_accessed(p);
    assert!(!pc.page(p).has(pf::WORKINGSET));
    pc.mark_accessed(p);
    assert!(pc.page(p).has(pf::WORKINGSET));
}

/// get_init_ra_size / get_next_ra_size with ra_pages = 32 (128 KiB).
#[test]
fn readahead_window_sizes() {
    assert_eq!(get_init_ra_size(1, 32), 4); // 1 <= 32/32: x4
    assert_eq!(get_init_ra_size(2, 32), 4); // 2 <= 32/4: x2
    assert_eq!(get_init_ra_size(8, 32), 16);
    assert_eq!(get_init_ra_size(9, 32), 32); // 16 > 8: max
    assert_eq!(get_next_ra_size(1, 32), 4); // < max/16: x4
    assert_eq!(get_next_ra_size(4, 32), 8); // <= max/2: x2
    assert_eq!(get_next_ra_size(16, 32), 32);
    assert_eq!(get_next_ra_size(32, 32), 32);
}

/// A sequential stream: the first miss at 0 reads 4 pages with the marker on
/// page 1; hitting the marker pushes the window forward and ramps it up;
/// a far random miss reads only what was asked and leaves the state alone.
#[test]
fn readahead_sequential_ramp_and_random() {
    let (pc, f) = cache(1024, LruKind::Classic);
    let mut ra = RaState::default();
    let w = ondemand(&mut ra, &pc, f, 0, 1, 32, false);
    assert_eq!(
        w,
        RaWindow {
            start: 0,
            nr: 4,
            lookahead: 3
        }
    ); // marker at 0+4-3 = 1
    let w = ondemand(&mut ra, &pc, f, 1, 1, 32, true);
    assert_eq!(
        w,
        RaWindow {
            start: 4,
            nr: 8,
            lookahead: 8
        }
    ); // marker at 4
    let w = ondemand(&mut ra, &pc, f, 4, 1, 32, true);
    assert_eq!(
        w,
        RaWindow {
            start: 12,
            nr: 16,
            lookahead: 16
        }
    );
    let w = ondemand(&mut ra, &pc, f, 12, 1, 32, true);
    assert_eq!(
        w,
        RaWindow {
            start: 28,
            nr: 32,
            lookahead: 32
        }
    );
    let before = ra;
    ra.prev_pos = Some(10 * PAGE_SIZE);
    let before = RaState {
        prev_pos: ra.prev_pos,
        ..before
    };
    let w = ondemand(&mut ra, &pc, f, 5000, 1, 32, false);
    assert_eq!(
        w,
        RaWindow {
            start: 5000,
            nr: 1,
            lookahead: 0
        }
    );
    assert_eq!(ra, before);
}

/// Context readahead: a random miss right after cached pages reads as many
/// pages again as the cached history (capped at ra_pages).
#[test]
fn readahead_context_history() {
    let (mut pc, f) = cache(1024, LruKind::Classic);
    for i in 100..103 {
        pc.add_page(f, i, true, false);
    }
    let mut ra = RaState::default();
    let w = ondemand(&mut ra, &pc, f, 103, 1, 32, false);
    assert_eq!(
        w,
        RaWindow {
            start: 103,
            nr: 4,
            lookahead: 1
        }
    );
}

/// mmap read-around: ra_pages centred on the fault, a quarter async, until
/// misses outnumber hits by MMAP_LOTSAMISS; then single pages.
#[test]
fn mmap_read_around_then_single() {
    let mut ra = RaState::default();
    let w = readahead::mmap_fault(&mut ra, 100, 32);
    assert_eq!(
        w,
        RaWindow {
            start: 84,
            nr: 32,
            lookahead: 8
        }
    );
    for _ in 1..readahead::MMAP_LOTSAMISS {
        readahead::mmap_fault(&mut ra, 100, 32);
    }
    assert_eq!(readahead::mmap_fault(&mut ra, 500, 32).nr, 1);
    readahead::mmap_hit(&mut ra);
    readahead::mmap_hit(&mut ra);
    assert_eq!(readahead::mmap_fault(&mut ra, 500, 32).nr, 32);
}

/// Writeback choice: nothing for kupdate before dirty_expire; background
/// work over the background threshold; runs of contiguous dirty pages up to
/// max_bio_pages, cyclic from writeback_index, skipping pages under writeback.
#[test]
fn writeback_runs_and_expiry() {
    let mut p = params(1000, LruKind::Classic);
    p.max_bio_pages = 8;
    let mut pc = PageCache::new(p);
    let f = pc.add_file(FileState {
        dev: 0,
        cg: 0,
        base: 0,
        pages: 1000,
        dirtied_when: None,
        wb_index: 0,
        nr_dirty: 0,
    });
    assert_eq!(pc.params.thresholds(), (200, 100));
    for i in 0..20 {
        let pg = pc.add_page(f, i, true, false);
        pc.set_dirty(pg, 1_000_000);
    }
    let mut fl = Flusher::default();
    let mut out = Vec::new();
    let expire = pc.params.expire_ns();
    assert!(!pc.over_bg_thresh());
    assert!(!pc.next_writeback_run(&mut fl, WorkKind::Kupdate, 1_000_000 + expire - 1, &mut out));
    assert!(pc.next_writeback_run(&mut fl, WorkKind::Kupdate, 1_000_000 + expire, &mut out));
    let idx: Vec<u64> = out.iter().map(|&q| pc.page(q).index).collect();
    assert_eq!(idx, (0..8).collect::<Vec<_>>());
    for &q in &out.clone() {
        pc.start_writeback(q);
    }
    assert_eq!((pc.nr_dirty, pc.nr_writeback), (12, 8));
    // page 8 is redirtied while page 9.. wait: mark 9 under writeback too
    let p9 = pc.page_at(f, 9).unwrap();
    pc.start_writeback(p9);
    pc.set_dirty(p9, 2_000_000); // dirty again while under writeback
    assert!(pc.next_writeback_run(&mut fl, WorkKind::Kupdate, 1_000_000 + expire, &mut out));
    let idx: Vec<u64> = out.iter().map(|&q| pc.page(q).index).collect();
    assert_eq!(idx, vec![8], "the run stops at the page under writeback");
    for i in 0..8 {
        let q = pc.page_at(f, i).unwrap();
        pc.end_writeback(q);
    }
    assert_eq!(pc.nr_writeback, 1);
}

/// lru-gen `folio_inc_refs` (6.6): 1st access PG_referenced, 2nd
/// PG_workingset, then LRU_REFS counts up to 3 and stays there;
/// `folio_lru_refs` is that counter plus PG_workingset.
#[test]
fn lru_gen_inc_refs_counts_and_saturates() {
    let (mut pc, f) = cache(64, LruKind::LruGen);
    let p = pc.add_page(f, 0, true, false);
    let mut seen = vec![];
    for _ in 0..7 {
        pc.mark_accessed(p);
        seen.push((pc.page(p).has(pf::REFERENCED), pc.page(p).lru_refs()));
    }
    assert_eq!(
        seen,
        vec![
            (true, 0),
            (true, 1),
            (true, 2),
            (true, 3),
            (true, 4),
            (true, 4),
            (true, 4)
        ]
    );
}

/// `lru_gen_refault` after "mm/mglru: fix underprotected page cache" (6.6.8):
/// a recent refault through read() gets PG_workingset (and a saturated
/// LRU_REFS) only if the folio had been used at least four times
/// (folio_lru_refs >= 3); twice or three times is not enough. A restored
/// page is restored again after its next eviction.
#[test]
fn lru_gen_refault_restores_after_four_accesses() {
    let (mut pc, f) = cache(4, LruKind::LruGen);
    // pages 0..4 used 2, 3, 4 and 5 times through read()
    for (i, uses) in [(0u64, 2), (1, 3), (2, 4), (3, 5)] {
        let p = pc.add_page(f, i, true, false);
        for _ in 0..uses {
            pc.mark_accessed(p);
        }
    }
    // stream enough once-used pages to push all of them out
    for i in 100..106 {
        pc.add_page(f, i, true, false);
    }
    for i in 0..4 {
        assert!(!pc.is_resident(f, i), "page {i} evicted");
    }
    let ws: Vec<bool> = (0..4)
        .map(|i| {
            let p = pc.add_page(f, i, false, false);
            pc.page_mut(p).flags |= pf::UPTODATE; // the read completed
            pc.page(p).has(pf::WORKINGSET)
        })
        .collect();
    assert_eq!(ws, vec![false, false, true, true]);
    let p = pc.page_at(f, 2).unwrap();
    assert_eq!(pc.page(p).lru_refs(), 4, "restore saturates LRU_REFS");
    // evicted again without a new access: still restored on refault
    for i in 200..206 {
        pc.add_page(f, i, true, false);
    }
    assert!(!pc.is_resident(f, 2));
    let p = pc.add_page(f, 2, false, false);
    assert!(pc.page(p).has(pf::WORKINGSET));
}

/// `page_cache_sync_ra`: FMODE_RANDOM (fio's POSIX_FADV_RANDOM) reads just
/// the request, capped at max(io_pages, ra_pages), and leaves the readahead
/// state alone even right after cached pages (no context readahead); with
/// readahead off only the missing page is read; otherwise the on-demand
/// window.
#[test]
fn sync_ra_forced_for_random_fds() {
    use readahead::{sync_ra, FdRa};
    let (mut pc, f) = cache(1024, LruKind::Classic);
    for i in 0..64 {
        pc.add_page(f, i, true, false);
    }
    let random = FdRa {
        random: true,
        ra_pages: 32,
        io_pages: 128,
    };
    let mut ra = RaState::default();
    let w = sync_ra(&mut ra, &pc, f, 64, 1, random);
    assert_eq!(
        w,
        RaWindow {
            start: 64,
            nr: 1,
            lookahead: 0
        }
    );
    assert_eq!(ra, RaState::default());
    let w = sync_ra(&mut ra, &pc, f, 500, 300, random);
    assert_eq!(w.nr, 128, "capped at io_pages");
    let w = sync_ra(
        &mut ra,
        &pc,
        f,
        500,
        300,
        FdRa {
            io_pages: 16,
            ..random
        },
    );
    assert_eq!(w.nr, 32, "or at ra_pages when larger");
    let off = FdRa {
        random: false,
        ra_pages: 0,
        io_pages: 128,
    };
    assert_eq!(sync_ra(&mut ra, &pc, f, 64, 8, off).nr, 1);
    // the same miss without FMODE_RANDOM: context readahead from history
    let normal = FdRa {
        random: false,
        ..random
    };
    let w = sync_ra(&mut ra, &pc, f, 64, 1, normal);
    assert_eq!(w.start, 64);
    assert!(w.nr > 1, "context readahead: {w:?}");
}

/// A readahead window larger than the cache (a huge read_ahead_kb): every
/// page added is locked for its read, reclaim cannot free any. The first
/// failed scan looks at the cache once; the pages added after it, while
/// nothing changed, cost no scan (they used to cost a whole one each).
/// When a read ends, reclaim scans again and frees the page.
#[test]
fn reclaim_scan_is_not_repeated_while_nothing_can_be_freed() {
    let (mut pc, f) = cache(64, LruKind::Classic);
    for i in 0..64 {
        pc.add_page(f, i, false, false);
    }
    assert_eq!(pc.stall.scanned, 0);
    for i in 64..20_064 {
        pc.add_page(f, i, false, false);
    }
    assert_eq!(pc.stats.nr_overcommit, 20_000);
    // one failed scan (its budget: three passes over the cache), not 20,000
    assert!(pc.stall.scanned <= 3 * 65 + 64, "{}", pc.stall.scanned);
    // a read ends: the page is freeable, and the next addition frees it
    let p = pc.page_at(f, 0).unwrap();
    pc.page_mut(p).flags |= pf::UPTODATE;
    let steal = pc.stats.pgsteal;
    pc.add_page(f, 20_064, false, false);
    assert_eq!(pc.stats.pgsteal, steal + 1);
}
