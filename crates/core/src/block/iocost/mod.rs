//! blk-iocost (block/blk-iocost.c): the IO cost model based proportional
//! controller. One [`IoCost`] per device mirrors the kernel's `struct ioc`;
//! each cgroup has an [`Iocg`] mirroring `struct ioc_gq`.
//!
//! The algorithm is the post-2020 one (margins, donation through
//! `transfer_surpluses`, debt and delay, `vtime_err` compensation), with the
//! 2026 "fix busy_level reset when no IOs complete" behind the switch
//! `iocost.busy_level_fix`.
//!
//! Where the code lives:
//! * `params.rs`   – io.cost.qos / io.cost.model / io.weight syntax, autop presets
//! * `cost.rs`     – the linear cost model (`calc_lcoefs`, `calc_vtime_cost_builtin`)
//! * `vtime.rs`    – `ioc_now`, period start, margins, vrate compensation and adjustment
//! * `hweight.rs`  – `__propagate_weights`, `current_hweight`, `current_hweight_max`
//! * `iopath.rs`   – activation, throttle, merge, waitq wakeups, completion hooks
//! * `debt.rs`     – debt, issuer delay, debt forgiveness
//! * `period.rs`   – the period timer `ioc_timer_fn`
//! * `donation.rs` – `hweight_after_donation`, `transfer_surpluses`
//! * `trace.rs`    – tracepoint payloads (include/trace/events/iocost.h)
//!
//! Units follow the kernel: wall time in µs (`IocNow::now`), vtime in units of
//! 2^-37 s, weights ×65536, hweights out of 65536.

pub mod cost;
mod debt;
mod donation;
mod hweight;
mod iopath;
pub mod params;
mod period;
mod trace;
mod vtime;

#[cfg(test)]
mod tests;

use std::any::Any;
use std::collections::{BTreeSet, VecDeque};

use crate::block::bio::{Bio, BioId};
use crate::block::blk_cgroup::{CgId, CgroupTree, ROOT};
use crate::block::ctx::Ctx;
use crate::block::disk::DeviceInfo;
use crate::block::request::Request;
use crate::block::rq_qos::{QosHooks, QosVerdict, RqQos};
use crate::sim::kerr::{Errno, KernelError};
use crate::sim::switches::Switches;
use crate::sim::time::{Hz, Ns};

use params::*;

// ---- constants (blk-iocost.c enum) ----
pub const MILLION: u64 = 1_000_000;
pub const MIN_PERIOD: u64 = 1_000;
pub const MAX_PERIOD: u64 = 1_000_000;
pub const MARGIN_MIN_PCT: u64 = 10;
pub const MARGIN_LOW_PCT: u64 = 20;
pub const MARGIN_TARGET_PCT: u64 = 50;
pub const INUSE_ADJ_STEP_PCT: u64 = 25;
pub const TIMER_SLACK_PCT: u64 = 1;
pub const WEIGHT_ONE: u32 = 1 << 16;
pub const VTIME_PER_SEC_SHIFT: u32 = 37;
pub const VTIME_PER_SEC: u64 = 1 << VTIME_PER_SEC_SHIFT;
pub const VTIME_PER_USEC: u64 = VTIME_PER_SEC / 1_000_000;
pub const VTIME_PER_NSEC: u64 = VTIME_PER_SEC / 1_000_000_000;
pub const VRATE_MIN_PPM: u64 = 10_000;
pub const VRATE_MAX_PPM: u64 = 100_000_000;
pub const VRATE_CLAMP_ADJ_PCT: u64 = 4;
pub const AUTOP_CYCLE_NSEC: u64 = 10_000_000_000;
pub const RQ_WAIT_BUSY_PCT: u32 = 5;
pub const UNBUSY_THR_PCT: u32 = 75;
pub const MIN_DELAY_THR_PCT: i64 = 500;
pub const MAX_DELAY_THR_PCT: i64 = 25_000;
pub const MIN_DELAY: u64 = 250;
pub const MAX_DELAY: u64 = 250_000;
pub const DFGV_USAGE_PCT: u64 = 50;
pub const DFGV_PERIOD: u64 = 100_000;
pub const MAX_LAGGING_PERIODS: u64 = 10;
pub const IOC_PAGE_SHIFT: u32 = 12;
pub const IOC_PAGE_SIZE: u64 = 1 << IOC_PAGE_SHIFT;
pub const IOC_SECT_TO_PAGE_SHIFT: u32 = IOC_PAGE_SHIFT - 9;
pub const LCOEF_RANDIO_PAGES: u64 = 4096;
pub const CGROUP_WEIGHT_MIN: u32 = 1;
pub const CGROUP_WEIGHT_DFL: u32 = 100;
pub const CGROUP_WEIGHT_MAX: u32 = 10_000;

