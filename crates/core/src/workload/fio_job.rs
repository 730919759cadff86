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

use std::collections::VecDeque;

use blklab_fio::options::ThinkBlocksType;
use blklab_fio::stats::{iodepth_batch_bin, iodepth_level_bin};
use blklab_fio::{BsSpec, Ddir, JobStats, RateProcess, RwPattern};

use crate::sim::engine::Ev;
use crate::sim::rng::Rng;
use crate::sim::time::{Ns, NSEC_PER_MSEC, NSEC_PER_USEC};
use crate::syscall::{BufferedIo, DirectIo, Ioprio, JobId, SchedPolicy, Syscalls, Tasks};
use crate::workload::{JobConfig, Workload};

#[derive(Clone, Copy, Debug, Default)]
struct IoU {
    ddir: u8,
    bytes: u32,
    start_time: Ns,
    issue_time: Ns,
    done_time: Ns,
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

pub(crate) struct Job {
    pub cfg: JobConfig,
    rng: Rng,
    /// The host's wake-up noise for this job (its own stream, so that it
    /// does not move the job's offset draws).
    host_rng: Rng,
    ioprio: Ioprio,
    io_us: Vec<IoU>,
    free: Vec<u32>,
    /// io_us handed to the kernel and not yet reaped (fio's cur_depth).
    cur_depth: u32,
    /// Submitted and not yet completed by the kernel.
    in_flight: u32,
    /// Completed by the kernel, waiting to be reaped, in completion order.
    completed: VecDeque<u32>,
    pub(crate) phase: Phase,
    /// A wake-up is scheduled for this instant (so completions don't double-schedule).
    wake_at: Option<Ns>,
    submit_done: bool,
    // The job's target region on the device.
    region_start: u64,
    region_len: u64,
    seq_pos: [u64; 2],
    seq_left: u32,
    min_bs: [u32; 2],
    /// fio's random map of the region (`f->io_axmap`), built at the first
    /// random offset; None with `norandommap` or no random I/O.
    map: Option<RandomMap>,
    // rwmix
    rwmix_ddir: u8,
    rwmix_issues: u64,
    io_issues: [u64; 2],
    // rate
    rate_bps: [u64; 2],
    rate_issue_bytes: [u64; 2],
    rate_next_us: [u64; 2],
    last_usec: [u64; 2],
    // thinktime
    io_blocks: [u64; 2],
    last_think_blocks: u64,
    // time
    pub(crate) epoch: Ns,
    stats_start: Ns,
    in_ramp: bool,
    pub(crate) end_time: Option<Ns>,
    bytes_issued: u64,
    total_bytes: u64,
    ios_total: u64,
    finished_at: Option<Ns>,
    // interval samples
    next_sample: Ns,
    last_sample_t: Ns,
    last_sample_bytes: [u64; 2],
    last_sample_ios: [u64; 2],
    pub stats: JobStats,
    /// A recorded stream replacing the fio options' I/O choice (replay.rs).
    pub(crate) replay: Option<crate::workload::replay::Replay>,
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
            io_us: vec![IoU::default(); iodepth as usize],
            free: (0..iodepth).rev().collect(),
            cur_depth: 0,
            in_flight: 0,
            completed: VecDeque::with_capacity(iodepth as usize),
            phase: Phase::Waiting,
            wake_at: None,
            submit_done: false,
            region_start: s.offset,
            region_len,
            seq_pos: [s.offset; 2],
            seq_left: 0,
            min_bs,
            map: None,
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
            next_sample: 0,
            last_sample_t: 0,
            last_sample_bytes: [0; 2],
            last_sample_ios: [0; 2],
            stats,
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
        self.cfg.uses_pagecache()
    }

    fn iodepth(&self) -> u32 {
        self.io_us.len() as u32
    }

    fn is_rw_mix(&self) -> bool {
        matches!(self.cfg.spec.rw, RwPattern::ReadWrite | RwPattern::RandRw)
    }

