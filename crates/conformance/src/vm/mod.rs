//! The real side under a stock kernel booted in QEMU (`blklab conformance
//! --kernel debian-6.1|debian-6.12`), or one built from Debian's source
//! (`built-6.1-hz1000|built-6.1-hz250`: every io controller, HZ as named). Every selected case becomes a guest
//! script (`script.rs`); all of them run in one boot under deterministic
//! virtual time (blklab-vm: TCG with `-icount shift=0,sleep=off`, one vCPU),
//! and each case's fio JSON is compared with the simulator exactly as a host
//! case is, the simulator running with the booted kernel's profile of
//! kernel-behaviour switches.
//!
//! Under icount only controller-timed figures are physical (blk-throttle's
//! slices, iocost's budget and timers): the loop device's own latency is
//! the emulated CPU's, and the raw-speed probe gives the simulated device
//! that same speed.

pub mod guest_cpu;
pub mod sched_trace;
pub mod script;
pub mod throttle_race;

use std::path::PathBuf;
use std::time::Duration;

use blklab_vm::kmod::Tristate;
use blklab_vm::{BootEnd, BootOptions, CaseOutcome, CaseSpec, RunOptions};

use crate::cases::{Case, Need};
use crate::host::{Device, HostError, RealRuns};
use crate::loop_device::RawSpeed;
use crate::metrics::{from_fio_json, Metrics};
use crate::probe_cpu::QuietProbe;
use crate::result::{CaseResult, Options};
use crate::sim::SimDevice;

/// Why a kernel's cases did not run at all.
#[derive(Debug)]
pub enum VmFailure {
    /// The host cannot boot guests, or the kernel cannot be fetched (exit
    /// 4): what is missing and the command that would fix it.
    Unsuitable(String),
    /// The boot failed (with the console's last lines).
    Failed(String),
    /// SIGINT/SIGTERM: the guest was stopped.
    Interrupted,
}

/// The kernel names `--kernel` takes besides `host` and `all`.
pub fn kernel_names() -> Vec<&'static str> {
    blklab_vm::KERNELS.iter().map(|k| k.name).collect()
}

/// The HZ the simulator runs at for kernel `name` before it is booted: a
/// built kernel's is in its pin (and read from its config once booted), a
/// `local:` kernel's in its config, the stock kernels are HZ=250.
pub fn sim_hz(name: &str) -> u32 {
    if let Some(dir) = blklab_vm::local::dir_of(name) {
        return blklab_vm::local::read(dir)
            .ok()
            .and_then(|t| t.hz())
            .unwrap_or(crate::sim::DEFAULT_HZ);
    }
    blklab_vm::kernels::pin(name)
        .ok()
        .and_then(|p| p.build)
        .map_or(crate::sim::DEFAULT_HZ, |b| b.hz)
}

/// The reason kernel `k` cannot run `case`, if it cannot.
fn kernel_lacks(case: &Case, k: &blklab_vm::Kernel) -> Option<String> {
    let mut syms = vec![match case.need {
        Need::Iocost => "CONFIG_BLK_CGROUP_IOCOST",
        Need::Throttle => "CONFIG_BLK_DEV_THROTTLING",
        Need::Ioprio => "CONFIG_BLK_CGROUP_IOPRIO",
        Need::IoLatency => "CONFIG_BLK_CGROUP_IOLATENCY",
        Need::Bfq => "CONFIG_BFQ_GROUP_IOSCHED",
    }];
    match case.scheduler.name.as_str() {
        "mq-deadline" => syms.push("CONFIG_MQ_IOSCHED_DEADLINE"),
        "bfq" => syms.push("CONFIG_IOSCHED_BFQ"),
        "kyber" => syms.push("CONFIG_MQ_IOSCHED_KYBER"),
        _ => {}
    }
    let sym = syms.into_iter().find(|s| !k.offers(s))?;
    let how = match k.flag(sym) {
        Tristate::Module => format!("has {sym} as a module, which the guest does not load"),
        _ => format!("is built without {sym}"),
    };
    Some(format!(
        "{} ({} {}) {how}",
        k.pin.name, k.pin.package, k.pin.version
    ))
}

/// The guest time a case may take: its runs, fio's start-up under
/// emulation, and the setup, with room to spare.
fn case_limit_secs(runtime_s: u32, repeat: u32) -> u32 {
    60 + 2 * runtime_s * repeat.max(1)
}

