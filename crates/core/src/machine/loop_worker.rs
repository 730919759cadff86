//! The loop driver's workers (drivers/block/loop.c): `loop_queue_rq` hands
//! each dispatched request to the worker of the request's blkcg
//! (`loop_queue_work`: one worker per blkcg css since v5.12, found in
//! `lo->worker_tree` or created; its commands go on `worker->cmd_list` and
//! its work item is queued on the loop device's workqueue);
//! `loop_process_work` takes the commands in order until the list is empty
//! (commands added meanwhile included) and `loop_handle_cmd` carries each
//! out:
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
//! The work items run on the kworkers of one unbound pool shared by every
//! loop device (`sim::workqueue`: the loop workqueues are `WQ_UNBOUND`
//! with the same attributes, so they share their pool): a queued item
//! wakes the pool's first idle kworker; a kworker done with an item takes
//! the next one waiting without sleeping, whichever device or blkcg it is
//! of. On a host with CPUs (`sim::cpus`) each kworker is a kernel-thread
//! task, numbered after the fio jobs in the order the pool makes them: a
//! woken kworker pays `wake_ns` to get a CPU, then looks for work; it
//! holds the CPU while it has items; after each command it may be
//! preempted (`cond_resched` after `loop_handle_cmd`, and at the end of
//! `process_one_work`: the scheduler's tick or a woken task's claim on
//! its CPU, `Cpus::preempt`), and goes on with its item when it has a
//! CPU again. On the free host (`cpus = 0`) a woken kworker runs at once,
//! so each worker is a FIFO server with the same costs and no contention.
//!
//! Simplified (docs/fidelity/devices.md, "The loop worker"): one worker per
//! (device, blkcg) for the whole run (the kernel frees idle workers after
//! `LOOP_IDLE_WORKER_TIMEOUT`; a new one costs nothing here); the root
//! cgroup's commands get a worker like any other (the kernel puts them on
//! `lo->rootcg_cmd_list`, one more work item: the same thing); a worker
//! over a device does not block in `submit_bio` (a lower bio that waits for
//! a tag or an rq_qos budget does not hold up its next command).

use super::kernel::{Kernel, Running};
use crate::block::blk_mq::{stack, BlkMq};
use crate::block::disk::Lower;
use crate::block::request::ReqId;
use crate::drivers::loop_worker::{KworkerRun, LoopWorker, NOT_DUE};
use crate::sim::cpus::{TaskId, Woken};
use crate::sim::engine::{DevId, Ev};
use crate::sim::time::Ns;
use crate::sim::workqueue::{KworkerId, WorkId};
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

    /// Kworker `k`'s task runs until `end`: its event is due then.
    pub(crate) fn kworker_runs(&mut self, k: KworkerId, end: Ns) {
        self.loop_workers.kworkers[k as usize].due = end;
        self.clk.q.push(end, Ev::LoopWork(k));
    }

    /// `workqueue_execute_start` (`start`) or `_end` of loop item `w`, in
    /// the context of the task holding the CPU (its kworker), on a host
    /// with CPUs: the function printed is the one drivers/block/loop.c gives
    /// the item (the root cgroup's `loop_rootcg_workfn`, every other
    /// blkcg's `loop_workfn`, v5.12 on); the work struct's address is made
    /// up from the item's number, stable across runs.
    fn trace_loop_work(&mut self, w: WorkId, start: bool) {
        if !self.blk.trace.tasks_traced() {
            return;
        }
        // `%ps` of a module's function names the module: loop is one in
        // the Debian kernels the guests boot
        let f = if self.loop_workers.workers[w as usize].rootcg {
            "loop_rootcg_workfn [loop]"
        } else {
            "loop_workfn [loop]"
        };
        self.blk
            .trace
            .workqueue_execute(self.clk.now, 0x100 + w, f, start);
    }

    /// The pool's kworkers get their simulator side (a task on a host with
    /// CPUs: nice 0, as the unbound pools' kworkers are) as it makes them.
    fn kworkers_made(&mut self) {
        let lw = &mut self.loop_workers;
        while lw.kworkers.len() < lw.pool.nr_workers() {
            let k = lw.kworkers.len() as KworkerId;
            let task = self
                .cpus
                .enabled()
                .then(|| self.cpus.add_task(crate::sim::eevdf::NICE_0_WEIGHT));
            if let Some(t) = task {
                lw.by_task.insert(t, k);
                self.blk
                    .trace
                    .name_task(t, crate::sim::sched_tracepoints::TaskName::loop_kworker(k));
            }
            lw.kworkers.push(KworkerRun {
                task,
                due: NOT_DUE,
                cmd: false,
            });
        }
    }
}