    /// `get_rw_ddir` without the rate part: rwmix with fio's issue-count re-draw.
    fn pick_ddir(&mut self) -> u8 {
        let s = &self.cfg.spec;
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

    /// fio's block size choice for a direction (`get_next_buflen`).
    fn next_buflen(&mut self, d: usize) -> u32 {
        match &self.cfg.spec.bs[d] {
            BsSpec::Fixed(b) => *b,
            BsSpec::Range { lo, hi } => {
                let steps = (hi - lo) / lo;
                lo + lo * self.rng.below(steps as u64 + 1) as u32
            }
            BsSpec::Split(v) => {
                let r = self.rng.below(100) as u32;
                let mut acc = 0;
                for &(bs, pct) in v {
                    acc += pct;
                    if r < acc {
                        return bs;
                    }
                }
                v.last().map(|x| x.0).unwrap_or(4096)
            }
        }
    }

    /// The next I/O's length and offset (fio's `get_next_offset`, then
    /// `get_next_buflen`). Random offsets go through fio's random map unless
    /// `norandommap` is set; then they are uniform over the region with
    /// replacement, aligned to the minimum block size. None when the random
    /// map has no block left for a job that is not time based: fio's
    /// `get_io_u` fails and the job's loop ends.
    fn next_io(&mut self, d: usize) -> Option<(u32, u64)> {
        let s = &self.cfg.spec;
        let random = s.rw.is_random() && {
            if s.rw_seq_nr > 1 {
                if self.seq_left == 0 {
                    self.seq_left = s.rw_seq_nr - 1;
                    true
                } else {
                    self.seq_left -= 1;
                    false
                }
            } else {
                true
            }
        };
        if random && !s.norandommap {
            return self.next_mapped_io(d);
        }
        let bytes = self.next_buflen(d);
        let align = self.min_bs[d] as u64;
        let end = self.region_start + self.region_len;
        let off = if random {
            let blocks = (self.region_len - bytes as u64) / align + 1;
            self.region_start + self.rng.below(blocks) * align
        } else {
            let mut p = self.seq_pos[d];
            if p + bytes as u64 > end {
                p = self.region_start;
            }
            p
        };
        self.seq_pos[d] = off + bytes as u64;
        Some((bytes, off))
    }

    /// fio's `rw_min_bs`: the map's block is the smallest minimum block size
    /// of any direction, whatever directions the job uses.
    fn rw_min_bs(&self) -> u64 {
        self.cfg
            .spec
            .bs
            .iter()
            .map(|b| b.min())
            .min()
            .unwrap_or(512) as u64
    }

    /// A random I/O under fio's random map. The block comes from
    /// `get_next_rand_block` / `__get_next_rand_offset` (a uniform draw over
    /// `last_block`, moved to `axmap_next_free` when already done this pass),
    /// the length from `get_next_buflen` (which must fit before the region's
    /// end), and `mark_random_map` marks the blocks and may shorten the I/O to
    /// what it could mark. Block numbers count this direction's minimum block
    /// size, as fio's do, while the map is sized in `rw_min_bs` blocks: when
    /// the two differ (per-direction `bs`), a direction can be handed a block
    /// whose I/O would start past the region's end. fio then fails the io_u
    /// and ends the job's loop (a time-based job starts a new loop with a
    /// fresh map); this model treats it as the end of the pass without that
    /// loop's drain.
    fn next_mapped_io(&mut self, d: usize) -> Option<(u32, u64)> {
        let align = self.min_bs[d] as u64;
        // last_block(): the blocks a minimum-size I/O can start at
        let lastb = self.region_len / align;
        if self.map.is_none() {
            self.map = Some(RandomMap::new(self.region_len / self.rw_min_bs()));
        }
        let mut was_reset = false;
        let b = loop {
            let drawn = self.rng.below(lastb);
            let map = self.map.as_mut().expect("built above");
            let b = if map.is_used(drawn) {
                map.next_free(drawn)
            } else {
                Some(drawn)
            };
            match b {
                Some(b) if b < lastb => break b,
                // get_next_rand_block: a time-based job starts a new pass
                // (fio_file_reset clears the map and rewinds the sequential
                // position) and draws once more
                _ if self.cfg.spec.time_based && !was_reset => {
                    map.reset();
                    self.seq_pos = [self.region_start; 2];
                    was_reset = true;
                }
                _ => return None,
            }
        };
        let want = self.buflen_within(d, self.region_len - b * align);
        let blocks = (want as u64).div_ceil(align);
        let marked = self.map.as_mut().expect("built above").mark(b, blocks);
        let bytes = (want as u64).min(marked * align) as u32;
        let off = self.region_start + b * align;
        self.seq_pos[d] = off + bytes as u64;
        Some((bytes, off))
    }

    /// `get_next_buflen` at a random block: fio draws again until the length
    /// fits in the `room` left before the region's end (`io_u_fits`), and a
    /// bssplit draw whose size does not fit moves on to the next listed size
    /// that does.
    fn buflen_within(&mut self, d: usize, room: u64) -> u32 {
        if matches!(self.cfg.spec.bs[d], BsSpec::Range { .. }) {
            // the minimum always fits (the block starts before last_block)
            loop {
                let b = self.next_buflen(d);
                if b as u64 <= room {
                    return b;
                }
            }
        }
        let BsSpec::Split(v) = &self.cfg.spec.bs[d] else {
            return self.min_bs[d]; // fixed: fio does not check the fit
        };
        if !v.iter().any(|&(bs, pct)| pct > 0 && bs as u64 <= room) {
            // no size with a share fits (the smallest has 0 %): fio would
            // draw again and again; take the minimum
            return self.min_bs[d];
        }
        loop {
            let r = self.rng.below(100) as u32;
            let mut acc = 0;
            let mut last = None;
            for &(bs, pct) in v {
                if pct == 0 {
                    continue;
                }
                acc += pct;
                last = Some(bs);
                if r < acc && bs as u64 <= room {
                    return bs;
                }
            }
            if let Some(bs) = last.filter(|&bs| bs as u64 <= room) {
                return bs;
            }
        }
    }
}

/// One level of the random map, 64 bits per word. A level larger than
/// `FLAT_MAX` words is cut into chunks of `CHUNK_WORDS` words, each kept as the
/// sorted list of its set bits (2 bytes a bit) until the list would outgrow
/// half the chunk's bitmap: a job that touched few blocks of a large
/// device pays for what it touched, one that covered its region pays fio's
/// one bit per block. The representation never changes an answer.
enum Words {
    Flat(Vec<u64>),
    Chunked(Vec<Chunk>, usize),
}

enum Chunk {
    List(Vec<u16>),
    Bits(Box<[u64]>),
}

/// Levels up to this many words (64 KiB) are plain vectors.
const FLAT_MAX: usize = 1 << 13;
/// 64 Ki bits per chunk, so that a bit's place in its chunk fits a u16.
const CHUNK_WORDS: usize = 1 << 10;
/// A chunk's list turns into a bitmap past this many bits (4 KiB of list).
const CHUNK_LIST_MAX: usize = 2048;

/// Where `v` goes in a chunk's sorted list. Random blocks spread evenly over
/// a chunk, so the list's rank of `v` is close to its proportional place: a
/// guess there and a short walk touch a cache line or two where a binary
/// search would miss the cache at every step.
fn lower_bound(l: &[u16], v: u32) -> usize {
    let n = l.len();
    let mut i = (v as usize * n) >> 16;
    if i < n && (l[i] as u32) < v {
        while i < n && (l[i] as u32) < v {
            i += 1;
        }
    } else {
        while i > 0 && (l[i - 1] as u32) >= v {
            i -= 1;
        }
    }
    i
}

impl Words {
    fn new(len: usize, flat: bool) -> Words {
        if flat || len <= FLAT_MAX {
            Words::Flat(vec![0; len])
        } else {
            let chunks = len.div_ceil(CHUNK_WORDS);
            Words::Chunked((0..chunks).map(|_| Chunk::List(Vec::new())).collect(), len)
        }
    }

    fn len(&self) -> usize {
        match self {
            Words::Flat(v) => v.len(),
            Words::Chunked(_, len) => *len,
        }
    }

    fn get(&self, w: usize) -> u64 {
        match self {
            Words::Flat(v) => v[w],
            Words::Chunked(chunks, _) => match &chunks[w / CHUNK_WORDS] {
                Chunk::Bits(b) => b[w % CHUNK_WORDS],
                Chunk::List(l) => {
                    let lo = (w % CHUNK_WORDS) as u32 * 64;
                    let i = lower_bound(l, lo);
                    l[i..]
                        .iter()
                        .take_while(|&&x| (x as u32) < lo + 64)
                        .fold(0, |acc, &x| acc | 1 << (x as u32 - lo))
                }
            },
        }
    }

