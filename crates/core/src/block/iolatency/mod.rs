//! blk-iolatency (`io.latency`, block/blk-iolatency.c): a cgroup with a
//! latency target protects itself by limiting the queue depth of its
//! siblings with looser (or no) targets whenever its own I/O misses the
//! target over a window.
//!
//! Each cgroup below the root on the device has a group (`iolatency_grp`)
//! once the policy is active, i.e. while some group on the device has a
//! target. A bio takes an in-flight slot at every level from its cgroup up
//! to (not including) the root, sleeping at a level whose depth is
//! exhausted; its completion gives the slots back, records its latency at
//! every level with a target and closes that level's window when it is due.
//! Scaling is in `scale.rs`, the return-to-user delay in `delay.rs`.

pub mod delay;
pub mod params;
mod path;
pub mod scale;
#[cfg(test)]
mod tests;

use crate::block::bio::BioId;
use crate::block::blk_cgroup::{CgId, CgroupTree, ROOT};
use crate::block::blk_stat::RqStat;
use crate::block::disk::DeviceInfo;
use crate::block::rq_wait::RqWait;
use crate::sim::kerr::KernelError;
use crate::sim::time::Ns;
use delay::Delay;
use scale::{ChildLat, DEFAULT_SCALE_COOKIE, UNLIMITED};

/// Window bounds: `clamp(16 × target, 100 ms, 1 s)` (`BLKIOLATENCY_MIN_WIN_SIZE`,
/// `BLKIOLATENCY_MAX_WIN_SIZE`).
pub const MIN_WIN_NS: Ns = 100_000_000;
pub const MAX_WIN_NS: Ns = 1_000_000_000;
/// The policy timer period (HZ).
pub const TIMER_NS: Ns = 1_000_000_000;
/// `FIXED_1` of the load-average arithmetic the EWMA borrows (`calc_load`).
const FIXED_1: u64 = 2048;
/// `iolatency_exp_factors`, one per quarter second of window length.
const EXP_FACTORS: [u64; 5] = [2045, 2039, 2031, 2023, 2014];

/// `struct latency_stat`: misses out of a total on non-rotational devices
/// (the window is fine while fewer than a tenth miss), a latency summary
/// on rotational ones (fine while the mean is within the target).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LatStat {
    Ps { missed: u64, total: u64 },
    Rqs(RqStat),
}

impl LatStat {
    /// Mirrors `latency_stat_init`.
    pub fn new(ssd: bool) -> LatStat {
        if ssd {
            LatStat::Ps {
                missed: 0,
                total: 0,
            }
        } else {
            LatStat::Rqs(RqStat::default())
        }
    }
    /// Mirrors `latency_stat_sum`.
    pub fn merge(&mut self, o: &LatStat) {
        match (self, o) {
            (
                LatStat::Ps { missed, total },
                LatStat::Ps {
                    missed: m,
                    total: t,
                },
            ) => {
                *missed += m;
                *total += t;
            }
            (LatStat::Rqs(a), LatStat::Rqs(b)) => a.merge(b),
            _ => {}
        }
    }
    /// Mirrors `latency_stat_samples`.
    pub fn samples(&self) -> u64 {
        match self {
            LatStat::Ps { total, .. } => *total,
            LatStat::Rqs(s) => s.nr_samples,
        }
    }
}

/// `struct iolatency_grp`: one cgroup's state on the device.
#[derive(Clone, Debug)]
pub struct Grp {
    /// The target (`min_lat_nsec`); 0 = none.
    pub min_lat_ns: u64,
    pub cur_win_ns: Ns,
    /// When the current window began (`window_start`, set at
    /// `iolatency_pd_init`). None for a group whose policy data predates the
    /// run: the kernel creates a group's data when the group's io.latency is
    /// written (or the policy activated), i.e. before the workload starts,
    /// so its first window is long due and the first completion closes it.
    pub window_start: Option<Ns>,
    /// The allowed depth (`rq_depth.max_depth`); UNLIMITED until scaled.
    pub max_depth: u32,
    pub rqw: RqWait<BioId>,
    /// The parent's cookie as this group last saw it.
    pub scale_cookie: u32,
    /// This window's statistics, and those accumulated across windows
    /// while the parent may not scale yet.
    pub stat: LatStat,
    pub cur_stat: LatStat,
    pub nr_samples: u64,
    /// Rotational devices: EWMA of the window means (`lat_avg`).
    pub lat_avg_ns: u64,
    pub ssd: bool,
    /// What this group keeps about its own children.
    pub child: ChildLat,
    pub delay: Delay,
}

impl Grp {
    /// Mirrors `iolatency_pd_init`; `now` None: before the run (set-up).
    fn new(ssd: bool, now: Option<Ns>, parent_cookie: u32) -> Grp {
        Grp {
            min_lat_ns: 0,
            cur_win_ns: MIN_WIN_NS,
            window_start: now,
            max_depth: UNLIMITED,
            rqw: RqWait::default(),
            scale_cookie: parent_cookie,
            stat: LatStat::new(ssd),
            cur_stat: LatStat::new(ssd),
            nr_samples: 0,
            lat_avg_ns: 0,
            ssd,
            child: ChildLat::default(),
            delay: Delay::default(),
        }
    }

    /// Mirrors `latency_sum_ok`.
    pub fn sum_ok(&self, s: &LatStat) -> bool {
        match s {
            LatStat::Ps { missed, total } => *missed < (total / 10).max(1),
            LatStat::Rqs(r) => r.mean_ns() <= self.min_lat_ns,
        }
    }

