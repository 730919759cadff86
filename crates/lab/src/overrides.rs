//! Command-line overrides of a loaded scenario: `--seed` and `--set KEY=VALUE`.

use anyhow::{anyhow, Result};

use crate::scenario::Scenario;

/// Replace the scenario's seed (when given) and set each `KEY=VALUE`
/// kernel-behaviour switch, in order.
pub fn apply(sc: &mut Scenario, seed: Option<u64>, set: &[String]) -> Result<()> {
    if let Some(s) = seed {
        sc.config.seed = s;
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