    /// Set the bits `x` in word `w` (bits are cleared only by `clear`).
    fn or(&mut self, w: usize, x: u64) {
        match self {
            Words::Flat(v) => v[w] |= x,
            Words::Chunked(chunks, _) => {
                let c = &mut chunks[w / CHUNK_WORDS];
                match c {
                    Chunk::Bits(b) => b[w % CHUNK_WORDS] |= x,
                    Chunk::List(l) => {
                        let lo = (w % CHUNK_WORDS) as u32 * 64;
                        let mut i = lower_bound(l, lo);
                        let mut rest = x;
                        while rest != 0 {
                            let bit = (lo + rest.trailing_zeros()) as u16;
                            rest &= rest - 1;
                            while i < l.len() && l[i] < bit {
                                i += 1;
                            }
                            if l.get(i) != Some(&bit) {
                                l.insert(i, bit);
                            }
                            i += 1;
                        }
                        if l.len() > CHUNK_LIST_MAX {
                            let mut b = vec![0u64; CHUNK_WORDS].into_boxed_slice();
                            for &x in l.iter() {
                                b[x as usize / 64] |= 1 << (x % 64);
                            }
                            *c = Chunk::Bits(b);
                        }
                    }
                }
            }
        }
    }

    fn clear(&mut self) {
        match self {
            Words::Flat(v) => v.fill(0),
            Words::Chunked(chunks, _) => {
                for c in chunks {
                    match c {
                        Chunk::List(l) => l.clear(),
                        Chunk::Bits(b) => b.fill(0),
                    }
                }
            }
        }
    }
}

/// fio's random map (`lib/axmap.c`, one per file, here one per job's region):
/// a bit per `rw_min_bs` block, set once an I/O of the current pass covered
/// the block, so that a random job reaches every block once per pass. Above
/// level 0, each level has a bit per word of the level below, set when that
/// word is full, up to a single word: finding a free block is a few word reads
/// however full the map. Bits past the last block ("tail bits" of the last
/// word of a level) stay clear, as in fio, and that matters to the searches.
pub(crate) struct RandomMap {
    nbits: u64,
    /// Level-0 bits set: the pass is over when it reaches `nbits`.
    used: u64,
    levels: Vec<Words>,
}

impl RandomMap {
    /// `axmap_new`: level sizes shrink by 64 until one word is left.
    pub(crate) fn new(nbits: u64) -> RandomMap {
        Self::build(nbits, false)
    }

    fn build(nbits: u64, dense: bool) -> RandomMap {
        let mut levels = Vec::new();
        let mut n = nbits.max(1);
        loop {
            let words = n.div_ceil(64);
            levels.push(Words::new(words as usize, dense));
            if words <= 1 {
                break;
            }
            n = words;
        }
        RandomMap {
            nbits,
            used: 0,
            levels,
        }
    }

    /// `axmap_reset` (from `fio_file_reset`): a new pass.
    pub(crate) fn reset(&mut self) {
        for l in &mut self.levels {
            l.clear();
        }
        self.used = 0;
    }

    /// `axmap_isset`, the negation of io_u.c's `random_map_free`.
    pub(crate) fn is_used(&self, b: u64) -> bool {
        b < self.nbits && self.levels[0].get((b >> 6) as usize) >> (b & 63) & 1 == 1
    }

    /// `axmap_next_free`: where a random draw that hit a used block goes.
    ///
    /// fio does not return the first free block after `b`. Going up from
    /// level 0, it takes the first word containing `b` (at that level) with a
    /// clear bit at or above position `(b + 1) % 64` — the same position at
    /// every level, `b`'s own position in its level-0 word (so a `b` at the
    /// top of its word accepts any clear bit) — and returns the first free
    /// block under that word, which can lie before `b`. Tail bits count as
    /// clear: a search that ends in them, or a walk that finds no such word,
    /// falls back to the map's first free block, i.e. wraps to the region's
    /// start. None only when every block is used.
    pub(crate) fn next_free(&self, b: u64) -> Option<u64> {
        if self.used >= self.nbits {
            return None;
        }
        let above = !0u64 << ((b + 1) & 63);
        for (l, words) in self.levels.iter().enumerate() {
            let w = (b >> (6 * (l as u64 + 1))) as usize;
            if !words.get(w) & above != 0 {
                return self.first_free_under(l, w).or_else(|| self.first_free());
            }
        }
        self.first_free()
    }

    /// `axmap_first_free`: the lowest free block (the top level is one word).
    fn first_free(&self) -> Option<u64> {
        if self.used >= self.nbits {
            return None;
        }
        self.first_free_under(self.levels.len() - 1, 0)
    }

    /// `axmap_find_first_free`: from word `w` of `level`, follow the first
    /// clear bit down to level 0. A level whose words from the index on are
    /// all full leaves the index as it was (fio's rule; unreachable while the
    /// summary bits are consistent and the map not full). None when the walk
    /// ends in tail bits.
    fn first_free_under(&self, level: usize, w: usize) -> Option<u64> {
        let mut idx = w;
        let mut found = None;
        for words in self.levels[..=level].iter().rev() {
            if idx >= words.len() {
                return None;
            }
            if let Some(j) = (idx..words.len()).find(|&j| words.get(j) != !0) {
                idx = j * 64 + (!words.get(j)).trailing_zeros() as usize;
                found = Some(idx as u64);
            }
        }
        found.filter(|&f| f < self.nbits)
    }

    /// `axmap_set_nr` as `mark_random_map` calls it for an I/O of `n` blocks
    /// from block `b` (which is free): returns how many blocks fio counts as
    /// marked, which bounds the I/O's length.
    ///
    /// Per level-0 word, fio sets every free bit of the I/O's range in that
    /// word, skipping used ones (so the marked blocks need not be contiguous),
    /// and counts them; it goes on to the next word only if the whole range in
    /// this word was free. One more rule of `__axmap_set`: when the count is
    /// short of the range but equals 64 minus the range's length (a range of
    /// more than 32 blocks), fio retries the range's rest, finds it all set,
    /// and adds the same count again.
    pub(crate) fn mark(&mut self, b: u64, n: u64) -> u64 {
        let (mut bit, mut left) = (b, n);
        let mut total = 0;
        while left > 0 && bit < self.nbits {
            let chunk = left.min(64 - (bit & 63)).min(self.nbits - bit);
            let set = self.set_in_word(bit, chunk);
            let counted = if set > 0 && set < chunk && set == 64 - chunk {
                2 * set
            } else {
                set
            };
            total += counted;
            if counted != chunk {
                break;
            }
            bit += chunk;
            left -= chunk;
        }
        total
    }