    /// Mirrors `latency_stat_record_time`.
    pub(crate) fn record(&mut self, lat_ns: u64) {
        let target = self.min_lat_ns;
        match &mut self.stat {
            LatStat::Ps { missed, total } => {
                if lat_ns >= target {
                    *missed += 1;
                }
                *total += 1;
            }
            LatStat::Rqs(r) => r.add(lat_ns),
        }
    }

    /// Mirrors `iolat_update_total_lat_avg` (`calc_load` with the factor of
    /// the window's length bucket).
    pub fn update_lat_avg(&mut self, s: &LatStat) {
        let LatStat::Rqs(r) = s else { return };
        let idx = ((self.cur_win_ns / (MAX_WIN_NS / 4)) as usize).min(EXP_FACTORS.len() - 1);
        let exp = EXP_FACTORS[idx];
        let (load, active) = (self.lat_avg_ns, r.mean_ns());
        let mut new = load * exp + active * (FIXED_1 - exp);
        if active >= load {
            new += FIXED_1 - 1;
        }
        self.lat_avg_ns = new / FIXED_1;
    }

    /// Mirrors `iolatency_set_min_lat_nsec` for the target and window.
    fn set_target(&mut self, ns: u64) {
        self.min_lat_ns = ns;
        self.cur_win_ns = (ns.saturating_mul(16)).clamp(MIN_WIN_NS, MAX_WIN_NS);
        if ns == 0 {
            self.delay.clear();
        }
    }
}

/// `struct blk_iolatency`: the policy on one device.
pub struct IoLatency {
    devno: (u32, u32),
    /// `nr_requests`: the queue depth the scaling works in.
    qd: u32,
    ssd: bool,
    /// By CgId; the root's entry only holds its children's `child` info.
    grps: Vec<Grp>,
    /// Each cgroup's parent (None for the root), as the tree had them.
    parents: Vec<Option<CgId>>,
    /// The 1 s timer, when pending.
    timer_at: Option<Ns>,
    /// Sleepers woken with a slot at the level they slept at, to go on up
    /// their paths, in wake order.
    pending: std::collections::VecDeque<(BioId, CgId)>,
    /// Sleepers were woken inside `throttle` (which cannot release them):
    /// release them at this instant from `timer`.
    kick_at: Option<Ns>,
    /// Groups with a target (`enable_cnt`); the policy acts while > 0.
    enable_cnt: u32,
}

impl IoLatency {
    /// The policy for device `dev` from the cgroups' `io.latency` files, or
    /// None if no line names the device and `force` (a timed io.latency
    /// write will come) is false: the kernel adds the policy on a disk's
    /// first io.latency write. It acts while some group has a target.
    /// Err names the cgroup.
    pub fn new(
        dev: &DeviceInfo,
        cgroups: &CgroupTree,
        force: bool,
    ) -> Result<Option<IoLatency>, (CgId, KernelError)> {
        let devno = (dev.major, dev.minor);
        let mut targets = Vec::new();
        for cg in cgroups.ids() {
            let Some(text) = cgroups.file(cg, "io.latency") else {
                continue;
            };
            if cg == ROOT {
                return Err((
                    cg,
                    KernelError {
                        errno: crate::sim::kerr::Errno::Enoent,
                        msg: "io.latency does not exist in the root cgroup".into(),
                    },
                ));
            }
            for line in text.lines().filter(|l| !l.trim().is_empty()) {
                let l = params::parse_io_latency(line).map_err(|e| (cg, e))?;
                if l.devno == devno {
                    targets.push((cg, l.target_ns));
                }
            }
        }
        let mut lat = IoLatency {
            devno,
            qd: dev.nr_requests.max(1),
            ssd: !dev.rotational,
            grps: Vec::new(),
            parents: Vec::new(),
            timer_at: None,
            pending: std::collections::VecDeque::new(),
            kick_at: None,
            enable_cnt: 0,
        };
        // the scenario's set-up happens before the run's first instant
        lat.ensure(cgroups, None);
        let named = force || !targets.is_empty();
        for (cg, ns) in targets {
            lat.set_limit(cg, ns);
        }
        Ok(named.then_some(lat))
    }

    /// Policy data for every cgroup of the tree (`iolatency_pd_init`,
    /// parents before children as the tree lists them); `now` None at set-up.
    fn ensure(&mut self, cgroups: &CgroupTree, now: Option<Ns>) {
        while self.grps.len() < cgroups.len() {
            let cg = self.grps.len() as CgId;
            let cookie = cgroups
                .parent(cg)
                .and_then(|p| self.grps.get(p as usize))
                .map_or(DEFAULT_SCALE_COOKIE, |p| p.child.scale_cookie);
            self.grps.push(Grp::new(self.ssd, now, cookie));
            self.parents.push(cgroups.parent(cg));
        }
    }

    /// Mirrors the effect of `iolatency_set_limit` once parsed: the new
    /// target, the enable count, and a reset of the parent's scaling if the
    /// target changed (`iolatency_clear_scaling`).
    fn set_limit(&mut self, cg: CgId, ns: u64) {
        let old = self.grps[cg as usize].min_lat_ns;
        self.grps[cg as usize].set_target(ns);
        if old == 0 && ns != 0 {
            self.enable_cnt += 1;
        }
        if old != 0 && ns == 0 {
            self.enable_cnt -= 1;
        }
        if old != ns {
            if let Some(p) = self.parents[cg as usize] {
                self.grps[p as usize].child = ChildLat::default();
            }
        }
    }

    pub fn enabled(&self) -> bool {
        self.enable_cnt > 0
    }

    pub fn grp(&self, cg: CgId) -> Option<&Grp> {
        self.grps.get(cg as usize)
    }
}
