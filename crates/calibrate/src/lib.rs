//! blklab-calibrate: `blklab calibrate TARGET` — measure a real block device
//! (or a file, through a loop device) with the installed fio, fit blklab's
//! device models to it, print a scenario `[[device]]` block and the
//! `io.cost.model` line, and with `--validate` run the same fio jobs on the
//! device and on the model side by side.
//!
//! Exit statuses: 0 calibrated (and validated), 3 validation missed (some
//! figure off by more than 15 %), 4 this host cannot run it (not root, no
//! fio or losetup, target refused), 1 anything else (including SIGINT).

pub mod drift;
pub mod error;
pub mod facts;
pub mod fio_run;
pub mod fit;
pub mod host;
pub mod loop_fit;
pub mod plan;
pub mod render;
pub mod sim_run;
pub mod stall_fit;
pub mod target;
pub mod validate;
pub mod watch;

#[cfg(test)]
mod quiet_fixture_tests;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};

use blklab_host::resources::{interrupted, Resources};
use error::{CalError, Result};
use facts::DeviceFacts;
use fio_run::{run_fio, FioEnv};
use fit::{Measured, ModelKind};
use plan::Job;
use target::TargetKind;
use validate::Row;
use watch::Watch;

/// The command's options.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub target: PathBuf,
    /// Short runs (3 s per measurement, 4 s per validation job): ≤ 2 minutes.
    pub quick: bool,
    pub validate: bool,
    /// Allow writing to a block device (and using one with a signature).
    pub destructive: bool,
    /// Show the fio command behind each figure.
    pub verbose: bool,
    /// Run every fio inside this cgroup directory (its cgroup.procs).
    pub cgroup: Option<PathBuf>,
    /// Force the model of the `[[device]]` block (default: ssd, or cloud
    /// when the device is rate-capped).
    pub model: Option<ModelKind>,
}

/// What a calibration produced.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub facts: DeviceFacts,
    pub device_block: String,
    pub io_cost_model: String,
    pub chosen: ModelKind,
    pub validation: Option<Vec<Row>>,
    /// The device re-measured before each validation job (`drift`).
    pub device_checks: Vec<drift::DeviceCheck>,
    /// Everything printed on stdout.
    pub report: String,
    pub wall_s: f64,
}

impl Outcome {
    pub fn validation_passed(&self) -> bool {
        self.validation
            .as_ref()
            .is_none_or(|rows| rows.iter().all(Row::pass))
    }
}

/// Run the command; print the report (stdout) and errors (stderr); return
/// the exit status.
pub fn main(o: &Options) -> u8 {
    match calibrate(o) {
        Ok(out) => {
            print!("{}", out.report);
            if out.validation_passed() {
                0
            } else {
                let changed = out.device_checks.iter().filter(|c| c.changed()).count();
                eprintln!(
                    "blklab calibrate: validation missed (some figure is off by more than 15 %){}",
                    if changed > 0 {
                        format!(
                            "; the device itself changed by more than 15 % since calibration ({changed} of {} looks at it: the lines under the table)",
                            out.device_checks.len()
                        )
                    } else {
                        String::new()
                    }
                );
                3
            }
        }
        Err(e) => {
            eprintln!("blklab calibrate: {e}");
            e.exit_status()
        }
    }
}

fn progress(total_s: u64) -> ProgressBar {
    // Hidden when stderr is not a terminal (indicatif checks).
    let pb = ProgressBar::new(total_s);
    pb.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} s  {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    pb
}

struct Runner<'a> {
    env: FioEnv<'a>,
    pb: ProgressBar,
    done_s: u64,
    /// One line per fio run that was repeated because this host stalled
    /// during it (blklab_host::stall), for the report.
    stalls: Vec<String>,
}

/// A fio run during which this host stalled (a nice-0 thread woke more
/// than `blklab_host::stall::STALL_MS` late: a CPU descheduled or hogged)
/// measures the stall, not the device: it is run again, at most this many
/// times in all; the last run is kept when every one stalled.
const STALL_TRIES: usize = 3;

