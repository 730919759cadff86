//! `struct request`: one or more merged bios, a tag, and the timestamps the
//! controllers use (blk-mq's `start_time_ns`, `alloc_time_ns`, `io_start_time_ns`).

use crate::block::bio::{BioId, DevId, JobId, Op};
use crate::block::blk_cgroup::CgId;
use crate::block::ioprio::Ioprio;
use crate::sim::time::Ns;

pub use crate::sim::engine::ReqId;

/// A request's bios: most requests carry one (no merge), kept inline so
/// that a request costs no allocation of its own.
pub type RqBios = smallvec::SmallVec<[BioId; 2]>;

#[derive(Clone, Debug)]
pub struct Request {
    pub dev: DevId,
    pub op: Op,
    /// The blkg of the first bio.
    pub cg: CgId,
    /// The task that submitted the first bio (its I/O context, `rq->elv.icq`).
    pub submitter: Submitter,
    pub ioprio: Ioprio,
    pub sector: u64,
    pub bytes: u32,
    pub sync: bool,
    /// Bios in the request, first one first (merges append or prepend).
    pub bios: RqBios,
    /// `alloc_time_ns`: when request allocation began, before any wait for a tag.
    pub alloc_time: Ns,
    /// `start_time_ns`: when the request got its tag (so start - alloc = rq_wait).
    pub start_time: Ns,
    /// Inserted into the scheduler.
    pub insert_time: Ns,
    /// `io_start_time_ns`: issued to the driver (D).
    pub issue_time: Ns,
    /// Scheduler bookkeeping (mq-deadline's `fifo_time`).
    pub fifo_time: Ns,
    /// Completion time decided by the device model at issue.
    pub done_time: Ns,
    /// `rq->wbt_flags`: blk-wbt's class for this request (from its bio).
    pub wbt_acct: u8,
    /// `rq->tag`: the tag it holds in the device's tag set (the scheduler's
    /// tags with a scheduler, the driver's without), freed with it.
    pub tag: u32,
}

/// The submitting task of a request, as far as the schedulers need it: BFQ
/// keys its per-process sync queues on the task's I/O context (`bfq_io_cq`).
/// Every fio job instance is a process of its own; kernel-originated I/O
/// (page-cache writeback and readahead) is issued by one flusher context.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum Submitter {
    Job(JobId),
    #[default]
    Kernel,
}

impl Request {
    pub fn sectors(&self) -> u64 {
        (self.bytes as u64) >> 9
    }
    pub fn end_sector(&self) -> u64 {
        self.sector + self.sectors()
    }
}
