//! The loop driver's workers (drivers/block/loop.c): `loop_queue_rq` hands
//! each dispatched request to the worker of the request's blkcg
//! (`loop_queue_work`: one worker per blkcg css since v5.12, found in
//! `lo->worker_tree` or created; its commands go on `worker->cmd_list` and
//! its work item is queued on the loop device's workqueue);
//! `loop_process_work` takes the commands in order and `loop_handle_cmd`
//! carries each out:
//!
//! * over a device (`backend`): the worker spends `worker_ns` of CPU and
//!   submits the lower bio (`lo_rw_aio` → the block device's direct I/O);
//!   the request completes when that bio ends (`block::blk_mq::stack`).
//! * over a file in memory (`backing = "tmpfs"`): the read or write is a
//!   copy from or to the file's pages done synchronously on the worker's
//!   CPU (`worker_ns + worker_ns_per_kib` × KiB); the request completes
//!   when the worker is done with it, in the worker's context
//!   (`loop_handle_cmd` calls `blk_mq_complete_request` itself for a
//!   command that is not aio — the buffered `lo_read_simple` /
//!   `lo_write_simple` path — and `lo_rw_aio_complete` does the same when
//!   the file's `read_iter` finished the kiocb at once): no device
//!   interrupt.
//!
//! On a host with CPUs (`sim::cpus`) each worker is a kernel-thread task,
//! numbered after the fio jobs: woken onto a CPU when work arrives for it
//! idle (paying `wake_ns`), it holds the CPU while its queue has commands,
//! is preempted between commands once past its slice while others wait
//! (the scheduler tick; v5.12's `loop_process_work` had a `cond_resched`
//! after each command, later kernels take the list in batches and rely
//! on the tick), and blocks when the queue is empty. On the free host (`cpus = 0`) each worker is a FIFO server with
//! the same costs and no contention.
//!
//! Simplified (docs/fidelity/devices.md, "The loop worker"): one worker per
//! (device, blkcg) for the whole run (the kernel frees idle workers after
//! `LOOP_IDLE_WORKER_TIMEOUT`; a new one costs nothing here); the root
//! cgroup's commands get a worker like any other (the kernel puts them on
//! `lo->rootcg_cmd_list`, one more work item: the same thing); the workqueue
//! is unbound and its kworkers are just tasks of the one run queue; a
//! worker over a device does not block in `submit_bio` (a lower bio that
//! waits for a tag or an rq_qos budget does not hold up its next command).

use std::collections::VecDeque;

use super::kernel::{Kernel, Running};
use crate::block::blk_mq::{stack, BlkMq};
use crate::block::disk::Lower;
use crate::block::request::ReqId;
use crate::drivers::loop_worker::{LoopWorker, NOT_DUE};
use crate::sim::cpus::{TaskId, Woken};
use crate::sim::engine::{DevId, Ev};
use crate::sim::time::Ns;
use crate::syscall::Tasks;

impl Kernel {
    /// The worker's CPU time for request `rid` of device `dev`.
    fn loop_cost_ns(&self, dev: DevId, rid: ReqId) -> Ns {
        let cost = self.blk.devs[dev as usize]
            .st
            .loop_worker
            .expect("a loop device with a worker");
        let rq = self.blk.reqs.get(rid);
        cost.cost_ns(rq.op.is_write(), rq.bytes)
    }

    /// Worker `w`'s task runs until `end`: its event is due then.
    pub(crate) fn loop_worker_runs(&mut self, w: u32, end: Ns) {
        self.loop_workers.workers[w as usize].due = end;
        self.clk.q.push(end, Ev::LoopWork(w));
    }

    /// Worker `w` starts on the head of its queue, which costs `cost_ns`:
    /// woken onto a CPU (or into the run queue), or on the free host at once.
    fn loop_worker_start(&mut self, w: u32, cost_ns: Ns) {
        let now = self.clk.now;
        match self.loop_workers.workers[w as usize].task {
            None => self.loop_worker_runs(w, now + cost_ns),
            Some(t) => match self.cpus.wake(t, now, cost_ns) {
                Woken::Runs(end) => self.loop_worker_runs(w, end),
                Woken::Queued => self.loop_workers.workers[w as usize].due = NOT_DUE,
            },
        }
    }
}

