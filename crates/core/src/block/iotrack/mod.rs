//! blk-iotrack: the monitor-only blkcg policy of Weiping Zhang's RFC
//! ("blkcg: add blk-iotrack", linux-block, March 2020; `block/blk-iotrack.c` in
//! dublio/linux), never merged upstream, and the report of its userspace tool
//! (dublio/iotrack).
//!
//! - [`counters`]: the per-(cgroup, device) counters, the per-bio accounting
//!   rule (`iotrack_account_bio`) and the `io.iotrack.stat` line.
//! - [`lat_thresh`]: the `io.iotrack.lat_thresh` file.
//! - [`report`]: the iotrack tool's interval table (basic and `-x`).
//! - [`IoTrack`]: the rq_qos member for the simulator (`blkcg_iotrack_done_bio`).
//!
//! It never delays anything: it only watches completions.

pub mod counters;
pub mod lat_thresh;
pub mod report;

use std::any::Any;
use std::cell::Cell;

use crate::block::bio::{Bio, BioId};
use crate::block::blk_cgroup::{CgId, CgroupTree, ROOT};
use crate::block::ctx::Ctx;
use crate::block::disk::DeviceInfo;
use crate::block::rq_qos::{QosHooks, QosVerdict, RqQos};
use crate::sim::kerr::KernelError;

pub use counters::{IotrackCounters, RqStat, IOT_NR, IOT_OTHER, IOT_READ, IOT_WRITE};
pub use lat_thresh::{lat_thresh_line, parse_lat_thresh};

/// Number of latency buckets (LAT_BUCKET_NR).
pub const LAT_BUCKET_NR: usize = 8;

/// The RFC's default thresholds, ns: 50 µs, 100 µs, 200 µs, 400 µs, 1 ms, 2 ms, 4 ms, 8 ms.
pub const DEFAULT_THRESH_NS: [u64; 8] = [
    50_000, 100_000, 200_000, 400_000, 1_000_000, 2_000_000, 4_000_000, 8_000_000,
];

/// The cgroup file names (cgroup v2, and v1's blkio.* spelling).
pub const STAT_FILE: &str = "io.iotrack.stat";
pub const LAT_THRESH_FILE: &str = "io.iotrack.lat_thresh";
const LAT_THRESH_FILE_V1: &str = "blkio.iotrack.lat_thresh";

/// `bio->bi_issue` layout (include/linux/blk_types.h): bits 0..50 hold the time,
/// bits 51..62 the size in sectors, bit 63 is reserved.
pub const BIO_ISSUE_SIZE_BITS: u32 = 12;
pub const BIO_ISSUE_SIZE_SHIFT: u32 = 64 - 1 - BIO_ISSUE_SIZE_BITS;
pub const BIO_ISSUE_TIME_MASK: u64 = (1u64 << BIO_ISSUE_SIZE_SHIFT) - 1;

/// `__bio_issue_time`: a ns time cut to the 51 bits `bi_issue` keeps.
#[inline]
pub fn bio_issue_time(t: u64) -> u64 {
    t & BIO_ISSUE_TIME_MASK
}

/// The size `bio_issue_init` stores: the bio's sectors modulo 4096. A bio of
/// 2 MiB or more is therefore under-counted (4096 sectors are recorded as 0).
/// blk-iotrack reads `sts` from here, not from the bio's current size.
#[inline]
pub fn bio_issue_size(sectors: u64) -> u64 {
    sectors & ((1u64 << BIO_ISSUE_SIZE_BITS) - 1)
}

static EMPTY_COUNTERS: IotrackCounters = IotrackCounters {
    ios: [0; 3],
    sectors: [0; 3],
    tms: [0; 3],
    dtms: [0; 3],
    hit: [[0; 8]; 3],
    lat_min: 0,
    lat_max: 0,
    lat_mean: 0,
    lat_nr: 0,
};

/// One blkg's policy data (`struct iotrack_grp`).
#[derive(Clone, Debug)]
struct Group {
    counters: IotrackCounters,
    thresh_ns: [u64; 8],
    /// The blkg exists (it has had IO, a config write, or it is the root): only
    /// then does the cgroup's file show a line for the device.
    online: bool,
    /// The unfolded per-CPU `blk_rq_stat` (one CPU in the model).
    pcpu: Cell<RqStat>,
    /// The folded group stat (`iot->stat.rqs`), updated when the file is read.
    stat: Cell<RqStat>,
}

