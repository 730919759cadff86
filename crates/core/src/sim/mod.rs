//! The simulation engine under the model: the event queue, simulated time,
//! seeded random streams, arenas, kernel-behaviour switches, the trace
//! writer, the kernel's error codes, and the host's CPUs with their
//! scheduler and workqueue pools. Nothing here knows the block layer.

pub mod background;
pub mod cfs;
pub mod clock;
pub mod cpu;
pub mod cpus;
pub mod eevdf;
pub mod engine;
pub mod fair;
pub mod host_cpus;
pub mod kerr;
pub mod prefetch;
pub mod probe;
pub mod rng;
pub mod sched_features;
pub mod sched_tracepoints;
pub mod slab;
pub mod switches;
pub mod task;
pub mod time;
pub mod timer;
pub mod trace;
pub(crate) mod workqueue;
