//! The page cache as the machine owns it: the cache itself, each task's
//! open file and what it waits for, the I/Os in flight, the flusher
//! kworkers, and how a batch of pages becomes a bio. The paths that change
//! it are `filemap.rs` (tasks' calls, bio completion) and `flusher.rs`.

use std::collections::BTreeMap;

use super::readahead::{self, RaState};
pub use super::report::{PcJobStats, PcReport};
use super::writeback::Flusher;
use super::{pf, FileId, FileState, PageCache, PageCacheParams, PageId, PAGE_SHIFT};
use crate::block::bio::{Bio, BioFlags, DevId, JobId, Op, Origin};
use crate::block::content_activity::{self, Mode, PageAdd, Submitter};
use crate::block::ioprio::{Ioprio, IOPRIO_DEFAULT};
use crate::block::layer::{BlkHost, BlockLayer};
use crate::sim::rng::Rng;
use crate::sim::slab::Slab;
use crate::sim::time::Ns;

/// CPU time the flusher spends between two bios (building the next one).
pub const FLUSHER_BIO_NS: Ns = 2_000;

#[derive(Clone, Copy, Debug)]
pub(super) enum Wait {
    Read { first: u64, last: u64 },
    Fault { idx: u64, since: Ns },
    Dirty { since: Ns },
}

pub(super) struct PcJob {
    pub(super) file: FileId,
    pub(super) dev: DevId,
    pub(super) cg: crate::block::blk_cgroup::CgId,
    pub(super) mmap: bool,
    pub(super) ra: RaState,
    /// The job's own open file description: FMODE_RANDOM and `f_ra.ra_pages`
    /// as fio's fadvise left them, and the device's `bdi->io_pages`.
    pub(super) fd: readahead::FdRa,
    pub(super) io_u: u32,
    pub(super) ddir: u8,
    /// Memory user: the next page of the io_u's range and its last page.
    pub(super) cursor: (u64, u64),
    pub(super) cpu: Ns,
    /// The task's I/O priority (`ioprio_get`), as its last call gave it.
    pub(super) task_prio: Ioprio,
    pub(super) wait: Option<Wait>,
    pub(super) stats: PcJobStats,
}

#[derive(Clone, Copy, Debug)]
pub(super) struct PcIo {
    pub(super) op: Op,
    pub(super) file: FileId,
    pub(super) first: u64,
    pub(super) n: u32,
    pub(super) dev: DevId,
}

/// The page cache and its users, owned by the simulator.
pub struct PcSys {
    pub cache: PageCache,
    pub(super) jobs: Vec<Option<PcJob>>,
    pub(super) ios: Slab<PcIo>,
    pub(super) flushers: Vec<Flusher>,
    pub(super) read_waiters: Vec<JobId>,
    pub(super) dirty_waiters: Vec<JobId>,
    pub(super) rng: Rng,
    pub(super) mode: Mode,
    /// Scratch space, reused.
    pub(super) adds: Vec<PageAdd>,
    pub(super) batch: Vec<PageId>,
    pub(super) to_submit: Vec<u32>,
    pub(super) ready: Vec<JobId>,
    pub(super) write_bios: u64,
    pub(super) write_bios_rt: u64,
}

/// A task's file in the page cache, as its `open` and `posix_fadvise` left
/// it: the file's extent on the device and the advice on its descriptor.
#[derive(Clone, Debug)]
pub struct PcOpen {
    pub dev: DevId,
    pub cg: crate::block::blk_cgroup::CgId,
    /// The file's name: tasks that name the same file on the same device share it.
    pub name: String,
    /// The file's first byte on the device and its length.
    pub base: u64,
    pub len: u64,
    /// The task maps the file and touches it through page faults.
    pub mmap: bool,
    /// POSIX_FADV_RANDOM (FMODE_RANDOM) on the descriptor.
    pub fadv_random: bool,
    /// POSIX_FADV_SEQUENTIAL: twice the device's readahead window.
    pub fadv_sequential: bool,
}

impl PcSys {
    /// Files: one per distinct (device, name), occupying the first opener's
    /// extent of the device. `users[j]` is task j's file, None for a task
    /// that does direct I/O.
    pub fn new(
        params: PageCacheParams,
        users: &[Option<PcOpen>],
        capacities: &[u64],
        io_pages: &[u64],
        seed: u64,
        mode: Mode,
    ) -> PcSys {
        let mut cache = PageCache::new(params);
        let mut names: BTreeMap<(DevId, String), FileId> = BTreeMap::new();
        let mut pjobs = Vec::with_capacity(users.len());
        for u in users {
            let Some(u) = u else {
                pjobs.push(None);
                continue;
            };
            let file = *names.entry((u.dev, u.name.clone())).or_insert_with(|| {
                cache.add_file(FileState {
                    dev: u.dev,
                    cg: u.cg,
                    base: u.base,
                    pages: u.len.div_ceil(super::PAGE_SIZE),
                    dirtied_when: None,
                    wb_index: 0,
                    nr_dirty: 0,
                })
            });
            let dev_ra = cache.params.ra_pages();
            pjobs.push(Some(PcJob {
                file,
                dev: u.dev,
                cg: u.cg,
                mmap: u.mmap,
                ra: RaState::default(),
                fd: readahead::FdRa {
                    random: u.fadv_random,
                    ra_pages: if u.fadv_sequential {
                        2 * dev_ra
                    } else {
                        dev_ra
                    },
                    io_pages: io_pages[u.dev as usize],
                },
                io_u: 0,
                ddir: 0,
                cursor: (0, 0),
                cpu: 0,
                task_prio: IOPRIO_DEFAULT,
                wait: None,
                stats: PcJobStats::default(),
            }));
        }
        let interval = cache.params.writeback_interval_ns();
        let flushers = (0..capacities.len())
            .map(|d| Flusher {
                dev: d as DevId,
                next_periodic: interval,
                ..Default::default()
            })
            .collect();
        PcSys {
            cache,
            jobs: pjobs,
            ios: Slab::default(),
            flushers,
            read_waiters: Vec::new(),
            dirty_waiters: Vec::new(),
            rng: Rng::stream(seed, "pagecache/bvec-merge"),
            mode,
            adds: Vec::new(),
            batch: Vec::new(),
            to_submit: Vec::new(),
            ready: Vec::new(),
            write_bios: 0,
            write_bios_rt: 0,
        }
    }

