//! The simulated machine: the kernel (`kernel.rs`) and the workload joined
//! at the system-call seam, set up from a scenario's configuration and run
//! by one event loop. The block-layer path is in `block/blk_mq.rs`, the fio
//! job model in `workload/fio/`.

mod config;
pub(crate) mod kblockd;
pub(crate) mod kernel;
mod kthrotld;
mod loop_worker;
mod phases;
mod sched;
mod stacking;

pub use crate::sim::cpu::CpuCosts;
pub use crate::workload::JobConfig;
pub use config::{
    DeviceConfig, DeviceResult, JobResult, RunResult, SetupError, SimConfig, TimedWrite, WbtConfig,
};
pub use phases::{PhaseMark, PhaseSnapshot, PhaseSpec};
pub use stacking::{resolve_one, resolve_stacking, StackError, StackErrorKind};

use crate::block::blk_cgroup::{CgId, CgroupTree};
use crate::block::blk_mq::BlkMq;
use crate::block::elevator;
use crate::block::layer::{BlkHost, BlockLayer, Dev, DevState};
use crate::block::rq_qos::RqQos;
use crate::drivers::DeviceInfo;
use crate::mm::flusher::Flusher;
use crate::mm::pcsys::PcOpen;
use crate::sim::clock::{Armed, Clock};
use crate::sim::engine::{DevId, Ev, JobId};
use crate::sim::slab::Slab;
use crate::sim::time::Ns;
use crate::sim::trace::Tracer;
use crate::workload::fio::Job;
use crate::workload::Workload;
use kernel::Kernel;

/// With more jobs than this, the event loop asks the CPU to start loading
/// the state of the jobs it will wake next (`Workload::prefetch_jobs`):
/// a few jobs' state stays in the cache anyway.
const PREFETCH_JOBS_MIN: usize = 16;

/// The whole simulated machine.
pub struct Sim {
    pub(crate) k: Kernel,
    pub(crate) wl: Workload,
    pub(crate) seed: u64,
    pub(crate) writes: Vec<TimedWrite>,
    /// The run's phases and what was seen at their boundaries (phases.rs);
    /// None for a run in one piece.
    pub(crate) phases: Option<Box<phases::Phases>>,
}

impl Sim {
    pub fn new(cfg: SimConfig, trace: Tracer) -> Result<Sim, SetupError> {
        Sim::build(cfg, trace, Vec::new())
    }

