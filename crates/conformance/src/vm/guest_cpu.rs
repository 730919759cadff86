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
//! The trace is read by sched_trace.rs.

use std::collections::BTreeMap;

use super::sched_trace::{describe, split};
use super::throttle_race;
use crate::proc_stat::CpuTicks;

/// The trace window's length in the guest (virtual time).
pub const WINDOW_US: u32 = 50_000;
/// The window of the capped disk's race cases: two and a half of
/// blk-throttle's 100 ms slices, so that at least two slice starts are in it
/// (throttle_race.rs).
pub const RACE_WINDOW_US: u32 = 250_000;
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
/// of `window_us` in the background (`$tracer`), `WINDOW_AFTER_S` after
/// this point.
pub fn trace_start(window_us: u32) -> String {
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
        "( sleep {WINDOW_AFTER_S}; echo 1 > $T/tracing_on; usleep {window_us}; echo 0 > $T/tracing_on ) &\ntracer=$!\n"
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

/// Two snapshots of the `cpu.rR` file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Snapshots {
    /// /proc/stat's cpu line (USER_HZ ticks) at 0 and 1.
    pub stat: [CpuTicks; 2],
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
                s.stat[k] = CpuTicks::parse_fields(w).map_err(|e| format!("line {n}: {e}"))?;
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
        self.stat[0].pct_until(&self.stat[1])
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
/// count from fio (tag -> I/Os), `devno` the case's device, `lower` the
/// lower loop device of a capped disk (then the trace's throttle slices
/// are reported too, throttle_race.rs).
pub fn notes(
    rep: u32,
    cpu: Option<&str>,
    trace: Option<&str>,
    ios_per_group: &BTreeMap<String, f64>,
    devno: &str,
    lower: Option<&str>,
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
    if let Some(lower) = lower {
        out.push(
            match throttle_race::slices(trace, &snaps.procs, devno, lower) {
                Ok(s) => throttle_race::describe(rep, &s),
                Err(e) => format!("guest throttle slices, run {rep}: {}: {e}", trace_file(rep)),
            },
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let n = notes(0, Some(cpu), None, &ios, "7:0", None);
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
