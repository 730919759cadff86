//! The scheduler's tracepoints (`sched_switch`, `sched_wakeup`) and the
//! task context of the other events on a host with CPUs (`sim::cpus`), in
//! the text the kernel's tracefs prints (include/trace/events/sched.h's
//! `TP_printk`s), so that the reader of a guest's trace
//! (blklab-conformance's vm/sched_trace.rs) reads a simulated one as well.
//!
//! `sim::cpus` logs what it decides ([`SchedEvent`]); the machine hands the
//! log to the tracer right after each scheduler call, so the lines keep the
//! order of the simulated calls; [`SchedTable`] names the tasks and
//! remembers who holds each CPU, the task an event runs in.
//!
//! Names and pids are fixed by the task's role, not by the order of
//! creation: an fio job `j` is `fio` with pid [`FIO_PID_BASE`] + `j`, the
//! loop pool's kworker `k` is `kworker/u2:k` (the unbound pool of a
//! one-node machine) with pid [`LOOP_KWORKER_PID_BASE`] + `k`, device `d`'s
//! kblockd kworker `kworker/0:1H` (nice −20) with pid
//! [`KBLOCKD_PID_BASE`] + `d`, its blk-throttle dispatch work's kworker
//! `kworker/0:1` (nice 0) with pid [`KTHROTLD_PID_BASE`] + `d`.
//!
//! Simplified (docs/fidelity/cpus.md, "The scheduler's trace"): an event
//! that is not a switch is printed in the context of the task holding
//! CPU 0 (the simulator does not follow which CPU a waker or an interrupt
//! runs on: exact on one CPU, the guests' machine); a switch is printed at
//! the instant the CPU is given, its wake-up cost (`wake_ns`) falling after
//! it, in the next task's time, as the kernel's switch-in path
//! (`finish_task_switch`, the return from `schedule`) does; flags are
//! printed as `.....`.

use std::collections::BTreeMap;

use crate::sim::task::TaskId;

/// An fio job's pid is this plus its index.
pub const FIO_PID_BASE: u32 = 1000;
/// The loop pool's kworker `k` has this pid plus `k`.
pub const LOOP_KWORKER_PID_BASE: u32 = 100;
/// Device `d`'s kblockd kworker has this pid plus `d`.
pub const KBLOCKD_PID_BASE: u32 = 600;
/// Device `d`'s kthrotld kworker has this pid plus `d`.
pub const KTHROTLD_PID_BASE: u32 = 700;

/// How a task left its CPU: `sched_switch`'s `prev_state`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrevState {
    /// Preempted while runnable: `R+` (`TASK_RUNNING` with the preemption
    /// mark `TASK_REPORT_MAX`, `__trace_sched_switch_state`).
    Preempted,
    /// Blocked in a wait: `S` (fio's `io_getevents`, a sleep).
    Sleeping,
    /// A kworker with no work (`worker_thread` sleeps `TASK_IDLE`): `I`.
    Idle,
}

impl PrevState {
    fn text(self) -> &'static str {
        match self {
            PrevState::Preempted => "R+",
            PrevState::Sleeping => "S",
            PrevState::Idle => "I",
        }
    }
}

/// One scheduler decision of `sim::cpus`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchedEvent {
    /// `try_to_wake_up` made `task` runnable, for `target_cpu`.
    Wakeup { task: TaskId, target_cpu: u32 },
    /// `__schedule` on `cpu`: `prev` (None: the idle task) leaves, `next`
    /// (None: the idle task) runs.
    Switch {
        cpu: u32,
        prev: Option<(TaskId, PrevState)>,
        next: Option<TaskId>,
    },
}

/// A task as the trace names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskName {
    pub comm: String,
    pub pid: u32,
    /// The kernel's `prio` (120 + nice).
    pub prio: u32,
}

impl TaskName {
    /// fio job `j`.
    pub fn fio(j: u32) -> TaskName {
        TaskName {
            comm: "fio".into(),
            pid: FIO_PID_BASE + j,
            prio: 120,
        }
    }
    /// The loop pool's kworker `k` (nice 0).
    pub fn loop_kworker(k: u32) -> TaskName {
        TaskName {
            comm: format!("kworker/u2:{k}"),
            pid: LOOP_KWORKER_PID_BASE + k,
            prio: 120,
        }
    }
    /// Device `dev`'s kblockd kworker (a highpri pool: nice −20).
    pub fn kblockd(dev: u32) -> TaskName {
        TaskName {
            comm: "kworker/0:1H".into(),
            pid: KBLOCKD_PID_BASE + dev,
            prio: 100,
        }
    }
    /// The kworker running device `dev`'s blk-throttle dispatch work (the
    /// kthrotld workqueue is per-CPU, not highpri: CPU 0's nice-0 pool).
    pub fn kthrotld(dev: u32) -> TaskName {
        TaskName {
            comm: "kworker/0:1".into(),
            pid: KTHROTLD_PID_BASE + dev,
            prio: 120,
        }
    }
}

