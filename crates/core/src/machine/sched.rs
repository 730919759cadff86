//! The machine's side of the host CPUs (`sim::cpus`): tasks woken onto
//! CPUs and released from them, and the kernel's interrupt work charged
//! to the CPU it runs on. Used only on a host with CPUs; the free host
//! (`[host] cpus = 0`) never comes here.

use super::kernel::Kernel;
use crate::block::request::Submitter;
use crate::sim::cpus::{SleptOn, TaskId, Woken};
use crate::sim::engine::{DevId, Ev, JobId, ReqId};
use crate::sim::time::Ns;
use crate::syscall::Tasks;
use crate::workload::Workload;

/// A task's wake-up while it waits in the run queue: no event is due for
/// it; the CPU that takes it sets the real instant.
const IN_RUN_QUEUE: Ns = Ns::MAX;

impl Kernel {
    /// The scheduler's decisions since the last call become tracepoint
    /// lines (sim::sched_tracepoints), before anything else is traced.
    pub(crate) fn sched_trace_flush(&mut self) {
        if self.cpus.sched_traced() {
            for (t, ev) in self.cpus.take_sched_log() {
                self.blk.trace.sched(t, &ev);
            }
        }
    }

    /// A new kernel thread of weight `weight` (a kworker), named `name`
    /// in the scheduler's trace.
    pub(crate) fn add_kworker(
        &mut self,
        weight: u64,
        name: crate::sim::sched_tracepoints::TaskName,
    ) -> TaskId {
        let task = self.cpus.add_task(weight);
        self.blk.trace.name_task(task, name);
        task
    }

    /// `Cpus::wake` now, traced.
    pub(crate) fn cpu_wake(&mut self, t: TaskId, burst_ns: Ns) -> Woken {
        self.cpu_wake_from(t, burst_ns, SleptOn::Other)
    }

    /// `Cpus::wake_from` now, traced.
    fn cpu_wake_from(&mut self, t: TaskId, burst_ns: Ns, slept_on: SleptOn) -> Woken {
        let w = self.cpus.wake_from(t, self.clk.now, burst_ns, slept_on);
        self.sched_trace_flush();
        w
    }

    /// `Cpus::preempt` now, traced.
    pub(crate) fn cpu_preempt(&mut self, t: TaskId) -> Option<(TaskId, Ns)> {
        let p = self.cpus.preempt(t, self.clk.now);
        self.sched_trace_flush();
        p
    }

    /// Task `j` becomes runnable now with `burst_ns` of kernel work to do
    /// first (`try_to_wake_up`): it runs when it has a CPU and has done it.
    pub(crate) fn wake_task(&mut self, tasks: &mut dyn Tasks, j: JobId, burst_ns: Ns) {
        self.wake_task_from(tasks, j, burst_ns, SleptOn::Other);
    }

    /// [`Kernel::wake_task`] of a task that slept on `slept_on` (a tag
    /// waiter's waker pays `tag_waker_ns`).
    pub(crate) fn wake_task_from(
        &mut self,
        tasks: &mut dyn Tasks,
        j: JobId,
        burst_ns: Ns,
        slept_on: SleptOn,
    ) {
        match self.cpu_wake_from(j, burst_ns, slept_on) {
            Woken::Runs(t) => {
                tasks.set_wake(j, t);
                self.clk.q.push(t, Ev::Job(j));
            }
            Woken::Queued => tasks.set_wake(j, IN_RUN_QUEUE),
        }
    }

    /// Task `j` blocked (`schedule()` from a wait): its CPU goes to the
    /// first task of the run queue.
    pub(super) fn release_task(&mut self, tasks: &mut dyn Tasks, j: JobId) {
        let now = self.clk.now;
        let next = self.cpus.block(j, now);
        self.sched_trace_flush();
        if let Some((next, t)) = next {
            self.task_runs(tasks, next, t);
        }
    }

    /// A device completion's interrupt: taken on the CPU of the task that
    /// submitted the request (CPU 0 for the kernel's own I/O) once that
    /// CPU's earlier interrupt work is done; the completion path runs at its
    /// end (`Ev::IrqDone`).
    fn complete_irq(&mut self, d: DevId, r: ReqId) {
        let now = self.clk.now;
        let owner = match self.blk.reqs.get(r).submitter {
            Submitter::Job(j) => Some(j),
            Submitter::Kernel => None,
        };
        let c = self.cpus.irq_cpu(owner);
        let end = self.cpus.complete_irq(c, now);
        self.clk.q.push(end, Ev::IrqDone(d, r));
    }
}

/// The task whose code event `ev` runs (the wake-ups it makes are that
/// task's: `Cpus::set_context`): a job's burst end, a loop kworker's
/// command, a kblockd run. None for interrupts (a completion's, a timer's:
/// their `irq_ns` / `timer_ns` hold the wake-ups they make) and for the
/// machine's own events.
pub(super) fn context(k: &Kernel, ev: Ev) -> Option<TaskId> {
    match ev {
        Ev::Job(j) => Some(j),
        Ev::LoopWork(w) => k
            .loop_workers
            .kworkers
            .get(w as usize)
            .and_then(|kw| kw.task),
        Ev::Kblockd(d) => k.kblockd.by_dev.get(&d).map(|w| w.task),
        Ev::Kthrotld(d) => k.kthrotld.context_of(d),
        _ => None,
    }
}

/// Dispatch an event on a host with CPUs; false when the event needs no
/// CPU treatment (the caller dispatches it as on the free host).
pub(super) fn dispatch(k: &mut Kernel, wl: &mut Workload, ev: Ev) -> bool {
    let now = k.clk.now;
    match ev {
        Ev::Job(j) => {
            if !wl.wake_due(j, now) {
                return true; // superseded
            }
            // interrupts took time from the burst that ends now: it goes on
            if let Some(t) = k.cpus.burst_end(j, now) {
                wl.set_wake(j, t);
                k.clk.q.push(t, Ev::Job(j));
                return true;
            }
            // it used its slice while others wait, or a woken kernel thread
            // preempts it: it goes on later (not from inside its submit
            // call before the bio: that is no preemption point)
            if wl.preemptible(j) {
                if let Some((next, t)) = k.cpu_preempt(j) {
                    wl.set_wake(j, IN_RUN_QUEUE);
                    k.task_runs(wl, next, t);
                    return true;
                }
            }
            wl.job_wake(k, j);
            if !wl.on_burst(j) {
                k.release_task(wl, j);
            }
            true
        }
        Ev::Wake(j) => {
            if wl.wake_due(j, now) {
                k.wake_task(wl, j, 0);
            }
            true
        }
        Ev::Complete(d, r) => {
            k.complete_irq(d, r);
            true
        }
        // kernel timers' softirqs: their work costs CPU 0 time, charged
        // only for a timer still armed for now (a stale one is skipped);
        // their effects stay at the timer's instant (simplified)
        Ev::Throttle(d) | Ev::Qos(d, _) | Ev::Elevator(d) => {
            let st = &k.blk.devs[d as usize].st;
            let armed_at = match ev {
                Ev::Throttle(_) => st.throttle_armed.0,
                Ev::Qos(_, i) => st.qos_armed[i as usize].0,
                _ => st.elv_armed.0,
            };
            if armed_at == Some(now) {
                k.cpus.timer_irq(now);
            }
            false
        }
        _ => false,
    }
}
