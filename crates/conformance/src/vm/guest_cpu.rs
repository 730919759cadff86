//! How the guest's one vCPU is shared while a case runs (bfq cases): what
//! the case script captures per repetition and the figures the host reads
//! from it (reported under the case, not judged).
//!
//! Captured, per repetition R:
//! - `cpu.rR`: the `cpu` line of /proc/stat, every group's `cpu.stat`
//!   (cgroup v2's `usage_usec`, the tasks' exact `sum_exec_runtime`) and
//!   every task's /proc/PID/stat (utime/stime, tick-sampled) when the jobs
//!   are released (`snap 0`) and after they ended (`snap 1`), with the pids
//!   in each group (`procs`);
//! - `sched.rR.trace`: tracefs text of `sched_switch`, `sched_wakeup`,
//!   `workqueue_execute_start`/`_end` and `block_rq_issue` over a short
//!   window in the middle of the run ([`WINDOW_US`], in a buffer of
//!   [`BUFFER_KB`] that stops when full: bounded whatever the rate).
//!
//! From the trace, with one CPU, whoever a `sched_switch` switched in holds
//! the CPU until the next one: fio's time (per group), the loop worker's
//! (a kworker while it runs `loop_workfn` / `loop_rootcg_workfn`, the work
//! function of drivers/block/loop.c since 5.13), other kernel threads, idle
//! (pid 0), each per request issued (`block_rq_issue` on the case's
//! device); and for every wake-up of the loop worker by a fio task whether
//! the very next switch took the CPU from that fio task while it was still
//! runnable (`prev_state=R`): wake-up preemption, CFS's
//! `check_preempt_wakeup` (EEVDF's `check_preempt_wakeup_fair` from 6.6)
//! deciding for the woken worker inside fio's `io_submit`. tracefs prints
//! microseconds: per-event times are µs-quantised, their means over
//! thousands of events are not biased by it.

use std::collections::{BTreeMap, BTreeSet};

/// The trace window's length in the guest (virtual time).
pub const WINDOW_US: u32 = 50_000;
/// When the window opens after the jobs are released (virtual seconds).
const WINDOW_AFTER_S: u32 = 2;
/// The per-CPU trace buffer (KiB); with `overwrite` off the kernel drops
/// events once it is full, so a fast guest gives a shorter window.
pub const BUFFER_KB: u32 = 4096;

const EVENTS: [&str; 5] = [
    "sched/sched_switch",
    "sched/sched_wakeup",
    "workqueue/workqueue_execute_start",
    "workqueue/workqueue_execute_end",
    "block/block_rq_issue",
];

/// The file of repetition `rep`'s CPU snapshots.
pub fn cpu_file(rep: u32) -> String {
    format!("cpu.r{rep}")
}

/// The file of repetition `rep`'s scheduler trace.
pub fn trace_file(rep: u32) -> String {
    format!("sched.r{rep}.trace")
}

/// Shell: the snapshot `which` (0 or 1) appended to `$BLKLAB_OUT/cpu.rR`.
/// `groups` are (tag, shell directory) pairs.
pub fn snapshot(which: u32, rep: u32, groups: &[(String, String)]) -> String {
    let mut s = format!("{{ echo \"stat {which} $(head -n1 /proc/stat)\"\n");
    for (tag, dir) in groups {
        s += &format!("  echo \"cgcpu {which} {tag} $(tr '\\n' ' ' < {dir}/cpu.stat)\"\n");
        if which == 0 {
            s += &format!("  echo \"procs {tag} $(tr '\\n' ' ' < {dir}/cgroup.procs)\"\n");
        }
    }
    s += &format!(
        "  for _p in /proc/[0-9]*; do read -r _l < \"$_p/stat\" && echo \"task {which} $_l\"; done 2>/dev/null\n  true; }} >> \"$BLKLAB_OUT/{}\"\n",
        cpu_file(rep)
    );
    s
}

/// Shell: prepare the trace (fresh, bounded, events on) and open its window
/// in the background (`$tracer`), `WINDOW_AFTER_S` after this point.
pub fn trace_start() -> String {
    let mut s = String::from(
        "T=/sys/kernel/tracing\n{ echo 0 > $T/tracing_on && echo BUFFER > $T/buffer_size_kb && echo 0 > $T/options/overwrite && echo > $T/trace; } || echo 'tracefs not usable' >&2\n",
    )
    .replace("BUFFER", &BUFFER_KB.to_string());
    for e in EVENTS {
        s += &format!(
            "echo 1 > $T/events/{e}/enable 2>/dev/null || echo \"no tracepoint {e}\" >&2\n"
        );
    }
    s += &format!(
        "( sleep {WINDOW_AFTER_S}; echo 1 > $T/tracing_on; usleep {WINDOW_US}; echo 0 > $T/tracing_on ) &\ntracer=$!\n"
    );
    s
}

