//! blk-throttle (cgroup v2 `io.max`): per-(cgroup, device) bandwidth and IOPS
//! limits enforced by holding bios in per-group queues and releasing them from
//! jiffy timers. One [`Throttle`] is the kernel's `throtl_data` of one device;
//! one `Tg` per cgroup is its `throtl_grp`.
//!
//! Five kernel eras are modelled (switch `throttle.wait`):
//! * `pre-2018`     v4.12..v4.18: one FIFO per source, bytes and IO charged
//!   together, iops wait aimed at the exact-rate moment (may exceed a slice);
//! * `slice-capped` v4.19..v5.2 (commit 991f61fe): the same, but the iops wait
//!   is the rest of the current slice window (0 on an exact boundary, which
//!   the kernel turns into a spin until the next jiffy);
//! * `joint-fifo`   Linux 6.1.y as Debian ships it (6.1.176): one FIFO per
//!   direction, bytes and IO charged together by `throtl_charge_bio`, v5.3
//!   rounding, split remainders re-checked for iops only (v5.18), carryover
//!   kept in separate unsigned fields (a880ae93e5b5, v6.1) and folded into the
//!   trim (e8368b57c006 / eead0056648c, backported to 6.1.y), the bps check
//!   short-circuiting the iops check, no REQ_META bypass;
//! * `joint-fifo-min-wait` v6.12..v6.14 (Debian's 6.12.117): the same FIFO
//!   with both waits computed (183daeb11de8, v6.2), signed carryover
//!   comparisons (bb8d5587bdc3, v6.6), the minimum iops wait `HZ/iops + 1`
//!   (1beabab88ece, v6.11) and the REQ_META bypass (29390bb5661d, v6.12);
//! * `current`      v6.16+ (and the late-2025 slice fix): separate bps and
//!   iops queues, bytes charged once, signed carryover on limit changes,
//!   v5.3 rounding and v6.11 minimum iops wait, split pieces counted as IOs.
//!
//! Layout: `io_max.rs` (file syntax), `wait.rs` (budget and wait formulas),
//! `slice.rs` (slice start/extend/trim, carryover), `joint.rs` (the checks,
//! charge, trim and carryover of the single-FIFO eras of 6.1 and 6.12),
//! `queue.rs` (qnodes, service queues, pending trees, timers), `dispatch.rs`
//! (submission path, dispatch rounds, the pending timer and the issue work),
//! `gate.rs` (the submission path's shortcut through a level whose limits
//! cannot bind at this jiffy, and the walk up the levels it lets through).

mod dispatch;
mod gate;
pub mod io_max;
mod joint;
mod queue;
mod slice;
mod wait;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_gate;
#[cfg(test)]
mod tests_joint;

use std::collections::BTreeSet;

use crate::block::blk_cgroup::{CgId, CgroupTree, ROOT};
use crate::block::disk::DeviceInfo;
use crate::sim::kerr::{split_devno, KernelError};
use crate::sim::switches::Switches;
use crate::sim::time::{Hz, JiffyCache, Ns};

use gate::Gate;
pub use io_max::{parse_io_max, IoMaxLimits, BPS_MAX, IOPS_MAX};
use queue::{Qnode, Sq};

/// `throtl_grp_quantum`: bios one group may move per dispatch round,
/// split 3/4 reads (6) and 1/4 writes (2).
pub const THROTL_GRP_QUANTUM: u32 = 8;
/// `throtl_quantum`: bios one service queue may move per dispatch round.
pub const THROTL_QUANTUM: u32 = 32;

const READ: usize = 0;
const WRITE: usize = 1;

/// Which kernel's blk-throttle rules apply (switch `throttle.wait`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Era {
    Pre2018,
    SliceCapped,
    /// Linux 6.1.y (`joint-fifo`).
    JointFifo,
    /// v6.12..v6.14, Linux 6.12.y (`joint-fifo-min-wait`).
    JointFifoMinWait,
    Current,
}

impl Era {
    pub fn from_switches(sw: &Switches) -> Era {
        match sw.get("throttle.wait") {
            "pre-2018" => Era::Pre2018,
            "slice-capped" => Era::SliceCapped,
            "joint-fifo" => Era::JointFifo,
            "joint-fifo-min-wait" => Era::JointFifoMinWait,
            _ => Era::Current,
        }
    }
    fn is_2018(self) -> bool {
        matches!(self, Era::Pre2018 | Era::SliceCapped)
    }
    /// The single-FIFO eras of 6.1 and 6.12 (v5.3..v6.15 family).
    fn is_joint(self) -> bool {
        matches!(self, Era::JointFifo | Era::JointFifoMinWait)
    }
}

