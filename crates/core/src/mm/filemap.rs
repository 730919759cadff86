//! The page cache in the simulated machine: buffered reads and writes of fio
//! jobs with `direct=0`, page faults of `ioengine=mmap` jobs (memory users),
//! the bios the page cache builds (reads with readahead, flusher writeback as
//! kernel bios) and the content-activity priority rule applied to them.
//!
//! Semantics (psync): a buffered read that misses blocks until the pages it
//! needs are uptodate (`filemap_read` → `filemap_get_pages` → wait on the
//! locked folio); a hit costs `page_copy_ns` per page. A buffered write
//! copies into page-cache pages and dirties them (`generic_perform_write`);
//! `balance_dirty_pages` blocks the writer while dirty + writeback pages
//! exceed the dirty threshold (the model waits for writeback completions
//! instead of the kernel's proportional pauses). Asynchronous engines are
//! treated like psync for buffered I/O: Linux's libaio also blocks in
//! io_submit for buffered files.
//!
//! A memory user's io_u touches the pages of its range in order through its
//! mapping: a mapped page costs `page_copy_ns`; a cached but unmapped page is
//! a minor fault; a missing page is a major fault (`filemap_fault` with
//! `do_sync_mmap_readahead`) and the job waits for the page — the wait is the
//! "fault I/O wait" the seed's eBPF tool measured.

use super::pcsys::{submitter, MmHost, PcSys, Wait};
use super::readahead::{self, RaWindow};
use super::{pf, PageCache, PAGE_SHIFT};
use crate::block::bio::{DevId, JobId, Op};
use crate::block::blk_mq::BlkMq;
use crate::block::ioprio::Ioprio;
use crate::sim::time::Ns;

/// The page cache's paths: the read/write/fault calls of tasks and bio
/// completion, written once for any [`MmHost`] (the flusher is `flusher.rs`).
pub(crate) trait Filemap: MmHost + BlkMq + super::flusher::Flusher {
    /// A buffered (or mmap) io_u of task `j` (`read`/`write` on its file, or
    /// the page faults of touching its mapping): slot `n`, direction `dd`,
    /// byte range on the device, the task's I/O priority. Returns the CPU
    /// time after which the call returns when it completed from the cache,
    /// None when the task sleeps (then `task_io_done` ends the call).
    fn pc_issue(
        &mut self,
        j: JobId,
        n: u32,
        dd: u8,
        offset: u64,
        bytes: u32,
        task_prio: Ioprio,
    ) -> Option<Ns> {
        let pc = self.pc();
        let pj = pc.jobs[j as usize].as_mut().expect("page-cache job");
        pj.task_prio = task_prio;
        let fs = &pc.cache.files[pj.file as usize];
        let rel = offset.saturating_sub(fs.base);
        let first = rel >> PAGE_SHIFT;
        let last = ((rel + bytes.max(1) as u64 - 1) >> PAGE_SHIFT).min(fs.pages.saturating_sub(1));
        let first = first.min(last);
        pj.io_u = n;
        pj.ddir = dd;
        pj.cpu = 0;
        if pj.mmap {
            pj.cursor = (first, last);
            return self.pc_mmap_step(j, true);
        }
        if dd == 0 {
            self.pc_read(j, first, last, offset, bytes)
        } else {
            self.pc_write(j, first, last)
        }
    }

