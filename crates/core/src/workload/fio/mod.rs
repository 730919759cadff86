//! fio's job loop (backend.c `do_io`, io_u.c, ioengines.c, engines/libaio.c),
//! re-expressed as a state machine driven by simulated time.
//!
//! One loop iteration, as fio does it: check the runtime; pick a direction
//! (`get_rw_ddir`: rwmix, then `rate_ddir`, which quiesces and sleeps when the
//! job is ahead of its rate); prepare an io_u (start_time); submit it (for
//! libaio/io_uring the submit call returns after the kernel has taken the bio,
//! possibly after sleeping in rq_qos or tag allocation: issue_time, slat);
//! when the queue is full, reap at least `iodepth_batch_complete_min`
//! completions (clat = reap − issue_time, lat = reap − start_time); then
//! `handle_thinktime`. Sync engines (psync) block in the syscall for the whole
//! I/O and record no slat.
//!
//! `backend.rs` is the loop, `io_u.rs` the choice of offsets and sizes,
//! `axmap.rs` fio's random map.

mod axmap;
mod axmap_table;
mod backend;
mod hint;
mod hot_stats;
mod io_u;
mod iou_lists;
mod knobs;
mod map_ahead;
mod reap;
mod submit;

use blklab_fio::options::ThinkBlocksType;
use blklab_fio::{BsSpec, Ddir, JobStats, RateProcess, RwPattern};

use crate::sim::rng::Rng;
use crate::sim::time::{Ns, NSEC_PER_MSEC};
use crate::syscall::{Ioprio, JobId, SchedPolicy};
use crate::workload::JobConfig;
use axmap::RandomMap;
use hot_stats::HotStats;
use iou_lists::{IoUQueue, IoUStack};
use knobs::Knobs;
use map_ahead::MapAhead;

/// One of a job's io_us: 32 bytes, aligned to 32 so that none straddles
/// two cache lines (each reap and each issue touches one line). The
/// completion instant is the reap's (`job_reap`), so it is not kept.
#[derive(Clone, Copy, Debug, Default)]
#[repr(align(32))]
struct IoU {
    ddir: u8,
    /// The next io_u on the list this one is on (iou_lists.rs).
    link: u16,
    bytes: u32,
    start_time: Ns,
    issue_time: Ns,
    /// Where on the device (fio's `io_u->offset`), for `log_offset`.
    offset: u64,
    /// fio recorded a submission latency for it (async engines).
    has_slat: bool,
}

/// Where the job is in its loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Not started yet (startdelay).
    Waiting,
    /// Top of the loop.
    Top,
    /// Sleeping until the rate allows `ddir`; then issue it.
    RateSleep(u8),
    /// Prepare and submit an io_u in this direction.
    Issue(u8),
    /// The submit call for io_u `n` spends its CPU time before
    /// `submit_bio` (a host with CPUs, `CpuCosts::submit_split`); the bio
    /// is submitted at the wake-up.
    SubmitEntry(u32),
    /// Inside the submit call for io_u `n`.
    InSubmit(u32),
    /// The submit call's CPU time is being spent; it returns at the wake-up.
    SubmitReturn(u32),
    /// Sync engine: blocked in the syscall until io_u `n` completes.
    SyncWait(u32),
    /// Sync engine: io_u `n` completed; the syscall returns at the wake-up.
    SyncReturn(u32),
    /// Blocked in getevents for at least `min` completions.
    Reap {
        min: u32,
        full: bool,
    },
    /// In getevents with `min` completions there: the call's CPU time is
    /// being spent (a burst, reap.rs) or was spent by the wake-up that
    /// ended the wait; it reaps at the next step.
    ReapCall {
        min: u32,
        full: bool,
    },
    /// `io_u_quiesce` before a think-time sleep.
    QuiesceThink,
    /// `io_u_quiesce` before a rate sleep for ddir.
    QuiesceRate(u8),
    /// Sleeping (think time); then back to the top.
    Think,
    /// The loop ended: wait for every in-flight I/O and reap it.
    Drain,
    Done,
}

