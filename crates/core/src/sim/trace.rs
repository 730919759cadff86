//! Trace output in the shape of the kernel's tracepoints. The core formats the
//! lines; the sink decides where they go (a file, a buffer in tests). With no
//! sink, nothing is formatted.

use crate::sim::probe::{Probe, ProbeSink};
use crate::sim::sched_tracepoints::{SchedEvent, SchedTable, TaskName};
use crate::sim::time::Ns;

pub trait TraceSink {
    /// One event: `system:event` name and its already formatted payload, at `t`.
    fn event(&mut self, t: Ns, name: &str, payload: &str);
    /// One event in the context of task `comm`-`pid` on `cpu` (the
    /// scheduler's tracepoints, sim::sched_tracepoints); a sink that does
    /// not print contexts takes it as [`TraceSink::event`].
    fn event_in(&mut self, t: Ns, task: (&str, u32), cpu: u32, name: &str, payload: &str) {
        let _ = (task, cpu);
        self.event(t, name, payload);
    }
}

/// Collects lines in memory (tests, small runs).
#[derive(Default, Debug)]
pub struct VecSink {
    pub lines: Vec<String>,
}

impl TraceSink for VecSink {
    fn event(&mut self, t: Ns, name: &str, payload: &str) {
        self.lines.push(format_line(t, name, payload));
    }
    fn event_in(&mut self, t: Ns, task: (&str, u32), cpu: u32, name: &str, payload: &str) {
        self.lines
            .push(format_task_line(t, task, cpu, name, payload));
    }
}

/// The ftrace text layout: `<task>-<pid> [cpu] ....  SSSSS.UUUUUU: name: payload`.
/// The simulator has no tasks or CPUs; it prints `blklab-0 [000]` so that tools
/// that split on the `name:` field keep working.
pub fn format_line(t: Ns, name: &str, payload: &str) -> String {
    let (secs, usecs, short) = stamp(t, name);
    format!("         blklab-0       [000] .....  {secs:5}.{usecs:06}: {short}: {payload}")
}

/// A line's timestamp (whole seconds, microseconds: tracefs's default
/// clock prints µs) and its event's name without the `system:` part.
fn stamp(t: Ns, name: &str) -> (u64, u64, &str) {
    let short = name.rsplit(':').next().unwrap_or(name);
    (t / 1_000_000_000, (t % 1_000_000_000) / 1000, short)
}

/// The ftrace text layout with the task's context: `%16s-%-7d [%03d]`
/// (kernel/trace/trace_output.c's `trace_print_context`).
pub fn format_task_line(t: Ns, task: (&str, u32), cpu: u32, name: &str, payload: &str) -> String {
    let (secs, usecs, short) = stamp(t, name);
    let (comm, pid) = task;
    format!("{comm:>16}-{pid:<7} [{cpu:03}] ..... {secs:5}.{usecs:06}: {short}: {payload}")
}

/// A handle the controllers use: cheap to test for "off".
/// It also carries the optional structured probe (`sim::probe`), which the
/// same instrumentation points feed.
pub struct Tracer {
    sink: Option<Box<dyn TraceSink>>,
    probe: Option<Box<dyn ProbeSink>>,
    /// The tasks and CPUs of a host with CPUs, when tracing is on
    /// ([`Tracer::trace_tasks`]).
    tasks: Option<SchedTable>,
}

impl Default for Tracer {
    fn default() -> Self {
        Tracer {
            sink: None,
            probe: None,
            tasks: None,
        }
    }
}

impl Tracer {
    pub fn new(sink: Option<Box<dyn TraceSink>>) -> Tracer {
        Tracer {
            sink,
            probe: None,
            tasks: None,
        }
    }
    /// A tracer that also hands structured samples to `probe`.
    pub fn with_probe(
        sink: Option<Box<dyn TraceSink>>,
        probe: Option<Box<dyn ProbeSink>>,
    ) -> Tracer {
        Tracer {
            sink,
            probe,
            tasks: None,
        }
    }
    /// On a host of `nr_cpus` CPUs, with a sink: follow the tasks, so that
    /// the scheduler's tracepoints and the task-context ones are printed.
    /// Returns whether they are.
    pub fn trace_tasks(&mut self, nr_cpus: u32) -> bool {
        if self.sink.is_some() && nr_cpus > 0 {
            self.tasks = Some(SchedTable::new(nr_cpus));
        }
        self.tasks.is_some()
    }
    /// Whether the task-context tracepoints are printed.
    #[inline]
    pub fn tasks_traced(&self) -> bool {
        self.tasks.is_some()
    }
    /// Name task `t` for the scheduler's tracepoints.
    pub fn name_task(&mut self, t: crate::sim::task::TaskId, n: TaskName) {
        if let Some(tab) = self.tasks.as_mut() {
            tab.name(t, n);
        }
    }
    /// A scheduler decision of `sim::cpus` as its tracepoint's line.
    pub fn sched(&mut self, t: Ns, ev: &SchedEvent) {
        if let (Some(tab), Some(s)) = (self.tasks.as_mut(), self.sink.as_mut()) {
            let (cpu, (comm, pid), name, payload) = tab.line(ev);
            s.event_in(t, (&comm, pid), cpu, name, &payload);
        }
    }
    /// An event in the context of the task holding CPU 0
    /// (sim::sched_tracepoints: the simplification); `f` gets that task's
    /// comm (what `block_rq_issue` prints) and builds the payload only when
    /// the tasks are traced.
    #[inline]
    pub fn emit_in_task(&mut self, t: Ns, name: &str, f: impl FnOnce(&str) -> String) {
        if let (Some(tab), Some(s)) = (self.tasks.as_ref(), self.sink.as_mut()) {
            let (comm, pid) = tab.current(0);
            let p = f(&comm);
            s.event_in(t, (&comm, pid), 0, name, &p);
        }
    }
    /// `workqueue_execute_start` (`start`) or `_end` (include/trace/events/
    /// workqueue.h: `work struct %p: function %ps`) of the work item
    /// numbered `item` running `function`, in the context of the task
    /// holding the CPU. The work struct's address is made up from the
    /// item's number, stable across runs (a hashed pointer prints as 16 hex
    /// digits).
    pub fn workqueue_execute(&mut self, t: Ns, item: u32, function: &str, start: bool) {
        let name = if start {
            "workqueue:workqueue_execute_start"
        } else {
            "workqueue:workqueue_execute_end"
        };
        self.emit_in_task(t, name, |_| {
            format!(
                "work struct {:016x}: function {function}",
                0x5eed_0000_u64 + 0x40 * item as u64
            )
        });
    }
    /// Whether a probe listens (cheap: callers skip building samples when not).
    #[inline]
    pub fn probing(&self) -> bool {
        self.probe.is_some()
    }
    /// Hand a sample to the probe, if there is one.
    #[inline]
    pub fn probe(&mut self, t: Ns, p: &Probe<'_>) {
        if let Some(s) = self.probe.as_mut() {
            s.sample(t, p);
        }
    }
    pub fn take_probe(&mut self) -> Option<Box<dyn ProbeSink>> {
        self.probe.take()
    }
    #[inline]
    pub fn enabled(&self) -> bool {
        self.sink.is_some()
    }
    /// Emit an event; `f` builds the payload only when tracing is on.
    #[inline]
    pub fn emit(&mut self, t: Ns, name: &str, f: impl FnOnce() -> String) {
        if let Some(s) = self.sink.as_mut() {
            let p = f();
            s.event(t, name, &p);
        }
    }
    pub fn take_sink(&mut self) -> Option<Box<dyn TraceSink>> {
        self.sink.take()
    }
}
