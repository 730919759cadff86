//! The host's CPUs and run queue: which task runs on which CPU, the tasks
//! waiting for one, and the interrupt work that CPUs do beside their tasks.
//!
//! A task holds a CPU from the moment it is given one until it blocks
//! (waits for a completion, sleeps, ends); everything it does meanwhile is
//! CPU time (its bursts: the submit path, the reap, the way back to user
//! space). A task that becomes runnable takes an idle CPU, the one it last
//! ran on when that one is idle (`select_task_rq_fair`'s wake-affine
//! choice, simplified), and pays the wake-up and context switch
//! (`try_to_wake_up` → `__schedule`) before it runs; with no CPU idle it
//! waits in one FIFO run queue for the next CPU released.
//!
//! Simplifications (docs/fidelity/cpus.md): time slicing only between
//! bursts (a task that has held its CPU for a slice, [`SLICE_NS`], while
//! others wait gives it up at the end of its current burst, as the
//! scheduler tick would preempt it; bursts are microseconds); one run queue for the whole host (no per-CPU queues,
//! no load balancing); interrupt work preempts the task on its CPU at once
//! and its time is added to the task's burst when the burst ends (the task
//! checks what was stolen from it, lazily, instead of each interrupt moving
//! the task's event).
//!
//! Under switch `sched.fair = eevdf` (v6.6+) the FIFO queue and the slice
//! give way to EEVDF's choice (`sim::eevdf`): the eligible task with the
//! earliest virtual deadline runs, and a woken task of either kind preempts
//! when that choice is its own.
//!
//! Tasks are numbered by the caller: the fio jobs first (their `JobId`);
//! a kernel thread (the loop worker, the flusher) can be given a number
//! after them.

use std::collections::VecDeque;

use crate::sim::background::Stalls;
use crate::sim::cfs::Cfs;
use crate::sim::eevdf::Eevdf;
use crate::sim::fair::FairClass;
use crate::sim::host_cpus::{FairModel, HostCpus};
use crate::sim::rng::Rng;
use crate::sim::sched_tracepoints::{PrevState, SchedEvent};
use crate::sim::time::Ns;

/// A schedulable task (an fio job's index, then any kernel threads).
pub use crate::sim::task::TaskId;

/// A task that has held its CPU this long while others wait is preempted
/// at the end of its burst: `sysctl_sched_latency` (6 ms) shared by two
/// runnable tasks, the slice of CFS (6.1) on a 1-CPU host (simplified: one
/// slice whatever the number of tasks and CPUs; wake-up preemption only
/// with `wakeup_preempt`, [`Cpus::wake`]).
pub const SLICE_NS: Ns = 3_000_000;

/// One CPU.
#[derive(Clone, Copy, Debug, Default)]
struct Cpu {
    /// The task holding it.
    task: Option<TaskId>,
    /// Its interrupt work (hardirq + softirq) is busy until then.
    irq_busy_until: Ns,
    /// Its task must give it up at the end of its current burst: a woken
    /// kernel thread preempts it (`resched_curr`, `wakeup_preempt`).
    resched: bool,
    /// Interrupt time it has done since the start (taken from whatever task
    /// held it then).
    stolen_ns: Ns,
    /// The task whose waker's work ([`Cpus::charge_waker`]) it does until
    /// `waker_until`: the fair class charges that time to that task, not
    /// to one switched in meanwhile.
    waker: Option<TaskId>,
    waker_until: Ns,
}