    /// `axmap_set_fn` at level 0 and up: set the free bits of `chunk` bits
    /// from `bit` (within one word); a word that becomes full sets its bit one
    /// level up, and so on. Returns how many bits it set.
    fn set_in_word(&mut self, bit: u64, chunk: u64) -> u64 {
        let w = (bit >> 6) as usize;
        let mask = if chunk >= 64 {
            !0
        } else {
            ((1u64 << chunk) - 1) << (bit & 63)
        };
        let old = self.levels[0].get(w);
        let free = mask & !old;
        if free == 0 {
            return 0;
        }
        self.levels[0].or(w, free);
        self.used += free.count_ones() as u64;
        let mut full = old | free == !0;
        let mut idx = w;
        for words in self.levels[1..].iter_mut() {
            if !full {
                break;
            }
            let (pw, pb) = (idx >> 6, idx & 63);
            words.or(pw, 1 << pb);
            full = words.get(pw) == !0;
            idx = pw;
        }
        free.count_ones() as u64
    }
}

impl Job {
    /// When the job's loop ended (or `now` if it was cut short).
    pub(crate) fn end_ns(&self, now: Ns) -> Ns {
        self.finished_at.unwrap_or(now)
    }

    /// The end of the run for this job: fill in runtimes.
    pub(crate) fn finalize(&mut self, now: Ns) {
        let end = self.finished_at.unwrap_or(now).max(self.stats_start);
        let elapsed_us = (end - self.stats_start) / NSEC_PER_USEC;
        let runtime_ms = elapsed_us.div_ceil(1000);
        for d in [Ddir::Read, Ddir::Write] {
            self.stats.dirs[d.idx()].runtime_ms = if self.cfg.spec.rw.has(d) {
                runtime_ms
            } else {
                0
            };
        }
        self.stats.job_runtime_ms = runtime_ms;
        self.stats.elapsed_s = (end.saturating_sub(self.epoch)).div_ceil(1_000_000_000);
    }
}

impl Workload {
    pub(crate) fn start_job(&mut self, sys: &mut dyn Syscalls, j: JobId) {
        self.jobs_running += 1;
        let job = &mut self.jobs[j as usize];
        let (epoch, stats_start, ramp) = (job.epoch, job.stats_start, job.in_ramp);
        job.wake_at = Some(epoch);
        job.last_sample_t = stats_start;
        let iv = job.sample_interval();
        job.next_sample = stats_start + iv;
        let t = job.next_sample;
        sys.timer(epoch, Ev::Job(j));
        if ramp {
            sys.timer(stats_start, Ev::RampEnd(j));
        }
        sys.timer(t, Ev::Sample(j));
    }

    pub(crate) fn job_wake(&mut self, sys: &mut dyn Syscalls, j: JobId) {
        let job = &mut self.jobs[j as usize];
        if job.wake_at != Some(sys.now()) {
            return; // superseded
        }
        job.wake_at = None;
        if job.phase == Phase::Waiting {
            job.phase = Phase::Top;
        }
        self.job_step(sys, j);
    }

    pub(crate) fn job_ramp_end(&mut self, j: JobId) {
        self.jobs[j as usize].in_ramp = false;
    }

    /// fio's periodic bandwidth / IOPS samples (`add_bw_samples`, `add_iops_samples`).
    pub(crate) fn job_sample(&mut self, sys: &mut dyn Syscalls, j: JobId) {
        let now = sys.now();
        let job = &mut self.jobs[j as usize];
        if job.phase == Phase::Done || job.in_ramp {
            return;
        }
        let dt_ms = (now - job.last_sample_t) / NSEC_PER_MSEC;
        if dt_ms > 0 {
            for d in 0..2 {
                let st = &mut job.stats.dirs[d];
                let bytes = st.io_bytes;
                let ios = st.clat.stat.samples;
                let db = bytes - job.last_sample_bytes[d];
                let di = ios - job.last_sample_ios[d];
                if db > 0 {
                    st.bw.add(db * 1000 / dt_ms / 1024);
                    st.iops.add(di * 1000 / dt_ms);
                }
                job.last_sample_bytes[d] = bytes;
                job.last_sample_ios[d] = ios;
            }
            job.last_sample_t = now;
        }
        let iv = job.sample_interval();
        job.next_sample = now + iv;
        let t = job.next_sample;
        sys.timer(t, Ev::Sample(j));
    }

    /// Sleep until `t`: continue inline when nothing else happens before it.
    fn job_sleep_until(&mut self, sys: &mut dyn Syscalls, j: JobId, t: Ns) -> bool {
        if t <= sys.now() {
            return true;
        }
        if sys.sleep_inline(t) {
            return true;
        }
        self.jobs[j as usize].wake_at = Some(t);
        sys.timer(t, Ev::Job(j));
        false
    }

    /// Run the job's loop from where it is until it must wait.
    fn job_step(&mut self, sys: &mut dyn Syscalls, j: JobId) {
        self.running_job = Some(j);
        self.job_loop(sys, j);
        self.running_job = None;
    }