/// Run `cases` under kernel `name` in one boot, calling `each` with every
/// result as it is judged.
pub fn run_kernel(
    name: &str,
    cases: &[Case],
    opts: &Options,
    mut each: impl FnMut(&CaseResult),
) -> Result<Vec<CaseResult>, VmFailure> {
    let switches = crate::sim::profile_switches(name).map_err(VmFailure::Failed)?;
    let pin_hz = sim_hz(name);
    let placeholder = |hz: u32| SimDevice {
        hz,
        sim: opts.sim,
        ..SimDevice::placeholder(&switches)
    };
    let conclude_all = |why: &dyn Fn(&Case) -> HostError, each: &mut dyn FnMut(&CaseResult)| {
        cases
            .iter()
            .map(|c| {
                let r = crate::conclude(
                    c,
                    Err(why(c)),
                    &placeholder(pin_hz),
                    RawSpeed::default(),
                    opts,
                    Vec::new(),
                );
                each(&r);
                r
            })
            .collect::<Vec<_>>()
    };
    if opts.sim_only {
        return Ok(conclude_all(
            &|_| HostError::NotRunnable(String::new()),
            &mut each,
        ));
    }
    if let Some(e) = blklab_vm::preflight().into_iter().next() {
        return Err(VmFailure::Unsuitable(e.to_string()));
    }
    let classify = |e: blklab_vm::error::VmError| {
        if e.is_host_unsuitable() {
            VmFailure::Unsuitable(e.to_string())
        } else {
            VmFailure::Failed(e.to_string())
        }
    };
    let cache = blklab_vm::kernels::default_cache_dir().map_err(classify)?;
    let kernel = blklab_vm::ensure(name, &cache).map_err(classify)?;
    let hz = kernel.hz().unwrap_or(pin_hz);
    let tools = blklab_vm::initramfs::GuestTools::find().map_err(classify)?;

    let mut specs = vec![CaseSpec {
        name: "raw".into(),
        script: script::raw_script(if opts.quick { 1 } else { 2 }),
        time_limit_secs: 60,
    }];
    specs.push(CaseSpec {
        name: QUIET.into(),
        script: script::quiet_script(),
        time_limit_secs: 60,
    });
    let mut lacking = vec![None; cases.len()];
    let mut wall_limit_secs = 180u64;
    for (i, c) in cases.iter().enumerate() {
        if let Some(why) = kernel_lacks(c, &kernel) {
            lacking[i] = Some(why);
            continue;
        }
        let runtime = c.runtime(opts.quick);
        let limit = case_limit_secs(runtime, opts.repeat);
        // TCG runs a busy guest slower than real time
        wall_limit_secs += 4 * limit as u64;
        specs.push(CaseSpec {
            name: format!("case{i}"),
            script: script::case_script(c, i, runtime, opts.repeat).map_err(VmFailure::Failed)?,
            time_limit_secs: limit,
        });
    }
    let run_opts = RunOptions {
        cache_dir: Some(cache),
        boot: BootOptions {
            wall_limit: Duration::from_secs(wall_limit_secs),
            cancel: Some(blklab_host::resources::cancel_flag()),
            ..BootOptions::default()
        },
        ..RunOptions::default()
    };
    let run = blklab_vm::run_on(&kernel, &tools, &specs, &run_opts).map_err(classify)?;
    if matches!(run.end, BootEnd::Cancelled) {
        return Err(VmFailure::Interrupted);
    }
    if run.ready_wall_secs.is_none() {
        return Err(VmFailure::Failed(
            run.failure()
                .unwrap_or_else(|| "the guest never became ready".into()),
        ));
    }
    let boot_note = format!(
        "{} {} ({}) under QEMU TCG with icount: /init ready after {:.1} s wall, whole boot {:.1} s wall",
        kernel.pin.package,
        kernel.pin.version,
        kernel.pin.release,
        run.ready_wall_secs.unwrap_or(f64::NAN),
        run.wall_secs
    );
    let failure = run.failure();
    let raw = run
        .case("raw")
        .filter(|c| c.succeeded())
        .and_then(|c| RawSpeed::from_fio_json(&String::from_utf8_lossy(&c.stdout)).ok());
    let (quiet, quiet_notes) = quiet_probe(run.case(QUIET));
    let raw = raw.map(|r| RawSpeed { quiet, ..r });
    if let Some(dir) = &opts.guest_files {
        let sub = dir.join(name.replace('/', "_"));
        for (probe, to) in [("raw", "probe-raw"), (QUIET, "probe-quiet")] {
            if let Some(r) = run.case(probe) {
                keep_guest_files(&sub.join(to), r).map_err(VmFailure::Failed)?;
            }
        }
    }
    // the probes' figures head the results (render::raw_summary); what the
    // quiet probe's trace shows goes under the first case only
    let mut quiet_notes = Some(quiet_notes);
    let mut out = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        if let (Some(dir), Some(r)) = (&opts.guest_files, run.case(&format!("case{i}"))) {
            // `local:/path/to/tree` keeps its files under `local:_path_to_tree`
            let sub = name.replace('/', "_");
            keep_guest_files(&dir.join(sub).join(&c.name), r).map_err(VmFailure::Failed)?;
        }
        let guest = match (&lacking[i], run.case(&format!("case{i}"))) {
            (Some(why), _) => Err(HostError::NotRunnable(why.clone())),
            (None, None) => Err(HostError::Failed(
                "the guest never reported this case".into(),
            )),
            (None, Some(r)) => {
                guest_runs(c, r, opts.repeat, c.runtime(opts.quick), failure.as_deref())
            }
        };
        let (real, dev) = match guest {
            Ok((runs, rotational)) => {
                let dev = SimDevice {
                    name: runs.device.name.clone(),
                    devno: runs.device.devno.clone(),
                    rotational,
                    switches: switches.clone(),
                    hz,
                    sim: opts.sim,
                };
                (Ok(runs), dev)
            }
            Err(e) => (Err(e), placeholder(hz)),
        };
        let mut r = crate::conclude(
            c,
            real,
            &dev,
            raw.unwrap_or_default(),
            opts,
            std::iter::once(boot_note.clone())
                .chain(quiet_notes.take().into_iter().flatten())
                .collect(),
        );
        if let Some(also) = opts.sim.costs.also {
            let n = crate::other_costs::note(&r, &dev, &raw.unwrap_or_default(), also);
            r.notes.push(n);
        }
        each(&r);
        out.push(r);
    }
    Ok(out)
}