/// The CPU side of a task.
#[derive(Clone, Copy, Debug, Default)]
struct TaskCpu {
    /// The CPU it holds.
    on: Option<u32>,
    /// The CPU it ran on last (where its I/O completions are taken).
    last: u32,
    /// Waiting in the run queue.
    queued: bool,
    /// CPU work it must do once it has a CPU (the rest of the call that
    /// woke it: a reap, the end of a submit).
    pending_ns: Ns,
    /// The CPU's stolen counter when the task last looked.
    stolen_mark: Ns,
    /// When it got its CPU, what it paid to get it, and what interrupts
    /// took from it since: its own time is the difference.
    got_at: Ns,
    wake_paid_ns: Ns,
    stolen_since_got_ns: Ns,
    /// Its current burst ends then (when it holds a CPU).
    until: Ns,
    /// CPU time of its own bursts (the fio report's sys time).
    sys_ns: Ns,
    /// Times it blocked (voluntary context switches).
    ctx: u64,
    /// A kernel thread ([`Cpus::add_task`]).
    kthread: bool,
    /// Wake-ups of sleeping tasks it made from its own code
    /// ([`Cpus::wakes_made`]).
    wakes_made: u64,
}

/// What became of a task that was woken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Woken {
    /// It has a CPU and runs until then.
    Runs(Ns),
    /// It waits in the run queue.
    Queued,
}

/// What a woken task slept on, for its waker's cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SleptOn {
    /// A request tag (`blk_mq_get_tag`'s `io_schedule`): its waker walks
    /// the sbitmap wait queue (`HostCpus::tag_waker_ns`).
    Tag,
    /// Anything else (a kworker's work, fio's completions, a timer).
    Other,
}

/// The host's CPUs and run queue.
#[derive(Clone, Debug)]
pub struct Cpus {
    cfg: HostCpus,
    cpus: Vec<Cpu>,
    tasks: Vec<TaskCpu>,
    runq: VecDeque<TaskId>,
    rng: Rng,
    /// Background work's stalls (`sim::background`).
    bg: Stalls,
    /// The fair class with virtual runtimes (`sched.fair = eevdf` or
    /// `cfs-vruntime`); None: FIFO with CFS's slice.
    fair: Option<Box<dyn FairClass>>,
    /// The scheduler's decisions since the machine last took them, for
    /// its tracepoints (sim::sched_tracepoints); None: not traced.
    log: Option<Vec<(Ns, SchedEvent)>>,
    /// The task whose code the machine is running (its event: a burst's
    /// end), which pays `waker_ns` for the wake-ups it makes; None in
    /// interrupt and timer context (their costs hold their wake-ups).
    context: Option<TaskId>,
}

impl Cpus {
    /// `cfg.nr` CPUs for `nr_tasks` tasks; tails are drawn from the stream
    /// "host/cpus" of `seed` (no other stream is touched).
    pub fn new(cfg: HostCpus, nr_tasks: usize, seed: u64) -> Cpus {
        Cpus {
            cfg,
            cpus: vec![Cpu::default(); cfg.nr as usize],
            tasks: vec![TaskCpu::default(); nr_tasks],
            runq: VecDeque::new(),
            rng: Rng::stream(seed, "host/cpus"),
            bg: Stalls::new(cfg.background, cfg.nr, seed),
            fair: match cfg.fair {
                _ if cfg.nr == 0 => None,
                FairModel::Fifo => None,
                FairModel::Eevdf => Some(Box::new(Eevdf::new(nr_tasks, cfg.tick_ns, cfg.features))),
                FairModel::CfsVruntime => {
                    Some(Box::new(Cfs::new(nr_tasks, cfg.tick_ns, cfg.features)))
                }
            },
            log: None,
            context: None,
        }
    }

    /// The machine now runs task `t`'s code (None: an interrupt, a timer,
    /// or no task): the wake-ups made meanwhile are charged to it.
    pub fn set_context(&mut self, t: Option<TaskId>) {
        self.context = t;
    }

    /// How many sleeping tasks task `t` has woken from its own code so far
    /// (what [`Cpus::charge_waker`] charges when `waker_ns` > 0): a submit
    /// call compares it before and after its `submit_bio` to know whether
    /// its dispatch woke anyone (`HostCpus::submit_wake_ns`). 0 for a task
    /// the host does not know (the free host has none).
    pub fn wakes_made(&self, t: TaskId) -> u64 {
        self.tasks.get(t as usize).map_or(0, |tk| tk.wakes_made)
    }

