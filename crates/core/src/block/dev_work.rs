//! One work item per device, each with the kworker task that executes it:
//! the table kblockd's run work (`hctx->run_work`, block/kblockd.rs) and
//! blk-throttle's dispatch work (`td->dispatch_work`, block/kthrotld.rs)
//! both keep, found by device and by kworker.

use std::collections::BTreeMap;

use crate::sim::cpus::TaskId;
use crate::sim::engine::DevId;
use crate::sim::time::Ns;

/// An item's event is not due (not queued, or its kworker waits in the
/// run queue or sleeps).
pub(crate) const NOT_DUE: Ns = Ns::MAX;

/// Every device's item `W`.
#[derive(Clone, Debug)]
pub(crate) struct DevWork<W> {
    pub(crate) by_dev: BTreeMap<DevId, W>,
    by_task: BTreeMap<TaskId, DevId>,
}

impl<W> Default for DevWork<W> {
    fn default() -> Self {
        DevWork {
            by_dev: BTreeMap::new(),
            by_task: BTreeMap::new(),
        }
    }
}

impl<W> DevWork<W> {
    /// The device whose kworker task `t` is, when it is one.
    pub(crate) fn of_task(&self, t: TaskId) -> Option<DevId> {
        self.by_task.get(&t).copied()
    }

    /// `dev`'s item `w`, executed by kworker `task`, registered.
    pub(crate) fn add(&mut self, dev: DevId, task: TaskId, w: W) -> &mut W {
        self.by_task.insert(task, dev);
        self.by_dev.entry(dev).or_insert(w)
    }
}
