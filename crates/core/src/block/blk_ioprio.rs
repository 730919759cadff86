//! blk-ioprio (block/blk-ioprio.c): the cgroup file `io.prio.class`
//! (`blkio.prio.class` on v1) and the priority a bio ends up with in
//! `bio_set_ioprio` (block/blk-core.c, called from `submit_bio`).
//!
//! The setting is per cgroup and **not** hierarchical: only the cgroup the bio
//! is charged to counts; children do not inherit anything. Every cgroup,
//! the root included, starts at `no-change`.

use crate::block::blk_cgroup::{CgId, CgroupTree};
use crate::block::ioprio::{Ioprio, IoprioClass, IOPRIO_CLASS_SHIFT};
use crate::sim::kerr::KernelError;

/// The cgroup file name.
pub const FILE: &str = "io.prio.class";

/// `enum prio_policy`. The discriminants are the kernel's numbers; they
/// matter because `restrict-to-be` and `idle` compare against `number << 13`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PrioPolicy {
    #[default]
    NoChange = 0,
    PromoteToRt = 1,
    RestrictToBe = 2,
    /// `POLICY_ALL_TO_IDLE`, written and shown as `idle`.
    AllToIdle = 3,
    /// The v5.14 name, kept as an alias of promote-to-rt since 2023; it is
    /// stored as its own value and therefore reads back as `none-to-rt`.
    NoneToRt = 4,
}

/// `policy_name[]`, indexed by the policy number.
const POLICY_NAMES: [&str; 5] = [
    "no-change",
    "promote-to-rt",
    "restrict-to-be",
    "idle",
    "none-to-rt",
];

/// Names that appeared only in the (since corrected) cgroup-v2 documentation
/// and were never accepted by the kernel; used to give a helpful message.
const DOC_ONLY_NAMES: [&str; 2] = ["rt-to-be", "all-to-idle"];

impl PrioPolicy {
    fn from_index(i: usize) -> PrioPolicy {
        match i {
            1 => PrioPolicy::PromoteToRt,
            2 => PrioPolicy::RestrictToBe,
            3 => PrioPolicy::AllToIdle,
            4 => PrioPolicy::NoneToRt,
            _ => PrioPolicy::NoChange,
        }
    }

    /// What reading `io.prio.class` prints (`ioprio_show_prio_policy`).
    pub fn name(self) -> &'static str {
        POLICY_NAMES[self as usize]
    }

    /// `ioprio_set_prio_policy`: `sysfs_match_string` over the policy names,
    /// i.e. an exact match where only a single trailing newline is ignored
    /// (`sysfs_streq`); anything else is -EINVAL.
    pub fn parse(buf: &str) -> Result<PrioPolicy, KernelError> {
        let s = buf.strip_suffix('\n').unwrap_or(buf);
        if let Some(i) = POLICY_NAMES.iter().position(|n| *n == s) {
            return Ok(PrioPolicy::from_index(i));
        }
        let mut msg = format!(
            "io.prio.class: '{}' is not one of {}",
            s.escape_debug(),
            POLICY_NAMES.join(", ")
        );
        if DOC_ONLY_NAMES.contains(&s) {
            msg.push_str(
                " (that name appeared only in old documentation; the kernel never accepted it)",
            );
        }
        Err(KernelError::einval(msg))
    }

    /// `blkcg_set_ioprio`: the policy applied to a bio priority that
    /// `bio_set_ioprio` has already filled in from the task.
    pub fn apply(self, prio: Ioprio) -> Ioprio {
        match self {
            PrioPolicy::NoChange => prio,
            // Anything not already RT becomes RT level 4 (the level an RT task
            // at nice 0 gets); the hint is dropped. RT keeps its level/hint.
            PrioPolicy::PromoteToRt | PrioPolicy::NoneToRt => {
                if prio.class() != IoprioClass::Rt {
                    Ioprio::new(IoprioClass::Rt, 4, 0)
                } else {
                    prio
                }
            }
            // Numeric maximum of the whole 16-bit value and (policy << 13):
            // a more urgent class (or NONE) is lowered to the policy's class
            // at level 0, hint lost; an equal or lower class is kept as is.
            PrioPolicy::RestrictToBe | PrioPolicy::AllToIdle => {
                let floor = (self as u16) << IOPRIO_CLASS_SHIFT;
                Ioprio(prio.0.max(floor))
            }
        }
    }
}

/// The io.prio.class setting of every cgroup.
#[derive(Clone, Debug, Default)]
pub struct BlkIoprio {
    /// Indexed by CgId; cgroups created later than `new` read as no-change.
    policy: Vec<PrioPolicy>,
}