/// The quiet-submit probe's case name (fio_costs.rs).
const QUIET: &str = "quiet";

/// The quiet-submit probe's figures from its case, and notes: why there
/// are none, or what its scheduler trace shows of fio's submit calls (whom
/// they wake, whether fio is switched out inside them).
fn quiet_probe(r: Option<&blklab_vm::CaseResult>) -> (Option<QuietProbe>, Vec<String>) {
    let Some(r) = r.filter(|r| r.succeeded()) else {
        let why = r.map_or("not reported".to_string(), |r| {
            String::from_utf8_lossy(&r.stderr)
                .lines()
                .last()
                .unwrap_or("failed")
                .to_string()
        });
        return (None, vec![format!("quiet-submit probe: {why}")]);
    };
    let mut notes = Vec::new();
    let q = QuietProbe::from_fio_json(&String::from_utf8_lossy(&r.stdout))
        .map_err(|e| notes.push(format!("quiet-submit probe: {e}")))
        .ok();
    let devno = guest_file(r, "device")
        .and_then(|d| {
            d.lines()
                .find_map(|l| l.strip_prefix("devno=").map(str::to_string))
        })
        .unwrap_or_default();
    // the trace's kworkers give `measured` its loop worker's cost
    let kworkers = match guest_file(r, &guest_cpu::trace_file(0)) {
        None => {
            notes.push("quiet-submit probe: no scheduler trace".into());
            None
        }
        Some(t) => {
            let (note, split) = quiet_trace(&t, &devno);
            notes.push(note);
            split.map(|s| s.quiet_kworkers())
        }
    };
    (q.map(|q| QuietProbe { kworkers, ..q }), notes)
}

