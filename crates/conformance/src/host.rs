//! The real kernel's side of a case: a loop device (or the stacked capped
//! disk) on a tmpfs file, the case's groups with the case's cgroup strings
//! (cgroup v2 io.* files, or their cgroup v1 blk-throttle equivalents), and
//! real fio in those groups. Every object is registered in `Resources` as it
//! is created, so an error or a signal removes it again.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rustix::process::{kill_process, Pid, Signal};

use crate::cases::{Case, HostDevice, Need, Scheduler};
use crate::env::{HostEnv, ThrottleVia};
use crate::loop_device::{RawSpeed, FILE_BYTES};
use crate::metrics::{fio_cpu_pct, from_fio_json, Metrics};
use blklab_host::resources::{interrupted, Resource, Resources};

/// Prefix of every name the harness creates (cgroups, backing files).
pub const PREFIX: &str = "blklab-conformance";

/// Why a case did not produce real results.
#[derive(Debug)]
pub enum HostError {
    /// The host lacks something this case needs (the sentence says what).
    NotRunnable(String),
    /// SIGINT/SIGTERM arrived.
    Interrupted,
    /// Something failed while setting up or running.
    Failed(String),
}

impl From<String> for HostError {
    fn from(s: String) -> Self {
        HostError::Failed(s)
    }
}

/// A prepared device: the one the jobs use, and the lower one when capped.
#[derive(Debug, Clone)]
pub struct Device {
    pub path: PathBuf,
    pub name: String,
    pub devno: String,
    pub lower: Option<(PathBuf, String)>,
}

/// What the real runs produced.
#[derive(Debug)]
pub struct RealRuns {
    pub device: Device,
    /// Per job (case order), one Metrics per repeat.
    pub runs: Vec<Vec<Metrics>>,
    /// How the case was realised (printed with the results).
    pub notes: Vec<String>,
    /// The kernel's `iocost_ioc_vrate_adj` events over all runs, for cases
    /// that trace the QoS loop (None: not traced here).
    pub qos: Option<Result<Vec<crate::qos_loop::VrateAdj>, String>>,
    /// Report lines from the groups' io.stat / io.latency after each run
    /// (the VM harness; reported, not judged).
    pub io_stat: Vec<String>,
    /// Why the figures are from stalled runs only (`blklab_host::stall`): every run
    /// of the case, re-runs included, saw the host stall. None: at least
    /// one run was free of stalls and only such runs are kept, or the real
    /// side cannot stall (a QEMU guest's clock is its instruction count).
    pub stalled: Option<String>,
}

/// One real run of a case: each job's figures, the host's CPU load and
/// whether the host stalled.
struct OneRun {
    jobs: Vec<Metrics>,
    load: Option<crate::host_load::RunLoad>,
    stall: Option<blklab_host::stall::RunStall>,
}

impl OneRun {
    fn stalled(&self) -> bool {
        blklab_host::stall::is_stalled(self.stall)
    }
}

/// Whether the host can run `case`; the reason when not.
pub fn runnable(case: &Case, env: &HostEnv) -> Result<(), String> {
    let basics = env.missing_basics();
    if !basics.is_empty() {
        return Err(basics.join("; "));
    }
    if case.need == Need::Iocost && env.iocost.is_none() {
        return Err(env.iocost_missing.clone());
    }
    if case.need == Need::Ioprio && env.iocost.is_none() {
        return Err(format!(
            "io.prio.class (blk-ioprio) needs the io controller on cgroup v2 as well: {}",
            env.iocost_missing
        ));
    }
    if case.need == Need::IoLatency && env.iocost.is_none() {
        return Err(format!(
            "io.latency (blk-iolatency) needs the io controller on cgroup v2 as well: {}",
            env.iocost_missing
        ));
    }
    Ok(())
}

fn write(path: &Path, val: &str) -> Result<(), String> {
    std::fs::write(path, val).map_err(|e| format!("writing \"{val}\" to {}: {e}", path.display()))
}

