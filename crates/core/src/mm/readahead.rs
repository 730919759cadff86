//! Readahead (mm/readahead.c of the 6.6 era, the kernel the seed was measured
//! on): `struct file_ra_state`, the on-demand algorithm that sizes the
//! window (`ondemand_readahead` with `get_init_ra_size` / `get_next_ra_size`,
//! context readahead for random reads next to cached history) and the
//! mmap read-around of `do_sync_mmap_readahead` with its `mmap_miss` counter.
//!
//! The functions only decide *which* pages to read; `io.rs` allocates them
//! (`page_cache_ra_unbounded`: stop a bio at a page that is already cached,
//! mark PG_readahead on the page `lookahead` before the window's end) and
//! submits the bios. Large folios (`page_cache_ra_order` with order > 0) are
//! not modelled: every page is order 0, as for ext4/f2fs/blkdev in 6.6.

use super::PageCache;
use super::{FileId, PAGE_SHIFT};

/// `MMAP_LOTSAMISS`: after this many more misses than hits, mmap faults stop
/// reading around and read just the faulting page.
pub const MMAP_LOTSAMISS: u32 = 100;

/// `struct file_ra_state` (per open file; in the model, per job and file).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RaState {
    pub start: u64,
    pub size: u64,
    pub async_size: u64,
    /// Byte position after the previous read; None = the kernel's -1.
    pub prev_pos: Option<u64>,
    pub mmap_miss: u32,
}

impl Default for RaState {
    fn default() -> Self {
        RaState {
            start: 0,
            size: 0,
            async_size: 0,
            prev_pos: None,
            mmap_miss: 0,
        }
    }
}

/// Pages to read: `[start, start + nr)`, PG_readahead on page
/// `start + nr - lookahead` when `lookahead > 0`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RaWindow {
    pub start: u64,
    pub nr: u64,
    pub lookahead: u64,
}

/// `get_init_ra_size`: the first window for a request of `size` pages.
pub fn get_init_ra_size(size: u64, max: u64) -> u64 {
    let newsize = size.max(1).next_power_of_two();
    if newsize <= max / 32 {
        newsize * 4
    } else if newsize <= max / 4 {
        newsize * 2
    } else {
        max
    }
}

/// `get_next_ra_size`: ramp-up of a sequential window.
pub fn get_next_ra_size(cur: u64, max: u64) -> u64 {
    if cur < max / 16 {
        4 * cur
    } else if cur <= max / 2 {
        2 * cur
    } else {
        max
    }
}

fn window(ra: &RaState) -> RaWindow {
    RaWindow {
        start: ra.start,
        nr: ra.size,
        lookahead: ra.async_size,
    }
}

/// `ondemand_readahead` for a read of `req` pages at page `index`; `marker`
/// is true when called because a page with PG_readahead was hit
/// (`page_cache_async_ra`), false on a cache miss (`page_cache_sync_ra`).
/// `max` is `ra_pages`. Updates `ra` as the kernel does and returns the
/// pages to read.
pub fn ondemand(
    ra: &mut RaState,
    pc: &PageCache,
    file: FileId,
    index: u64,
    req: u64,
    max: u64,
    marker: bool,
) -> RaWindow {
    let req = req.max(1);
    if max == 0 {
        // page_cache_async_ra does nothing without a window; the sync path
        // never gets here (`sync_ra` forces one page instead).
        return RaWindow {
            start: index,
            nr: 0,
            lookahead: 0,
        };
    }
    let initial = |ra: &mut RaState| {
        ra.start = index;
        ra.size = get_init_ra_size(req, max);
        ra.async_size = if ra.size > req {
            ra.size - req
        } else {
            ra.size
        };
        window(ra)
    };
    if index == 0 {
        return initial(ra);
    }
    // The expected callback index: assume sequential access, ramp up and
    // push the window forward.
    let expected = ra.start + ra.size - ra.async_size;
    if ra.size > 0 && (index == expected || index == ra.start + ra.size) {
        ra.start += ra.size;
        ra.size = get_next_ra_size(ra.size, max);
        ra.async_size = ra.size;
        return window(ra);
    }
    if marker {
        // Hit a marked page without valid readahead state: continue after
        // the cached run that follows (page_cache_next_miss).
        let mut start = index + 1;
        while start - index <= max && pc.is_resident(file, start) {
            start += 1;
        }
        if start - index > max {
            return RaWindow {
                start: index,
                nr: 0,
                lookahead: 0,
            };
        }
        ra.start = start;
        ra.size = start - index + req;
        ra.size = get_next_ra_size(ra.size, max);
        ra.async_size = ra.size;
        return window(ra);
    }
    if req > max {
        return initial(ra);
    }
    // Sequential cache miss (the next page, or the same page again).
    if let Some(pp) = ra.prev_pos {
        let prev_index = pp >> PAGE_SHIFT;
        if index >= prev_index && index - prev_index <= 1 {
            return initial(ra);
        }
    }
    // try_context_readahead: cached pages right before `index` are the
    // trace a sequential stream leaves; read as much again.
    let mut history = 0u64;
    while history < max && history < index && pc.is_resident(file, index - 1 - history) {
        history += 1;
    }
    if history > 0 {
        let mut size = history;
        if size >= index {
            size *= 2; // the stream began at the start of the file
        }
        ra.start = index;
        ra.size = (size + req).min(max);
        ra.async_size = 1;
        return window(ra);
    }
    // A standalone small random read: read as is, state untouched.
    RaWindow {
        start: index,
        nr: req,
        lookahead: 0,
    }
}

