//! A task's identity on the simulated host: what the CPU model
//! (`sim::cpus`) schedules and what its tracepoints (`sim::sched_tracepoints`)
//! name. Its own module so that the two need not import each other.

/// A task of the simulated host (an fio job, a loop kworker, kblockd), by
/// the index the CPU model gave it.
pub type TaskId = u32;
