//! Device models: what happens between D (issue to the driver) and C
//! (completion). A model decides, when a request is issued, the instant it
//! completes; the block layer turns that into a completion event.
//!
//! Models whose completion time cannot be decided at issue time are outside
//! this interface; the ones here (FIFO token buckets, parallel units, fixed
//! latencies) all can, which keeps the event loop to one event per request.

pub mod nullb;

use serde::Deserialize;

use crate::bio::Op;
use crate::time::Ns;

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

/// `[device.model]` in a scenario: `kind` selects the model, the other keys are its parameters.
#[derive(Clone, Debug, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum ModelSpec {
    Nullb(nullb::NullbSpec),
}

impl ModelSpec {
    pub fn build(&self) -> Result<Box<dyn DeviceModel>, String> {
        match self {
            ModelSpec::Nullb(s) => Ok(Box::new(nullb::Nullb::new(s)?)),
        }
    }
}