/// `vrate_adj_pct[]`: the vrate step (%) indexed by min(|busy_level|, 52).
pub const VRATE_ADJ_PCT: [u32; 53] = [
    0, 0, 0, 0, //
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, //
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, //
    4, 4, 4, 4, 4, 4, 4, 4, 8, 8, 8, 8, 8, 8, 8, 8, 16,
];

/// A bio whose submitter sleeps on the iocg's waitq keeps this tag plus its
/// BioId in `bio.qos_cost` until it completes; the real cost (committed at
/// wake-up, when the bio is not at hand) lives in `IoCost::bio_cost[id]`.
/// The kernel writes `bi_iocost_cost` from the waker; the rq_qos interface of
/// the model only hands back ids, hence the ticket.
pub(crate) const WAIT_TICKET: u64 = 1 << 63;

/// `DIV64_U64_ROUND_UP` with the kernel's u64 wrap-around.
#[inline]
pub(crate) fn div_round_up(n: u64, d: u64) -> u64 {
    n.wrapping_add(d - 1) / d
}
pub(crate) use crate::sim::time::{time_after as time_after64, time_before as time_before64};
/// `abs_cost_to_cost`: relative cost in the iocg's vtime.
#[inline]
pub(crate) fn abs_cost_to_cost(abs_cost: u64, hw_inuse: u32) -> u64 {
    div_round_up(abs_cost.wrapping_mul(WEIGHT_ONE as u64), hw_inuse as u64)
}
/// `cost_to_abs_cost`
#[inline]
pub(crate) fn cost_to_abs_cost(cost: u64, hw_inuse: u32) -> u64 {
    div_round_up(cost.wrapping_mul(hw_inuse as u64), WEIGHT_ONE as u64)
}

/// `struct ioc_now`: one consistent snapshot of wall time (ns and µs) and vtime.
#[derive(Clone, Copy, Debug)]
pub(crate) struct IocNow {
    pub now_ns: u64,
    pub now: u64,
    pub vnow: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Running {
    Idle,
    Running,
    #[allow(dead_code)]
    Stop,
}

#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Margins {
    pub min: u64,
    pub low: u64,
    pub target: u64,
}

/// `struct iocg_stat`
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct IocgStat {
    pub usage_us: u64,
    pub wait_us: u64,
    pub indebt_us: u64,
    pub indelay_us: u64,
}

/// One sleeper on an iocg's waitq (`struct iocg_wait`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Waiter {
    pub id: BioId,
    pub abs_cost: u64,
}

