//! The simulator: configuration, state and the event loop. The block-layer
//! path is in `blk_mq.rs`, the fio job model in `fio_job.rs`.

use std::collections::VecDeque;

use blklab_fio::{JobSpec, JobStats};

use crate::block::bio::{Bio, BioId, DevId, JobId};
use crate::block::blk_cgroup::{CgId, CgroupTree};
use crate::block::ctx::Ctx;
use crate::block::elevator::{self, Elevator};
use crate::block::request::Request;
use crate::block::rq_qos::RqQos;
use crate::drivers::{DeviceInfo, DeviceModel, ModelSpec};
use crate::sim::engine::{Ev, EventQueue};
use crate::sim::slab::Slab;
use crate::sim::switches::Switches;
use crate::sim::time::{Hz, Ns};
use crate::sim::trace::Tracer;
use crate::workload::fio_job::Job;

/// A controller context for device `$d` (a `&mut Dev`), borrowing the other
/// fields of the simulator `$s` alongside it.
macro_rules! dev_ctx {
    ($s:ident, $d:ident) => {
        crate::block::ctx::Ctx {
            now: $s.now,
            hz: $s.hz,
            dev: &$d.info,
            cgroups: &$s.cgroups,
            switches: &$s.switches,
            trace: &mut $s.trace,
        }
    };
}

/// One device of a scenario.
#[derive(Clone, Debug)]
pub struct DeviceConfig {
    pub info: DeviceInfo,
    pub model: ModelSpec,
    /// /sys/block/DEV/queue/scheduler
    pub scheduler: String,
    /// /sys/block/DEV/queue/iosched/* writes, in order.
    pub iosched: Vec<(String, String)>,
}

/// Per-I/O CPU costs of the submitting task; the model has no CPU contention,
/// these only place fio's timestamps where a real submission would.
#[derive(Clone, Copy, Debug)]
pub struct CpuCosts {
    /// From fio preparing an io_u to the submit syscall returning, when the
    /// kernel does not block (fio's minimum slat).
    pub submit_ns: Ns,
    /// From the device completing to fio's reap returning (irq, wakeup, getevents).
    pub reap_ns: Ns,
    /// Host scheduling noise: a fio task wakes this late (mean of an
    /// exponential draw, 0 = never) from each timed sleep (think time, rate
    /// sleep), drawn from a per-job stream of the run's seed. Real hosts
    /// wake tasks tens to hundreds of µs late (idle-state exit, other tasks,
    /// interrupts); the default host is exact.
    pub wake_jitter_ns: Ns,
}

impl Default for CpuCosts {
    fn default() -> Self {
        CpuCosts {
            submit_ns: 2_000,
            reap_ns: 1_000,
            wake_jitter_ns: 0,
        }
    }
}

/// One fio job instance (after `numjobs` expansion) and where it runs.
#[derive(Clone, Debug)]
pub struct JobConfig {
    pub spec: JobSpec,
    /// Clone index within numjobs (0-based).
    pub clone: u32,
    pub cgroup: CgId,
    pub dev: DevId,
    /// Reporting group (fio's groupid).
    pub groupid: u32,
}

/// A write to a cgroup file at a simulated instant.
#[derive(Clone, Debug)]
pub struct TimedWrite {
    pub at: Ns,
    pub cgroup: CgId,
    pub file: String,
    pub value: String,
}

#[derive(Clone, Debug)]
pub struct SimConfig {
    pub seed: u64,
    pub hz: Hz,
    pub switches: Switches,
    pub cgroups: CgroupTree,
    pub devices: Vec<DeviceConfig>,
    pub jobs: Vec<JobConfig>,
    pub cpu: CpuCosts,
    /// Stop the whole run at this instant even if jobs are still running.
    pub time_limit: Option<Ns>,
    pub writes: Vec<TimedWrite>,
    /// The page cache (`[pagecache]`), used by jobs with direct=0 or ioengine=mmap.
    pub pagecache: crate::mm::PageCacheParams,
}

/// Why a scenario could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("device {dev}: {msg}")]
    Device { dev: String, msg: String },
    #[error("cgroup {cgroup}: {file}: {msg}")]
    Cgroup {
        cgroup: String,
        file: String,
        msg: String,
    },
    #[error("job {job}: {msg}")]
    Job { job: String, msg: String },
}

/// A timer a component asked for, so that only the latest request is honoured.
#[derive(Default, Clone, Copy, Debug)]
pub(crate) struct Armed(pub Option<Ns>);