    fn build(cfg: SimConfig, trace: Tracer, plan: Vec<PhaseSpec>) -> Result<Sim, SetupError> {
        if cfg.cpu.cpus.nr > 0 {
            let fair = cfg.switches.get("sched.fair");
            cfg.cpu
                .cpus
                .features
                .check_for(fair)
                .map_err(|e| SetupError::Host {
                    msg: format!("sched_features {e}"),
                })?;
        }
        let mut devs = Vec::new();
        let lowers = resolve_stacking(&cfg.devices).map_err(|e| SetupError::Device {
            dev: cfg.devices[e.dev].info.name.clone(),
            msg: e.to_string(),
        })?;
        for (d, &lower) in cfg.devices.iter().zip(&lowers) {
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
            let min_shallow_depth = elv.min_shallow_depth();
            let mut throttle =
                crate::block::throttle::Throttle::new(&d.info, &cfg.cgroups, cfg.hz, &cfg.switches)
                    .map_err(|(cg, e)| SetupError::Cgroup {
                        cgroup: cfg.cgroups.get(cg).path.clone(),
                        file: "io.max".into(),
                        msg: e.to_string(),
                    })?;
            // held bios leave through a kworker (machine/kthrotld.rs)
            if cfg.cpu.cpus.nr > 0 && cfg.cpu.cpus.kthrotld {
                throttle.issue_by_work();
            }
            // The rq_qos chain in the kernel's order. `rq_qos_add` puts a
            // policy at the head of the chain, so the chain runs in reverse
            // order of set-up: blk-wbt is added when the disk is registered
            // (last in the chain), blk-iocost when io.cost.* is first
            // written, blk-iolatency when io.latency is first written (the
            // model takes the root's io.cost.* to be written before the
            // children's io.latency, so iolatency runs first). blk-iotrack,
            // which only watches, is last.
            let mut qos: Vec<Box<dyn RqQos>> = Vec::new();
            let iocost =
                crate::block::iocost::IoCost::new(&d.info, &cfg.cgroups, cfg.hz, &cfg.switches)
                    .map_err(|(cg, file, e)| SetupError::Cgroup {
                        cgroup: cfg.cgroups.get(cg).path.clone(),
                        file,
                        msg: e.to_string(),
                    })?;
            let iocost_enabled = iocost.as_ref().is_some_and(|i| i.enabled);
            let timed_latency = cfg.writes.iter().any(|w| w.file == "io.latency");
            let iolatency =
                crate::block::iolatency::IoLatency::new(&d.info, &cfg.cgroups, timed_latency)
                    .map_err(|(cg, e)| SetupError::Cgroup {
                        cgroup: cfg.cgroups.get(cg).path.clone(),
                        file: "io.latency".into(),
                        msg: e.to_string(),
                    })?;
            if lower.is_some_and(|l| l.bio_based()) {
                // `ioc_qos_write`/`ioc_cost_model_write` refuse a bio-based
                // queue (EOPNOTSUPP); blk-iolatency has no requests to watch
                let file = match (&iocost, &iolatency) {
                    (Some(_), _) => Some("io.cost.qos"),
                    (None, Some(_)) => Some("io.latency"),
                    (None, None) => None,
                };
                if let Some(file) = file {
                    return Err(SetupError::Device {
                        dev: d.info.name.clone(),
                        msg: format!(
                            "{file}: a dm-linear device is bio-based and has no rq_qos policies (EOPNOTSUPP)"
                        ),
                    });
                }
            }
            if let Some(lat) = iolatency {
                qos.push(Box::new(lat));
            }
            if let Some(ioc) = iocost {
                qos.push(Box::new(ioc));
            }
            if let Some(w) = &d.wbt {
                // `blk_queue_depth`: the depth a SCSI driver sets (the model's
                // queue_depth); drivers that set none make it nr_requests
                qos.push(Box::new(crate::block::wbt::Wbt::new(
                    d.info.rotational,
                    d.info.queue_depth,
                    w.write_cache,
                    w.setup,
                    d.scheduler == "bfq",
                    iocost_enabled,
                )));
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
            let (qos_hooks, qos_any) = crate::block::layer::chain_hooks(&qos);
            devs.push(Dev {
                info: d.info.clone(),
                st: DevState {
                    throttle,
                    throttle_armed: Armed::default(),
                    model,
                    lower,
                    loop_worker: d.model.loop_worker(),
                    elv_hooks: crate::block::elevator::ElvHooks::of(&*elv),
                    elv,
                    qos_armed: vec![Armed::default(); qos.len()],
                    qos_hooks,
                    qos_any,
                    qos,
                    elv_armed: Armed::default(),
                    tag_bits: crate::block::sbitmap::TagBitmap::new(d.info.nr_requests),
                    tag_waiters: crate::block::sbitmap::TagWaiters::new(
                        d.info.nr_requests,
                        min_shallow_depth,
                    ),
                    tag_woken: Vec::new(),
                    in_device: 0,
                    idle_wake_ns: d.idle_wake_ns,
                    diskstats: crate::block::diskstats::DiskStats::new(cfg.hz),
                    rqs_done: 0,
                    bios_done: 0,
                },
            });
        }
        let blk_ioprio = crate::block::blk_ioprio::BlkIoprio::new(
            &cfg.cgroups,
            crate::block::blk_ioprio::PolicyTable::from_switches(&cfg.switches),
        )
        .map_err(|(cg, e)| SetupError::Cgroup {
            cgroup: cfg.cgroups.get(cg).path.clone(),
            file: "io.prio.class".into(),
            msg: e.to_string(),
        })?;
        let pc = if cfg.jobs.iter().any(JobConfig::uses_pagecache) {
            cfg.pagecache.validate().map_err(|msg| SetupError::Job {
                job: "[pagecache]".into(),
                msg,
            })?;
            let caps: Vec<u64> = devs.iter().map(|d| d.info.capacity_bytes).collect();
            // bdi->io_pages: the queue's max_sectors in pages (disk_update_readahead).
            let io_pages: Vec<u64> = devs
                .iter()
                .map(|d| d.info.max_bytes() as u64 / crate::mm::PAGE_SIZE)
                .collect();
            let users: Vec<Option<PcOpen>> = cfg
                .jobs
                .iter()
                .map(|jc| pc_open(jc, caps.get(jc.dev as usize).copied().unwrap_or(0)))
                .collect();
            Some(Box::new(crate::mm::pcsys::PcSys::new(
                cfg.pagecache.clone(),
                &users,
                &caps,
                &io_pages,
                cfg.seed,
                crate::block::content_activity::Mode::from_switches(&cfg.switches),
            )))
        } else {
            None
        };
        let mut sim = Sim {
            k: Kernel {
                clk: Clock {
                    time_limit: cfg.time_limit,
                    ..Clock::default()
                },
                cpu: cfg.cpu,
                cpus: crate::sim::cpus::Cpus::new(
                    crate::sim::host_cpus::HostCpus {
                        fair: crate::sim::host_cpus::FairModel::of(cfg.switches.get("sched.fair")),
                        tick_ns: cfg.hz.ns_per_jiffy(),
                        ..cfg.cpu.cpus
                    },
                    cfg.jobs.len(),
                    cfg.seed,
                ),
                loop_workers: Default::default(),
                kblockd: Default::default(),
                kthrotld: Default::default(),
                tag_resume: Default::default(),
                blk: BlockLayer {
                    hz: cfg.hz,
                    submit_bio_plug: cfg.switches.is("blk_mq.submit_bio_plug", "on"),
                    switches: cfg.switches,
                    cgroups: cfg.cgroups,
                    devs,
                    bios: Slab::default(),
                    reqs: Slab::default(),
                    blk_ioprio,
                    trace,
                    released: Vec::new(),
                    peak_bios: 0,
                    submit_cpu_ns: None,
                },
                pc,
            },
            wl: Workload {
                reap_every_call: cfg.cpu.cpus.nr > 0 && cfg.cpu.cpus.reap_every_call,
                ..Workload::default()
            },
            seed: cfg.seed,
            writes: cfg.writes,
            phases: None,
        };
        // the scheduler's tracepoints, on a host with CPUs
        if sim.k.blk.trace.trace_tasks(sim.k.cpu.cpus.nr) {
            sim.k.cpus.trace_sched();
            for j in 0..cfg.jobs.len() as u32 {
                sim.k
                    .blk
                    .trace
                    .name_task(j, crate::sim::sched_tracepoints::TaskName::fio(j));
            }
        }
        for (i, jc) in cfg.jobs.into_iter().enumerate() {
            if jc.dev as usize >= sim.k.blk.devs.len() {
                return Err(SetupError::Job {
                    job: jc.spec.name.clone(),
                    msg: "device index out of range".into(),
                });
            }
            let cap = sim.k.blk.devs[jc.dev as usize].info.capacity_bytes;
            let job = Job::new(i as JobId, jc, cap, sim.seed)
                .map_err(|(job, msg)| SetupError::Job { job, msg })?;
            sim.wl.jobs.push(job);
        }
        sim.wl.plan_map_hints();
        for i in 0..sim.writes.len() {
            let at = sim.writes[i].at;
            sim.k.clk.q.push(at, Ev::Write(i as u32));
        }
        if plan.is_empty() {
            for j in 0..sim.wl.jobs.len() {
                sim.wl.start_job(&mut sim.k, j as JobId);
            }
        } else {
            sim.start_phases(plan)?;
        }
        Ok(sim)
    }

    /// Add an rq_qos controller to a device's chain (in chain order).
    pub fn push_qos(&mut self, dev: DevId, q: Box<dyn RqQos>) {
        let d = &mut self.k.blk.devs[dev as usize].st;
        d.qos.push(q);
        d.qos_armed.push(Armed::default());
        d.note_qos_members();
    }

    /// Borrow a device's rq_qos member of type T (for reports).
    pub fn qos<T: 'static>(&self, dev: DevId) -> Option<&T> {
        self.k.blk.devs[dev as usize]
            .st
            .qos
            .iter()
            .find_map(|q| q.as_any().downcast_ref::<T>())
    }

