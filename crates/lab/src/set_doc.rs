//! Overrides that change the scenario document itself (`--set` keys naming a
//! cgroup file, a device or job field, a fio option, a `[run]` or
//! `[pagecache]` field): the TOML text is edited in place, keeping its
//! layout, and then loaded like any scenario, so every check of
//! `Scenario::parse` applies to the new values too.
//!
//! Keys:
//! * `cgroup.PATH.FILE` — the scenario's value of a cgroup file
//!   (`cgroup./cgB.io.max`); the value replaces the scenario's.
//! * `device.NAME.FIELD[.FIELD]` — a `[[device]]` field (`device.sda.model.preset`).
//! * `job.LABEL.KEY` (or `job.INDEX.KEY`, `job.*.KEY` for every job) — a
//!   `[[job]]` field (`cgroup`, `device`, `cmdline`, ...) or, for any other
//!   key, a fio option given to every fio job of that entry after its own
//!   options (fio: the last value wins).
//! * `run.FIELD`, `pagecache.FIELD` — those tables' fields.

use anyhow::{anyhow, bail, Result};
use toml_edit::{DocumentMut, Item, Table, Value};

use crate::scenario::CGROUP_FILES;

/// The `[[job]]` fields of the scenario format (anything else under `job.`
/// is a fio option).
const JOB_FIELDS: &[&str] = &[
    "label",
    "cgroup",
    "device",
    "cmdline",
    "job_file",
    "job_ini",
    "output",
    "replay",
    "replay_cgroup",
    "replay_device",
    "timing",
];

/// Whether `key` is one of this module's keys (rather than a switch or `seed`).
pub fn is_doc_key(key: &str) -> bool {
    ["cgroup.", "device.", "job.", "run.", "pagecache.", "host."]
        .iter()
        .any(|p| key.starts_with(p))
        && !key.starts_with("run.switches.")
}

/// A `cgroup.PATH.FILE` key split into (path, file).
pub fn cgroup_key(key: &str) -> Option<(&str, &str)> {
    let rest = key.strip_prefix("cgroup.")?;
    CGROUP_FILES.iter().find_map(|(f, _)| {
        let path = rest.strip_suffix(f)?.strip_suffix('.')?;
        (!path.is_empty()).then_some((path, *f))
    })
}

/// A TOML value for `raw`, typed like the value it replaces (integer, float,
/// boolean or string); a new key gets an integer or boolean when `raw` reads
/// as one, else a string.
fn typed(raw: &str, old: Option<&Item>) -> Result<Value> {
    let old = old.and_then(Item::as_value);
    Ok(match old {
        Some(Value::Integer(_)) => Value::from(
            raw.trim()
                .parse::<i64>()
                .map_err(|_| anyhow!("'{raw}' is not an integer"))?,
        ),
        Some(Value::Float(_)) => Value::from(
            raw.trim()
                .parse::<f64>()
                .map_err(|_| anyhow!("'{raw}' is not a number"))?,
        ),
        Some(Value::Boolean(_)) => match raw.trim() {
            "true" => Value::from(true),
            "false" => Value::from(false),
            _ => bail!("'{raw}' is not a boolean (true or false)"),
        },
        Some(_) => Value::from(raw),
        None => match (raw.parse::<i64>(), raw) {
            (Ok(n), _) => Value::from(n),
            (_, "true") => Value::from(true),
            (_, "false") => Value::from(false),
            _ => Value::from(raw),
        },
    })
}

/// Set `path` (dotted table keys) under `t` to `raw`, creating tables as needed.
fn set_path(t: &mut Table, path: &[&str], raw: &str) -> Result<()> {
    let (last, parents) = path.split_last().ok_or_else(|| anyhow!("empty key"))?;
    let mut cur = t;
    for p in parents {
        let item = cur.entry(p).or_insert_with(toml_edit::table);
        if let Some(inline) = item.as_inline_table().cloned() {
            *item = Item::Table(inline.into_table());
        }
        cur = item
            .as_table_mut()
            .ok_or_else(|| anyhow!("'{p}' is not a table"))?;
    }
    let v = typed(raw, cur.get(last))?;
    cur.insert(last, Item::Value(v));
    Ok(())
}