/// Shell: close the window and leave the trace in `sched.rR.trace`.
pub fn trace_stop(rep: u32) -> String {
    let mut s = String::from("wait \"$tracer\" || true\necho 0 > $T/tracing_on\n");
    for e in EVENTS {
        s += &format!("echo 0 > $T/events/{e}/enable 2>/dev/null || true\n");
    }
    s += &format!(
        "grep -v '^#' $T/trace > \"$BLKLAB_OUT/{}\" || true\necho > $T/trace\n",
        trace_file(rep)
    );
    s
}

/// One tracefs line.
#[derive(Debug, Clone, PartialEq)]
pub struct Event<'a> {
    /// The task the event ran in.
    pub comm: &'a str,
    pub pid: u32,
    pub ts_ns: u64,
    pub name: &'a str,
    pub fields: &'a str,
}

/// Parse a tracefs text line (`COMM-PID [CPU] FLAGS SECS.USEC: EVENT: FIELDS`).
pub fn parse_line(l: &str) -> Result<Event<'_>, String> {
    let open = l.find(" [").ok_or("no \" [CPU]\"")?;
    let who = l[..open].trim();
    let (comm, pid) = who
        .rsplit_once('-')
        .and_then(|(c, p)| Some((c, p.parse().ok()?)))
        .ok_or_else(|| format!("no pid in \"{who}\""))?;
    let rest = &l[open + 2..];
    let close = rest.find("] ").ok_or("no \"]\" after the CPU")?;
    let rest = &rest[close + 2..];
    // FLAGS (absent with some options), then the timestamp ending in ':'
    let colon = rest.find(": ").ok_or("no timestamp")?;
    let ts = rest[..colon]
        .split_whitespace()
        .last()
        .ok_or("no timestamp")?;
    let (secs, frac) = ts
        .split_once('.')
        .ok_or_else(|| format!("timestamp \"{ts}\""))?;
    let bad = || format!("timestamp \"{ts}\": expected SECONDS.MICROSECONDS");
    if frac.len() != 6 {
        return Err(bad());
    }
    let ts_ns = secs.parse::<u64>().map_err(|_| bad())? * 1_000_000_000
        + frac.parse::<u64>().map_err(|_| bad())? * 1_000;
    let rest = &rest[colon + 2..];
    let (name, fields) = rest
        .split_once(": ")
        .unwrap_or((rest.trim_end_matches(':'), ""));
    Ok(Event {
        comm,
        pid,
        ts_ns,
        name,
        fields,
    })
}

/// The value of `key=` among whitespace-separated fields.
fn field<'a>(fields: &'a str, key: &str) -> Option<&'a str> {
    fields
        .split_whitespace()
        .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
}

fn num(fields: &str, key: &str) -> Result<u32, String> {
    field(fields, key)
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| format!("no {key}= in \"{fields}\""))
}

/// The work function of a `workqueue_execute_start`/`_end` event.
fn work_fn(fields: &str) -> Option<&str> {
    fields.rsplit_once("function ").map(|(_, f)| f.trim())
}

/// Whether a work function is the loop device's (`loop_workfn`,
/// `loop_rootcg_workfn`).
fn loop_work(f: &str) -> bool {
    f.starts_with("loop_") && f.contains("workfn")
}

/// Wake-ups of one kind of kernel worker by fio tasks.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Wakes {
    pub count: u64,
    /// The very next switch took the CPU from the waking fio task while it
    /// was runnable (`prev_state=R`): wake-up preemption.
    pub preempting: u64,
    /// Wake-up to switch-in (sum, ns).
    pub latency_ns: u64,
}

