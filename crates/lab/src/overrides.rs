//! Command-line overrides of a loaded scenario: `--seed`, `--kernel-profile`
//! and `--set KEY=VALUE`.

use anyhow::{anyhow, bail, Result};

use crate::scenario::Scenario;

/// Replace the scenario's seed (when given), set every switch as kernel
/// profile `profile` has it (over the scenario's own), then each `KEY=VALUE`
/// kernel-behaviour switch, in order.
pub fn apply(
    sc: &mut Scenario,
    seed: Option<u64>,
    profile: Option<&str>,
    set: &[String],
) -> Result<()> {
    if let Some(s) = seed {
        sc.config.seed = s;
    }
    if let Some(name) = profile {
        let p = blklab_core::sim::switches::profile(name)
            .map_err(|e| anyhow!("--kernel-profile: {e}"))?;
        sc.config.switches = blklab_core::sim::switches::Switches::from_profile(p);
    }
    for kv in set {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| anyhow!("--set {kv}: expected KEY=VALUE"))?;
        sc.config
            .switches
            .set(k, v)
            .map_err(|e| anyhow!("--set {kv}: {e}"))?;
    }
    Ok(())
}

/// Split `KEY=VALUE` (at the first `=`).
pub fn split_kv(kv: &str) -> Result<(String, String)> {
    let (k, v) = kv
        .split_once('=')
        .ok_or_else(|| anyhow!("--set {kv}: expected KEY=VALUE"))?;
    Ok((k.trim().to_string(), v.to_string()))
}

/// Load a scenario from its text with overrides of any kind, in order:
/// `seed`, a kernel-behaviour switch (`iocost.busy_level_fix`, or
/// `run.switches.NAME`), or a key of the scenario document (`set_doc`:
/// `cgroup.PATH.FILE`, `device.NAME.FIELD`, `job.LABEL.OPTION`, `run.FIELD`,
/// `pagecache.FIELD`). Document keys edit the TOML text and the result is
/// checked like any scenario file; errors name the key and value. The
/// simulator is built once to check the values the kernel parses at write
/// time (`io.max`, `io.cost.qos`, ...), so a bad value fails here, not mid-sweep.
pub fn build(text: &str, path: &std::path::Path, sets: &[(String, String)]) -> Result<Scenario> {
    build_for(text, path, sets, None)
}

/// [`build`], checked under kernel profile `profile`'s switches when given
/// (the command line applies the profile afterwards: a value that depends
/// on a switch, such as `host.sched_features` on `sched.fair`, must be
/// checked against the switches the run will have).
fn build_for(
    text: &str,
    path: &std::path::Path,
    sets: &[(String, String)],
    profile: Option<&str>,
) -> Result<Scenario> {
    let doc_sets: Vec<&(String, String)> = sets
        .iter()
        .filter(|(k, _)| crate::set_doc::is_doc_key(k))
        .collect();
    let mut sc = if doc_sets.is_empty() {
        Scenario::parse(text, path).map_err(|e| anyhow!("{e}"))?
    } else {
        // the scenario's own problems first, with the file's own positions
        let base = Scenario::parse(text, path).map_err(|e| anyhow!("{e}"))?;
        let mut doc: toml_edit::DocumentMut = text
            .parse()
            .map_err(|e| anyhow!("{}: {e}", path.display()))?;
        for (k, v) in &doc_sets {
            if let Some((cg, file)) = crate::set_doc::cgroup_key(k) {
                for line in v.lines().filter(|l| !l.trim().is_empty()) {
                    crate::kfiles::check(file, line, &base.config.devices, cg == "/")
                        .map_err(|e| anyhow!("--set {k}={v}: {cg}/{file}: \"{line}\": {e}"))?;
                }
            }
            crate::set_doc::set(&mut doc, k, v).map_err(|e| anyhow!("--set {k}={v}: {e}"))?;
        }
        let edited = doc.to_string();
        Scenario::parse(&edited, path).map_err(|e| {
            let keys: Vec<String> = doc_sets.iter().map(|(k, v)| format!("{k}={v}")).collect();
            anyhow!("{e}\n(the scenario with --set {})", keys.join(" --set "))
        })?
    };
    if let Some(name) = profile {
        let p = blklab_core::sim::switches::profile(name)
            .map_err(|e| anyhow!("--kernel-profile: {e}"))?;
        sc.config.switches = blklab_core::sim::switches::Switches::from_profile(p);
    }
    for (k, v) in sets {
        if crate::set_doc::is_doc_key(k) {
            continue;
        }
        if k == "seed" || k == "run.seed" {
            sc.config.seed = v
                .trim()
                .parse()
                .map_err(|_| anyhow!("--set {k}={v}: expected an unsigned integer"))?;
            continue;
        }
        let name = k.strip_prefix("run.switches.").unwrap_or(k);
        if blklab_core::sim::switches::def(name).is_none() {
            bail!(
                "--set {k}={v}: unknown key '{k}' (expected seed, a switch (blklab switches), \
                 cgroup.PATH.FILE, device.NAME.FIELD, job.LABEL.OPTION, run.FIELD or pagecache.FIELD)"
            );
        }
        sc.config
            .switches
            .set(name, v)
            .map_err(|e| anyhow!("--set {k}={v}: {e}"))?;
    }
    crate::runner::build_sim(&sc.config, None).map_err(|e| {
        let keys: Vec<String> = sets.iter().map(|(k, v)| format!("{k}={v}")).collect();
        match keys.is_empty() {
            true => anyhow!("{}: {e}", path.display()),
            false => anyhow!(
                "{} with --set {}: {e}",
                path.display(),
                keys.join(" --set ")
            ),
        }
    })?;
    Ok(sc)
}

/// The command line's view: load the scenario file, apply the document keys
/// among `set` (`build`), then `apply` the seed, the kernel profile and the
/// switches, in that order.
pub fn load(
    path: &std::path::Path,
    seed: Option<u64>,
    profile: Option<&str>,
    set: &[String],
) -> Result<Scenario> {
    let (doc, rest): (Vec<&String>, Vec<&String>) = set.iter().partition(|kv| {
        kv.split_once('=')
            .is_some_and(|(k, _)| crate::set_doc::is_doc_key(k.trim()))
    });
    let mut sc = if doc.is_empty() {
        Scenario::load(path).map_err(|e| anyhow!("{e}"))?
    } else {
        let text = std::fs::read_to_string(path)
            .map_err(|e| anyhow!("{}: cannot read: {e}", path.display()))?;
        let kvs = doc
            .iter()
            .map(|kv| split_kv(kv))
            .collect::<Result<Vec<_>>>()?;
        build_for(&text, path, &kvs, profile)?
    };
    let rest: Vec<String> = rest.into_iter().cloned().collect();
    apply(&mut sc, seed, profile, &rest)?;
    Ok(sc)
}
