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
use blklab_core::sim::switches::Switches;
use blklab_core::sim::time::{parse_duration, Hz, NSEC_PER_SEC};
use blklab_core::{DeviceConfig, JobConfig, SimConfig, TimedWrite};
use serde::Deserialize;
use toml::Spanned;

use crate::limits;
use crate::span::Source;

mod device;
mod host;
mod job;

use job::RawJob;
mod stacking;

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
    /// The host's CPUs and their costs (scenario/host.rs).
    #[serde(default)]
    host: Option<host::RawHost>,
    /// Run phases (crate::phases).
    #[serde(default)]
    phase: Vec<crate::phases::RawPhase>,
}

#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
struct RawRun {
    seed: Option<u64>,
    hz: Option<Spanned<u32>>,
    /// Hard stop for the whole run ("12s").
    duration: Option<Spanned<String>>,
    /// CPU time of a submit call that does not block (fio's slat floor), ns.
    submit_ns: Option<Spanned<u64>>,
    /// From device completion to fio's reap, ns.
    reap_ns: Option<Spanned<u64>>,
    /// Host noise: mean lateness of a fio task's wake-up from a timed
    /// sleep (exponential), ns; 0 = an exact host (default).
    wake_jitter_ns: Option<Spanned<u64>>,
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
    /// /sys/block/DEV/queue/wbt_lat_usec: "default" (the kernel's boot-time
    /// wbt) or a number written after boot; absent = no wbt.
    wbt_lat_usec: Option<Spanned<toml::Value>>,
    /// /sys/block/DEV/queue/write_cache ("write back" or "write through").
    write_cache: Option<Spanned<String>>,
    /// The submitter's cost of waking the driver's idle worker thread (ns).
    idle_wake_ns: Option<Spanned<u64>>,
}

#[derive(Deserialize, Debug, Clone)]
#[serde(untagged)]
enum FileValue {
    One(String),
    Lines(Vec<String>),
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct RawWrite {
    at: Spanned<String>,
    cgroup: Spanned<String>,
    file: Spanned<String>,
    value: Spanned<String>,
    /// The run phase whose start `at` counts from (crate::phases).
    phase: Option<Spanned<String>>,
}

pub use crate::kfiles::CGROUP_FILES;

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
    /// The run phases (empty: one run); see crate::phases.
    pub phases: Vec<crate::phases::Phase>,
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

/// Sizes in a scenario ("512G", "4k", "1048576"): the page cache's parser,
/// so `[pagecache] memory` and a device's size read alike.
pub use blklab_core::mm::parse_size;

impl Scenario {
    pub fn load(path: &Path) -> Result<Scenario, ScenarioErrors> {
        let text = blklab_input::read_text(path, "scenario file", blklab_input::MAX_SCENARIO_BYTES)
            .map_err(|e| ScenarioErrors(vec![e.to_string()]))?;
        Scenario::parse(&text, path)
    }

