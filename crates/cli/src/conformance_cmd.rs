//! The `blklab conformance` command: argument handling, progress and exit
//! statuses (see `blklab_conformance::exit`).

use std::io::Write as _;

use blklab_conformance::{cases, cleanup, env, exit, loop_device, render, sim, Options};

pub struct Args {
    pub cases: Vec<String>,
    pub list: bool,
    pub repeat: u32,
    pub quick: bool,
    pub markdown: bool,
    pub sim_only: bool,
    pub show: bool,
}

/// Run the command; the process exit status.
pub fn main(a: &Args) -> u8 {
    let selected = match cases::select(&a.cases) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("blklab conformance: {e}");
            return exit::ERROR;
        }
    };
    if a.repeat == 0 {
        eprintln!("blklab conformance: --repeat must be at least 1");
        return exit::ERROR;
    }
    let env = env::probe();
    if a.show {
        for c in &selected {
            println!("# case {}", c.name);
            print!(
                "{}",
                sim::scenario_text(
                    c,
                    "loop99",
                    "7:99",
                    &loop_device::RawSpeed::default(),
                    c.runtime(a.quick)
                )
            );
            println!();
        }
        return exit::OK;
    }
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
    let missing = env.missing_basics();
    if !missing.is_empty() && !a.sim_only {
        eprintln!("blklab conformance: this host cannot run the real side of any case:");
        for m in &missing {
            eprintln!("  missing: {m}");
        }
        eprintln!("  (--sim-only runs the simulator side alone)");
        return exit::HOST_UNSUITABLE;
    }
    cleanup::install_signal_handlers();
    let opts = Options {
        cases: a.cases.clone(),
        repeat: a.repeat,
        quick: a.quick,
        sim_only: a.sim_only,
    };
    let progress = |text: &str| {
        if a.markdown {
            eprint!("{text}");
        } else {
            print!("{text}");
            let _ = std::io::stdout().flush();
        }
    };
    progress(&format!("{}\n", render::host_summary(&env)));
    let mut raw = None;
    let mut first = true;
    let results = blklab_conformance::run_all(&selected, &env, &opts, &mut raw, |r| {
        if first {
            progress(&format!("{}\n\n", render::raw_summary(&r.raw)));
            first = false;
        }
        progress(&format!("{}\n", render::case_text(r)));
    });
    let results = match results {
        Ok(r) => r,
        Err(sig) => {
            eprintln!(
                "blklab conformance: interrupted by signal {sig}; the loop devices, files and cgroups it created are removed"
            );
            return exit::INTERRUPTED_BASE.saturating_add(sig.clamp(0, 127) as u8);
        }
    };
    let raw = raw.unwrap_or_default();
    if a.markdown {
        print!("{}", render::markdown(&results, &env, &raw, a.repeat));
    }
    let mut counts = std::collections::BTreeMap::new();
    for r in &results {
        *counts.entry(r.status.word()).or_insert(0) += 1;
    }
    let summary: Vec<String> = counts.iter().map(|(k, v)| format!("{v} {k}")).collect();
    progress(&format!("summary: {}\n", summary.join(", ")));
    blklab_conformance::exit_status(&results)
}
