//! The kernel side of the machine: the clock, the host's CPU costs, the
//! block layer and the page cache, and how their calls up reach a bio's
//! owner. It implements the system calls a workload makes.

use crate::block::bio::{Bio, BioFlags, Op, Origin};
use crate::block::blk_cgroup::CgId;
use crate::block::blk_mq::BlkMq;
use crate::block::ioprio::Ioprio;
use crate::block::layer::{BlkHost, BlockLayer};
use crate::mm::filemap::Filemap;
use crate::mm::flusher::Flusher;
use crate::mm::pcsys::{MmHost, PcSys};
use crate::sim::clock::Clock;
use crate::sim::cpu::CpuCosts;
use crate::sim::engine::{DevId, Ev, JobId};
use crate::sim::time::Ns;
use crate::syscall::{BufferedIo, DirectIo, Syscalls, Tasks};

/// Everything below the system-call seam.
pub(crate) struct Kernel {
    pub clk: Clock,
    pub cpu: CpuCosts,
    /// The host's CPUs and run queue (none: the free host).
    pub cpus: crate::sim::cpus::Cpus,
    /// The loop devices' workers (`machine::loop_worker`).
    pub loop_workers: crate::drivers::loop_worker::LoopWorkers,
    /// The devices' kblockd queue runs (`machine::kblockd`).
    pub kblockd: crate::block::kblockd::Kblockd,
    /// The devices' blk-throttle dispatch work (`machine::kthrotld`).
    pub kthrotld: crate::block::kthrotld::Kthrotld,
    pub blk: BlockLayer,
    /// The page cache, when a task does buffered I/O or maps a file.
    pub pc: Option<Box<PcSys>>,
    /// Jobs woken from a sleep for a request tag on a host with CPUs, and
    /// the device and sleeper their `blk_mq_get_tag` loop resumes with
    /// when they next run (`BlkHost::defer_tag_retry`).
    pub tag_resume: std::collections::BTreeMap<JobId, (DevId, crate::block::sbitmap::TagSleeper)>,
}

impl Kernel {
    /// The kernel at work on behalf of `tasks` (the event or call being
    /// handled), so that its calls up can reach them.
    pub fn with<'a>(&'a mut self, tasks: &'a mut dyn Tasks) -> Running<'a> {
        Running { k: self, tasks }
    }
}

/// The kernel while it handles an event or a call: it can reach the tasks
/// its bios belong to.
pub(crate) struct Running<'a> {
    pub k: &'a mut Kernel,
    pub tasks: &'a mut dyn Tasks,
}

impl Running<'_> {
    /// A task's I/O ended in the kernel: it wakes after the completion's
    /// interrupt and its reap (`CpuCosts::reap_ns`) if it waits for it.
    fn task_completed(&mut self, task: JobId, io_u: u32) {
        let now = self.k.clk.now;
        let reap_ns = self.k.cpu.reap_ns;
        let wake = now + reap_ns;
        if self.tasks.io_done(task, io_u, wake) {
            if self.k.cpus.enabled() {
                self.k.wake_task(self.tasks, task, reap_ns);
            } else {
                self.k.clk.q.push(wake, Ev::Job(task));
            }
        }
    }
}

