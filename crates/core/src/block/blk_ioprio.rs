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
use crate::sim::switches::Switches;

/// The cgroup file name.
pub const FILE: &str = "io.prio.class";

/// The switch choosing the policy table.
pub const SWITCH: &str = "ioprio.policies";

/// Which `enum prio_policy` the kernel has (switch `ioprio.policies`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PolicyTable {
    /// v6.5+ (ddf63516d8d3 "blk-ioprio: Introduce promote-to-rt policy"):
    /// `promote-to-rt` is policy 1 and promotes every non-RT bio to RT/4;
    /// `none-to-rt` became its alias (number 4).
    #[default]
    PromoteToRt,
    /// v5.14..v6.4: no `promote-to-rt`; `none-to-rt` is policy 1 and, like
    /// every policy, is applied as the numeric maximum of the bio priority
    /// and `policy << 13`, so only a bio of class NONE becomes RT (level 0).
    NoneToRt,
}

impl PolicyTable {
    pub fn from_switches(sw: &Switches) -> PolicyTable {
        if sw.is(SWITCH, "none-to-rt") {
            PolicyTable::NoneToRt
        } else {
            PolicyTable::PromoteToRt
        }
    }
}

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

/// The names before v6.5, in their order there (`none-to-rt` was policy 1).
const POLICY_NAMES_PRE_6_5: [&str; 4] = ["no-change", "none-to-rt", "restrict-to-be", "idle"];

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
    /// (`sysfs_streq`); anything else is -EINVAL. The current kernel's table.
    pub fn parse(buf: &str) -> Result<PrioPolicy, KernelError> {
        PrioPolicy::parse_in(buf, PolicyTable::PromoteToRt)
    }

    /// `ioprio_set_prio_policy` of a kernel with policy table `table`: before
    /// v6.5 `promote-to-rt` is not a name the file knows (EINVAL).
    pub fn parse_in(buf: &str, table: PolicyTable) -> Result<PrioPolicy, KernelError> {
        let s = buf.strip_suffix('\n').unwrap_or(buf);
        let known: &[&str] = match table {
            PolicyTable::PromoteToRt => &POLICY_NAMES,
            PolicyTable::NoneToRt => &POLICY_NAMES_PRE_6_5,
        };
        if known.contains(&s) {
            if let Some(i) = POLICY_NAMES.iter().position(|n| *n == s) {
                return Ok(PrioPolicy::from_index(i));
            }
        }
        let mut msg = format!(
            "io.prio.class: '{}' is not one of {}",
            s.escape_debug(),
            known.join(", ")
        );
        if s == "promote-to-rt" && table == PolicyTable::NoneToRt {
            msg.push_str(
                " (promote-to-rt came with v6.5; switch ioprio.policies is none-to-rt, \
                 as in the 6.1 profile)",
            );
        }
        if DOC_ONLY_NAMES.contains(&s) {
            msg.push_str(
                " (that name appeared only in old documentation; the kernel never accepted it)",
            );
        }
        Err(KernelError::einval(msg))
    }

    /// `blkcg_set_ioprio`: the policy applied to a bio priority that
    /// `bio_set_ioprio` has already filled in from the task (current table).
    pub fn apply(self, prio: Ioprio) -> Ioprio {
        self.apply_in(prio, PolicyTable::PromoteToRt)
    }

    /// `blkcg_set_ioprio` of a kernel with policy table `table`. Before v6.5
    /// `none-to-rt` (policy 1 there) went through the same numeric maximum
    /// as the other policies: NONE became RT/0, every class kept its value.
    pub fn apply_in(self, prio: Ioprio, table: PolicyTable) -> Ioprio {
        if self == PrioPolicy::NoneToRt && table == PolicyTable::NoneToRt {
            let floor = (IoprioClass::Rt as u16) << IOPRIO_CLASS_SHIFT;
            return Ioprio(prio.0.max(floor));
        }
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
    /// The kernel's policy table (switch `ioprio.policies`).
    table: PolicyTable,
}

impl BlkIoprio {
    /// Read each cgroup's `io.prio.class`. The scenario's writes are kept one
    /// per line; each line is one write, so the last one wins. Empty lines
    /// (left by a write that ended in a newline) are not writes. The first
    /// write the kernel would reject is returned with its cgroup.
    pub fn new(cgroups: &CgroupTree, table: PolicyTable) -> Result<BlkIoprio, (CgId, KernelError)> {
        let mut policy = vec![PrioPolicy::NoChange; cgroups.len()];
        for id in cgroups.ids() {
            if let Some(content) = cgroups.file(id, FILE) {
                for line in content.split('\n').filter(|l| !l.is_empty()) {
                    policy[id as usize] = PrioPolicy::parse_in(line, table).map_err(|e| (id, e))?;
                }
            }
        }
        Ok(BlkIoprio { policy, table })
    }