    fn job_loop(&mut self, sys: &mut dyn Syscalls, j: JobId) {
        loop {
            let phase = self.jobs[j as usize].phase;
            match phase {
                Phase::Waiting | Phase::Done | Phase::InSubmit(_) | Phase::SyncWait(_) => return,
                Phase::Top if self.jobs[j as usize].replay.is_some() => {
                    if let Some(t) = self.replay_top(sys, j) {
                        if !self.job_sleep_until(sys, j, t) {
                            return;
                        }
                    }
                }
                Phase::Top => self.job_top(sys, j),
                Phase::QuiesceRate(dd) => {
                    if !self.job_quiesce(sys, j) {
                        return;
                    }
                    let job = &mut self.jobs[j as usize];
                    let mut t = job.epoch + job.rate_next_us[dd as usize] * NSEC_PER_USEC;
                    if let Some(e) = job.end_time {
                        t = t.min(e); // fio stops sleeping at the timeout (DDIR_TIMEOUT)
                    }
                    job.phase = Phase::RateSleep(dd);
                    if t > sys.now() {
                        t += self.wake_latency(sys, j);
                    }
                    if !self.job_sleep_until(sys, j, t) {
                        return;
                    }
                }
                Phase::RateSleep(dd) => {
                    let job = &mut self.jobs[j as usize];
                    job.phase = if job.end_time.is_some_and(|e| sys.now() >= e) {
                        Phase::Drain
                    } else {
                        Phase::Issue(dd)
                    };
                }
                Phase::Issue(dd) => {
                    if !self.job_issue(sys, j, dd) {
                        return;
                    }
                }
                Phase::SubmitReturn(n) => self.job_after_submit(sys, j, n),
                Phase::SyncReturn(n) => {
                    self.job_reap(sys, j, 1);
                    debug_assert!(
                        self.jobs[j as usize].completed.is_empty(),
                        "sync io_u {n} reaped"
                    );
                    self.job_after_io(j);
                }
                Phase::Reap { min, full } => {
                    let job = &self.jobs[j as usize];
                    if (job.completed.len() as u32) < min {
                        return; // io_u_complete wakes us
                    }
                    self.job_reap(sys, j, min);
                    // wait_for_completions loops while full and above iodepth_low
                    let job = &mut self.jobs[j as usize];
                    let low = job.cfg.spec.iodepth_low.min(job.iodepth());
                    if full && job.cur_depth > low && job.cur_depth > 0 {
                        let m = job
                            .cfg
                            .spec
                            .iodepth_batch_complete_min
                            .min(job.cur_depth)
                            .max(1);
                        job.phase = Phase::Reap { min: m, full };
                        continue;
                    }
                    self.job_after_io(j);
                }
                Phase::QuiesceThink => {
                    if !self.job_quiesce(sys, j) {
                        return;
                    }
                    let mut t = self.job_think_begin(sys, j);
                    if t > sys.now() {
                        t += self.wake_latency(sys, j);
                    }
                    if !self.job_sleep_until(sys, j, t) {
                        return;
                    }
                }
                Phase::Think => self.jobs[j as usize].phase = Phase::Top,
                Phase::Drain => {
                    if !self.job_quiesce(sys, j) {
                        return;
                    }
                    let job = &mut self.jobs[j as usize];
                    job.finished_at = Some(sys.now());
                    job.phase = Phase::Done;
                    self.jobs_running -= 1;
                    return;
                }
            }
        }
    }

    /// Top of fio's loop: the stop conditions, then the direction and rate check.
    fn job_top(&mut self, sys: &mut dyn Syscalls, j: JobId) {
        let now = sys.now();
        let job = &mut self.jobs[j as usize];
        let s = &job.cfg.spec;
        let over_time = job.end_time.is_some_and(|e| now >= e);
        let over_bytes = job.bytes_issued >= job.total_bytes;
        let over_ios = s.number_ios > 0 && job.ios_total >= s.number_ios;
        if over_time || over_bytes || over_ios {
            job.phase = Phase::Drain;
            return;
        }
        let ddir = job.pick_ddir();
        if !job.should_check_rate() {
            job.phase = Phase::Issue(ddir);
            return;
        }
        // rate_ddir: go now if this direction is behind its rate; in a mix, switch
        // to the other direction if that one is behind; else sleep for the nearer.
        let now_us = (now - job.epoch) / NSEC_PER_USEC;
        let d = ddir as usize;
        let o = d ^ 1;
        if job.rate_next_us[d] <= now_us {
            job.phase = Phase::Issue(ddir);
            return;
        }
        let mut sleep_dir = ddir;
        if job.is_rw_mix() && rwmix_of(job, o) > 0 {
            if job.rate_next_us[o] <= now_us {
                job.rwmix_ddir = o as u8;
                job.phase = Phase::Issue(o as u8);
                return;
            }
            if job.rate_next_us[o] < job.rate_next_us[d] {
                sleep_dir = o as u8;
            }
        }
        job.rwmix_ddir = sleep_dir;
        job.phase = Phase::QuiesceRate(sleep_dir);
    }

    /// After an I/O was handed over (and reaped if the queue was full): think time?
    fn job_after_io(&mut self, j: JobId) {
        let job = &mut self.jobs[j as usize];
        let s = &job.cfg.spec;
        let stall = (s.thinktime_ns > 0 || s.thinktime_spin_ns > 0)
            && job.think_blocks() >= job.last_think_blocks + s.thinktime_blocks as u64;
        job.phase = if stall {
            Phase::QuiesceThink
        } else {
            Phase::Top
        };
    }

    /// `handle_thinktime` after the quiesce: returns when the sleep ends.
    fn job_think_begin(&mut self, sys: &mut dyn Syscalls, j: JobId) -> Ns {
        let now = sys.now();
        let job = &mut self.jobs[j as usize];
        let s = &job.cfg.spec;
        // spin, then sleep the rest; both capped to the runtime left
        let mut left = s.thinktime_ns.max(s.thinktime_spin_ns);
        if let Some(e) = job.end_time {
            left = left.min(e.saturating_sub(now));
        }
        job.last_think_blocks = job.think_blocks();
        let dd = job.rwmix_ddir as usize;
        let bps = job.rate_bps[dd];
        if s.rate_ignore_thinktime && left > 0 && bps > 0 {
            // credit the rate clock with what would have been issued while asleep,
            // less one block so issuing resumes at once
            let total_us = left / NSEC_PER_USEC;
            let missed = bps * total_us / 1_000_000;
            let bs = job.min_bs[dd] as u64;
            let usperop = bs * 1_000_000 / bps;
            let over = if usperop <= total_us { bs } else { 0 };
            job.rate_issue_bytes[dd] += missed.saturating_sub(over);
            job.last_usec[dd] += total_us;
        }
        job.phase = Phase::Think;
        now + left
    }

    /// `io_u_quiesce`: reap until nothing is in flight. True when quiet.
    pub(crate) fn job_quiesce(&mut self, sys: &mut dyn Syscalls, j: JobId) -> bool {
        // io_u_queued_complete(td, 1) in a loop: everything already completed
        // is reaped now, one getevents call after another
        while !self.jobs[j as usize].completed.is_empty() {
            self.job_reap(sys, j, 1);
        }
        self.jobs[j as usize].in_flight == 0
    }

