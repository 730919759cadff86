//! `blklab sweep` and `blklab tune iocost`: argument handling and printing
//! around blklab-lab's sweep and tune modules, with a progress bar on stderr.

use std::path::{Path, PathBuf};

use anyhow::Result;
use blklab_lab::sweep::{cache::Cache, table, Plan, RunRow};
use blklab_lab::tune::{self, space::parse_list, space::Space, target::Target};
use indicatif::{ProgressBar, ProgressStyle};

/// What `sweep` and `tune` share: the scenario with `--set`s, the seeds,
/// the workers and the cache.
#[derive(clap::Args)]
pub struct Common {
    pub scenario: PathBuf,
    /// Seeds per combination: the scenario's seed, +1, ... (1 reproduces `blklab run`).
    #[arg(long, default_value_t = 1)]
    pub seeds: u64,
    /// Worker threads (default: every core).
    #[arg(long, default_value_t = 0)]
    pub jobs: usize,
    /// Override applied to every run (KEY=VALUE, as `run --set`), repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Keep each run's result in DIR; a sweep run again takes what is there (resume).
    #[arg(long, value_name = "DIR")]
    pub cache: Option<PathBuf>,
    /// No progress bar.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

#[derive(clap::Args)]
pub struct SweepArgs {
    #[command(flatten)]
    pub common: Common,
    /// KEY=V1,V2,...: a parameter and its values (repeat for a cross product; any `--set` key).
    #[arg(long = "param", value_name = "KEY=V1,V2")]
    pub param: Vec<String>,
    /// Write the CSV here (whole, or not at all) instead of stdout.
    #[arg(long, short = 'o')]
    pub output: Option<PathBuf>,
}

#[derive(clap::Args)]
pub struct TuneIocostArgs {
    #[command(flatten)]
    pub common: Common,
    /// A cgroup whose jobs must meet the targets (repeatable).
    #[arg(long, required = true, value_name = "CGROUP")]
    pub protect: Vec<String>,
    /// METRIC<=VALUE or METRIC>=VALUE for the protected jobs: p99<=5ms, iops>=190 (repeatable).
    #[arg(long, required = true, value_name = "TARGET")]
    pub target: Vec<String>,
    /// In a scenario with run phases ([[phase]]), judge only this phase's jobs (e.g. the measured phase after a warm-up).
    #[arg(long, value_name = "NAME")]
    pub phase: Option<String>,
    /// Candidate read latency percentiles.
    #[arg(long)]
    pub rpct: Option<String>,
    /// Candidate read latency targets, µs.
    #[arg(long)]
    pub rlat: Option<String>,
    /// Candidate write percentiles (default: the same as rpct, tied).
    #[arg(long)]
    pub wpct: Option<String>,
    /// Candidate write latency targets, µs (default: the same as rlat, tied).
    #[arg(long)]
    pub wlat: Option<String>,
    /// Candidate lower vrate bounds, percent.
    #[arg(long)]
    pub min: Option<String>,
    /// Candidate upper vrate bounds, percent.
    #[arg(long)]
    pub max: Option<String>,
    /// Also scale the io.cost.model's rates by each of these factors.
    #[arg(long)]
    pub scale: Option<String>,
    /// Write every candidate (the trade-off data) as CSV here.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Write the report (trade-off plot, Pareto table, verdict) as one HTML page here.
    #[arg(long, value_name = "FILE.html")]
    pub report: Option<PathBuf>,
}

fn bar(total: usize, quiet: bool) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(total as u64);
    pb.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} runs  {per_sec}  eta {eta}")
            .expect("a valid template"),
    );
    pb
}

fn run_plan(plan: Plan, c: &Common) -> Result<(Plan, Vec<RunRow>)> {
    let built = plan.build()?;
    let cache = c.cache.as_deref().map(Cache::new).transpose()?;
    let runs = built.plan.runs();
    let pb = bar(runs.len(), c.quiet);
    let rows = built.run_all(&runs, c.jobs, cache.as_ref(), &|done, _| {
        pb.set_position(done as u64)
    })?;
    pb.finish_and_clear();
    Ok((built.plan, rows))
}

fn base_plan(c: &Common) -> Result<Plan> {
    let mut plan = Plan::load(&c.scenario)?;
    plan.base_sets = c
        .set
        .iter()
        .map(|kv| blklab_lab::overrides::split_kv(kv))
        .collect::<Result<_>>()?;
    plan.seeds = c.seeds;
    Ok(plan)
}

fn write_or_print(path: Option<&Path>, text: &str) -> Result<()> {
    match path {
        Some(p) => blklab_lab::output::write_atomic(p, text.as_bytes()),
        None => {
            print!("{text}");
            Ok(())
        }
    }
}

pub fn sweep(a: SweepArgs) -> Result<()> {
    let mut plan = base_plan(&a.common)?;
    plan.combos = blklab_lab::compare::cross_product("--param", &a.param)?;
    let (_, rows) = run_plan(plan, &a.common)?;
    write_or_print(a.output.as_deref(), &table::csv(&rows))
}

fn list<T: std::str::FromStr>(
    flag: &str,
    given: &Option<String>,
    default: Vec<T>,
) -> Result<Vec<T>> {
    given
        .as_deref()
        .map_or(Ok(default), |s| parse_list(flag, s))
}

pub fn tune_iocost(a: TuneIocostArgs) -> Result<()> {
    let d = Space::default();
    let space = Space {
        rpct: list("rpct", &a.rpct, d.rpct)?,
        rlat_us: list("rlat", &a.rlat, d.rlat_us)?,
        wpct: list("wpct", &a.wpct, d.wpct)?,
        wlat_us: list("wlat", &a.wlat, d.wlat_us)?,
        min: list("min", &a.min, d.min)?,
        max: list("max", &a.max, d.max)?,
        scale: list("scale", &a.scale, d.scale)?,
    };
    let opts = tune::Options {
        protect: a.protect.clone(),
        targets: a
            .target
            .iter()
            .map(|t| Target::parse(t))
            .collect::<Result<_>>()?,
        space,
        seeds: a.common.seeds,
        phase: a.phase.clone(),
    };
    let setup = tune::Setup::new(base_plan(&a.common)?, opts)?;
    eprintln!(
        "tune: {} candidates x {} seeds = {} runs; protected: {}; others: {}",
        setup.candidates.len(),
        setup.plan.seeds,
        setup.candidates.len() * setup.plan.seeds as usize,
        setup.protected.join(", "),
        setup.others.join(", ")
    );
    let (_, rows) = run_plan(setup.plan.clone(), &a.common)?;
    let out = setup.evaluate(&rows)?;
    println!(
        "Pareto front ({} of {} candidates; * = recommended):",
        out.front.len(),
        out.scored.len()
    );
    print!("{}", tune::render::table(&setup, &out));
    println!();
    print!("{}", tune::render::verdict(&setup, &out));
    if let Some(p) = &a.csv {
        blklab_lab::output::write_atomic(p, tune::render::csv(&setup, &out).as_bytes())?;
        eprintln!("tune: every candidate written to {}", p.display());
    }
    if let Some(p) = &a.report {
        blklab_lab::report_html::write(p, &tune::report::html(&setup, &out)?)?;
        eprintln!("tune: report written to {}", p.display());
    }
    Ok(())
}
