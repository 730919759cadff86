//! The block layer's state: every device's request queue (limits, blk-throttle,
//! the rq_qos chain, tags, the scheduler, the driver), the bio and request
//! arenas, the blkcg tree and blk-ioprio. The path itself is in `blk_mq.rs`.
//!
//! The block layer knows nothing of who submits a bio: a submitter is named
//! by the bio's `Origin`, and the layer calls up through [`BlkHost`] when a
//! submit call may return and when a bio ends (the kernel's `bi_end_io`).

use crate::block::bio::{Bio, DevId, Origin};
use crate::block::blk_cgroup::{CgId, CgroupTree};
use crate::block::ctx::Ctx;
use crate::block::disk::{DeviceInfo, DeviceModel};
use crate::block::elevator::Elevator;
use crate::block::request::Request;
use crate::block::rq_qos::{QosHooks, RqQos};
use crate::sim::clock::{Armed, Clock};
use crate::sim::slab::Slab;
use crate::sim::switches::Switches;
use crate::sim::time::{Hz, Ns};
use crate::sim::trace::Tracer;

/// A controller context for device `$d` (a `&mut Dev` taken from the block
/// layer `$b`'s `devs`), borrowing `$b`'s other fields alongside it, at `$now`.
macro_rules! dev_ctx {
    ($b:ident, $now:expr, $d:ident) => {
        crate::block::ctx::Ctx {
            now: $now,
            hz: $b.hz,
            dev: &$d.info,
            cgroups: &$b.cgroups,
            switches: &$b.switches,
            trace: &mut $b.trace,
            timer_moved: true,
        }
    };
}

/// The per-device part of the block layer (request_queue + hctx + disk):
/// its static description and its state, kept apart so a controller can read
/// the one while the block layer changes the other.
pub(crate) struct Dev {
    pub info: DeviceInfo,
    pub st: DevState,
}

impl Dev {
    /// Whether a run of the queue would dispatch: the device has room and
    /// the scheduler has pending work (`blk_mq_hctx_has_pending`).
    #[inline]
    pub fn can_dispatch(&self) -> bool {
        self.st.in_device < self.info.queue_depth && self.st.elv.has_work()
    }
}

pub(crate) struct DevState {
    /// blk-throttle (io.max) for this device.
    pub throttle: crate::block::throttle::Throttle,
    pub throttle_armed: Armed,
    pub model: Box<dyn DeviceModel>,
    /// The device this one's driver sends its I/O to (a loop device's
    /// backing device, a dm-linear target's), None for a device whose
    /// model completes the requests itself.
    pub lower: Option<crate::block::disk::Lower>,
    /// A loop device's worker costs, when its requests go to a worker
    /// (`machine::loop_worker`) rather than straight below or to the model.
    pub loop_worker: Option<crate::block::disk::LoopWorkerCost>,
    pub elv: Box<dyn Elevator>,
    pub qos: Vec<Box<dyn RqQos>>,
    pub qos_armed: Vec<Armed>,
    /// Each member's [`RqQos::hooks`], in chain order, and their union:
    /// the path calls a member only in its hooks and walks the chain for a
    /// hook only if some member has it (kept by `note_qos_members`).
    pub qos_hooks: Vec<QosHooks>,
    pub qos_any: QosHooks,
    pub elv_armed: Armed,
    /// Which of `elv`'s optional calls the path makes.
    pub elv_hooks: crate::block::elevator::ElvHooks,
    /// Which of the nr_requests tags are in use (each request holds its
    /// own, `Request::tag`).
    pub tag_bits: crate::block::sbitmap::TagBitmap,
    /// Bios that passed rq_qos and sleep for a request tag (sbitmap's wait
    /// queues: not a FIFO, woken in batches).
    pub tag_waiters: crate::block::sbitmap::TagWaiters<crate::block::sbitmap::TagSleeper>,
    /// The sleepers a freed tag wakes, kept between completions so that
    /// a wake-up does not allocate (empty outside `wake_tag_waiters`).
    pub tag_woken: Vec<crate::block::sbitmap::TagSleeper>,
    /// Requests at the device (dispatched, not completed), limited by queue_depth.
    pub in_device: u32,
    /// What a submitter pays to wake the driver's idle worker
    /// (`DeviceConfig::idle_wake_ns`; 0 = a driver that issues inline).
    pub idle_wake_ns: Ns,
    /// /sys/block/DEV/stat counters.
    pub diskstats: crate::block::diskstats::DiskStats,
    /// Completed requests and bios, for the run summary.
    pub rqs_done: u64,
    pub bios_done: u64,
}