impl Group {
    fn new() -> Group {
        Group {
            counters: IotrackCounters::default(),
            thresh_ns: DEFAULT_THRESH_NS,
            online: false,
            pcpu: Cell::new(RqStat::new()),
            stat: Cell::new(RqStat::new()),
        }
    }
}

/// blk-iotrack on one device, as an rq_qos member (`blkcg_iotrack_ops`: only the
/// `done_bio` hook does work).
pub struct IoTrack {
    devno: String,
    dev: (u32, u32),
    groups: Vec<Group>,
    /// The per-bio hooks count (the default). A run whose caller reads none
    /// of blk-iotrack's figures turns this off: the policy does not exist
    /// for it, and the hooks then cost a call and a test per bio. Its files
    /// are still parsed and written (a bad write is still refused).
    counting: bool,
}

impl IoTrack {
    /// `blk_iotrack_init` for `dev`, then the scenario's `io.iotrack.lat_thresh`
    /// writes: every line of every cgroup's file is parsed; lines for this device
    /// set that cgroup's thresholds (the last one wins), lines for other devices
    /// are left to their device's IoTrack. The first bad line is returned with
    /// its cgroup.
    pub fn new(dev: &DeviceInfo, cgroups: &CgroupTree) -> Result<IoTrack, (CgId, KernelError)> {
        let mut it = IoTrack {
            devno: dev.devno(),
            dev: (dev.major, dev.minor),
            groups: Vec::new(),
            counting: true,
        };
        it.ensure(cgroups.len().saturating_sub(1) as CgId);
        it.groups[ROOT as usize].online = true;
        for cg in cgroups.ids() {
            for name in [LAT_THRESH_FILE, LAT_THRESH_FILE_V1] {
                if let Some(content) = cgroups.file(cg, name) {
                    for line in content.lines().filter(|l| !l.trim().is_empty()) {
                        it.write_lat_thresh(cgroups, cg, line)
                            .map_err(|e| (cg, e))?;
                    }
                }
            }
        }
        Ok(it)
    }

    fn ensure(&mut self, cg: CgId) {
        if cg as usize >= self.groups.len() {
            self.groups.resize_with(cg as usize + 1, Group::new);
        }
    }

    /// Create the blkg of `cg` and of its ancestors (`blkg_create` links parents first).
    fn bring_online(&mut self, cgroups: &CgroupTree, cg: CgId) {
        self.ensure(cg);
        if self.groups[cg as usize].online {
            return;
        }
        for a in cgroups.ancestors(cg) {
            self.ensure(a);
            self.groups[a as usize].online = true;
        }
    }

    /// Apply one `io.iotrack.lat_thresh` write. Ok(false) if it names another device.
    fn write_lat_thresh(
        &mut self,
        cgroups: &CgroupTree,
        cg: CgId,
        line: &str,
    ) -> Result<bool, KernelError> {
        let (dev, thresh) = parse_lat_thresh(line)?;
        if dev != self.dev {
            return Ok(false);
        }
        self.bring_online(cgroups, cg);
        self.groups[cg as usize].thresh_ns = thresh;
        Ok(true)
    }

    /// Whether the per-bio hooks count (see the field). Not part of the RFC:
    /// a simulator-only switch, set before the run starts.
    pub fn set_counting(&mut self, on: bool) {
        self.counting = on;
    }

    /// Whether the per-bio hooks count.
    pub fn counting(&self) -> bool {
        self.counting
    }

    /// `MAJ:MIN` of the device.
    pub fn devno(&self) -> &str {
        &self.devno
    }

    /// The cumulative counters of `cg` on this device (zeros if it never had IO).
    /// `lat_mean` here is the exact integer mean; [`stat_file`](Self::stat_file)
    /// prints the kernel's read-time fold instead.
    pub fn counters(&self, cg: CgId) -> &IotrackCounters {
        self.groups
            .get(cg as usize)
            .map(|g| &g.counters)
            .unwrap_or(&EMPTY_COUNTERS)
    }

    /// The thresholds in force for `cg` on this device.
    pub fn thresholds(&self, cg: CgId) -> [u64; 8] {
        self.groups
            .get(cg as usize)
            .map(|g| g.thresh_ns)
            .unwrap_or(DEFAULT_THRESH_NS)
    }

    /// Whether the cgroup has a blkg on this device (its files show a line).
    pub fn has_blkg(&self, cg: CgId) -> bool {
        self.groups.get(cg as usize).is_some_and(|g| g.online)
    }