/// What one trace window shows. Times in ns.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Split {
    pub window_ns: u64,
    /// `block_rq_issue` events on the case's device.
    pub ios: u64,
    /// On-CPU time of each group's fio tasks (group tag order).
    pub fio_ns: BTreeMap<String, u64>,
    /// Time inside each work function, and the items run.
    pub work_ns: BTreeMap<String, u64>,
    pub work_items: BTreeMap<String, u64>,
    /// kworkers outside any work function (switching in and out).
    pub kworker_other_ns: u64,
    pub idle_ns: u64,
    pub other_ns: u64,
    /// Wake-ups of kworkers by fio tasks, by what the woken kworker ran in
    /// the window (its work functions joined with `+`).
    pub fio_wakes: BTreeMap<String, Wakes>,
    /// fio tasks switched out while runnable, and how many of those saw a
    /// loop work item end before they ran again (their request done while
    /// they were still inside the call that issued it).
    pub fio_preempted: u64,
    pub fio_preempted_done: u64,
    /// Wake-ups of fio tasks by kworkers, and how many took the CPU from
    /// the waker at once.
    pub fio_woken_by_kworker: u64,
    pub fio_preempts_kworker: u64,
}

impl Split {
    /// The CPU of the loop's work function(s).
    pub fn loop_ns(&self) -> u64 {
        self.work_ns
            .iter()
            .filter(|(f, _)| loop_work(f))
            .map(|(_, n)| n)
            .sum()
    }
}

/// The split of one trace window: `procs` maps pids to their group's tag,
/// `devno` is the case's device (`MAJ:MIN`).
pub fn split(trace: &str, procs: &BTreeMap<u32, String>, devno: &str) -> Result<Split, String> {
    let dev = devno.replace(':', ",");
    let mut ev = Vec::new();
    for (n, l) in trace.lines().enumerate() {
        if l.trim().is_empty() || l.starts_with('#') {
            continue;
        }
        ev.push(parse_line(l).map_err(|e| format!("line {}: {e}", n + 1))?);
    }
    // the kworkers and the work functions each ran
    let mut kworkers: BTreeMap<u32, BTreeSet<&str>> = BTreeMap::new();
    for e in &ev {
        if e.comm.starts_with("kworker") {
            let fns = kworkers.entry(e.pid).or_default();
            if e.name == "workqueue_execute_start" {
                fns.extend(work_fn(e.fields));
            }
        }
    }
    let kind = |pid: u32| -> String {
        match kworkers.get(&pid) {
            Some(f) if !f.is_empty() => f.iter().copied().collect::<Vec<_>>().join("+"),
            _ => "kworker".to_string(),
        }
    };
    let mut s = Split {
        window_ns: match (ev.first(), ev.last()) {
            (Some(a), Some(b)) => b.ts_ns - a.ts_ns,
            _ => 0,
        },
        ..Split::default()
    };
    for tag in procs.values() {
        s.fio_ns.entry(tag.clone()).or_insert(0);
    }
    let mut cur: Option<u32> = ev.first().map(|e| e.pid);
    let mut since = ev.first().map_or(0, |e| e.ts_ns);
    // the work function each kworker is inside
    let mut in_work: BTreeMap<u32, String> = BTreeMap::new();
    // pending wake-ups of kworkers by fio: pid -> (ts, waker, switches before)
    let mut pending: BTreeMap<u32, (u64, u32, u64)> = BTreeMap::new();
    // preempted fio tasks -> whether a loop work item ended since
    let mut preempted: BTreeMap<u32, bool> = BTreeMap::new();
    let mut switches = 0u64;
    let charge = |s: &mut Split, pid: u32, in_work: &BTreeMap<u32, String>, ns: u64| {
        if pid == 0 {
            s.idle_ns += ns;
        } else if let Some(tag) = procs.get(&pid) {
            *s.fio_ns.entry(tag.clone()).or_insert(0) += ns;
        } else if let Some(f) = in_work.get(&pid) {
            *s.work_ns.entry(f.clone()).or_insert(0) += ns;
        } else if kworkers.contains_key(&pid) {
            s.kworker_other_ns += ns;
        } else {
            s.other_ns += ns;
        }
    };
    for e in &ev {
        match e.name {
            "sched_switch" => {
                let prev = num(e.fields, "prev_pid")?;
                let next = num(e.fields, "next_pid")?;
                let runnable = field(e.fields, "prev_state").is_some_and(|v| v.starts_with('R'));
                charge(&mut s, cur.unwrap_or(prev), &in_work, e.ts_ns - since);
                if let Some((ts, waker, seen)) = pending.remove(&next) {
                    let w = s.fio_wakes.entry(kind(next)).or_default();
                    w.latency_ns += e.ts_ns - ts;
                    if seen == switches && prev == waker && runnable {
                        w.preempting += 1;
                    }
                }
                if runnable && procs.contains_key(&prev) {
                    preempted.insert(prev, false);
                }
                if let Some(done) = preempted.remove(&next) {
                    s.fio_preempted += 1;
                    s.fio_preempted_done += done as u64;
                }
                switches += 1;
                cur = Some(next);
                since = e.ts_ns;
            }
            "sched_wakeup" => {
                let target = num(e.fields, "pid")?;
                if kworkers.contains_key(&target) && procs.contains_key(&e.pid) {
                    s.fio_wakes.entry(kind(target)).or_default().count += 1;
                    pending.insert(target, (e.ts_ns, e.pid, switches));
                } else if procs.contains_key(&target) && kworkers.contains_key(&e.pid) {
                    s.fio_woken_by_kworker += 1;
                }
            }
            "workqueue_execute_start" | "workqueue_execute_end"
                if kworkers.contains_key(&e.pid) =>
            {
                charge(&mut s, e.pid, &in_work, e.ts_ns - since);
                since = e.ts_ns;
                let f = work_fn(e.fields).unwrap_or("?");
                if e.name == "workqueue_execute_start" {
                    *s.work_items.entry(f.to_string()).or_insert(0) += 1;
                    in_work.insert(e.pid, f.to_string());
                } else {
                    in_work.remove(&e.pid);
                    if loop_work(f) {
                        preempted.values_mut().for_each(|d| *d = true);
                    }
                }
            }
            "block_rq_issue" => {
                if e.fields.split_whitespace().next() == Some(dev.as_str()) {
                    s.ios += 1;
                }
            }
            _ => {}
        }
    }
    // a switch out of a kworker that preempted fio's waker is the other way
    // round: count fio wake-ups that took the CPU from the kworker at once
    let mut last_wake: Option<(u32, u32)> = None;
    for e in &ev {
        match e.name {
            "sched_wakeup" => {
                let target = num(e.fields, "pid")?;
                last_wake = (procs.contains_key(&target) && kworkers.contains_key(&e.pid))
                    .then_some((e.pid, target));
            }
            "sched_switch" => {
                if let Some((waker, woken)) = last_wake.take() {
                    let runnable =
                        field(e.fields, "prev_state").is_some_and(|v| v.starts_with('R'));
                    if runnable
                        && num(e.fields, "prev_pid")? == waker
                        && num(e.fields, "next_pid")? == woken
                    {
                        s.fio_preempts_kworker += 1;
                    }
                }
            }
            _ => {}
        }
    }
    if let Some(last) = ev.last() {
        charge(&mut s, cur.unwrap_or(0), &in_work, last.ts_ns - since);
    }
    Ok(s)
}

