//! The `blklab conformance` command: argument handling, progress and exit
//! statuses (see `blklab_conformance::exit`). `--kernel` picks where the
//! real side runs: this host, a stock Debian kernel booted under QEMU, or
//! all of them one after another.

use std::io::Write as _;

use blklab_conformance::cases::Case;
use blklab_conformance::vm::{self, VmFailure};
use blklab_conformance::{
    cases, env, exit, loop_device, render, sim, CaseResult, Options, RealSide,
};

pub struct Args {
    pub cases: Vec<String>,
    pub list: bool,
    pub repeat: u32,
    pub quick: bool,
    pub markdown: bool,
    pub sim_only: bool,
    /// How the simulator should express the host (`--sim-cpus`,
    /// `--sim-capped-disk`, `--sim-loop`, ...); what is not given depends
    /// on the real side (`SimRequest::for_side`).
    pub sim: blklab_conformance::sim_request::SimRequest,
    /// `--guest-files DIR`.
    pub guest_files: Option<std::path::PathBuf>,
    pub show: bool,
    /// `host`, a kernel of `--list-kernels`, `local:DIR`, or `all`.
    pub kernel: String,
    pub list_kernels: bool,
    /// `--kconfig-fragment`: print the configuration fragment and exit.
    pub kconfig_fragment: bool,
}

/// The kernels `name` stands for, or an error listing the names. `all` is
/// the host and the stock kernels: a kernel built from source (minutes of
/// compiling the first time) is run only when named.
fn kernels_of(name: &str) -> Result<Vec<String>, String> {
    let vms = vm::kernel_names();
    match name {
        "host" => Ok(vec!["host".into()]),
        "all" => Ok(std::iter::once("host")
            .chain(
                blklab_vm::KERNELS
                    .iter()
                    .filter(|k| k.build.is_none())
                    .map(|k| k.name),
            )
            .map(String::from)
            .collect()),
        k if vms.contains(&k) => Ok(vec![k.to_string()]),
        k => match blklab_vm::local::dir_of(k) {
            // checked (image, config, release) before anything runs
            Some(dir) => {
                blklab_vm::local::read(dir).map_err(|e| e.to_string())?;
                Ok(vec![k.to_string()])
            }
            None => Err(format!(
                "unknown kernel '{k}' (known: host, {}, all, or local:DIR for a kernel you built; `--list-kernels` shows them)",
                vms.join(", ")
            )),
        },
    }
}

/// `--list-kernels`: every kernel, its pinned package and whether it is cached.
fn list_kernels() -> u8 {
    println!("host    this machine's kernel (cgroup v1 or v2, as it is set up)");
    let cache = match blklab_vm::kernels::default_cache_dir() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("blklab conformance: {e}");
            return exit::ERROR;
        }
    };
    for l in blklab_vm::list(&cache) {
        let (how, first_use) = match &l.pin.build {
            None => ("", "fetched on first use"),
            Some(_) => (
                "built from ",
                "built on first use: minutes of compiling, ~2 GB of temporary space",
            ),
        };
        println!(
            "{:<16} {how}{} {} ({}, {}) {}",
            l.pin.name,
            l.pin.package,
            l.pin.version,
            l.pin.suite,
            l.pin.release,
            if l.cached {
                format!("cached in {}", l.dir.display())
            } else {
                format!("not cached ({first_use})")
            }
        );
    }
    println!("all     host, then every stock (debian-*) kernel above");
    exit::OK
}

/// The worse of two exit statuses: interrupted, mismatch, harness error,
/// host unsuitable, not runnable, ok.
fn worse(a: u8, b: u8) -> u8 {
    let rank = |s: u8| match s {
        s if s >= exit::INTERRUPTED_BASE => 6,
        exit::MISMATCH => 5,
        exit::ERROR => 4,
        exit::HOST_UNSUITABLE => 3,
        exit::NOT_RUNNABLE => 2,
        _ => 1,
    };
    if rank(b) > rank(a) {
        b
    } else {
        a
    }
}

/// Run the command; the process exit status.
pub fn main(a: &Args) -> u8 {
    if a.list_kernels {
        return list_kernels();
    }
    if a.kconfig_fragment {
        // what the built-* kernels are configured with: a tree configured
        // from it boots as `local:DIR` with every case runnable
        print!("{}", blklab_vm::kconfig::FRAGMENT);
        return 0;
    }
    let kernels = match kernels_of(&a.kernel) {
        Ok(k) => k,
        Err(e) => {
            eprintln!("blklab conformance: {e}");
            return exit::ERROR;
        }
    };
    let selected = match cases::select(&a.cases) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("blklab conformance: {e}");
            return exit::ERROR;
        }
    };
    // every kernel's expression checked before anything runs
    for k in &kernels {
        if let Err(e) = a.sim.for_side(side_of(k)) {
            eprintln!("blklab conformance: {e}");
            return exit::ERROR;
        }
    }
    if (a.show || a.sim_only)
        && a.sim
            .costs
            .uses(blklab_conformance::fio_costs::CostSource::Measured)
    {
        eprintln!("blklab conformance: --sim-costs measured needs the guest's probes: not with --show or --sim-only");
        return exit::ERROR;
    }
    if a.repeat == 0 {
        eprintln!("blklab conformance: --repeat must be at least 1");
        return exit::ERROR;
    }
    if a.show {
        for k in &kernels {
            let switches = if k == "host" {
                sim::host_switches()
            } else {
                sim::profile_switches(k).unwrap_or_default()
            };
            for c in &selected {
                println!("# case {} (kernel {k})", c.name);
                print!(
                    "{}",
                    sim::scenario_text(
                        c,
                        &sim::SimDevice {
                            hz: vm::sim_hz(k),
                            sim: if k == "host" {
                                sim_of(a, k)
                                    .for_host_case(c, blklab_conformance::host_load::nr_cpus())
                            } else {
                                sim_of(a, k)
                            },
                            ..sim::SimDevice::placeholder(&switches)
                        },
                        &loop_device::RawSpeed::default(),
                        c.runtime(a.quick)
                    )
                );
                println!();
            }
        }
        return exit::OK;
    }
    let env = env::probe();
    if a.list {
        println!("{}", render::host_summary(&env));
        for m in env.missing_basics() {
            println!("missing: {m}");
        }
        if env.iocost.is_none() {
            println!("missing for iocost cases: {}", env.iocost_missing);
        }
        print!("{}", render::list(&selected, &env));
        return exit::OK;
    }
    blklab_host::resources::install_signal_handlers();
    let opts = Options {
        cases: a.cases.clone(),
        repeat: a.repeat,
        quick: a.quick,
        sim_only: a.sim_only,
        real_side: RealSide::Host,
        sim: sim_of(a, "host"),
        guest_files: a.guest_files.clone(),
    };
    let mut status = exit::OK;
    for k in &kernels {
        let s = if k == "host" {
            run_host(a, &env, &selected, &opts)
        } else {
            run_vm(a, k, &selected, &opts)
        };
        status = worse(status, s);
        if status >= exit::INTERRUPTED_BASE {
            break;
        }
    }
    status
}