/// Slice length in jiffies. `DFL_THROTL_SLICE_HD` = HZ/10 and
/// `DFL_THROTL_SLICE_SSD` = HZ/50. 'auto' follows the era: 100 ms for the
/// current kernel; for the 2018 eras, 20 ms on non-rotational devices, the
/// `CONFIG_BLK_DEV_THROTTLING_LOW=y` configuration the seed run used. The
/// 6.1 and 6.12 eras follow Debian's kernels (THROTTLING_LOW off in 6.1; the
/// HZ/10 fix in 6.12.y): 100 ms.
pub fn slice_jiffies(hz: Hz, era: Era, slice_switch: &str, rotational: bool) -> u64 {
    let hd = (hz.0 as u64 / 10).max(1);
    let ssd = (hz.0 as u64 / 50).max(1);
    match slice_switch {
        "100ms" => hd,
        "20ms-nonrot" => {
            if rotational {
                hd
            } else {
                ssd
            }
        }
        _ => match era {
            Era::Current | Era::JointFifo | Era::JointFifoMinWait => hd,
            _ => {
                if rotational {
                    hd
                } else {
                    ssd
                }
            }
        },
    }
}

/// One bio held by the throttle, as a queue entry. The bio itself stays in
/// the engine's slab; this keeps what the throttle needs about it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct QBio {
    pub id: u32,
    pub dir: u8,
    /// Bytes charged for bps (512 for a discard, as `throtl_bio_data_size`).
    pub size: u32,
    /// Payload bytes, for the counters.
    pub bytes: u32,
    /// BIO_TG_BPS_THROTTLED: bytes already charged at the current level.
    pub tg_bps: bool,
    /// BIO_BPS_THROTTLED: bytes charged at every level (split remainder).
    pub bps_throttled: bool,
    /// When it was queued at its current level (for the wait counters).
    pub t_enq: Ns,
}

/// Counters per group and direction, kept at the level where they happen.
/// `repr(C)`, those of every bio that passes first (see [`Tg`]).
#[derive(Clone, Copy, Debug, Default)]
#[repr(C)]
pub(crate) struct TgStats {
    /// Bios that passed this level (directly or after waiting).
    pub passed: [u64; 2],
    pub passed_bytes: [u64; 2],
    /// Bios that had to wait at this level.
    pub queued: [u64; 2],
    pub queued_bytes: [u64; 2],
    /// Sum and maximum of the time bios waited at this level.
    pub wait_ns: [u64; 2],
    pub max_wait_ns: [u64; 2],
    /// IOs charged without a queue pass (split pieces, REQ_META overdraft).
    pub debt_ios: [u64; 2],
}

impl TgStats {
    /// A bio passed this level.
    #[inline]
    fn count_pass(&mut self, d: usize, bytes: u32) {
        self.passed[d] += 1;
        self.passed_bytes[d] += bytes as u64;
    }
}

/// `struct throtl_grp`. `repr(C)` and line-aligned, with what a bio that
/// passes through the submission shortcut reads and writes first (the
/// window and dispatch counts, the gate, the pass counters, the queue
/// counts: five lines for a read): with a thousand groups each group's
/// lines have left the cache by its next bio. The order changes no result.
#[repr(C, align(64))]
pub(crate) struct Tg {
    pub slice_start: [u64; 2],
    pub slice_end: [u64; 2],
    /// Signed in the current kernel (negative = carried-over credit); never
    /// negative in the 2018 eras.
    pub bytes_disp: [i64; 2],
    pub io_disp: [i64; 2],
    /// Per direction, the submission shortcut's evaluation (`gate.rs`).
    pub gate: [Gate; 2],
    /// This group or an ancestor has a bps / an iops limit in direction d.
    pub rules_bps: [bool; 2],
    pub rules_iops: [bool; 2],
    pub parent: Option<CgId>,
    pub stats: TgStats,
    pub sq: Sq,
    pub conf: IoMaxLimits,
    /// `carryover_bytes` / `carryover_ios` of the 6.1 and 6.12 eras, as bit
    /// patterns: 6.1 declares them unsigned (u64, unsigned int), 6.12 signed
    /// (long long, int); the eras read them accordingly. Zero in the others.
    pub carryover_bytes: [u64; 2],
    pub carryover_ios: [u32; 2],
    pub disptime: u64,
    /// Key in the parent's pending tree when PENDING.
    pub pend_key: Option<(u64, u64)>,
    pub was_empty: bool,
    pub iops_was_empty: bool,
    pub qn_self: [Qnode; 2],
    pub qn_parent: [Qnode; 2],
}