    pub fn now(&self) -> Ns {
        self.k.clk.now
    }
    pub fn cgroups(&self) -> &CgroupTree {
        &self.k.blk.cgroups
    }
    pub fn device_info(&self, dev: DevId) -> &DeviceInfo {
        &self.k.blk.devs[dev as usize].info
    }
    pub fn nr_devices(&self) -> usize {
        self.k.blk.devs.len()
    }

    /// Make job `j` (an index into `SimConfig::jobs`) replay `r` instead of
    /// drawing I/Os from its fio options. Call before running. Every I/O must
    /// fit on the job's device.
    pub fn set_replay(
        &mut self,
        j: JobId,
        r: crate::workload::replay::Replay,
    ) -> Result<(), String> {
        let Some(job) = self.wl.jobs.get(j as usize) else {
            return Err(format!("no job #{j}"));
        };
        let cap = self.k.blk.devs[job.cfg.dev as usize].info.capacity_bytes;
        r.check_fits(cap)?;
        self.wl.jobs[j as usize].replay = Some(Box::new(r));
        Ok(())
    }

    /// Whether blk-iotrack counts the bios of this run (on by default). Its
    /// figures are read only through [`iotrack_sample`](Self::iotrack_sample)
    /// and [`iotrack_stat_file`](Self::iotrack_stat_file); a caller that
    /// reads neither turns counting off before the run to save its per-bio
    /// cost. Nothing else in the run changes: blk-iotrack only watches.
    pub fn set_iotrack_counting(&mut self, on: bool) {
        for d in &mut self.k.blk.devs {
            for q in d.st.qos.iter_mut() {
                if let Some(t) = q
                    .as_any_mut()
                    .downcast_mut::<crate::block::iotrack::IoTrack>()
                {
                    t.set_counting(on);
                }
            }
            d.st.note_qos_members();
        }
    }