/// One fio job's state. `repr(C)` so that the fields are where they are
/// declared: first everything the loop reads or writes on every I/O (its
/// own fields, then `knobs`, then the runs of the binned counters, `hot`,
/// then `stats`, whose directions' counters and latency statistics come
/// first), the rest after. With hundreds of jobs a job's state has left
/// the cache by the time it runs again, and each line it touches is a
/// miss: packed, an I/O touches about 15 of the job's lines instead of 21
/// (the scale bench's 1000-cgroup case; bench/README.md, seventh pass),
/// and with the runs about 11 (eighth pass). Moving a field changes no
/// result, only the speed. Aligned to a cache line, so that every job's
/// fields fall on the same lines.
#[repr(C, align(64))]
pub(crate) struct Job {
    pub(crate) phase: Phase,
    /// A wake-up is scheduled for this instant (so completions don't double-schedule).
    wake_at: Option<Ns>,
    pub(crate) end_time: Option<Ns>,
    /// io_us handed to the kernel and not yet reaped (fio's cur_depth).
    cur_depth: u32,
    /// Submitted and not yet completed by the kernel.
    in_flight: u32,
    submit_done: bool,
    in_ramp: bool,
    // rwmix
    rwmix_ddir: u8,
    ioprio: Ioprio,
    seq_left: u32,
    min_bs: [u32; 2],
    bytes_issued: u64,
    total_bytes: u64,
    ios_total: u64,
    io_issues: [u64; 2],
    // rate
    rate_bps: [u64; 2],
    rate_issue_bytes: [u64; 2],
    // thinktime
    io_blocks: [u64; 2],
    /// The addresses of the histogram counters of the last (slat, clat,
    /// lat) samples: where the next samples most likely fall (hint.rs).
    /// Only ever a cache hint's address (a widened histogram leaves it
    /// stale), never read through; no effect on any result.
    hint_buckets: [usize; 3],
    rng: Rng,
    // The job's target region on the device.
    region_start: u64,
    region_len: u64,
    /// fio's `last_block` per direction: the blocks of the direction's
    /// minimum size an I/O can start at (`region_len / min_bs`), fixed
    /// with the region, so that a random I/O does not divide.
    last_block: [u64; 2],
    seq_pos: [u64; 2],
    io_us: Vec<IoU>,
    free: IoUStack,
    /// Completed by the kernel, waiting to be reaped, in completion order.
    completed: IoUQueue,
    /// A recorded stream replacing the fio options' I/O choice (replay.rs).
    /// Boxed: every I/O asks whether there is one, only a replaying job
    /// reads it, and inline it took 40 bytes of the hot prefix.
    pub(crate) replay: Option<Box<crate::workload::replay::Replay>>,
    /// fio's random map of the region (`f->io_axmap`), built at the first
    /// random offset; None with `norandommap` or no random I/O.
    map: Option<RandomMap>,
    /// The options read on every I/O (copies of `cfg.spec`'s).
    knobs: Knobs,
    /// The per-I/O distributions of `stats`, as runs not yet written there
    /// (hot_stats.rs): `fold` them before reading `stats`.
    hot: HotStats,
    pub stats: JobStats,
    // cold from here on
    pub cfg: JobConfig,
    /// The host's wake-up noise for this job (its own stream, so that it
    /// does not move the job's offset draws).
    host_rng: Rng,
    /// The random map's next draws, predicted for cache hints (no effect
    /// on any result).
    map_ahead: MapAhead,
    rwmix_issues: u64,
    rate_next_us: [u64; 2],
    last_usec: [u64; 2],
    last_think_blocks: u64,
    // time
    pub(crate) epoch: Ns,
    stats_start: Ns,
    finished_at: Option<Ns>,
    // interval samples
    next_sample: Ns,
    last_sample_t: Ns,
    last_sample_bytes: [u64; 2],
    last_sample_ios: [u64; 2],
    /// Every (offset, bytes) the job chose, in issue order (tests only).
    #[cfg(test)]
    pub(crate) issued: Vec<(u64, u32)>,
}