/// The quiet-submit probe's trace window as one note, and its split when
/// it holds requests: the fio tasks are the trace's tasks named `fio` (the
/// jobs and fio's main process).
fn quiet_trace(trace: &str, devno: &str) -> (String, Option<sched_trace::Split>) {
    let fio: std::collections::BTreeMap<u32, String> = match sched_trace::parse_trace(trace) {
        Ok(ev) => ev
            .iter()
            .filter(|e| e.comm == "fio")
            .map(|e| (e.pid, "quiet".to_string()))
            .collect(),
        Err(e) => return (format!("quiet-submit probe's trace: {e}"), None),
    };
    match sched_trace::split(trace, &fio, devno) {
        Ok(s) if s.ios > 0 => (
            format!(
                "quiet-submit probe's {}",
                sched_trace::describe(0, &s).trim_start_matches("guest ")
            ),
            Some(s),
        ),
        Ok(s) => (
            format!(
                "quiet-submit probe's trace: no request on {devno} in {:.1} ms",
                s.window_ns as f64 / 1e6
            ),
            None,
        ),
        Err(e) => (format!("quiet-submit probe's trace: {e}"), None),
    }
}

/// A guest case's files as the real side's runs, and whether its device is
/// rotational.
fn guest_runs(
    case: &Case,
    r: &blklab_vm::CaseResult,
    repeat: u32,
    runtime_s: u32,
    boot_failure: Option<&str>,
) -> Result<(RealRuns, bool), HostError> {
    if !r.succeeded() {
        let what = match &r.outcome {
            CaseOutcome::Exited { status } => format!("the guest script exited with {status}"),
            CaseOutcome::TimedOut => "timed out in the guest".to_string(),
            CaseOutcome::Unfinished { reason } | CaseOutcome::NotRun { reason } => reason.clone(),
        };
        let stderr = String::from_utf8_lossy(&r.stderr);
        let lines: Vec<&str> = stderr.lines().collect();
        let tail = lines[lines.len().saturating_sub(8)..].join("\n");
        let mut msg = format!("{what}: {tail}");
        if let Some(f) = boot_failure {
            msg.push('\n');
            msg.push_str(f);
        }
        return Err(HostError::Failed(msg));
    }
    let device_file = r
        .files
        .get("device")
        .map(|b| String::from_utf8_lossy(b).to_string())
        .ok_or_else(|| HostError::Failed("the guest wrote no device file".into()))?;
    let kv = |k: &str| -> Option<String> {
        device_file
            .lines()
            .find_map(|l| l.strip_prefix(k)?.strip_prefix('=').map(str::to_string))
    };
    let name = kv("dev").ok_or_else(|| HostError::Failed("no dev= in the device file".into()))?;
    let device = Device {
        path: PathBuf::from(format!("/dev/{name}")),
        name,
        devno: kv("devno").unwrap_or_default(),
        lower: kv("lower")
            .filter(|l| !l.is_empty())
            .map(|l| (PathBuf::from("the lower loop device"), l)),
    };
    let mut runs: Vec<Vec<Metrics>> = vec![Vec::new(); case.jobs.len()];
    for rep in 0..repeat.max(1) {
        for (i, slot) in runs.iter_mut().enumerate() {
            let f = format!("job{i}.r{rep}.json");
            let json = r
                .files
                .get(&f)
                .ok_or_else(|| HostError::Failed(format!("the guest wrote no {f}")))?;
            let jobs = from_fio_json(&String::from_utf8_lossy(json))?;
            slot.push(
                jobs.first()
                    .ok_or_else(|| HostError::Failed(format!("{f}: no job")))?
                    .1,
            );
        }
    }
    let qos = case.trace_qos.then(|| {
        let mut all = Vec::new();
        for rep in 0..repeat.max(1) {
            let f = script::qos_trace_file(rep);
            let text = r
                .files
                .get(&f)
                .ok_or_else(|| format!("the guest wrote no {f}"))?;
            let ev = crate::qos_loop::parse_trace(&String::from_utf8_lossy(text))
                .map_err(|e| format!("{f}: {e}"))?;
            all.extend(ev);
        }
        Ok(all)
    });
    let mut io_stat = io_stat_notes(case, r, repeat, &device);
    if script::traces_cpu(case) {
        io_stat.extend(cpu_notes(case, r, repeat, runtime_s, &runs, &device));
    }
    let rotational = kv("rotational").as_deref() == Some("1");
    let dio = kv("dio").unwrap_or_default();
    Ok((
        RealRuns {
            device,
            runs,
            notes: vec![format!(
                "guest loop device: dio={dio}, rotational={}",
                rotational as u8
            )],
            qos,
            io_stat,
            // the guest's clock is its instruction count (icount): a
            // host stall delays the run, it does not show in it
            stalled: None,
        },
        rotational,
    ))
}