impl Running<'_> {
    /// Mirrors `loop_queue_rq` → `loop_queue_work` (drivers/block/loop.c):
    /// request `rid` of loop device `dev` goes on the list of the worker of
    /// its blkcg (created on first use), and an idle worker is queued to run.
    pub(crate) fn loop_worker_queue(&mut self, dev: DevId, rid: ReqId) {
        let k = &mut *self.k;
        let cg = k.blk.reqs.get(rid).cg;
        let lw = &mut k.loop_workers;
        let w = match lw.by_key.get(&(dev, cg)) {
            Some(&w) => w,
            None => {
                let w = lw.workers.len() as u32;
                let task = k
                    .cpus
                    .enabled()
                    .then(|| k.cpus.add_task(crate::sim::eevdf::NICE_0_WEIGHT));
                if let Some(t) = task {
                    lw.by_task.insert(t, w);
                }
                lw.workers.push(LoopWorker {
                    dev,
                    queue: VecDeque::new(),
                    active: false,
                    task,
                    due: NOT_DUE,
                });
                lw.by_key.insert((dev, cg), w);
                w
            }
        };
        let wk = &mut lw.workers[w as usize];
        wk.queue.push_back(rid);
        if wk.active {
            return;
        }
        wk.active = true;
        let cost = k.loop_cost_ns(dev, rid);
        k.loop_worker_start(w, cost);
    }

    /// Mirrors `loop_process_work` → `loop_handle_cmd`: worker `w` is done
    /// with the command at the head of its queue (`Ev::LoopWork`): over a
    /// file in memory the request completes here (`lo_rw_aio_complete`),
    /// over a device the lower bio is submitted; then the next command, or
    /// the worker sleeps.
    pub(crate) fn loop_work(&mut self, w: u32) {
        let now = self.k.clk.now;
        let wk = &self.k.loop_workers.workers[w as usize];
        if wk.due != now || !wk.active {
            return; // superseded
        }
        let (dev, task) = (wk.dev, wk.task);
        if let Some(t) = task {
            // interrupts took time from it: its command ends later
            if let Some(end) = self.k.cpus.burst_end(t, now) {
                self.k.loop_worker_runs(w, end);
                return;
            }
        }
        let rid = self.k.loop_workers.workers[w as usize]
            .queue
            .pop_front()
            .expect("an active worker has a command");
        let st = &self.k.blk.devs[dev as usize].st;
        let in_memory = st.loop_worker.is_some_and(|c| c.file_in_memory);
        match st.lower {
            Some(Lower::Loop { dev: lower }) if !in_memory => {
                stack::loop_queue_rq(self, dev, rid, lower)
            }
            _ => {
                // the copy is done: the request completes in this context
                self.k.blk.reqs.get_mut(rid).done_time = now;
                self.complete_request(dev, rid);
            }
        }
        let k = &mut *self.k;
        let Some(&next) = k.loop_workers.workers[w as usize].queue.front() else {
            let wk = &mut k.loop_workers.workers[w as usize];
            wk.active = false;
            wk.due = NOT_DUE;
            if let Some(t) = task {
                k.release_task(self.tasks, t);
            }
            return;
        };
        let cost = k.loop_cost_ns(dev, next);
        let Some(t) = task else {
            return k.loop_worker_runs(w, now + cost);
        };
        // the tick, taken between commands: past its slice while others
        // wait, it gives up the CPU and goes on when it has one again
        if let Some((nt, end)) = k.cpus.preempt(t, now) {
            k.loop_workers.workers[w as usize].due = NOT_DUE;
            k.cpus.wake(t, now, cost);
            k.task_runs(self.tasks, nt, end);
        } else {
            let end = k.cpus.continue_burst(t, now, cost);
            k.loop_worker_runs(w, end);
        }
    }
}

impl Kernel {
    /// Task `t` was given a CPU and its first burst ends at `end`: a job's
    /// wake-up is due then, a loop worker's command, or a kblockd run.
    pub(crate) fn task_runs(&mut self, tasks: &mut dyn Tasks, t: TaskId, end: Ns) {
        if super::kblockd::task_runs(self, t, end) {
            return;
        }
        match self.loop_workers.of_task(t) {
            Some(w) => self.loop_worker_runs(w, end),
            None => {
                tasks.set_wake(t, end);
                self.clk.q.push(end, Ev::Job(t));
            }
        }
    }
}
