//! The `blklab` command line: argument parsing and printing around the
//! laboratory library (blklab-lab), the real-kernel harness
//! (blklab-conformance) and host observation (blklab-host).

mod bench;
mod conformance_args;
mod conformance_cmd;
mod hostcmd;
mod progress;
mod sched_split;
mod sweep_cmd;

use conformance_args::ConformanceArgs;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{anyhow, bail, Context, Result};
use blklab_core::sim::switches::SWITCHES;
use blklab_lab::scenario::Scenario;
use blklab_lab::{compare, overrides, phase_report, report, runner};
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "blklab",
    version,
    about = "A laboratory for Linux block-layer cgroup I/O control"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Simulate a scenario and print fio's output and a summary table.
    Run {
        scenario: PathBuf,
        /// normal (fio's text + summary), json (fio JSON per fio invocation), summary (the table only)
        #[arg(long = "output-format", default_value = "normal")]
        output_format: String,
        /// Write the output here instead of stdout (written whole, or not at all).
        #[arg(long)]
        output: Option<PathBuf>,
        /// Override the scenario's seed.
        #[arg(long)]
        seed: Option<u64>,
        /// Run as kernel NAME does: every switch from its profile (`blklab switches --kernel NAME`), before --set.
        #[arg(long = "kernel-profile", value_name = "NAME")]
        kernel_profile: Option<String>,
        /// Set a kernel-behaviour switch or a scenario key (KEY=VALUE: `blk.split=off`, `cgroup./cgB.io.max=8:0 riops=100`, `job.LABEL.bs=8k`; docs/sweep-tune.md), repeatable.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Write controller trace events (kernel tracepoint text format) to FILE.
        #[arg(long)]
        trace: Option<PathBuf>,
        /// After the run, read the --trace FILE's scheduler events (a host with CPUs) as a QEMU guest's are read, and print fio's and the kworkers' share of the CPU (docs/fidelity/cpus.md).
        #[arg(long = "sched-split", requires = "trace")]
        sched_split: bool,
        /// The --sched-split window, FROM..TO ms of simulated time (default: the whole run).
        #[arg(
            long = "sched-window",
            value_name = "FROM..TO",
            requires = "sched_split"
        )]
        sched_window: Option<String>,
        /// After the normal or summary output, print every cgroup's io.stat at the end of the run.
        #[arg(long = "io-stat")]
        io_stat: bool,
        /// Print the iotrack tool's report every INTERVAL_MS of simulated time, then the run's totals.
        #[arg(long, value_name = "INTERVAL_MS")]
        iotrack: Option<u64>,
        /// The iotrack report's extended layout (the tool's -x).
        #[arg(short = 'x', long = "extended", requires = "iotrack")]
        extended: bool,
        /// Write the iotrack report's JSON document to FILE (instead of appending it to the JSON output).
        #[arg(long = "iotrack-json", value_name = "FILE", requires = "iotrack")]
        iotrack_json: Option<PathBuf>,
        /// At the end, print every cgroup's io.stat and io.iotrack.stat and every device's stat file.
        #[arg(long = "show-files")]
        show_files: bool,
        /// Write the controller time series (CSV, one file per table; docs/report.md) into DIR.
        #[arg(long, value_name = "DIR")]
        timeseries: Option<PathBuf>,
        /// The interval of the per-interval time series and report plots, ms.
        #[arg(long = "interval-ms", default_value_t = 100, value_name = "MS")]
        interval_ms: u64,
        /// Write a self-contained HTML report (plots, summary, scenario) to FILE.
        #[arg(long, value_name = "FILE.html")]
        report: Option<PathBuf>,
        /// Where the jobs' fio log files (write_bw_log, ...) go; fio writes them in its working directory.
        #[arg(long = "fio-log-dir", default_value = ".", value_name = "DIR")]
        fio_log_dir: PathBuf,
    },
    /// Per-cgroup block I/O latency on this host (the iotrack report from the kernel's blk tracer; root).
    /// Exit status: 0 done (also when the reader of the output goes away),
    /// 1 failure, 2 bad arguments, 3 not root, 4 no block tracing.
    Top {
        /// Block device to watch, `vda` or `/dev/vda` (repeatable; default: every device that can be traced).
        #[arg(long = "device", value_name = "DEV")]
        device: Vec<String>,
        /// Cgroup to show after "/" (repeatable, path below the cgroup root; default: every one seen).
        #[arg(long = "cgroup", value_name = "PATH")]
        cgroup: Vec<String>,
        /// Report interval, ms (default 1000; not with --from, which has the recorded period).
        #[arg(long, value_name = "MS")]
        interval: Option<u64>,
        /// Extended layout (iotrack -x).
        #[arg(short = 'x', long = "extended")]
        extended: bool,
        /// Stop after N intervals.
        #[arg(long, value_name = "N")]
        count: Option<u64>,
        /// Report from a `blklab record` file instead of tracing (one interval per recorded tick).
        #[arg(long, value_name = "FILE")]
        from: Option<PathBuf>,
    },
    /// Record this host's block I/O events (per cgroup) to a file for `top --from` or a replay job (root).
    Record {
        /// Block device to record, `vda` or `/dev/vda` (repeatable).
        #[arg(long = "device", value_name = "DEV", required = true)]
        device: Vec<String>,
        /// Seconds to record (default: until Ctrl-C).
        #[arg(long, value_name = "S")]
        duration: Option<f64>,
        /// The recording file.
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: PathBuf,
        /// Period of the /sys/block/DEV/stat samples (= the intervals of `top --from`), ms.
        #[arg(long, default_value_t = 1000, value_name = "MS")]
        interval: u64,
    },
    /// Run a scenario under each value of kernel-behaviour switches, side by side.
    Compare {
        scenario: PathBuf,
        /// KEY=A,B[,C]: the values to compare (repeat for a cross product).
        #[arg(long, required = true, value_name = "KEY=A,B")]
        variant: Vec<String>,
        #[arg(long)]
        seed: Option<u64>,
        /// Every switch from kernel NAME's profile, before --set and the variants.
        #[arg(long = "kernel-profile", value_name = "NAME")]
        kernel_profile: Option<String>,
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Also print each variant's full summary table.
        #[arg(long)]
        tables: bool,
        /// Write a self-contained HTML report with every variant overlaid on each plot.
        #[arg(long, value_name = "FILE.html")]
        report: Option<PathBuf>,
        /// The interval of the report's per-interval plots, ms.
        #[arg(long = "interval-ms", default_value_t = 100, value_name = "MS")]
        interval_ms: u64,
    },
    /// Validate scenarios and report every problem with file, line and expectation.
    /// Exit status: 0 all valid, 2 a scenario is invalid (as `run` and
    /// `compare` exit on an invalid scenario), 1 another failure.
    Check { scenarios: Vec<PathBuf> },
    /// List the kernel-behaviour switches (with --kernel, that kernel's profile).
    Switches {
        /// A kernel profile: 6.1, 6.12, 6.18, mainline (debian-6.1 etc. also work).
        #[arg(long, value_name = "NAME")]
        kernel: Option<String>,
    },
    /// Measure the simulator's speed (simulated I/Os per wall second) and memory.
    Bench(bench::Options),
    /// Run cases on the real kernel (loop devices, cgroups, fio) and in the simulator, side by side.
    ///
    /// Exit status: 0 every selected case ran and passed; 1 harness error;
    /// 3 a tolerance was missed; 4 the host cannot run any case (what is
    /// missing is listed); 5 no failure, but some cases are not runnable
    /// here (or not judged: the host stalled in every real run); 128+N
    /// interrupted by signal N (130 for Ctrl-C).
    Conformance(ConformanceArgs),
    /// Measure a real block device (or a file, through a loop device) with fio and fit a device model (root).
    Calibrate(CalibrateArgs),
    /// Run a scenario over a grid of parameters and seeds on every core; one CSV row per run.
    Sweep(sweep_cmd::SweepArgs),
    /// Search controller settings for targets (`tune iocost`: io.cost.qos).
    #[command(subcommand)]
    Tune(TuneCmd),
    /// List the cloud volume presets (`[device.model] kind = "cloud"`, `preset = ...`) with their figures.
    Presets,
}