/// Quote one argument for `split_cmdline` (single quotes; a quote inside as `'\''`).
fn shell_quote(a: &str) -> String {
    if !a.is_empty() && !a.contains(|c: char| c.is_whitespace() || "'\"\\$`".contains(c)) {
        return a.to_string();
    }
    format!("'{}'", a.replace('\'', "'\\''"))
}

/// A fio command line with `--opt=value` at the end of every job (before each
/// `--name` after the first, and at the end).
fn cmdline_with(cmd: &str, opt: &str, raw: &str) -> Result<String> {
    let args = blklab_fio::parse::split_cmdline(cmd).map_err(|e| anyhow!("{e}"))?;
    let extra = format!("--{opt}={raw}");
    let mut out: Vec<String> = Vec::new();
    let mut seen_name = false;
    for a in args {
        if a.starts_with("--name") {
            if seen_name {
                out.push(extra.clone());
            }
            seen_name = true;
        }
        out.push(a);
    }
    out.push(extra);
    Ok(out
        .iter()
        .map(|a| shell_quote(a))
        .collect::<Vec<_>>()
        .join(" "))
}

/// A fio job file's text with `opt=value` at the end of every job section
/// (not `[global]`).
fn ini_with(ini: &str, opt: &str, raw: &str) -> String {
    let extra = format!("{opt}={raw}");
    let mut out = String::new();
    let mut in_job = false;
    for line in ini.lines() {
        let t = line.trim();
        if t.starts_with('[') {
            if in_job {
                out.push_str(&extra);
                out.push('\n');
            }
            in_job = !t.eq_ignore_ascii_case("[global]");
        }
        out.push_str(line);
        out.push('\n');
    }
    if in_job {
        out.push_str(&extra);
        out.push('\n');
    }
    out
}

/// The `[[job]]` entries a `job.WHICH` selector names: `*`, an index, or a label.
fn job_indices(jobs: &toml_edit::ArrayOfTables, which: &str) -> Result<Vec<usize>> {
    if which == "*" {
        return Ok((0..jobs.len()).collect());
    }
    let by_label: Vec<usize> = jobs
        .iter()
        .enumerate()
        .filter(|(_, j)| j.get("label").and_then(Item::as_str) == Some(which))
        .map(|(i, _)| i)
        .collect();
    if !by_label.is_empty() {
        return Ok(by_label);
    }
    match which.parse::<usize>() {
        Ok(i) if i < jobs.len() => Ok(vec![i]),
        _ => {
            let labels: Vec<&str> = jobs
                .iter()
                .filter_map(|j| j.get("label").and_then(Item::as_str))
                .collect();
            bail!(
                "no [[job]] labelled '{which}' (labels: {}; or an index 0..{}, or *)",
                labels.join(", "),
                jobs.len()
            )
        }
    }
}

/// The scenario's `[[NAME]]` entries.
fn entries<'a>(doc: &'a mut DocumentMut, name: &str) -> Result<&'a mut toml_edit::ArrayOfTables> {
    doc.get_mut(name)
        .and_then(Item::as_array_of_tables_mut)
        .ok_or_else(|| anyhow!("the scenario has no [[{name}]]"))
}

fn set_job(doc: &mut DocumentMut, rest: &str, raw: &str) -> Result<()> {
    let jobs = entries(doc, "job")?;
    // the label may itself contain dots: the key is the last component
    let (which, key) = rest
        .rsplit_once('.')
        .ok_or_else(|| anyhow!("expected job.LABEL.KEY"))?;
    for i in job_indices(jobs, which)? {
        let j = jobs.get_mut(i).expect("index from job_indices");
        if JOB_FIELDS.contains(&key) {
            set_path(j, &[key], raw)?;
        } else if let Some(c) = j.get("cmdline").and_then(Item::as_str) {
            let new = cmdline_with(c, key, raw)?;
            j.insert("cmdline", toml_edit::value(new));
        } else if let Some(ini) = j.get("job_ini").and_then(Item::as_str) {
            let new = ini_with(ini, key, raw);
            j.insert("job_ini", toml_edit::value(new));
        } else {
            bail!("job {which}: fio options can be set on cmdline and job_ini jobs only (this one reads a job_file or a recording)");
        }
    }
    Ok(())
}

