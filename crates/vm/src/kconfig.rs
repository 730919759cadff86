//! The configuration of the kernels blklab-vm builds (see `kbuild`): the
//! fragment applied on top of `make allnoconfig`, its per-kernel part (HZ),
//! and the check that a .config has every symbol of it.

use std::collections::BTreeMap;

use crate::digest;
use crate::error::{Result, VmError};
use crate::kmod;

/// The pinned source package a kernel is built from, as a built cache
/// entry must name it.
#[derive(Debug, Clone, Copy)]
pub struct Source<'a> {
    pub package: &'a str,
    pub version: &'a str,
    pub sha256: &'a str,
}

/// What distinguishes one built kernel from another of the same source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BuildSpec {
    /// CONFIG_HZ: one of `HZ_CHOICES`.
    pub hz: u32,
}

/// The CONFIG_HZ values Kconfig offers on x86 (the `HZ_*` choice).
pub const HZ_CHOICES: &[u32] = &[100, 250, 300, 1000];

/// The fixed part of the configuration fragment.
pub const FRAGMENT: &str = include_str!("kbuild/blklab.config");

/// The file the fragment is kept in, in the cache entry.
pub const FRAGMENT_FILE: &str = "blklab.config";

/// The fragment for `spec`: the fixed part, the HZ choice, and a local
/// version naming the kernel (so `uname -r` says which one booted).
pub fn render_fragment(spec: &BuildSpec) -> Result<String> {
    if !HZ_CHOICES.contains(&spec.hz) {
        return Err(VmError::BadBuild(format!(
            "CONFIG_HZ={} is not one of Kconfig's choices {HZ_CHOICES:?}",
            spec.hz
        )));
    }
    let mut s = FRAGMENT.to_string();
    if !s.ends_with('\n') {
        s.push('\n');
    }
    s.push_str(&format!(
        "\n# The timer frequency of this kernel.\nCONFIG_HZ_{hz}=y\nCONFIG_HZ={hz}\nCONFIG_LOCALVERSION=\"-blklab-hz{hz}\"\n",
        hz = spec.hz
    ));
    Ok(s)
}

/// The symbols of `fragment` whose value in `config` differs, as
/// (symbol, wanted, found). An absent symbol counts as `n`, as Kconfig
/// writes it.
pub fn mismatches(fragment: &str, config: &str) -> Vec<(String, String, String)> {
    let want = kmod::parse_config(fragment);
    let have = kmod::parse_config(config);
    want.into_iter()
        .filter_map(|(sym, w)| {
            let h = have.get(&sym).cloned().unwrap_or_else(|| "n".into());
            (h != w).then_some((sym, w, h))
        })
        .collect()
}

/// `mismatches` as one line for an error message.
pub fn describe_mismatches(m: &[(String, String, String)]) -> String {
    m.iter()
        .map(|(s, w, h)| format!("{s}={w} (got {h})"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The checks a built entry gets besides its files' hashes: built from
/// `source`, with today's fragment for `spec`, and a .config that has
/// every symbol of it.
pub fn verify_entry(
    spec: &BuildSpec,
    fields: &BTreeMap<String, String>,
    source: &Source,
    config: &str,
) -> std::result::Result<(), String> {
    let fragment = render_fragment(spec).map_err(|e| e.to_string())?;
    if fields.get("source-sha256").map(String::as_str) != Some(source.sha256) {
        return Err(format!(
            "it was not built from the pinned source {}={} (sha256 {})",
            source.package, source.version, source.sha256
        ));
    }
    if fields.get("fragment-sha256") != Some(&digest::sha256_bytes(fragment.as_bytes())) {
        return Err("it was built with another configuration fragment than this blklab's".into());
    }
    let bad = mismatches(&fragment, config);
    if !bad.is_empty() {
        return Err(format!("its config lacks {}", describe_mismatches(&bad)));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fragment_has_hz_and_the_controllers() {
        let f = render_fragment(&BuildSpec { hz: 1000 }).unwrap();
        let c = kmod::parse_config(&f);
        assert_eq!(c["CONFIG_HZ_1000"], "y");
        assert_eq!(c["CONFIG_HZ"], "1000");
        assert_eq!(c["CONFIG_LOCALVERSION"], "\"-blklab-hz1000\"");
        for sym in [
            "CONFIG_BLK_CGROUP_IOPRIO",
            "CONFIG_BLK_CGROUP_IOLATENCY",
            "CONFIG_BLK_CGROUP_IOCOST",
            "CONFIG_BLK_DEV_THROTTLING",
            "CONFIG_BFQ_GROUP_IOSCHED",
            "CONFIG_BLK_DEV_LOOP",
            "CONFIG_AIO",
            "CONFIG_EVENT_TRACING",
        ] {
            assert_eq!(c.get(sym).map(String::as_str), Some("y"), "{sym}");
        }
        // built in only: the guest loads no module
        assert_eq!(c["CONFIG_MODULES"], "n");
        assert!(!c.values().any(|v| v == "m"));
        let f250 = render_fragment(&BuildSpec { hz: 250 }).unwrap();
        assert!(f250.contains("CONFIG_HZ_250=y\n") && !f250.contains("HZ_1000"));
    }

    #[test]
    fn hz_outside_the_kconfig_choice_is_refused() {
        let e = render_fragment(&BuildSpec { hz: 500 }).unwrap_err();
        assert!(e.to_string().contains("CONFIG_HZ=500"), "{e}");
    }

    #[test]
    fn mismatches_name_what_did_not_stick() {
        let frag = "CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_HZ=1000\nCONFIG_C=y\n";
        let config = "CONFIG_A=y\nCONFIG_B=y\nCONFIG_HZ=250\n# CONFIG_C is not set\n";
        let m = mismatches(frag, config);
        assert_eq!(
            m,
            [
                ("CONFIG_B".into(), "n".into(), "y".into()),
                ("CONFIG_C".into(), "y".into(), "n".into()),
                ("CONFIG_HZ".into(), "1000".into(), "250".into()),
            ]
        );
        assert_eq!(describe_mismatches(&m[..1]), "CONFIG_B=n (got y)");
        // absent is "n"
        assert!(mismatches("# CONFIG_D is not set\n", "").is_empty());
        assert_eq!(mismatches("CONFIG_D=y\n", "").len(), 1);
    }
}
