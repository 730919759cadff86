//! The fair class's feature toggles (`[host] sched_features`): the kernel's
//! `sched_feat()` switches of kernel/sched/features.h that the models of
//! `sim::eevdf` and `sim::cfs` mirror, written as the kernel takes them in
//! /sys/kernel/debug/sched/features (`sched_feat_write`): names separated by
//! blanks, `NO_` before a name turning it off. Every feature starts as the
//! kernel's default (on, for all of those mirrored), so the default value
//! changes nothing.
//!
//! Mirrored, per model (`sched.fair`):
//! - `eevdf`: PLACE_LAG (`place_entity`), RUN_TO_PARITY (`pick_eevdf`'s
//!   protected slice), DELAY_DEQUEUE (`dequeue_entity`), DELAY_ZERO
//!   (`finish_delayed_dequeue_entity` / `requeue_delayed_entity`),
//!   WAKEUP_PREEMPTION (`check_preempt_wakeup_fair`).
//! - `cfs-vruntime`: GENTLE_FAIR_SLEEPERS (`place_entity`'s halved sleeper
//!   credit), WAKEUP_PREEMPTION (`check_preempt_wakeup`).
//!
//! Other kernel features (PREEMPT_SHORT, NEXT_BUDDY, PLACE_DEADLINE_INITIAL,
//! ...) are refused by name: the models have no mechanism they switch.

/// One mirrored feature; its discriminant is its row in `MIRRORED` and its
/// bit in `SchedFeatures`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feature {
    PlaceLag,
    RunToParity,
    DelayDequeue,
    DelayZero,
    WakeupPreemption,
    GentleFairSleepers,
}

/// Kernel name, feature, and the models (`sched.fair` values) mirroring it.
const MIRRORED: [(&str, Feature, &[&str]); 6] = [
    ("PLACE_LAG", Feature::PlaceLag, &["eevdf"]),
    ("RUN_TO_PARITY", Feature::RunToParity, &["eevdf"]),
    ("DELAY_DEQUEUE", Feature::DelayDequeue, &["eevdf"]),
    ("DELAY_ZERO", Feature::DelayZero, &["eevdf"]),
    (
        "WAKEUP_PREEMPTION",
        Feature::WakeupPreemption,
        &["eevdf", "cfs-vruntime"],
    ),
    (
        "GENTLE_FAIR_SLEEPERS",
        Feature::GentleFairSleepers,
        &["cfs-vruntime"],
    ),
];

/// Features of 6.1's or 6.12's kernel/sched/features.h that no model mirrors
/// (refused as such, not as unknown).
const NOT_MIRRORED: &[&str] = &[
    "PLACE_DEADLINE_INITIAL",
    "PLACE_REL_DEADLINE",
    "PREEMPT_SHORT",
    "NEXT_BUDDY",
    "LAST_BUDDY",
    "START_DEBIT",
    "CACHE_HOT_BUDDY",
    "PICK_BUDDY",
    "TTWU_QUEUE",
    "SIS_UTIL",
    "SIS_PROP",
    "WARN_DOUBLE_CLOCK",
    "RT_PUSH_IPI",
    "RT_RUNTIME_SHARE",
    "LB_MIN",
    "ATTACH_AGE_LOAD",
    "WA_IDLE",
    "WA_WEIGHT",
    "WA_BIAS",
    "UTIL_EST",
    "UTIL_EST_FASTUP",
    "LATENCY_WARN",
    "HZ_BW",
    "NONTASK_CAPACITY",
    "HRTICK",
    "HRTICK_DL",
    "DOUBLE_TICK",
    "ALT_PERIOD",
];

/// The features turned off (all mirrored ones are on by default in both
/// kernels, so the default, nothing off, is the kernel's).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SchedFeatures {
    off: u8,
}

impl SchedFeatures {
    fn bit(f: Feature) -> u8 {
        1 << f as u8
    }

    /// Whether `f` is on (`sched_feat(f)`).
    pub fn on(self, f: Feature) -> bool {
        self.off & Self::bit(f) == 0
    }

