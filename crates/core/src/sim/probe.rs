//! Structured samples for time series (`blklab run --timeseries`, the HTML
//! report): the same instants as the trace events, but as numbers rather than
//! text. A probe is opt-in: with no sink the controllers skip the sample
//! entirely, and a sink only observes — it schedules nothing and draws no
//! random numbers, so a run with a probe is event-for-event the run without.

use crate::sim::engine::DevId;
use crate::sim::time::Ns;

/// One iocost period (`ioc_timer_fn`), at the point where the kernel emits
/// `iocost_ioc_vrate_adj`: what iocost_monitor.py prints for the device.
#[derive(Clone, Copy, Debug)]
pub struct IocostPeriod<'a> {
    pub dev: &'a str,
    pub period: u64,
    pub period_us: u64,
    /// `vtime_base_rate` after this period's adjustment, in VTIME_PER_USEC units.
    pub vrate: u64,
    pub busy_level: i32,
    pub missed_ppm: [u32; 2],
    pub rq_wait_pct: u32,
    pub nr_lagging: i32,
    pub nr_shortages: i32,
    pub nr_active: u32,
    pub nr_done: u32,
    pub usage_us: u64,
}

/// One active iocg at the end of a period (iocost_monitor.py's per-cgroup row).
#[derive(Clone, Copy, Debug)]
pub struct IocgPeriod<'a> {
    pub dev: &'a str,
    pub cgroup: &'a str,
    pub period: u64,
    pub active: u32,
    pub inuse: u32,
    /// Cached hierarchical weights, out of `WEIGHT_ONE` (65536).
    pub hweight_active: u32,
    pub hweight_inuse: u32,
    /// Device time used during the period, µs (`usage_delta_us`).
    pub usage_us: u64,
    /// `abs_vdebt` converted to ns of device time at the base rate.
    pub debt_ns: u64,
    /// The blkg's delay (`delay` of `blkcg_set_delay`), ns.
    pub delay_ns: u64,
}

/// What the probes see.
#[derive(Clone, Copy, Debug)]
pub enum Probe<'a> {
    IocostPeriod(IocostPeriod<'a>),
    IocgPeriod(IocgPeriod<'a>),
    /// blk-throttle held a bio of `cg` (`blk_throtl_bio` queued it).
    ThrotlQueue {
        dev: DevId,
        cg: u32,
        write: bool,
    },
    /// blk-throttle's dispatch let a bio of `cg` go after `wait_ns`.
    ThrotlDispatch {
        dev: DevId,
        cg: u32,
        write: bool,
        wait_ns: Ns,
    },
    /// Requests at the device changed (dispatch or completion): `in_device`
    /// of at most `queue_depth`.
    DeviceDepth {
        dev: DevId,
        in_device: u32,
        queue_depth: u32,
    },
    /// fio reaped an io_u (fio's `io_completed` → `add_clat_sample` etc.):
    /// latencies in ns, `slat_ns` only for engines that record it.
    FioIo(FioIo),
}

/// One completed io_u as fio's log writers see it.
#[derive(Clone, Copy, Debug)]
pub struct FioIo {
    pub job: u32,
    pub ddir: u8,
    pub bytes: u32,
    pub offset: u64,
    /// The io_u's priority as fio logs it (`ioprio` value, class << 13 | level).
    pub prio: u16,
    pub slat_ns: Option<Ns>,
    pub clat_ns: Ns,
    pub lat_ns: Ns,
    /// The job's epoch (fio's `td->epoch`): log times are relative to it.
    pub epoch_ns: Ns,
}

/// (`cg` fields are cgroup ids, `block::blk_cgroup::CgId`, as plain u32:
/// the engine does not depend on the block layer.)
///
/// Where probe samples go.
pub trait ProbeSink {
    fn sample(&mut self, t: Ns, p: &Probe<'_>);
}