    /// The waker's side of a wake-up of a sleeping task `woken` at `now`
    /// (`try_to_wake_up` in the waker's context: `select_task_rq`,
    /// `ttwu_queue` → `ttwu_do_activate` → `enqueue_task`, and
    /// `wakeup_preempt`/`check_preempt_curr`, kernel/sched/core.c): the
    /// task in [`Cpus::set_context`], if it holds a CPU, spends `waker_ns`
    /// there. The kernel does it with the run queue's lock held and
    /// interrupts off, so it is charged as the CPU's interrupt work is
    /// (it delays the waker's burst, and a task switched in at `now`
    /// starts after it; an interrupt arriving meanwhile waits), but
    /// counted in the waker's own CPU time. Two costs, by what the woken
    /// task slept on ([`SleptOn`]): `tag_waker_ns` for a tag waiter (the
    /// sbitmap wait queue's walk), `waker_ns` for any other. Simplified:
    /// one cost per kind, however many entries the walk passes.
    fn charge_waker(&mut self, woken: TaskId, now: Ns, slept_on: SleptOn) {
        let cost = match slept_on {
            SleptOn::Other => self.cfg.waker_ns,
            SleptOn::Tag => self.cfg.tag_waker_cost(),
        };
        if cost == 0 {
            return;
        }
        let Some(w) = self.context.filter(|&w| w != woken) else {
            return;
        };
        let Some(c) = self.tasks[w as usize].on else {
            return;
        };
        let until = self.irq_work(c, now, cost);
        // its own time: `release` and `usage` take the stolen part off again
        self.tasks[w as usize].sys_ns += cost;
        let cpu = &mut self.cpus[c as usize];
        cpu.waker = Some(w);
        cpu.waker_until = until;
    }

    /// Until when the fair class charges task `t`, leaving CPU `c` at
    /// `now`: the end of the waker's work it still has to do there (the
    /// kernel's `try_to_wake_up` runs before the waker's `schedule()`).
    fn charged_until(&self, c: u32, t: TaskId, now: Ns) -> Ns {
        let cpu = &self.cpus[c as usize];
        if cpu.waker == Some(t) {
            now.max(cpu.waker_until)
        } else {
            now
        }
    }

    /// Log the scheduler's decisions for its tracepoints from now on.
    pub fn trace_sched(&mut self) {
        self.log = Some(Vec::new());
    }

    /// Whether the decisions are logged.
    #[inline]
    pub fn sched_traced(&self) -> bool {
        self.log.is_some()
    }

    /// The decisions logged since the last call, in order.
    pub fn take_sched_log(&mut self) -> Vec<(Ns, SchedEvent)> {
        self.log.as_mut().map(std::mem::take).unwrap_or_default()
    }

    fn log(&mut self, now: Ns, ev: SchedEvent) {
        if let Some(l) = self.log.as_mut() {
            l.push((now, ev));
        }
    }

    /// How task `t` leaves its CPU when it blocks: a kernel thread goes
    /// idle (`I`), an fio task sleeps (`S`).
    fn sleep_state(&self, t: TaskId) -> PrevState {
        if self.tasks[t as usize].kthread {
            PrevState::Idle
        } else {
            PrevState::Sleeping
        }
    }

    /// The background stalls CPU `c` met up to `now`, counted against its
    /// state until now (call before the state changes): a busy CPU's are
    /// taken from its task as interrupt time is.
    fn background_to(&mut self, c: u32, now: Ns) {
        if self.bg.enabled() {
            let busy = self.cpus[c as usize].task.is_some();
            self.cpus[c as usize].stolen_ns += self.bg.take(c, now, busy);
        }
    }

    /// Whether tasks contend for CPUs (false: the free host).
    #[inline]
    pub fn enabled(&self) -> bool {
        !self.cpus.is_empty()
    }

    /// Whether task `t` holds a CPU that a task woken meanwhile has marked
    /// for rescheduling (`need_resched()` in `t`'s context:
    /// `resched_curr` through `wakeup_preempt`, taken at the end of `t`'s
    /// burst).
    pub fn must_resched(&self, t: TaskId) -> bool {
        self.tasks
            .get(t as usize)
            .and_then(|tk| tk.on)
            .is_some_and(|c| self.cpus[c as usize].resched)
    }