/// `struct ioc_gq`: per (cgroup, device) state. `repr(C)` and
/// line-aligned, with what a bio's charge reads and writes when it need
/// not wait first (`throttle` through `commit_bio`, and the return to user
/// space): two cache lines. With a thousand cgroups an iocg has left the
/// cache by its next bio. The order changes no result.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct Iocg {
    pub(crate) level: usize,
    pub(crate) cursor: u64,
    pub(crate) vtime: u64,
    pub(crate) abs_vusage: u64,
    pub(crate) abs_vdebt: u64,
    pub(crate) active_period: u64,
    pub(crate) saved_margin: i64,
    pub(crate) hweight_gen: u32,
    pub(crate) hweight_active: u32,
    pub(crate) hweight_inuse: u32,
    pub(crate) inuse: u32,
    pub(crate) active: u32,
    /// On `ioc->active_iocgs` (the kernel's `!list_empty(&iocg->active_list)`).
    pub(crate) on_active: bool,
    /// blkcg_schedule_throttle() was called for a submitter of this cgroup.
    pub(crate) throttle_pending: bool,
    pub(crate) waitq: VecDeque<Waiter>,
    // the rest from here on
    pub(crate) cg: CgId,
    /// Indices of the ancestors, root first, self last (`ancestors[level] == self`).
    pub(crate) ancestors: Vec<usize>,
    pub(crate) cfg_weight: u32,
    pub(crate) weight: u32,
    pub(crate) last_inuse: u32,
    pub(crate) done_vtime: u64,
    pub(crate) delay: u64,
    pub(crate) delay_at: u64,
    pub(crate) child_active_sum: u64,
    pub(crate) child_inuse_sum: u64,
    pub(crate) child_adjusted_sum: u64,
    pub(crate) hweight_donating: u32,
    pub(crate) hweight_after_donation: u32,
    pub(crate) on_walk: bool,
    /// Soft expiry (ns) of the armed waitq hrtimer; it fires at soft + slack.
    pub(crate) waitq_timer: Option<u64>,
    pub(crate) activated_at: u64,
    pub(crate) stat: IocgStat,
    pub(crate) last_stat: IocgStat,
    pub(crate) last_stat_abs_vusage: u64,
    pub(crate) usage_delta_us: u64,
    pub(crate) wait_since: u64,
    pub(crate) indebt_since: u64,
    pub(crate) indelay_since: u64,
    // blkg delay state (blk-cgroup's use_delay / delay_nsec, set by blkcg_set_delay).
    pub(crate) use_delay: bool,
    pub(crate) delay_nsec: u64,
}

/// `struct ioc`: blk-iocost for one device.
#[derive(Debug)]
pub struct IoCost {
    pub(crate) dev_name: String,
    pub(crate) devno: (u32, u32),
    pub(crate) rotational: bool,
    pub(crate) queue_depth: u32,
    pub(crate) hz: Hz,
    pub(crate) enabled: bool,
    pub(crate) qos: [u32; NR_QOS_PARAMS],
    pub(crate) i_lcoefs: [u64; NR_I_LCOEFS],
    pub(crate) lcoefs: [u64; NR_LCOEFS],
    pub(crate) period_us: u64,
    pub(crate) timer_slack_ns: u64,
    pub(crate) margins: Margins,
    pub(crate) vrate_min: u64,
    pub(crate) vrate_max: u64,
    pub(crate) vtime_base_rate: u64,
    pub(crate) vtime_rate: u64,
    pub(crate) vtime_err: i64,
    pub(crate) period_at: u64,
    pub(crate) period_at_vtime: u64,
    pub(crate) cur_period: u64,
    pub(crate) busy_level: i32,
    pub(crate) running: Running,
    /// `active_iocgs`, in list order (activation adds at the head, as list_add does).
    pub(crate) active: Vec<usize>,
    pub(crate) weights_updated: bool,
    pub(crate) hweight_gen: u32,
    pub(crate) dfgv_period_at: u64,
    pub(crate) dfgv_period_rem: u64,
    pub(crate) dfgv_usage_us_sum: u64,
    pub(crate) autop_too_fast_at: u64,
    pub(crate) autop_too_slow_at: u64,
    pub(crate) autop_idx: usize,
    pub(crate) user_qos_params: bool,
    pub(crate) user_cost_model: bool,
    // per-period completion statistics (`ioc_pcpu_stat`, one CPU)
    pub(crate) nr_met: [u32; 2],
    pub(crate) nr_missed: [u32; 2],
    pub(crate) rq_wait_ns: u64,
    pub(crate) iocgs: Vec<Iocg>,
    /// The armed waitq timers as (soft expiry, iocg index), the same facts
    /// as the iocgs' `waitq_timer` kept in order, so that the next one is
    /// found in O(log n) instead of by a scan of every cgroup after every
    /// step (the kernel needs neither: each hrtimer fires by itself). Equal
    /// expiries fire lowest index first, as the scan did. Changed only by
    /// `set_waitq_timer`.
    pub(crate) waitq_timers: BTreeSet<(u64, usize)>,
    /// `ioc_cgrp.dfl_weight` per cgroup (×WEIGHT_ONE).
    pub(crate) dfl_weight: Vec<u32>,
    /// The period timer's expiry (jiffy boundary, ns), when armed.
    pub(crate) period_timer: Option<Ns>,
    /// Waiters committed outside timer context (by a later submitter's kick);
    /// handed out by the next `timer()` call, which `next_timer` asks for at once.
    pub(crate) pending_release: Vec<BioId>,
    pub(crate) release_at: Option<Ns>,
    /// Committed relative cost per in-flight bio id (`bi_iocost_cost`), see WAIT_TICKET.
    pub(crate) bio_cost: Vec<u64>,
    /// blk-cgroup's `blkcg_debug_stats` module parameter (adds cost.wait/indebt/indelay).
    pub debug_stats: bool,
}