    /// Read the pages of window `w` that are not cached, as bios of
    /// contiguous new pages (`page_cache_ra_unbounded`), submitted by job `j`.
    fn pc_read_window(&mut self, j: JobId, w: RaWindow, readahead: bool) {
        let in_fault = self.pc().jobs[j as usize].as_ref().is_some_and(|p| p.mmap);
        let (pc, b) = self.mm_parts();
        let pj = pc.jobs[j as usize].as_ref().expect("page-cache job");
        let (file, cg, task_prio) = (pj.file, pj.cg, pj.task_prio);
        let end = (w.start + w.nr).min(pc.cache.files[file as usize].pages);
        let mark = if w.lookahead > 0 && w.lookahead <= w.nr {
            w.start + w.nr - w.lookahead
        } else {
            u64::MAX
        };
        let maxb = pc.cache.params.max_bio_pages as usize;
        pc.batch.clear();
        let mut ids = std::mem::take(&mut pc.to_submit);
        ids.clear();
        let mut rt = 0u64;
        let task = submitter(task_prio);
        // the pages batched so far become one read bio
        let mut flush = |pc: &mut PcSys, ids: &mut Vec<u32>, rt: &mut u64| {
            pc.flush_read_batch(
                &mut b.bios,
                &b.blk_ioprio,
                file,
                cg,
                task,
                readahead,
                ids,
                rt,
            )
        };
        for idx in w.start..end {
            if pc.cache.is_resident(file, idx) {
                flush(pc, &mut ids, &mut rt);
                continue;
            }
            let p = pc.cache.add_page(file, idx, false, in_fault);
            if idx == mark {
                pc.cache.page_mut(p).flags |= pf::READAHEAD;
            }
            pc.batch.push(p);
            if pc.batch.len() >= maxb {
                flush(pc, &mut ids, &mut rt);
            }
        }
        flush(pc, &mut ids, &mut rt);
        let st = &mut pc.jobs[j as usize].as_mut().expect("job").stats;
        st.read_bios += ids.len() as u64;
        st.read_bios_rt += rt;
        for &id in &ids {
            self.submit_bio(id);
        }
        ids.clear();
        self.pc().to_submit = ids;
    }

    /// A missing page at `idx`: the readahead window, then the page itself
    /// if the window did not cover it (`filemap_create_folio`).
    fn pc_read_missing(&mut self, j: JobId, idx: u64, w: RaWindow) {
        self.pc_read_window(j, w, false);
        let pc = self.pc();
        let file = pc.jobs[j as usize].as_ref().expect("job").file;
        if !pc.cache.is_resident(file, idx) {
            self.pc_read_window(
                j,
                RaWindow {
                    start: idx,
                    nr: 1,
                    lookahead: 0,
                },
                false,
            );
        }
    }

    /// `filemap_read` for pages `first..=last`.
    fn pc_read(&mut self, j: JobId, first: u64, last: u64, offset: u64, bytes: u32) -> Option<Ns> {
        let mut wait = false;
        let mut cpu = 0;
        let pc = self.pc();
        let copy = pc.cache.params.page_copy_ns;
        let pj = pc.jobs[j as usize].as_ref().expect("job");
        let file = pj.file;
        // The page the previous read ended in is not marked accessed again
        // (filemap_read's "same folio as last time" test).
        let prev_page = pj.ra.prev_pos.map(|p| p.saturating_sub(1) >> PAGE_SHIFT);
        let base = pc.cache.files[file as usize].base;
        for idx in first..=last {
            let pc = self.pc();
            match pc.cache.lookup(file, idx) {
                super::Lookup::Hit(p) => {
                    if pc.cache.page(p).has(pf::READAHEAD) {
                        pc.cache.page_mut(p).flags &= !pf::READAHEAD;
                        let pj = pc.jobs[j as usize].as_mut().expect("job");
                        // page_cache_async_ra: the fd's window, FMODE_RANDOM
                        // or not (another reader may have set the mark).
                        let w = readahead::ondemand(
                            &mut pj.ra,
                            &pc.cache,
                            file,
                            idx,
                            last - idx + 1,
                            pj.fd.ra_pages,
                            true,
                        );
                        if w.nr > 0 {
                            self.pc_read_window(j, w, true);
                        }
                    }
                    let pc = self.pc();
                    if prev_page != Some(idx) {
                        if let Some(p) = pc.cache.page_at(file, idx) {
                            pc.cache.mark_accessed(p);
                        }
                    }
                    pc.jobs[j as usize]
                        .as_mut()
                        .expect("job")
                        .stats
                        .read_hit_pages += 1;
                    cpu += copy;
                }
                super::Lookup::Locked(p) => {
                    if prev_page != Some(idx) {
                        pc.cache.mark_accessed(p);
                    }
                    pc.jobs[j as usize]
                        .as_mut()
                        .expect("job")
                        .stats
                        .read_miss_pages += 1;
                    wait = true;
                }
                super::Lookup::Miss => {
                    let pj = pc.jobs[j as usize].as_mut().expect("job");
                    let w =
                        readahead::sync_ra(&mut pj.ra, &pc.cache, file, idx, last - idx + 1, pj.fd);
                    pj.stats.read_miss_pages += 1;
                    self.pc_read_missing(j, idx, w);
                    let pc = self.pc();
                    if let Some(p) = pc.cache.page_at(file, idx) {
                        pc.cache.mark_accessed(p);
                    }
                    wait = true;
                }
            }
        }
        let pc = self.pc();
        let pj = pc.jobs[j as usize].as_mut().expect("job");
        pj.ra.prev_pos = Some(offset - base + bytes as u64);
        if wait {
            pj.wait = Some(Wait::Read { first, last });
            pc.read_waiters.push(j);
            return None;
        }
        Some(cpu)
    }