impl Tg {
    fn new(parent: Option<CgId>) -> Tg {
        Tg {
            parent,
            conf: IoMaxLimits::UNLIMITED,
            bytes_disp: [0; 2],
            io_disp: [0; 2],
            carryover_bytes: [0; 2],
            carryover_ios: [0; 2],
            slice_start: [0; 2],
            slice_end: [0; 2],
            rules_bps: [false; 2],
            rules_iops: [false; 2],
            disptime: 0,
            pend_key: None,
            was_empty: false,
            iops_was_empty: false,
            sq: Sq::default(),
            qn_self: Default::default(),
            qn_parent: Default::default(),
            stats: TgStats::default(),
            gate: [Gate::NONE; 2],
        }
    }
    fn has_rules(&self, d: usize) -> bool {
        self.rules_bps[d] || self.rules_iops[d]
    }
}

/// `struct throtl_data`: the throttle state of one device.
pub struct Throttle {
    devno: (u32, u32),
    /// HZ, as a number and as the clock helper.
    hz: u64,
    hz_t: Hz,
    /// Slice length in jiffies.
    slice: u64,
    era: Era,
    /// One group per cgroup, indexed by CgId.
    tgs: Vec<Tg>,
    /// The device-level service queue (`td->service_queue`).
    td_sq: Sq,
    /// Bios queued anywhere in the tree, per direction (`td->nr_queued`).
    nr_queued: [u64; 2],
    /// Armed pending timers: (expiry jiffy, u32::MAX - sq id), so that at the
    /// same jiffy deeper queues (higher ids) run first.
    timers: BTreeSet<(u64, u32)>,
    /// Insertion counter: equal disptimes keep FIFO order in pending trees.
    seq: u64,
    active: bool,
    /// The submission path's jiffies.
    jiffy: JiffyCache,
    /// The submission path may use the gates (`gate.rs`): the current era,
    /// except in the test that compares both paths.
    shortcut: bool,
    /// The device-level bios are issued by a work item the host runs
    /// later (`kthrotld`, machine/kthrotld.rs: a host with CPUs), not by
    /// the timer call that moved them there.
    issue_by_work: bool,
    /// A timer moved bios to the device level since the host last asked
    /// ([`Throttle::take_work_queued`]): `queue_work(kthrotld_workqueue,
    /// &td->dispatch_work)` was called.
    work_queued: bool,
}

impl Throttle {
    /// Build from every cgroup's io.max lines that name this device.
    pub fn new(
        dev: &DeviceInfo,
        cgroups: &CgroupTree,
        hz: Hz,
        switches: &Switches,
    ) -> Result<Throttle, (CgId, KernelError)> {
        let era = Era::from_switches(switches);
        let slice = slice_jiffies(hz, era, switches.get("throttle.slice"), dev.rotational);
        let mut t = Throttle {
            devno: (dev.major, dev.minor),
            hz: hz.0 as u64,
            hz_t: hz,
            slice,
            era,
            tgs: Vec::new(),
            td_sq: Sq::default(),
            nr_queued: [0; 2],
            timers: BTreeSet::new(),
            seq: 0,
            active: false,
            jiffy: JiffyCache::default(),
            shortcut: era == Era::Current,
            issue_by_work: false,
            work_queued: false,
        };
        t.grow(cgroups);
        for cg in cgroups.ids() {
            let Some(file) = cgroups.file(cg, "io.max") else {
                continue;
            };
            for line in file.split('\n') {
                if line.trim().is_empty() {
                    continue;
                }
                let (devno, body) = split_devno(line).map_err(|e| (cg, e))?;
                if devno != t.devno {
                    continue;
                }
                if cg == ROOT {
                    return Err((cg, root_error()));
                }
                let mut lim = t.tgs[cg as usize].conf;
                io_max::apply_body(body, &mut lim).map_err(|e| (cg, e))?;
                t.tgs[cg as usize].conf = lim;
            }
        }
        t.update_has_rules();
        Ok(t)
    }