/// Two snapshots of the `cpu.rR` file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Snapshots {
    /// /proc/stat's cpu line (USER_HZ ticks) at 0 and 1.
    pub stat: [Vec<u64>; 2],
    /// Each group's cpu.stat `usage_usec` at 0 and 1.
    pub cg_usage_us: BTreeMap<String, [u64; 2]>,
    /// pid -> group tag.
    pub procs: BTreeMap<u32, String>,
    /// pid -> (comm, utime + stime ticks at 0 and 1).
    pub tasks: BTreeMap<u32, (String, [Option<u64>; 2])>,
}

/// Read a `cpu.rR` file.
pub fn parse_snapshots(text: &str) -> Result<Snapshots, String> {
    let mut s = Snapshots::default();
    let which = |w: Option<&str>, n: usize| -> Result<usize, String> {
        match w {
            Some("0") => Ok(0),
            Some("1") => Ok(1),
            _ => Err(format!("line {n}: expected snapshot 0 or 1")),
        }
    };
    for (i, l) in text.lines().enumerate() {
        let n = i + 1;
        let mut w = l.split_whitespace();
        match w.next() {
            Some("stat") => {
                let k = which(w.next(), n)?;
                if w.next() != Some("cpu") {
                    return Err(format!("line {n}: expected /proc/stat's cpu line"));
                }
                s.stat[k] = w
                    .map(|v| {
                        v.parse::<u64>()
                            .map_err(|_| format!("line {n}: \"{v}\": expected ticks"))
                    })
                    .collect::<Result<_, _>>()?;
            }
            Some("cgcpu") => {
                let k = which(w.next(), n)?;
                let tag = w.next().ok_or_else(|| format!("line {n}: no group"))?;
                let mut rest = w;
                while let Some(key) = rest.next() {
                    if key == "usage_usec" {
                        let v = rest
                            .next()
                            .and_then(|v| v.parse().ok())
                            .ok_or_else(|| format!("line {n}: usage_usec without a number"))?;
                        s.cg_usage_us.entry(tag.to_string()).or_default()[k] = v;
                    }
                }
            }
            Some("procs") => {
                let tag = w.next().ok_or_else(|| format!("line {n}: no group"))?;
                for p in w {
                    let pid = p.parse().map_err(|_| format!("line {n}: pid \"{p}\""))?;
                    s.procs.insert(pid, tag.to_string());
                }
            }
            Some("task") => {
                let k = which(w.next(), n)?;
                let rest = l.splitn(3, ' ').nth(2).unwrap_or("");
                // PID (COMM) STATE PPID ... UTIME(14) STIME(15)
                let (head, tail) = rest
                    .rsplit_once(") ")
                    .ok_or_else(|| format!("line {n}: expected /proc/PID/stat"))?;
                let (pid, comm) = head
                    .split_once(" (")
                    .ok_or_else(|| format!("line {n}: expected PID (COMM)"))?;
                let pid: u32 = pid.trim().parse().map_err(|_| format!("line {n}: pid"))?;
                let f: Vec<&str> = tail.split_whitespace().collect();
                let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok());
                let t = ticks(11)
                    .zip(ticks(12))
                    .map(|(u, s)| u + s)
                    .ok_or_else(|| format!("line {n}: no utime/stime"))?;
                s.tasks
                    .entry(pid)
                    .or_insert_with(|| (comm.to_string(), [None; 2]))
                    .1[k] = Some(t);
            }
            None => {}
            Some(w) => return Err(format!("line {n}: unknown record \"{w}\"")),
        }
    }
    Ok(s)
}