    /// A cost with its exponential tail.
    fn draw(&mut self, base: Ns, tail: Ns) -> Ns {
        if tail == 0 {
            return base;
        }
        base + self.rng.exp(tail as f64) as Ns
    }

    /// Give CPU `c` to task `t` at `now` (`prev` left it: None, the idle
    /// task); returns when its first burst (the wake-up, then its pending
    /// work) ends. Work starts after any interrupt work the CPU is busy
    /// with.
    fn assign(&mut self, c: u32, t: TaskId, now: Ns, prev: Option<(TaskId, PrevState)>) -> Ns {
        self.log(
            now,
            SchedEvent::Switch {
                cpu: c,
                prev,
                next: Some(t),
            },
        );
        self.background_to(c, now);
        let wake = self.draw(self.cfg.wake_ns, self.cfg.wake_tail_ns);
        let cpu = &mut self.cpus[c as usize];
        cpu.task = Some(t);
        cpu.resched = false;
        let start = now.max(cpu.irq_busy_until);
        let stolen = cpu.stolen_ns;
        let tk = &mut self.tasks[t as usize];
        tk.on = Some(c);
        tk.last = c;
        tk.queued = false;
        tk.stolen_mark = stolen;
        tk.got_at = now;
        // waiting for the interrupt in progress is not the task's time either
        tk.wake_paid_ns = wake + (start - now);
        tk.stolen_since_got_ns = 0;
        tk.until = start + wake + std::mem::take(&mut tk.pending_ns);
        let until = tk.until;
        let cpu = &self.cpus[c as usize];
        // the waker's work left by the previous task is not this one's
        let from = if cpu.waker.is_some_and(|w| w != t) {
            now.max(cpu.waker_until)
        } else {
            now
        };
        if let Some(f) = self.fair.as_deref_mut() {
            f.set_next(t, from);
        }
        until
    }

    /// Task `t` becomes runnable at `now` (`try_to_wake_up`) with `burst_ns`
    /// of work to do once it runs: it takes an idle CPU, its last one if
    /// idle, or queues.
    ///
    /// With `wakeup_preempt`, a kernel thread that finds no idle CPU
    /// preempts an fio task: mirrors CFS's `check_preempt_wakeup`
    /// (kernel/sched/fair.c; `check_preempt_wakeup_fair` under EEVDF from
    /// 6.6) deciding for the woken task and `resched_curr` marking the CPU.
    /// The decision is simplified to "a kernel thread always wins": a loop
    /// worker uses a small part of the CPU the fio tasks use, so at each
    /// wake-up `place_entity` gives it the queue's `min_vruntime` less half
    /// of `sched_latency` (3 ms on one CPU), more than the 1 ms wake-up
    /// granularity ahead of the running task. The woken thread goes to the
    /// front of the run queue and the CPU (the thread's last one if an fio
    /// task holds it, else the lowest numbered held by one) is taken from
    /// its task at the end of that task's current burst: the next
    /// preemption point of a PREEMPT_VOLUNTARY kernel in the submit path is
    /// the return to user space (`exit_to_user_mode_loop`), not the wake-up
    /// itself (simplified: no `cond_resched` inside the call). A woken fio
    /// task never preempts (its vruntime is not far behind).
    pub fn wake(&mut self, t: TaskId, now: Ns, burst_ns: Ns) -> Woken {
        self.wake_from(t, now, burst_ns, SleptOn::Other)
    }