    /// Parses the kernel's syntax ("NO_PLACE_LAG RUN_TO_PARITY"): a later
    /// word overrides an earlier one about the same feature. An unknown
    /// name, or one the models do not mirror, is an error naming it.
    pub fn parse(s: &str) -> Result<SchedFeatures, String> {
        let mut f = SchedFeatures::default();
        for word in s.split_whitespace() {
            let (name, on) = match word.strip_prefix("NO_") {
                Some(n) => (n, false),
                None => (word, true),
            };
            match MIRRORED.iter().find(|m| m.0 == name) {
                Some(m) if on => f.off &= !Self::bit(m.1),
                Some(m) => f.off |= Self::bit(m.1),
                None if NOT_MIRRORED.contains(&name) => {
                    return Err(format!(
                        "'{word}': the kernel feature {name} is not mirrored by the simulator's \
                         fair class (mirrored: {})",
                        Self::names()
                    ))
                }
                None => {
                    return Err(format!(
                        "'{word}': unknown scheduler feature (mirrored: {}; NO_ turns one off)",
                        Self::names()
                    ))
                }
            }
        }
        Ok(f)
    }

    /// The features turned off, in the kernel's syntax ("NO_PLACE_LAG
    /// NO_RUN_TO_PARITY"; empty for the default): what `parse` reads back.
    pub fn kernel_syntax(self) -> String {
        MIRRORED
            .iter()
            .filter(|m| !self.on(m.1))
            .map(|m| format!("NO_{}", m.0))
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn names() -> String {
        MIRRORED.iter().map(|m| m.0).collect::<Vec<_>>().join(", ")
    }

    /// Refuses a feature turned off that model `fair` (a `sched.fair` value)
    /// does not mirror: it would silently do nothing.
    pub fn check_for(self, fair: &str) -> Result<(), String> {
        for m in MIRRORED.iter().filter(|m| !self.on(m.1)) {
            if !m.2.contains(&fair) {
                return Err(format!(
                    "NO_{}: sched.fair = {fair} does not mirror {} (it is mirrored by {})",
                    m.0,
                    m.0,
                    m.2.join(", ")
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_feature_is_its_own_row_of_the_table() {
        for (i, m) in MIRRORED.iter().enumerate() {
            assert_eq!(m.1 as usize, i, "{}", m.0);
        }
    }

    #[test]
    fn default_is_all_on_and_no_turns_off() {
        let d = SchedFeatures::default();
        assert!(MIRRORED.iter().all(|m| d.on(m.1)));
        let f = SchedFeatures::parse("NO_PLACE_LAG  NO_RUN_TO_PARITY").unwrap();
        assert!(!f.on(Feature::PlaceLag) && !f.on(Feature::RunToParity));
        assert!(f.on(Feature::DelayDequeue) && f.on(Feature::WakeupPreemption));
        assert_eq!(f.kernel_syntax(), "NO_PLACE_LAG NO_RUN_TO_PARITY");
        assert_eq!(SchedFeatures::parse(&f.kernel_syntax()), Ok(f));
        let f = SchedFeatures::parse("NO_DELAY_DEQUEUE DELAY_DEQUEUE").unwrap();
        assert_eq!(f, SchedFeatures::default());
    }

    #[test]
    fn unknown_and_unmirrored_names_are_refused_by_name() {
        let e = SchedFeatures::parse("NO_PLACE_LAGG").unwrap_err();
        assert!(e.contains("'NO_PLACE_LAGG': unknown"), "{e}");
        let e = SchedFeatures::parse("NO_PREEMPT_SHORT").unwrap_err();
        assert!(e.contains("PREEMPT_SHORT is not mirrored"), "{e}");
    }

    #[test]
    fn a_feature_of_the_other_model_is_refused() {
        let f = SchedFeatures::parse("NO_GENTLE_FAIR_SLEEPERS").unwrap();
        assert!(f.check_for("cfs-vruntime").is_ok());
        let e = f.check_for("eevdf").unwrap_err();
        assert!(
            e.contains("sched.fair = eevdf does not mirror GENTLE_FAIR_SLEEPERS"),
            "{e}"
        );
        let f = SchedFeatures::parse("NO_WAKEUP_PREEMPTION").unwrap();
        assert!(f.check_for("eevdf").is_ok() && f.check_for("cfs-vruntime").is_ok());
        assert!(f.check_for("cfs").is_err());
    }
}