impl BlkHost for Running<'_> {
    fn blk(&mut self) -> &mut BlockLayer {
        &mut self.k.blk
    }
    fn clk(&mut self) -> &mut Clock {
        &mut self.k.clk
    }
    fn parts(&mut self) -> (&mut BlockLayer, &mut Clock) {
        (&mut self.k.blk, &mut self.k.clk)
    }
    fn now(&self) -> Ns {
        self.k.clk.now
    }

    fn bio_submitted(&mut self, origin: Origin, dev: DevId, cg: CgId) {
        match origin {
            Origin::Job { job, io_u } => {
                if self.tasks.submit_done(job, io_u) {
                    // the task slept in the kernel: the rest of its call
                    // runs now, then the way back to user space (the part
                    // of submit_ns after the bio: all of it on the free
                    // host, which spent none before)
                    let now = self.k.clk.now;
                    let (_, after_bio_ns) = self.k.cpu.submit_split();
                    let rest_ns = after_bio_ns + self.k.blk.return_delay(now, dev, cg);
                    if self.k.cpus.enabled() {
                        self.k.wake_task(self.tasks, job, rest_ns);
                    } else {
                        let t = now + rest_ns;
                        self.tasks.set_wake(job, t);
                        self.k.clk.q.push(t, Ev::Job(job));
                    }
                }
            }
            // the page cache's flusher waits in submit_bio too
            Origin::Kernel { tag } => self.pc_submit_done(tag),
            // fragments, and the bios of stacked devices, are submitted
            // by the block layer itself (a clone is told as its parent)
            Origin::Split { .. } | Origin::Stacked { .. } | Origin::Clone { .. } => {}
        }
    }

    fn loop_queue_work(&mut self, dev: DevId, rid: crate::block::request::ReqId) {
        self.loop_worker_queue(dev, rid);
    }

    #[inline]
    fn runs_on_kblockd(&self, dev: DevId) -> bool {
        self.k.runs_on_kblockd(dev)
    }

    fn kblockd_run_work(&mut self, dev: DevId) {
        self.k.kblockd_queue(dev)
    }

    fn kthrotld_queue_work(&mut self, dev: DevId) {
        self.k.kthrotld_queue(dev)
    }

    fn submitter_must_resched(&self, submitter: crate::block::request::Submitter) -> bool {
        match submitter {
            crate::block::request::Submitter::Job(j) => self.k.cpus.must_resched(j as _),
            _ => false,
        }
    }

    /// On a host with CPUs a job woken from a tag sleep runs the rest of
    /// `blk_mq_get_tag`'s loop (block/blk-mq-tag.c) when the scheduler runs
    /// it: `io_schedule` returns, the loop runs the hardware queue, goes
    /// round (`bt_wait_ptr`, `sbitmap_prepare_to_wait`, `__blk_mq_get_tag`)
    /// and takes a tag or sleeps again. That pass costs `[host]
    /// tag_retry_ns` of the task's CPU (its waker pays `tag_waker_ns`), and its
    /// outcome is decided at the pass's end (`Syscalls::resume_in_kernel`),
    /// not at the free that woke it. A task not asleep (still in the call
    /// that put its bio to sleep, which a free in that same call woke)
    /// goes round at once.
    ///
    /// The free host's answer is inlined: each woken sleeper asks.
    #[inline]
    fn defer_tag_retry(&mut self, dev: DevId, s: crate::block::sbitmap::TagSleeper) -> bool {
        self.k.cpus.enabled() && self.defer_tag_retry_to_task(dev, s)
    }

    fn bio_end_io(&mut self, origin: Origin) {
        match origin {
            Origin::Job { job, io_u } => self.task_completed(job, io_u),
            Origin::Kernel { tag } => self.pc_bio_done(tag),
            Origin::Split { .. } | Origin::Stacked { .. } | Origin::Clone { .. } => {
                unreachable!("ends in the block layer (its parent, its stacked device)")
            }
        }
    }
}

impl Running<'_> {
    /// `defer_tag_retry` on a host with CPUs.
    fn defer_tag_retry_to_task(
        &mut self,
        dev: DevId,
        s: crate::block::sbitmap::TagSleeper,
    ) -> bool {
        let crate::block::request::Submitter::Job(j) =
            crate::block::blk_mq::bio_submitter(&self.k.blk.bios, s.bio)
        else {
            return false;
        };
        if !self.k.cpus.asleep(j) {
            return false;
        }
        self.k.tag_resume.insert(j, (dev, s));
        let pass_ns = self.k.cpu.cpus.tag_retry_ns;
        self.k
            .wake_task_from(self.tasks, j, pass_ns, crate::sim::cpus::SleptOn::Tag);
        true
    }
}

impl MmHost for Running<'_> {
    fn mm(&mut self) -> Option<&mut PcSys> {
        self.k.pc.as_deref_mut()
    }
    fn mm_parts(&mut self) -> (&mut PcSys, &mut BlockLayer) {
        (
            self.k.pc.as_deref_mut().expect("page cache present"),
            &mut self.k.blk,
        )
    }
    fn task_io_done(&mut self, j: JobId, n: u32) {
        self.task_completed(j, n);
    }
}

