//! blklab-core: a deterministic discrete-event model of the Linux block layer.
//!
//! The path of one I/O, top to bottom, follows the kernel (see `blk_mq.rs`):
//! an fio job (`fio_job.rs`) submits a bio; blk-throttle (`throttle/`) may hold
//! it; the rq_qos chain (`rq_qos.rs`, blk-iocost in `iocost/`) may make the
//! submitter sleep; a request (tag) is allocated; the I/O scheduler
//! (`elevator/`) orders dispatch; the device model (`device/`) completes it;
//! completion hooks account it (iocost, iotrack) and fio reaps it.
//!
//! The core does no I/O: parsing of scenario files, output and host tracing live
//! in the other crates.

pub mod bio;
#[macro_use]
pub mod sim;
pub mod blk_ioprio;
mod blk_mq;
pub mod cgroup;
pub mod content_activity;
pub mod ctx;
pub mod device;
pub mod diskstats;
pub mod elevator;
pub mod engine;
mod fio_job;
pub mod iocost;
pub mod ioprio;
pub mod iotrack;
pub mod kerr;
pub mod pagecache;
pub mod replay;
pub mod request;
pub mod rng;
pub mod rq_qos;
pub mod slab;
pub mod switches;
pub mod throttle;
pub mod time;
pub mod trace;

pub use sim::{
    CpuCosts, DeviceConfig, JobConfig, JobResult, RunResult, SetupError, Sim, SimConfig, TimedWrite,
};
#[cfg(test)]
mod sim_tests;