/// Every device's queue and the arenas the path allocates from.
pub struct BlockLayer {
    pub(crate) hz: Hz,
    pub(crate) switches: Switches,
    pub(crate) cgroups: CgroupTree,
    pub(crate) devs: Vec<Dev>,
    pub(crate) bios: Slab<Bio>,
    pub(crate) reqs: Slab<Request>,
    /// blk-ioprio: each cgroup's io.prio.class policy.
    pub(crate) blk_ioprio: crate::block::blk_ioprio::BlkIoprio,
    pub(crate) trace: Tracer,
    /// Scratch list for bios released by controllers (reused, never shrunk).
    pub(crate) released: Vec<u32>,
    pub(crate) peak_bios: usize,
    /// While a task's submit call runs (`Some`, set by the kernel around
    /// `submit_bio`), the CPU time the call spends beyond
    /// `CpuCosts::submit_ns`: the wake-ups of idle driver threads it
    /// dispatched to. `None` outside a submit call: a dispatch from a
    /// completion or a timer runs in interrupt or kworker context, whose
    /// time nobody's clock is charged with.
    pub(crate) submit_cpu_ns: Option<Ns>,
    /// Switch `blk_mq.submit_bio_plug = on`: `__submit_bio` holds a plug
    /// around every bio, so an insertion's queue run is the plug's
    /// synchronous flush, not an asynchronous run (read once, at build).
    pub(crate) submit_bio_plug: bool,
}

impl DevState {
    /// Recompute `qos_hooks` and `qos_any` after the chain or a member's
    /// [`RqQos::hooks`] changed.
    pub(crate) fn note_qos_members(&mut self) {
        (self.qos_hooks, self.qos_any) = chain_hooks(&self.qos);
    }

    /// The chain's members that act in hook `h`, in chain order. The hot
    /// paths test `qos_any` first, so that a hook no member has costs one
    /// test.
    #[inline]
    pub(crate) fn qos_in(&mut self, h: QosHooks) -> impl Iterator<Item = &mut Box<dyn RqQos>> {
        self.qos
            .iter_mut()
            .zip(&self.qos_hooks)
            .filter(move |(_, k)| k.has(h))
            .map(|(q, _)| q)
    }
}

/// Each member's [`RqQos::hooks`] and their union: the values of
/// `DevState::qos_hooks` and `DevState::qos_any`.
pub(crate) fn chain_hooks(qos: &[Box<dyn RqQos>]) -> (Vec<QosHooks>, QosHooks) {
    let hooks: Vec<QosHooks> = qos.iter().map(|q| q.hooks()).collect();
    let any = hooks.iter().fold(QosHooks::NONE, |a, &h| a | h);
    (hooks, any)
}

impl BlockLayer {
    /// A controller context for device `dev` at `now` (borrows disjoint fields).
    pub(crate) fn ctx_parts(&mut self, now: Ns, dev: DevId) -> (Ctx<'_>, &mut DevState) {
        let d = &mut self.devs[dev as usize];
        let ctx = Ctx {
            now,
            hz: self.hz,
            dev: &d.info,
            cgroups: &self.cgroups,
            switches: &self.switches,
            trace: &mut self.trace,
            timer_moved: true,
        };
        (ctx, &mut d.st)
    }

