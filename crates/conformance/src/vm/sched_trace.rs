//! The guest's scheduler trace (tracefs text of `sched_switch`,
//! `sched_wakeup`, `workqueue_execute_start`/`_end`, `block_rq_issue`) read
//! into how one vCPU was shared over a window (guest_cpu.rs captures it).
//!
//! With one CPU, whoever a `sched_switch` switched in holds the CPU until
//! the next one: fio's time (per group), each work function's (a kworker
//! between `workqueue_execute_start` and `_end`: the loop's `loop_workfn`,
//! kblockd's `blk_mq_run_work_fn`), kworkers outside their work, other
//! tasks, idle (pid 0), each per request issued on the case's device; for
//! every wake-up of a kworker by a fio task whether the very next switch
//! took the CPU from that task while it was runnable (`prev_state=R`):
//! wake-up preemption (CFS's `check_preempt_wakeup`, EEVDF's
//! `check_preempt_wakeup_fair` from 6.6). tracefs prints microseconds:
//! per-event times are µs-quantised, their means over thousands of events
//! are not biased by it.

use std::collections::{BTreeMap, BTreeSet};

use crate::quiet_kworkers::QuietKworkers;

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
    let (_, frac) = ts
        .split_once('.')
        .ok_or_else(|| format!("timestamp \"{ts}\""))?;
    let bad = || format!("timestamp \"{ts}\": expected SECONDS.MICROSECONDS");
    // the guest's tracefs prints µs (the default local clock)
    if frac.len() != 6 {
        return Err(bad());
    }
    let ts_ns = blklab_host::events::seconds_ns(ts).ok_or_else(bad)?;
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

/// Every event of a tracefs text (blank and `#` lines skipped); an error
/// names the line.
pub fn parse_trace(trace: &str) -> Result<Vec<Event<'_>>, String> {
    let mut ev = Vec::new();
    for (n, l) in trace.lines().enumerate() {
        if l.trim().is_empty() || l.starts_with('#') {
            continue;
        }
        ev.push(parse_line(l).map_err(|e| format!("line {}: {e}", n + 1))?);
    }
    Ok(ev)
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
    /// `sched_switch`es whose next task is a kworker (any work function,
    /// or none): a kworker's wake-up run and a preempted kworker's resumption
    /// alike, each a switch-in the model charges `wake_ns` for
    /// (`Cpus::assign`; quiet_kworkers.rs).
    pub kworker_switch_ins: u64,
    /// Where a submit call is switched out on its way back to user space
    /// (what `[host] submit_return_ns` models): for each fio task switched
    /// out runnable after issuing a request on the case's device, the time
    /// from that `block_rq_issue` to the switch, and from its first wake-up
    /// of a loop worker after the issue to the switch (when it woke one).
    pub issue_to_switch_ns: Vec<u64>,
    pub loop_wake_to_switch_ns: Vec<u64>,
    /// fio tasks that blocked (`prev_state` not R) after issuing, before
    /// any switch: their call went back without being preempted.
    pub issued_then_blocked: u64,
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

    /// The kworkers' figures the loop worker's cost is derived from
    /// (quiet_kworkers.rs): the loop work functions' time and every
    /// kworker's time outside work, fio's wake-ups by kworkers, the
    /// switch-ins to kworkers.
    pub fn quiet_kworkers(&self) -> QuietKworkers {
        QuietKworkers {
            ios: self.ios,
            kworker_ns: self.loop_ns() + self.kworker_other_ns,
            fio_wakes: self.fio_woken_by_kworker,
            switch_ins: self.kworker_switch_ins,
        }
    }
}