impl Snapshots {
    /// /proc/stat's deltas as percent of the total: user (+nice), system,
    /// irq, softirq, idle (+iowait); None when a snapshot is missing.
    pub fn stat_pct(&self) -> Option<[f64; 5]> {
        let d = |i: usize| -> Option<u64> {
            Some(self.stat[1].get(i)?.saturating_sub(*self.stat[0].get(i)?))
        };
        let (u, ni, sy, id, io, irq, sirq) = (d(0)?, d(1)?, d(2)?, d(3)?, d(4)?, d(5)?, d(6)?);
        let steal = d(7).unwrap_or(0);
        let total = (u + ni + sy + id + io + irq + sirq + steal) as f64;
        if total == 0.0 {
            return None;
        }
        let p = |x: u64| 100.0 * x as f64 / total;
        Some([p(u + ni), p(sy), p(irq), p(sirq), p(id + io)])
    }

    /// Tick-sampled CPU (USER_HZ ticks) of the tasks alive at both
    /// snapshots: fio (the groups' pids), kworkers, the rest.
    pub fn task_ticks(&self) -> (u64, u64, u64) {
        let (mut fio, mut kw, mut other) = (0, 0, 0);
        for (pid, (comm, t)) in &self.tasks {
            let [Some(a), Some(b)] = *t else { continue };
            let d = b.saturating_sub(a);
            if self.procs.contains_key(pid) {
                fio += d;
            } else if comm.starts_with("kworker") {
                kw += d;
            } else {
                other += d;
            }
        }
        (fio, kw, other)
    }
}

