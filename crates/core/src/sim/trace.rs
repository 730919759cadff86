//! Trace output in the shape of the kernel's tracepoints. The core formats the
//! lines; the sink decides where they go (a file, a buffer in tests). With no
//! sink, nothing is formatted.

use crate::sim::probe::{Probe, ProbeSink};
use crate::sim::time::Ns;

pub trait TraceSink {
    /// One event: `system:event` name and its already formatted payload, at `t`.
    fn event(&mut self, t: Ns, name: &str, payload: &str);
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
}

/// The ftrace text layout: `<task>-<pid> [cpu] ....  SSSSS.UUUUUU: name: payload`.
/// The simulator has no tasks or CPUs; it prints `blklab-0 [000]` so that tools
/// that split on the `name:` field keep working.
pub fn format_line(t: Ns, name: &str, payload: &str) -> String {
    let secs = t / 1_000_000_000;
    let usecs = (t % 1_000_000_000) / 1000;
    let short = name.rsplit(':').next().unwrap_or(name);
    format!("         blklab-0       [000] .....  {secs:5}.{usecs:06}: {short}: {payload}")
}

/// A handle the controllers use: cheap to test for "off".
/// It also carries the optional structured probe (`sim::probe`), which the
/// same instrumentation points feed.
pub struct Tracer {
    sink: Option<Box<dyn TraceSink>>,
    probe: Option<Box<dyn ProbeSink>>,
}

impl Default for Tracer {
    fn default() -> Self {
        Tracer {
            sink: None,
            probe: None,
        }
    }
}

impl Tracer {
    pub fn new(sink: Option<Box<dyn TraceSink>>) -> Tracer {
        Tracer { sink, probe: None }
    }
    /// A tracer that also hands structured samples to `probe`.
    pub fn with_probe(
        sink: Option<Box<dyn TraceSink>>,
        probe: Option<Box<dyn ProbeSink>>,
    ) -> Tracer {
        Tracer { sink, probe }
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