    /// Reap completed io_us (`io_u_queued_complete` → `td_io_getevents` →
    /// `ios_completed`): at least `min`, at most `iodepth_batch_complete_max`
    /// (fio's default: the same as the min, so one per call). The reap instant
    /// is the completion time fio sees (clat, lat).
    fn job_reap(&mut self, sys: &mut dyn Syscalls, j: JobId, min: u32) {
        let now = sys.now();
        let job = &mut self.jobs[j as usize];
        let max = job.cfg.spec.iodepth_batch_complete_max.max(min).max(1);
        let mut reaped = 0u32;
        while reaped < max {
            let Some(n) = job.completed.pop_front() else {
                break;
            };
            let io = job.io_us[n as usize];
            let d = io.ddir as usize;
            job.io_blocks[d] += 1;
            if !job.in_ramp {
                let clat = now - io.issue_time;
                let st = &mut job.stats.dirs[d];
                st.clat.add(clat);
                st.lat.add(now - io.start_time);
                st.io_bytes += io.bytes as u64;
                job.stats.add_lat_bin(clat);
            }
            job.free.push(n);
            job.cur_depth -= 1;
            reaped += 1;
        }
        if reaped > 0 && !job.in_ramp {
            job.stats.iodepth_complete[iodepth_batch_bin(reaped)] += 1;
            job.stats.total_complete += 1;
        }
    }

    /// Prepare and submit one io_u in direction `dd`. Returns true if the job
    /// can go on at once (the loop continues), false if it waits.
    fn job_issue(&mut self, sys: &mut dyn Syscalls, j: JobId, dd: u8) -> bool {
        let now = sys.now();
        let job = &mut self.jobs[j as usize];
        let d = dd as usize;
        let (bytes, offset) = match job.replay.as_mut() {
            Some(r) => r.take(),
            None => match job.next_io(d) {
                Some(io) => io,
                None => {
                    // the random map is exhausted: fio's get_io_u returns no
                    // io_u and do_io leaves its loop
                    job.phase = Phase::Drain;
                    return true;
                }
            },
        };
        #[cfg(test)]
        job.issued.push((offset, bytes));
        let n = job
            .free
            .pop()
            .expect("an io_u is free when the queue is not full");
        job.io_us[n as usize] = IoU {
            ddir: dd,
            bytes,
            start_time: now,
            issue_time: 0,
            done_time: 0,
        };
        job.cur_depth += 1;
        job.in_flight += 1;
        // td_io_queue's accounting: issue counts and the rate's byte clock
        job.io_issues[d] += 1;
        job.rate_issue_bytes[d] += bytes as u64;
        job.bytes_issued += bytes as u64;
        job.ios_total += 1;
        if !job.in_ramp {
            job.stats.dirs[d].total_ios += 1;
        }
        if job.should_check_rate() {
            job.rate_next_us[d] = job.usec_for_io(d);
        }
        // Buffered and mmap I/O go through the page cache, which blocks the
        // job like psync (crate::mm::filemap).
        let buffered = sys.has_page_cache() && job.uses_pagecache();
        let sync_engine = !job.cfg.spec.ioengine.is_async() || buffered;
        if sync_engine {
            // psync: issue_time just before the syscall, and no slat
            job.io_us[n as usize].issue_time = now;
            if !job.in_ramp {
                job.stats.iodepth_level[iodepth_level_bin(1)] += 1;
                job.stats.iodepth_submit[iodepth_batch_bin(1)] += 1;
                job.stats.total_submit += 1;
            }
        }
        if buffered {
            job.phase = Phase::SyncWait(n);
            job.submit_done = false;
            let io = BufferedIo {
                task: j,
                io_u: n,
                write: dd == 1,
                offset_bytes: offset,
                bytes,
                task_prio: job.ioprio,
            };
            return match sys.buffered(self, io) {
                Some(cpu) => self.io_u_done_inline(sys, j, n, cpu),
                None => false,
            };
        }
        let io = DirectIo {
            task: j,
            io_u: n,
            dev: job.cfg.dev,
            cg: job.cfg.cgroup,
            write: dd == 1,
            offset_bytes: offset,
            bytes,
            sync: job.cfg.spec.direct,
            task_prio: job.ioprio,
        };
        job.phase = if sync_engine {
            Phase::SyncWait(n)
        } else {
            Phase::InSubmit(n)
        };
        job.submit_done = false;
        sys.submit(self, io);
        let job = &mut self.jobs[j as usize];
        if sync_engine {
            return false; // io_u_complete moves us on
        }
        if !job.submit_done {
            return false; // asleep in the kernel; submit_done wakes us
        }
        job.phase = Phase::SubmitReturn(n);
        let t = now + sys.cpu().submit_ns + self.return_delay(sys, j);
        self.job_sleep_until(sys, j, t)
    }

    /// How late the job's task runs after a timed sleep (think time, rate
    /// sleep) should end: an exponential draw with mean
    /// `CpuCosts::wake_jitter_ns` from the job's own host stream; zero on the
    /// default host. fio's `usec_sleep` already compensates nanosleep's fixed
    /// overshoot (it sleeps `usec - ns_granularity` and spins the rest), so
    /// only the variable part of a real host's wake-up latency is modelled.
    fn wake_latency(&mut self, sys: &mut dyn Syscalls, j: JobId) -> Ns {
        let m = sys.cpu().wake_jitter_ns;
        if m == 0 {
            return 0;
        }
        self.jobs[j as usize].host_rng.exp(m as f64) as Ns
    }

    /// `blkcg_maybe_throttle_current`: delay owed on the way back to user space.
    fn return_delay(&mut self, sys: &mut dyn Syscalls, j: JobId) -> Ns {
        let cfg = &self.jobs[j as usize].cfg;
        sys.return_delay(cfg.dev, cfg.cgroup)
    }

    /// The submit call returned: issue_time and slat; reap if the queue is full.
    fn job_after_submit(&mut self, sys: &mut dyn Syscalls, j: JobId, n: u32) {
        let now = sys.now();
        let job = &mut self.jobs[j as usize];
        let io = &mut job.io_us[n as usize];
        io.issue_time = now;
        let d = io.ddir as usize;
        let slat = now - io.start_time;
        if !job.in_ramp {
            job.stats.dirs[d].slat.add(slat);
            job.stats.iodepth_level[iodepth_level_bin(job.cur_depth)] += 1;
            job.stats.iodepth_submit[iodepth_batch_bin(1)] += 1;
            job.stats.total_submit += 1;
        }
        if job.cur_depth >= job.iodepth() {
            let min = job
                .cfg
                .spec
                .iodepth_batch_complete_min
                .min(job.cur_depth)
                .max(1);
            job.phase = Phase::Reap { min, full: true };
        } else {
            self.job_after_io(j);
        }
    }