fn kerr_at(cg: CgId, file: &str, e: KernelError) -> (CgId, String, KernelError) {
    (cg, file.to_string(), e)
}

impl IoCost {
    /// Build the controller for `dev` from the root cgroup's `io.cost.model`
    /// and `io.cost.qos` lines naming this device and every cgroup's
    /// `io.weight` (`blk_iocost_init` + the write handlers, in file order).
    ///
    /// Returns `Ok(None)` when no io.cost.* line names the device (iocost was
    /// never initialized on it). A device whose lines leave it disabled
    /// (`enable=0`) gets a controller that bypasses every bio, as in the
    /// kernel, so that a later `enable=1` write can turn it on.
    pub fn new(
        dev: &DeviceInfo,
        cgroups: &CgroupTree,
        hz: Hz,
        _switches: &Switches,
    ) -> Result<Option<IoCost>, (CgId, String, KernelError)> {
        let devno = (dev.major, dev.minor);
        let mine = |file: &str| -> Result<Vec<String>, (CgId, String, KernelError)> {
            let mut out = Vec::new();
            if let Some(text) = cgroups.file(ROOT, file) {
                for line in text.lines().filter(|l| !l.trim().is_empty()) {
                    let (d, body) =
                        crate::sim::kerr::split_devno(line).map_err(|e| kerr_at(ROOT, file, e))?;
                    if d == devno {
                        out.push(body.to_string());
                    }
                }
            }
            Ok(out)
        };
        let model_lines = mine("io.cost.model")?;
        let qos_lines = mine("io.cost.qos")?;
        for cg in cgroups.ids() {
            if cg != ROOT {
                for f in ["io.cost.model", "io.cost.qos"] {
                    if cgroups.file(cg, f).is_some() {
                        return Err(kerr_at(
                            cg,
                            f,
                            KernelError::einval(format!("{f} exists only on the root cgroup")),
                        ));
                    }
                }
            }
        }
        let initialized = !model_lines.is_empty() || !qos_lines.is_empty();
        let mut ioc = IoCost::init(dev, hz);
        ioc.grow_iocgs_with_tree(cgroups, cgroups.len(), 0);
        for body in &model_lines {
            ioc.apply_model_body(body, 0)
                .map_err(|e| kerr_at(ROOT, "io.cost.model", e))?;
        }
        for body in &qos_lines {
            ioc.apply_qos_body(body, 0)
                .map_err(|e| kerr_at(ROOT, "io.cost.qos", e))?;
        }
        // io.weight of every cgroup (only non-root cgroups have the file).
        for cg in cgroups.ids() {
            let Some(text) = cgroups.file(cg, "io.weight") else {
                continue;
            };
            if cg == ROOT {
                return Err(kerr_at(
                    cg,
                    "io.weight",
                    KernelError::einval("io.weight does not exist on the root cgroup"),
                ));
            }
            for line in text.lines().filter(|l| !l.trim().is_empty()) {
                match parse_weight_line(line).map_err(|e| kerr_at(cg, "io.weight", e))? {
                    WeightLine::Default(v) => ioc.dfl_weight[cg as usize] = v * WEIGHT_ONE,
                    WeightLine::Dev(d, v) => {
                        if d != devno {
                            continue;
                        }
                        if !initialized {
                            return Err(kerr_at(
                                cg,
                                "io.weight",
                                KernelError {
                                    errno: Errno::Eopnotsupp,
                                    msg: format!(
                                        "iocost is not initialized on {}:{} (write io.cost.qos or io.cost.model first)",
                                        d.0, d.1
                                    ),
                                },
                            ));
                        }
                        ioc.iocgs[cg as usize].cfg_weight = v * WEIGHT_ONE;
                    }
                }
            }
        }
        if !initialized {
            return Ok(None);
        }
        // ioc_pd_init -> weight_updated for every iocg (nothing is active yet).
        for i in 0..ioc.iocgs.len() {
            let w = ioc.effective_weight(i);
            ioc.iocgs[i].weight = w;
        }
        Ok(Some(ioc))
    }