impl Armed {
    /// Ask for `ev` at `want` unless exactly that is already asked for. A
    /// changed or cancelled request leaves the old event queued; it is ignored
    /// when it fires because it no longer matches.
    pub(crate) fn set(&mut self, q: &mut EventQueue, want: Option<Ns>, ev: Ev) {
        if want != self.0 {
            self.0 = want;
            if let Some(t) = want {
                q.push(t, ev);
            }
        }
    }
}

/// The per-device part of the block layer (request_queue + hctx + disk):
/// its static description and its state, kept apart so a controller can read
/// the one while the block layer changes the other.
pub(crate) struct Dev {
    pub info: DeviceInfo,
    pub st: DevState,
}

pub(crate) struct DevState {
    /// blk-throttle (io.max) for this device.
    pub throttle: crate::block::throttle::Throttle,
    pub throttle_armed: Armed,
    pub model: Box<dyn DeviceModel>,
    pub elv: Box<dyn Elevator>,
    pub qos: Vec<Box<dyn RqQos>>,
    pub qos_armed: Vec<Armed>,
    pub elv_armed: Armed,
    /// Requests allocated (tags in use), limited by nr_requests.
    pub tags_used: u32,
    /// Bios that passed rq_qos and wait for a request, in arrival order.
    pub tag_waiters: VecDeque<BioId>,
    /// Requests at the device (dispatched, not completed), limited by queue_depth.
    pub in_device: u32,
    /// /sys/block/DEV/stat counters.
    pub diskstats: crate::block::diskstats::DiskStats,
    /// Completed requests and bios, for the run summary.
    pub rqs_done: u64,
    pub bios_done: u64,
}

/// The whole simulated machine.
pub struct Sim {
    pub(crate) now: Ns,
    pub(crate) seed: u64,
    pub(crate) hz: Hz,
    pub(crate) switches: Switches,
    pub(crate) cgroups: CgroupTree,
    pub(crate) cpu: CpuCosts,
    pub(crate) q: EventQueue,
    pub(crate) devs: Vec<Dev>,
    pub(crate) bios: Slab<Bio>,
    pub(crate) reqs: Slab<Request>,
    pub(crate) jobs: Vec<Job>,
    /// blk-ioprio: each cgroup's io.prio.class policy.
    pub(crate) blk_ioprio: crate::block::blk_ioprio::BlkIoprio,
    pub(crate) trace: Tracer,
    pub(crate) writes: Vec<TimedWrite>,
    pub(crate) time_limit: Option<Ns>,
    pub(crate) jobs_running: usize,
    /// Scratch list for bios released by controllers (reused, never shrunk).
    pub(crate) released: Vec<BioId>,
    pub(crate) peak_bios: usize,
    /// The job whose loop is executing (its own submissions call back into it).
    pub(crate) running_job: Option<JobId>,
    /// The page cache, when a job does buffered I/O or maps a file.
    pub(crate) pc: Option<Box<crate::mm::filemap::PcSys>>,
}

/// What a run produced.
#[derive(Debug)]
pub struct RunResult {
    /// Per job instance, in configuration order.
    pub jobs: Vec<JobResult>,
    pub end_time: Ns,
    pub events: u64,
    pub bios_completed: u64,
    /// The most bios in flight at once (memory follows this, not the run length).
    pub peak_bios_in_flight: usize,
    pub devices: Vec<DeviceResult>,
    /// Page-cache figures, when the page cache was used.
    pub pagecache: Option<crate::mm::filemap::PcReport>,
}

#[derive(Debug)]
pub struct JobResult {
    pub name: String,
    /// When the job's loop ended (ns).
    pub end_ns: Ns,
    pub clone: u32,
    pub groupid: u32,
    pub cgroup: String,
    pub device: String,
    pub stats: JobStats,
}

#[derive(Debug)]
pub struct DeviceResult {
    pub name: String,
    /// /sys/block/DEV/stat's first 11 fields at the end of the run.
    pub stat: [u64; 11],
    pub requests: u64,
    pub bios: u64,
}