    /// The page cache completed io_u `n` inside the job's own call (a cache
    /// hit, a write below the dirty limit): the call returns after `cpu`.
    /// Returns true if the job's loop goes on at once.
    pub(crate) fn io_u_done_inline(
        &mut self,
        sys: &mut dyn Syscalls,
        j: JobId,
        n: u32,
        cpu: Ns,
    ) -> bool {
        let now = sys.now();
        let job = &mut self.jobs[j as usize];
        job.in_flight -= 1;
        job.io_us[n as usize].done_time = now + cpu;
        job.completed.push_back(n);
        job.phase = Phase::SyncReturn(n);
        self.job_sleep_until(sys, j, now + cpu)
    }
}

impl Tasks for Workload {
    /// The block layer took the job's bio (or queued it in blk-throttle): the
    /// submit call can return.
    fn submit_done(&mut self, j: JobId, n: u32) -> bool {
        let job = &mut self.jobs[j as usize];
        if job.phase != Phase::InSubmit(n) {
            return false; // sync engines wait for the completion instead
        }
        job.submit_done = true;
        if self.running_job == Some(j) {
            return false;
        }
        // woken from a sleep in the kernel: the rest of the call runs now
        job.phase = Phase::SubmitReturn(n);
        true
    }

    fn set_wake(&mut self, j: JobId, t: Ns) {
        self.jobs[j as usize].wake_at = Some(t);
    }

