//! Background work on the host's CPUs: what else a real host runs beside
//! the simulated tasks and interrupts. The tick (`tick_sched_timer`), RCU's
//! callbacks and softirqs (`rcu_core`), other softirqs, kworkers and other
//! processes all take a CPU from the task on it for a while, at times that
//! have nothing to do with the I/O. On a busy CPU that time is lost to the
//! task: its burst ends that much later, and every I/O waiting on that
//! task (a queue at depth behind the loop worker, a reap) waits with it.
//!
//! The model is not any kernel function: each CPU has its own stall
//! process, stalls starting as a Poisson process (exponential gaps of mean
//! [`Background::interval_ns`]) and lasting [`Background::stall_ns`]
//! (fixed, or exponential with that mean), each CPU's drawn from its own
//! seeded stream, so the stalls are the same whatever the tasks do.
//!
//! Simplifications (docs/fidelity/cpus.md, "Background work"):
//! * A stall that starts while a task holds the CPU is taken from that
//!   task whole, as interrupt work is (`sim::cpus`): the task's burst ends
//!   the stall's length later. Interrupts are not delayed by it (the
//!   background work is preempted by them).
//! * A stall that starts on an idle CPU costs nothing: the background work
//!   runs in the idle time, and a task woken meanwhile is taken to run at
//!   once (a woken fio task, long asleep, preempts a background task at
//!   once under CFS: `place_entity` puts it well behind; on a 2-CPU host
//!   the scheduler would pick the other, idle CPU anyway).
//! * Stalls on one CPU may overlap; their lengths add.

use crate::sim::rng::Rng;
use crate::sim::time::Ns;

/// How a stall's length is drawn.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StallDist {
    /// Exponential with mean `stall_ns` (the default).
    #[default]
    Exp,
    /// Always `stall_ns`.
    Fixed,
}

impl StallDist {
    /// The scenario's names (`[host] stall_dist`).
    pub const NAMES: [&'static str; 2] = ["exp", "fixed"];

    pub fn parse(s: &str) -> Option<StallDist> {
        match s {
            "exp" => Some(StallDist::Exp),
            "fixed" => Some(StallDist::Fixed),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            StallDist::Exp => "exp",
            StallDist::Fixed => "fixed",
        }
    }
}

/// The background work of every CPU of the host (off by default).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Background {
    /// Mean time between the starts of two stalls on one CPU (exponential
    /// gaps); 0 = no background work.
    pub interval_ns: Ns,
    /// A stall's length (its mean when exponential).
    pub stall_ns: Ns,
    pub dist: StallDist,
}

impl Background {
    /// The shortest mean interval: below it the model would draw stalls
    /// faster than any host's background work comes (the tick itself is
    /// 1 ms at HZ=1000), and an idle CPU's draws grow with time / interval.
    pub const MIN_INTERVAL_NS: Ns = 10_000;

    /// Whether there is background work.
    #[inline]
    pub fn enabled(&self) -> bool {
        self.interval_ns > 0
    }

    /// The share of a busy CPU the stalls take, in expectation.
    pub fn busy_share(&self) -> f64 {
        if self.enabled() {
            self.stall_ns as f64 / self.interval_ns as f64
        } else {
            0.0
        }
    }

    /// What a scenario may ask for: both numbers or neither, an interval of
    /// at least [`Self::MIN_INTERVAL_NS`], and stalls taking at most half of
    /// a busy CPU (more and a busy task would hardly move: every burst
    /// extension would meet the next stall).
    pub fn check(&self) -> Result<(), String> {
        match (self.interval_ns, self.stall_ns) {
            (0, 0) => Ok(()),
            (0, _) => Err("stall_ns needs stall_interval_ns".into()),
            (_, 0) => Err("stall_interval_ns needs stall_ns".into()),
            (i, _) if i < Self::MIN_INTERVAL_NS => Err(format!(
                "stall_interval_ns = {i}: at least {}",
                Self::MIN_INTERVAL_NS
            )),
            (i, s) if s > i / 2 => Err(format!(
                "stall_ns = {s} with stall_interval_ns = {i}: the stalls would take more than \
                 half of a busy CPU (at most {})",
                i / 2
            )),
            _ => Ok(()),
        }
    }
}

/// One CPU's stall process.
#[derive(Clone, Debug)]
struct CpuStalls {
    /// When its next stall starts, and how long it lasts.
    next_at: Ns,
    next_len: Ns,
    /// What its stalls took from busy tasks, in all.
    taken_ns: Ns,
    rng: Rng,
}

impl CpuStalls {
    /// The gap to the next stall, then its length: always drawn in this
    /// order, so the stall times are a function of the seed and the CPU alone.
    fn draw(&mut self, cfg: &Background, from: Ns) {
        let gap = self.rng.exp(cfg.interval_ns as f64) as Ns;
        self.next_at = from.saturating_add(gap.max(1));
        self.next_len = match cfg.dist {
            StallDist::Fixed => cfg.stall_ns,
            StallDist::Exp => self.rng.exp(cfg.stall_ns as f64) as Ns,
        };
    }
}

