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

#[macro_use]
pub mod block;
pub mod drivers;
pub mod machine;
pub mod mm;
pub mod sim;
pub mod syscall;
pub mod workload;

#[cfg(test)]
pub(crate) mod testutil;

pub use machine::{
    CpuCosts, DeviceConfig, JobConfig, JobResult, RunResult, SetupError, Sim, SimConfig, TimedWrite,
};
