//! Kernel-behaviour switches: each fix or era the project models is a named
//! switch with every behaviour implemented, so a before/after comparison is one
//! flag (`--variant iocost.busy_level_fix=off,on`).
//!
//! Switches are registered here with their allowed values, default (the current
//! kernel) and a description; a scenario or the command line may set them.

use std::collections::BTreeMap;

pub struct SwitchDef {
    pub name: &'static str,
    pub values: &'static [&'static str],
    pub default: &'static str,
    pub help: &'static str,
}

/// Every switch the simulator knows. Controllers look their values up by name.
pub const SWITCHES: &[SwitchDef] = &[
    SwitchDef {
        name: "blk.split",
        values: &["on", "off"],
        default: "on",
        help: "Split bios larger than max_sectors_kb before request allocation (__bio_split_to_limits). \
               'off' models a queue without a size limit: every fio IO becomes one request.",
    },
    SwitchDef {
        name: "iocost.busy_level_fix",
        values: &["off", "on"],
        default: "on",
        help: "blk-iocost: keep busy_level unchanged in a period with no completions and lagging IOs \
               (2026 fix 'fix busy_level reset when no IOs complete'). off = kernels before the fix.",
    },
    SwitchDef {
        name: "throttle.wait",
        values: &["current", "slice-capped", "pre-2018"],
        default: "current",
        help: "blk-throttle era: 'pre-2018' = v4.12..v4.18 (iops wait aims at the exact-rate moment, may exceed a slice), \
               'slice-capped' = commit 991f61fe, v4.19..v5.2 (iops wait = rest of the slice window; 0 on a boundary, \
               spinning to the next jiffy), 'current' = v6.16+ (split bps/iops queues, signed carryover, \
               minimum iops wait HZ/iops+1, split pieces counted as IOs).",
    },
    SwitchDef {
        name: "throttle.slice",
        values: &["auto", "100ms", "20ms-nonrot"],
        default: "auto",
        help: "blk-throttle slice length: '100ms' = HZ/10 for every device (current mainline, 6.18.y), \
               '20ms-nonrot' = HZ/50 on non-rotational devices (v4.12..v6.9 with CONFIG_BLK_DEV_THROTTLING_LOW=y, v6.10..v6.17), \
               'auto' = 100ms for throttle.wait=current, 20ms-nonrot for the 2018 eras (the seed run's configuration).",
    },
    SwitchDef {
        name: "ioprio.content_activity",
        values: &["off", "iter-bio", "add-page"],
        default: "off",
        help: "Content-activity-based ioprio promotion (2024 patch, never merged): 'iter-bio' walks the \
               bio's pages before submit, 'add-page' counts pages as they are added.",
    },
];

pub fn def(name: &str) -> Option<&'static SwitchDef> {
    SWITCHES.iter().find(|s| s.name == name)
}

/// The switch values in force for one run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Switches {
    set: BTreeMap<String, String>,
}

impl Switches {
    /// Set a switch, validating name and value.
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), String> {
        let d = def(name).ok_or_else(|| {
            let known: Vec<&str> = SWITCHES.iter().map(|s| s.name).collect();
            format!(
                "unknown kernel-behaviour switch '{name}' (known: {})",
                known.join(", ")
            )
        })?;
        if !d.values.contains(&value) {
            return Err(format!(
                "switch '{name}' takes one of {}, not '{value}'",
                d.values.join(", ")
            ));
        }
        self.set.insert(name.to_string(), value.to_string());
        Ok(())
    }
    /// The value in force (the default when unset).
    pub fn get(&self, name: &str) -> &str {
        if let Some(v) = self.set.get(name) {
            return v;
        }
        def(name)
            .map(|d| d.default)
            .unwrap_or_else(|| panic!("switch '{name}' is not registered"))
    }
    pub fn is(&self, name: &str, value: &str) -> bool {
        self.get(name) == value
    }
    /// Explicitly set switches, sorted by name.
    pub fn explicit(&self) -> impl Iterator<Item = (&str, &str)> {
        self.set.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn defaults_and_validation() {
        let mut s = Switches::default();
        assert_eq!(s.get("iocost.busy_level_fix"), "on");
        s.set("iocost.busy_level_fix", "off").unwrap();
        assert!(s.is("iocost.busy_level_fix", "off"));
        assert!(s.set("iocost.busy_level_fix", "maybe").is_err());
        assert!(s.set("no.such", "x").is_err());
        for d in SWITCHES {
            assert!(d.values.contains(&d.default), "{}", d.name);
        }
    }
}
