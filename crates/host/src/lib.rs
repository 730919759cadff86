//! blklab-host: per-cgroup block I/O accounting on a real Linux host, from the
//! kernel's ftrace `blk` tracer (no kernel patches). It reproduces the
//! blk-iotrack metrics (Q2C, D2C, latency hit buckets per cgroup and device)
//! and the dublio/iotrack interval table (`top`), records events to a file
//! (`record`) and replays them (`top_from_file`, `read_recording`).

// The iotrack metrics are the simulator's own code: one implementation for
// simulated and real hosts.
pub use blklab_core::block::iotrack;

pub mod account;
pub mod cgroup_fs;
pub mod error;
pub mod events;
pub mod record;
pub mod resources;
pub mod stall;
pub mod top;
pub mod tracefs;

pub use error::{HostError, Result};
pub use record::{read_recording, CgroupStream, IoRecord, Recording};
pub use top::{record, top, top_from_file, RecordOptions, RecordSummary, TopOptions, TopSummary};
