//! fio job files (fio `init.c`: `__parse_jobs_ini`): INI sections, `[global]`
//! defaults for the jobs below them, comments, option priorities.

use super::apply::apply;
use super::draft::Draft;
use super::fixup::finish;
use super::option_table::{find_option, Def, TOP_ARGS};
use super::scope;
use super::values::reject_substitutions;
use crate::error::FioError;
use crate::options::JobSpec;

struct SectionLines {
    name: String,
    global: bool,
    line: usize,
    opts: Vec<(usize, String)>,
}

/// Parse a fio job file. `origin` names it in errors (usually its path).
/// `include` and `${VAR}` substitution are rejected with a clear error.
pub fn parse_job_file(text: &str, origin: &str) -> Result<Vec<JobSpec>, FioError> {
    let mut global = Draft::new();
    let mut jobs = Vec::new();
    let mut cur: Option<SectionLines> = None;

    for (i, raw) in text.lines().enumerate() {
        let lineno = i + 1;
        // fio's strip_blank_end: a ';' or '#' anywhere ends the line.
        let mut line = raw;
        if let Some(p) = line.find(';') {
            line = &line[..p];
        }
        if let Some(p) = line.find('#') {
            line = &line[..p];
        }
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if line.starts_with('[') {
            if !line.ends_with(']') || line.len() < 3 {
                return Err(FioError::at_line(
                    origin,
                    lineno,
                    format!("malformed section header '{line}': expected [name]"),
                ));
            }
            if let Some(sec) = cur.take() {
                finish_section(sec, &mut global, &mut jobs, origin)?;
            }
            let name = line[1..line.len() - 1].trim().to_string();
            if name.is_empty() {
                return Err(FioError::at_line(origin, lineno, "empty section name '[]'"));
            }
            // fio treats any section whose name starts with "global" as global.
            let g = name.starts_with("global");
            cur = Some(SectionLines {
                name,
                global: g,
                line: lineno,
                opts: Vec::new(),
            });
            continue;
        }
        if line == "include" || line.starts_with("include ") || line.starts_with("include\t") {
            return Err(FioError::at_line(
                origin,
                lineno,
                "'include' is not supported: paste the included options into this file",
            ));
        }
        match cur.as_mut() {
            None => {
                return Err(FioError::at_line(
                    origin,
                    lineno,
                    format!("option '{line}' outside of a [job] section"),
                ));
            }
            Some(sec) => sec.opts.push((lineno, line.to_string())),
        }
    }
    if let Some(sec) = cur.take() {
        finish_section(sec, &mut global, &mut jobs, origin)?;
    }
    if jobs.is_empty() {
        return Err(FioError::general(
            origin,
            "no jobs defined (only [global] sections, or an empty file)",
        ));
    }
    Ok(jobs)
}

fn finish_section(
    sec: SectionLines,
    global: &mut Draft,
    jobs: &mut Vec<JobSpec>,
    origin: &str,
) -> Result<(), FioError> {
    // Split each line into (def, key, value) first, so the option priorities
    // can order them as fio's sort_options does (stable: equal priorities keep
    // their written order).
    let mut parsed: Vec<(usize, &'static Def, Option<String>)> = Vec::new();
    let sc = scope(sec.global, &sec.name);
    for (lineno, line) in &sec.opts {
        let (key, val) = match line.find('=') {
            Some(p) => (line[..p].trim(), Some(line[p + 1..].trim().to_string())),
            None => (line.trim(), None),
        };
        if let Some(v) = &val {
            reject_substitutions(v).map_err(|e| {
                FioError::at_line(origin, *lineno, format!("{key}={v} in {sc}: {e}"))
            })?;
        }
        let def = match find_option(key) {
            Some(d) => d,
            None => {
                let hint = if TOP_ARGS.iter().any(|(n, _)| *n == key) {
                    " (it is a fio command-line argument, not a job option)"
                } else {
                    ""
                };
                return Err(FioError::at_line(
                    origin,
                    *lineno,
                    format!("unknown option '{key}' in {sc}{hint}"),
                ));
            }
        };
        parsed.push((*lineno, def, val));
    }
    parsed.sort_by_key(|p| -(p.1.prio as i32));

    let mut dr = if sec.global {
        global.clone()
    } else {
        Draft::job_from(global, &sec.name)
    };
    for (lineno, def, val) in parsed {
        apply(&mut dr, def, val.as_deref()).map_err(|e| {
            let shown = match &val {
                Some(v) => format!("{}={}", def.name, v),
                None => def.name.to_string(),
            };
            FioError::at_line(origin, lineno, format!("{shown} in {sc}: {e}"))
        })?;
        dr.spec
            .raw_options
            .push((def.name.to_string(), val.unwrap_or_default()));
    }
    if sec.global {
        *global = dr;
    } else {
        let spec =
            finish(dr).map_err(|e| FioError::at_line(origin, sec.line, format!("{sc}: {e}")))?;
        jobs.push(spec);
        // counted as each section ends, so a file of 20,000 sections stops
        // at the first one past the cap
        super::check_job_count(jobs).map_err(|e| FioError::at_line(origin, sec.line, e))?;
    }
    Ok(())
}
