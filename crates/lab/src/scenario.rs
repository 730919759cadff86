//! The scenario file (TOML): devices, the cgroup tree with the kernel's own
//! file strings, fio jobs (job files, inline job text or fio command lines),
//! timed cgroup writes and run settings. See docs/scenario.md.
//!
//! Every problem found is reported with the file, line and column of the
//! offending value and what was expected; all problems are collected before
//! giving up, so `blklab check` lists them all at once.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use blklab_core::block::blk_cgroup::CgroupTree;
use blklab_core::drivers::{DeviceInfo, ModelSpec};
use blklab_core::sim::switches::Switches;
use blklab_core::sim::time::{parse_duration, Hz, NSEC_PER_SEC};
use blklab_core::{CpuCosts, DeviceConfig, JobConfig, SimConfig, TimedWrite};
use blklab_fio::JobSpec;
use serde::Deserialize;
use toml::Spanned;

use crate::span::Source;

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    run: RawRun,
    #[serde(default)]
    device: Vec<RawDevice>,
    #[serde(default)]
    cgroup: BTreeMap<String, BTreeMap<Spanned<String>, Spanned<FileValue>>>,
    #[serde(default)]
    job: Vec<RawJob>,
    #[serde(default)]
    write: Vec<RawWrite>,
    /// The page-cache model's parameters (memory size, dirty limits, readahead).
    #[serde(default)]
    pagecache: Option<Spanned<toml::Value>>,
}