/// The machine kernel `k`'s real side runs on.
fn side_of(k: &str) -> RealSide {
    if k == "host" {
        RealSide::Host
    } else {
        RealSide::Qemu
    }
}

/// The simulator's expression against kernel `k` (checked in `main`).
fn sim_of(a: &Args, k: &str) -> sim::SimChoices {
    a.sim.for_side(side_of(k)).unwrap_or_default()
}

/// Print progress on stdout (stderr with --markdown, whose table is stdout).
fn progress(a: &Args, text: &str) {
    if a.markdown {
        eprint!("{text}");
    } else {
        print!("{text}");
        let _ = std::io::stdout().flush();
    }
}

/// The per-kernel tail: the Markdown table, the counts, the exit status.
fn finish(a: &Args, header: &str, results: &[CaseResult]) -> u8 {
    let raw = results.first().map(|r| r.raw).unwrap_or_default();
    if a.markdown {
        print!("{}", render::markdown(results, header, &raw, a.repeat));
    }
    for l in blklab_conformance::sched_cost::lines(results) {
        progress(a, &format!("{l}\n"));
    }
    let mut counts = std::collections::BTreeMap::new();
    for r in results {
        *counts.entry(r.status.word()).or_insert(0) += 1;
    }
    let summary: Vec<String> = counts.iter().map(|(k, v)| format!("{v} {k}")).collect();
    progress(a, &format!("summary: {}\n", summary.join(", ")));
    blklab_conformance::exit_status(results)
}

fn interrupted(sig: i32) -> u8 {
    eprintln!(
        "blklab conformance: interrupted by signal {sig}; the loop devices, files, cgroups and guests it created are removed"
    );
    exit::INTERRUPTED_BASE.saturating_add(sig.clamp(0, 127) as u8)
}

fn run_host(a: &Args, env: &env::HostEnv, selected: &[Case], opts: &Options) -> u8 {
    let missing = env.missing_basics();
    if !missing.is_empty() && !a.sim_only {
        eprintln!("blklab conformance: this host cannot run the real side of any case:");
        for m in &missing {
            eprintln!("  missing: {m}");
        }
        eprintln!("  (--sim-only runs the simulator side alone)");
        return exit::HOST_UNSUITABLE;
    }
    let header = format!("{}; {}", render::host_summary(env), opts.sim.describe());
    progress(a, &format!("{header}\n"));
    let mut raw = None;
    let switches = sim::host_switches();
    let results =
        blklab_conformance::run_all(selected, env, opts, &mut raw, &switches, print_each(a));
    match results {
        Ok(r) => finish(a, &header, &r),
        Err(sig) => interrupted(sig),
    }
}

/// Each case's result as it is judged, after the first one's device speed.
fn print_each(a: &Args) -> impl FnMut(&CaseResult) + '_ {
    let mut first = true;
    move |r| {
        if first {
            progress(a, &format!("{}\n\n", render::raw_summary(&r.raw)));
            first = false;
        }
        progress(a, &format!("{}\n", render::case_text(r)));
    }
}

fn run_vm(a: &Args, kernel: &str, selected: &[Case], opts: &Options) -> u8 {
    let opts = Options {
        real_side: RealSide::Qemu,
        sim: sim_of(a, kernel),
        ..opts.clone()
    };
    let header = format!(
        "kernel {kernel} under QEMU (TCG, icount), cgroup v2; {}",
        opts.sim.describe()
    );
    progress(
        a,
        &format!(
            "{header}: fetching if needed, booting, running {} case(s) in one boot\n",
            selected.len()
        ),
    );
    let results = vm::run_kernel(kernel, selected, &opts, print_each(a));
    match results {
        Ok(r) => finish(a, &header, &r),
        Err(VmFailure::Interrupted) => interrupted(blklab_host::resources::signal().max(2)),
        Err(VmFailure::Unsuitable(why)) => {
            eprintln!("blklab conformance: cannot run kernel {kernel} here:\n{why}");
            exit::HOST_UNSUITABLE
        }
        Err(VmFailure::Failed(why)) => {
            eprintln!("blklab conformance: kernel {kernel}: {why}");
            exit::ERROR
        }
    }
}
