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

use crate::bio::{Bio, BioFlags, JobId, Op, Origin};
use crate::engine::Ev;
use crate::ioprio::{Ioprio, SchedPolicy};
use crate::rng::Rng;
use crate::sim::{JobConfig, Sim};
use crate::time::{Ns, NSEC_PER_MSEC, NSEC_PER_USEC};

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
    pub(crate) replay: Option<crate::replay::Replay>,
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
        })
    }

    /// The task's I/O priority (`get_current_ioprio()` of the job's process).
    pub(crate) fn task_prio(&self) -> Ioprio {
        self.ioprio
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

    /// Offset of the next I/O (random: uniform, aligned to the minimum block size;
    /// fio's random map, which avoids repeats, is not modelled: see fidelity.md).
    fn next_offset(&mut self, d: usize, bytes: u32) -> u64 {
        let s = &self.cfg.spec;
        let align = self.min_bs[d] as u64;
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
        off
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

impl Sim {
    pub(crate) fn start_job(&mut self, j: JobId) {
        self.jobs_running += 1;
        let job = &mut self.jobs[j as usize];
        let (epoch, stats_start, ramp) = (job.epoch, job.stats_start, job.in_ramp);
        job.wake_at = Some(epoch);
        job.last_sample_t = stats_start;
        let iv = job.sample_interval();
        job.next_sample = stats_start + iv;
        let t = job.next_sample;
        self.q.push(epoch, Ev::Job(j));
        if ramp {
            self.q.push(stats_start, Ev::RampEnd(j));
        }
        self.q.push(t, Ev::Sample(j));
    }

    pub(crate) fn job_wake(&mut self, j: JobId) {
        let job = &mut self.jobs[j as usize];
        if job.wake_at != Some(self.now) {
            return; // superseded
        }
        job.wake_at = None;
        if job.phase == Phase::Waiting {
            job.phase = Phase::Top;
        }
        self.job_step(j);
    }

    pub(crate) fn job_ramp_end(&mut self, j: JobId) {
        self.jobs[j as usize].in_ramp = false;
    }

    /// fio's periodic bandwidth / IOPS samples (`add_bw_samples`, `add_iops_samples`).
    pub(crate) fn job_sample(&mut self, j: JobId) {
        let now = self.now;
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
        self.q.push(t, Ev::Sample(j));
    }

    /// Sleep until `t`: continue inline when nothing else happens before it.
    fn job_sleep_until(&mut self, j: JobId, t: Ns) -> bool {
        if t <= self.now {
            return true;
        }
        if self.q.peek_time().is_none_or(|n| n > t) && self.time_limit.is_none_or(|l| t <= l) {
            self.now = t;
            return true;
        }
        self.jobs[j as usize].wake_at = Some(t);
        self.q.push(t, Ev::Job(j));
        false
    }

    /// Run the job's loop from where it is until it must wait.
    fn job_step(&mut self, j: JobId) {
        self.running_job = Some(j);
        self.job_loop(j);
        self.running_job = None;
    }

    fn job_loop(&mut self, j: JobId) {
        loop {
            let phase = self.jobs[j as usize].phase;
            match phase {
                Phase::Waiting | Phase::Done | Phase::InSubmit(_) | Phase::SyncWait(_) => return,
                Phase::Top if self.jobs[j as usize].replay.is_some() => {
                    if let Some(t) = self.replay_top(j) {
                        if !self.job_sleep_until(j, t) {
                            return;
                        }
                    }
                }
                Phase::Top => self.job_top(j),
                Phase::QuiesceRate(dd) => {
                    if !self.job_quiesce(j) {
                        return;
                    }
                    let job = &mut self.jobs[j as usize];
                    let mut t = job.epoch + job.rate_next_us[dd as usize] * NSEC_PER_USEC;
                    if let Some(e) = job.end_time {
                        t = t.min(e); // fio stops sleeping at the timeout (DDIR_TIMEOUT)
                    }
                    job.phase = Phase::RateSleep(dd);
                    if t > self.now {
                        t += self.wake_latency(j);
                    }
                    if !self.job_sleep_until(j, t) {
                        return;
                    }
                }
                Phase::RateSleep(dd) => {
                    let job = &mut self.jobs[j as usize];
                    job.phase = if job.end_time.is_some_and(|e| self.now >= e) {
                        Phase::Drain
                    } else {
                        Phase::Issue(dd)
                    };
                }
                Phase::Issue(dd) => {
                    if !self.job_issue(j, dd) {
                        return;
                    }
                }
                Phase::SubmitReturn(n) => self.job_after_submit(j, n),
                Phase::SyncReturn(n) => {
                    self.job_reap(j, 1);
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
                    self.job_reap(j, min);
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
                    if !self.job_quiesce(j) {
                        return;
                    }
                    let mut t = self.job_think_begin(j);
                    if t > self.now {
                        t += self.wake_latency(j);
                    }
                    if !self.job_sleep_until(j, t) {
                        return;
                    }
                }
                Phase::Think => self.jobs[j as usize].phase = Phase::Top,
                Phase::Drain => {
                    if !self.job_quiesce(j) {
                        return;
                    }
                    let job = &mut self.jobs[j as usize];
                    job.finished_at = Some(self.now);
                    job.phase = Phase::Done;
                    self.jobs_running -= 1;
                    return;
                }
            }
        }
    }

    /// Top of fio's loop: the stop conditions, then the direction and rate check.
    fn job_top(&mut self, j: JobId) {
        let now = self.now;
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
    fn job_think_begin(&mut self, j: JobId) -> Ns {
        let now = self.now;
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
    pub(crate) fn job_quiesce(&mut self, j: JobId) -> bool {
        // io_u_queued_complete(td, 1) in a loop: everything already completed
        // is reaped now, one getevents call after another
        while !self.jobs[j as usize].completed.is_empty() {
            self.job_reap(j, 1);
        }
        self.jobs[j as usize].in_flight == 0
    }

    /// Reap completed io_us (`io_u_queued_complete` → `td_io_getevents` →
    /// `ios_completed`): at least `min`, at most `iodepth_batch_complete_max`
    /// (fio's default: the same as the min, so one per call). The reap instant
    /// is the completion time fio sees (clat, lat).
    fn job_reap(&mut self, j: JobId, min: u32) {
        let now = self.now;
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
    fn job_issue(&mut self, j: JobId, dd: u8) -> bool {
        let now = self.now;
        let job = &mut self.jobs[j as usize];
        let d = dd as usize;
        let (bytes, offset) = match job.replay.as_mut() {
            Some(r) => r.take(),
            None => {
                let b = job.next_buflen(d);
                (b, job.next_offset(d, b))
            }
        };
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
        // job like psync (crate::pagecache::io).
        let buffered = self.pc.is_some() && crate::pagecache::io::uses_pagecache(&job.cfg);
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
            return self.pc_issue(j, n, dd, offset, bytes);
        }
        let mut bio = Bio::new(
            job.cfg.dev,
            job.cfg.cgroup,
            if dd == 0 { Op::Read } else { Op::Write },
            offset >> 9,
            bytes,
            Origin::Job { job: j, io_u: n },
        );
        bio.flags = BioFlags {
            sync: job.cfg.spec.direct,
            submitter_waits: true,
            ..Default::default()
        };
        // bio_set_ioprio: no per-I/O priority, so the task's, then the cgroup's
        // io.prio.class policy
        bio.ioprio = self
            .blk_ioprio
            .bio_set_ioprio(job.cfg.cgroup, Ioprio::default(), job.ioprio);
        job.phase = if sync_engine {
            Phase::SyncWait(n)
        } else {
            Phase::InSubmit(n)
        };
        job.submit_done = false;
        let id = self.bios.insert(bio);
        self.submit_bio(id);
        let job = &mut self.jobs[j as usize];
        if sync_engine {
            return false; // io_u_complete moves us on
        }
        if !job.submit_done {
            return false; // asleep in the kernel; submit_done wakes us
        }
        job.phase = Phase::SubmitReturn(n);
        let t = now + self.cpu.submit_ns + self.return_delay(j);
        self.job_sleep_until(j, t)
    }

    /// How late the job's task runs after a timed sleep (think time, rate
    /// sleep) should end: an exponential draw with mean
    /// `CpuCosts::wake_jitter_ns` from the job's own host stream; zero on the
    /// default host. fio's `usec_sleep` already compensates nanosleep's fixed
    /// overshoot (it sleeps `usec - ns_granularity` and spins the rest), so
    /// only the variable part of a real host's wake-up latency is modelled.
    fn wake_latency(&mut self, j: JobId) -> Ns {
        let m = self.cpu.wake_jitter_ns;
        if m == 0 {
            return 0;
        }
        self.jobs[j as usize].host_rng.exp(m as f64) as Ns
    }

    /// `blkcg_maybe_throttle_current`: delay owed on the way back to user space.
    fn return_delay(&mut self, j: JobId) -> Ns {
        let (dev, cg) = (
            self.jobs[j as usize].cfg.dev,
            self.jobs[j as usize].cfg.cgroup,
        );
        let d = &mut self.devs[dev as usize];
        let mut ctx = dev_ctx!(self, d);
        d.st.qos
            .iter_mut()
            .map(|q| q.return_delay(&mut ctx, cg))
            .sum()
    }

    /// The block layer took the job's bio (or queued it in blk-throttle): the
    /// submit call can return.
    pub(crate) fn submit_done(&mut self, j: JobId, n: u32) {
        let job = &mut self.jobs[j as usize];
        if job.phase != Phase::InSubmit(n) {
            return; // sync engines wait for the completion instead
        }
        job.submit_done = true;
        if self.running_job != Some(j) {
            // woken from a sleep in the kernel: the rest of the call runs now
            job.phase = Phase::SubmitReturn(n);
            let t = self.now + self.cpu.submit_ns + self.return_delay(j);
            let job = &mut self.jobs[j as usize];
            job.wake_at = Some(t);
            self.q.push(t, Ev::Job(j));
        }
    }

    /// The submit call returned: issue_time and slat; reap if the queue is full.
    fn job_after_submit(&mut self, j: JobId, n: u32) {
        let now = self.now;
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
    pub(crate) fn io_u_done_inline(&mut self, j: JobId, n: u32, cpu: Ns) -> bool {
        let now = self.now;
        let job = &mut self.jobs[j as usize];
        job.in_flight -= 1;
        job.io_us[n as usize].done_time = now + cpu;
        job.completed.push_back(n);
        job.phase = Phase::SyncReturn(n);
        self.job_sleep_until(j, now + cpu)
    }

    /// The kernel completed io_u `n` (bio_endio reached the submitter).
    pub(crate) fn io_u_complete(&mut self, j: JobId, n: u32) {
        let now = self.now;
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
            let t = now + self.cpu.reap_ns;
            job.wake_at = Some(t);
            self.q.push(t, Ev::Job(j));
        }
    }
}

fn rwmix_of(job: &Job, d: usize) -> u32 {
    if d == 0 {
        job.cfg.spec.rwmixread
    } else {
        100 - job.cfg.spec.rwmixread
    }
}