/// Report lines for repetition `rep`: `ios_per_group` is each group's I/O
/// count from fio (tag -> I/Os), `devno` the case's device.
pub fn notes(
    rep: u32,
    cpu: Option<&str>,
    trace: Option<&str>,
    ios_per_group: &BTreeMap<String, f64>,
    devno: &str,
) -> Vec<String> {
    let mut out = Vec::new();
    let Some(cpu) = cpu else {
        out.push(format!(
            "guest CPU, run {rep}: no {} from the guest",
            cpu_file(rep)
        ));
        return out;
    };
    let snaps = match parse_snapshots(cpu) {
        Ok(s) => s,
        Err(e) => {
            out.push(format!("guest CPU, run {rep}: {}: {e}", cpu_file(rep)));
            return out;
        }
    };
    if let Some([u, sy, irq, sirq, id]) = snaps.stat_pct() {
        out.push(format!(
            "guest CPU, run {rep} (/proc/stat): user {u:.1} %, system {sy:.1} %, irq {irq:.1} %, softirq {sirq:.1} %, idle {id:.1} %"
        ));
    }
    let per_io: Vec<String> = snaps
        .cg_usage_us
        .iter()
        .filter_map(|(tag, [a, b])| {
            let ios = *ios_per_group.get(tag)?;
            (ios > 0.0).then(|| {
                format!(
                    "/{tag} {:.2} µs per I/O ({:.2} s)",
                    b.saturating_sub(*a) as f64 / ios,
                    b.saturating_sub(*a) as f64 / 1e6
                )
            })
        })
        .collect();
    if !per_io.is_empty() {
        out.push(format!(
            "guest CPU, run {rep} (cgroup cpu.stat usage of the fio tasks): {}",
            per_io.join(", ")
        ));
    }
    // fio has exited by the second snapshot: its time is cpu.stat's above
    let (_, kw, other) = snaps.task_ticks();
    out.push(format!(
        "guest CPU, run {rep} (/proc/PID/stat of the tasks alive at both snapshots, ticks of 10 ms): kworkers {kw}, other tasks {other}"
    ));
    let Some(trace) = trace else {
        out.push(format!("guest sched trace, run {rep}: none"));
        return out;
    };
    match split(trace, &snaps.procs, devno) {
        Err(e) => out.push(format!(
            "guest sched trace, run {rep}: {}: {e}",
            trace_file(rep)
        )),
        Ok(s) if s.ios == 0 => out.push(format!(
            "guest sched trace, run {rep}: no request issued in the {:.1} ms window",
            s.window_ns as f64 / 1e6
        )),
        Ok(s) => out.push(describe(rep, &s)),
    }
    out
}