fn run_cmd(cmd: &mut Command) -> Result<String, String> {
    let o = cmd
        .output()
        .map_err(|e| format!("{cmd:?}: cannot start: {e}"))?;
    if !o.status.success() {
        return Err(format!(
            "{cmd:?} failed ({}): {}",
            o.status,
            String::from_utf8_lossy(&o.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&o.stdout).trim().to_string())
}

/// `losetup -f --show --direct-io=on BACKING`, registered.
fn attach(backing: &Path, res: &mut Resources) -> Result<(PathBuf, String, String), String> {
    let out = run_cmd(
        Command::new("losetup")
            .args(["-f", "--show", "--direct-io=on"])
            .arg(backing),
    )?;
    let dev = PathBuf::from(out.lines().next().unwrap_or("").trim());
    if !dev.to_string_lossy().starts_with("/dev/loop") {
        return Err(format!("losetup printed '{out}', not a loop device"));
    }
    res.add(Resource::Loop(dev.clone()));
    let name = dev
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let devno = std::fs::read_to_string(format!("/sys/block/{name}/dev"))
        .map_err(|e| format!("/sys/block/{name}/dev: {e}"))?
        .trim()
        .to_string();
    // Our own device: make sure no scheduler sits in front (the simulated
    // device uses none).
    let _ = std::fs::write(format!("/sys/block/{name}/queue/scheduler"), "none");
    Ok((dev, name, devno))
}

/// A tmpfs file filled from /dev/urandom, registered.
fn backing_file(env: &HostEnv, tag: &str, res: &mut Resources) -> Result<PathBuf, String> {
    let dir = env.tmpfs.as_ref().ok_or("no tmpfs")?;
    let p = dir.join(format!("{PREFIX}-{}-{tag}.img", std::process::id()));
    let mut f = std::fs::File::create(&p).map_err(|e| format!("creating {}: {e}", p.display()))?;
    res.add(Resource::File(p.clone()));
    let mut rnd = std::fs::File::open("/dev/urandom")
        .map_err(|e| format!("/dev/urandom: {e}"))?
        .take(FILE_BYTES);
    std::io::copy(&mut rnd, &mut f).map_err(|e| format!("filling {}: {e}", p.display()))?;
    Ok(p)
}

/// Whether the v2 root's iocost files already hold a line for `devno`
/// (blk-iocost keeps a device's vrate and configuration across enable=0 and
/// even across detaching the loop device; a case needs a fresh one).
fn iocost_knows(root: &Path, devno: &str) -> bool {
    ["io.cost.qos", "io.cost.model"].iter().any(|f| {
        std::fs::read_to_string(root.join(f))
            .unwrap_or_default()
            .lines()
            .any(|l| l.split_whitespace().next() == Some(devno))
    })
}

/// Create the case's device(s).
fn make_device(
    case: &Case,
    env: &HostEnv,
    res: &mut Resources,
    notes: &mut Vec<String>,
) -> Result<Device, String> {
    let file = backing_file(env, &case.name, res)?;
    let fresh_root = if case.need == Need::Iocost {
        env.iocost.clone()
    } else {
        None
    };
    let lower = match &case.device {
        HostDevice::Loop => None,
        HostDevice::Capped { .. } => {
            let (d, _, devno) = attach(&file, res)?;
            Some((d, devno))
        }
    };
    let backing = lower.as_ref().map(|l| l.0.clone()).unwrap_or(file);
    // Attach until the device number is new to blk-iocost (the stale ones stay
    // attached until the case ends, so losetup -f moves on).
    for _ in 0..16 {
        let (path, name, devno) = attach(&backing, res)?;
        match &fresh_root {
            Some(root) if iocost_knows(root, &devno) => {
                notes.push(format!(
                    "skipped {name} ({devno}): blk-iocost already has state for it"
                ));
            }
            _ => {
                return Ok(Device {
                    path,
                    name,
                    devno,
                    lower,
                });
            }
        }
    }
    Err("16 loop devices in a row had blk-iocost state; cannot get a fresh device number".into())
}

/// The case's scheduler and its tunables on device `name` (`attach` set
/// none; the raw-speed probe runs before this).
fn set_scheduler(name: &str, sched: &Scheduler) -> Result<(), String> {
    if sched.name == "none" {
        return Ok(());
    }
    let q = PathBuf::from(format!("/sys/block/{name}/queue"));
    write(&q.join("scheduler"), &sched.name)?;
    for (k, v) in &sched.tunables {
        write(&q.join("iosched").join(k), v)?;
    }
    Ok(())
}

/// Translate one io.max line to cgroup v1 blk-throttle writes:
/// (file, "MAJ:MIN VALUE"); `max` becomes 0, which v1 reads as no limit.
pub fn io_max_to_v1(line: &str) -> Result<Vec<(String, String)>, String> {
    let mut it = line.split_whitespace();
    let devno = it.next().ok_or("empty io.max line")?;
    let mut out = Vec::new();
    for kv in it {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| format!("io.max \"{line}\": '{kv}' is not KEY=VALUE"))?;
        let file = match k {
            "rbps" => "blkio.throttle.read_bps_device",
            "wbps" => "blkio.throttle.write_bps_device",
            "riops" => "blkio.throttle.read_iops_device",
            "wiops" => "blkio.throttle.write_iops_device",
            _ => {
                return Err(format!(
                    "io.max \"{line}\": '{k}' has no cgroup v1 equivalent"
                ))
            }
        };
        let v = if v == "max" { "0" } else { v };
        if v.parse::<u64>().is_err() {
            return Err(format!("io.max \"{line}\": {k}={v} is not a number"));
        }
        out.push((file.to_string(), format!("{devno} {v}")));
    }
    Ok(out)
}

/// The groups as created: scenario path → directory, and where each job runs.
struct Groups {
    /// cgroup.procs (v2) or tasks-capable cgroup.procs (v1) of each job.
    job_procs: Vec<PathBuf>,
}

fn make_groups(
    case: &Case,
    env: &HostEnv,
    dev: &Device,
    idx: usize,
    res: &mut Resources,
    notes: &mut Vec<String>,
) -> Result<Groups, String> {
    let sub = |v: &str| v.replace("{DEV}", &dev.devno);
    let via = env.throttle.clone().ok_or("no io controller")?;
    let parent_name = format!("{PREFIX}-{}-{idx}", std::process::id());
    match via {
        ThrottleVia::V2(root) => {
            let sc =
                std::fs::read_to_string(root.join("cgroup.subtree_control")).unwrap_or_default();
            if !sc.split_whitespace().any(|c| c == "io") {
                write(&root.join("cgroup.subtree_control"), "+io")?;
                notes.push(format!(
                    "enabled +io in {}/cgroup.subtree_control (left on)",
                    root.display()
                ));
            }
            let parent = root.join(&parent_name);
            std::fs::create_dir(&parent).map_err(|e| format!("mkdir {}: {e}", parent.display()))?;
            res.add(Resource::Cgroup(parent.clone()));
            write(&parent.join("cgroup.subtree_control"), "+io")?;
            if !case.root_files.is_empty() {
                res.add(Resource::Iocost {
                    root: root.clone(),
                    devno: dev.devno.clone(),
                });
                for (f, v) in &case.root_files {
                    write(&root.join(f), &sub(v))?;
                }
            }
            if let (HostDevice::Capped { lower_limit }, Some((_, ldev))) =
                (&case.device, &dev.lower)
            {
                write(&parent.join("io.max"), &format!("{ldev} {lower_limit}"))?;
            }
            let dir_of = |g: &str| -> PathBuf {
                let rel = g.trim_start_matches('/');
                if rel.is_empty() {
                    parent.clone()
                } else {
                    parent.join(rel)
                }
            };
            for (g, fs) in &case.groups {
                let d = dir_of(g);
                if d != parent {
                    std::fs::create_dir_all(&d)
                        .map_err(|e| format!("mkdir {}: {e}", d.display()))?;
                    res.add(Resource::Cgroup(d.clone()));
                }
                for (f, v) in fs {
                    write(&d.join(f), &sub(v))?;
                }
            }
            Ok(Groups {
                job_procs: case
                    .jobs
                    .iter()
                    .map(|j| dir_of(&j.cgroup).join("cgroup.procs"))
                    .collect(),
            })
        }
        ThrottleVia::V1(root) => {
            notes.push(format!(
                "io controller on cgroup v1 ({}): io.max written as blkio.throttle.*_device",
                root.display()
            ));
            if !case.root_files.is_empty() {
                return Err("io.cost.* needs cgroup v2".into());
            }
            let parent = root.join(&parent_name);
            std::fs::create_dir(&parent).map_err(|e| format!("mkdir {}: {e}", parent.display()))?;
            res.add(Resource::Cgroup(parent.clone()));
            // cgroup v1 blk-throttle is flat: a parent's limit does not cover its
            // children. A cap on the sum is realised by running every job in the
            // parent itself, which is the same thing when no controller acts on
            // the upper device (the only capped case v1 can run).
            let capped = if let (HostDevice::Capped { lower_limit }, Some((_, ldev))) =
                (&case.device, &dev.lower)
            {
                for (f, v) in io_max_to_v1(&format!("{ldev} {lower_limit}"))? {
                    write(&parent.join(&f), &v)?;
                }
                notes.push(format!(
                    "cgroup v1 blk-throttle is flat: the jobs run together in the parent group that holds the lower device's limit ({ldev} {lower_limit})"
                ));
                true
            } else {
                false
            };
            let mut dirs = std::collections::BTreeMap::new();
            for (g, fs) in &case.groups {
                let rel = g.trim_start_matches('/');
                let d = if rel.is_empty() {
                    parent.clone()
                } else {
                    parent.join(rel)
                };
                if d != parent {
                    std::fs::create_dir_all(&d)
                        .map_err(|e| format!("mkdir {}: {e}", d.display()))?;
                    res.add(Resource::Cgroup(d.clone()));
                }
                for (f, v) in fs {
                    match f.as_str() {
                        "io.max" => {
                            for l in sub(v).lines() {
                                for (vf, vv) in io_max_to_v1(l)? {
                                    write(&d.join(&vf), &vv)?;
                                    notes.push(format!("{g}: io.max \"{l}\" -> {vf} \"{vv}\""));
                                }
                            }
                        }
                        "io.bfq.weight" => {
                            // cgroup v1: blkio.bfq.weight takes the bare
                            // number (bfq_io_set_weight_legacy)
                            let w = sub(v);
                            let n = w.trim().trim_start_matches("default").trim().to_string();
                            write(&d.join("blkio.bfq.weight"), &n)?;
                            notes.push(format!(
                                "{g}: io.bfq.weight \"{w}\" -> blkio.bfq.weight \"{n}\""
                            ));
                        }
                        "io.weight" if capped => {
                            notes.push(format!("{g}: io.weight \"{v}\" not written (cgroup v1; it acts only with blk-iocost, which is off)"));
                        }
                        other => return Err(format!("{g}/{other} has no cgroup v1 equivalent")),
                    }
                }
                dirs.insert(g.clone(), d);
            }
            let job_procs = case
                .jobs
                .iter()
                .map(|j| {
                    let d = if capped {
                        parent.clone()
                    } else {
                        dirs.get(&j.cgroup)
                            .cloned()
                            .unwrap_or_else(|| parent.clone())
                    };
                    d.join("cgroup.procs")
                })
                .collect();
            Ok(Groups { job_procs })
        }
    }
}

/// Split a fio command line the way the scenario parser does.
fn fio_args(cmdline: &str) -> Result<Vec<String>, String> {
    blklab_fio::parse::split_cmdline(cmdline).map_err(|e| format!("fio command line: {e}"))
}

/// Start fio inside a group: the shell joins the group, then becomes fio.
fn spawn_fio(env: &HostEnv, procs: Option<&Path>, args: &[String]) -> Result<Child, String> {
    let fio = env.fio.as_ref().ok_or("no fio")?.0.clone();
    let mut cmd = match procs {
        Some(p) => {
            let mut c = Command::new("sh");
            c.arg("-c")
                .arg("echo $$ > \"$0\" && exec \"$@\"")
                .arg(p)
                .arg(&fio);
            c
        }
        None => Command::new(&fio),
    };
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd.spawn().map_err(|e| format!("cannot start fio: {e}"))
}

/// Wait for every child, polling for signals; on a signal stop them (SIGTERM
/// by pid, then SIGKILL) and report the interruption.
fn wait_all(children: Vec<Child>, limit: Duration) -> Result<Vec<String>, HostError> {
    let mut readers = Vec::new();
    let mut kids = Vec::new();
    for mut c in children {
        let mut so = c.stdout.take().expect("piped");
        let mut se = c.stderr.take().expect("piped");
        readers.push(std::thread::spawn(move || {
            let (mut a, mut b) = (String::new(), String::new());
            let _ = so.read_to_string(&mut a);
            let _ = se.read_to_string(&mut b);
            (a, b)
        }));
        kids.push(c);
    }
    let start = Instant::now();
    let mut status = vec![None; kids.len()];
    loop {
        for (i, k) in kids.iter_mut().enumerate() {
            if status[i].is_none() {
                if let Ok(Some(s)) = k.try_wait() {
                    status[i] = Some(s);
                }
            }
        }
        if status.iter().all(Option::is_some) {
            break;
        }
        let timed_out = start.elapsed() > limit;
        if interrupted() || timed_out {
            for (i, k) in kids.iter_mut().enumerate() {
                if status[i].is_none() {
                    // SIGTERM lets fio stop its jobs; the child is not yet
                    // reaped, so the pid is still ours. Failure means it exited.
                    let _ = kill_process(Pid::from_child(k), Signal::TERM);
                }
            }
            let t = Instant::now();
            for (i, k) in kids.iter_mut().enumerate() {
                if status[i].is_none() {
                    while t.elapsed() < Duration::from_secs(3) {
                        if let Ok(Some(_)) = k.try_wait() {
                            break;
                        }
                        std::thread::sleep(Duration::from_millis(20));
                    }
                    let _ = k.kill();
                    let _ = k.wait();
                }
            }
            return Err(if timed_out {
                HostError::Failed(format!("fio did not finish within {} s", limit.as_secs()))
            } else {
                HostError::Interrupted
            });
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut outs = Vec::new();
    for (i, r) in readers.into_iter().enumerate() {
        let (o, e) = r.join().unwrap_or_default();
        let st = status[i].expect("waited");
        if !st.success() {
            return Err(HostError::Failed(format!(
                "fio exited with {st}: {}",
                e.trim()
            )));
        }
        outs.push(o);
    }
    Ok(outs)
}

/// fio QD1 4k random reads on the device, outside any group: the raw speed
/// the simulated device is given.
pub fn measure_raw(env: &HostEnv, dev: &Path, seconds: u32) -> Result<RawSpeed, HostError> {
    let mut args = fio_args(&crate::loop_device::raw_fio_options(seconds))?;
    args.push(format!("--filename={}", dev.display()));
    let c = spawn_fio(env, None, &args)?;
    let out = wait_all(vec![c], Duration::from_secs(seconds as u64 + 60))?;
    Ok(RawSpeed::from_fio_json(&out[0])?)
}

/// The raw speed from a run of `measure_raw` free of host stalls: a stalled
/// probe's latency is the stall's, and every simulated case of the
/// invocation would inherit it (the capped disk's simulated sum fell to
/// 1474 IOPS for a cap of 2000 on one). At most `RAW_TRIES` runs; when all
/// stalled, the fastest (its clat the least inflated). The note says so.
fn measure_raw_unstalled(
    env: &HostEnv,
    dev: &Path,
    seconds: u32,
) -> Result<(RawSpeed, Option<String>), HostError> {
    const RAW_TRIES: usize = 3;
    let tries = blklab_host::stall::until_unstalled(RAW_TRIES, || {
        if interrupted() {
            return Err(HostError::Interrupted);
        }
        measure_raw(env, dev, seconds)
    })?;
    if tries.clean() {
        let note = (!tries.earlier.is_empty()).then(|| {
            format!(
                "raw speed: {} probe run(s) stalled and were run again",
                tries.earlier.len()
            )
        });
        return Ok((tries.value, note));
    }
    let late = blklab_host::stall::late_list(&tries.stalls);
    let best = tries
        .earlier
        .into_iter()
        .chain([tries.value])
        .max_by(|a, b| a.iops.total_cmp(&b.iops))
        .expect("the kept run");
    Ok((
        best,
        Some(format!(
            "raw speed: the host stalled in all {RAW_TRIES} probe runs (latest wake-ups {late} ms): the fastest is used"
        )),
    ))
}

/// Realise `case` on the host and run its jobs `repeat` times.
/// `raw` is measured on the first device made, if not known yet.
pub fn run(
    case: &Case,
    env: &HostEnv,
    idx: usize,
    repeat: u32,
    quick: bool,
    raw: &mut Option<RawSpeed>,
    res: &mut Resources,
) -> Result<RealRuns, HostError> {
    runnable(case, env).map_err(HostError::NotRunnable)?;
    let mut notes = Vec::new();
    let dev = make_device(case, env, res, &mut notes)?;
    if interrupted() {
        return Err(HostError::Interrupted);
    }
    if raw.is_none() {
        let probe = match &dev.lower {
            Some((l, _)) => l.clone(),
            None => dev.path.clone(),
        };
        let (speed, note) = measure_raw_unstalled(env, &probe, if quick { 1 } else { 2 })?;
        notes.extend(note);
        *raw = Some(speed);
    }
    // after the probe: the raw speed is the device's own, the simulated
    // device gets the scheduler separately
    set_scheduler(&dev.name, &case.scheduler)?;
    let groups = make_groups(case, env, &dev, idx, res, &mut notes)?;
    let runtime = case.runtime(quick);
    let want = repeat.max(1) as usize;
    // a stalled run is run again, at most this many times in all
    let max_runs = want + want.max(2);
    let mut all: Vec<OneRun> = Vec::new();
    let mut nr_cpus = 0;
    let mut load_err = None;
    let mut unpinned = None;
    while all.iter().filter(|r| !r.stalled()).count() < want && all.len() < max_runs {
        if interrupted() {
            return Err(HostError::Interrupted);
        }
        let before = crate::host_load::read_proc_stat();
        let probe = blklab_host::stall::StallProbe::start();
        if let Some(e) = &probe.unpinned {
            unpinned.get_or_insert(e.clone());
        }
        let mut kids = Vec::new();
        for (j, procs) in case.jobs.iter().zip(&groups.job_procs) {
            let mut args = fio_args(&j.cmdline)?;
            args.push(format!("--runtime={runtime}"));
            args.push("--time_based".into());
            args.push(format!("--filename={}", dev.path.display()));
            args.push("--output-format=json".into());
            match spawn_fio(env, Some(procs), &args) {
                Ok(c) => kids.push(c),
                Err(e) => {
                    let _ = wait_all(kids, Duration::from_secs(runtime as u64 + 60));
                    let _ = probe.finish();
                    return Err(HostError::Failed(e));
                }
            }
        }
        let outs = wait_all(kids, Duration::from_secs(runtime as u64 + 60));
        let stall = probe.finish();
        let outs = outs?;
        let after = crate::host_load::read_proc_stat();
        let fio_cpu: Result<f64, String> = outs.iter().map(|o| fio_cpu_pct(o)).sum();
        let mut load = None;
        match (before, after, fio_cpu) {
            (Ok((b, n)), Ok((a, _)), Ok(fio_cpu_pct)) => {
                nr_cpus = n;
                load =
                    crate::host_load::busy_pct(&b, &a).map(|busy_pct| crate::host_load::RunLoad {
                        busy_pct,
                        fio_cpu_pct,
                    });
            }
            (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => load_err = Some(e),
        }
        let mut jobs = Vec::new();
        for o in &outs {
            let j = from_fio_json(o)?;
            let m = j
                .first()
                .ok_or_else(|| HostError::Failed("no job in fio's output".into()))?
                .1;
            jobs.push(m);
        }
        all.push(OneRun { jobs, load, stall });
    }
    let loads: Vec<_> = all.iter().filter_map(|r| r.load).collect();
    match load_err {
        Some(e) => notes.push(format!(
            "host CPUs during the real runs: not measured ({e})"
        )),
        None if !loads.is_empty() => notes.push(crate::host_load::note(&loads, nr_cpus)),
        None => {}
    }
    let stalls: Vec<_> = all.iter().map(|r| r.stall).collect();
    let clean = all.iter().any(|r| !r.stalled());
    notes.push(blklab_host::stall::note(&stalls, !clean));
    if let Some(e) = unpinned {
        notes.push(format!(
            "host stalls: a probe thread could not be pinned ({e})"
        ));
    }
    let stalled = (!clean).then(|| {
        let worst = stalls
            .iter()
            .flatten()
            .map(|s| s.max_late_ms)
            .fold(0.0, f64::max);
        format!(
            "the host stalled in each of {} real run(s) (a nice-0 thread woke up to {worst:.0} ms late)",
            all.len()
        )
    });
    let mut runs: Vec<Vec<Metrics>> = vec![Vec::new(); case.jobs.len()];
    for r in all.into_iter().filter(|r| !clean || !r.stalled()) {
        for (i, m) in r.jobs.into_iter().enumerate() {
            runs[i].push(m);
        }
    }
    Ok(RealRuns {
        device: dev,
        runs,
        notes,
        // the host harness does not trace (its iocost cases need cgroup v2)
        qos: None,
        io_stat: Vec::new(),
        stalled,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_max_lines_become_v1_throttle_writes() {
        let v = io_max_to_v1("7:3 riops=1000 rbps=max wbps=1048576").unwrap();
        assert_eq!(
            v,
            vec![
                (
                    "blkio.throttle.read_iops_device".to_string(),
                    "7:3 1000".to_string()
                ),
                (
                    "blkio.throttle.read_bps_device".to_string(),
                    "7:3 0".to_string()
                ),
                (
                    "blkio.throttle.write_bps_device".to_string(),
                    "7:3 1048576".to_string()
                ),
            ]
        );
        assert!(io_max_to_v1("7:3 latency=10")
            .unwrap_err()
            .contains("no cgroup v1 equivalent"));
        assert!(io_max_to_v1("7:3 riops=x")
            .unwrap_err()
            .contains("not a number"));
    }
}