    pub fn parse(text: &str, path: &Path) -> Result<Scenario, ScenarioErrors> {
        let name = path.display().to_string();
        let src = Source { name: &name, text };
        let raw: RawScenario = match toml::from_str(text) {
            Ok(r) => r,
            Err(e) => {
                let at = e.span().map(|s| src.at(&s)).unwrap_or_else(|| name.clone());
                let msg = format!("{at}: {}", e.message());
                return Err(ScenarioErrors(vec![blklab_input::message(&msg)]));
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
        // every message may quote the input: escaped and capped here, once
        let safe = |v: Vec<String>| v.iter().map(|m| blklab_input::message(m)).collect();
        if b.errs.is_empty() {
            let mut sc = sc.expect("no errors means a scenario");
            sc.warnings = safe(b.warnings);
            Ok(sc)
        } else {
            Err(ScenarioErrors(safe(b.errs)))
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
    /// Problems found by another module, at their place when they have one.
    fn problems(&mut self, problems: Vec<crate::phases::Problem>) {
        for (span, msg) in problems {
            match span {
                Some(s) => self.err::<()>(&s, msg),
                None => {
                    self.errs.push(format!("{}: {msg}", self.src.name));
                    None
                }
            };
        }
    }

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
            match parse_duration(d.get_ref(), NSEC_PER_SEC)
                .and_then(|v| limits::duration("run.duration", v))
            {
                Ok(v) => Some(v),
                Err(e) => self.err(&d.span(), format!("run.duration: {e}")),
            }
        });
        let cpu = self.host(&raw.run, raw.host.as_ref());

        // devices
        let mut devices: Vec<DeviceConfig> = Vec::new();
        if raw.device.len() > limits::MAX_DEVICES {
            let span = raw.device[limits::MAX_DEVICES].name.span();
            self.err::<()>(
                &span,
                format!(
                    "{} devices; at most {}",
                    raw.device.len(),
                    limits::MAX_DEVICES
                ),
            );
        }
        for d in raw.device.iter().take(limits::MAX_DEVICES) {
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
        self.stacking(&raw, &mut devices);
        if raw.device.is_empty() {
            self.errs.push(format!(
                "{}: no [[device]]: a scenario needs at least one device",
                self.src.name
            ));
        }

        // cgroups
        let mut cgroups = CgroupTree::new();
        // normalised path -> the section's own spelling, to catch "/a" and "/a/"
        let mut sections: BTreeMap<String, &String> = BTreeMap::new();
        for (cpath, files) in &raw.cgroup {
            let span = files.values().next().map(|v| v.span()).unwrap_or(0..0);
            let shown = blklab_input::excerpt(cpath);
            let id = match limits::ensure_cgroup(&mut cgroups, cpath) {
                Ok(id) => id,
                Err(e) => {
                    self.err::<()>(&span, format!("[cgroup.\"{shown}\"]: {e}"));
                    continue;
                }
            };
            let norm = cgroups.get(id).path.clone();
            if let Some(first) = sections.insert(norm.clone(), cpath) {
                self.err::<()>(
                    &span,
                    format!(
                        "[cgroup.\"{shown}\"] and [cgroup.\"{}\"] are the same cgroup {norm}: write its files in one section",
                        blklab_input::excerpt(first)
                    ),
                );
                continue;
            }
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
                let mut lines: Vec<String> = match val.get_ref() {
                    FileValue::One(s) => s.lines().map(str::to_string).collect(),
                    FileValue::Lines(v) => v.clone(),
                };
                // blank lines between writes are layout; a value with no
                // line at all is an empty write, which the kernel refuses
                lines.retain(|l| !l.trim().is_empty());
                if lines.is_empty() {
                    lines.push(String::new());
                }
                for l in lines {
                    if let Err(e) = crate::kfiles::check(f, &l, &devices, id == 0) {
                        self.err::<()>(
                            &val.span(),
                            format!(
                                "{norm}{}{f}: \"{}\": {}",
                                if id == 0 { "" } else { "/" },
                                blklab_input::excerpt(&l),
                                e.for_file(f)
                            ),
                        );
                    } else {
                        cgroups.write_file(id, f, &l);
                    }
                }
            }
        }

        // jobs
        let mut jobs: Vec<JobConfig> = Vec::new();
        let mut invocations = Vec::new();
        let mut job_refs = Vec::new();
        for (ji, j) in raw.job.iter().enumerate() {
            let devs = (&devices[..], raw.device.len());
            let inv = self.job(ji, j, base, devs, &mut cgroups, &mut jobs);
            job_refs.push(crate::phases::JobRef {
                phase: j.phase.as_ref(),
                invocation: inv.is_some().then_some(invocations.len()),
            });
            invocations.extend(inv);
        }
        if raw.job.is_empty() {
            self.errs.push(format!(
                "{}: no [[job]]: a scenario needs at least one fio job",
                self.src.name
            ));
        }

        // timed writes
        let mut writes = Vec::new();
        let mut write_spans = Vec::new();
        let run_end = crate::timed_writes::latest_end(time_limit, &jobs);
        // with phases, the writes are the phases' (crate::phases)
        let phased = !raw.phase.is_empty() || raw.write.iter().any(|w| w.phase.is_some());
        let inv_jobs: Vec<Vec<usize>> = invocations
            .iter()
            .map(|i: &Invocation| i.jobs.clone())
            .collect();
        let write_refs: Vec<crate::phases::WriteRef> = raw
            .write
            .iter()
            .map(|w| crate::phases::WriteRef {
                fields: [&w.at, &w.cgroup, &w.file, &w.value],
                phase: w.phase.as_ref(),
            })
            .collect();
        let phases = crate::phases::resolve(
            &raw.phase,
            &job_refs,
            &inv_jobs,
            &write_refs,
            (&devices, &cgroups, &jobs),
        )
        .unwrap_or_else(|problems| {
            self.problems(problems);
            Vec::new()
        });
        for w in raw.write.iter().filter(|_| !phased) {
            let (at, cg) = match crate::timed_writes::check(
                [&w.at, &w.cgroup, &w.file, &w.value],
                &devices,
                &cgroups,
                run_end,
            ) {
                Ok(v) => v,
                Err((span, msg)) => {
                    self.err::<()>(&span, msg);
                    continue;
                }
            };
            let f = w.file.get_ref();
            write_spans.push(w.value.span());
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
        let sc = Scenario {
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
            phases,
        };
        let problems = crate::phases::check_writes(&sc.config, &sc.phases);
        if !problems.is_empty() {
            self.problems(problems);
            return None;
        }
        // the writes as the run applies them, each meeting the state the
        // writes before it left (the same check `run` and `check` make)
        if !sc.config.writes.is_empty() {
            match blklab_core::Sim::check_writes(&sc.config) {
                Ok(bad) => {
                    for (i, e) in bad {
                        let w = &sc.config.writes[i];
                        self.err::<()>(
                            &write_spans[i],
                            format!(
                                "write to {}/{}: \"{}\": {}",
                                sc.config.cgroups.get(w.cgroup).path.trim_end_matches('/'),
                                w.file,
                                blklab_input::excerpt(&w.value),
                                e.for_file(&w.file)
                            ),
                        );
                    }
                }
                Err(e) => self.errs.push(format!("{}: {e}", self.src.name)),
            }
            if !self.errs.is_empty() {
                return None;
            }
        }
        Some(sc)
    }
}

/// The queue depth of a replay job given no fio options.
pub const DEFAULT_REPLAY_IODEPTH: u32 = 1024;