    /// `blk_iocost_init` at time 0 (iocgs are added by `grow_iocgs_with_tree`).
    pub(crate) fn init(dev: &DeviceInfo, hz: Hz) -> IoCost {
        let mut ioc = IoCost {
            dev_name: dev.name.clone(),
            devno: (dev.major, dev.minor),
            rotational: dev.rotational,
            queue_depth: if dev.queue_depth != 0 {
                dev.queue_depth
            } else {
                dev.nr_requests
            },
            hz,
            enabled: false,
            qos: [0; NR_QOS_PARAMS],
            i_lcoefs: [0; NR_I_LCOEFS],
            lcoefs: [0; NR_LCOEFS],
            period_us: 0,
            timer_slack_ns: 0,
            margins: Margins::default(),
            vrate_min: 0,
            vrate_max: 0,
            vtime_base_rate: VTIME_PER_USEC,
            vtime_rate: VTIME_PER_USEC,
            vtime_err: 0,
            period_at: 0,
            period_at_vtime: 0,
            cur_period: 0,
            busy_level: 0,
            running: Running::Idle,
            active: Vec::new(),
            weights_updated: false,
            hweight_gen: 0,
            dfgv_period_at: 0,
            dfgv_period_rem: 0,
            dfgv_usage_us_sum: 0,
            autop_too_fast_at: 0,
            autop_too_slow_at: 0,
            autop_idx: AUTOP_INVALID,
            user_qos_params: false,
            user_cost_model: false,
            nr_met: [0; 2],
            nr_missed: [0; 2],
            rq_wait_ns: 0,
            iocgs: Vec::new(),
            waitq_timers: BTreeSet::new(),
            dfl_weight: Vec::new(),
            period_timer: None,
            pending_release: Vec::new(),
            release_at: None,
            bio_cost: Vec::new(),
            debug_stats: false,
        };
        ioc.refresh_params(0, true);
        ioc
    }

    /// Make sure iocgs exist for cgroups `0..n` (cgroups created mid-run get
    /// theirs on first use, as blkgs are created lazily).
    pub(crate) fn grow_iocgs(&mut self, n: usize, now_ns: u64) {
        while self.iocgs.len() < n {
            let idx = self.iocgs.len();
            self.dfl_weight.push(CGROUP_WEIGHT_DFL * WEIGHT_ONE);
            self.iocgs.push(Iocg::blank(idx as CgId));
            let now = self.ioc_now(now_ns);
            self.pd_init(idx, &now);
        }
    }

    fn ensure_iocgs(&mut self, ctx: &Ctx, cg: CgId) {
        if (cg as usize) >= self.iocgs.len() {
            let n = ctx.cgroups.len().max(cg as usize + 1);
            // Ancestors come from the tree; without it the new cgroup is put under root.
            self.grow_iocgs_with_tree(ctx.cgroups, n, ctx.now);
        }
    }

    pub(crate) fn grow_iocgs_with_tree(&mut self, tree: &CgroupTree, n: usize, now_ns: u64) {
        let first = self.iocgs.len();
        self.grow_iocgs(n, now_ns);
        for idx in first..n {
            self.set_ancestry(tree, idx);
        }
    }

    /// Fill `level` and `ancestors` from the cgroup tree.
    pub(crate) fn set_ancestry(&mut self, tree: &CgroupTree, idx: usize) {
        if idx >= tree.len() {
            return;
        }
        let mut anc: Vec<usize> = tree.ancestors(idx as CgId).map(|c| c as usize).collect();
        anc.reverse();
        self.iocgs[idx].level = anc.len() - 1;
        self.iocgs[idx].ancestors = anc;
    }

