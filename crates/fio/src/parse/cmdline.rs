//! fio command lines (fio `init.c`: `parse_cmd_line`): `--name` starts a job,
//! options before it are global, getopt's argument rules.

use super::apply::apply;
use super::draft::Draft;
use super::fixup::finish;
use super::option_table::{find_option, ArgTy, Ty, TOP_ARGS};
use super::{scope, CMDLINE};
use crate::error::FioError;
use crate::options::JobSpec;

/// Parse a fio command line (the arguments, with or without a leading `fio`).
pub fn parse_cmdline(args: &[String]) -> Result<Vec<JobSpec>, FioError> {
    let mut global = Draft::new();
    let mut cur: Option<Draft> = None;
    let mut jobs: Vec<JobSpec> = Vec::new();
    let mut top: Vec<(String, Option<String>)> = Vec::new();

    let mut i = 0;
    if let Some(first) = args.first() {
        let base = first.rsplit('/').next().unwrap_or(first);
        if base == "fio" {
            i = 1;
        }
    }
    while i < args.len() {
        let argno = i + 1;
        let arg = &args[i];
        i += 1;
        let body = if let Some(b) = arg.strip_prefix("--") {
            b
        } else if let Some(b) = arg.strip_prefix('-') {
            b
        } else {
            return Err(FioError::at_arg(
                CMDLINE,
                argno,
                format!("unexpected argument '{arg}': job files are not read from a command line here (give options as --name=job --opt=value, or use a job file)"),
            ));
        };
        let (name, mut val) = match body.find('=') {
            Some(p) => (&body[..p], Some(body[p + 1..].to_string())),
            None => (body, None),
        };
        if name.is_empty() {
            return Err(FioError::at_arg(
                CMDLINE,
                argno,
                format!("malformed argument '{arg}'"),
            ));
        }

        if let Some((_, ty)) = TOP_ARGS.iter().find(|(n, _)| *n == name) {
            match ty {
                ArgTy::Required => {
                    if val.is_none() && i < args.len() {
                        val = Some(args[i].clone());
                        i += 1;
                    }
                    if val.as_deref().map(str::is_empty).unwrap_or(true) {
                        return Err(FioError::at_arg(
                            CMDLINE,
                            argno,
                            format!("option {name} requires an argument"),
                        ));
                    }
                }
                ArgTy::NoArg => {
                    if val.is_some() {
                        return Err(FioError::at_arg(
                            CMDLINE,
                            argno,
                            format!("option {name} takes no argument"),
                        ));
                    }
                }
                ArgTy::Optional => {}
            }
            top.push((name.to_string(), val));
            continue;
        }

        let def = find_option(name).ok_or_else(|| {
            let sc = match &cur {
                Some(d) => format!("job '{}'", d.spec.name),
                None => "global options".to_string(),
            };
            FioError::at_arg(
                CMDLINE,
                argno,
                format!("unknown option '{name}' ('{arg}') in {sc}"),
            )
        })?;
        if def.ty == Ty::Value {
            if val.is_none() && i < args.len() {
                // getopt's required_argument: the next word is the value.
                val = Some(args[i].clone());
                i += 1;
            }
            if val.as_deref().map(str::is_empty).unwrap_or(true) {
                return Err(FioError::at_arg(
                    CMDLINE,
                    argno,
                    format!("option {name} requires an argument"),
                ));
            }
        }

        if def.name == "name" {
            let v = val.clone().unwrap_or_default();
            if let Some(d) = cur.take() {
                let sc = scope(false, &d.spec.name);
                jobs.push(
                    finish(d)
                        .map_err(|e| FioError::at_arg(CMDLINE, argno, format!("{sc}: {e}")))?,
                );
                super::check_job_count(&jobs).map_err(|e| FioError::at_arg(CMDLINE, argno, e))?;
            }
            if !v.starts_with("global") {
                cur = Some(Draft::job_from(&global, &v));
            }
        }
        let is_job = cur.is_some();
        let target = match cur.as_mut() {
            Some(d) => d,
            None => &mut global,
        };
        let sc = if is_job {
            scope(false, &target.spec.name)
        } else {
            scope(true, "")
        };
        apply(target, def, val.as_deref())
            .map_err(|e| FioError::at_arg(CMDLINE, argno, format!("{} in {sc}: {e}", arg)))?;
        target
            .spec
            .raw_options
            .push((def.name.to_string(), val.unwrap_or_default()));
    }
    if let Some(d) = cur.take() {
        let sc = scope(false, &d.spec.name);
        jobs.push(finish(d).map_err(|e| FioError::general(CMDLINE, format!("{sc}: {e}")))?);
        super::check_job_count(&jobs).map_err(|e| FioError::general(CMDLINE, e))?;
    }
    if jobs.is_empty() {
        return Err(FioError::general(
            CMDLINE,
            "no jobs defined: give at least one --name=<job>",
        ));
    }

    // Process-level arguments apply to every job.
    for (name, val) in &top {
        for j in jobs.iter_mut() {
            match name.as_str() {
                "output-format" => j.output_format = val.clone(),
                "minimal" => j.output_format = Some("terse".into()),
                "output" => j.output = val.clone(),
                _ => j.ignored.push(match val {
                    Some(v) => format!("{name}={v}"),
                    None => name.clone(),
                }),
            }
        }
    }
    Ok(jobs)
}
