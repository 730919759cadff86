//! `struct bio` as the model needs it: what is being done, for which cgroup and
//! with which priority, plus the Q/D/C timestamps every controller and report
//! reads (blk-iotrack's `bi_issue` / `bi_start`, blktrace's Q, D, C).

use crate::block::blk_cgroup::CgId;
use crate::block::ioprio::Ioprio;
use crate::sim::time::Ns;

pub use crate::sim::engine::{DevId, JobId};

pub type BioId = u32;

/// `enum req_op`, reduced to what the model distinguishes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Op {
    Read,
    Write,
    Flush,
    Discard,
}

impl Op {
    /// `op_is_write`: data direction for accounting (discard and flush count as writes
    /// in the kernel's `op_is_write`, but as "other" in iotrack and diskstats' read/write split).
    pub fn is_write(self) -> bool {
        !matches!(self, Op::Read)
    }
    /// Index for read/write/other tables (iotrack: READ, WRITE, OTHER).
    pub fn rwo(self) -> usize {
        match self {
            Op::Read => 0,
            Op::Write => 1,
            _ => 2,
        }
    }
}

/// Who is waiting for this bio.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// An fio io_u: job and io_u slot.
    Job { job: JobId, io_u: u32 },
    /// A fragment of a split bio; completes into its parent.
    Split { parent: BioId },
    /// Page-cache writeback, readahead and similar kernel-originated IO.
    Kernel { tag: u32 },
    /// A loop device's bio on its backing device for request `rq` of loop
    /// device `dev` (`lo_rw_aio`); its end completes that request
    /// (`lo_rw_aio_complete`). See `block::stack`.
    Stacked { dev: DevId, rq: u32 },
    /// A bio-based (device-mapper) device's clone of bio `parent`
    /// (`__map_bio`); its end ends the parent (`clone_endio`).
    Clone { parent: BioId },
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BioFlags {
    /// REQ_SYNC
    pub sync: bool,
    /// REQ_META
    pub meta: bool,
    /// REQ_FUA
    pub fua: bool,
    /// REQ_RAHEAD
    pub readahead: bool,
    /// REQ_BACKGROUND: background or periodic (kupdate) writeback.
    pub background: bool,
    /// REQ_IDLE: set with REQ_SYNC on O_DIRECT writes (wbt leaves those alone).
    pub idle: bool,
    /// BIO_QOS_THROTTLED: went through `rq_qos_throttle` (not merged), so
    /// `rq_qos_done_bio` owes the policies a completion.
    pub qos_throttled: bool,
    /// BIO_THROTTLED / BIO_BPS_THROTTLED: already charged by blk-throttle.
    pub throttled: bool,
    /// The submitter is blocked in the submit call until this bio gets a request
    /// (a synchronous submission from a job), as opposed to an async context.
    pub submitter_waits: bool,
}

#[derive(Clone, Debug)]
pub struct Bio {
    pub dev: DevId,
    pub cg: CgId,
    pub op: Op,
    pub flags: BioFlags,
    /// Start, in 512-byte sectors.
    pub sector: u64,
    pub bytes: u32,
    pub ioprio: Ioprio,
    pub origin: Origin,
    /// submit_bio() was called.
    pub t_submit: Ns,
    /// Request allocation began for this piece (the request's `alloc_time_ns`).
    pub t_alloc: Ns,
    /// Q: entered the block layer proper (after blk-throttle released it).
    pub t_queue: Ns,
    /// D: the request carrying it was issued to the driver (0 = never).
    pub t_issue: Ns,
    /// C: completed.
    pub t_done: Ns,
    /// Outstanding split fragments (a parent completes when this reaches 0).
    pub pending_frags: u16,
    /// iocost's per-bio cost (`bi_iocost_cost`), set by its throttle hook.
    pub qos_cost: u64,
    /// Split pieces are submitted one after another by the same context: the
    /// piece to start once this one has a request (NO_BIO = none).
    pub chain_next: BioId,
    /// Position in the rq_qos chain this bio has passed (for a bio released by a
    /// controller, the chain resumes after it).
    pub qos_pos: u8,
    /// blk-wbt's accounting class for the request this bio gets
    /// (`rq->wbt_flags`, see `block::wbt::acct`); 0 = not tracked.
    pub wbt_acct: u8,
}

/// "No bio" in a BioId field.
pub const NO_BIO: BioId = u32::MAX;

impl Bio {
    /// A bio about to be submitted: no time stamps yet, no flags.
    pub fn new(dev: DevId, cg: CgId, op: Op, sector: u64, bytes: u32, origin: Origin) -> Bio {
        Bio {
            dev,
            cg,
            op,
            flags: BioFlags::default(),
            sector,
            bytes,
            ioprio: Ioprio::default(),
            origin,
            t_submit: 0,
            t_alloc: 0,
            t_queue: 0,
            t_issue: 0,
            t_done: 0,
            pending_frags: 1,
            qos_cost: 0,
            chain_next: NO_BIO,
            qos_pos: 0,
            wbt_acct: 0,
        }
    }

    pub fn sectors(&self) -> u64 {
        (self.bytes as u64) >> 9
    }
    pub fn end_sector(&self) -> u64 {
        self.sector + self.sectors()
    }
}