/// The stall processes of the host's CPUs, drawn lazily: each time a CPU's
/// state is about to change, the stalls it met since it was last asked are
/// counted against the state it had.
#[derive(Clone, Debug, Default)]
pub struct Stalls {
    cfg: Background,
    cpus: Vec<CpuStalls>,
}

impl Stalls {
    /// Stall processes for `nr` CPUs, CPU `c`'s drawn from the stream
    /// "host/background/c" of `seed` (no other stream is touched); none
    /// when `cfg` has no background work.
    pub fn new(cfg: Background, nr: u32, seed: u64) -> Stalls {
        if !cfg.enabled() {
            return Stalls::default();
        }
        let cpus = (0..nr)
            .map(|c| {
                let mut s = CpuStalls {
                    next_at: 0,
                    next_len: 0,
                    taken_ns: 0,
                    rng: Rng::stream(seed, &format!("host/background/{c}")),
                };
                s.draw(&cfg, 0);
                s
            })
            .collect();
        Stalls { cfg, cpus }
    }

    /// Whether there is background work.
    #[inline]
    pub fn enabled(&self) -> bool {
        !self.cpus.is_empty()
    }

    /// The stall time CPU `c` met from the last call up to `now` (stalls
    /// starting before `now`), while `busy` (a task held it all along): the
    /// time taken from that task. An idle CPU's stalls cost nothing (0).
    pub fn take(&mut self, c: u32, now: Ns, busy: bool) -> Ns {
        let Some(s) = self.cpus.get_mut(c as usize) else {
            return 0;
        };
        let mut taken = 0;
        while s.next_at < now {
            if busy {
                taken += s.next_len;
            }
            let at = s.next_at;
            s.draw(&self.cfg, at);
        }
        s.taken_ns += taken;
        taken
    }

    /// What CPU `c`'s stalls took from busy tasks so far.
    pub fn taken_ns(&self, c: u32) -> Ns {
        self.cpus.get(c as usize).map_or(0, |s| s.taken_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(interval_ns: Ns, stall_ns: Ns, dist: StallDist) -> Background {
        Background {
            interval_ns,
            stall_ns,
            dist,
        }
    }

    #[test]
    fn off_takes_nothing() {
        let mut s = Stalls::new(Background::default(), 4, 1);
        assert!(!s.enabled());
        assert_eq!(s.take(0, 1_000_000_000, true), 0);
        assert_eq!(s.taken_ns(3), 0);
    }

    #[test]
    fn a_busy_cpu_loses_the_stalled_share_and_an_idle_one_nothing() {
        // 100 µs fixed every 1 ms on average: 10 s busy → about 10 000
        // stalls (Poisson: ± 1 % at one sigma), 10 % of the time
        let b = cfg(1_000_000, 100_000, StallDist::Fixed);
        let mut s = Stalls::new(b, 2, 7);
        let ten_s = 10_000_000_000;
        let busy = s.take(0, ten_s, true);
        assert_eq!(busy % 100_000, 0, "whole fixed stalls");
        let share = busy as f64 / ten_s as f64;
        assert!((share - b.busy_share()).abs() < 0.004, "{share}");
        assert_eq!(s.take(1, ten_s, false), 0, "idle: absorbed");
        assert_eq!((s.taken_ns(0), s.taken_ns(1)), (busy, 0));
    }

    #[test]
    fn stalls_do_not_depend_on_when_they_are_asked_for() {
        let b = cfg(50_000, 20_000, StallDist::Exp);
        let mut once = Stalls::new(b, 1, 3);
        let mut often = Stalls::new(b, 1, 3);
        let all = once.take(0, 5_000_000, true);
        let mut sum = 0;
        for t in (1..=500).map(|i| i * 10_000) {
            sum += often.take(0, t, true);
        }
        assert_eq!(all, sum);
        // another seed, other stalls; another CPU, other stalls
        let mut other = Stalls::new(b, 2, 4);
        assert_ne!(other.take(0, 5_000_000, true), all);
        let mut cpu1 = Stalls::new(b, 2, 3);
        assert_ne!(cpu1.take(1, 5_000_000, true), all);
        // exponential lengths: mean 20 µs, about 100 stalls, 2 ms ± 0.4
        assert!((1_000_000..3_000_000).contains(&all), "{all}");
    }

    #[test]
    fn bad_settings_are_refused() {
        let ok = cfg(4_000_000, 200_000, StallDist::Exp);
        assert!(ok.check().is_ok() && Background::default().check().is_ok());
        for (b, want) in [
            (cfg(0, 5, StallDist::Exp), "needs stall_interval_ns"),
            (cfg(50_000, 0, StallDist::Exp), "needs stall_ns"),
            (cfg(9_999, 1, StallDist::Exp), "at least 10000"),
            (cfg(100_000, 50_001, StallDist::Fixed), "at most 50000"),
        ] {
            let e = b.check().unwrap_err();
            assert!(e.contains(want), "{b:?}: {e}");
        }
    }
}