impl Sim {
    pub fn new(cfg: SimConfig, trace: Tracer) -> Result<Sim, SetupError> {
        let mut devs = Vec::new();
        for d in &cfg.devices {
            let dev_err = |msg: String| SetupError::Device {
                dev: d.info.name.clone(),
                msg,
            };
            // each device draws from its own stream, so adding one leaves the others' draws alone
            let dev_seed =
                crate::sim::rng::Rng::stream(cfg.seed, &format!("device/{}", d.info.name))
                    .next_u64();
            let model = d.model.build_seeded(dev_seed).map_err(dev_err)?;
            let mut elv = elevator::build(&d.scheduler, &d.info).map_err(dev_err)?;
            for (k, v) in &d.iosched {
                elv.set_tunable(k, v).map_err(dev_err)?;
            }
            let throttle =
                crate::block::throttle::Throttle::new(&d.info, &cfg.cgroups, cfg.hz, &cfg.switches)
                    .map_err(|(cg, e)| SetupError::Cgroup {
                        cgroup: cfg.cgroups.get(cg).path.clone(),
                        file: "io.max".into(),
                        msg: e.to_string(),
                    })?;
            // The rq_qos chain in the kernel's order: blk-iocost first
            // (RQ_QOS_COST), blk-iotrack, which only watches, last.
            let mut qos: Vec<Box<dyn RqQos>> = Vec::new();
            let iocost =
                crate::block::iocost::IoCost::new(&d.info, &cfg.cgroups, cfg.hz, &cfg.switches)
                    .map_err(|(cg, file, e)| SetupError::Cgroup {
                        cgroup: cfg.cgroups.get(cg).path.clone(),
                        file,
                        msg: e.to_string(),
                    })?;
            if let Some(ioc) = iocost {
                qos.push(Box::new(ioc));
            }
            let iotrack =
                crate::block::iotrack::IoTrack::new(&d.info, &cfg.cgroups).map_err(|(cg, e)| {
                    SetupError::Cgroup {
                        cgroup: cfg.cgroups.get(cg).path.clone(),
                        file: "io.iotrack.lat_thresh".into(),
                        msg: e.to_string(),
                    }
                })?;
            qos.push(Box::new(iotrack));
            devs.push(Dev {
                info: d.info.clone(),
                st: DevState {
                    throttle,
                    throttle_armed: Armed::default(),
                    model,
                    elv,
                    qos_armed: vec![Armed::default(); qos.len()],
                    qos,
                    elv_armed: Armed::default(),
                    tags_used: 0,
                    tag_waiters: VecDeque::new(),
                    in_device: 0,
                    diskstats: crate::block::diskstats::DiskStats::new(cfg.hz),
                    rqs_done: 0,
                    bios_done: 0,
                },
            });
        }
        let blk_ioprio =
            crate::block::blk_ioprio::BlkIoprio::new(&cfg.cgroups).map_err(|(cg, e)| {
                SetupError::Cgroup {
                    cgroup: cfg.cgroups.get(cg).path.clone(),
                    file: "io.prio.class".into(),
                    msg: e.to_string(),
                }
            })?;
        let mut sim = Sim {
            blk_ioprio,
            now: 0,
            seed: cfg.seed,
            hz: cfg.hz,
            switches: cfg.switches,
            cgroups: cfg.cgroups,
            cpu: cfg.cpu,
            q: EventQueue::default(),
            devs,
            bios: Slab::default(),
            reqs: Slab::default(),
            jobs: Vec::new(),
            trace,
            writes: cfg.writes,
            time_limit: cfg.time_limit,
            jobs_running: 0,
            released: Vec::new(),
            peak_bios: 0,
            running_job: None,
            pc: None,
        };
        if cfg.jobs.iter().any(crate::mm::filemap::uses_pagecache) {
            cfg.pagecache.validate().map_err(|msg| SetupError::Job {
                job: "[pagecache]".into(),
                msg,
            })?;
            let caps: Vec<u64> = sim.devs.iter().map(|d| d.info.capacity_bytes).collect();
            // bdi->io_pages: the queue's max_sectors in pages (disk_update_readahead).
            let io_pages: Vec<u64> = sim
                .devs
                .iter()
                .map(|d| d.info.max_bytes() as u64 / crate::mm::PAGE_SIZE)
                .collect();
            sim.pc = Some(Box::new(crate::mm::filemap::PcSys::new(
                cfg.pagecache.clone(),
                &cfg.jobs,
                &caps,
                &io_pages,
                cfg.seed,
                crate::block::content_activity::Mode::from_switches(&sim.switches),
            )));
        }
        for (i, jc) in cfg.jobs.into_iter().enumerate() {
            if jc.dev as usize >= sim.devs.len() {
                return Err(SetupError::Job {
                    job: jc.spec.name.clone(),
                    msg: "device index out of range".into(),
                });
            }
            let cap = sim.devs[jc.dev as usize].info.capacity_bytes;
            let job = Job::new(i as JobId, jc, cap, sim.seed)
                .map_err(|(job, msg)| SetupError::Job { job, msg })?;
            sim.jobs.push(job);
        }
        for i in 0..sim.writes.len() {
            let at = sim.writes[i].at;
            sim.q.push(at, Ev::Write(i as u32));
        }
        for j in 0..sim.jobs.len() {
            sim.start_job(j as JobId);
        }
        Ok(sim)
    }