    pub fn report(&self) -> PcReport {
        PcReport {
            stats: self.cache.stats.clone(),
            jobs: self
                .jobs
                .iter()
                .map(|j| j.as_ref().map(|j| j.stats.clone()))
                .collect(),
            write_bios: self.write_bios,
            write_bios_rt: self.write_bios_rt,
        }
    }

    /// Build the bio for `self.batch` (contiguous pages of `file`, in index
    /// order) and put it in the slab; the caller submits it. The per-page
    /// flags feed the content-activity rule (both variants see the same
    /// adds, including the bvec merges drawn here).
    #[allow(clippy::too_many_arguments)]
    /// The pages batched so far, if any, become one read bio (its id goes to
    /// `ids`, and `rt` counts it if content activity promoted it to RT).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn flush_read_batch(
        &mut self,
        bios: &mut Slab<Bio>,
        blk_ioprio: &crate::block::blk_ioprio::BlkIoprio,
        file: FileId,
        cg: crate::block::blk_cgroup::CgId,
        task: Submitter,
        readahead: bool,
        ids: &mut Vec<u32>,
        rt: &mut u64,
    ) {
        if self.batch.is_empty() {
            return;
        }
        let (id, r) = self.build_bio(bios, blk_ioprio, Op::Read, file, cg, task, readahead);
        ids.push(id);
        *rt += r as u64;
        self.batch.clear();
    }

    pub(super) fn build_bio(
        &mut self,
        bios: &mut Slab<Bio>,
        blk_ioprio: &crate::block::blk_ioprio::BlkIoprio,
        op: Op,
        file: FileId,
        cg: crate::block::blk_cgroup::CgId,
        task: Submitter,
        readahead: bool,
    ) -> (u32, bool) {
        let first = self.cache.page(self.batch[0]).index;
        let n = self.batch.len() as u32;
        let mut pre = IOPRIO_DEFAULT;
        if self.mode != Mode::Off {
            self.adds.clear();
            let pct = self.cache.params.bvec_merge_pct as u64;
            for (i, &p) in self.batch.iter().enumerate() {
                let pg = self.cache.page(p);
                let merges = i > 0 && pct > 0 && self.rng.below(100) < pct;
                self.adds.push(PageAdd {
                    workingset: pg.has(pf::WORKINGSET),
                    active: pg.lru == super::lru::Lru::Active,
                    merges_into_prev: merges,
                });
            }
            pre = content_activity::apply(self.mode, IOPRIO_DEFAULT, &task, &self.adds);
            if pre != IOPRIO_DEFAULT {
                self.cache.stats.promoted_bios += 1;
            }
        }
        let ioprio = blk_ioprio.bio_set_ioprio(cg, pre, task.task_prio);
        let fs = &self.cache.files[file as usize];
        let dev = fs.dev;
        let tag = self.ios.insert(PcIo {
            op,
            file,
            first,
            n,
            dev,
        });
        let mut bio = Bio::new(
            dev,
            cg,
            op,
            (fs.base + (first << PAGE_SHIFT)) >> 9,
            n << PAGE_SHIFT,
            Origin::Kernel { tag },
        );
        bio.flags = BioFlags {
            sync: op == Op::Read,
            readahead,
            submitter_waits: op == Op::Write,
            // the flusher's writeback is background or periodic (kupdate),
            // WB_SYNC_NONE: `wbc_to_write_flags` marks it REQ_BACKGROUND
            background: op == Op::Write,
            ..Default::default()
        };
        bio.ioprio = ioprio;
        if op == Op::Read {
            self.cache.stats.read_bios += 1;
            self.cache.stats.pgpgin_pages += n as u64;
        } else {
            self.cache.stats.write_bios += 1;
            self.cache.stats.pgpgout_pages += n as u64;
        }
        let rt = ioprio.class() == crate::block::ioprio::IoprioClass::Rt;
        (bios.insert(bio), rt)
    }
}

pub(super) fn submitter(task_prio: Ioprio) -> Submitter {
    Submitter {
        task_prio,
        // fio runs SCHED_NORMAL; an RT *I/O* class does not make it a
        // real-time task.
        realtime: false,
    }
}

/// What the page cache needs from the machine around it: its own state next
/// to the block layer's, and the completion of a task's call that slept.
pub(crate) trait MmHost: BlkHost {
    fn mm(&mut self) -> Option<&mut PcSys>;
    fn mm_parts(&mut self) -> (&mut PcSys, &mut BlockLayer);
    fn pc(&mut self) -> &mut PcSys {
        self.mm().expect("page cache present")
    }
    /// Task `j`'s call for io_u `n` is over after it slept in the kernel
    /// (the pages it waited for are uptodate, or the dirty limit let it go).
    fn task_io_done(&mut self, j: JobId, n: u32);
}