    /// The blk-iotrack view of device `dev` now: the /sys/block/DEV/stat fields
    /// and the counters of `/` and of each cgroup in `cgroups` (the tool's -g list).
    pub fn iotrack_sample(
        &self,
        dev: DevId,
        cgroups: &[CgId],
    ) -> crate::block::iotrack::report::Sample {
        let now = self.k.clk.now;
        let d = &self.k.blk.devs[dev as usize];
        let it =
            d.st.qos
                .iter()
                .find_map(|q| q.as_any().downcast_ref::<crate::block::iotrack::IoTrack>());
        debug_assert!(
            it.is_none_or(|t| t.counting()),
            "blk-iotrack read in a run that turned its counting off"
        );
        let mut cgs = Vec::new();
        for &cg in std::iter::once(&crate::block::blk_cgroup::ROOT).chain(
            cgroups
                .iter()
                .filter(|&&c| c != crate::block::blk_cgroup::ROOT),
        ) {
            let c = it.map(|t| t.counters(cg).clone()).unwrap_or_default();
            cgs.push((self.k.blk.cgroups.get(cg).path.clone(), c));
        }
        crate::block::iotrack::report::Sample {
            time_ns: now,
            dev_name: d.info.name.clone(),
            dev: d.st.diskstats.stat_fields(now),
            cgroups: cgs,
        }
    }

