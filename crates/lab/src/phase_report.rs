//! What a phased run reports per phase (docs/scenario.md "Phases"): each
//! phase's window of the disks (the `/sys/block/DEV/stat` differences that
//! phase's fio would count in its disk_util) and blk-iocost's vrate at the
//! phase's boundaries. The phases themselves are crate::phases.

use blklab_core::sim::time::Ns;

use crate::runner::Outcome;
use crate::scenario::Scenario;

/// A phase's window of the run. A phase the run cut short ends at the
/// run's end.
struct Window<'a> {
    /// `/sys/block/DEV/stat` per device at the phase's start and end.
    start: &'a [[u64; 11]],
    end: Vec<[u64; 11]>,
    start_ns: Ns,
    end_ns: Ns,
}

fn window(out: &Outcome, pi: usize) -> Option<Window<'_>> {
    let m = out.phases.get(pi)?;
    let (end, end_ns) = match &m.end {
        Some(e) => (e.stat.clone(), e.t_ns),
        None => (
            out.result.devices.iter().map(|d| d.stat).collect(),
            out.result.end_time,
        ),
    };
    Some(Window {
        start: &m.start.stat,
        end,
        start_ns: m.start.t_ns,
        end_ns,
    })
}

/// Device `dev`'s figures over phase `pi` as fio's disk_util would count
/// them over that fio's run: the stat fields' differences, and the
/// window's length in ms. None for a phase that never started.
pub fn disk_delta(out: &Outcome, pi: usize, dev: usize) -> Option<([u64; 11], Ns)> {
    let w = window(out, pi)?;
    let mut d = [0u64; 11];
    for (k, v) in d.iter_mut().enumerate() {
        // field 8 (in flight) is a level, not a count
        *v = if k == 8 {
            w.end[dev][k]
        } else {
            w.end[dev][k].saturating_sub(w.start[dev][k])
        };
    }
    Some((d, (w.end_ns - w.start_ns) / 1_000_000))
}

/// A vrate (vtime per µs) as iocost's trace prints it, in percent.
fn vrate_pct(v: Option<u64>) -> String {
    match v {
        Some(v) => format!(
            "{:.2}%",
            v as f64 * 100.0 / blklab_core::block::iocost::VTIME_PER_USEC as f64
        ),
        None => "-".into(),
    }
}

/// The text block after a phase's fio outputs: its window, and per device
/// its jobs used, the I/O done in the phase and iocost's vrate at the
/// phase's start and end.
pub fn report(sc: &Scenario, out: &Outcome, pi: usize) -> String {
    let p = &sc.phases[pi];
    let Some(m) = out.phases.get(pi) else {
        return format!(
            "phase {}: never started (the run ended before)\n\n",
            p.spec.name
        );
    };
    let w = window(out, pi).expect("started");
    let (t0, t1) = (w.start_ns, w.end_ns);
    let mut s = format!(
        "phase {}: {:.3}s to {:.3}s{}\n",
        p.spec.name,
        t0 as f64 / 1e9,
        t1 as f64 / 1e9,
        if m.end.is_none() {
            " (cut short by run.duration)"
        } else {
            ""
        }
    );
    let mut devs: Vec<usize> = p
        .spec
        .jobs
        .iter()
        .map(|&j| sc.config.jobs[j as usize].dev as usize)
        .collect();
    devs.sort_unstable();
    devs.dedup();
    for d in devs {
        let (f, msec) = disk_delta(out, pi, d).expect("started");
        let vrate_end = m.end.as_ref().and_then(|e| e.vrate[d]);
        s.push_str(&format!(
            "  {}: ios={}/{} sectors={}/{} util={:.2}%",
            out.result.devices[d].name,
            f[0],
            f[4],
            f[2],
            f[6],
            if msec > 0 {
                (f[9] as f64 * 100.0 / msec as f64).min(100.0)
            } else {
                0.0
            }
        ));
        if m.start.vrate[d].is_some() {
            s.push_str(&format!(
                " vrate={}->{}",
                vrate_pct(m.start.vrate[d]),
                vrate_pct(vrate_end)
            ));
        }
        s.push('\n');
    }
    s.push('\n');
    s
}

/// Where each phase that started began, in seconds of the run (the time
/// axis of the time series), for the report's phase marks.
pub fn starts(out: &Outcome) -> Vec<(String, f64)> {
    out.phases
        .iter()
        .map(|m| (m.name.clone(), m.start.t_ns as f64 / 1e9))
        .collect()
}

/// Every phase's block (`report`), in phase order; empty for a scenario
/// without phases.
pub fn all(sc: &Scenario, out: &Outcome) -> String {
    (0..sc.phases.len()).map(|pi| report(sc, out, pi)).collect()
}