#[derive(Subcommand)]
enum TuneCmd {
    /// io.cost.qos (and optionally the model's scale) for the protected cgroups' targets.
    Iocost(sweep_cmd::TuneIocostArgs),
}

#[derive(clap::Args)]
struct CalibrateArgs {
    /// A block device, or a regular file (your scratch file: it is written to).
    target: PathBuf,
    /// Short runs: done in about a minute and a half.
    #[arg(long)]
    quick: bool,
    /// Run the same fio jobs on the device and on the fitted model, side by side (exit 3 on a miss).
    #[arg(long)]
    validate: bool,
    /// Allow writing to a block device, and one with a filesystem signature.
    #[arg(long)]
    destructive: bool,
    /// Show the fio command behind each figure.
    #[arg(long)]
    verbose: bool,
    /// Run fio inside this cgroup directory (v1 or v2).
    #[arg(long, value_name = "DIR")]
    cgroup: Option<PathBuf>,
    /// The [[device]] block's model: auto (ssd, or cloud when rate-capped), ssd, linear, cloud.
    #[arg(long, default_value = "auto")]
    model: String,
}

/// Exit status of every command for input it refuses (an invalid scenario
/// or argument), as clap exits on a usage error: `check`, `run` and
/// `compare` agree on the same file. 1 is for everything else.
const EXIT_BAD_INPUT: u8 = 2;