/// The tasks' names and who holds each CPU, for the lines' context.
#[derive(Clone, Debug, Default)]
pub struct SchedTable {
    names: BTreeMap<TaskId, TaskName>,
    on_cpu: Vec<Option<TaskId>>,
}

/// A switch's side: the idle task prints as `swapper/CPU`, pid 0.
fn side(names: &BTreeMap<TaskId, TaskName>, t: Option<TaskId>, cpu: u32) -> (String, u32, u32) {
    match t {
        None => (format!("swapper/{cpu}"), 0, 120),
        Some(t) => {
            let n = name_of(names, t);
            (n.comm, n.pid, n.prio)
        }
    }
}

/// Task `t`'s name; one never named (not expected) gets a pid of its own.
fn name_of(names: &BTreeMap<TaskId, TaskName>, t: TaskId) -> TaskName {
    names.get(&t).cloned().unwrap_or_else(|| TaskName {
        comm: "task".into(),
        pid: 100_000 + t,
        prio: 120,
    })
}

impl SchedTable {
    /// A table for `nr_cpus` CPUs, all idle.
    pub fn new(nr_cpus: u32) -> SchedTable {
        SchedTable {
            names: BTreeMap::new(),
            on_cpu: vec![None; nr_cpus as usize],
        }
    }

    pub fn name(&mut self, t: TaskId, n: TaskName) {
        self.names.insert(t, n);
    }

    /// The task holding `cpu` as the line's context (`COMM`, `PID`): the
    /// idle task is `<idle>`, pid 0.
    pub fn current(&self, cpu: u32) -> (String, u32) {
        match self.on_cpu.get(cpu as usize).copied().flatten() {
            None => ("<idle>".into(), 0),
            Some(t) => {
                let n = name_of(&self.names, t);
                (n.comm, n.pid)
            }
        }
    }

    /// The line of `ev`: its CPU, context, tracepoint and payload; a switch
    /// changes who holds the CPU.
    pub fn line(&mut self, ev: &SchedEvent) -> (u32, (String, u32), &'static str, String) {
        match *ev {
            SchedEvent::Wakeup { task, target_cpu } => {
                let n = name_of(&self.names, task);
                (
                    0,
                    self.current(0),
                    "sched:sched_wakeup",
                    format!(
                        "comm={} pid={} prio={} target_cpu={target_cpu:03}",
                        n.comm, n.pid, n.prio
                    ),
                )
            }
            SchedEvent::Switch { cpu, prev, next } => {
                let who = self.current(cpu);
                let (pc, pp, pprio) = side(&self.names, prev.map(|p| p.0), cpu);
                let state = prev.map_or("R", |p| p.1.text());
                let (nc, np, nprio) = side(&self.names, next, cpu);
                if let Some(slot) = self.on_cpu.get_mut(cpu as usize) {
                    *slot = next;
                }
                (
                    cpu,
                    who,
                    "sched:sched_switch",
                    format!(
                        "prev_comm={pc} prev_pid={pp} prev_prio={pprio} prev_state={state} ==> next_comm={nc} next_pid={np} next_prio={nprio}"
                    ),
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn switches_and_wake_ups_print_as_the_kernel_does_and_move_the_context() {
        let mut t = SchedTable::new(1);
        t.name(0, TaskName::fio(0));
        t.name(3, TaskName::loop_kworker(1));
        let (cpu, who, name, p) = t.line(&SchedEvent::Switch {
            cpu: 0,
            prev: None,
            next: Some(0),
        });
        assert_eq!(
            (cpu, who, name),
            (0, ("<idle>".into(), 0), "sched:sched_switch")
        );
        assert_eq!(p, "prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=fio next_pid=1000 next_prio=120");
        let (_, who, _, p) = t.line(&SchedEvent::Wakeup {
            task: 3,
            target_cpu: 0,
        });
        assert_eq!(who, ("fio".into(), 1000));
        assert_eq!(p, "comm=kworker/u2:1 pid=101 prio=120 target_cpu=000");
        let (_, who, _, p) = t.line(&SchedEvent::Switch {
            cpu: 0,
            prev: Some((0, PrevState::Preempted)),
            next: Some(3),
        });
        assert_eq!(who, ("fio".into(), 1000));
        assert!(
            p.contains("prev_state=R+ ==> next_comm=kworker/u2:1 next_pid=101"),
            "{p}"
        );
        assert_eq!(t.current(0), ("kworker/u2:1".into(), 101));
    }
}