/// The readahead state of one open file description that `sync_ra` needs
/// besides `file_ra_state`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FdRa {
    /// FMODE_RANDOM (POSIX_FADV_RANDOM).
    pub random: bool,
    /// `f_ra.ra_pages` (POSIX_FADV_SEQUENTIAL doubles the device's).
    pub ra_pages: u64,
    /// `bdi->io_pages`: the device's max_sectors in pages.
    pub io_pages: u64,
}

/// `page_cache_sync_ra` for a miss of `req` pages at `index` in a read
/// through a file descriptor: with readahead off only the missing page is
/// read; FMODE_RANDOM reads the request as is (`force_page_cache_ra`, at
/// most max(io_pages, ra_pages) pages); otherwise the on-demand window.
pub fn sync_ra(
    ra: &mut RaState,
    pc: &PageCache,
    file: FileId,
    index: u64,
    req: u64,
    fd: FdRa,
) -> RaWindow {
    if fd.ra_pages == 0 {
        return force(index, 1, fd);
    }
    if fd.random {
        return force(index, req, fd);
    }
    ondemand(ra, pc, file, index, req, fd.ra_pages, false)
}

/// `force_page_cache_ra`: `req` pages from `index`, capped at the larger of
/// the device's optimal I/O (`io_pages`) and the readahead window; no
/// PG_readahead mark, and `file_ra_state` untouched. (The kernel walks the
/// range in 2 MiB chunks; bios stop at `max_bio_pages` = 1 MiB anyway, so the
/// chunking does not change what reaches the block layer.)
pub fn force(index: u64, req: u64, fd: FdRa) -> RaWindow {
    RaWindow {
        start: index,
        nr: req.max(1).min(fd.io_pages.max(fd.ra_pages).max(1)),
        lookahead: 0,
    }
}

/// `do_sync_mmap_readahead` for a major fault at `index` (no VM_RAND_READ /
/// VM_SEQ_READ advice): count the miss; while misses do not outnumber hits
/// by `MMAP_LOTSAMISS`, read around the fault (`ra_pages` centred on it,
/// a quarter of it as the async tail); else read only the faulting page.
pub fn mmap_fault(ra: &mut RaState, index: u64, max: u64) -> RaWindow {
    let single = RaWindow {
        start: index,
        nr: 1,
        lookahead: 0,
    };
    if max == 0 {
        return single;
    }
    if ra.mmap_miss < MMAP_LOTSAMISS * 10 {
        ra.mmap_miss += 1;
    }
    if ra.mmap_miss > MMAP_LOTSAMISS {
        return single;
    }
    ra.start = index.saturating_sub(max / 2);
    ra.size = max;
    ra.async_size = max / 4;
    window(ra)
}

/// A fault on a page that is cached but not mapped (a minor fault, or the
/// page-cache hit in `filemap_fault`): `do_async_mmap_readahead` counts a hit.
pub fn mmap_hit(ra: &mut RaState) {
    ra.mmap_miss = ra.mmap_miss.saturating_sub(1);
}