/// The split of one trace window: `procs` maps pids to their group's tag,
/// `devno` is the case's device (`MAJ:MIN`).
pub fn split(trace: &str, procs: &BTreeMap<u32, String>, devno: &str) -> Result<Split, String> {
    let dev = devno.replace(':', ",");
    let ev = parse_trace(trace)?;
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
    // fio tasks that issued and were not switched out since: pid -> (issue
    // time, first loop-worker wake-up after it)
    let mut issued: BTreeMap<u32, (u64, Option<u64>)> = BTreeMap::new();
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
                if kworkers.contains_key(&next) {
                    s.kworker_switch_ins += 1;
                }
                if runnable && procs.contains_key(&prev) {
                    preempted.insert(prev, false);
                }
                if let Some((at, woke)) = issued.remove(&prev) {
                    if runnable {
                        s.issue_to_switch_ns.push(e.ts_ns - at);
                        s.loop_wake_to_switch_ns.extend(woke.map(|w| e.ts_ns - w));
                    } else {
                        s.issued_then_blocked += 1;
                    }
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
                    let k = kind(target);
                    if let Some((_, woke @ None)) = issued.get_mut(&e.pid) {
                        if k.split('+').any(loop_work) {
                            *woke = Some(e.ts_ns);
                        }
                    }
                    s.fio_wakes.entry(k).or_default().count += 1;
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
            "block_rq_issue" if e.fields.split_whitespace().next() == Some(dev.as_str()) => {
                s.ios += 1;
                if procs.contains_key(&e.pid) {
                    issued.insert(e.pid, (e.ts_ns, None));
                }
            }
            _ => {}
        }
    }
    // a switch out of a kworker that preempted fio's waker is the other way
    // round: count fio wake-ups that took the CPU from the kworker at once.
    // A kworker may wake several fio tasks before it is switched out (a
    // completion wakes the submitter, the freed tag a tag sleeper): the
    // switch to any of them counts, not only to the last one woken.
    let mut woken_by: Option<(u32, Vec<u32>)> = None;
    for e in &ev {
        match e.name {
            "sched_wakeup" => {
                let target = num(e.fields, "pid")?;
                if procs.contains_key(&target) && kworkers.contains_key(&e.pid) {
                    match &mut woken_by {
                        Some((waker, woken)) if *waker == e.pid => woken.push(target),
                        _ => woken_by = Some((e.pid, vec![target])),
                    }
                }
            }
            "sched_switch" => {
                if let Some((waker, woken)) = woken_by.take() {
                    let runnable =
                        field(e.fields, "prev_state").is_some_and(|v| v.starts_with('R'));
                    if runnable
                        && num(e.fields, "prev_pid")? == waker
                        && woken.contains(&num(e.fields, "next_pid")?)
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
    let ret = if s.issue_to_switch_ns.is_empty() {
        String::new()
    } else {
        format!(
            "; fio switched out on its way back {} times (blocked instead {} times), median {:.1} µs after its issue{}",
            s.issue_to_switch_ns.len(),
            s.issued_then_blocked,
            median_us(&s.issue_to_switch_ns),
            if s.loop_wake_to_switch_ns.is_empty() {
                String::new()
            } else {
                format!(
                    ", {:.1} µs after waking the loop worker ({} times)",
                    median_us(&s.loop_wake_to_switch_ns),
                    s.loop_wake_to_switch_ns.len()
                )
            }
        )
    };
    format!(
        "guest sched trace, run {rep} ({:.1} ms, {} requests): µs of CPU per request: {}; kworkers woken by fio: {}; fio preempted {} times, {:.1} % of them with a loop work item done before fio ran again; fio woken by kworkers {} times, {} preempting them; kworkers switched in {} times{ret}",
        s.window_ns as f64 / 1e6,
        s.ios,
        cpu.join(", "),
        if wakes.is_empty() { "none".to_string() } else { wakes.join("; ") },
        s.fio_preempted,
        pct(s.fio_preempted_done, s.fio_preempted),
        s.fio_woken_by_kworker,
        s.fio_preempts_kworker,
        s.kworker_switch_ins,
    )
}

/// The median of `ns` in µs (the lower middle of an even count: tracefs
/// times are whole µs, so no mean of two is needed).
fn median_us(ns: &[u64]) -> f64 {
    let mut v = ns.to_vec();
    v.sort_unstable();
    v.get((v.len().max(1) - 1) / 2)
        .map_or(f64::NAN, |n| *n as f64 / 1e3)
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
        // the worker switched in from /A and from idle; not to sh
        assert_eq!(s.kworker_switch_ins, 2);
        // /A's call switched out 3 µs after its issue, 2 µs after waking
        // the loop worker; /B's blocked
        assert_eq!(s.issue_to_switch_ns, vec![3_000]);
        assert_eq!(s.loop_wake_to_switch_ns, vec![2_000]);
        assert_eq!(s.issued_then_blocked, 1);
        let d = describe(0, &s);
        assert!(
            d.contains("fio switched out on its way back 1 times (blocked instead 1 times), median 3.0 µs after its issue, 2.0 µs after waking the loop worker (1 times)"),
            "{d}"
        );
        assert!(d.contains("2 requests"), "{d}");
        assert!(d.contains("kworkers switched in 2 times"), "{d}");
        assert!(d.contains("loop_workfn 2.00 (1.00 items)"), "{d}");
        assert!(
            d.contains("loop_workfn 2 times, 50.0 % preempting fio at once, 3.0 µs to run"),
            "{d}"
        );
    }

    /// The debian-6.1 guest's 4j-qd8 cycle: the loop worker (pid 24) wakes
    /// /A's fio (its completion) and then /B's (a freed tag: it slept in
    /// D), and /A's takes the CPU from it at once. Before the count took
    /// every fio the kworker woke, only a switch to the last one counted.
    #[test]
    fn a_switch_to_any_fio_the_kworker_woke_counts_as_preempting_it() {
        let trace = "\
    kworker/u2:1-24      [000] dN.4.     7.545627: sched_wakeup: comm=fio pid=120 prio=120 target_cpu=000
    kworker/u2:1-24      [000] dN.4.     7.545632: sched_wakeup: comm=fio pid=130 prio=120 target_cpu=000
    kworker/u2:1-24      [000] d..2.     7.545635: sched_switch: prev_comm=kworker/u2:1 prev_pid=24 prev_prio=120 prev_state=R+ ==> next_comm=fio next_pid=120 next_prio=120
             fio-120     [000] d..2.     7.545640: sched_switch: prev_comm=fio prev_pid=120 prev_prio=120 prev_state=S ==> next_comm=kworker/u2:1 next_pid=24 next_prio=120
";
        let s = split(trace, &procs(), "7:1").unwrap();
        assert_eq!((s.fio_woken_by_kworker, s.fio_preempts_kworker), (2, 1));
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
        // kblockd and the loop worker, three times each
        assert_eq!(s.kworker_switch_ins, 6);
        let w = s.fio_wakes["blk_mq_run_work_fn"];
        assert_eq!((w.count, w.preempting, w.latency_ns), (3, 3, 3_000));
        assert!(
            !s.fio_wakes.contains_key("loop_workfn"),
            "fio never wakes the loop worker"
        );
        // /A, preempted at .857190, ran again at .857205 after loop work ended
        assert_eq!((s.fio_preempted, s.fio_preempted_done), (1, 1));
        // kblockd dispatches here: fio is switched out for it before any
        // request of its own is issued, so no way-back gap is seen
        assert!(
            s.issue_to_switch_ns.is_empty(),
            "{:?}",
            s.issue_to_switch_ns
        );
    }

    #[test]
    fn the_quiet_kworkers_are_the_loop_work_and_kworker_time_outside_work() {
        let mut work_ns = BTreeMap::new();
        work_ns.insert("loop_rootcg_workfn".to_string(), 3_000_000);
        // another work function's time is not the loop's
        work_ns.insert("blk_mq_run_work_fn".to_string(), 9_000_000);
        let s = Split {
            ios: 1000,
            work_ns,
            kworker_other_ns: 200_000,
            fio_woken_by_kworker: 100,
            kworker_switch_ins: 40,
            ..Split::default()
        };
        let q = s.quiet_kworkers();
        assert_eq!(
            q,
            QuietKworkers {
                ios: 1000,
                kworker_ns: 3_200_000,
                fio_wakes: 100,
                switch_ins: 40
            }
        );
        // 3.2 - 0.1 x 2 - 0.04 x 3
        assert_eq!(q.worker_ns(), Ok(2_880));
    }
}