    /// [`Cpus::wake`] of a task that slept on `slept_on`, which decides
    /// what its waker pays ([`Cpus::charge_waker`]).
    pub fn wake_from(&mut self, t: TaskId, now: Ns, burst_ns: Ns, slept_on: SleptOn) -> Woken {
        let tk = &mut self.tasks[t as usize];
        if tk.on.is_some() {
            // already running (a completion during its own burst): its
            // current burst goes on; the work is done inside it
            return Woken::Runs(tk.until);
        }
        tk.pending_ns += burst_ns;
        if tk.queued {
            return Woken::Queued;
        }
        let last = tk.last;
        // it was asleep: the waker pays its side of the wake-up
        if let Some(w) = self.context.filter(|&w| w != t) {
            self.tasks[w as usize].wakes_made += 1;
        }
        self.charge_waker(t, now, slept_on);
        if let Some(f) = self.fair.as_deref_mut() {
            f.enqueue(t, now);
        }
        let idle = if self.cpus[last as usize].task.is_none() {
            Some(last)
        } else {
            (0..self.cpus.len() as u32).find(|&c| self.cpus[c as usize].task.is_none())
        };
        self.log(
            now,
            SchedEvent::Wakeup {
                task: t,
                target_cpu: idle.unwrap_or(last),
            },
        );
        match idle {
            Some(c) => Woken::Runs(self.assign(c, t, now, None)),
            None if self.fair.is_some() => {
                self.tasks[t as usize].queued = true;
                self.runq.push_back(t);
                self.eevdf_wakeup_preempt(t, now);
                Woken::Queued
            }
            None => {
                self.tasks[t as usize].queued = true;
                match self.preempt_target(t) {
                    Some(c) => {
                        self.cpus[c as usize].resched = true;
                        self.runq.push_front(t);
                    }
                    None => self.runq.push_back(t),
                }
                Woken::Queued
            }
        }
    }

    /// Mirrors `check_preempt_wakeup_fair` under EEVDF (with
    /// `wakeup_preempt`): woken task `t`, queued, marks its last CPU (or the
    /// lowest numbered one) for rescheduling when `pick_eevdf` would run it
    /// there now, or when the running task's request is used up.
    fn eevdf_wakeup_preempt(&mut self, t: TaskId, now: Ns) {
        if !self.cfg.wakeup_preempt {
            return;
        }
        let last = self.tasks[t as usize].last;
        let c = if self.cpus[last as usize].task.is_some() {
            last
        } else {
            match (0..self.cpus.len() as u32).find(|&c| self.cpus[c as usize].task.is_some()) {
                Some(c) => c,
                None => return,
            }
        };
        let cpu = self.cpus[c as usize];
        let (Some(curr), false) = (cpu.task, cpu.resched) else {
            return;
        };
        let f = self.fair.as_deref_mut().expect("a fair class");
        if f.wakeup_preempts(t, curr, now) {
            self.cpus[c as usize].resched = true;
        }
    }

    /// The CPU a woken task `t` preempts (`wakeup_preempt`): only a kernel
    /// thread preempts, and only an fio task; the thread's last CPU first.
    fn preempt_target(&self, t: TaskId) -> Option<u32> {
        if !self.cfg.wakeup_preempt || !self.tasks[t as usize].kthread {
            return None;
        }
        let fio_on = |c: u32| {
            self.cpus[c as usize]
                .task
                .is_some_and(|h| !self.tasks[h as usize].kthread)
        };
        let last = self.tasks[t as usize].last;
        if fio_on(last) {
            return Some(last);
        }
        (0..self.cpus.len() as u32).find(|&c| fio_on(c))
    }

    /// The planned end of task `t`'s burst is `now`: if interrupts took time
    /// from its CPU since it last looked, the burst ends that much later
    /// (returned); None when it is really over.
    pub fn burst_end(&mut self, t: TaskId, now: Ns) -> Option<Ns> {
        let c = self.tasks[t as usize].on?;
        self.background_to(c, now);
        let tk = &mut self.tasks[t as usize];
        let stolen = self.cpus[c as usize].stolen_ns;
        let extra = stolen - tk.stolen_mark;
        if extra == 0 {
            return None;
        }
        tk.stolen_mark = stolen;
        tk.stolen_since_got_ns += extra;
        tk.until = now + extra;
        Some(tk.until)
    }