/// Write every file the guest sent back for a case, and its stdout and
/// stderr, into `dir` (created; files of an earlier run there are
/// replaced). A name outside [A-Za-z0-9._-] (which the guest's runner does
/// not send) is refused rather than written outside `dir`.
fn keep_guest_files(dir: &std::path::Path, r: &blklab_vm::CaseResult) -> Result<(), String> {
    let fail =
        |p: &std::path::Path, e: std::io::Error| format!("--guest-files: {}: {e}", p.display());
    std::fs::create_dir_all(dir).map_err(|e| fail(dir, e))?;
    let std_files = [("stdout", &r.stdout), ("stderr", &r.stderr)];
    for (f, bytes) in r
        .files
        .iter()
        .map(|(f, b)| (f.as_str(), b))
        .chain(std_files)
    {
        let plain = |c: char| c.is_ascii_alphanumeric() || "._-".contains(c);
        if f.is_empty() || f.starts_with('.') || !f.chars().all(plain) {
            return Err(format!("--guest-files: the guest sent a file named {f:?}"));
        }
        let p = dir.join(f);
        let tmp = dir.join(format!(".{f}.tmp"));
        std::fs::write(&tmp, bytes).map_err(|e| fail(&tmp, e))?;
        std::fs::rename(&tmp, &p).map_err(|e| fail(&p, e))?;
    }
    Ok(())
}

/// The text of file `f` the guest left for the case, if any.
fn guest_file(r: &blklab_vm::CaseResult, f: &str) -> Option<String> {
    r.files
        .get(f)
        .map(|b| String::from_utf8_lossy(b).to_string())
}

/// The guest's CPU accounting of every repetition as report lines
/// (guest_cpu.rs), each group's I/O count being its jobs' IOPS × runtime.
fn cpu_notes(
    case: &Case,
    r: &blklab_vm::CaseResult,
    repeat: u32,
    runtime_s: u32,
    runs: &[Vec<Metrics>],
    device: &Device,
) -> Vec<String> {
    let text = |f: &str| guest_file(r, f);
    let mut out = Vec::new();
    for rep in 0..repeat.max(1) {
        let mut ios = std::collections::BTreeMap::new();
        for (j, m) in case.jobs.iter().zip(runs) {
            if let Some(m) = m.get(rep as usize) {
                *ios.entry(script::group_tag(&j.cgroup)).or_insert(0.0) +=
                    m.get(crate::metrics::Metric::Iops) * runtime_s as f64;
            }
        }
        out.extend(guest_cpu::notes(
            rep,
            text(&guest_cpu::cpu_file(rep)).as_deref(),
            text(&guest_cpu::trace_file(rep)).as_deref(),
            &ios,
            &device.devno,
            device.lower.as_ref().map(|(_, no)| no.as_str()),
        ));
    }
    out
}

/// The value of `key` in an io.stat line (`MAJ:MIN k=v k=v ...`).
pub fn io_stat_field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    line.split_whitespace()
        .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
}

/// The guest's io.stat and io.latency files of every repetition as report
/// lines (reported, not judged): each group's io.stat lines of the case's
/// devices, its io.latency, and for sampled cases the instants (seconds
/// from the first sample) at which each group's blk-iolatency depth changed.
fn io_stat_notes(
    case: &Case,
    r: &blklab_vm::CaseResult,
    repeat: u32,
    device: &Device,
) -> Vec<String> {
    let ours = |l: &str| {
        let no = l.split_whitespace().next().unwrap_or("");
        no == device.devno || device.lower.as_ref().is_some_and(|(_, ln)| ln == no)
    };
    let text = |f: &str| guest_file(r, f);
    let mut out = Vec::new();
    for rep in 0..repeat.max(1) {
        for (g, _) in &case.groups {
            if let Some(t) = text(&script::io_stat_file(g, rep)) {
                let lines: Vec<&str> = t.lines().filter(|l| ours(l)).collect();
                out.push(format!(
                    "real io.stat {g} after run {rep}: {}",
                    if lines.is_empty() {
                        "(no line for the case's devices)".to_string()
                    } else {
                        lines.join(" | ")
                    }
                ));
            }
            if let Some(t) = text(&script::io_latency_file(g, rep)).filter(|t| !t.trim().is_empty())
            {
                out.push(format!(
                    "real io.latency {g}: {}",
                    t.trim().replace('\n', " | ")
                ));
            }
        }
        if let Some(t) = text(&script::io_stat_series_file(rep)) {
            out.extend(depth_changes(&t, case, rep));
        }
    }
    out
}

