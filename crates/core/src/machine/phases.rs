//! Run phases: back-to-back runs on one machine. A real host that runs a
//! warm-up fio and then the measured fio keeps every controller's state
//! between them (iocost's vrate, blk-throttle's groups, the page cache,
//! the device's own state), because nothing resets it when a process
//! exits. A phased run mirrors that: one `Sim`, whose phases' jobs start
//! one phase after another: a phase's jobs start when the previous
//! phase's jobs have all ended, plus the phase's gap, during which
//! nothing submits but the kernel's timers keep running.
//!
//! A phase's jobs are the `SimConfig` jobs it names; their times
//! (`startdelay`, `ramp_time`, `runtime`) count from the phase's start, as
//! a fio started at that instant would count them. A phase's timed writes
//! count from the phase's start too; a write still pending when its phase
//! ends is dropped, as a shell script's `sleep N; echo ...` beside the fio
//! of that phase would be killed with it (the lab warns about it).
//!
//! At each phase boundary the machine records what a script around fio
//! would read there: `/sys/block/DEV/stat` of every device and, on the
//! devices with blk-iocost, its vrate (`iocost_ioc_vrate_adj`'s base rate).

use crate::block::iocost::IoCost;
use crate::sim::engine::{DevId, Ev, JobId};
use crate::sim::time::Ns;

use super::{SetupError, Sim, TimedWrite};

/// One phase of a run, as the caller plans it.
#[derive(Clone, Debug)]
pub struct PhaseSpec {
    pub name: String,
    /// Idle time between the end of the previous phase and this one's start
    /// (ignored for the first phase, which starts at time 0).
    pub gap_ns: Ns,
    /// Indices into `SimConfig::jobs`: every job belongs to exactly one phase.
    pub jobs: Vec<JobId>,
    /// Writes whose `at` counts from the phase's start.
    pub writes: Vec<TimedWrite>,
}

/// What the machine showed at a phase boundary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PhaseSnapshot {
    pub t_ns: Ns,
    /// `/sys/block/DEV/stat`'s first 11 fields, per device.
    pub stat: Vec<[u64; 11]>,
    /// blk-iocost's base vrate (vtime per µs, `VTIME_PER_USEC` = 100 %)
    /// per device; None where the device has no blk-iocost.
    pub vrate: Vec<Option<u64>>,
}

/// A phase that started: its start and, once its jobs have all ended, its end.
#[derive(Clone, Debug)]
pub struct PhaseMark {
    pub name: String,
    pub start: PhaseSnapshot,
    /// None when the run was cut short (run.duration) inside the phase.
    pub end: Option<PhaseSnapshot>,
}

/// The plan and its progress.
pub(crate) struct Phases {
    specs: Vec<PhaseSpec>,
    /// The phase running, or whose gap is running (its index in `specs`).
    cur: usize,
    marks: Vec<PhaseMark>,
    /// `Sim::writes` from this index on are the phases' writes.
    first_write: usize,
}

/// The `at` of a phase's write dropped at its phase's end (never reached).
pub(super) const DROPPED: Ns = Ns::MAX;

impl Sim {
    /// A machine whose jobs run in phases (see the module comment). Every
    /// job must belong to exactly one phase; the first phase starts at once.
    pub fn with_phases(
        cfg: super::SimConfig,
        trace: crate::sim::trace::Tracer,
        plan: Vec<PhaseSpec>,
    ) -> Result<Sim, SetupError> {
        let mut owner = vec![None; cfg.jobs.len()];
        for p in &plan {
            if p.jobs.is_empty() {
                return Err(SetupError::Job {
                    job: format!("phase {}", p.name),
                    msg: "a phase needs at least one job".into(),
                });
            }
            for &j in &p.jobs {
                let Some(o) = owner.get_mut(j as usize) else {
                    return Err(SetupError::Job {
                        job: format!("#{j}"),
                        msg: format!("phase {} names a job that does not exist", p.name),
                    });
                };
                if let Some(other) = o.replace(&p.name) {
                    return Err(SetupError::Job {
                        job: cfg.jobs[j as usize].spec.name.clone(),
                        msg: format!("in two phases ({other} and {})", p.name),
                    });
                }
            }
        }
        if plan.is_empty() || owner.iter().any(Option::is_none) {
            return Err(SetupError::Job {
                job: "(phases)".into(),
                msg: "every job must belong to a phase".into(),
            });
        }
        Sim::build(cfg, trace, plan)
    }

    /// Every phase that started, in order, with its boundaries (empty for a
    /// run without phases).
    pub fn phase_marks(&self) -> &[PhaseMark] {
        self.phases.as_ref().map_or(&[], |p| &p.marks)
    }

    /// Set up the plan and start its first phase (at the current instant, 0).
    pub(super) fn start_phases(&mut self, plan: Vec<PhaseSpec>) -> Result<(), SetupError> {
        self.phases = Some(Box::new(Phases {
            specs: plan,
            cur: 0,
            marks: Vec::new(),
            first_write: self.writes.len(),
        }));
        self.wl.phases_open = true;
        self.phase_start();
        Ok(())
    }

    /// The boundary figures now.
    fn phase_snapshot(&self) -> PhaseSnapshot {
        let now = self.k.clk.now;
        let n = self.k.blk.devs.len() as DevId;
        PhaseSnapshot {
            t_ns: now,
            stat: (0..n)
                .map(|d| self.k.blk.devs[d as usize].st.diskstats.stat_fields(now))
                .collect(),
            vrate: (0..n)
                .map(|d| self.qos::<IoCost>(d).map(IoCost::vrate))
                .collect(),
        }
    }

    /// `Ev::PhaseStart`: the current phase's writes are due from now on and
    /// its jobs start (their epoch moves to now), in the order `Sim::new`
    /// uses (writes first, then jobs).
    pub(super) fn phase_start(&mut self) {
        let snap = self.phase_snapshot();
        let now = snap.t_ns;
        let Some(ph) = self.phases.as_mut() else {
            return;
        };
        let spec = &ph.specs[ph.cur];
        ph.marks.push(PhaseMark {
            name: spec.name.clone(),
            start: snap,
            end: None,
        });
        for w in &spec.writes {
            let i = self.writes.len() as u32;
            self.writes.push(TimedWrite {
                at: now + w.at,
                ..w.clone()
            });
            self.k.clk.q.push(now + w.at, Ev::Write(i));
        }
        let jobs = spec.jobs.clone();
        for &j in &jobs {
            self.wl.shift_job_start(j, now);
        }
        for &j in &jobs {
            self.wl.start_job(&mut self.k, j);
        }
    }

    /// `Ev::PhaseEnd`: record the end of the current phase; drop its writes
    /// still pending; schedule the next phase after its gap, or close the run.
    pub(super) fn phase_end(&mut self) {
        let snap = self.phase_snapshot();
        let now = snap.t_ns;
        let Some(ph) = self.phases.as_mut() else {
            return;
        };
        if let Some(m) = ph.marks.last_mut() {
            m.end = Some(snap);
        }
        // the phase's writes still pending are dropped (its event is skipped)
        for w in self.writes[ph.first_write..]
            .iter_mut()
            .filter(|w| w.at > now)
        {
            w.at = DROPPED;
        }
        ph.cur += 1;
        match ph.specs.get(ph.cur) {
            Some(next) => self.k.clk.q.push(now + next.gap_ns, Ev::PhaseStart),
            None => self.wl.phases_open = false,
        }
    }
}