/// One line for a trace window.
pub fn describe(rep: u32, s: &Split) -> String {
    let io = s.ios as f64;
    let us = |ns: u64| ns as f64 / io / 1e3;
    let pct = |a: u64, b: u64| {
        if b == 0 {
            f64::NAN
        } else {
            100.0 * a as f64 / b as f64
        }
    };
    let mut cpu: Vec<String> = s
        .fio_ns
        .iter()
        .map(|(t, ns)| format!("fio /{t} {:.2}", us(*ns)))
        .collect();
    for (f, ns) in &s.work_ns {
        cpu.push(format!(
            "{f} {:.2} ({:.2} items)",
            us(*ns),
            s.work_items.get(f).copied().unwrap_or(0) as f64 / io
        ));
    }
    cpu.push(format!(
        "kworkers outside work {:.2}",
        us(s.kworker_other_ns)
    ));
    cpu.push(format!("other tasks {:.2}", us(s.other_ns)));
    cpu.push(format!("idle {:.2}", us(s.idle_ns)));
    let wakes: Vec<String> = s
        .fio_wakes
        .iter()
        .map(|(k, w)| {
            format!(
                "{k} {} times, {:.1} % preempting fio at once, {:.1} µs to run",
                w.count,
                pct(w.preempting, w.count),
                if w.count > 0 {
                    w.latency_ns as f64 / w.count as f64 / 1e3
                } else {
                    f64::NAN
                }
            )
        })
        .collect();
    format!(
        "guest sched trace, run {rep} ({:.1} ms, {} requests): µs of CPU per request: {}; kworkers woken by fio: {}; fio preempted {} times, {:.1} % of them with a loop work item done before fio ran again; fio woken by kworkers {} times, {} preempting them",
        s.window_ns as f64 / 1e6,
        s.ios,
        cpu.join(", "),
        if wakes.is_empty() { "none".to_string() } else { wakes.join("; ") },
        s.fio_preempted,
        pct(s.fio_preempted_done, s.fio_preempted),
        s.fio_woken_by_kworker,
        s.fio_preempts_kworker,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One QD1 request of /A's fio (pid 120) whose woken loop worker (pid
    /// 40) preempts it, then one of /B's (pid 130) whose worker runs only
    /// when fio blocks, in the format of a 6.1 guest's tracefs.
    const TRACE: &str = "\
             fio-120     [000] .....   100.000000: block_rq_issue: 7,0 R 4096 () 1000 + 8 [fio]
             fio-120     [000] d..2.   100.000001: sched_wakeup: comm=kworker/u2:1 pid=40 prio=120 target_cpu=000
             fio-120     [000] d..2.   100.000003: sched_switch: prev_comm=fio prev_pid=120 prev_prio=120 prev_state=R+ ==> next_comm=kworker/u2:1 next_pid=40 next_prio=120
    kworker/u2:1-40      [000] .....   100.000004: workqueue_execute_start: work struct 00000000d1c9b5e3: function loop_workfn
    kworker/u2:1-40      [000] d..3.   100.000005: sched_wakeup: comm=fio pid=130 prio=120 target_cpu=000
    kworker/u2:1-40      [000] .....   100.000006: workqueue_execute_end: work struct 00000000d1c9b5e3: function loop_workfn
    kworker/u2:1-40      [000] d..2.   100.000007: sched_switch: prev_comm=kworker/u2:1 prev_pid=40 prev_prio=120 prev_state=I ==> next_comm=fio next_pid=130 next_prio=120
             fio-130     [000] .....   100.000010: block_rq_issue: 7,0 R 4096 () 2000 + 8 [fio]
             fio-130     [000] d..2.   100.000011: sched_wakeup: comm=kworker/u2:1 pid=40 prio=120 target_cpu=000
             fio-130     [000] d..2.   100.000014: sched_switch: prev_comm=fio prev_pid=130 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
          <idle>-0       [000] d..2.   100.000015: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=kworker/u2:1 next_pid=40 next_prio=120
    kworker/u2:1-40      [000] .....   100.000016: workqueue_execute_start: work struct 00000000d1c9b5e3: function loop_workfn
    kworker/u2:1-40      [000] .....   100.000018: workqueue_execute_end: work struct 00000000d1c9b5e3: function loop_workfn
             sh-77       [000] .....   100.000019: block_rq_issue: 8,0 R 4096 () 5 + 8 [sh]
    kworker/u2:1-40      [000] d..2.   100.000020: sched_switch: prev_comm=kworker/u2:1 prev_pid=40 prev_prio=120 prev_state=I ==> next_comm=sh next_pid=77 next_prio=120
";

    fn procs() -> BTreeMap<u32, String> {
        [(120, "A"), (130, "B")]
            .into_iter()
            .map(|(p, g)| (p, g.to_string()))
            .collect()
    }

    #[test]
    fn tracefs_lines_parse_with_their_task_time_and_fields() {
        let e = parse_line(TRACE.lines().nth(3).unwrap()).unwrap();
        assert_eq!(
            (e.pid, e.ts_ns, e.name),
            (40, 100_000_004_000, "workqueue_execute_start")
        );
        assert_eq!(e.comm, "kworker/u2:1");
        assert_eq!(work_fn(e.fields), Some("loop_workfn"));
        assert!(loop_work("loop_rootcg_workfn"));
        assert!(!loop_work("vmstat_update"));
        // a comm with a dash keeps its pid
        let e = parse_line("  kworker/0:1H-kblockd-9 [000] d..2.  1.000001: x: y=1").unwrap();
        assert_eq!((e.pid, e.fields), (9, "y=1"));
        for bad in [
            "no cpu here",
            "fio-x [000] ..... 1.000000: e: f",
            "fio-1 [000] ..... 1.00: e: f",
        ] {
            assert!(parse_line(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_window_splits_the_cpu_and_counts_the_preempting_wake_ups() {
        let s = split(TRACE, &procs(), "7:0").unwrap();
        assert_eq!(s.window_ns, 20_000);
        assert_eq!(s.ios, 2, "the other device's request is not counted");
        // /A: 0-3; /B: 7-14; inside loop_workfn: 4-6 and 16-18; the
        // kworker outside it: 3-4, 6-7, 15-16, 18-20; idle 14-15
        assert_eq!(s.fio_ns["A"], 3_000);
        assert_eq!(s.fio_ns["B"], 7_000);
        assert_eq!(s.loop_ns(), 4_000);
        assert_eq!(s.work_items["loop_workfn"], 2);
        assert_eq!(s.kworker_other_ns, 5_000);
        assert_eq!(s.idle_ns, 1_000);
        // two wake-ups of the worker by fio, the first preempting /A at once
        let w = s.fio_wakes["loop_workfn"];
        assert_eq!((w.count, w.preempting, w.latency_ns), (2, 1, 6_000));
        // /A was preempted and its request done before it ran again (it
        // does not run again in the window: not counted)
        assert_eq!((s.fio_preempted, s.fio_preempted_done), (0, 0));
        // /B woken from the worker, without preempting it
        assert_eq!((s.fio_woken_by_kworker, s.fio_preempts_kworker), (1, 0));
        let d = describe(0, &s);
        assert!(d.contains("2 requests"), "{d}");
        assert!(d.contains("loop_workfn 2.00 (1.00 items)"), "{d}");
        assert!(
            d.contains("loop_workfn 2 times, 50.0 % preempting fio at once, 3.0 µs to run"),
            "{d}"
        );
    }

    /// 30 lines of a built-6.1-hz1000 guest's trace (bfq-800-100-1j-qd32,
    /// run 1; /A's fio is pid 1135, /B's 1136): every request is
    /// dispatched by kblockd's `blk_mq_run_work_fn` (kworker/0:1H, nice
    /// -20), woken by fio and preempting it at once; kblockd wakes the loop
    /// worker, which runs when kblockd sleeps; fio runs again after.
    const GUEST: &str = include_str!("testdata/sched-6.1-hz1000-qd32.trace");

    #[test]
    fn a_captured_guest_window_shows_kblockd_preempting_fio() {
        let procs = [(1135, "A"), (1136, "B")]
            .into_iter()
            .map(|(p, g)| (p, g.to_string()))
            .collect();
        let s = split(GUEST, &procs, "7:2").unwrap();
        // computed by hand from the lines' µs timestamps
        assert_eq!((s.window_ns, s.ios), (81_000, 3));
        assert_eq!((s.fio_ns["A"], s.fio_ns["B"]), (24_000, 13_000));
        assert_eq!(s.work_ns["blk_mq_run_work_fn"], 16_000);
        assert_eq!(s.loop_ns(), 12_000);
        assert_eq!(s.kworker_other_ns, 16_000);
        assert_eq!(s.other_ns + s.idle_ns, 0);
        let w = s.fio_wakes["blk_mq_run_work_fn"];
        assert_eq!((w.count, w.preempting, w.latency_ns), (3, 3, 3_000));
        assert!(
            !s.fio_wakes.contains_key("loop_workfn"),
            "fio never wakes the loop worker"
        );
        // /A, preempted at .857190, ran again at .857205 after loop work ended
        assert_eq!((s.fio_preempted, s.fio_preempted_done), (1, 1));
    }

    #[test]
    fn snapshots_give_proc_stat_shares_cgroup_usage_and_task_ticks() {
        let cpu = "\
stat 0 cpu  100 0 200 700 0 0 0 0 0 0
cgcpu 0 A usage_usec 1000 user_usec 100 system_usec 900 nr_periods 0
procs A 120 121
cgcpu 0 B usage_usec 500 user_usec 50 system_usec 450
procs B 130
task 0 120 (fio) S 1 120 1 0 -1 4194560 0 0 0 0 10 20 0 0 20 0 1 0 5 0
task 0 40 (kworker/u2:1-loop0) I 2 0 0 0 -1 0 0 0 0 0 0 5 0 0 20 0 1 0 5 0
task 0 77 (sh) S 1 77 1 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 5 0
stat 1 cpu  150 0 600 750 0 0 100 0 0 0
cgcpu 1 A usage_usec 3001000 user_usec 100 system_usec 900
cgcpu 1 B usage_usec 1000500 user_usec 50 system_usec 450
task 1 120 (fio) S 1 120 1 0 -1 4194560 0 0 0 0 50 280 0 0 20 0 1 0 5 0
task 1 40 (kworker/u2:1-loop0) I 2 0 0 0 -1 0 0 0 0 0 0 65 0 0 20 0 1 0 5 0
task 1 78 (sh) S 1 78 1 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 5 0
";
        let s = parse_snapshots(cpu).unwrap();
        let pct = s.stat_pct().unwrap();
        // deltas: user 50, system 400, softirq 100, idle 50 of 600
        assert_eq!(
            pct.map(|p| (p * 10.0).round() / 10.0),
            [8.3, 66.7, 0.0, 16.7, 8.3]
        );
        // fio 300 ticks (pid 120), the kworker 60; pid 77 ended, 78 is new
        assert_eq!(s.task_ticks(), (300, 60, 0));
        let ios: BTreeMap<String, f64> =
            [("A".to_string(), 300_000.0), ("B".to_string(), 100_000.0)].into();
        let n = notes(0, Some(cpu), None, &ios, "7:0");
        assert!(n[0].contains("system 66.7 %"), "{n:?}");
        assert!(
            n[1].contains("/A 10.00 µs per I/O (3.00 s), /B 10.00 µs per I/O"),
            "{n:?}"
        );
        assert!(n[2].contains("kworkers 60, other tasks 0"), "{n:?}");
        for bad in [
            "stat 2 cpu 1",
            "stat 0 cpux 1",
            "procs A x",
            "task 0 12 fio",
            "bogus 1",
        ] {
            assert!(parse_snapshots(bad).is_err(), "{bad}");
        }
    }
}
