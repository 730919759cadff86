//! Running the installed fio on the target and reading its JSON (fio's
//! `--output-format=json`, parsed with serde_json). While fio runs, the
//! interruption flag and the target's liveness are polled every 50 ms; either
//! stops fio (SIGKILL to its pid; fio holds no state worth saving) and turns
//! into an error naming the fio run.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::error::{CalError, Result};
use crate::watch::Watch;
use blklab_host::resources::interrupted;

/// fio's default clat percentile list (`--percentile_list` unset), the one
/// its JSON reports.
pub const FIO_PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

/// One direction's figures (fio's `read`, `write` or `mixed` object).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DirFigures {
    pub iops: f64,
    pub bw_bytes_per_s: f64,
    pub ios: u64,
    pub slat_mean_ns: f64,
    pub clat_mean_ns: f64,
    pub clat_min_ns: f64,
    pub clat_max_ns: f64,
    /// (percentile, ns), fio's list.
    pub clat_pct_ns: Vec<(f64, f64)>,
}

impl DirFigures {
    /// The clat at the listed percentile closest to `p` (ns); 0 without samples.
    pub fn pct_ns(&self, p: f64) -> f64 {
        self.clat_pct_ns
            .iter()
            .min_by(|a, b| (a.0 - p).abs().total_cmp(&(b.0 - p).abs()))
            .map(|x| x.1)
            .unwrap_or(0.0)
    }
}

/// One fio run's result.
#[derive(Debug, Clone, Default)]
pub struct FioResult {
    pub read: DirFigures,
    pub write: DirFigures,
    /// `unified_rw_reporting=mixed`: both directions merged by fio.
    pub mixed: Option<DirFigures>,
    /// fio's `usr_cpu + sys_cpu`: the share of one CPU (in %) the job's
    /// thread used over its runtime; near 100 the job was CPU-bound.
    pub cpu_pct: f64,
    /// The full fio command line that produced it (shown with --verbose).
    pub command: String,
}

/// Measurements by job id.
pub type Measured = std::collections::BTreeMap<String, FioResult>;

impl FioResult {
    /// The direction that did the I/O (or fio's merged one when present).
    pub fn main(&self) -> &DirFigures {
        match &self.mixed {
            Some(m) => m,
            None if self.write.ios > self.read.ios => &self.write,
            None => &self.read,
        }
    }
}

fn num(v: &Value, key: &str) -> f64 {
    v.get(key).and_then(Value::as_f64).unwrap_or(0.0)
}

fn dir_figures(d: &Value) -> DirFigures {
    let clat = d.get("clat_ns").cloned().unwrap_or(Value::Null);
    let mut pct: Vec<(f64, f64)> = clat
        .get("percentile")
        .and_then(Value::as_object)
        .map(|o| {
            o.iter()
                .filter_map(|(k, v)| Some((k.parse::<f64>().ok()?, v.as_f64()?)))
                .collect()
        })
        .unwrap_or_default();
    pct.sort_by(|a, b| a.0.total_cmp(&b.0));
    DirFigures {
        iops: num(d, "iops"),
        bw_bytes_per_s: num(d, "bw_bytes"),
        ios: num(d, "total_ios") as u64,
        slat_mean_ns: d.get("slat_ns").map(|s| num(s, "mean")).unwrap_or(0.0),
        clat_mean_ns: num(&clat, "mean"),
        clat_min_ns: num(&clat, "min"),
        clat_max_ns: num(&clat, "max"),
        clat_pct_ns: pct,
    }
}

/// The first job of a fio JSON document (fio may print notices before it).
pub fn parse_fio_json(text: &str) -> std::result::Result<FioResult, String> {
    let start = text
        .find('{')
        .ok_or_else(|| format!("fio printed no JSON document (output: {})", head(text)))?;
    let doc: Value = serde_json::from_str(&text[start..])
        .map_err(|e| format!("fio's JSON does not parse ({e}): {}", head(&text[start..])))?;
    let job = doc
        .get("jobs")
        .and_then(|j| j.get(0))
        .ok_or("fio's JSON has no jobs[0]")?;
    if let Some(err) = job.get("error").and_then(Value::as_i64) {
        if err != 0 {
            return Err(format!("fio reports error {err} for the job"));
        }
    }
    Ok(FioResult {
        read: job.get("read").map(dir_figures).unwrap_or_default(),
        write: job.get("write").map(dir_figures).unwrap_or_default(),
        mixed: job.get("mixed").map(dir_figures),
        cpu_pct: num(job, "usr_cpu") + num(job, "sys_cpu"),
        command: String::new(),
    })
}

fn head(s: &str) -> String {
    let t: String = s.chars().take(300).collect();
    t.trim().to_string()
}

/// `fio --version`, or why fio cannot run.
pub fn fio_version() -> std::result::Result<String, String> {
    let o = Command::new("fio").arg("--version").output().map_err(|e| {
        format!("fio is not installed or not runnable ({e}); install it (apt-get install fio)")
    })?;
    Ok(String::from_utf8_lossy(&o.stdout).trim().to_string())
}

/// How to run fio: where, in which cgroup, watching what.
pub struct FioEnv<'a> {
    pub device: &'a Path,
    /// A cgroup directory whose `cgroup.procs` fio joins (v1 or v2).
    pub cgroup: Option<&'a Path>,
    pub watch: &'a Watch,
    /// Shown in errors: the user's target.
    pub target: &'a Path,
}