fn set_device(doc: &mut DocumentMut, rest: &str, raw: &str) -> Result<()> {
    let devs = entries(doc, "device")?;
    let (name, field) = rest
        .split_once('.')
        .ok_or_else(|| anyhow!("expected device.NAME.FIELD"))?;
    let names: Vec<String> = devs
        .iter()
        .filter_map(|d| d.get("name").and_then(Item::as_str).map(str::to_string))
        .collect();
    let i = names.iter().position(|n| n == name).ok_or_else(|| {
        anyhow!(
            "no [[device]] named '{name}' (devices: {})",
            names.join(", ")
        )
    })?;
    let d = devs.get_mut(i).expect("position in range");
    set_path(d, &field.split('.').collect::<Vec<_>>(), raw)
}

/// Apply one document key to the scenario text's parsed document.
pub fn set(doc: &mut DocumentMut, key: &str, raw: &str) -> Result<()> {
    if let Some(rest) = key.strip_prefix("cgroup.") {
        let (path, file) = cgroup_key(key).ok_or_else(|| {
            let known: Vec<&str> = CGROUP_FILES.iter().map(|x| x.0).collect();
            anyhow!(
                "'{rest}': expected cgroup.PATH.FILE with FILE one of {}",
                known.join(", ")
            )
        })?;
        let cg = doc
            .entry("cgroup")
            .or_insert_with(toml_edit::table)
            .as_table_mut()
            .ok_or_else(|| anyhow!("'cgroup' is not a table"))?;
        cg.set_implicit(true);
        let node = cg.entry(path).or_insert_with(toml_edit::table);
        let node = node
            .as_table_mut()
            .ok_or_else(|| anyhow!("cgroup '{path}' is not a table"))?;
        node.insert(file, toml_edit::value(raw));
        return Ok(());
    }
    if let Some(rest) = key.strip_prefix("device.") {
        return set_device(doc, rest, raw);
    }
    if let Some(rest) = key.strip_prefix("job.") {
        return set_job(doc, rest, raw);
    }
    for table in ["run", "pagecache", "host"] {
        if let Some(rest) = key.strip_prefix(table).and_then(|r| r.strip_prefix('.')) {
            let path: Vec<&str> = std::iter::once(table).chain(rest.split('.')).collect();
            return set_path(doc.as_table_mut(), &path, raw);
        }
    }
    bail!("not a scenario document key")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cgroup_keys_split_at_the_file_name() {
        assert_eq!(cgroup_key("cgroup./cgB.io.max"), Some(("/cgB", "io.max")));
        assert_eq!(
            cgroup_key("cgroup./.io.cost.qos"),
            Some(("/", "io.cost.qos"))
        );
        assert_eq!(
            cgroup_key("cgroup./a.b/c.io.weight"),
            Some(("/a.b/c", "io.weight"))
        );
        assert_eq!(cgroup_key("cgroup./cgB.io.nope"), None);
    }

    #[test]
    fn fio_options_go_after_each_jobs_own() {
        assert_eq!(
            cmdline_with("--name=a --bs=4k --name=b", "bs", "8k").unwrap(),
            "--name=a --bs=4k --bs=8k --name=b --bs=8k"
        );
        assert_eq!(
            cmdline_with("--name='x y'", "rw", "read").unwrap(),
            "'--name=x y' --rw=read"
        );
        assert_eq!(
            ini_with("[global]\nbs=4k\n[a]\nrw=read\n[b]\n", "bs", "8k"),
            "[global]\nbs=4k\n[a]\nrw=read\nbs=8k\n[b]\nbs=8k\n"
        );
    }

    #[test]
    fn values_keep_the_type_they_replace() {
        let mut doc: DocumentMut = "[run]\nhz = 250\nduration = \"5s\"\n".parse().unwrap();
        set(&mut doc, "run.hz", "1000").unwrap();
        set(&mut doc, "run.duration", "2s").unwrap();
        assert_eq!(doc.to_string(), "[run]\nhz = 1000\nduration = \"2s\"\n");
        assert!(set(&mut doc, "run.hz", "fast").is_err());
        // a [host] key the scenario does not set yet
        let mut doc: DocumentMut = "[host]\ncpus = 1\n".parse().unwrap();
        set(&mut doc, "host.submit_return_ns", "6000").unwrap();
        assert_eq!(
            doc.to_string(),
            "[host]\ncpus = 1\nsubmit_return_ns = 6000\n"
        );
    }
}
