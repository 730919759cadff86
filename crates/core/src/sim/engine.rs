//! The event queue: a min-heap of (time, sequence) so that simultaneous events
//! run in the order they were scheduled, which makes every run reproducible.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::sim::time::Ns;

/// A block device of the scenario (index into its device list).
pub type DevId = u16;
/// A user-space task: one fio job instance (index into the job list).
pub type JobId = u32;
/// A request (index into the request arena).
pub type ReqId = u32;

/// What happens at an instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ev {
    /// An fio job continues (end of a sleep, a submit call returning, a reap).
    Job(JobId),
    /// The device completes a request.
    Complete(DevId, ReqId),
    /// blk-throttle's pending timer on a device.
    Throttle(DevId),
    /// An rq_qos member's timer (device, position in the chain).
    Qos(DevId, u8),
    /// The scheduler asked to be run again.
    Elevator(DevId),
    /// fio's bandwidth/IOPS sampling tick for a job.
    Sample(JobId),
    /// A timed write to a cgroup file (index into the scenario's list).
    Write(u32),
    /// The end of a job's ramp period: fio resets its statistics.
    RampEnd(JobId),
    /// A periodic observer (iotrack report) tick.
    Observe,
    /// The page cache's flusher kworker of a device runs.
    Flusher(DevId),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    t: Ns,
    seq: u64,
    ev: Ev,
}

impl Ord for Entry {
    fn cmp(&self, o: &Self) -> Ordering {
        // reversed: BinaryHeap is a max-heap
        o.t.cmp(&self.t).then(o.seq.cmp(&self.seq))
    }
}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

#[derive(Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    seq: u64,
    processed: u64,
}

impl EventQueue {
    #[inline]
    pub fn push(&mut self, t: Ns, ev: Ev) {
        self.seq += 1;
        self.heap.push(Entry {
            t,
            seq: self.seq,
            ev,
        });
    }
    #[inline]
    pub fn pop(&mut self) -> Option<(Ns, Ev)> {
        let e = self.heap.pop()?;
        self.processed += 1;
        Some((e.t, e.ev))
    }
    /// The time of the next event, if any.
    #[inline]
    pub fn peek_time(&self) -> Option<Ns> {
        self.heap.peek().map(|e| e.t)
    }
    pub fn len(&self) -> usize {
        self.heap.len()
    }
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
    pub fn processed(&self) -> u64 {
        self.processed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn fifo_at_equal_times() {
        let mut q = EventQueue::default();
        q.push(10, Ev::Job(2));
        q.push(5, Ev::Job(9));
        q.push(10, Ev::Job(1));
        assert_eq!(q.pop(), Some((5, Ev::Job(9))));
        assert_eq!(q.pop(), Some((10, Ev::Job(2))));
        assert_eq!(q.pop(), Some((10, Ev::Job(1))));
        assert_eq!(q.pop(), None);
    }
}