    /// The kernel completed io_u `n` (bio_endio reached the submitter).
    fn io_done(&mut self, j: JobId, n: u32, now: Ns, wake_t: Ns) -> bool {
        let job = &mut self.jobs[j as usize];
        job.in_flight -= 1;
        job.io_us[n as usize].done_time = now;
        job.completed.push_back(n);
        let wake = match job.phase {
            Phase::SyncWait(m) if m == n => {
                job.phase = Phase::SyncReturn(n);
                true
            }
            Phase::Reap { min, .. } => job.completed.len() as u32 >= min,
            Phase::QuiesceThink | Phase::QuiesceRate(_) | Phase::Drain => true,
            // a replay job reaps while it waits for the next recorded instant
            // (fio's iolog_delay polls completions): back to the top, which
            // reaps and sleeps again
            Phase::RateSleep(_) if job.replay.is_some() => {
                job.phase = Phase::Top;
                job.wake_at = None;
                true
            }
            _ => false,
        };
        if wake && job.wake_at.is_none() && self.running_job != Some(j) {
            job.wake_at = Some(wake_t);
            return true;
        }
        false
    }
}

fn rwmix_of(job: &Job, d: usize) -> u32 {
    if d == 0 {
        job.cfg.spec.rwmixread
    } else {
        100 - job.cfg.spec.rwmixread
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use blklab_fio::options::RwPattern;
    use blklab_fio::{BsSpec, JobSpec};

    use super::RandomMap;
    use crate::machine::tests::{config, job, nullb_dev};
    use crate::machine::Sim;
    use crate::sim::trace::Tracer;

    const BS: u64 = 4096;

    /// A 4k randread job (libaio, QD4) over `blocks` blocks, not time based
    /// unless `tweak` says so; returns the (offset, bytes) it issued in order.
    fn issued(blocks: u64, tweak: impl FnOnce(&mut JobSpec)) -> Vec<(u64, u32)> {
        let mut s = job("r", RwPattern::RandRead, BS as u32, 4, 1);
        s.time_based = false;
        s.runtime_ns = None;
        s.size = Some(blocks * BS);
        tweak(&mut s);
        let cfg = config(vec![nullb_dev(10_000, 64)], vec![(s, "/")]);
        let mut sim = Sim::new(cfg, Tracer::default()).unwrap();
        let r = sim.run();
        let io = std::mem::take(&mut sim.wl.jobs[0].issued);
        assert_eq!(r.jobs[0].stats.dirs[0].total_ios, io.len() as u64);
        io
    }

    fn blocks_of(io: &[(u64, u32)]) -> Vec<u64> {
        io.iter().map(|&(o, _)| o / BS).collect()
    }

    #[test]
    fn random_map_visits_every_block_once() {
        // 1000 blocks: the last level-0 word is partial (tail bits)
        let io = issued(1000, |_| {});
        assert_eq!(io.len(), 1000);
        assert!(io.iter().all(|&(_, b)| b as u64 == BS));
        let mut b = blocks_of(&io);
        b.sort_unstable();
        assert_eq!(b, (0..1000).collect::<Vec<_>>());
    }

    #[test]
    fn norandommap_draws_with_replacement() {
        let io = issued(1000, |s| s.norandommap = true);
        // the same bytes, so the same count, but repeats: about 632 distinct
        assert_eq!(io.len(), 1000);
        let distinct: HashSet<u64> = blocks_of(&io).into_iter().collect();
        assert!(distinct.len() < 700, "{}", distinct.len());
    }

    #[test]
    fn time_based_job_resets_the_map_after_each_pass() {
        let io = issued(16, |s| {
            s.time_based = true;
            s.runtime_ns = Some(2_000_000);
        });
        assert!(io.len() > 10 * 16, "{}", io.len());
        let b = blocks_of(&io);
        for pass in b.chunks(16) {
            let mut p = pass.to_vec();
            p.sort_unstable();
            p.dedup();
            assert_eq!(
                p.len(),
                pass.len(),
                "a block repeated within a pass: {pass:?}"
            );
            if pass.len() == 16 {
                assert_eq!(p, (0..16).collect::<Vec<_>>());
            }
        }
        // passes are not all in the same order
        assert_ne!(b[..16], b[16..32]);
    }

    #[test]
    fn rw_seq_runs_follow_a_mapped_random_block() {
        // randread:4: a random block, then three sequential I/Os after it
        // (fio marks only the random ones)
        let io = issued(64, |s| s.rw_seq_nr = 4);
        assert_eq!(io.len(), 64);
        let b = blocks_of(&io);
        let random: Vec<u64> = b.iter().step_by(4).copied().collect();
        let distinct: HashSet<u64> = random.iter().copied().collect();
        assert_eq!(distinct.len(), random.len(), "{random:?}");
        for i in (0..b.len()).filter(|i| i % 4 != 0) {
            assert_eq!(b[i], (b[i - 1] + 1) % 64, "{b:?}");
        }
    }

    #[test]
    fn larger_ios_are_cut_to_the_blocks_they_could_mark() {
        // bssplit 4k/10:16k/90 over 256 blocks: a 16k I/O drawn where some of
        // its blocks were done is shortened, so 8k and 12k I/Os appear, and
        // the pass issues exactly the region's bytes
        let io = issued(256, |s| {
            s.bs[0] = BsSpec::Split(vec![(4096, 10), (16384, 90)])
        });
        let total: u64 = io.iter().map(|&(_, b)| b as u64).sum();
        assert_eq!(total, 256 * BS);
        assert!(io.len() < 256, "{}", io.len());
        assert!(io
            .iter()
            .all(|&(o, b)| (b as u64).is_multiple_of(BS) && o + b as u64 <= 256 * BS));
        assert!(
            io.iter().any(|&(_, b)| b == 8192 || b == 12288),
            "no I/O was shortened"
        );
        // every I/O starts on a block no earlier I/O started on
        let starts: HashSet<u64> = blocks_of(&io).into_iter().collect();
        assert_eq!(starts.len(), io.len());
    }

    #[test]
    fn bsrange_job_covers_the_region_in_one_pass() {
        let io = issued(300, |s| {
            s.bs[0] = BsSpec::Range {
                lo: 4096,
                hi: 32768,
            }
        });
        let total: u64 = io.iter().map(|&(_, b)| b as u64).sum();
        assert_eq!(total, 300 * BS);
        assert!(io.iter().all(|&(o, b)| o + b as u64 <= 300 * BS));
    }

    #[test]
    fn next_free_takes_the_first_free_block_of_a_group() {
        let mut m = RandomMap::new(1000);
        // word 0 used except blocks 2 and 10
        m.mark(0, 2);
        m.mark(3, 7);
        m.mark(11, 53);
        assert!(!m.is_used(2) && !m.is_used(10) && m.is_used(5));
        // a free block after 5 in its word: fio answers the word's first free
        assert_eq!(m.next_free(5), Some(2));
        // none after 12 in its word: the first free block of the 64 words
        // around it, here still in word 0
        assert_eq!(m.next_free(12), Some(2));
        m.mark(2, 1);
        assert_eq!(m.next_free(5), Some(10));
        m.mark(10, 1);
        assert_eq!(m.next_free(12), Some(64));
        // block 63 is at the top of its word: any free bit of the word counts
        m.mark(64, 1);
        assert_eq!(m.next_free(63), Some(65));
    }

    #[test]
    fn next_free_tests_every_level_at_the_blocks_own_position() {
        // 8192 blocks: two groups of 64 words. Group 1 is used except its
        // word 67 (blocks 4288..4352); group 0 is free.
        let mut m = RandomMap::new(8192);
        for w in (64..128).filter(|&w| w != 67) {
            m.mark(w * 64, 64);
        }
        // 4097 is at position 1 of word 64: word 67 (position 3 in the
        // level-1 word) is at or above 2, so group 1 answers
        assert_eq!(m.next_free(4097), Some(4288));
        // 4101 is at position 5: position 3 is below 6, so fio goes up a
        // level and answers the first free block of the whole map
        assert_eq!(m.next_free(4101), Some(0));
    }

    #[test]
    fn next_free_wraps_to_the_first_free_block() {
        let mut m = RandomMap::new(100);
        m.mark(0, 3);
        m.mark(4, 60);
        m.mark(64, 36);
        // only block 3 is free; from block 90 the search ends in the last
        // word's tail bits and falls back to the map's first free block
        assert_eq!(m.next_free(90), Some(3));
        m.mark(3, 1);
        assert_eq!(m.next_free(90), None);
        m.reset();
        assert!(!m.is_used(90));
        assert_eq!(m.next_free(90), Some(64));
    }

    #[test]
    fn mark_skips_used_blocks_and_counts_like_fio() {
        let mut m = RandomMap::new(256);
        m.mark(6, 1);
        // a 3-block I/O at 5 with 6 used: 5 and 7 are marked, 2 counted
        assert_eq!(m.mark(5, 3), 2);
        assert!(m.is_used(7));
        // across words: all of word 1's part free, then a word 2 part with a
        // used block stops the count there
        m.mark(130, 1);
        assert_eq!(m.mark(120, 12), 8 + 2 + 1);
        // __axmap_set's recount: 48 blocks from 16 with only 16..32 free
        // (so 16 = 64 - 48) count twice
        let mut m = RandomMap::new(256);
        assert_eq!(m.mark(32, 32), 32);
        assert_eq!(m.mark(16, 48), 32);
        assert_eq!(m.used, 48);
    }

    #[test]
    fn sparse_and_dense_maps_agree_until_full() {
        // 1 Mi blocks: 16 chunks of level-0 words start as lists of set bits,
        // then become bitmaps
        let n = 1 << 20;
        let mut sparse = RandomMap::new(n);
        let mut dense = RandomMap::build(n, true);
        let lists = |m: &RandomMap| match &m.levels[0] {
            super::Words::Chunked(c, _) => c
                .iter()
                .filter(|c| matches!(c, super::Chunk::List(_)))
                .count(),
            super::Words::Flat(_) => 0,
        };
        assert_eq!(lists(&sparse), 16);
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for i in 0..n {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let r = (x >> 33) % n;
            let pick = |m: &RandomMap| {
                if m.is_used(r) {
                    m.next_free(r)
                } else {
                    Some(r)
                }
            };
            let b = pick(&sparse).unwrap_or_else(|| panic!("no free block at {i}"));
            assert_eq!(pick(&dense), Some(b));
            assert!(!sparse.is_used(b));
            assert_eq!(sparse.mark(b, 1), 1);
            assert_eq!(dense.mark(b, 1), 1);
        }
        assert_eq!(lists(&sparse), 0);
        assert_eq!(sparse.next_free(12345), None);
        assert!((0..n).all(|b| sparse.is_used(b)));
    }
}