impl Syscalls for Kernel {
    fn now(&self) -> Ns {
        self.clk.now
    }
    fn probing(&self) -> bool {
        self.blk.trace.probing()
    }
    fn probe(&mut self, p: &crate::sim::probe::Probe<'_>) {
        let now = self.clk.now;
        self.blk.trace.probe(now, p);
    }
    fn cpu(&self) -> CpuCosts {
        self.cpu
    }
    fn sleep_inline(&mut self, t: Ns) -> bool {
        // a task that others wait for checks its slice at the end of each burst
        if self.clk.can_skip_to(t) && !self.cpus.waiting() {
            self.clk.now = t;
            return true;
        }
        false
    }
    fn host_cpus(&self) -> bool {
        self.cpus.enabled()
    }
    fn timer(&mut self, t: Ns, ev: Ev) {
        self.clk.q.push(t, ev);
    }

    /// `io_submit` → `aio_read`/`aio_write` → `blkdev_direct_IO` →
    /// `submit_bio` (or the same from `pread`/`pwrite` on O_DIRECT).
    fn submit(&mut self, tasks: &mut dyn Tasks, io: DirectIo) -> Ns {
        let mut bio = Bio::new(
            io.dev,
            io.cg,
            if io.write { Op::Write } else { Op::Read },
            io.offset_bytes >> 9,
            io.bytes,
            Origin::Job {
                job: io.task,
                io_u: io.io_u,
            },
        );
        bio.flags = BioFlags {
            sync: io.sync,
            // `dio_bio_write_op`: O_DIRECT writes carry REQ_SYNC | REQ_IDLE
            idle: io.write && io.sync,
            submitter_waits: true,
            ..Default::default()
        };
        // bio_set_ioprio: no per-I/O priority, so the task's, then the cgroup's
        // io.prio.class policy
        bio.ioprio = self
            .blk
            .blk_ioprio
            .bio_set_ioprio(io.cg, Ioprio::default(), io.task_prio);
        let id = self.blk.bios.insert(bio);
        // what the call spends inside submit_bio beyond submit_ns (the
        // dispatches it runs itself); a task that sleeps in the kernel
        // (rq_qos, a tag) dispatches later, from the waker's context, and
        // is charged only submit_ns when it resumes (simplified; less the
        // wake part, `CpuCosts::submit_wake_part`: its call woke nobody)
        self.blk.submit_cpu_ns = Some(0);
        // the call's wake-up part (`CpuCosts::submit_wake_part`) only if
        // its dispatch woke a sleeping task; without such a part (the
        // default) the wake-ups are not counted
        let task = io.task as crate::sim::task::TaskId;
        let wake_part = self.cpu.submit_wake_part();
        let woke_before = (wake_part > 0).then(|| self.cpus.wakes_made(task));
        self.with(tasks).submit_bio(id);
        let spent_ns = self.blk.submit_cpu_ns.take().unwrap_or(0);
        match woke_before {
            Some(n) if self.cpus.wakes_made(task) > n => spent_ns + wake_part,
            _ => spent_ns,
        }
    }

    /// `blk_mq_get_tag`'s loop after `io_schedule` returns, in the woken
    /// task's context: run the hardware queue, try for a tag, else sleep.
    fn resume_in_kernel(&mut self, tasks: &mut dyn Tasks, task: JobId) -> Ns {
        let Some((dev, s)) = self.tag_resume.remove(&task) else {
            return 0;
        };
        self.blk.submit_cpu_ns = Some(0);
        crate::block::blk_mq::tag::retry_or_sleep(&mut self.with(tasks), dev, s);
        self.blk.submit_cpu_ns.take().unwrap_or(0)
    }

    fn return_delay(&mut self, dev: DevId, cg: CgId) -> Ns {
        self.blk.return_delay(self.clk.now, dev, cg)
    }

    fn has_page_cache(&self) -> bool {
        self.pc.is_some()
    }

    fn buffered(&mut self, tasks: &mut dyn Tasks, io: BufferedIo) -> Option<Ns> {
        self.with(tasks).pc_issue(
            io.task,
            io.io_u,
            io.write as u8,
            io.offset_bytes,
            io.bytes,
            io.task_prio,
        )
    }
}
