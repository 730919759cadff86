//! blklab-core: a deterministic discrete-event model of the Linux block layer.
//!
//! The tree follows the kernel's: `block/` (bios and requests, the blk-mq
//! path in `block/blk_mq.rs`, the blkcg tree, blk-throttle, the rq_qos chain
//! with blk-iocost and blk-iotrack, I/O priorities, the schedulers), `mm/`
//! (the page cache and its flusher), `drivers/` (device models), `workload/`
//! (user space: the fio job loop, replay), `sim/` (the event queue, clock,
//! host CPU costs, random streams, arenas, switches, trace, kernel errors)
//! and `machine/`, which joins kernel and workload. The workload reaches the
//! kernel only through the system calls of `syscall.rs`.
//!
//! The path of one I/O, top to bottom: an fio job (`workload/fio/`) submits
//! a bio; blk-throttle (`block/throttle/`) may hold it; the rq_qos chain
//! (`block/rq_qos.rs`, blk-iocost in `block/iocost/`) may make the submitter
//! sleep; a request (tag) is allocated; the I/O scheduler
//! (`block/elevator/`) orders dispatch; the device model (`drivers/`)
//! completes it; completion hooks account it (iocost, iotrack) and fio reaps it.
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

pub use machine::{
    CpuCosts, DeviceConfig, JobConfig, JobResult, PhaseMark, PhaseSnapshot, PhaseSpec, RunResult,
    SetupError, Sim, SimConfig, TimedWrite, WbtConfig,
};