impl Runner<'_> {
    /// `j` measured: run again while the host stalls (`STALL_TRIES`).
    fn run(&mut self, j: &Job) -> Result<fio_run::FioResult> {
        self.run_tries(j, STALL_TRIES)
    }

    /// `j` run once whatever the host does (the precondition: it writes
    /// the data, its figures are not used).
    fn run_once(&mut self, j: &Job) -> Result<fio_run::FioResult> {
        self.run_tries(j, 1)
    }

    fn run_tries(&mut self, j: &Job, n_tries: usize) -> Result<fio_run::FioResult> {
        if interrupted() {
            return Err(CalError::Interrupted(format!(
                "{}: before fio run {}",
                self.env.target.display(),
                j.id
            )));
        }
        self.pb.set_message(j.id.clone());
        let base = self.done_s;
        let pb = self.pb.clone();
        let cap = j.runtime_s as f64;
        let tries = blklab_host::stall::until_unstalled(n_tries, || {
            run_fio(&self.env, &j.id, &j.args, j.runtime_s, &|t: f64| {
                pb.set_position(base + t.min(cap) as u64)
            })
        })?;
        if n_tries > 1 && (tries.stalls.len() > 1 || !tries.clean()) {
            self.stalls.push(format!(
                "{}: the host stalled (latest wake-ups {} ms); {}",
                j.id,
                blklab_host::stall::late_list(&tries.stalls),
                if tries.clean() {
                    "run again until a run was free of stalls"
                } else {
                    "every run stalled: the last is used, its figures include the stalls"
                }
            ));
        }
        let r = tries.value;
        self.done_s += j.runtime_s as u64 + 1;
        self.pb.set_position(self.done_s);
        Ok(r)
    }
}