/// From a sampler file (`UPTIME TAG MAJ:MIN k=v ...` lines), each group's
/// blk-iolatency depth as `value@seconds` at every change.
fn depth_changes(series: &str, case: &Case, rep: u32) -> Vec<String> {
    let mut t0 = None;
    let mut out = Vec::new();
    for (g, _) in &case.groups {
        let tag = script::group_tag(g);
        let mut last: Option<String> = None;
        let mut steps = Vec::new();
        for l in series.lines() {
            let mut w = l.splitn(3, ' ');
            let (Some(t), Some(gt)) = (w.next(), w.next()) else {
                continue;
            };
            let Ok(t) = t.parse::<f64>() else { continue };
            let t0 = *t0.get_or_insert(t);
            if gt != tag {
                continue;
            }
            let depth = io_stat_field(w.next().unwrap_or(""), "depth")
                .unwrap_or("-")
                .to_string();
            if last.as_ref() != Some(&depth) {
                steps.push(format!("{depth}@{:.1}", t - t0));
                last = Some(depth);
            }
        }
        if !steps.is_empty() {
            out.push(format!(
                "real iolatency depth of {g} in run {rep} (value@s): {}",
                steps.join(" ")
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guest_case(files: &[(&str, &str)]) -> blklab_vm::CaseResult {
        blklab_vm::CaseResult {
            name: "case0".into(),
            outcome: CaseOutcome::Exited { status: 0 },
            stdout: b"out".to_vec(),
            stderr: b"err".to_vec(),
            files: files
                .iter()
                .map(|(f, t)| (f.to_string(), t.as_bytes().to_vec()))
                .collect(),
            virtual_elapsed_ms: None,
            wall_secs: None,
            problems: Vec::new(),
        }
    }

    #[test]
    fn guest_files_are_kept_under_their_names_and_odd_names_refused() {
        let d = tempfile::tempdir().unwrap();
        let dir = d
            .path()
            .join("built-6.1-hz1000")
            .join("capped-qos-iocost-on");
        let r = guest_case(&[("iocost.r0.trace", "a\n"), ("job0.r0.json", "{}")]);
        keep_guest_files(&dir, &r).unwrap();
        let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
        assert_eq!(read("iocost.r0.trace"), "a\n");
        assert_eq!(read("job0.r0.json"), "{}");
        assert_eq!(
            (read("stdout"), read("stderr")),
            ("out".into(), "err".into())
        );
        // a second run replaces, and leaves no temporary file behind
        keep_guest_files(&dir, &guest_case(&[("iocost.r0.trace", "b")])).unwrap();
        assert_eq!(read("iocost.r0.trace"), "b");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 4);
        for bad in ["../x", ".hidden", "a/b", ""] {
            let e = keep_guest_files(&dir, &guest_case(&[(bad, "x")])).unwrap_err();
            assert!(e.contains("the guest sent a file named"), "{e}");
        }
    }

    #[test]
    fn io_stat_fields_and_depth_changes_from_the_sampler() {
        let line = "7:2 rbytes=1 use_delay=7 delay_nsec=0 missed=0 total=0 depth=1";
        assert_eq!(io_stat_field(line, "depth"), Some("1"));
        assert_eq!(io_stat_field(line, "use_delay"), Some("7"));
        assert_eq!(io_stat_field(line, "delay"), None);
        let case = crate::cases::select(&["iolatency-protect-miss".into()])
            .unwrap()
            .remove(0);
        // B's line appears once B has issued I/O; A's never changes
        let series = "10.00 A 7:2 missed=0 total=0 depth=max\n10.00 B \n\
                      10.20 A 7:2 missed=1 total=1 depth=max\n10.20 B 7:2 missed=0 total=0 depth=max\n\
                      10.40 A 7:2 missed=3 total=3 depth=max\n10.40 B 7:2 missed=0 total=0 depth=64\n\
                      10.60 B 7:2 missed=0 total=0 depth=64\nnot a sample\n";
        assert_eq!(
            depth_changes(series, &case, 1),
            vec![
                "real iolatency depth of /A in run 1 (value@s): max@0.0".to_string(),
                "real iolatency depth of /B in run 1 (value@s): -@0.0 max@0.2 64@0.4".to_string(),
            ]
        );
    }
}