    /// Add an rq_qos controller to a device's chain (in chain order).
    pub fn push_qos(&mut self, dev: DevId, q: Box<dyn RqQos>) {
        let d = &mut self.devs[dev as usize].st;
        d.qos.push(q);
        d.qos_armed.push(Armed::default());
    }

    /// Borrow a device's rq_qos member of type T (for reports).
    pub fn qos<T: 'static>(&self, dev: DevId) -> Option<&T> {
        self.devs[dev as usize]
            .st
            .qos
            .iter()
            .find_map(|q| q.as_any().downcast_ref::<T>())
    }

    pub fn now(&self) -> Ns {
        self.now
    }
    pub fn cgroups(&self) -> &CgroupTree {
        &self.cgroups
    }
    pub fn device_info(&self, dev: DevId) -> &DeviceInfo {
        &self.devs[dev as usize].info
    }
    pub fn nr_devices(&self) -> usize {
        self.devs.len()
    }

    /// The blk-iotrack view of device `dev` now: the /sys/block/DEV/stat fields
    /// and the counters of `/` and of each cgroup in `cgroups` (the tool's -g list).
    pub fn iotrack_sample(
        &self,
        dev: DevId,
        cgroups: &[CgId],
    ) -> crate::block::iotrack::report::Sample {
        let d = &self.devs[dev as usize];
        let it =
            d.st.qos
                .iter()
                .find_map(|q| q.as_any().downcast_ref::<crate::block::iotrack::IoTrack>());
        let mut cgs = Vec::new();
        for &cg in std::iter::once(&crate::block::blk_cgroup::ROOT).chain(
            cgroups
                .iter()
                .filter(|&&c| c != crate::block::blk_cgroup::ROOT),
        ) {
            let c = it.map(|t| t.counters(cg).clone()).unwrap_or_default();
            cgs.push((self.cgroups.get(cg).path.clone(), c));
        }
        crate::block::iotrack::report::Sample {
            time_ns: self.now,
            dev_name: d.info.name.clone(),
            dev: d.st.diskstats.stat_fields(self.now),
            cgroups: cgs,
        }
    }

    /// What `cat /sys/block/DEV/stat` would print now.
    pub fn disk_stat_line(&self, dev: DevId) -> String {
        self.devs[dev as usize].st.diskstats.stat_line(self.now)
    }

    /// What `cat CGROUP/io.iotrack.stat` would print now, for every device.
    pub fn iotrack_stat_file(&self, cg: CgId) -> String {
        let mut s = String::new();
        for d in &self.devs {
            if let Some(t) =
                d.st.qos
                    .iter()
                    .find_map(|q| q.as_any().downcast_ref::<crate::block::iotrack::IoTrack>())
            {
                s.push_str(&t.stat_file(cg));
            }
        }
        s
    }

    /// A controller context for device `dev` (borrows disjoint fields).
    pub(crate) fn ctx_parts(&mut self, dev: DevId) -> (Ctx<'_>, &mut DevState) {
        let d = &mut self.devs[dev as usize];
        let ctx = Ctx {
            now: self.now,
            hz: self.hz,
            dev: &d.info,
            cgroups: &self.cgroups,
            switches: &self.switches,
            trace: &mut self.trace,
        };
        (ctx, &mut d.st)
    }

    /// Run until every job finished (or the time limit).
    pub fn run(&mut self) -> RunResult {
        self.run_until(Ns::MAX);
        self.finish()
    }

    /// Schedule an observer tick at `t` (it does nothing when it runs): a
    /// `run_until(t)` then stops with the clock exactly at `t`, and no job's
    /// inline sleep can carry the clock past it.
    pub fn observe_at(&mut self, t: Ns) {
        self.q.push(t, Ev::Observe);
    }

    /// Process events up to and including instant `t`; returns false when nothing is left to do.
    pub fn run_until(&mut self, t: Ns) -> bool {
        loop {
            if self.jobs_running == 0 {
                return false;
            }
            let Some(nt) = self.q.peek_time() else {
                return false;
            };
            if nt > t {
                return true;
            }
            if let Some(lim) = self.time_limit {
                if nt > lim {
                    self.now = lim;
                    self.jobs_running = 0;
                    return false;
                }
            }
            let (et, ev) = self.q.pop().expect("peeked");
            debug_assert!(et >= self.now, "time went backwards");
            self.now = et;
            self.dispatch_event(ev);
        }
    }

    fn dispatch_event(&mut self, ev: Ev) {
        match ev {
            Ev::Job(j) => self.job_wake(j),
            Ev::Complete(d, r) => self.complete_request(d, r),
            Ev::Throttle(d) => self.throttle_timer(d),
            Ev::Qos(d, i) => self.qos_timer(d, i as usize),
            Ev::Elevator(d) => {
                let dd = &mut self.devs[d as usize].st;
                if dd.elv_armed.0 == Some(self.now) {
                    dd.elv_armed.0 = None;
                    self.run_queue(d);
                }
            }
            Ev::Sample(j) => self.job_sample(j),
            Ev::RampEnd(j) => self.job_ramp_end(j),
            Ev::Write(i) => self.apply_write(i as usize),
            Ev::Observe => {}
            Ev::Flusher(d) => self.flusher_event(d),
        }
    }

    fn apply_write(&mut self, i: usize) {
        let w = self.writes[i].clone();
        for d in 0..self.devs.len() as DevId {
            let mut released = std::mem::take(&mut self.released);
            {
                let (mut ctx, dev) = self.ctx_parts(d);
                if w.file == "io.max" {
                    let named = crate::sim::kerr::split_devno(&w.value)
                        .map(|(mm, _)| mm == (ctx.dev.major, ctx.dev.minor))
                        .unwrap_or(false);
                    if named {
                        let r = dev.throttle.write_io_max(&mut ctx, w.cgroup, &w.value);
                        debug_assert!(r.is_ok(), "timed io.max write rejected at run time: {r:?}");
                    }
                }
                for q in dev.qos.iter_mut() {
                    if let Some(Err(_e)) = q.write_file(&mut ctx, w.cgroup, &w.file, &w.value) {
                        // Validated before the run starts; a failure here is a model bug.
                        debug_assert!(false, "timed write rejected at run time");
                    }
                }
            }
            self.cgroups.write_file(w.cgroup, &w.file, &w.value);
            self.continue_released(d, &mut released);
            self.released = released;
            self.rearm_qos(d);
            self.rearm_throttle(d);
        }
    }

    /// This controller's io.stat fields of cgroup `cg` on every device, as
    /// `MAJ:MIN key=value ...` lines.
    pub fn io_stat(&self, cg: CgId) -> String {
        let mut s = String::new();
        for d in &self.devs {
            let mut fields = String::new();
            for q in &d.st.qos {
                fields.push_str(&q.io_stat(cg));
            }
            let t = d.st.throttle.io_stat(cg);
            if !t.is_empty() {
                fields.push(' ');
                fields.push_str(t.trim());
            }
            if !fields.trim().is_empty() {
                s.push_str(&format!("{}{}\n", d.info.devno(), fields));
            }
        }
        s
    }

    fn finish(&mut self) -> RunResult {
        let mut jobs = Vec::new();
        for j in &mut self.jobs {
            j.finalize(self.now);
        }
        for j in &self.jobs {
            jobs.push(JobResult {
                name: j.cfg.spec.name.clone(),
                end_ns: j.end_ns(self.now),
                clone: j.cfg.clone,
                groupid: j.cfg.groupid,
                cgroup: self.cgroups.get(j.cfg.cgroup).path.clone(),
                device: self.devs[j.cfg.dev as usize].info.name.clone(),
                stats: j.stats.clone(),
            });
        }
        RunResult {
            jobs,
            end_time: self.now,
            events: self.q.processed(),
            bios_completed: self.devs.iter().map(|d| d.st.bios_done).sum(),
            peak_bios_in_flight: self.peak_bios,
            devices: self
                .devs
                .iter()
                .map(|d| DeviceResult {
                    name: d.info.name.clone(),
                    stat: d.st.diskstats.stat_fields(self.now),
                    requests: d.st.rqs_done,
                    bios: d.st.bios_done,
                })
                .collect(),
            pagecache: self.pc.as_ref().map(|p| p.report()),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;