    /// `ioc_pd_init`
    fn pd_init(&mut self, idx: usize, now: &IocNow) {
        let cur = self.cur_period;
        let g = &mut self.iocgs[idx];
        g.vtime = now.vnow;
        g.done_vtime = now.vnow;
        g.active_period = cur;
        g.hweight_active = WEIGHT_ONE;
        g.hweight_inuse = WEIGHT_ONE;
        let w = self.effective_weight(idx);
        self.iocgs[idx].weight = w;
    }

    pub(crate) fn effective_weight(&self, idx: usize) -> u32 {
        let g = &self.iocgs[idx];
        if g.cfg_weight != 0 {
            g.cfg_weight
        } else {
            self.dfl_weight[idx]
        }
    }

    /// `weight_updated`
    pub(crate) fn weight_updated(&mut self, idx: usize, now: &IocNow) {
        let w = self.effective_weight(idx);
        if w != self.iocgs[idx].weight && self.iocgs[idx].active != 0 {
            let inuse = self.iocgs[idx].inuse;
            self.propagate_weights(idx, w, inuse, true, now);
        }
        self.iocgs[idx].weight = w;
    }

    /// `ioc_cost_model_prfill`: the device's line of `cat io.cost.model` (no newline).
    pub fn read_cost_model(&self) -> String {
        let u = &self.i_lcoefs;
        format!(
            "{}:{} ctrl={} model=linear rbps={} rseqiops={} rrandiops={} wbps={} wseqiops={} wrandiops={}",
            self.devno.0,
            self.devno.1,
            if self.user_cost_model { "user" } else { "auto" },
            u[I_LCOEF_RBPS],
            u[I_LCOEF_RSEQIOPS],
            u[I_LCOEF_RRANDIOPS],
            u[I_LCOEF_WBPS],
            u[I_LCOEF_WSEQIOPS],
            u[I_LCOEF_WRANDIOPS]
        )
    }

    /// `ioc_qos_prfill`: the device's line of `cat io.cost.qos` (no newline).
    pub fn read_cost_qos(&self) -> String {
        let q = &self.qos;
        let pct = |v: u32| format!("{}.{:02}", v / 10000, v % 10000 / 100);
        format!(
            "{}:{} enable={} ctrl={} rpct={} rlat={} wpct={} wlat={} min={} max={}",
            self.devno.0,
            self.devno.1,
            self.enabled as u32,
            if self.user_qos_params { "user" } else { "auto" },
            pct(q[QOS_RPPM]),
            q[QOS_RLAT],
            pct(q[QOS_WPPM]),
            q[QOS_WLAT],
            pct(q[QOS_MIN]),
            pct(q[QOS_MAX])
        )
    }

    /// `ioc_weight_show` restricted to this device: `default N`, then
    /// `\nMAJ:MIN N` when the cgroup has a per-device weight (no final newline).
    pub fn read_weight(&self, cg: CgId) -> String {
        let i = cg as usize;
        let dfl = self
            .dfl_weight
            .get(i)
            .copied()
            .unwrap_or(CGROUP_WEIGHT_DFL * WEIGHT_ONE);
        let mut s = format!("default {}", dfl / WEIGHT_ONE);
        if let Some(g) = self.iocgs.get(i) {
            if g.cfg_weight != 0 {
                s.push_str(&format!(
                    "\n{}:{} {}",
                    self.devno.0,
                    self.devno.1,
                    g.cfg_weight / WEIGHT_ONE
                ));
            }
        }
        s
    }

    /// The current base vrate in vtime/µs (`vtime_base_rate`).
    pub fn vrate(&self) -> u64 {
        self.vtime_base_rate
    }
    pub fn busy_level(&self) -> i32 {
        self.busy_level
    }
    pub fn period_us(&self) -> u64 {
        self.period_us
    }
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// Apply an io.cost.qos body (after `MAJ:MIN`), `ioc_qos_write`.
    pub(crate) fn apply_qos_body(&mut self, body: &str, now_ns: u64) -> Result<(), KernelError> {
        let w = parse_qos_body(body, self.qos, self.enabled, self.user_qos_params)?;
        self.enabled = w.enable;
        if w.user {
            self.qos = w.qos;
            self.user_qos_params = true;
        } else {
            self.user_qos_params = false;
        }
        self.refresh_params(now_ns, true);
        Ok(())
    }

