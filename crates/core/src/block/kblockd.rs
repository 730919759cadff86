//! kblockd's queue-run work items' state (block/blk-core.c
//! `kblockd_workqueue`, `hctx->run_work`): one per device with its kworker
//! task. What they do is in `machine::kblockd`.

use crate::sim::cpus::TaskId;
use crate::sim::time::Ns;

pub(crate) use super::dev_work::NOT_DUE;

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
pub(crate) type Kblockd = super::dev_work::DevWork<RunWork>;
