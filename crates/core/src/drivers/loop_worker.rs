//! The loop driver's workers' state (drivers/block/loop.c: `struct
//! loop_worker`, `lo->worker_tree`): one per (loop device, blkcg), its
//! command list and its work item on the loop workqueue; and the kworkers
//! of the unbound pool that execute the items (`sim::workqueue`). What
//! they do is in `machine::loop_worker`.

use std::collections::{BTreeMap, VecDeque};

use crate::block::blk_cgroup::CgId;
use crate::block::request::ReqId;
use crate::sim::cpus::TaskId;
use crate::sim::engine::DevId;
use crate::sim::time::Ns;
use crate::sim::workqueue::{KworkerId, WorkId, WorkerPool};

/// A kworker's event is not due (idle, or waiting in the run queue).
pub(crate) const NOT_DUE: Ns = Ns::MAX;

/// One worker (`struct loop_worker`): a device's commands of one blkcg;
/// its index is its work item's in the pool.
#[derive(Clone, Debug)]
pub(crate) struct LoopWorker {
    pub(crate) dev: DevId,
    /// The root cgroup's worker (`lo->rootcg_work`, run by
    /// `loop_rootcg_workfn`; the others by `loop_workfn`).
    pub(crate) rootcg: bool,
    /// Its requests (`worker->cmd_list`), the head being carried out while
    /// a kworker's `cmd` is set.
    pub(crate) queue: VecDeque<ReqId>,
}

/// A kworker of the pool, on the simulator's side.
#[derive(Clone, Copy, Debug)]
pub(crate) struct KworkerRun {
    /// Its task on a host with CPUs (none on the free host, where each
    /// kworker runs the instant it is woken).
    pub(crate) task: Option<TaskId>,
    /// When its `Ev::LoopWork` is due (stale events are ignored).
    pub(crate) due: Ns,
    /// Its event ends a command (the head of its item's list); else it
    /// ends a wake-up, and the kworker looks for work.
    pub(crate) cmd: bool,
}

/// Every loop device's workers and the pool their items run on.
#[derive(Clone, Debug, Default)]
pub(crate) struct LoopWorkers {
    pub(crate) workers: Vec<LoopWorker>,
    /// (device, blkcg) → worker (`lo->worker_tree`).
    pub(crate) by_key: BTreeMap<(DevId, CgId), WorkId>,
    /// The unbound pool every loop workqueue shares.
    pub(crate) pool: WorkerPool,
    /// The pool's kworkers, as many as it has made (their tasks are made
    /// when first needed).
    pub(crate) kworkers: Vec<KworkerRun>,
    /// task → kworker, for the kernel threads.
    pub(crate) by_task: BTreeMap<TaskId, KworkerId>,
}

impl LoopWorkers {
    /// The kworker of task `t`, when `t` is one.
    pub(crate) fn of_task(&self, t: TaskId) -> Option<KworkerId> {
        self.by_task.get(&t).copied()
    }
}
