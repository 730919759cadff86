//! fio job files and command lines, read the way fio reads them (fio `init.c`:
//! `__parse_jobs_ini`, `parse_cmd_line`; `parse.c`: `handle_option`,
//! `__handle_option`; `options.c`: the option table and its callbacks;
//! `init.c`: `fixup_options`).
//!
//! * Job files are INI: `[global]` sections set defaults for the jobs *below*
//!   them; `;` and `#` start comments (anywhere on a line, as in fio); options are
//!   `name=value`, or a bare `name` for fio's "string set" options
//!   (`time_based`, `group_reporting`, `norandommap`, `stonewall`, `new_group`,
//!   `thread`). Within a section fio applies `kb_base` first and `filename`
//!   last (option priorities); the recorded option order follows that too.
//! * Command lines: `--name=X` starts a job; options before the first `--name`
//!   are global. Options taking a value accept `--opt=val` and `--opt val`
//!   (getopt's required-argument rule); the string-set options accept a bare
//!   `--opt` or `--opt=N`. A leading `fio` program name is skipped.
//!
//! Each job records its own options as written (`raw_options`, canonical option
//! names as fio prints them in the JSON `"job options"`) and the global options
//! in force (`global_options`).

mod apply;
mod cmdline;
mod draft;
mod fixup;
mod job_file;
mod option_table;
mod reporting_group;
mod shell_words;
mod values;

pub use cmdline::parse_cmdline;
pub use job_file::parse_job_file;
pub use reporting_group::assign_groupids;
pub use shell_words::split_cmdline;

/// Most job instances (every numjobs clone of every job) one fio input may
/// define. fio's own cap is 4096 (`REAL_MAX_JOBS`); each simulated job
/// keeps its statistics (~130 KB), so blklab stops at 1024 and says so
/// before spending the memory.
pub const MAX_JOBS: usize = 1024;

/// The deepest queue one job may ask for. A simulated job allocates its
/// io_u slots up front (as fio does), so `iodepth=3G` would ask for
/// 128 GB; on a real host libaio's `io_setup` refuses more events than
/// /proc/sys/fs/aio-max-nr, 65536 by default, so no default host runs a
/// deeper libaio job either. Past it the option is refused with fio's own
/// range message.
pub const MAX_IODEPTH: u32 = 65536;

/// The instances `jobs` stand for, refused past `MAX_JOBS`.
fn check_job_count(jobs: &[crate::options::JobSpec]) -> Result<(), String> {
    let n: u64 = jobs.iter().map(|j| j.numjobs.max(1) as u64).sum();
    if n > MAX_JOBS as u64 {
        return Err(format!(
            "{n} job instances (jobs times numjobs); blklab runs at most {MAX_JOBS}"
        ));
    }
    Ok(())
}

/// How errors name a command line as the place of a problem.
const CMDLINE: &str = "command line";

/// How errors name where an option was given.
fn scope(global: bool, name: &str) -> String {
    if global {
        "global options".to_string()
    } else {
        format!("job '{name}'")
    }
}

#[cfg(test)]
mod tests;