    /// `generic_perform_write` + `balance_dirty_pages_ratelimited`. Pages not
    /// cached are created uptodate without a read (whole-page overwrite or
    /// append; read-modify-write of partial pages is not modelled).
    fn pc_write(&mut self, j: JobId, first: u64, last: u64) -> Option<Ns> {
        let now = self.now();
        let pc = self.pc();
        let copy = pc.cache.params.page_copy_ns;
        let pj = pc.jobs[j as usize].as_ref().expect("job");
        let (file, cg, dev) = (pj.file, pj.cg, pj.dev);
        pc.cache.files[file as usize].cg = cg;
        let mut cpu = 0;
        for idx in first..=last {
            let p = match pc.cache.page_at(file, idx) {
                Some(p) => p,
                None => pc.cache.add_page(file, idx, true, false),
            };
            pc.cache.mark_accessed(p);
            pc.cache.set_dirty(p, now);
            cpu += copy;
        }
        self.pc_after_dirty(j, dev, cpu, true)
    }

    /// After dirtying: wake the flusher past the background threshold; block
    /// past the dirty threshold; else the call returns after `cpu`.
    fn pc_after_dirty(&mut self, j: JobId, dev: DevId, cpu: Ns, inline: bool) -> Option<Ns> {
        let now = self.now();
        let pc = self.pc();
        let over_bg = pc.cache.over_bg_thresh();
        let over = pc.cache.over_dirty_thresh();
        self.flusher_arm(dev, if over_bg { now } else { Ns::MAX });
        let pc = self.pc();
        let pj = pc.jobs[j as usize].as_mut().expect("job");
        let n = pj.io_u;
        if over {
            pj.wait = Some(Wait::Dirty { since: now });
            pj.stats.dirty_waits += 1;
            pc.dirty_waiters.push(j);
            // `wb->dirty_sleep`: blk-wbt gives writeback more depth for a second
            self.blk().note_dirty_sleep(now, dev);
            return None;
        }
        if inline {
            Some(cpu)
        } else {
            self.task_io_done(j, n);
            None
        }
    }

    /// A memory user walks its io_u's pages through the mapping; returns the
    /// call's CPU time if the io_u completed inline (`inline` = called from
    /// the task's own call).
    fn pc_mmap_step(&mut self, j: JobId, inline: bool) -> Option<Ns> {
        let now = self.now();
        loop {
            let pc = self.pc();
            let max = pc.cache.params.ra_pages();
            let copy = pc.cache.params.page_copy_ns;
            let pj = pc.jobs[j as usize].as_mut().expect("job");
            let (idx, last) = pj.cursor;
            let file = pj.file;
            if idx > last {
                break;
            }
            match pc.cache.lookup(file, idx) {
                super::Lookup::Hit(p) => {
                    if !pc.cache.page(p).has(pf::MAPPED) {
                        // minor fault: map the cached page
                        readahead::mmap_hit(&mut pj.ra);
                        pj.stats.minor_faults += 1;
                        if pc.cache.page(p).has(pf::READAHEAD) {
                            pc.cache.page_mut(p).flags &= !pf::READAHEAD;
                            let w =
                                readahead::ondemand(&mut pj.ra, &pc.cache, file, idx, 1, max, true);
                            if w.nr > 0 {
                                self.pc_read_window(j, w, true);
                            }
                        }
                    }
                    let pc = self.pc();
                    let pj = pc.jobs[j as usize].as_mut().expect("job");
                    let write = pj.ddir == 1;
                    pj.cursor.0 += 1;
                    pj.cpu += copy;
                    if let Some(p) = pc.cache.page_at(file, idx) {
                        pc.cache.touch_mapped(p);
                        if write {
                            pc.cache.set_dirty(p, now);
                        }
                    }
                }
                super::Lookup::Locked(_) => {
                    pj.wait = Some(Wait::Fault { idx, since: now });
                    pc.read_waiters.push(j);
                    return None;
                }
                super::Lookup::Miss => {
                    let w = readahead::mmap_fault(&mut pj.ra, idx, max);
                    self.pc_read_missing(j, idx, w);
                    let pc = self.pc();
                    let pj = pc.jobs[j as usize].as_mut().expect("job");
                    pj.wait = Some(Wait::Fault { idx, since: now });
                    pc.read_waiters.push(j);
                    return None;
                }
            }
        }
        let pc = self.pc();
        let pj = pc.jobs[j as usize].as_mut().expect("job");
        let (cpu, n, write, dev) = (pj.cpu, pj.io_u, pj.ddir == 1, pj.dev);
        if write {
            return self.pc_after_dirty(j, dev, cpu, inline);
        }
        if inline {
            Some(cpu)
        } else {
            self.task_io_done(j, n);
            None
        }
    }