/// An error in what the user gave (scenario, arguments): exit status 2.
#[derive(Debug)]
struct BadInput(String);

impl std::fmt::Display for BadInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for BadInput {}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match real_main(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("blklab: {e:#}");
            if e.downcast_ref::<BadInput>().is_some() {
                ExitCode::from(EXIT_BAD_INPUT)
            } else {
                ExitCode::from(1)
            }
        }
    }
}

/// Print to stdout; a reader that went away (`blklab ... | head`) ends the
/// output quietly instead of failing.
fn emit(text: &str) -> Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}

/// A scenario the simulator cannot set up is invalid input, as `check`
/// reports it; other failures (a file that cannot be written) are not.
fn setup_error(e: anyhow::Error) -> anyhow::Error {
    if e.downcast_ref::<runner::SetupFailed>().is_some() {
        BadInput(format!("{e:#}")).into()
    } else {
        e
    }
}

/// Load a scenario with the command line's overrides (`overrides::load`:
/// `--set` takes switches and scenario keys such as `cgroup./cgB.io.max`).
/// Anything wrong with them is invalid input.
fn load(path: &Path, seed: Option<u64>, profile: Option<&str>, set: &[String]) -> Result<Scenario> {
    let sc = overrides::load(path, seed, profile, set).map_err(|e| BadInput(e.to_string()))?;
    for w in &sc.warnings {
        eprintln!("warning: {w}");
    }
    Ok(sc)
}

/// `--report FILE.html` of `run` and `compare`: the page for these runs.
fn write_report(
    sc: &Scenario,
    path: &Path,
    runs: &[(String, blklab_lab::timeseries::Series, Vec<(String, f64)>)],
    tables: Vec<(String, String)>,
) -> Result<()> {
    let text = std::fs::read_to_string(&sc.path)
        .with_context(|| format!("reading {}", sc.path.display()))?;
    let file = sc.path.file_name().unwrap_or_default().to_string_lossy();
    let mut notes: Vec<String> = sc.description.iter().cloned().collect();
    for s in SWITCHES {
        if runs
            .iter()
            .any(|(n, _, _)| n.contains(&format!("{}=", s.name)))
        {
            notes.push(format!("{}: {}", s.name, s.help));
        }
    }
    let input = blklab_lab::report_html::Input {
        title: format!(
            "blklab {}: {file}",
            if runs.len() > 1 { "compare" } else { "run" }
        ),
        notes,
        command: std::env::args().collect::<Vec<_>>().join(" "),
        scenario_path: sc.path.display().to_string(),
        scenario_text: text,
        variants: runs
            .iter()
            .map(
                |(name, series, phase_starts)| blklab_lab::report_html::Variant {
                    name: name.clone(),
                    series,
                    phase_starts: phase_starts.clone(),
                },
            )
            .collect(),
        tables,
    };
    let html = blklab_lab::report_html::render(&input)?;
    blklab_lab::report_html::write(path, &html)
}