    /// What `cat /sys/block/DEV/stat` would print now.
    pub fn disk_stat_line(&self, dev: DevId) -> String {
        self.k.blk.devs[dev as usize]
            .st
            .diskstats
            .stat_line(self.k.clk.now)
    }

    /// What `cat CGROUP/io.iotrack.stat` would print now, for every device.
    pub fn iotrack_stat_file(&self, cg: CgId) -> String {
        let mut s = String::new();
        for d in &self.k.blk.devs {
            if let Some(t) =
                d.st.qos
                    .iter()
                    .find_map(|q| q.as_any().downcast_ref::<crate::block::iotrack::IoTrack>())
            {
                debug_assert!(
                    t.counting(),
                    "blk-iotrack read in a run that turned its counting off"
                );
                s.push_str(&t.stat_file(cg));
            }
        }
        s
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
        self.k.clk.q.push(t, Ev::Observe);
    }

    /// Process events up to and including instant `t`; returns false when nothing is left to do.
    pub fn run_until(&mut self, t: Ns) -> bool {
        loop {
            if self.wl.jobs_running == 0 && !self.wl.phases_open {
                return false;
            }
            let clk = &mut self.k.clk;
            let Some(next) = clk.q.next() else {
                return false;
            };
            let nt = next.t;
            if nt > t {
                return true;
            }
            if let Some(lim) = clk.time_limit {
                if nt > lim {
                    clk.now = lim;
                    self.wl.jobs_running = 0;
                    self.wl.phases_open = false;
                    return false;
                }
            }
            let (et, ev) = clk.q.take(next);
            debug_assert!(et >= clk.now, "time went backwards");
            clk.now = et;
            if self.wl.jobs.len() > PREFETCH_JOBS_MIN {
                self.wl.prefetch_jobs(clk.q.upcoming_jobs());
            }
            self.dispatch_event(ev);
        }
    }

    fn dispatch_event(&mut self, ev: Ev) {
        let (k, wl) = (&mut self.k, &mut self.wl);
        if k.cpus.enabled() {
            let ctx = sched::context(k, ev);
            k.cpus.set_context(ctx);
        }
        if k.cpus.enabled() && sched::dispatch(k, wl, ev) {
            return;
        }
        match ev {
            Ev::Job(j) => wl.job_wake(k, j),
            Ev::Complete(d, r) => k.with(wl).complete_request(d, r),
            Ev::Throttle(d) => k.with(wl).throttle_timer(d),
            Ev::Qos(d, i) => k.with(wl).qos_timer(d, i as usize),
            Ev::Elevator(d) => k.with(wl).elevator_timer(d),
            Ev::Sample(j) => wl.job_sample(k, j),
            Ev::RampEnd(j) => wl.job_ramp_end(j),
            Ev::Write(i) if self.writes[i as usize].at == phases::DROPPED => {}
            Ev::Write(i) => {
                // refused writes were reported by `check_writes` before the run
                let r = self.apply_write(i as usize);
                debug_assert!(r.is_ok(), "timed write rejected at run time: {r:?}");
            }
            Ev::Observe => {}
            Ev::Flusher(d) => k.with(wl).flusher_event(d),
            // a host with CPUs took these in `sched::dispatch`
            Ev::Wake(j) => wl.job_wake(k, j),
            Ev::IrqDone(d, r) => k.with(wl).complete_request(d, r),
            Ev::LoopWork(w) => k.with(wl).loop_work(w),
            Ev::Kblockd(d) => k.with(wl).kblockd_work(d),
            Ev::Kthrotld(d) => k.with(wl).kthrotld_event(d),
            Ev::PhaseEnd => self.phase_end(),
            Ev::PhaseStart => self.phase_start(),
        }
    }