impl Running<'_> {
    /// Mirrors `loop_queue_rq` → `loop_queue_work` (drivers/block/loop.c):
    /// request `rid` of loop device `dev` goes on the list of the worker of
    /// its blkcg (created on first use), and the worker's item is queued on
    /// the pool (`queue_work`: nothing more when it is pending already),
    /// waking the kworker the pool chooses.
    pub(crate) fn loop_worker_queue(&mut self, dev: DevId, rid: ReqId) {
        let k = &mut *self.k;
        let cg = k.blk.reqs.get(rid).cg;
        let lw = &mut k.loop_workers;
        let w = match lw.by_key.get(&(dev, cg)) {
            Some(&w) => w,
            None => {
                let w = lw.pool.add_work();
                debug_assert_eq!(w as usize, lw.workers.len());
                lw.workers.push(LoopWorker {
                    dev,
                    rootcg: cg == 0,
                    queue: Default::default(),
                });
                lw.by_key.insert((dev, cg), w);
                w
            }
        };
        lw.workers[w as usize].queue.push_back(rid);
        if let Some(kw) = lw.pool.queue_work(w) {
            self.kworker_wake(kw);
        }
    }

    /// Kworker `k` is woken (`wake_up_process` from the pool's kick): on
    /// the free host it runs at once; else it asks for a CPU.
    fn kworker_wake(&mut self, k: KworkerId) {
        self.k.kworkers_made();
        match self.k.loop_workers.kworkers[k as usize].task {
            None => self.kworker_go(k),
            Some(t) => match self.k.cpu_wake(t, 0) {
                Woken::Runs(end) => self.k.kworker_runs(k, end),
                Woken::Queued => self.k.loop_workers.kworkers[k as usize].due = NOT_DUE,
            },
        }
    }

    /// Kworker `k`'s event (`Ev::LoopWork`): the end of a command of its
    /// item, or of its wake-up. A command's end mirrors `loop_handle_cmd`:
    /// over a file in memory the request completes here
    /// (`lo_rw_aio_complete`), over a device the lower bio is submitted;
    /// then `cond_resched` may give the CPU to another task. Then it goes
    /// on (`kworker_go`).
    pub(crate) fn loop_work(&mut self, k: KworkerId) {
        let now = self.k.clk.now;
        let kw = self.k.loop_workers.kworkers[k as usize];
        if kw.due != now {
            return; // superseded
        }
        if let Some(t) = kw.task {
            // interrupts took time from it: its burst ends later
            if let Some(end) = self.k.cpus.burst_end(t, now) {
                self.k.kworker_runs(k, end);
                return;
            }
        }
        let kwm = &mut self.k.loop_workers.kworkers[k as usize];
        kwm.due = NOT_DUE;
        if kw.cmd {
            kwm.cmd = false;
            let w = self
                .k
                .loop_workers
                .pool
                .current(k)
                .expect("a command has an item");
            self.loop_cmd_done(w);
            if let Some(t) = kw.task {
                // past its slice while others wait, or claimed by a woken
                // task: it gives up the CPU and goes on when it has one
                if let Some((nt, end)) = self.k.cpu_preempt(t) {
                    self.k.task_runs(self.tasks, nt, end);
                    return;
                }
            }
        }
        self.kworker_go(k);
    }

    /// Worker `w`'s command at the head of its list is carried out.
    fn loop_cmd_done(&mut self, w: WorkId) {
        let now = self.k.clk.now;
        let wk = &mut self.k.loop_workers.workers[w as usize];
        let dev = wk.dev;
        let rid = wk.queue.pop_front().expect("a command in progress");
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
    }

    /// Kworker `k` holds its CPU (or runs on the free host) with no command
    /// in progress: it starts its item's next command; with the list empty
    /// the item returns (`loop_process_work` → `process_one_work`'s end)
    /// and the pool gives it its next item (`WorkerPool::next`, waking
    /// another kworker if it says so), or it sleeps.
    fn kworker_go(&mut self, k: KworkerId) {
        let now = self.k.clk.now;
        loop {
            let k_ = &mut *self.k;
            if let Some(w) = k_.loop_workers.pool.current(k) {
                let wk = &k_.loop_workers.workers[w as usize];
                if let Some(&rid) = wk.queue.front() {
                    let cost = k_.loop_cost_ns(wk.dev, rid);
                    let kw = &mut k_.loop_workers.kworkers[k as usize];
                    kw.cmd = true;
                    let end = match kw.task {
                        Some(t) => k_.cpus.continue_burst(t, now, cost),
                        None => now + cost,
                    };
                    return k_.kworker_runs(k, end);
                }
                k_.trace_loop_work(w, false);
                k_.loop_workers.pool.done(k);
            }
            let step = k_.loop_workers.pool.next(k);
            if let Some(w) = step.run {
                k_.trace_loop_work(w, true);
            }
            k_.kworkers_made();
            if let Some(other) = step.wake {
                self.kworker_wake(other);
            }
            if step.run.is_none() {
                if let Some(t) = self.k.loop_workers.kworkers[k as usize].task {
                    self.k.release_task(self.tasks, t);
                }
                return;
            }
        }
    }
}

impl Kernel {
    /// Task `t` was given a CPU and its first burst ends at `end`: a job's
    /// wake-up is due then, a loop kworker's, a kblockd run, or a kthrotld
    /// kworker's wake-up.
    pub(crate) fn task_runs(&mut self, tasks: &mut dyn Tasks, t: TaskId, end: Ns) {
        if super::kblockd::task_runs(self, t, end) || super::kthrotld::task_runs(self, t, end) {
            return;
        }
        match self.loop_workers.of_task(t) {
            Some(k) => self.kworker_runs(k, end),
            None => {
                tasks.set_wake(t, end);
                self.clk.q.push(end, Ev::Job(t));
            }
        }
    }
}