#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
struct RawRun {
    seed: Option<u64>,
    hz: Option<Spanned<u32>>,
    /// Hard stop for the whole run ("12s").
    duration: Option<Spanned<String>>,
    /// CPU time of a submit call that does not block (fio's slat floor), ns.
    submit_ns: Option<u64>,
    /// From device completion to fio's reap, ns.
    reap_ns: Option<u64>,
    /// Host noise: mean lateness of a fio task's wake-up from a timed
    /// sleep (exponential), ns; 0 = an exact host (default).
    wake_jitter_ns: Option<u64>,
    #[serde(default)]
    switches: BTreeMap<String, Spanned<String>>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct RawDevice {
    name: Spanned<String>,
    devno: Spanned<String>,
    model: Spanned<toml::Value>,
    scheduler: Option<Spanned<String>>,
    nr_requests: Option<u32>,
    queue_depth: Option<u32>,
    nr_hw_queues: Option<u32>,
    max_sectors_kb: Option<u32>,
    logical_block_size: Option<u32>,
    rotational: Option<bool>,
    capacity: Option<Spanned<String>>,
    #[serde(default)]
    iosched: BTreeMap<String, Spanned<toml::Value>>,
}

#[derive(Deserialize, Debug, Clone)]
#[serde(untagged)]
enum FileValue {
    One(String),
    Lines(Vec<String>),
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct RawJob {
    /// Label for the summary table (default: the fio job name).
    label: Option<String>,
    cgroup: Option<Spanned<String>>,
    device: Option<Spanned<String>>,
    /// A fio command line (`--name=x --rw=randread ...`).
    cmdline: Option<Spanned<String>>,
    /// A fio job file, relative to the scenario file.
    job_file: Option<Spanned<String>>,
    /// fio job-file text inline.
    job_ini: Option<Spanned<String>>,
    /// Where to write this invocation's fio JSON (like fio's --output).
    output: Option<String>,
    /// A `blklab record` file whose I/O stream (of `replay_cgroup`) is the workload.
    replay: Option<Spanned<String>>,
    /// The recorded cgroup to replay (its path in the recording).
    replay_cgroup: Option<Spanned<String>>,
    /// The recorded device, when the cgroup used several.
    replay_device: Option<Spanned<String>>,
    /// "original" (recorded instants) or "asfast" (as fast as the queue depth allows).
    timing: Option<Spanned<String>>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct RawWrite {
    at: Spanned<String>,
    cgroup: Spanned<String>,
    file: Spanned<String>,
    value: Spanned<String>,
}

/// Cgroup files a scenario may write, and whether the simulator models them.
pub const CGROUP_FILES: &[(&str, &str)] = &[
    ("io.max", "blk-throttle limits"),
    ("io.weight", "blk-iocost weight"),
    ("io.cost.model", "blk-iocost cost model (root only)"),
    ("io.cost.qos", "blk-iocost QoS (root only)"),
    ("io.prio.class", "blk-ioprio policy"),
    ("io.iotrack.lat_thresh", "blk-iotrack latency thresholds"),
    ("io.latency", "blk-iolatency target"),
    ("io.bfq.weight", "bfq group weight (cgroup v2)"),
    ("blkio.bfq.weight", "bfq group weight (cgroup v1 syntax)"),
];

/// One fio invocation of the scenario (a `[[job]]` entry): its jobs run together.
#[derive(Debug, Clone)]
pub struct Invocation {
    pub label: Option<String>,
    pub output: Option<PathBuf>,
    /// Global options (for the JSON's "global options").
    pub global_options: Vec<(String, String)>,
    /// Indices into SimConfig::jobs of this invocation's job instances.
    pub jobs: Vec<usize>,
}

/// A checked scenario, ready to simulate.
#[derive(Debug, Clone)]
pub struct Scenario {
    pub path: PathBuf,
    pub description: Option<String>,
    pub config: SimConfig,
    pub invocations: Vec<Invocation>,
    /// Things that do not stop the run but the user should know.
    pub warnings: Vec<String>,
    /// Jobs whose workload is a recorded stream.
    pub replays: Vec<crate::replay_input::ReplayJob>,
}

/// All the problems of a scenario.
#[derive(Debug)]
pub struct ScenarioErrors(pub Vec<String>);

impl std::fmt::Display for ScenarioErrors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}
impl std::error::Error for ScenarioErrors {}

/// Parse a size like "512G", "4k", "1048576" (powers of 1024).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("'{s}' is not a size (e.g. 512G, 4k, 1048576)"))?;
    let mult: u64 = match unit
        .trim()
        .to_ascii_lowercase()
        .trim_end_matches('b')
        .trim_end_matches('i')
    {
        "" => 1,
        "k" => 1 << 10,
        "m" => 1 << 20,
        "g" => 1 << 30,
        "t" => 1 << 40,
        "p" => 1 << 50,
        _ => return Err(format!("'{s}': unknown size unit (use k, m, g, t or p)")),
    };
    n.checked_mul(mult)
        .ok_or_else(|| format!("size '{s}' is too large"))
}

impl Scenario {
    pub fn load(path: &Path) -> Result<Scenario, ScenarioErrors> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| ScenarioErrors(vec![format!("{}: cannot read: {e}", path.display())]))?;
        Scenario::parse(&text, path)
    }

    pub fn parse(text: &str, path: &Path) -> Result<Scenario, ScenarioErrors> {
        let name = path.display().to_string();
        let src = Source { name: &name, text };
        let raw: RawScenario = match toml::from_str(text) {
            Ok(r) => r,
            Err(e) => {
                let at = e.span().map(|s| src.at(&s)).unwrap_or_else(|| name.clone());
                return Err(ScenarioErrors(vec![format!("{at}: {}", e.message())]));
            }
        };
        let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let mut b = Builder {
            src,
            errs: Vec::new(),
            warnings: Vec::new(),
            replays: Vec::new(),
        };
        let sc = b.build(raw, &base, path);
        if b.errs.is_empty() {
            let mut sc = sc.expect("no errors means a scenario");
            sc.warnings = b.warnings;
            Ok(sc)
        } else {
            Err(ScenarioErrors(b.errs))
        }
    }
}

struct Builder<'a> {
    src: Source<'a>,
    errs: Vec<String>,
    warnings: Vec<String>,
    replays: Vec<crate::replay_input::ReplayJob>,
}