/// Calibrate: every check, the measurements, the fits, the validation.
pub fn calibrate(o: &Options) -> Result<Outcome> {
    let t0 = Instant::now();
    blklab_host::resources::install_signal_handlers();
    let tpath = &o.target;
    if !host::is_root() {
        return Err(CalError::HostCannotRun(format!(
            "{}: calibrate needs root (it opens block devices with O_DIRECT, changes their queue settings and attaches loop devices)",
            tpath.display()
        )));
    }
    fio_run::fio_version().map_err(CalError::HostCannotRun)?;
    if let Some(cg) = &o.cgroup {
        if !cg.join("cgroup.procs").exists() {
            return Err(CalError::HostCannotRun(format!(
                "--cgroup {}: no cgroup.procs there (expected a cgroup directory)",
                cg.display()
            )));
        }
    }
    let target = target::resolve(tpath, o.destructive).map_err(|(refused, m)| {
        if refused {
            CalError::HostCannotRun(m)
        } else {
            CalError::Failed(m)
        }
    })?;
    let mut res = Resources::reporting("blklab calibrate");
    let mut report = String::new();
    let (dev, writes) = match target.kind {
        TargetKind::File => {
            if !host::have("losetup", "--version") {
                return Err(CalError::HostCannotRun(format!(
                    "{}: a file target is measured through a loop device, and losetup is not installed",
                    tpath.display()
                )));
            }
            let (dev, dio) = host::attach_loop(tpath, &mut res)?;
            report.push_str(&format!(
                "# {} measured through {} (a loop device over it, direct I/O {}; removed afterwards)\n",
                tpath.display(),
                dev.display(),
                if dio { "on" } else { "OFF: the backing filesystem refused it" }
            ));
            (dev, true)
        }
        TargetKind::Block => (tpath.clone(), o.destructive),
    };
    let (name, devno) = target::block_identity(&dev).map_err(CalError::Failed)?;
    host::quiet_queue(&name, &mut res)
        .map_err(|e| CalError::Failed(format!("{}: {e}", tpath.display())))?;
    let facts = DeviceFacts::read(&name, &devno).map_err(CalError::Failed)?;
    // The host's CPUs, and whether the device is a loop over a file whose
    // pages are in memory: then its speed is CPU time (the loop worker's
    // and fio's).
    let host_facts = fit::HostFacts {
        cpus: Some(
            host::online_cpus(std::path::Path::new(host::ONLINE_CPUS)).map_err(CalError::Failed)?,
        ),
        loop_file: host::loop_file(&name),
    };
    let file = target
        .file_id
        .map(|id| (tpath.as_path(), id, target.size_bytes));
    let watch = Watch::new(file, &devno).map_err(CalError::Failed)?;

    // Every job (measurement, validation, preconditioning) uses the same span.
    let span = plan::span_bytes(o.quick, facts.size_bytes);
    let mut jobs = plan::plan(o.quick, span, writes);
    let mut vjobs = if o.validate {
        validate::jobs(o.quick, writes)
    } else {
        Vec::new()
    };
    // the device looked at again after the validation jobs (`drift`)
    let mut refs: Vec<Job> = vjobs
        .first()
        .map(|_| drift::reference_job())
        .into_iter()
        .collect();
    if span < facts.size_bytes {
        plan::limit_to(&mut jobs, span);
        plan::limit_to(&mut vjobs, span);
        plan::limit_to(&mut refs, span);
    }
    // Only where calibrate may write: a file, or a device with --destructive.
    let pre = writes.then(|| plan::precondition(span));
    let pre_s = pre.as_ref().map_or(0, |p| p.runtime_s + 1);
    let budget = pre_s + plan::budget_s(&jobs) + plan::budget_s(&vjobs) + plan::budget_s(&refs);
    eprintln!(
        "blklab calibrate: {} ({name}, {devno}, {} MiB){}: {}{} fio jobs of {} s{}; time budget about {} s",
        tpath.display(),
        facts.size_bytes >> 20,
        if writes { "" } else { ", read-only (no --destructive)" },
        match &pre {
            Some(_) => format!(
                "one write of {} MiB to precondition it (about {pre_s} s at {} MB/s) + ",
                span >> 20,
                plan::PRECONDITION_BPS / 1_000_000
            ),
            None => String::new(),
        },
        jobs.len(),
        plan::runtime_s(o.quick),
        if vjobs.is_empty() {
            String::new()
        } else {
            format!(
                " + {} validation jobs of {} s and a {} s look at the device",
                vjobs.len(),
                vjobs[0].runtime_s,
                refs.iter().map(|r| r.runtime_s).sum::<u32>()
            )
        },
        budget
    );
    let mut runner = Runner {
        env: FioEnv {
            device: &dev,
            cgroup: o.cgroup.as_deref(),
            watch: &watch,
            target: tpath,
        },
        pb: progress(budget as u64),
        done_s: 0,
        stalls: Vec::new(),
    };
    if let Some(p) = &pre {
        let t = Instant::now();
        runner.run_once(p).inspect_err(|_| runner.pb.abandon())?;
        report.push_str(&format!(
            "# preconditioned: the first {} MiB written once in {:.1} s before measuring (measurement and validation read written data)\n",
            span >> 20,
            t.elapsed().as_secs_f64()
        ));
    } else {
        report.push_str("# not preconditioned (read-only): reads see the device as it is\n");
    }
    if span < facts.size_bytes {
        report.push_str(&format!(
            "# every job stays in the first {} MiB (--quick)\n",
            span >> 20
        ));
    }
    let mut measured: Measured = BTreeMap::new();
    for j in &jobs {
        let r = runner.run(j);
        let r = r.inspect_err(|_| runner.pb.abandon())?;
        measured.insert(j.id.clone(), r);
    }
    report.push_str(&render::measurements(&jobs, &measured, o.verbose));

    let sim = |m: &blklab_core::drivers::ModelSpec, h: &fit::HostCosts, j: &Job| {
        sim_run::simulate(&facts.device(m.clone(), h.idle_wake_ns), h.cpu, &j.args)
    };
    let f = fit::fit(&measured, &facts, o.model, &sim, &jobs, host_facts)
        .map_err(|e| CalError::Failed(format!("{}: fitting the models: {e}", tpath.display())))?;
    for n in &f.notes {
        report.push_str(&format!("# {n}\n"));
    }
    let block = render::device_block(&facts, &f, f.chosen);
    let line = f.io_cost_model(&devno);
    let costs_line = if f.host_for(f.chosen).cpu.cpus.nr > 0 {
        "# [host]: this host's CPUs and fio's costs (submit_ns, reap_ns are [run]'s keys; set them in one place)".to_string()
    } else {
        format!(
            "# [run] submit_ns = {}   (fio's slat on a busy device here; put it in the scenario's [run])\n# this host has {} CPUs ([host] cpus); the model above was fitted on the free host (cpus = 0)",
            f.host.cpu.submit_ns,
            f.host_cpus.unwrap_or(0)
        )
    };
    report.push_str(&format!(
        "\n# blklab calibrate {}{}: a scenario [[device]] block ({} model)\n{costs_line}\n{block}\n# io.cost.model (iocost_coef_gen.py's six numbers):\n{line}\n",
        tpath.display(),
        if o.quick { " --quick" } else { "" },
        match f.chosen {
            ModelKind::Ssd => "ssd",
            ModelKind::Linear => "linear",
            ModelKind::Cloud => "cloud",
            ModelKind::Loop => "loop worker on the host's CPUs",
        },
    ));

    let validation = if o.validate {
        // What is validated is the block as printed, read back.
        let (dev_cfg, block_cpu) = sim_run::block_from_toml(&block).map_err(|e| {
            CalError::Failed(format!(
                "{}: the printed block does not load: {e}",
                tpath.display()
            ))
        })?;
        let mut rows = Vec::new();
        let mut checks = Vec::new();
        // the device at the start (the QD1 job) and the end (the reference
        // job) against the measurement's QD1
        let then = measured.get(plan::LAT_READ_4K);
        for j in &vjobs {
            let real = runner.run(j).inspect_err(|_| runner.pb.abandon())?;
            if let (Some(then), true) = (then, j.id == drift::START_JOB) {
                checks.push(drift::DeviceCheck::new("start", then, &real));
            }
            let simr = sim_run::simulate(&dev_cfg, block_cpu.unwrap_or(f.host.cpu), &j.args)
                .map_err(|e| {
                    CalError::Failed(format!("{}: simulating {}: {e}", tpath.display(), j.id))
                })?;
            if o.verbose {
                report.push_str(&format!("# {}: {}\n", j.id, real.command));
            }
            rows.extend(validate::compare(&j.id, &real, &simr));
        }
        if let (Some(then), Some(reference)) = (then, refs.first()) {
            let now = runner.run(reference).inspect_err(|_| runner.pb.abandon())?;
            checks.push(drift::DeviceCheck::new("end", then, &now));
        }
        report.push_str("\n# validation: the same fio jobs on the device and on the model\n");
        report.push_str(&drift::table(&rows, &checks));
        if let Some(sum) = drift::summary(&rows, &checks) {
            report.push_str(&sum);
            report.push('\n');
        }
        Some((rows, checks))
    } else {
        None
    };
    let (validation, device_checks) = match validation {
        Some((rows, checks)) => (Some(rows), checks),
        None => (None, Vec::new()),
    };
    runner.pb.finish_and_clear();
    for n in &runner.stalls {
        report.push_str(&format!("# {n}\n"));
    }
    drop(runner);
    res.release();
    if !res.problems.is_empty() {
        return Err(CalError::Failed(format!(
            "{}: cleanup failed: {}",
            tpath.display(),
            res.problems.join("; ")
        )));
    }
    let wall_s = t0.elapsed().as_secs_f64();
    report.push_str(&format!("# wall time {wall_s:.1} s\n"));
    Ok(Outcome {
        facts,
        device_block: block,
        io_cost_model: line,
        chosen: f.chosen,
        validation,
        device_checks,
        report,
        wall_s,
    })
}
