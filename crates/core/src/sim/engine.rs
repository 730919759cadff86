//! The event queue: events run in (time, sequence) order, so that
//! simultaneous events run in the order they were scheduled, which makes
//! every run reproducible.
//!
//! Most events are device completions and task wake-ups, and those are
//! usually scheduled in time order (a fixed-latency device completes in
//! dispatch order; a task has one wake-up pending at a time). Each of these
//! two kinds has a FIFO lane that takes an event whose time is not before
//! the lane's last one; anything else goes to a min-heap. A lane is then
//! sorted by (time, sequence) itself, and `pop` takes the smallest of the
//! heap's top and the lanes' fronts: the same order as one heap, without
//! its logarithmic cost for the bulk of the events.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

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
    /// A blocked task becomes runnable (the end of a timed sleep, its
    /// start) and asks for a CPU (only on a host with CPUs, `sim::cpus`).
    Wake(JobId),
    /// A request's completion interrupt is over on its CPU: the
    /// completion path runs (only on a host with CPUs).
    IrqDone(DevId, ReqId),
    /// A kworker of the loop workers' pool (index in
    /// `drivers::loop_worker::LoopWorkers::kworkers`) ends a burst: a
    /// command of its work item, or its wake-up (machine/loop_worker.rs).
    LoopWork(u32),
    /// A device's kblockd kworker is done with its queue run's cost: the
    /// queue is run (`blk_mq_run_work_fn`; machine/kblockd.rs).
    Kblockd(DevId),
    /// A device's kthrotld kworker is due: its deferred wake-up at the
    /// end of the timer tick, or the end of a burst of its dispatch work
    /// (`blk_throtl_dispatch_work_fn`; machine/kthrotld.rs).
    Kthrotld(DevId),
    /// The jobs of the current run phase have all ended (machine/phases.rs).
    PhaseEnd,
    /// The next run phase's jobs start (machine/phases.rs).
    PhaseStart,
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

/// Lanes: device completions, task wake-ups.
const LANES: usize = 2;

/// Where the next event is.
#[derive(Clone, Copy)]
enum Src {
    Heap,
    Lane(usize),
}

/// The next event of the queue, as [`EventQueue::next`] found it.
#[derive(Clone, Copy)]
pub struct Next {
    pub t: Ns,
    src: Src,
}

#[derive(Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    /// Each sorted by (time, sequence): an event enters only if its time is
    /// not before the lane's last one.
    lanes: [VecDeque<Entry>; LANES],
    seq: u64,
    processed: u64,
}

impl EventQueue {
    #[inline]
    pub fn push(&mut self, t: Ns, ev: Ev) {
        self.seq += 1;
        let e = Entry {
            t,
            seq: self.seq,
            ev,
        };
        let lane = match ev {
            Ev::Complete(..) => Some(0),
            Ev::Job(_) => Some(1),
            _ => None,
        };
        if let Some(l) = lane {
            let q = &mut self.lanes[l];
            if q.back().is_none_or(|b| b.t <= t) {
                q.push_back(e);
                return;
            }
        }
        self.heap.push(e);
    }

    /// The source holding the earliest (time, sequence), if any.
    #[inline]
    fn first(&self) -> Option<(Src, &Entry)> {
        let mut best = self.heap.peek().map(|e| (Src::Heap, e));
        for (l, q) in self.lanes.iter().enumerate() {
            if let Some(e) = q.front() {
                // Entry's order is reversed (for the max-heap): greater = earlier
                if best.is_none_or(|(_, b)| e > b) {
                    best = Some((Src::Lane(l), e));
                }
            }
        }
        best
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(Ns, Ev)> {
        let n = self.next()?;
        Some(self.take(n))
    }

    /// The next event's time, and where it is for [`take`](Self::take):
    /// a loop that looks at the time before it pops finds the event once.
    #[inline]
    pub fn next(&self) -> Option<Next> {
        self.first().map(|(src, e)| Next { t: e.t, src })
    }

    /// Remove the event `n` found, with no push or pop since.
    #[inline]
    pub fn take(&mut self, n: Next) -> (Ns, Ev) {
        let e = match n.src {
            Src::Heap => self.heap.pop(),
            Src::Lane(l) => self.lanes[l].pop_front(),
        }
        .expect("taken as found by next()");
        debug_assert_eq!(e.t, n.t, "queue changed between next() and take()");
        self.processed += 1;
        (e.t, e.ev)
    }
    /// The time of the next event, if any.
    #[inline]
    pub fn peek_time(&self) -> Option<Ns> {
        self.first().map(|(_, e)| e.t)
    }
    /// The jobs of the first two events in the task lane: most often the
    /// next task wake-ups the loop runs, for cache hints (they may be
    /// preceded by others; a hint is then only wasted).
    #[inline]
    pub fn upcoming_jobs(&self) -> [Option<JobId>; 2] {
        let q = &self.lanes[1];
        let job = |i| match q.get(i) {
            Some(Entry { ev: Ev::Job(j), .. }) => Some(*j),
            _ => None,
        };
        [job(0), job(1)]
    }
    pub fn len(&self) -> usize {
        self.heap.len() + self.lanes.iter().map(VecDeque::len).sum::<usize>()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
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

    /// The lanes and the heap together give exactly the order of one heap
    /// of (time, sequence), whatever mix of in-order and out-of-order
    /// pushes, pops in between included.
    #[test]
    fn same_order_as_one_heap() {
        let mut rng = crate::sim::rng::Rng::stream(7, "engine-test");
        let mut q = EventQueue::default();
        let mut reference = BinaryHeap::new();
        let (mut seq, mut now) = (0u64, 0u64);
        for step in 0..20_000u32 {
            if rng.below(3) < 2 {
                let ev = match rng.below(4) {
                    0 => Ev::Complete(0, step),
                    1 => Ev::Job(step),
                    2 => Ev::Sample(step),
                    _ => Ev::Observe,
                };
                // in and out of each lane's order, often at equal times
                let t = now + rng.below(5) * 10;
                seq += 1;
                reference.push(Entry { t, seq, ev });
                q.push(t, ev);
            } else {
                let want = reference.pop().map(|e| (e.t, e.ev));
                let got = q.pop();
                assert_eq!(got, want, "step {step}");
                if let Some((t, _)) = got {
                    now = t;
                }
            }
            assert_eq!(q.len(), reference.len());
            assert_eq!(q.peek_time(), reference.peek().map(|e| e.t));
        }
        while let Some(e) = reference.pop() {
            assert_eq!(q.pop(), Some((e.t, e.ev)));
        }
        assert_eq!(q.pop(), None);
    }
}