impl Builder<'_> {
    fn err<T>(&mut self, span: &std::ops::Range<usize>, msg: impl AsRef<str>) -> Option<T> {
        self.errs
            .push(format!("{}: {}", self.src.at(span), msg.as_ref()));
        None
    }

    fn build(&mut self, raw: RawScenario, base: &Path, path: &Path) -> Option<Scenario> {
        // run
        let hz = match &raw.run.hz {
            None => Hz(250),
            Some(h) if [100, 250, 300, 1000].contains(h.get_ref()) => Hz(*h.get_ref()),
            Some(h) => {
                let v = *h.get_ref();
                self.err::<()>(
                    &h.span(),
                    format!("hz = {v}: expected 100, 250, 300 or 1000 (CONFIG_HZ)"),
                );
                Hz(250)
            }
        };
        let mut switches = Switches::default();
        for (k, v) in &raw.run.switches {
            if let Err(e) = switches.set(k, v.get_ref()) {
                self.err::<()>(&v.span(), format!("[run.switches] {e}"));
            }
        }
        let time_limit = raw.run.duration.as_ref().and_then(|d| {
            match parse_duration(d.get_ref(), NSEC_PER_SEC) {
                Ok(v) => Some(v),
                Err(e) => self.err(&d.span(), format!("run.duration: {e}")),
            }
        });
        let cpu = CpuCosts {
            submit_ns: raw.run.submit_ns.unwrap_or(CpuCosts::default().submit_ns),
            reap_ns: raw.run.reap_ns.unwrap_or(CpuCosts::default().reap_ns),
            wake_jitter_ns: raw.run.wake_jitter_ns.unwrap_or(0),
        };

        // devices
        let mut devices: Vec<DeviceConfig> = Vec::new();
        for d in &raw.device {
            if let Some(dc) = self.device(d) {
                if devices.iter().any(|x| x.info.name == dc.info.name) {
                    self.err::<()>(
                        &d.name.span(),
                        format!("device name '{}' is used twice", dc.info.name),
                    );
                } else if devices
                    .iter()
                    .any(|x| (x.info.major, x.info.minor) == (dc.info.major, dc.info.minor))
                {
                    self.err::<()>(
                        &d.devno.span(),
                        format!("device number {} is used twice", dc.info.devno()),
                    );
                } else {
                    devices.push(dc);
                }
            }
        }
        if raw.device.is_empty() {
            self.errs.push(format!(
                "{}: no [[device]]: a scenario needs at least one device",
                self.src.name
            ));
        }

        // cgroups
        let mut cgroups = CgroupTree::new();
        for (cpath, files) in &raw.cgroup {
            let id = match cgroups.ensure(cpath) {
                Ok(id) => id,
                Err(e) => {
                    let span = files.values().next().map(|v| v.span()).unwrap_or(0..0);
                    self.err::<()>(&span, format!("[cgroup.\"{cpath}\"]: {e}"));
                    continue;
                }
            };
            for (fname, val) in files {
                let f = fname.get_ref();
                if !CGROUP_FILES.iter().any(|(n, _)| n == f) {
                    let known: Vec<&str> = CGROUP_FILES.iter().map(|x| x.0).collect();
                    self.err::<()>(
                        &fname.span(),
                        format!("unknown cgroup file '{f}' (known: {})", known.join(", ")),
                    );
                    continue;
                }
                if (f == "io.cost.model" || f == "io.cost.qos") && id != 0 {
                    self.err::<()>(
                        &fname.span(),
                        format!("{f} exists only in the root cgroup (\"/\")"),
                    );
                    continue;
                }
                if (f == "io.bfq.weight" || f == "blkio.bfq.weight")
                    && !devices.iter().any(|d| d.scheduler == "bfq")
                {
                    // The kernel accepts a default weight whatever the
                    // devices' schedulers; it just has no effect.
                    self.warnings.push(format!(
                        "{}: {f} has no effect: no device of this scenario uses the bfq scheduler",
                        self.src.at(&fname.span())
                    ));
                }
                if f == "io.latency" {
                    self.warnings.push(format!(
                        "{}: io.latency is not simulated yet (blk-iolatency)",
                        self.src.at(&fname.span())
                    ));
                }
                let lines: Vec<String> = match val.get_ref() {
                    FileValue::One(s) => s.lines().map(str::to_string).collect(),
                    FileValue::Lines(v) => v.clone(),
                };
                for l in lines {
                    if l.trim().is_empty() {
                        continue;
                    }
                    if let Err(e) = crate::kfiles::check(f, &l, &devices) {
                        self.err::<()>(&val.span(), format!("{cpath}/{f}: \"{l}\": {e}"));
                    } else {
                        cgroups.write_file(id, f, &l);
                    }
                }
            }
        }

        // jobs
        let mut jobs: Vec<JobConfig> = Vec::new();
        let mut invocations = Vec::new();
        for (ji, j) in raw.job.iter().enumerate() {
            if let Some(inv) = self.job(ji, j, base, &devices, &mut cgroups, &mut jobs) {
                invocations.push(inv);
            }
        }
        if raw.job.is_empty() {
            self.errs.push(format!(
                "{}: no [[job]]: a scenario needs at least one fio job",
                self.src.name
            ));
        }

        // timed writes
        let mut writes = Vec::new();
        for w in &raw.write {
            let at = match parse_duration(w.at.get_ref(), NSEC_PER_SEC) {
                Ok(v) => v,
                Err(e) => {
                    self.err::<()>(&w.at.span(), format!("write.at: {e}"));
                    continue;
                }
            };
            let f = w.file.get_ref();
            if !CGROUP_FILES.iter().any(|(n, _)| n == f) {
                self.err::<()>(&w.file.span(), format!("unknown cgroup file '{f}'"));
                continue;
            }
            if let Err(e) = crate::kfiles::check(f, w.value.get_ref(), &devices) {
                self.err::<()>(
                    &w.value.span(),
                    format!("{f}: \"{}\": {e}", w.value.get_ref()),
                );
                continue;
            }
            let cg = match cgroups.ensure(w.cgroup.get_ref()) {
                Ok(c) => c,
                Err(e) => {
                    self.err::<()>(&w.cgroup.span(), e);
                    continue;
                }
            };
            writes.push(TimedWrite {
                at,
                cgroup: cg,
                file: f.clone(),
                value: w.value.get_ref().clone(),
            });
        }

        let pagecache = match &raw.pagecache {
            None => blklab_core::mm::PageCacheParams::default(),
            Some(v) => {
                let parsed: Result<blklab_core::mm::PageCacheParams, toml::de::Error> =
                    v.get_ref().clone().try_into();
                match parsed
                    .map_err(|e| e.message().trim().to_string())
                    .and_then(|p| {
                        p.validate()?;
                        Ok(p)
                    }) {
                    Ok(p) => p,
                    Err(e) => {
                        self.err::<()>(&v.span(), format!("[pagecache]: {e}"));
                        blklab_core::mm::PageCacheParams::default()
                    }
                }
            }
        };

        if !self.errs.is_empty() {
            return None;
        }
        Some(Scenario {
            path: path.to_path_buf(),
            description: raw.description,
            config: SimConfig {
                seed: raw.run.seed.unwrap_or(1),
                hz,
                switches,
                cgroups,
                devices,
                jobs,
                cpu,
                time_limit,
                writes,
                pagecache,
            },
            invocations,
            warnings: Vec::new(),
            replays: std::mem::take(&mut self.replays),
        })
    }

    fn device(&mut self, d: &RawDevice) -> Option<DeviceConfig> {
        let name = d.name.get_ref().clone();
        if name.is_empty() || name.contains(char::is_whitespace) || name.contains('/') {
            return self.err(
                &d.name.span(),
                format!("device name '{name}' must be a single word (like sda or nullb0)"),
            );
        }
        let (major, minor) = match blklab_core::sim::kerr::split_devno(d.devno.get_ref()) {
            Ok((mm, "")) => mm,
            _ => {
                return self.err(
                    &d.devno.span(),
                    format!(
                        "devno '{}': expected MAJ:MIN, e.g. \"8:0\"",
                        d.devno.get_ref()
                    ),
                )
            }
        };
        let model: ModelSpec = match d.model.get_ref().clone().try_into() {
            Ok(m) => m,
            Err(e) => {
                let e: toml::de::Error = e;
                return self.err(
                    &d.model.span(),
                    format!("device {name} model: {}", e.message().trim()),
                );
            }
        };
        let built = match model.build() {
            Ok(m) => m,
            Err(e) => return self.err(&d.model.span(), format!("device {name} model: {e}")),
        };
        let scheduler = d
            .scheduler
            .as_ref()
            .map(|s| s.get_ref().clone())
            .unwrap_or_else(|| "none".into());
        let queue_depth = d.queue_depth.unwrap_or_else(|| built.default_queue_depth());
        if queue_depth == 0 {
            return self.err(
                &d.name.span(),
                format!("device {name}: queue_depth must be at least 1"),
            );
        }
        // blk-mq: without a scheduler nr_requests is the tag set depth; with one,
        // the kernel sets 2 * min(depth, BLKDEV_DEFAULT_RQ = 128).
        let default_nr = if scheduler == "none" {
            queue_depth
        } else {
            2 * queue_depth.min(128)
        };
        let nr_requests = d.nr_requests.unwrap_or(default_nr);
        if nr_requests == 0 {
            return self.err(
                &d.name.span(),
                format!("device {name}: nr_requests must be at least 1"),
            );
        }
        let capacity = match &d.capacity {
            None => 1u64 << 40,
            Some(c) => match parse_size(c.get_ref()) {
                Ok(v) if v >= 1 << 20 => v,
                Ok(_) => return self.err(&c.span(), "capacity must be at least 1M"),
                Err(e) => return self.err(&c.span(), e),
            },
        };
        let lbs = d.logical_block_size.unwrap_or(512);
        if ![512, 1024, 2048, 4096].contains(&lbs) {
            return self.err(
                &d.name.span(),
                format!(
                    "device {name}: logical_block_size {lbs}: expected 512, 1024, 2048 or 4096"
                ),
            );
        }
        let info = DeviceInfo {
            name: name.clone(),
            major,
            minor,
            rotational: d.rotational.unwrap_or(false),
            nr_requests,
            queue_depth,
            nr_hw_queues: d.nr_hw_queues.unwrap_or(1),
            max_sectors_kb: d.max_sectors_kb.unwrap_or(1280),
            logical_block_size: lbs,
            capacity_bytes: capacity,
        };
        let mut iosched = Vec::new();
        for (k, v) in &d.iosched {
            let s = match v.get_ref() {
                toml::Value::String(s) => s.clone(),
                toml::Value::Integer(i) => i.to_string(),
                _ => {
                    return self.err(
                        &v.span(),
                        format!("iosched.{k}: expected a number or string"),
                    )
                }
            };
            iosched.push((k.clone(), s));
        }
        // The scheduler and its tunables are checked by building them.
        if let Err(e) = blklab_core::block::elevator::build(&scheduler, &info).and_then(|mut e| {
            for (k, v) in &iosched {
                e.set_tunable(k, v)?;
            }
            Ok(())
        }) {
            let span = d
                .scheduler
                .as_ref()
                .map(|s| s.span())
                .unwrap_or(d.name.span());
            return self.err(&span, format!("device {name}: {e}"));
        }
        Some(DeviceConfig {
            info,
            model,
            scheduler,
            iosched,
        })
    }

    fn job(
        &mut self,
        ji: usize,
        j: &RawJob,
        base: &Path,
        devices: &[DeviceConfig],
        cgroups: &mut CgroupTree,
        jobs: &mut Vec<JobConfig>,
    ) -> Option<Invocation> {
        let sources = [
            j.cmdline.is_some(),
            j.job_file.is_some(),
            j.job_ini.is_some(),
        ]
        .iter()
        .filter(|x| **x)
        .count();
        let where_ = format!("{}: [[job]] #{}", self.src.name, ji + 1);
        if j.replay.is_none() {
            for (k, v) in [
                ("replay_cgroup", &j.replay_cgroup),
                ("replay_device", &j.replay_device),
                ("timing", &j.timing),
            ] {
                if let Some(v) = v {
                    return self.err(
                        &v.span(),
                        format!("{k} is only for a job with replay = \"FILE\""),
                    );
                }
            }
        }
        if sources != 1 && !(j.replay.is_some() && sources == 0) {
            self.errs.push(format!(
                "{where_}: give exactly one of cmdline, job_file or job_ini{}",
                if j.replay.is_some() {
                    " (or none: a replay job has fio defaults)"
                } else {
                    ""
                }
            ));
            return None;
        }
        let specs: Vec<JobSpec> = if let (Some(r), 0) = (&j.replay, sources) {
            // a replay job without fio options: libaio, direct, a deep queue so
            // that the recorded arrival times, not fio, pace the stream
            let name = j.label.clone().unwrap_or_else(|| "replay".into());
            let cmd = format!(
                "--name={name} --ioengine=libaio --direct=1 --rw=randrw --bs=4k --iodepth={DEFAULT_REPLAY_IODEPTH}"
            );
            match blklab_fio::parse::split_cmdline(&cmd)
                .and_then(|a| blklab_fio::parse::parse_cmdline(&a))
            {
                Ok(s) => s,
                Err(e) => return self.err(&r.span(), format!("replay job name: {e}")),
            }
        } else if let Some(c) = &j.cmdline {
            let parsed = blklab_fio::parse::split_cmdline(c.get_ref())
                .and_then(|a| blklab_fio::parse::parse_cmdline(&a));
            match parsed {
                Ok(s) => s,
                Err(e) => return self.err(&c.span(), format!("fio command line: {e}")),
            }
        } else if let Some(f) = &j.job_file {
            let p = base.join(f.get_ref());
            let text = match std::fs::read_to_string(&p) {
                Ok(t) => t,
                Err(e) => {
                    return self.err(
                        &f.span(),
                        format!("cannot read job file {}: {e}", p.display()),
                    )
                }
            };
            match blklab_fio::parse::parse_job_file(&text, &p.display().to_string()) {
                Ok(s) => s,
                Err(e) => return self.err(&f.span(), format!("{e}")),
            }
        } else {
            let t = j.job_ini.as_ref().expect("one source");
            let origin = format!(
                "{} (job_ini at line {})",
                self.src.name,
                self.src.line_col(t.span().start).0
            );
            match blklab_fio::parse::parse_job_file(t.get_ref(), &origin) {
                Ok(s) => s,
                Err(e) => return self.err(&t.span(), format!("{e}")),
            }
        };
        if specs.is_empty() {
            self.errs
                .push(format!("{where_}: the fio input defines no job"));
            return None;
        }
        let dev = match (&j.device, devices.len()) {
            (None, 1) => 0,
            (None, _) => {
                self.errs.push(format!(
                    "{where_}: several devices: say which with device = \"NAME\""
                ));
                return None;
            }
            (Some(d), _) => match devices.iter().position(|x| &x.info.name == d.get_ref()) {
                Some(i) => i,
                None => {
                    let names: Vec<&str> = devices.iter().map(|x| x.info.name.as_str()).collect();
                    return self.err(
                        &d.span(),
                        format!(
                            "no device '{}' (devices: {})",
                            d.get_ref(),
                            names.join(", ")
                        ),
                    );
                }
            },
        };
        // a replay job runs in the recorded cgroup unless told otherwise
        let cg_path = j
            .cgroup
            .as_ref()
            .or(j.replay_cgroup.as_ref().filter(|_| j.replay.is_some()))
            .map(|c| c.get_ref().clone())
            .unwrap_or_else(|| "/".into());
        let cg = match cgroups.ensure(&cg_path) {
            Ok(c) => c,
            Err(e) => return self.err(&j.cgroup.as_ref().expect("given").span(), e),
        };
        for s in &specs {
            if !s.ignored.is_empty() {
                self.warnings.push(format!(
                    "{where_}: job {}: options with no effect in the simulator: {}",
                    s.name,
                    s.ignored.join(", ")
                ));
            }
        }
        let mut inv = Invocation {
            label: j.label.clone(),
            output: j.output.as_ref().map(PathBuf::from),
            global_options: specs[0].global_options.clone(),
            jobs: Vec::new(),
        };
        let replay = match &j.replay {
            Some(r) => Some(self.replay_stream(r, j, base, &specs)?),
            None => None,
        };
        let gids = blklab_fio::parse::assign_groupids(&specs);
        for (s, groupid) in specs.into_iter().zip(gids) {
            for clone in 0..s.numjobs.max(1) {
                inv.jobs.push(jobs.len());
                jobs.push(JobConfig {
                    spec: s.clone(),
                    clone,
                    cgroup: cg,
                    dev: dev as u16,
                    groupid,
                });
            }
        }
        if let Some((replay, skipped_other)) = replay {
            if skipped_other > 0 {
                self.warnings.push(format!(
                    "{where_}: {skipped_other} recorded I/Os that are neither reads nor writes (flush, discard) are not replayed"
                ));
            }
            self.replays.push(crate::replay_input::ReplayJob {
                job: inv.jobs[0],
                replay,
                skipped_other,
            });
        }
        Some(inv)
    }

    /// The recorded stream of a replay job, checked.
    fn replay_stream(
        &mut self,
        r: &Spanned<String>,
        j: &RawJob,
        base: &Path,
        specs: &[JobSpec],
    ) -> Option<(blklab_core::workload::replay::Replay, usize)> {
        if specs.len() != 1 || specs[0].numjobs > 1 {
            return self.err(
                &r.span(),
                "a replay job is one fio job (no numjobs, no second [section])",
            );
        }
        let Some(cg) = &j.replay_cgroup else {
            return self.err(
                &r.span(),
                "replay needs replay_cgroup = \"/path\": the recorded cgroup whose I/O to replay",
            );
        };
        let timing = match &j.timing {
            None => blklab_core::workload::replay::ReplayTiming::Original,
            Some(t) => match crate::replay_input::timing(t.get_ref()) {
                Ok(v) => v,
                Err(e) => return self.err(&t.span(), e),
            },
        };
        let path = base.join(r.get_ref());
        let dev = j.replay_device.as_ref().map(|d| d.get_ref().as_str());
        let (ios, other) = match crate::replay_input::load_stream(&path, cg.get_ref(), dev) {
            Ok(v) => v,
            Err(e) => return self.err(&r.span(), format!("replay {}: {e}", path.display())),
        };
        match blklab_core::workload::replay::Replay::new(ios, timing) {
            Ok(rp) => Some((rp, other)),
            Err(e) => self.err(&r.span(), format!("replay {}: {e}", path.display())),
        }
    }
}

/// The queue depth of a replay job given no fio options.
pub const DEFAULT_REPLAY_IODEPTH: u32 = 1024;
