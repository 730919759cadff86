//! Simulated time and the events waiting for it: what every part of the
//! model shares, the kernel's timers and the tasks' sleeps alike.

use crate::sim::engine::{Ev, EventQueue};
use crate::sim::time::Ns;

/// The simulated instant and the queue of future events.
#[derive(Default)]
pub struct Clock {
    pub now: Ns,
    pub q: EventQueue,
    /// The run stops at this instant even if tasks are still running.
    pub time_limit: Option<Ns>,
}

impl Clock {
    /// Whether a task that sleeps until `t` can simply move the clock there:
    /// nothing else is due before `t` and the run does not end first.
    pub fn can_skip_to(&self, t: Ns) -> bool {
        self.q.peek_time().is_none_or(|n| n > t) && self.time_limit.is_none_or(|l| t <= l)
    }
}

/// A timer a component asked for, so that only the latest request is honoured.
#[derive(Default, Clone, Copy, Debug)]
pub struct Armed(pub Option<Ns>);

impl Armed {
    /// Ask for `ev` at `want` unless exactly that is already asked for. A
    /// changed or cancelled request leaves the old event queued; it is ignored
    /// when it fires because it no longer matches.
    pub fn set(&mut self, q: &mut EventQueue, want: Option<Ns>, ev: Ev) {
        if want != self.0 {
            self.0 = want;
            if let Some(t) = want {
                q.push(t, ev);
            }
        }
    }
}
