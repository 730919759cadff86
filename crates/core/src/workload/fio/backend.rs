//! fio's backend loop (backend.c `do_io`, `io_u_quiesce`,
//! `handle_thinktime`, ioengines.c `td_io_queue`/`td_io_getevents`) as a
//! state machine of the task, and what the kernel tells the task.

use blklab_fio::stats::iodepth_level_bin;
use blklab_fio::Ddir;

use super::{IoU, Job, Phase};
use crate::sim::engine::Ev;
use crate::sim::probe::{FioIo, Probe};
use crate::sim::time::{Ns, NSEC_PER_MSEC, NSEC_PER_USEC};
use crate::syscall::{BufferedIo, Ioprio, JobId, Syscalls, Tasks};
use crate::workload::Workload;

impl Job {
    /// When the job's loop ended (or `now` if it was cut short).
    pub(crate) fn end_ns(&self, now: Ns) -> Ns {
        self.finished_at.unwrap_or(now)
    }

    /// The end of the run for this job: fill in runtimes.
    pub(crate) fn finalize(&mut self, now: Ns) {
        self.hot.fold(&mut self.stats);
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
    /// Move a job that has not started yet so that its time zero (fio's
    /// start, before `startdelay`) is `at`: a job of a later run phase.
    pub(crate) fn shift_job_start(&mut self, j: JobId, at: Ns) {
        let job = &mut self.jobs[j as usize];
        debug_assert!(job.phase == Phase::Waiting, "shifting a started job");
        job.epoch += at;
        job.stats_start += at;
        job.end_time = job.end_time.map(|e| e + at);
    }

    pub(crate) fn start_job(&mut self, sys: &mut impl Syscalls, j: JobId) {
        self.jobs_running += 1;
        let job = &mut self.jobs[j as usize];
        let (epoch, stats_start, ramp) = (job.epoch, job.stats_start, job.in_ramp);
        job.wake_at = Some(epoch);
        job.last_sample_t = stats_start;
        let iv = job.sample_interval();
        job.next_sample = stats_start + iv;
        let t = job.next_sample;
        // the task is created asleep: on a host with CPUs it asks for one
        sys.timer(epoch, wake_ev(sys, j));
        if ramp {
            sys.timer(stats_start, Ev::RampEnd(j));
        }
        sys.timer(t, Ev::Sample(j));
    }

    pub(crate) fn job_wake(&mut self, sys: &mut impl Syscalls, j: JobId) {
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
    pub(crate) fn job_sample(&mut self, sys: &mut impl Syscalls, j: JobId) {
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

    /// The top of the loop of a replaying job: stop when the stream or the
    /// runtime is over, else issue the next I/O now or return when it is due.
    pub(crate) fn replay_top(&mut self, sys: &mut impl Syscalls, j: JobId) -> Option<Ns> {
        let now = sys.now();
        let job = &mut self.jobs[j as usize];
        let over_time = job.end_time.is_some_and(|e| now >= e);
        let due = job.replay.as_ref().and_then(|r| r.due(job.epoch));
        match due {
            None => {
                job.phase = Phase::Drain;
                None
            }
            Some(_) if over_time => {
                job.phase = Phase::Drain;
                None
            }
            Some((dd, t)) if t <= now => {
                job.phase = Phase::Issue(dd);
                None
            }
            Some((dd, t)) => {
                // iolog_delay: reap what has completed, then wait (a completion
                // during the wait brings the job back here to reap it);
                // RateSleep ends the job at its runtime, else issues dd
                let until = job.end_time.map_or(t, |e| t.min(e));
                self.job_quiesce(sys, j);
                self.jobs[j as usize].phase = Phase::RateSleep(dd);
                Some(until)
            }
        }
    }

    /// Sleep until `t` (think time, a rate sleep, a replay's next instant):
    /// continue inline when nothing else happens before it. On a host with
    /// CPUs the task gives its CPU up and asks for one again at `t`.
    fn job_sleep_until(&mut self, sys: &mut impl Syscalls, j: JobId, t: Ns) -> bool {
        if t <= sys.now() {
            return true;
        }
        if !sys.host_cpus() && sys.sleep_inline(t) {
            return true;
        }
        self.jobs[j as usize].wake_at = Some(t);
        sys.timer(t, wake_ev(sys, j));
        false
    }

    /// Spend CPU time until `t` (the rest of a submit call, a sync call's
    /// return): continue inline when nothing else happens before it. On a
    /// host with CPUs the task keeps its CPU ([`Workload::on_burst`]).
    pub(super) fn job_burst_until(&mut self, sys: &mut impl Syscalls, j: JobId, t: Ns) -> bool {
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

    /// Whether job `j`'s wake-up is due at `now` (else the event is stale).
    pub(crate) fn wake_due(&self, j: JobId, now: Ns) -> bool {
        self.jobs[j as usize].wake_at == Some(now)
    }

    /// Whether job `j`, whose loop just returned, is spending CPU time (a
    /// burst that ends at its wake-up) rather than blocked or asleep.
    pub(crate) fn on_burst(&self, j: JobId) -> bool {
        let job = &self.jobs[j as usize];
        matches!(
            job.phase,
            Phase::SubmitEntry(_)
                | Phase::SubmitReturn(_)
                | Phase::SyncReturn(_)
                | Phase::ReapCall { .. }
        ) && job.wake_at.is_some()
    }

    /// Whether the end of job `j`'s current burst is a point where the
    /// scheduler may switch it out: not inside the submit call before its
    /// bio (a voluntary-preemption kernel switches a task in a system call
    /// at `cond_resched` points or on the way back to user space, and the
    /// entry of io_submit up to `submit_bio` has none as modelled).
    pub(crate) fn preemptible(&self, j: JobId) -> bool {
        !matches!(self.jobs[j as usize].phase, Phase::SubmitEntry(_))
    }

    /// Run the job's loop from where it is until it must wait.
    fn job_step(&mut self, sys: &mut impl Syscalls, j: JobId) {
        self.running_job = Some(j);
        self.job_loop(sys, j);
        self.running_job = None;
    }

    fn job_loop(&mut self, sys: &mut impl Syscalls, j: JobId) {
        loop {
            let phase = self.jobs[j as usize].phase;
            match phase {
                Phase::Waiting | Phase::Done | Phase::SyncWait(_) => return,
                Phase::InSubmit(n) => {
                    if !self.job_resume_submit(sys, j, n) {
                        return;
                    }
                }
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
                Phase::SubmitEntry(n) => {
                    if !self.job_submit(sys, j, n) {
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
                Phase::Reap { min, full } | Phase::ReapCall { min, full } => {
                    let job = &self.jobs[j as usize];
                    if (job.completed.len() as u32) < min {
                        return; // io_u_complete wakes us
                    }
                    if !self.getevents_cpu(sys, j) {
                        return;
                    }
                    self.job_reap(sys, j, min);
                    // wait_for_completions loops while full and above iodepth_low
                    let job = &mut self.jobs[j as usize];
                    let low = job.knobs.iodepth_low.min(job.iodepth());
                    if full && job.cur_depth > low && job.cur_depth > 0 {
                        let m = job
                            .knobs
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
                    if self.jobs_running == 0 && self.phases_open {
                        // the run's phase has ended (machine/phases.rs)
                        sys.timer(sys.now(), Ev::PhaseEnd);
                    }
                    return;
                }
            }
        }
    }

    /// Top of fio's loop: the stop conditions, then the direction and rate check.
    fn job_top(&mut self, sys: &mut impl Syscalls, j: JobId) {
        let now = sys.now();
        let job = &mut self.jobs[j as usize];
        let s = &job.knobs;
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
        let s = &job.knobs;
        let stall = (s.thinktime_ns > 0 || s.thinktime_spin_ns > 0)
            && job.think_blocks() >= job.last_think_blocks + s.thinktime_blocks as u64;
        job.phase = if stall {
            Phase::QuiesceThink
        } else {
            Phase::Top
        };
    }

    /// `handle_thinktime` after the quiesce: returns when the sleep ends.
    fn job_think_begin(&mut self, sys: &mut impl Syscalls, j: JobId) -> Ns {
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
    pub(crate) fn job_quiesce(&mut self, sys: &mut impl Syscalls, j: JobId) -> bool {
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
    fn job_reap(&mut self, sys: &mut impl Syscalls, j: JobId, min: u32) {
        let now = sys.now();
        let job = &mut self.jobs[j as usize];
        let max = job.knobs.iodepth_batch_complete_max.max(min).max(1);
        let mut reaped = 0u32;
        while reaped < max {
            let Some(n) = job.completed.pop_front(&job.io_us) else {
                break;
            };
            let io = job.io_us[n as usize];
            let d = io.ddir as usize;
            job.io_blocks[d] += 1;
            if !job.in_ramp {
                let clat = now - io.issue_time;
                let st = &mut job.stats.dirs[d];
                job.hint_buckets[1] = addr(st.clat.add(clat));
                job.hint_buckets[2] = addr(st.lat.add(now - io.start_time));
                st.io_bytes += io.bytes as u64;
                job.hot.clat(clat, &mut job.stats);
                if sys.probing() {
                    let p = Probe::FioIo(FioIo {
                        job: j,
                        ddir: io.ddir,
                        bytes: io.bytes,
                        offset: io.offset,
                        // the io_u's ioprio fio logs: its own prio/prioclass
                        // options (0 without), not the kernel's effective one
                        prio: Ioprio::from_fio(job.cfg.spec.prioclass, job.cfg.spec.prio).0,
                        slat_ns: io.has_slat.then(|| io.issue_time - io.start_time),
                        clat_ns: clat,
                        lat_ns: now - io.start_time,
                        epoch_ns: job.epoch,
                    });
                    sys.probe(&p);
                }
            }
            job.free.push(&mut job.io_us, n);
            job.cur_depth -= 1;
            reaped += 1;
        }
        if reaped > 0 && !job.in_ramp {
            job.hot.reaped(reaped, &mut job.stats);
        }
    }

    /// Prepare and submit one io_u in direction `dd`. Returns true if the job
    /// can go on at once (the loop continues), false if it waits.
    fn job_issue(&mut self, sys: &mut impl Syscalls, j: JobId, dd: u8) -> bool {
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
            .pop(&job.io_us)
            .expect("an io_u is free when the queue is not full");
        job.io_us[n as usize] = IoU {
            ddir: dd,
            link: 0, // off every list until it completes
            bytes,
            start_time: now,
            issue_time: 0,
            offset,
            has_slat: false,
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
        // job like psync (mm/filemap.rs).
        let buffered = sys.has_page_cache() && job.uses_pagecache();
        let sync_engine = !job.knobs.ioengine.is_async() || buffered;
        if sync_engine {
            // psync: issue_time just before the syscall, and no slat
            job.io_us[n as usize].issue_time = now;
            if !job.in_ramp {
                job.hot.submitted(iodepth_level_bin(1), &mut job.stats);
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
        let (before_bio_ns, _) = sys.cpu().submit_split();
        if !sync_engine && before_bio_ns > 0 {
            // the call's work before submit_bio (submit.rs)
            job.phase = Phase::SubmitEntry(n);
            return self.job_burst_until(sys, j, now + before_bio_ns);
        }
        self.job_submit(sys, j, n)
    }

    /// How late the job's task runs after a timed sleep (think time, rate
    /// sleep) should end: an exponential draw with mean
    /// `CpuCosts::wake_jitter_ns` from the job's own host stream; zero on the
    /// default host. fio's `usec_sleep` already compensates nanosleep's fixed
    /// overshoot (it sleeps `usec - ns_granularity` and spins the rest), so
    /// only the variable part of a real host's wake-up latency is modelled.
    fn wake_latency(&mut self, sys: &mut impl Syscalls, j: JobId) -> Ns {
        let m = sys.cpu().wake_jitter_ns;
        if m == 0 {
            return 0;
        }
        self.jobs[j as usize].host_rng.exp(m as f64) as Ns
    }

    /// `blkcg_maybe_throttle_current`: delay owed on the way back to user space.
    pub(super) fn return_delay(&mut self, sys: &mut impl Syscalls, j: JobId) -> Ns {
        let k = &self.jobs[j as usize].knobs;
        sys.return_delay(k.dev, k.cgroup)
    }

    /// The submit call returned: issue_time and slat; reap if the queue is full.
    fn job_after_submit(&mut self, sys: &mut impl Syscalls, j: JobId, n: u32) {
        let now = sys.now();
        let job = &mut self.jobs[j as usize];
        let io = &mut job.io_us[n as usize];
        io.issue_time = now;
        let d = io.ddir as usize;
        let slat = now - io.start_time;
        io.has_slat = true;
        if !job.in_ramp {
            job.hint_buckets[0] = addr(job.stats.dirs[d].slat.add(slat));
            job.hot
                .submitted(iodepth_level_bin(job.cur_depth), &mut job.stats);
        }
        if job.cur_depth >= job.iodepth() {
            let min = job
                .knobs
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
        sys: &mut impl Syscalls,
        j: JobId,
        n: u32,
        cpu: Ns,
    ) -> bool {
        let now = sys.now();
        let job = &mut self.jobs[j as usize];
        job.in_flight -= 1;
        job.completed.push_back(&mut job.io_us, n);
        job.phase = Phase::SyncReturn(n);
        self.job_burst_until(sys, j, now + cpu)
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
    fn io_done(&mut self, j: JobId, n: u32, wake_t: Ns) -> bool {
        let reap_every_call = self.reap_every_call;
        let job = &mut self.jobs[j as usize];
        job.in_flight -= 1;
        job.completed.push_back(&mut job.io_us, n);
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
            if reap_every_call {
                job.getevents_woken();
            }
            job.wake_at = Some(wake_t);
            return true;
        }
        false
    }
}

/// The event that ends a task's sleep: on a host with CPUs it first asks
/// for a CPU (`Ev::Wake`), else the task runs at once (`Ev::Job`).
fn wake_ev(sys: &impl Syscalls, j: JobId) -> Ev {
    if sys.host_cpus() {
        Ev::Wake(j)
    } else {
        Ev::Job(j)
    }
}

/// A histogram counter's address, kept for a cache hint (hint.rs).
fn addr(c: &u64) -> usize {
    c as *const u64 as usize
}

fn rwmix_of(job: &Job, d: usize) -> u32 {
    if d == 0 {
        job.knobs.rwmixread
    } else {
        100 - job.knobs.rwmixread
    }
}