    /// `blkcg_maybe_throttle_current`: the delay the rq_qos chain charges a
    /// task of cgroup `cg` on its way back to user space from a call that
    /// submitted to device `dev`.
    #[inline]
    pub(crate) fn return_delay(&mut self, now: Ns, dev: DevId, cg: CgId) -> Ns {
        if !self.devs[dev as usize]
            .st
            .qos_any
            .has(QosHooks::RETURN_DELAY)
        {
            return 0;
        }
        self.chain_return_delay(now, dev, cg)
    }

    /// The walk of `return_delay`.
    fn chain_return_delay(&mut self, now: Ns, dev: DevId, cg: CgId) -> Ns {
        let (mut ctx, st) = self.ctx_parts(now, dev);
        st.qos_in(QosHooks::RETURN_DELAY)
            .map(|q| q.return_delay(&mut ctx, cg))
            .sum()
    }
}

impl BlockLayer {
    /// `balance_dirty_pages` put a writer of device `dev` to sleep
    /// (`wb->dirty_sleep`); blk-wbt reads it (`wb_recent_wait`).
    pub(crate) fn note_dirty_sleep(&mut self, now: Ns, dev: DevId) {
        for q in self.devs[dev as usize].st.qos.iter_mut() {
            if let Some(w) = q.as_any_mut().downcast_mut::<crate::block::wbt::Wbt>() {
                w.note_dirty_sleep(now);
            }
        }
    }
}

/// What the block layer needs from the machine around it: its own state,
/// the clock, and the two calls up to a bio's submitter.
pub(crate) trait BlkHost {
    fn blk(&mut self) -> &mut BlockLayer;
    fn clk(&mut self) -> &mut Clock;
    fn parts(&mut self) -> (&mut BlockLayer, &mut Clock);
    fn now(&self) -> Ns;
    /// The submit_bio call of a waiting submitter is over: the bio got a
    /// request, was merged, or was queued by blk-throttle. Called at once
    /// when the path did not sleep, later when it did.
    fn bio_submitted(&mut self, origin: Origin, dev: DevId, cg: CgId);
    /// `bio_endio` reached the bio's owner (`bi_end_io`).
    fn bio_end_io(&mut self, origin: Origin);
    /// `loop_queue_rq` → `loop_queue_work`: request `rid` of loop device
    /// `dev`, which has a worker, was dispatched; the worker takes it.
    fn loop_queue_work(&mut self, dev: DevId, rid: crate::block::request::ReqId);
    /// Whether this host runs `dev`'s asynchronous queue runs in a kblockd
    /// kernel thread (machine/kblockd.rs); false: in the caller's context.
    fn runs_on_kblockd(&self, dev: DevId) -> bool;
    /// `kblockd_mod_delayed_work_on(cpu, &hctx->run_work, 0)`: queue an
    /// asynchronous run of `dev`'s hardware queue on kblockd (only where
    /// [`BlkHost::runs_on_kblockd`]).
    fn kblockd_run_work(&mut self, dev: DevId);
    /// `queue_work(kthrotld_workqueue, &td->dispatch_work)`: blk-throttle's
    /// timer moved bios to `dev`'s device level, where they wait for the
    /// host's work item (machine/kthrotld.rs; only where the throttle was
    /// told [`crate::block::throttle::Throttle::issue_by_work`]).
    fn kthrotld_queue_work(&mut self, dev: DevId);
    /// `need_resched()` in the context of the task that submitted for
    /// `submitter` (job tasks only; false on the free host): a kernel
    /// thread woken meanwhile will preempt it.
    fn submitter_must_resched(&self, submitter: crate::block::request::Submitter) -> bool;
    /// A sleeper for one of `dev`'s tags was woken (`sbitmap_queue_wake_up`
    /// → the task's `io_schedule` returns): true if the host runs the rest
    /// of its `blk_mq_get_tag` loop later, in its task's context when the
    /// scheduler runs it (a host with CPUs, a job's bio), false to run it
    /// now, in the waker's context (the free host, the kernel's own bios).
    fn defer_tag_retry(&mut self, dev: DevId, s: crate::block::sbitmap::TagSleeper) -> bool;
}