    /// Apply timed write `i` on every device, as the kernel's write handler
    /// of the file would: io.max through blk-throttle (`tg_set_limit`), the
    /// rq_qos files through their controllers, io.prio.class through
    /// blk-ioprio (`ioprio_set_prio_policy`). Returns the first error; a
    /// failed write changes nothing it failed on. `check_writes` runs every
    /// write this way before a run, so a run never meets one that fails.
    fn apply_write(&mut self, i: usize) -> Result<(), crate::sim::kerr::KernelError> {
        let w = self.writes[i].clone();
        let now = self.k.clk.now;
        let mut first_err = None;
        if w.file == "io.prio.class" {
            if let Err(e) = self.k.blk.blk_ioprio.write(w.cgroup, &w.value) {
                first_err.get_or_insert(e);
            }
        }
        for d in 0..self.k.blk.devs.len() as DevId {
            let b = &mut self.k.blk;
            let mut released = std::mem::take(&mut b.released);
            {
                let (mut ctx, dev) = b.ctx_parts(now, d);
                if w.file == "io.max" {
                    let named = crate::sim::kerr::split_devno(&w.value)
                        .map(|(mm, _)| mm == (ctx.dev.major, ctx.dev.minor))
                        .unwrap_or(false);
                    if named {
                        if let Err(e) = dev.throttle.write_io_max(&mut ctx, w.cgroup, &w.value) {
                            first_err.get_or_insert(e);
                        }
                    }
                }
                let mut qos_written = false;
                for q in dev.qos.iter_mut() {
                    match q.write_file(&mut ctx, w.cgroup, &w.file, &w.value) {
                        Some(Err(e)) => {
                            first_err.get_or_insert(e);
                        }
                        Some(Ok(())) => qos_written |= w.file == "io.cost.qos",
                        None => {}
                    }
                }
                if qos_written {
                    iocost_wbt_default(dev);
                }
            }
            let mut k = self.k.with(&mut self.wl);
            k.continue_released(d, &mut released);
            k.blk().released = released;
            k.rearm_qos(d);
            k.rearm_throttle(d);
        }
        match first_err {
            Some(e) => Err(e),
            None => {
                self.k.blk.cgroups.write_file(w.cgroup, &w.file, &w.value);
                Ok(())
            }
        }
    }

    /// Every timed write of `cfg` applied, in the order a run applies them
    /// (by time, then as written), to a machine set up from `cfg` without
    /// its jobs: the writes the kernel would refuse, as (index into
    /// `cfg.writes`, error). The state a write meets (an io.cost.qos min
    /// against the max written before) is the state the run would have.
    pub fn check_writes(
        cfg: &SimConfig,
    ) -> Result<Vec<(usize, crate::sim::kerr::KernelError)>, SetupError> {
        let bare = SimConfig {
            jobs: Vec::new(),
            ..cfg.clone()
        };
        let mut sim = Sim::new(bare, Tracer::new(None))?;
        let mut order: Vec<usize> = (0..sim.writes.len()).collect();
        order.sort_by_key(|&i| sim.writes[i].at);
        let mut errs = Vec::new();
        for i in order {
            if let Err(e) = sim.apply_write(i) {
                errs.push((i, e));
            }
        }
        Ok(errs)
    }

