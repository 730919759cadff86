//! kblockd's queue-run work items' state (block/blk-core.c
//! `kblockd_workqueue`, `hctx->run_work`): one per device with its kworker
//! task. What they do is in `machine::kblockd`.

use std::collections::BTreeMap;

use crate::sim::cpus::TaskId;
use crate::sim::engine::DevId;
use crate::sim::time::Ns;

/// The work item's event is not due (not queued, or its kworker waits in
/// the run queue).
pub(crate) const NOT_DUE: Ns = Ns::MAX;

/// One device's `hctx->run_work` and the kworker that executes it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RunWork {
    pub(crate) task: TaskId,
    /// Queued and not yet executed (`WORK_STRUCT_PENDING`).
    pub(crate) queued: bool,
    /// When its `Ev::Kblockd` is due.
    pub(crate) due: Ns,
}

/// Every device's queue-run work.
#[derive(Clone, Debug, Default)]
pub(crate) struct Kblockd {
    pub(crate) by_dev: BTreeMap<DevId, RunWork>,
    pub(crate) by_task: BTreeMap<TaskId, DevId>,
}

impl Kblockd {
    /// The device whose kworker task `t` is, when it is one.
    pub(crate) fn of_task(&self, t: TaskId) -> Option<DevId> {
        self.by_task.get(&t).copied()
    }
}