    /// At the end of a burst of task `t`: when it has held its CPU for a
    /// slice and others wait, or a woken kernel thread marked its CPU
    /// (`wakeup_preempt`), it is preempted (`scheduler_tick` or
    /// `check_preempt_wakeup` → `resched_curr`, taken at the burst's end):
    /// it goes to the back of the run queue and the first waiting task gets
    /// the CPU (returned with the end of that task's first burst).
    pub fn preempt(&mut self, t: TaskId, now: Ns) -> Option<(TaskId, Ns)> {
        if self.runq.is_empty() {
            return None;
        }
        if self.fair.is_some() {
            return self.eevdf_preempt(t, now);
        }
        let tk = &self.tasks[t as usize];
        let c = tk.on?;
        if now - tk.got_at < SLICE_NS && !self.cpus[c as usize].resched {
            return None;
        }
        let (next, end) = self
            .switch_out(t, now, PrevState::Preempted)
            .expect("others wait");
        self.tasks[t as usize].queued = true;
        self.runq.push_back(t);
        Some((next, end))
    }

    /// [`Cpus::preempt`] under EEVDF: task `t`'s CPU time is charged
    /// (`update_curr`: a used-up request reschedules it); if it must
    /// reschedule and `pick_eevdf` chooses another task, `t` goes back to
    /// the queue and that one gets the CPU.
    fn eevdf_preempt(&mut self, t: TaskId, now: Ns) -> Option<(TaskId, Ns)> {
        let c = self.tasks[t as usize].on?;
        let upto = self.charged_until(c, t, now);
        let f = self.fair.as_deref_mut().expect("a fair class");
        let used_up = f.update_curr(t, upto);
        if !used_up && !self.cpus[c as usize].resched {
            return None;
        }
        self.cpus[c as usize].resched = false;
        let next = f.pick_next(Some(t))?;
        f.put_prev(t);
        self.runq.retain(|&q| q != next);
        self.release(t, now);
        self.tasks[t as usize].queued = true;
        self.runq.push_back(t);
        let end = self.assign(c, next, now, Some((t, PrevState::Preempted)));
        Some((next, end))
    }

    /// A kernel thread (a loop worker: nice 0, `weight` 1024; a kblockd
    /// kworker: nice -20, 88761) gets the next task number, after the fio
    /// jobs and earlier kernel threads; it starts blocked.
    pub fn add_task(&mut self, weight: u64) -> TaskId {
        self.tasks.push(TaskCpu {
            kthread: true,
            ..TaskCpu::default()
        });
        if let Some(f) = self.fair.as_deref_mut() {
            f.add(weight);
        }
        (self.tasks.len() - 1) as TaskId
    }

    /// Task `t`, holding its CPU, goes on with `ns` more of work at `now`
    /// (a kernel thread taking the next item of its queue without
    /// blocking); returns when that burst ends.
    pub fn continue_burst(&mut self, t: TaskId, now: Ns, ns: Ns) -> Ns {
        let tk = &mut self.tasks[t as usize];
        debug_assert!(tk.on.is_some(), "only a task holding a CPU goes on");
        tk.until = now + ns;
        tk.until
    }

    /// Whether tasks wait for a CPU.
    pub fn waiting(&self) -> bool {
        !self.runq.is_empty()
    }

    /// Whether task `t` holds a CPU.
    pub fn on_cpu(&self, t: TaskId) -> bool {
        self.tasks[t as usize].on.is_some()
    }

    /// Whether task `t` sleeps: neither holds a CPU nor waits for one (a
    /// wake-up of it is a real one, not `ttwu_runnable`).
    pub fn asleep(&self, t: TaskId) -> bool {
        let tk = &self.tasks[t as usize];
        tk.on.is_none() && !tk.queued
    }

    /// Task `t` blocks at `now` (or ends, or is preempted): its CPU goes to
    /// the first task of the run queue, returned with the end of that task's
    /// first burst.
    pub fn block(&mut self, t: TaskId, now: Ns) -> Option<(TaskId, Ns)> {
        let state = self.sleep_state(t);
        self.switch_out(t, now, state)
    }

