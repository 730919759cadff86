//! The loop driver's workers' state (drivers/block/loop.c: `struct
//! loop_worker`, `lo->worker_tree`): one per (loop device, blkcg), its
//! command list, and its task on a host with CPUs. What they do is in
//! `machine::loop_worker`.

use std::collections::{BTreeMap, VecDeque};

use crate::block::blk_cgroup::CgId;
use crate::block::request::ReqId;
use crate::sim::cpus::TaskId;
use crate::sim::engine::DevId;
use crate::sim::time::Ns;

/// A worker's event is not due (idle, or waiting in the run queue).
pub(crate) const NOT_DUE: Ns = Ns::MAX;

/// One worker (`struct loop_worker`): a device's commands of one blkcg.
#[derive(Clone, Debug)]
pub(crate) struct LoopWorker {
    pub(crate) dev: DevId,
    /// Its requests, the head being worked on while `active`.
    pub(crate) queue: VecDeque<ReqId>,
    pub(crate) active: bool,
    /// Its task on a host with CPUs.
    pub(crate) task: Option<TaskId>,
    /// When its `Ev::LoopWork` is due (stale events are ignored).
    pub(crate) due: Ns,
}

/// Every loop device's workers.
#[derive(Clone, Debug, Default)]
pub(crate) struct LoopWorkers {
    pub(crate) workers: Vec<LoopWorker>,
    /// (device, blkcg) → worker (`lo->worker_tree`).
    pub(crate) by_key: BTreeMap<(DevId, CgId), u32>,
    /// task → worker, for the kernel threads.
    pub(crate) by_task: BTreeMap<TaskId, u32>,
}

impl LoopWorkers {
    /// The worker of task `t`, when `t` is one.
    pub(crate) fn of_task(&self, t: TaskId) -> Option<u32> {
        self.by_task.get(&t).copied()
    }
}