    /// A page-cache bio completed (`end_bio_bh_io_sync` / `mpage_end_io`):
    /// read pages become uptodate and their waiters go on; written pages
    /// end writeback and throttled writers may continue.
    fn pc_bio_done(&mut self, tag: u32) {
        let now = self.now();
        let Some(pc) = self.mm() else {
            return;
        };
        let io = pc.ios.remove(tag);
        for idx in io.first..io.first + io.n as u64 {
            let Some(p) = pc.cache.page_at(io.file, idx) else {
                debug_assert!(false, "page under I/O was evicted");
                continue;
            };
            if io.op == Op::Read {
                let pg = pc.cache.page_mut(p);
                pg.flags |= pf::UPTODATE;
            } else {
                pc.cache.end_writeback(p);
            }
        }
        if io.op == Op::Read {
            // Which waiters can go on now (in the order they began waiting).
            let mut ready = std::mem::take(&mut pc.ready);
            ready.clear();
            let mut i = 0;
            while i < pc.read_waiters.len() {
                let j = pc.read_waiters[i];
                let pj = pc.jobs[j as usize].as_ref().expect("job");
                let ok = |c: &PageCache, a: u64, b: u64| {
                    (a..=b).all(|x| match c.page_at(pj.file, x) {
                        Some(p) => c.page(p).has(pf::UPTODATE),
                        None => true,
                    })
                };
                let done = match pj.wait {
                    Some(Wait::Read { first, last }) => ok(&pc.cache, first, last),
                    Some(Wait::Fault { idx, .. }) => ok(&pc.cache, idx, idx),
                    _ => false,
                };
                if done {
                    pc.read_waiters.remove(i);
                    ready.push(j);
                } else {
                    i += 1;
                }
            }
            for &j in &ready {
                let pc = self.pc();
                let pj = pc.jobs[j as usize].as_mut().expect("job");
                match pj.wait.take() {
                    Some(Wait::Read { .. }) => {
                        let n = pj.io_u;
                        self.task_io_done(j, n);
                    }
                    Some(Wait::Fault { since, .. }) => {
                        let w = now - since;
                        pj.stats.major_faults += 1;
                        pj.stats.fault_wait_ns += w;
                        pj.stats.fault_wait_max_ns = pj.stats.fault_wait_max_ns.max(w);
                        self.pc_mmap_step(j, false);
                    }
                    _ => {}
                }
            }
            ready.clear();
            self.pc().ready = ready;
        } else {
            if pc.cache.over_bg_thresh() && !pc.flushers[io.dev as usize].in_submit {
                self.flusher_arm(io.dev, now);
            }
            let pc = self.pc();
            if !pc.cache.over_dirty_thresh() && !pc.dirty_waiters.is_empty() {
                let waiters = std::mem::take(&mut pc.dirty_waiters);
                for &j in &waiters {
                    let pc = self.pc();
                    let pj = pc.jobs[j as usize].as_mut().expect("job");
                    if let Some(Wait::Dirty { since }) = pj.wait.take() {
                        pj.stats.dirty_wait_ns += now - since;
                    }
                    let n = pj.io_u;
                    self.task_io_done(j, n);
                }
                let pc = self.pc();
                if pc.dirty_waiters.is_empty() {
                    let mut w = waiters;
                    w.clear();
                    pc.dirty_waiters = w;
                }
            }
        }
    }
}

impl<T: MmHost> Filemap for T {}