    /// This controller's io.stat fields of cgroup `cg` on every device, as
    /// `MAJ:MIN key=value ...` lines.
    pub fn io_stat(&self, cg: CgId) -> String {
        let mut s = String::new();
        for d in &self.k.blk.devs {
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
        let now = self.k.clk.now;
        let b = &self.k.blk;
        for (i, j) in self.wl.jobs.iter_mut().enumerate() {
            j.finalize(now);
            if self.k.cpus.enabled() {
                // its kernel bursts are its sys time; fio's own user-space
                // time is not modelled (usr stays 0)
                let (sys_ns, ctx) = self.k.cpus.usage(i as JobId, j.end_ns(now));
                j.stats.sys_time_ns = sys_ns;
                j.stats.ctx = ctx;
            }
        }
        let jobs = self
            .wl
            .jobs
            .iter_mut()
            .map(|j| JobResult {
                name: j.cfg.spec.name.clone(),
                end_ns: j.end_ns(now),
                clone: j.cfg.clone,
                groupid: j.cfg.groupid,
                cgroup: b.cgroups.get(j.cfg.cgroup).path.clone(),
                device: b.devs[j.cfg.dev as usize].info.name.clone(),
                // moved, not copied: the run is over and the result owns them
                stats: std::mem::take(&mut j.stats),
            })
            .collect();
        RunResult {
            jobs,
            end_time: now,
            events: self.k.clk.q.processed(),
            bios_completed: b.devs.iter().map(|d| d.st.bios_done).sum(),
            peak_bios_in_flight: b.peak_bios,
            devices: b
                .devs
                .iter()
                .map(|d| DeviceResult {
                    name: d.info.name.clone(),
                    stat: d.st.diskstats.stat_fields(now),
                    requests: d.st.rqs_done,
                    bios: d.st.bios_done,
                    wbt: d.st.qos.iter().find_map(|q| {
                        q.as_any()
                            .downcast_ref::<crate::block::wbt::Wbt>()
                            .map(|w| w.describe())
                    }),
                })
                .collect(),
            pagecache: self.k.pc.as_ref().map(|p| p.report()),
        }
    }
}

/// The tail of `ioc_qos_write` (v6.2+): after a write of io.cost.qos,
/// `wbt_disable_default` when it left blk-iocost enabled, else
/// `wbt_enable_default`, which does nothing under bfq
/// (`ELEVATOR_FLAG_DISABLE_WBT`). Only a default-enabled wbt moves; a
/// value written to wbt_lat_usec stays.
fn iocost_wbt_default(dev: &mut DevState) {
    let enabled = dev.qos.iter().find_map(|q| {
        q.as_any()
            .downcast_ref::<crate::block::iocost::IoCost>()
            .map(|i| i.enabled())
    });
    let bfq = dev.elv.name() == "bfq";
    for q in dev.qos.iter_mut() {
        if let Some(w) = q.as_any_mut().downcast_mut::<crate::block::wbt::Wbt>() {
            match enabled {
                Some(true) => w.disable_default(),
                Some(false) if !bfq => w.enable_default(),
                _ => {}
            }
        }
    }
}

/// The page-cache file a job opens (`td_io_open_file`): one per distinct
/// (device, fio filename), jobs without a filename get fio's per-clone file
/// `name.CLONE.0`; the file occupies the job's region (offset, size) of the
/// device; random jobs advise POSIX_FADV_RANDOM, sequential ones
/// POSIX_FADV_SEQUENTIAL (`fadvise_hint`). None for a direct-I/O job.
fn pc_open(jc: &JobConfig, cap: u64) -> Option<PcOpen> {
    use blklab_fio::options::{Engine, Fadvice};
    if !jc.uses_pagecache() {
        return None;
    }
    let s = &jc.spec;
    let base = s.offset.min(cap);
    let len = s.size.unwrap_or(cap - base).min(cap - base);
    let name = s
        .filename
        .clone()
        .unwrap_or_else(|| format!("{}.{}.0", s.name, jc.clone));
    let mmap = s.ioengine == Engine::Mmap;
    // The mmap engine's madvise is not modelled: memory users stand for
    // programs that map without advice (docs/fidelity/pagecache.md).
    let advice = if mmap {
        None
    } else {
        s.fadvise_hint.advice(s.rw.is_random())
    };
    Some(PcOpen {
        dev: jc.dev,
        cg: jc.cgroup,
        name,
        base,
        len,
        mmap,
        fadv_random: advice == Some(Fadvice::Random),
        fadv_sequential: advice == Some(Fadvice::Sequential),
    })
}

#[cfg(test)]
pub(crate) mod tests;