/// Run fio with `job_args` (the shared job options, as the simulator parses
/// them) on the device; `runtime_s` bounds the wait (plus a margin).
pub fn run_fio(
    env: &FioEnv,
    id: &str,
    job_args: &str,
    runtime_s: u32,
    on_tick: &dyn Fn(f64),
) -> Result<FioResult> {
    let mut args = blklab_fio::split_cmdline(job_args)
        .map_err(|e| CalError::Failed(format!("fio job {id}: {e}")))?;
    args.push(format!("--filename={}", env.device.display()));
    args.push("--output-format=json".into());
    let command = format!("fio {}", args.join(" "));
    let mut cmd = match env.cgroup {
        Some(dir) => {
            // The shell joins the group, then becomes fio (same pid).
            let mut c = Command::new("sh");
            c.arg("-c")
                .arg("echo $$ > \"$0\" && exec \"$@\"")
                .arg(dir.join("cgroup.procs"))
                .arg("fio");
            c
        }
        None => Command::new("fio"),
    };
    // fio forks a process per job: its own process group lets a stop reach
    // all of them, not only the parent.
    cmd.args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let what = |m: String| format!("{}: fio run {id} ({command}): {m}", env.target.display());
    let child = cmd
        .spawn()
        .map_err(|e| CalError::Failed(what(format!("cannot start: {e}"))))?;
    let limit = Duration::from_secs(runtime_s as u64 + 30);
    let (out, err, status) = wait(child, env.watch, limit, on_tick).map_err(|e| match e {
        Stop::Interrupted => CalError::Interrupted(what("SIGINT/SIGTERM; fio stopped".into())),
        Stop::Gone(m) => {
            CalError::Failed(what(format!("the target disappeared: {m}; fio stopped")))
        }
        Stop::Timeout => CalError::Failed(what(format!(
            "fio did not finish within {} s",
            runtime_s + 30
        ))),
    })?;
    if !status.success() {
        return Err(CalError::Failed(what(format!(
            "fio exited with {status}: {}",
            head(&err)
        ))));
    }
    let mut r = parse_fio_json(&out).map_err(|e| CalError::Failed(what(e)))?;
    if r.main().ios == 0 {
        return Err(CalError::Failed(what(
            "fio completed no I/O (expected a positive total_ios)".into(),
        )));
    }
    r.command = command;
    Ok(r)
}

enum Stop {
    Interrupted,
    Gone(String),
    Timeout,
}

fn wait(
    mut child: Child,
    watch: &Watch,
    limit: Duration,
    on_tick: &dyn Fn(f64),
) -> std::result::Result<(String, String, std::process::ExitStatus), Stop> {
    let mut so = child.stdout.take().expect("piped");
    let mut se = child.stderr.take().expect("piped");
    // The readers report through channels so that a job process that never
    // lets go of the pipes (stuck on a device that went away) cannot hold
    // the calibration up once fio is stopped.
    let (otx, orx) = mpsc::channel();
    let (etx, erx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut a = String::new();
        let _ = so.read_to_string(&mut a);
        let _ = otx.send(a);
    });
    std::thread::spawn(move || {
        let mut b = String::new();
        let _ = se.read_to_string(&mut b);
        let _ = etx.send(b);
    });
    let start = Instant::now();
    let stop = loop {
        if let Ok(Some(st)) = child.try_wait() {
            // fio's job processes have exited before their parent does
            let out = orx.recv_timeout(PIPE_GRACE).unwrap_or_default();
            let err = erx.recv_timeout(PIPE_GRACE).unwrap_or_default();
            return Ok((out, err, st));
        }
        if interrupted() {
            break Stop::Interrupted;
        }
        if let Err(m) = watch.check() {
            break Stop::Gone(m);
        }
        if start.elapsed() > limit {
            break Stop::Timeout;
        }
        on_tick(start.elapsed().as_secs_f64());
        std::thread::sleep(Duration::from_millis(50));
    };
    // SIGKILL to fio's whole process group (its job processes too)
    if let Some(pid) = rustix::process::Pid::from_raw(child.id() as i32) {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
    let _ = child.kill();
    let _ = child.wait();
    let _ = orx.recv_timeout(PIPE_GRACE);
    let _ = erx.recv_timeout(PIPE_GRACE);
    Err(stop)
}

/// How long the output of a finished or stopped fio may take to drain.
const PIPE_GRACE: Duration = Duration::from_secs(5);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fio_json_is_read() {
        let doc = r#"note: something
{"fio version":"fio-3.33","jobs":[{"jobname":"x","error":0,
 "usr_cpu":12.5,"sys_cpu":80.25,
 "read":{"iops":1234.5,"bw_bytes":5056512,"total_ios":6000,
   "slat_ns":{"mean":3000.0},
   "clat_ns":{"min":40000,"max":900000,"mean":52000.5,
     "percentile":{"50.000000":50176,"99.000000":99840,"1.000000":41000}}},
 "write":{"iops":0,"bw_bytes":0,"total_ios":0,"clat_ns":{"mean":0}}}]}"#;
        let r = parse_fio_json(doc).unwrap();
        assert_eq!(r.read.iops, 1234.5);
        assert_eq!(r.read.ios, 6000);
        assert_eq!(r.cpu_pct, 92.75);
        assert_eq!(r.read.pct_ns(99.0), 99840.0);
        assert_eq!(r.read.pct_ns(50.0), 50176.0);
        assert_eq!(r.read.clat_pct_ns[0].0, 1.0);
        assert_eq!(r.main().clat_mean_ns, 52000.5);
        assert!(r.mixed.is_none());
        assert!(parse_fio_json("fio: bad option")
            .unwrap_err()
            .contains("no JSON"));
        assert!(parse_fio_json("{\"jobs\":[{\"error\":5}]}")
            .unwrap_err()
            .contains("error 5"));
    }
}