impl BlkIoprio {
    /// Read each cgroup's `io.prio.class`. The scenario's writes are kept one
    /// per line; each line is one write, so the last one wins. Empty lines
    /// (left by a write that ended in a newline) are not writes. The first
    /// write the kernel would reject is returned with its cgroup.
    pub fn new(cgroups: &CgroupTree) -> Result<BlkIoprio, (CgId, KernelError)> {
        let mut policy = vec![PrioPolicy::NoChange; cgroups.len()];
        for id in cgroups.ids() {
            if let Some(content) = cgroups.file(id, FILE) {
                for line in content.split('\n').filter(|l| !l.is_empty()) {
                    policy[id as usize] = PrioPolicy::parse(line).map_err(|e| (id, e))?;
                }
            }
        }
        Ok(BlkIoprio { policy })
    }

    /// A write to `io.prio.class` during the run. On error the old value stays.
    pub fn write(&mut self, cg: CgId, value: &str) -> Result<(), KernelError> {
        let p = PrioPolicy::parse(value)?;
        let i = cg as usize;
        if i >= self.policy.len() {
            self.policy.resize(i + 1, PrioPolicy::NoChange);
        }
        self.policy[i] = p;
        Ok(())
    }

    pub fn policy(&self, cg: CgId) -> PrioPolicy {
        self.policy.get(cg as usize).copied().unwrap_or_default()
    }