    /// A write to `io.prio.class` during the run. On error the old value stays.
    pub fn write(&mut self, cg: CgId, value: &str) -> Result<(), KernelError> {
        let p = PrioPolicy::parse_in(value, self.table)?;
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
        self.policy(cg).apply_in(prio, self.table)
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

    /// v5.14..v6.4 (the 6.1 profile): `none-to-rt` is a numeric maximum
    /// with RT/0, so an ordinary task's BE/4 bio stays BE/4 (the even split
    /// measured on the kernel built from Debian's 6.1 source); only a bio of
    /// class NONE becomes RT, at level 0. `promote-to-rt` does not exist.
    #[test]
    fn none_to_rt_before_v6_5_is_a_maximum() {
        use IoprioClass::*;
        let t = PolicyTable::NoneToRt;
        let p = PrioPolicy::parse_in("none-to-rt\n", t).unwrap();
        assert_eq!(p, PrioPolicy::NoneToRt);
        assert_eq!(p.name(), "none-to-rt");
        for (input, want) in [
            (IOPRIO_DEFAULT, v(Rt, 0)),
            (v(Be, 4), v(Be, 4)),
            (v(Be, 0), v(Be, 0)),
            (v(Idle, 7), v(Idle, 7)),
            (v(Rt, 6), v(Rt, 6)),
            (Ioprio::new(Rt, 2, 3), Ioprio::new(Rt, 2, 3)),
        ] {
            assert_eq!(p.apply_in(input, t), want, "{input}");
        }
        // the other policies are the same in both tables
        for pol in ["restrict-to-be", "idle", "no-change"] {
            let a = PrioPolicy::parse_in(pol, t).unwrap();
            let b = PrioPolicy::parse(pol).unwrap();
            assert_eq!(a, b);
            for x in [IOPRIO_DEFAULT, v(Rt, 3), v(Be, 4), v(Idle, 1)] {
                assert_eq!(a.apply_in(x, t), b.apply(x), "{pol} on {x}");
            }
        }
        let e = PrioPolicy::parse_in("promote-to-rt", t).unwrap_err();
        assert_eq!(e.errno, Errno::Einval);
        assert!(e.msg.contains("v6.5"), "{}", e.msg);
        assert!(!e.msg.contains("promote-to-rt, "), "{}", e.msg);

        // end to end through the cgroup file, as Sim sets it up
        let mut tree = CgroupTree::new();
        let a = tree.ensure("/a").unwrap();
        tree.write_file(a, FILE, "none-to-rt");
        let old = BlkIoprio::new(&tree, t).unwrap();
        let new = BlkIoprio::new(&tree, PolicyTable::PromoteToRt).unwrap();
        let task = Ioprio::task_default(0); // BE/4
        assert_eq!(old.bio_ioprio(a, task), task);
        assert_eq!(new.bio_ioprio(a, task), v(Rt, 4));
        tree.write_file(a, FILE, "promote-to-rt");
        let (cg, e) = BlkIoprio::new(&tree, t).unwrap_err();
        assert_eq!((cg, e.errno), (a, Errno::Einval));
        let mut old = old;
        assert_eq!(
            old.write(a, "promote-to-rt").unwrap_err().errno,
            Errno::Einval
        );
        assert_eq!(old.show(a), "none-to-rt", "a failed write changes nothing");
    }

    #[test]
    fn the_switch_picks_the_table() {
        let mut sw = Switches::default();
        assert_eq!(PolicyTable::from_switches(&sw), PolicyTable::PromoteToRt);
        sw.set(SWITCH, "none-to-rt").unwrap();
        assert_eq!(PolicyTable::from_switches(&sw), PolicyTable::NoneToRt);
        let p61 = crate::sim::switches::profile("6.1").unwrap();
        assert_eq!(
            PolicyTable::from_switches(&Switches::from_profile(p61)),
            PolicyTable::NoneToRt
        );
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
        let bi = BlkIoprio::new(&t, PolicyTable::default()).unwrap();
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
        let bi = BlkIoprio::new(&t, PolicyTable::default()).unwrap();
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
        let (cg, e) = BlkIoprio::new(&t, PolicyTable::default()).unwrap_err();
        assert_eq!((cg, e.errno), (a, Errno::Einval));
        let mut bi = BlkIoprio::new(&CgroupTree::new(), PolicyTable::default()).unwrap();
        bi.write(0, "idle").unwrap();
        assert!(bi.write(0, "nonsense").is_err());
        assert_eq!(bi.policy(0), PrioPolicy::AllToIdle);
        // A cgroup id the table has not seen yet reads as no-change and can be written.
        assert_eq!(bi.policy(9), PrioPolicy::NoChange);
        bi.write(9, "none-to-rt").unwrap();
        assert_eq!(bi.show(9), "none-to-rt");
    }
}