    /// True when any group of this device has a limit.
    pub fn is_active(&self) -> bool {
        self.active
    }

    /// The era and slice in force (for reports).
    pub fn era(&self) -> Era {
        self.era
    }
    pub fn slice_jiffies(&self) -> u64 {
        self.slice
    }

    /// The limits of cgroup `cg` on this device.
    pub fn limits(&self, cg: CgId) -> IoMaxLimits {
        self.tgs
            .get(cg as usize)
            .map(|t| t.conf)
            .unwrap_or(IoMaxLimits::UNLIMITED)
    }

    /// What `cat io.max` prints for this device in `cg` (tg_prfill_limit).
    pub fn read_io_max(&self, cg: CgId) -> String {
        self.limits(cg).format(self.devno)
    }

    /// Counters maintained by the throttle at cgroup `cg`'s level, one line:
    /// bios/bytes that waited here, bios/bytes that passed this level, total
    /// and maximum wait (µs), and IOs charged without queueing (split pieces,
    /// REQ_META overdraft). Empty when nothing happened at this level.
    pub fn io_stat(&self, cg: CgId) -> String {
        let Some(tg) = self.tgs.get(cg as usize) else {
            return String::new();
        };
        let s = &tg.stats;
        if s.passed == [0, 0] && s.queued == [0, 0] && s.debt_ios == [0, 0] {
            return String::new();
        }
        // fields only: the caller prints the device (`blkcg_print_one_stat`
        // prints the name once, then each policy's fields)
        format!(
            "throttled_rios={} throttled_wios={} throttled_rbytes={} throttled_wbytes={} \
             rios={} wios={} rbytes={} wbytes={} wait_rus={} wait_wus={} max_wait_rus={} max_wait_wus={} \
             split_rios={} split_wios={}",
            s.queued[READ],
            s.queued[WRITE],
            s.queued_bytes[READ],
            s.queued_bytes[WRITE],
            s.passed[READ],
            s.passed[WRITE],
            s.passed_bytes[READ],
            s.passed_bytes[WRITE],
            s.wait_ns[READ] / 1000,
            s.wait_ns[WRITE] / 1000,
            s.max_wait_ns[READ] / 1000,
            s.max_wait_ns[WRITE] / 1000,
            s.debt_ios[READ],
            s.debt_ios[WRITE],
        )
    }

    /// Bios currently held, per direction.
    pub fn nr_queued(&self) -> [u64; 2] {
        self.nr_queued
    }

    /// Create groups for cgroups added to the tree since (blkg creation).
    fn grow(&mut self, cgroups: &CgroupTree) {
        while self.tgs.len() < cgroups.len() {
            let cg = self.tgs.len() as CgId;
            let parent = cgroups.parent(cg);
            let mut tg = Tg::new(parent);
            // throtl_pd_online: inherit the ancestors' rules
            if let Some(p) = parent {
                let p = &self.tgs[p as usize];
                tg.rules_bps = p.rules_bps;
                tg.rules_iops = p.rules_iops;
            }
            self.tgs.push(tg);
        }
    }

    /// `tg_update_has_rules` over the whole tree (parents come before
    /// children in CgId order).
    fn update_has_rules(&mut self) {
        let mut active = false;
        for i in 0..self.tgs.len() {
            let (pb, pi) = match self.tgs[i].parent {
                Some(p) => (
                    self.tgs[p as usize].rules_bps,
                    self.tgs[p as usize].rules_iops,
                ),
                None => ([false; 2], [false; 2]),
            };
            let tg = &mut self.tgs[i];
            for d in 0..2 {
                tg.rules_bps[d] = pb[d] || tg.conf.bps[d] != BPS_MAX;
                tg.rules_iops[d] = pi[d] || tg.conf.iops[d] != IOPS_MAX;
                active |= tg.rules_bps[d] || tg.rules_iops[d];
            }
        }
        self.active = active;
    }
}

/// io.max is `CFTYPE_NOT_ON_ROOT`: the root cgroup has no such file, so the
/// write fails when the file is opened.
fn root_error() -> KernelError {
    KernelError {
        errno: crate::sim::kerr::Errno::Enoent,
        msg: "io.max does not exist in the root cgroup".into(),
    }
}
