//! Command-line overrides of a loaded scenario: `--seed`, `--kernel-profile`
//! and `--set KEY=VALUE`.

use anyhow::{anyhow, Result};

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
