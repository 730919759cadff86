//! A block device as the block layer sees it: its queue limits and sysfs
//! attributes (`struct queue_limits`, `struct gendisk`) and the driver
//! behind it (`struct blk_mq_ops`'s `queue_rq` and the completion it
//! raises). The drivers (`crate::drivers`) implement [`DeviceModel`].

use crate::block::bio::{DevId, Op};
use crate::sim::time::Ns;

/// The block device as the kernel describes it (sysfs queue attributes).
#[derive(Clone, Debug)]
pub struct DeviceInfo {
    pub name: String,
    pub major: u32,
    pub minor: u32,
    pub rotational: bool,
    /// /sys/block/DEV/queue/nr_requests: requests (tags) that can be allocated.
    pub nr_requests: u32,
    /// Requests the device accepts at once (driver tags / hardware queue depth).
    pub queue_depth: u32,
    pub nr_hw_queues: u32,
    pub max_sectors_kb: u32,
    pub logical_block_size: u32,
    pub capacity_bytes: u64,
}

impl DeviceInfo {
    pub fn devno(&self) -> String {
        format!("{}:{}", self.major, self.minor)
    }
    pub fn max_bytes(&self) -> u32 {
        self.max_sectors_kb.saturating_mul(1024)
    }
}

/// A device model: given a request entering the device, when does it complete?
pub trait DeviceModel {
    /// The model's name (`nullb`, `linear`, `cloud`, `ssd`).
    fn kind(&self) -> &'static str;
    /// The default hardware queue depth of this kind of device.
    fn default_queue_depth(&self) -> u32;
    /// The request enters the device at `now`; return its completion instant (≥ now).
    fn issue(&mut self, now: Ns, op: Op, sector: u64, bytes: u32) -> Ns;
    /// One line describing the model and its parameters, for reports.
    fn describe(&self) -> String;
}

/// What a loop device's worker costs and what it does with a request
/// (`drivers::loop_dev` reads it from the scenario).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoopWorkerCost {
    pub worker_ns: Ns,
    pub worker_ns_per_kib: Ns,
    /// A write's costs, where the file writes at another cost than it
    /// reads (a disk file system's buffered write path); the read ones
    /// otherwise.
    pub worker_write_ns: Ns,
    pub worker_write_ns_per_kib: Ns,
    /// The backing is a file in memory: the worker's copy completes the
    /// request (else it submits the lower bio).
    pub file_in_memory: bool,
}

impl LoopWorkerCost {
    /// The worker's CPU time for a request of `bytes` (the per-KiB part
    /// pro rata, rounded down); writes (and flushes, discards: `op_is_write`)
    /// at the write costs.
    pub fn cost_ns(&self, write: bool, bytes: u32) -> Ns {
        let (base, per_kib) = if write {
            (self.worker_write_ns, self.worker_write_ns_per_kib)
        } else {
            (self.worker_ns, self.worker_ns_per_kib)
        };
        base + per_kib * bytes as Ns / 1024
    }
}

/// What a stacked device sends its I/O to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lower {
    /// A loop device with direct I/O on block device `dev` (request-based).
    Loop { dev: DevId },
    /// A dm-linear target mapping the whole device to `dev` from sector
    /// `start` on (bio-based: no request queue of its own).
    Linear { dev: DevId, start: u64 },
}

impl Lower {
    pub fn dev(self) -> DevId {
        match self {
            Lower::Loop { dev } | Lower::Linear { dev, .. } => dev,
        }
    }
    /// Bio-based (`!queue_is_mq`): no scheduler, tags or rq_qos chain.
    pub fn bio_based(self) -> bool {
        matches!(self, Lower::Linear { .. })
    }
}