impl Job {
    pub fn new(
        id: JobId,
        cfg: JobConfig,
        capacity: u64,
        seed: u64,
    ) -> Result<Job, (String, String)> {
        let s = &cfg.spec;
        let err = |m: String| (s.name.clone(), m);
        if matches!(
            s.rw,
            RwPattern::Trim | RwPattern::RandTrim | RwPattern::TrimWrite
        ) {
            return Err(err(format!(
                "rw={} is not modelled (trim)",
                s.rw.fio_name()
            )));
        }
        if s.offset >= capacity {
            return Err(err(format!(
                "offset {} is beyond the device's {} bytes",
                s.offset, capacity
            )));
        }
        let region_len = s
            .size
            .unwrap_or(capacity - s.offset)
            .min(capacity - s.offset);
        let min_bs = [s.bs[0].min(), s.bs[1].min()];
        for d in 0..2 {
            if s.bs[d].max() as u64 > region_len {
                return Err(err(format!(
                    "block size {} exceeds the I/O region ({} bytes)",
                    s.bs[d].max(),
                    region_len
                )));
            }
            if min_bs[d] == 0 || min_bs[d] % 512 != 0 {
                return Err(err(format!(
                    "block size {} is not a multiple of 512 (direct I/O)",
                    min_bs[d]
                )));
            }
        }
        let iodepth = if s.ioengine.is_async() {
            s.iodepth.max(1)
        } else {
            1
        };
        if iodepth > blklab_fio::parse::MAX_IODEPTH {
            return Err(err(format!(
                "iodepth {iodepth} is above fio's maximum ({})",
                blklab_fio::parse::MAX_IODEPTH
            )));
        }
        // every io_u free, the first one taken being io_u 0
        let mut io_us = vec![IoU::default(); iodepth as usize];
        let mut free = IoUStack::default();
        for n in (0..iodepth).rev() {
            free.push(&mut io_us, n);
        }
        let mut rate_bps = [0u64; 2];
        for d in 0..2 {
            rate_bps[d] = if s.rate_bps[d] > 0 {
                s.rate_bps[d]
            } else {
                s.rate_iops[d] * min_bs[d] as u64
            };
        }
        // the task's I/O priority: fio's ioprio_set from prio/prioclass, or
        // the one derived from nice 0 (fio runs as a normal task)
        let ioprio = Ioprio::task_ioprio(
            Ioprio::from_fio(s.prioclass, s.prio),
            0,
            SchedPolicy::Normal,
        );
        let label = format!("job/{}/{}/{}", id, s.name, cfg.clone);
        let mut rng = Rng::stream(seed, &label);
        let (lo, hi) = s.startdelay_ns;
        let delay = if hi > lo {
            lo + rng.below(hi - lo + 1)
        } else {
            lo
        };
        let total_bytes = if s.time_based {
            u64::MAX
        } else {
            s.size.unwrap_or(region_len)
        };
        let mut stats = JobStats {
            name: s.name.clone(),
            groupid: cfg.groupid,
            nr_jobs: 1,
            ..Default::default()
        };
        stats.name = s.name.clone();
        Ok(Job {
            host_rng: Rng::stream(seed, &format!("host/{label}")),
            rng,
            ioprio,
            io_us,
            free,
            cur_depth: 0,
            in_flight: 0,
            completed: IoUQueue::default(),
            phase: Phase::Waiting,
            wake_at: None,
            submit_done: false,
            region_start: s.offset,
            region_len,
            last_block: [region_len / min_bs[0] as u64, region_len / min_bs[1] as u64],
            seq_pos: [s.offset; 2],
            seq_left: 0,
            min_bs,
            map: None,
            map_ahead: MapAhead::new(),
            rwmix_ddir: 0,
            rwmix_issues: 0,
            io_issues: [0; 2],
            rate_bps,
            rate_issue_bytes: [0; 2],
            rate_next_us: [0; 2],
            last_usec: [0; 2],
            io_blocks: [0; 2],
            last_think_blocks: 0,
            epoch: delay,
            stats_start: delay + s.ramp_time_ns,
            in_ramp: s.ramp_time_ns > 0,
            end_time: s.runtime_ns.map(|r| delay + s.ramp_time_ns + r),
            bytes_issued: 0,
            total_bytes,
            ios_total: 0,
            finished_at: None,
            hint_buckets: [0; 3],
            next_sample: 0,
            last_sample_t: 0,
            last_sample_bytes: [0; 2],
            last_sample_ios: [0; 2],
            stats,
            knobs: Knobs::of(&cfg),
            hot: HotStats::default(),
            cfg,
            replay: None,
            #[cfg(test)]
            issued: Vec::new(),
        })
    }

