//! The block layer (the kernel's `block/`): bios and requests, the blk-mq
//! path, the blkcg tree, blk-throttle, the rq_qos chain (blk-iocost,
//! blk-iolatency, blk-wbt, blk-iotrack), I/O priorities and blk-ioprio, the I/O schedulers and the
//! disk statistics.

#[macro_use]
pub(crate) mod layer;
pub mod bio;
pub mod blk_cgroup;
pub mod blk_ioprio;
pub(crate) mod blk_mq;
pub mod blk_stat;
pub mod content_activity;
pub mod ctx;
pub(crate) mod dev_work;
pub mod disk;
pub mod diskstats;
pub mod elevator;
pub mod iocost;
pub mod iolatency;
pub mod ioprio;
pub mod iotrack;
pub(crate) mod kblockd;
pub(crate) mod kthrotld;
pub mod request;
pub mod rq_qos;
pub mod rq_wait;
pub mod sbitmap;
pub mod throttle;
pub mod wbt;

#[cfg(test)]
pub(crate) mod testutil;