fn real_main(cli: Cli) -> Result<ExitCode> {
    match cli.cmd {
        Cmd::Run {
            scenario,
            output_format,
            output,
            seed,
            kernel_profile,
            set,
            trace,
            sched_split,
            sched_window,
            io_stat,
            iotrack,
            extended,
            iotrack_json,
            show_files,
            timeseries,
            interval_ms,
            report: report_path,
            fio_log_dir,
        } => {
            let sc = load(&scenario, seed, kernel_profile.as_deref(), &set)?;
            let sched_window = sched_window
                .as_deref()
                .map(sched_split::parse_window)
                .transpose()?;
            let sink: Option<Box<dyn blklab_core::sim::trace::TraceSink>> = match &trace {
                Some(p) => Some(Box::new(
                    blklab_lab::trace_file::FileSink::create(p)
                        .with_context(|| format!("creating {}", p.display()))?,
                )),
                None => None,
            };
            if !["summary", "normal", "json"].contains(&output_format.as_str()) {
                return Err(BadInput(format!(
                    "--output-format {output_format}: expected normal, json or summary"
                ))
                .into());
            }
            let json = output_format == "json";
            let fio_logs = sc.config.jobs.iter().any(|j| j.spec.logs.any());
            let observe = timeseries.is_some() || report_path.is_some() || fio_logs;
            if iotrack == Some(0) {
                return Err(
                    BadInput("--iotrack: the interval must be at least 1 ms".into()).into(),
                );
            }
            if observe && interval_ms == 0 {
                return Err(
                    BadInput("--interval-ms: the interval must be at least 1 ms".into()).into(),
                );
            }
            let pb = progress::spinner(&scenario.display().to_string());
            let ts_opts = blklab_lab::timeseries::Options {
                interval_ns: interval_ms * 1_000_000,
                csv_dir: timeseries.clone(),
                keep: report_path.is_some(),
                fio_log_dir: Some(fio_log_dir.clone()),
            };
            let (out, iot, sim, series) = if observe || iotrack.is_some() || show_files {
                let obs = blklab_lab::observe::Observers {
                    timeseries: observe.then_some(&ts_opts),
                    iotrack: iotrack.map(|ms| blklab_lab::iotrack_run::IotrackOpts {
                        interval_ms: ms,
                        extended,
                    }),
                    keep_sim: show_files,
                };
                let o =
                    blklab_lab::observe::run(&sc, &sc.config, sink, &obs).map_err(setup_error)?;
                (o.out, o.iotrack, o.sim, o.series)
            } else {
                (
                    runner::run(&sc, &sc.config, sink).map_err(setup_error)?,
                    None,
                    None,
                    None,
                )
            };
            pb.finish_and_clear();
            let phase_warnings = runner::unapplied_phase_writes(&sc, &out);
            for w in runner::unapplied_writes(&sc.config, &out.result)
                .into_iter()
                .chain(phase_warnings)
            {
                eprintln!("warning: {w}");
            }
            let mut text = String::new();
            // the tool's interval blocks come first, as they would during a run;
            // with JSON output they go to stderr (where the tool prints them)
            if let Some(r) = &iot {
                let blocks = format!("{}{}", r.intervals_text(), r.totals_text());
                if json {
                    eprint!("{blocks}");
                } else {
                    text.push_str(&blocks);
                    text.push('\n');
                }
            }
            text.push_str(&match output_format.as_str() {
                "summary" => report::summary_table(&out.groups),
                "normal" => blklab_lab::output::normal(&sc, &out),
                _ => blklab_lab::output::json_all(&sc, &out),
            });
            if let Some(r) = &iot {
                let doc = serde_json::to_string_pretty(&r.json())? + "\n";
                match &iotrack_json {
                    Some(p) => blklab_lab::output::write_atomic(p, doc.as_bytes())?,
                    None if json => text.push_str(&doc),
                    None => {}
                }
            }
            if show_files {
                let files = blklab_lab::iotrack_run::show_files(sim.as_ref().expect("kept"));
                if json {
                    eprint!("{files}");
                } else {
                    text.push('\n');
                    text.push_str(&files);
                }
            }
            if io_stat {
                if json {
                    bail!("--io-stat: only with --output-format normal or summary");
                }
                text.push_str(&report::io_stat_section(&out.io_stat));
            }
            if !json {
                text.push_str(&report::pagecache_block(&report::pagecache_rows(
                    &sc,
                    &out.result,
                )));
                text.push_str(&report::wbt_block(&out.result));
            }
            if let (Some(p), Some(s)) = (&report_path, series) {
                let mut tables = vec![("Summary".to_string(), report::summary_table(&out.groups))];
                if !sc.phases.is_empty() {
                    tables.push(("Phases".to_string(), phase_report::all(&sc, &out)));
                }
                let starts = phase_report::starts(&out);
                write_report(&sc, p, &[("run".to_string(), s, starts)], tables)?;
            }
            blklab_lab::output::write_job_outputs(&sc, &out)?;
            if let (true, Some(p)) = (sched_split, &trace) {
                // the trace file is complete once the simulator is gone
                drop(sim);
                text.push('\n');
                text.push_str(&sched_split::report(&sc, p, sched_window)?);
            }
            match output {
                Some(p) => blklab_lab::output::write_atomic(&p, text.as_bytes())?,
                None => emit(&text)?,
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Compare {
            scenario,
            variant,
            seed,
            kernel_profile,
            set,
            tables,
            report: report_path,
            interval_ms,
        } => {
            let sc = load(&scenario, seed, kernel_profile.as_deref(), &set)?;
            let combos = compare::variants(&variant)?;
            let mut results = Vec::new();
            let mut pc_results = Vec::new();
            let mut all_series = Vec::new();
            let mut phase_text = String::new();
            let opts = blklab_lab::timeseries::Options {
                interval_ns: interval_ms * 1_000_000,
                csv_dir: None,
                keep: true,
                // one set of log files could not hold several variants
                fio_log_dir: None,
            };
            let pb = progress::variants(combos.len());
            // the variants run on every core; what they produced is printed
            // in variant order, so the output does not depend on the core count
            let slots = blklab_lab::par::map_ordered(
                &combos,
                0,
                &|c| {
                    if report_path.is_some() {
                        let (o, s) = compare::run_observed(&sc, c, &opts)?;
                        Ok((o, s))
                    } else {
                        Ok((compare::run(&sc, c)?, None))
                    }
                },
                &|_, _| pb.inc(1),
            );
            for (c, slot) in combos.iter().zip(slots) {
                let name = compare::name(c);
                // a variant that did not run comes after one that failed
                let Some(r) = slot else { break };
                let (out, series) = r?;
                if report_path.is_some() {
                    all_series.push((
                        name.clone(),
                        series.expect("kept"),
                        phase_report::starts(&out),
                    ));
                    if !sc.phases.is_empty() {
                        phase_text
                            .push_str(&format!("== {name} ==\n{}", phase_report::all(&sc, &out)));
                    }
                }
                if tables {
                    println!("== {name} ==");
                    println!("{}", report::summary_table(&out.groups));
                }
                let short = compare::short_name(c);
                pc_results.push((short.clone(), report::pagecache_rows(&sc, &out.result)));
                results.push((short, out.groups));
            }
            pb.finish_and_clear();
            let table = report::compare_table(&results);
            println!("{table}");
            let pct = report::pagecache_compare(&pc_results);
            if !pct.is_empty() {
                println!("{pct}");
            }
            if let Some(p) = &report_path {
                let mut tables = vec![("Comparison".to_string(), table)];
                if !pct.is_empty() {
                    tables.push(("Page cache".to_string(), pct));
                }
                if !phase_text.is_empty() {
                    tables.push(("Phases".to_string(), phase_text));
                }
                write_report(&sc, p, &all_series, tables)?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Check { scenarios } => {
            if scenarios.is_empty() {
                bail!("check: name at least one scenario file");
            }
            let mut bad = 0;
            for p in &scenarios {
                match Scenario::load(p) {
                    Ok(sc) => {
                        for w in &sc.warnings {
                            println!("warning: {w}");
                        }
                        match runner::build_sim(&sc.config, None) {
                            Ok(_) => println!(
                                "{}: ok ({} devices, {} cgroups, {} job instances)",
                                p.display(),
                                sc.config.devices.len(),
                                sc.config.cgroups.len(),
                                sc.config.jobs.len()
                            ),
                            Err(e) => {
                                bad += 1;
                                println!("{}: {e}", p.display());
                            }
                        }
                    }
                    Err(e) => {
                        bad += 1;
                        println!("{e}");
                    }
                }
            }
            Ok(if bad > 0 {
                ExitCode::from(EXIT_BAD_INPUT)
            } else {
                ExitCode::SUCCESS
            })
        }
        Cmd::Top {
            device,
            cgroup,
            interval,
            extended,
            count,
            from,
        } => Ok(hostcmd::top(
            device, cgroup, interval, extended, count, from,
        )),
        Cmd::Record {
            device,
            duration,
            output,
            interval,
        } => Ok(hostcmd::record(device, duration, &output, interval)),
        Cmd::Switches { kernel: Some(k) } => {
            let p = blklab_core::sim::switches::profile(&k).map_err(|e| anyhow!(e))?;
            println!("kernel profile {}: {}", p.name, p.describes);
            for (name, value) in p.values {
                println!("  {name} = {value}");
            }
            if !p.notes.is_empty() {
                println!("notes: {}", p.notes);
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Switches { kernel: None } => {
            for s in SWITCHES {
                println!(
                    "{}  [{}]  default: {}\n    {}\n",
                    s.name,
                    s.values.join(" | "),
                    s.default,
                    s.help
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Bench(o) => {
            bench::main(&o)?;
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Calibrate(a) => Ok(ExitCode::from(blklab_calibrate::main(
            &blklab_calibrate::Options {
                target: a.target,
                quick: a.quick,
                validate: a.validate,
                destructive: a.destructive,
                verbose: a.verbose,
                cgroup: a.cgroup,
                model: blklab_calibrate::fit::ModelKind::parse(&a.model).map_err(|e| anyhow!(e))?,
            },
        ))),
        Cmd::Sweep(a) => sweep_cmd::sweep(a).map(|_| ExitCode::SUCCESS),
        Cmd::Tune(TuneCmd::Iocost(a)) => sweep_cmd::tune_iocost(a).map(|_| ExitCode::SUCCESS),
        Cmd::Presets => {
            print!("{}", blklab_core::drivers::cloud::presets::table());
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Conformance(a) => Ok(ExitCode::from(conformance_cmd::main(
            &conformance_cmd::Args {
                cases: a.cases,
                list: a.list,
                repeat: a.repeat,
                quick: a.quick,
                markdown: a.markdown,
                sim_only: a.sim_only,
                sim: blklab_conformance::sim_request::SimRequest {
                    cpus: a.sim_cpus,
                    capped: a.sim_capped_disk,
                    loop_as: a.sim_loop,
                    wakeup_preempt: a.sim_wakeup_preempt,
                    kblockd_ns: a.sim_kblockd,
                    kthrotld: a.sim_kthrotld,
                    reap_every_call: a.sim_reap_every,
                    waker_ns: a.sim_waker,
                    tag_waker_ns: a.sim_tag_waker,
                    submit_wake_ns: a.sim_submit_wake.unwrap_or(0),
                    sched_features: a.sim_sched_features,
                    costs: a.sim_costs,
                },
                guest_files: a.guest_files,
                show: a.show,
                kernel: a.kernel,
                list_kernels: a.list_kernels,
                kconfig_fragment: a.kconfig_fragment,
            },
        ))),
    }
}
