//! blk-throttle's dispatch work items' state (block/blk-throttle.c
//! `kthrotld_workqueue`, `td->dispatch_work`): one per device, with the
//! kworker that executes it. What they do is in `machine::kthrotld`.

use std::collections::VecDeque;

use crate::block::bio::BioId;
use crate::sim::cpus::TaskId;
use crate::sim::engine::DevId;
use crate::sim::time::Ns;

pub(crate) use super::dev_work::NOT_DUE;

/// `BLK_MAX_REQUEST_COUNT` (include/linux/blkdev.h): a plug holding this
/// many requests is flushed before the next is added
/// (`blk_add_rq_to_plug`; one queue, so not `multiple_queues`' double).
pub(crate) const PLUG_FLUSH_RQS: usize = 32;

/// Where the kworker is with the item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Asleep: the item is not being executed.
    Idle,
    /// Woken by a timer of the current tick: the wake-up is made once the
    /// tick's other expired timers have run (`Ev::Kthrotld` at the same
    /// instant, queued after them).
    ToWake,
    /// Woken: waiting for a CPU, or paying its wake-up.
    Waking,
    /// Executing: the burst that ends at `due` issues the next `batch`
    /// bios of `taken`.
    Issuing,
}

/// One device's `td->dispatch_work` and the kworker that executes it.
#[derive(Clone, Debug)]
pub(crate) struct DispatchWork {
    pub(crate) task: TaskId,
    /// Queued and not yet started (`WORK_STRUCT_PENDING`): a timer that
    /// queues it again meanwhile changes nothing.
    pub(crate) pending: bool,
    pub(crate) phase: Phase,
    /// When its `Ev::Kthrotld` is due.
    pub(crate) due: Ns,
    /// The bios the execution took off the device level and has not yet
    /// issued (`bio_list_on_stack`), in issue order.
    pub(crate) taken: VecDeque<BioId>,
    /// How many of `taken` the burst in progress issues at its end.
    pub(crate) batch: usize,
}

impl DispatchWork {
    /// A new item executed by kworker `task`, idle.
    pub(crate) fn new(task: TaskId) -> DispatchWork {
        DispatchWork {
            task,
            pending: false,
            phase: Phase::Idle,
            due: NOT_DUE,
            taken: VecDeque::new(),
            batch: 0,
        }
    }
}

/// Every device's dispatch work.
pub(crate) type Kthrotld = super::dev_work::DevWork<DispatchWork>;

impl Kthrotld {
    /// The task whose code `dev`'s `Ev::Kthrotld` runs: its kworker once
    /// woken; None for the deferred wake-up, which the timer's softirq
    /// makes.
    pub(crate) fn context_of(&self, dev: DevId) -> Option<TaskId> {
        let w = self.by_dev.get(&dev)?;
        matches!(w.phase, Phase::Waking | Phase::Issuing).then_some(w.task)
    }
}
