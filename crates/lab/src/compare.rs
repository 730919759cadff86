//! `compare`: one scenario under each combination of kernel-behaviour switch
//! values (`--variant KEY=A,B`, repeated for a cross product).

use anyhow::{anyhow, bail, Result};

use blklab_core::SimConfig;

use crate::runner::{self, Outcome};
use crate::scenario::Scenario;
use crate::timeseries;

/// One variant: the (switch, value) pairs it sets, in `--variant` order.
pub type Variant = Vec<(String, String)>;

/// The cross product of `KEY=A,B[,C]` specifications, the first key varying
/// slowest.
pub fn variants(specs: &[String]) -> Result<Vec<Variant>> {
    cross_product("--variant", specs)
}

/// The cross product of `KEY=A,B[,C]` specifications given with option
/// `flag` (`--variant`, `--param`), the first key varying slowest.
pub fn cross_product(flag: &str, specs: &[String]) -> Result<Vec<Variant>> {
    let mut axes = Vec::new();
    for v in specs {
        let (k, vals) = v
            .split_once('=')
            .ok_or_else(|| anyhow!("{flag} {v}: expected KEY=A,B"))?;
        let vals: Vec<String> = vals
            .split(',')
            .filter(|x| !x.is_empty())
            .map(str::to_string)
            .collect();
        if vals.is_empty() {
            bail!("{flag} {v}: no values");
        }
        axes.push((k.to_string(), vals));
    }
    Ok(product(&axes))
}

/// The cross product of (key, values) axes, the first axis varying slowest.
pub fn product(axes: &[(String, Vec<String>)]) -> Vec<Variant> {
    let mut combos: Vec<Variant> = vec![Vec::new()];
    for (k, vals) in axes {
        let mut next = Vec::new();
        for c in &combos {
            for val in vals {
                let mut c2 = c.clone();
                c2.push((k.clone(), val.clone()));
                next.push(c2);
            }
        }
        combos = next;
    }
    combos
}

/// The variant's full name (`key=value key=value`).
pub fn name(v: &Variant) -> String {
    v.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The variant's short name (its values, comma-separated): the column
/// heading of the comparison tables.
pub fn short_name(v: &Variant) -> String {
    v.iter()
        .map(|(_, v)| v.clone())
        .collect::<Vec<_>>()
        .join(",")
}

/// The scenario's configuration with the variant's switches set on top.
fn config(sc: &Scenario, v: &Variant) -> Result<SimConfig> {
    let mut cfg = sc.config.clone();
    for (k, val) in v {
        cfg.switches
            .set(k, val)
            .map_err(|e| anyhow!("--variant: {e}"))?;
    }
    Ok(cfg)
}

/// Run the scenario with the variant's switches set on top of its own.
pub fn run(sc: &Scenario, v: &Variant) -> Result<Outcome> {
    runner::run(sc, &config(sc, v)?, None)
}

/// `run`, with the time series recorded (for `compare --report`).
pub fn run_observed(
    sc: &Scenario,
    v: &Variant,
    opts: &timeseries::Options,
) -> Result<(Outcome, Option<timeseries::Series>)> {
    crate::observe::timeseries(sc, &config(sc, v)?, None, opts)
}