    /// What `cat io.prio.class` prints (without the newline).
    pub fn show(&self, cg: CgId) -> &'static str {
        self.policy(cg).name()
    }

    /// `blkcg_set_ioprio` alone: the cgroup policy applied to `prio`.
    #[inline]
    pub fn blkcg_set_ioprio(&self, cg: CgId, prio: Ioprio) -> Ioprio {
        self.policy(cg).apply(prio)
    }

    /// `bio_set_ioprio`: a bio that carries no class of its own (NONE, e.g.
    /// buffered I/O or a direct I/O without a per-I/O priority) takes the
    /// task's priority (`get_current_ioprio`, see `Ioprio::task_ioprio`);
    /// then the cgroup policy is applied. `bio_prio` is what the submitter
    /// put in the bio (aio/io_uring per-I/O priority, or the result of the
    /// content-activity rule).
    #[inline]
    pub fn bio_set_ioprio(&self, cg: CgId, bio_prio: Ioprio, task_prio: Ioprio) -> Ioprio {
        let p = if bio_prio.class() == IoprioClass::None {
            task_prio
        } else {
            bio_prio
        };
        self.blkcg_set_ioprio(cg, p)
    }

    /// bio_set_ioprio + blkcg_set_ioprio for a bio with no priority of its
    /// own: the priority a bio from a task with `task_prio` in cgroup `cg`
    /// gets. `task_prio` should be the task's effective priority
    /// (`Ioprio::task_ioprio`); passing `IOPRIO_DEFAULT` models the kernels
    /// (v6.8 … mid-2025) where a task without an io_context submitted NONE.
    #[inline]
    pub fn bio_ioprio(&self, cg: CgId, task_prio: Ioprio) -> Ioprio {
        self.bio_set_ioprio(cg, crate::block::ioprio::IOPRIO_DEFAULT, task_prio)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::ioprio::IOPRIO_DEFAULT;
    use crate::sim::kerr::Errno;

    fn v(c: IoprioClass, l: u8) -> Ioprio {
        Ioprio::new(c, l, 0)
    }

    #[test]
    fn parse_like_sysfs_match_string() {
        assert_eq!(
            PrioPolicy::parse("no-change").unwrap(),
            PrioPolicy::NoChange
        );
        assert_eq!(
            PrioPolicy::parse("promote-to-rt\n").unwrap(),
            PrioPolicy::PromoteToRt
        );
        assert_eq!(
            PrioPolicy::parse("restrict-to-be").unwrap(),
            PrioPolicy::RestrictToBe
        );
        assert_eq!(PrioPolicy::parse("idle").unwrap(), PrioPolicy::AllToIdle);
        assert_eq!(
            PrioPolicy::parse("none-to-rt").unwrap(),
            PrioPolicy::NoneToRt
        );
        // The alias keeps its own name when read back.
        assert_eq!(PrioPolicy::NoneToRt.name(), "none-to-rt");
        assert_eq!(PrioPolicy::AllToIdle.name(), "idle");
        for bad in [
            "rt-to-be",
            "all-to-idle",
            "Idle",
            " idle",
            "idle ",
            "idle\n\n",
            "",
            "2",
            "be",
        ] {
            let e = PrioPolicy::parse(bad).unwrap_err();
            assert_eq!(e.errno, Errno::Einval, "{bad:?}");
        }
        assert!(PrioPolicy::parse("rt-to-be")
            .unwrap_err()
            .msg
            .contains("old documentation"));
    }

    /// The derivation table: task priority x policy -> bio priority,
    /// including a task priority of class NONE (what kernels between the
    /// Jan 2024 and Jul 2025 `__get_task_ioprio` changes submitted for tasks
    /// without an io_context).
    #[test]
    fn policy_table() {
        use IoprioClass::*;
        use PrioPolicy::*;
        let rt0 = v(Rt, 0);
        let rt4 = v(Rt, 4);
        let rt6 = v(Rt, 6);
        let be0 = v(Be, 0);
        let be4 = v(Be, 4);
        let be7 = v(Be, 7);
        let idle0 = v(Idle, 0);
        let idle5 = v(Idle, 5);
        let none = IOPRIO_DEFAULT;
        let hinted_be = Ioprio::new(Be, 2, 3);
        let hinted_rt = Ioprio::new(Rt, 2, 3);
        let rows: &[(PrioPolicy, Ioprio, Ioprio)] = &[
            (NoChange, none, none),
            (NoChange, rt0, rt0),
            (NoChange, be4, be4),
            (NoChange, idle5, idle5),
            (PromoteToRt, none, rt4),
            (PromoteToRt, be0, rt4),
            (PromoteToRt, be7, rt4),
            (PromoteToRt, idle5, rt4),
            (PromoteToRt, rt6, rt6),
            (PromoteToRt, hinted_be, rt4),
            (PromoteToRt, hinted_rt, hinted_rt),
            (NoneToRt, none, rt4),
            (NoneToRt, be4, rt4), // since 2023 the alias promotes BE and IDLE too
            (NoneToRt, idle0, rt4),
            (NoneToRt, rt0, rt0),
            (RestrictToBe, none, be0),
            (RestrictToBe, rt0, be0),
            (RestrictToBe, rt6, be0),
            (RestrictToBe, hinted_rt, be0),
            (RestrictToBe, be0, be0),
            (RestrictToBe, be7, be7),
            (RestrictToBe, hinted_be, hinted_be),
            (RestrictToBe, idle5, idle5),
            (AllToIdle, none, idle0),
            (AllToIdle, rt4, idle0),
            (AllToIdle, be4, idle0),
            (AllToIdle, hinted_be, idle0),
            (AllToIdle, idle0, idle0),
            (AllToIdle, idle5, idle5),
        ];
        for (pol, input, want) in rows {
            assert_eq!(pol.apply(*input), *want, "{} on {input}", pol.name());
        }
    }

    #[test]
    fn per_cgroup_not_hierarchical() {
        let mut t = CgroupTree::new();
        let a = t.ensure("/a").unwrap();
        let b = t.ensure("/a/b").unwrap();
        let c = t.ensure("/c").unwrap();
        t.write_file(a, FILE, "idle");
        t.write_file(c, FILE, "restrict-to-be");
        t.write_file(c, FILE, "promote-to-rt\n"); // second write wins
        let bi = BlkIoprio::new(&t).unwrap();
        let task = Ioprio::task_default(0); // BE/4
        assert_eq!(bi.bio_ioprio(a, task), v(IoprioClass::Idle, 0));
        // Child of an idle cgroup: nothing inherited.
        assert_eq!(bi.bio_ioprio(b, task), task);
        assert_eq!(bi.bio_ioprio(c, task), v(IoprioClass::Rt, 4));
        assert_eq!(bi.bio_ioprio(crate::block::blk_cgroup::ROOT, task), task);
        assert_eq!(bi.show(c), "promote-to-rt");
        assert_eq!(bi.show(b), "no-change");
    }

    #[test]
    fn bio_priority_wins_over_task() {
        let mut t = CgroupTree::new();
        let a = t.ensure("/a").unwrap();
        t.write_file(a, FILE, "restrict-to-be");
        let bi = BlkIoprio::new(&t).unwrap();
        let task = Ioprio::task_default(0);
        // A per-I/O IDLE priority is kept (not replaced by the task's BE/4)…
        assert_eq!(
            bi.bio_set_ioprio(a, v(IoprioClass::Idle, 1), task),
            v(IoprioClass::Idle, 1)
        );
        // …a per-I/O RT priority is restricted to BE/0.
        assert_eq!(
            bi.bio_set_ioprio(a, v(IoprioClass::Rt, 2), task),
            v(IoprioClass::Be, 0)
        );
        // No class on the bio: the task's priority, then the policy.
        assert_eq!(
            bi.bio_set_ioprio(a, IOPRIO_DEFAULT, v(IoprioClass::Rt, 4)),
            v(IoprioClass::Be, 0)
        );
        assert_eq!(bi.bio_set_ioprio(a, IOPRIO_DEFAULT, task), task);
    }

    #[test]
    fn errors_name_the_cgroup_and_writes_keep_old_value() {
        let mut t = CgroupTree::new();
        let a = t.ensure("/a").unwrap();
        t.write_file(a, FILE, "all-to-idle");
        let (cg, e) = BlkIoprio::new(&t).unwrap_err();
        assert_eq!((cg, e.errno), (a, Errno::Einval));
        let mut bi = BlkIoprio::new(&CgroupTree::new()).unwrap();
        bi.write(0, "idle").unwrap();
        assert!(bi.write(0, "nonsense").is_err());
        assert_eq!(bi.policy(0), PrioPolicy::AllToIdle);
        // A cgroup id the table has not seen yet reads as no-change and can be written.
        assert_eq!(bi.policy(9), PrioPolicy::NoChange);
        bi.write(9, "none-to-rt").unwrap();
        assert_eq!(bi.show(9), "none-to-rt");
    }
}