    /// The content of `cg`'s `io.iotrack.stat` for this device: one line and a
    /// newline, or nothing if the cgroup has no blkg here. Like a read of the
    /// kernel file this folds the pending latency samples into the group stat
    /// (so the printed mean truncates once per read, as in the kernel).
    pub fn stat_file(&self, cg: CgId) -> String {
        let Some(g) = self.groups.get(cg as usize).filter(|g| g.online) else {
            return String::new();
        };
        let mut stat = g.stat.get();
        stat.sum_from(&g.pcpu.get());
        g.stat.set(stat);
        g.pcpu.set(RqStat::new());
        let mut s = g
            .counters
            .stat_line_with(&self.devno, stat.mean, stat.min, stat.max);
        s.push('\n');
        s
    }

    /// The content of `cg`'s `io.iotrack.lat_thresh` for this device.
    pub fn lat_thresh_file(&self, cg: CgId) -> String {
        match self.groups.get(cg as usize).filter(|g| g.online) {
            Some(g) => {
                let mut s = lat_thresh_line(&self.devno, &g.thresh_ns);
                s.push('\n');
                s
            }
            None => String::new(),
        }
    }

    /// `blkcg_iotrack_done_bio`: account `bio` completing at `now` for its cgroup
    /// and every ancestor, each with its own thresholds. Q = `t_queue`,
    /// D = `t_issue` (0 = none), size = the 12-bit `bi_issue` size of the bio's
    /// current length.
    #[inline]
    pub fn account_bio(&mut self, cgroups: &CgroupTree, bio: &Bio, now: u64) {
        self.bring_online(cgroups, bio.cg);
        let rwo = bio.op.rwo();
        let size = bio_issue_size(bio.sectors());
        // The kernel's ktime never reads 0, so its 0 means "no D stamp"; the
        // simulated clock starts at 0. All three stamps move 1 ns later (the
        // differences, Q2C and D2C, are unchanged) so that a bio queued and
        // dispatched at instant 0 keeps its D2C; a bio queued later with
        // t_issue 0 was never dispatched and stays without D.
        let q = bio.t_queue + 1;
        let d = if bio.t_issue == 0 && bio.t_queue > 0 {
            0
        } else {
            bio.t_issue + 1
        };
        let c = now + 1;
        for cg in cgroups.ancestors(bio.cg) {
            let g = &mut self.groups[cg as usize];
            let thresh = g.thresh_ns;
            if let Some(q2c) = g.counters.account_counts(rwo, size, q, d, c, &thresh) {
                let mut p = g.pcpu.get();
                p.add(q2c);
                g.pcpu.set(p);
                let c = &mut g.counters;
                c.lat_mean = c.tms.iter().fold(0u64, |a, &x| a.wrapping_add(x)) / c.lat_nr;
            }
        }
    }
}

impl RqQos for IoTrack {
    fn name(&self) -> &'static str {
        "iotrack"
    }

    /// Not a throttle: the hook only notes that the bio's blkg now exists (the
    /// kernel creates it when the bio is associated at submission).
    fn throttle(&mut self, ctx: &mut Ctx, _id: BioId, bio: &mut Bio) -> QosVerdict {
        if self.counting {
            self.bring_online(ctx.cgroups, bio.cg);
        }
        QosVerdict::Proceed
    }

    fn done_bio(&mut self, ctx: &mut Ctx, bio: &Bio, _released: &mut Vec<BioId>) {
        if self.counting {
            self.account_bio(ctx.cgroups, bio, ctx.now);
        }
    }

    /// Its two per-I/O hooks only count, and only while counting; no
    /// timer, no delay.
    fn hooks(&self) -> QosHooks {
        if self.counting {
            QosHooks::THROTTLE | QosHooks::DONE_BIO
        } else {
            QosHooks::NONE
        }
    }

    fn write_file(
        &mut self,
        ctx: &mut Ctx,
        cg: CgId,
        file: &str,
        value: &str,
    ) -> Option<Result<(), KernelError>> {
        if file != LAT_THRESH_FILE && file != LAT_THRESH_FILE_V1 {
            return None;
        }
        match self.write_lat_thresh(ctx.cgroups, cg, value) {
            Ok(true) => Some(Ok(())),
            Ok(false) => None, // another device's line
            Err(e) => Some(Err(e)),
        }
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

#[cfg(test)]
mod tests;