    /// The task's I/O priority (`get_current_ioprio()` of the job's process).
    /// Whether the job goes through the page cache: buffered I/O
    /// (`direct=0`) or a mapped file (`ioengine=mmap`).
    pub(crate) fn uses_pagecache(&self) -> bool {
        self.knobs.uses_pagecache()
    }

    fn iodepth(&self) -> u32 {
        self.io_us.len() as u32
    }

    fn is_rw_mix(&self) -> bool {
        matches!(self.knobs.rw, RwPattern::ReadWrite | RwPattern::RandRw)
    }

    /// `get_rw_ddir` without the rate part: rwmix with fio's issue-count re-draw.
    fn pick_ddir(&mut self) -> u8 {
        let s = &self.knobs;
        if self.is_rw_mix() {
            if self.io_issues[self.rwmix_ddir as usize] >= self.rwmix_issues {
                let v = 1 + self.rng.below(100) as u32;
                let ddir = if v <= s.rwmixread { 0 } else { 1 };
                if ddir != self.rwmix_ddir {
                    // set_rwmix_bytes, evaluated with the direction being left
                    let diff = if self.rwmix_ddir == 0 {
                        100 - s.rwmixread
                    } else {
                        s.rwmixread
                    } as u64;
                    self.rwmix_issues = self.io_issues[self.rwmix_ddir as usize] * diff / 100;
                }
                self.rwmix_ddir = ddir;
            }
            self.rwmix_ddir
        } else if s.rw.has(Ddir::Read) {
            0
        } else {
            1
        }
    }

    /// `thinktime_blocks_counter`: completed or issued blocks, per thinktime_blocks_type.
    fn think_blocks(&self) -> u64 {
        match self.cfg.spec.thinktime_blocks_type {
            ThinkBlocksType::Complete => self.io_blocks[0] + self.io_blocks[1],
            ThinkBlocksType::Issue => self.io_issues[0] + self.io_issues[1],
        }
    }

    /// The bw/iops sampling period.
    fn sample_interval(&self) -> Ns {
        self.cfg
            .spec
            .bwavgtime_ms
            .min(self.cfg.spec.iopsavgtime_ms)
            .max(1)
            * NSEC_PER_MSEC
    }

    fn should_check_rate(&self) -> bool {
        self.rate_bps[0] > 0 || self.rate_bps[1] > 0
    }

    /// fio's `usec_for_io`: when (µs since the epoch) the next I/O of `d` is due.
    fn usec_for_io(&mut self, d: usize) -> u64 {
        let bps = self.rate_bps[d];
        let s = &self.cfg.spec;
        if s.rate_process == RateProcess::Poisson && bps > 0 {
            let iops = (bps / self.min_bs[d] as u64).max(1);
            let val = ((1_000_000 / iops) as f64 * self.rng.exp(1.0)) as u64;
            self.last_usec[d] += val;
            return self.last_usec[d];
        }
        if bps == 0 {
            return 0;
        }
        if s.rate_bps[d] == 0 && matches!(s.bs[d], BsSpec::Split(_)) {
            let iops = bps / self.min_bs[d] as u64;
            if iops == 0 {
                return 0;
            }
            self.last_usec[d] += 1_000_000 / iops;
            return self.last_usec[d];
        }
        let bytes = self.rate_issue_bytes[d];
        let secs = bytes / bps;
        let rem = bytes % bps;
        rem * 1_000_000 / bps + secs * 1_000_000
    }
}