    /// [`Cpus::block`], `t` leaving as `state` says.
    fn switch_out(&mut self, t: TaskId, now: Ns, state: PrevState) -> Option<(TaskId, Ns)> {
        if let Some(c) = self.tasks[t as usize].on {
            let upto = self.charged_until(c, t, now);
            if let Some(f) = self.fair.as_deref_mut() {
                f.update_curr(t, upto);
                f.dequeue_sleep(t);
            }
        }
        let c = self.release(t, now)?;
        let next = match self.fair.as_deref_mut() {
            None => self.runq.pop_front(),
            Some(f) => {
                let next = f.pick_next(None);
                if let Some(n) = next {
                    self.runq.retain(|&q| q != n);
                }
                next
            }
        };
        let Some(next) = next else {
            self.log(
                now,
                SchedEvent::Switch {
                    cpu: c,
                    prev: Some((t, state)),
                    next: None,
                },
            );
            return None;
        };
        let end = self.assign(c, next, now, Some((t, state)));
        Some((next, end))
    }

    /// Task `t` gives its CPU up at `now` (its own time and a context
    /// switch are counted); returns the CPU.
    fn release(&mut self, t: TaskId, now: Ns) -> Option<u32> {
        let c = self.tasks[t as usize].on?;
        self.background_to(c, now);
        let tk = &mut self.tasks[t as usize];
        tk.on = None;
        let held = now - tk.got_at;
        tk.sys_ns += held.saturating_sub(tk.wake_paid_ns + tk.stolen_since_got_ns);
        tk.ctx += 1;
        self.cpus[c as usize].task = None;
        Some(c)
    }

    /// Interrupt work of `cost_ns` on CPU `c` arriving at `now`: it runs when
    /// the CPU's earlier interrupt work is done, before the CPU's task;
    /// returns when it ends.
    fn irq_work(&mut self, c: u32, now: Ns, cost_ns: Ns) -> Ns {
        let cpu = &mut self.cpus[c as usize];
        let start = now.max(cpu.irq_busy_until);
        cpu.irq_busy_until = start + cost_ns;
        cpu.stolen_ns += cost_ns;
        cpu.irq_busy_until
    }

    /// A request's completion interrupt on CPU `c` at `now`: when its
    /// completion path (tag free, rq_qos done, `bio_endio`, the wake-up) runs.
    pub fn complete_irq(&mut self, c: u32, now: Ns) -> Ns {
        let cost = self.draw(self.cfg.irq_ns, self.cfg.irq_tail_ns);
        self.irq_work(c, now, cost)
    }

    /// A kernel timer's softirq at `now`, taken on CPU 0 (simplified: the
    /// kernel runs a timer on the CPU that armed it).
    pub fn timer_irq(&mut self, now: Ns) -> Ns {
        let cost = self.draw(self.cfg.timer_ns, self.cfg.timer_tail_ns);
        self.irq_work(0, now, cost)
    }

    /// Where an interrupt for task `t`'s I/O is taken: the CPU it last ran
    /// on (the submitting CPU, as blk-mq completes on the submitter's CPU
    /// with `QUEUE_FLAG_SAME_COMP`); CPU 0 for the kernel's own I/O.
    pub fn irq_cpu(&self, t: Option<TaskId>) -> u32 {
        t.map_or(0, |t| self.tasks[t as usize].last)
    }

    /// Task `t`'s CPU figures at `now`: own CPU time (ns) and context switches.
    pub fn usage(&self, t: TaskId, now: Ns) -> (Ns, u64) {
        let tk = &self.tasks[t as usize];
        let mut sys = tk.sys_ns;
        if tk.on.is_some() {
            let held = now.saturating_sub(tk.got_at);
            sys += held.saturating_sub(tk.wake_paid_ns + tk.stolen_since_got_ns);
        }
        (sys, tk.ctx)
    }
}

#[cfg(test)]
#[path = "cpus_tests.rs"]
mod tests;