    /// Apply an io.cost.model body, `ioc_cost_model_write`.
    pub(crate) fn apply_model_body(&mut self, body: &str, now_ns: u64) -> Result<(), KernelError> {
        let (u, user) = parse_model_body(body, self.i_lcoefs, self.user_cost_model)?;
        if user {
            self.i_lcoefs = u;
            self.user_cost_model = true;
        } else {
            self.user_cost_model = false;
        }
        self.refresh_params(now_ns, true);
        Ok(())
    }
}

impl Iocg {
    fn blank(cg: CgId) -> Iocg {
        Iocg {
            cg,
            level: if cg == ROOT { 0 } else { 1 },
            ancestors: if cg == ROOT {
                vec![0]
            } else {
                vec![0, cg as usize]
            },
            cfg_weight: 0,
            weight: 0,
            active: 0,
            inuse: 0,
            last_inuse: 0,
            saved_margin: 0,
            cursor: 0,
            vtime: 0,
            done_vtime: 0,
            abs_vdebt: 0,
            delay: 0,
            delay_at: 0,
            active_period: 0,
            on_active: false,
            child_active_sum: 0,
            child_inuse_sum: 0,
            child_adjusted_sum: 0,
            hweight_gen: 0,
            hweight_active: WEIGHT_ONE,
            hweight_inuse: WEIGHT_ONE,
            hweight_donating: 0,
            hweight_after_donation: 0,
            on_walk: false,
            waitq: VecDeque::new(),
            waitq_timer: None,
            activated_at: 0,
            stat: IocgStat::default(),
            last_stat: IocgStat::default(),
            abs_vusage: 0,
            last_stat_abs_vusage: 0,
            usage_delta_us: 0,
            wait_since: 0,
            indebt_since: 0,
            indelay_since: 0,
            use_delay: false,
            delay_nsec: 0,
            throttle_pending: false,
        }
    }
}

impl RqQos for IoCost {
    fn name(&self) -> &'static str {
        "iocost"
    }

    fn throttle(&mut self, ctx: &mut Ctx, id: BioId, bio: &mut Bio) -> QosVerdict {
        self.ensure_iocgs(ctx, bio.cg);
        self.rqos_throttle(ctx, id, bio)
    }

    fn merge(&mut self, ctx: &mut Ctx, rq: &Request, bio: &mut Bio) {
        self.ensure_iocgs(ctx, bio.cg);
        self.rqos_merge(ctx, rq, bio)
    }

    fn done(&mut self, ctx: &mut Ctx, rq: &Request, _released: &mut Vec<BioId>) {
        self.rqos_done(ctx, rq)
    }

    fn done_bio(&mut self, _ctx: &mut Ctx, bio: &Bio, _released: &mut Vec<BioId>) {
        self.rqos_done_bio(bio)
    }

    fn timer(&mut self, ctx: &mut Ctx, released: &mut Vec<BioId>) {
        self.run_timers(ctx, released)
    }

    /// No `rq_qos_track` / `rq_qos_issue` (blk-iocost has neither), and its
    /// timers (the period timer, the waitq hrtimers, the hand-out of
    /// wake-ups) move only in `throttle` (activation starts a period,
    /// `kick_waitq`), in the timers themselves and in cgroup file writes:
    /// merge only adds debt and delay, done and done_bio only count.
    fn hooks(&self) -> QosHooks {
        QosHooks::THROTTLE
            | QosHooks::MERGE
            | QosHooks::DONE
            | QosHooks::DONE_BIO
            | QosHooks::RETURN_DELAY
    }

    fn next_timer(&self) -> Option<Ns> {
        self.next_timer_at()
    }

    fn return_delay(&mut self, ctx: &mut Ctx, cg: CgId) -> Ns {
        self.ensure_iocgs(ctx, cg);
        self.maybe_throttle_current(cg)
    }

    fn io_stat(&self, cg: CgId) -> String {
        self.pd_stat(cg)
    }

    fn write_file(
        &mut self,
        ctx: &mut Ctx,
        cg: CgId,
        file: &str,
        value: &str,
    ) -> Option<Result<(), KernelError>> {
        self.ensure_iocgs(ctx, cg);
        self.write_cgroup_file(ctx, cg, file, value)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}
