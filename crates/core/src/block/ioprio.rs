//! The ioprio value (include/uapi/linux/ioprio.h): 3 bits of class, 10 bits of
//! hint and 3 bits of level packed into a u16, and how a task's priority is
//! derived (include/linux/ioprio.h `__get_task_ioprio`, `task_nice_ioclass`,
//! `task_nice_ioprio`; block/ioprio.c `ioprio_check_cap`; fio's
//! `prio`/`prioclass` options, which fio turns into one `ioprio_set` call).

use std::fmt;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Ioprio(pub u16);

pub const IOPRIO_CLASS_SHIFT: u16 = 13;
pub const IOPRIO_HINT_SHIFT: u16 = 3;
/// `IOPRIO_NR_LEVELS`: levels 0 (highest) … 7 (lowest).
pub const IOPRIO_NR_LEVELS: u8 = 8;
/// `IOPRIO_NORM`: the best-effort level used when nothing else says otherwise.
pub const IOPRIO_NORM: u8 = 4;
/// `IOPRIO_DEFAULT` = class NONE, level 0: "no priority set".
pub const IOPRIO_DEFAULT: Ioprio = Ioprio(0);

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum IoprioClass {
    None = 0,
    Rt = 1,
    Be = 2,
    Idle = 3,
    /// IOPRIO_CLASS_INVALID (7); the model also reports classes 4..6 as invalid.
    Invalid = 7,
}

impl IoprioClass {
    /// The class for a raw 3-bit class number (4..7 are all invalid).
    pub fn from_u8(c: u8) -> IoprioClass {
        match c {
            0 => IoprioClass::None,
            1 => IoprioClass::Rt,
            2 => IoprioClass::Be,
            3 => IoprioClass::Idle,
            _ => IoprioClass::Invalid,
        }
    }
    /// Short name used in blklab output (`none`, `rt`, `be`, `idle`).
    pub fn name(self) -> &'static str {
        match self {
            IoprioClass::None => "none",
            IoprioClass::Rt => "rt",
            IoprioClass::Be => "be",
            IoprioClass::Idle => "idle",
            IoprioClass::Invalid => "invalid",
        }
    }
}

/// Scheduling policy of the submitting task, as far as I/O priority cares
/// (`task_nice_ioclass` looks at SCHED_IDLE and at real-time policies).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SchedPolicy {
    #[default]
    Normal,
    Batch,
    Idle,
    Fifo,
    Rr,
    Deadline,
}

impl SchedPolicy {
    /// `rt_or_dl_task_policy` / `task_is_realtime`: FIFO, RR and DEADLINE.
    pub fn is_realtime(self) -> bool {
        matches!(
            self,
            SchedPolicy::Fifo | SchedPolicy::Rr | SchedPolicy::Deadline
        )
    }
}

/// Why `ioprio_check_cap` rejects a value (the errno of `ioprio_set(2)`).
/// EPERM is not one of `kerr::Errno`'s values, hence this small enum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IoprioCapError {
    /// -EPERM: RT class without CAP_SYS_ADMIN / CAP_SYS_NICE.
    Eperm,
    /// -EINVAL: unknown class, or class NONE with a non-zero level.
    Einval,
}

impl fmt::Display for IoprioCapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IoprioCapError::Eperm => write!(
                f,
                "the real-time I/O class needs CAP_SYS_ADMIN or CAP_SYS_NICE (EPERM)"
            ),
            IoprioCapError::Einval => {
                write!(f, "invalid I/O priority: class must be 0..3 and class 'none' takes level 0 (EINVAL)")
            }
        }
    }
}

impl Ioprio {
    /// `IOPRIO_PRIO_VALUE_HINT(class, level, hint)`
    pub fn new(class: IoprioClass, level: u8, hint: u16) -> Ioprio {
        Ioprio(
            ((class as u16) << IOPRIO_CLASS_SHIFT)
                | ((hint & 0x3ff) << IOPRIO_HINT_SHIFT)
                | (level as u16 & 7),
        )
    }
    pub fn class(self) -> IoprioClass {
        IoprioClass::from_u8((self.0 >> IOPRIO_CLASS_SHIFT) as u8)
    }
    pub fn level(self) -> u8 {
        (self.0 & 7) as u8
    }
    pub fn hint(self) -> u16 {
        (self.0 >> IOPRIO_HINT_SHIFT) & 0x3ff
    }
    /// `ioprio_valid`: class RT, BE or IDLE.
    pub fn is_valid(self) -> bool {
        matches!(
            self.class(),
            IoprioClass::Rt | IoprioClass::Be | IoprioClass::Idle
        )
    }

    /// The priority fio's `prioclass=`/`prio=` options give a job
    /// (fio `ioprio_value` + `ioprio_set(IOPRIO_WHO_PROCESS, 0, …)` in its
    /// `thread_main`). fio calls `ioprio_set` only if one of the two options
    /// is set; then a missing or 0 class means BE and a missing level means 0.
    /// With neither set the job's io_context keeps `IOPRIO_DEFAULT` (NONE),
    /// which [`Ioprio::task_ioprio`] turns into the nice-derived priority.
    ///
    /// fio's option parser already limits `prio` to 0..7 and `prioclass` to
    /// 0..3; larger inputs are masked into their fields here, as the packed
    /// value would be.
    pub fn from_fio(prioclass: Option<u8>, prio: Option<u8>) -> Ioprio {
        if prioclass.is_none() && prio.is_none() {
            return IOPRIO_DEFAULT;
        }
        let class = match prioclass.unwrap_or(0) {
            0 => IoprioClass::Be as u16,
            c => (c & 7) as u16,
        };
        Ioprio((class << IOPRIO_CLASS_SHIFT) | (prio.unwrap_or(0) as u16 & 7))
    }

    /// `task_nice_ioprio`: level = (nice + 20) / 5, nice clamped to -20..19
    /// as the scheduler keeps it.
    pub fn nice_level(nice: i32) -> u8 {
        ((nice.clamp(-20, 19) + 20) / 5) as u8
    }

    /// `task_nice_ioclass`: SCHED_IDLE -> IDLE, real-time policies -> RT, else BE.
    pub fn nice_class(policy: SchedPolicy) -> IoprioClass {
        if policy == SchedPolicy::Idle {
            IoprioClass::Idle
        } else if policy.is_realtime() {
            IoprioClass::Rt
        } else {
            IoprioClass::Be
        }
    }

    /// The priority a SCHED_NORMAL task with no `ioprio_set` gets from its
    /// nice value: BE / `task_nice_ioprio` (nice 0 -> BE/4).
    pub fn task_default(nice: i32) -> Ioprio {
        Ioprio::new(IoprioClass::Be, Self::nice_level(nice), 0)
    }

    /// `__get_task_ioprio` (6.17-era, i.e. with the July 2025 fix that again
    /// derives the value when the task has no io_context): the io_context
    /// priority set by `ioprio_set` (`ioc_prio`, NONE when never set), or,
    /// if its class is NONE, the value derived from policy and nice.
    pub fn task_ioprio(ioc_prio: Ioprio, nice: i32, policy: SchedPolicy) -> Ioprio {
        if ioc_prio.class() != IoprioClass::None {
            return ioc_prio;
        }
        Ioprio::new(Self::nice_class(policy), Self::nice_level(nice), 0)
    }

    /// `ioprio_check_cap` (v6.5+ layout, hints allowed): the check applied
    /// to `ioprio_set(2)` and to per-I/O priorities (aio `aio_reqprio`,
    /// io_uring `sqe->ioprio`). `value` is the raw int the caller passed;
    /// `privileged` stands for CAP_SYS_ADMIN or CAP_SYS_NICE.
    pub fn check_cap(value: i32, privileged: bool) -> Result<(), IoprioCapError> {
        // IOPRIO_PRIO_CLASS / IOPRIO_PRIO_LEVEL mask their fields, so bits
        // above 15 are ignored, as in the kernel.
        let class = ((value >> IOPRIO_CLASS_SHIFT) & 7) as u8;
        let level = (value & 7) as u8;
        match IoprioClass::from_u8(class) {
            IoprioClass::Rt if !privileged => Err(IoprioCapError::Eperm),
            // A 3-bit level can never reach IOPRIO_NR_LEVELS; the kernel's
            // range check is kept for the record.
            IoprioClass::Rt | IoprioClass::Be if level >= IOPRIO_NR_LEVELS => {
                Err(IoprioCapError::Einval)
            }
            IoprioClass::Rt | IoprioClass::Be | IoprioClass::Idle => Ok(()),
            IoprioClass::None if level != 0 => Err(IoprioCapError::Einval),
            IoprioClass::None => Ok(()),
            IoprioClass::Invalid => Err(IoprioCapError::Einval),
        }
    }

    /// Parse blklab's own notation: `none`, `rt/3`, `be/4`, `idle`, `idle/0`,
    /// optionally `+hintN` (e.g. `be/2+hint1`), or a raw number (`16388`,
    /// `0x4004`). Class names `realtime` and `best-effort` (ionice's) are
    /// accepted too.
    pub fn parse(s: &str) -> Result<Ioprio, String> {
        let t = s.trim();
        let raw = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
            u16::from_str_radix(h, 16).ok()
        } else {
            t.parse::<u16>().ok()
        };
        if let Some(v) = raw {
            return Ok(Ioprio(v));
        }
        let (main, hint) = match t.split_once("+hint") {
            Some((m, h)) => {
                let h: u16 = h
                    .parse()
                    .ok()
                    .filter(|h| *h < 1024)
                    .ok_or_else(|| format!("ioprio '{s}': hint must be 0..1023"))?;
                (m, h)
            }
            None => (t, 0),
        };
        let (cls, lvl) = match main.split_once('/') {
            Some((c, l)) => (c, Some(l)),
            None => (main, None),
        };
        let class = match cls.to_ascii_lowercase().as_str() {
            "none" => IoprioClass::None,
            "rt" | "realtime" => IoprioClass::Rt,
            "be" | "best-effort" => IoprioClass::Be,
            "idle" => IoprioClass::Idle,
            _ => {
                return Err(format!(
                    "ioprio '{s}': expected none, rt/N, be/N or idle (N = level 0..7), or a raw 16-bit value"
                ))
            }
        };
        let level = match lvl {
            Some(l) => l
                .parse::<u8>()
                .ok()
                .filter(|l| *l < IOPRIO_NR_LEVELS)
                .ok_or_else(|| format!("ioprio '{s}': level must be 0..7"))?,
            None => match class {
                IoprioClass::Rt | IoprioClass::Be => {
                    return Err(format!(
                        "ioprio '{s}': class {} needs a level, e.g. {}/4",
                        class.name(),
                        class.name()
                    ))
                }
                _ => 0,
            },
        };
        Ok(Ioprio::new(class, level, hint))
    }
}

/// `none`, `rt/4`, `be/0`, `idle/0` (level printed for every class so that
/// distinct values print differently), `+hintN` when a hint is set, and the
/// raw value for invalid classes.
impl fmt::Display for Ioprio {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.class() {
            IoprioClass::None if self.0 == 0 => write!(f, "none"),
            IoprioClass::Invalid => write!(f, "invalid(0x{:04x})", self.0),
            c => {
                write!(f, "{}/{}", c.name(), self.level())?;
                if self.hint() != 0 {
                    write!(f, "+hint{}", self.hint())?;
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(c: IoprioClass, l: u8) -> Ioprio {
        Ioprio::new(c, l, 0)
    }

    #[test]
    fn encoding() {
        assert_eq!(v(IoprioClass::Be, 4).0, (2 << 13) | 4);
        assert_eq!(
            Ioprio::new(IoprioClass::Rt, 3, 5).0,
            (1 << 13) | (5 << 3) | 3
        );
        let p = Ioprio::new(IoprioClass::Idle, 7, 1023);
        assert_eq!(
            (p.class(), p.level(), p.hint()),
            (IoprioClass::Idle, 7, 1023)
        );
        assert_eq!(Ioprio(7 << 13).class(), IoprioClass::Invalid);
        assert_eq!(Ioprio(5 << 13).class(), IoprioClass::Invalid);
        assert!(!IOPRIO_DEFAULT.is_valid());
        assert!(v(IoprioClass::Idle, 0).is_valid());
    }

    /// fio prioclass/prio -> the value fio passes to ioprio_set.
    #[test]
    fn from_fio_table() {
        let rows: &[(Option<u8>, Option<u8>, Ioprio)] = &[
            (None, None, IOPRIO_DEFAULT),
            (None, Some(0), v(IoprioClass::Be, 0)),
            (None, Some(7), v(IoprioClass::Be, 7)),
            (Some(0), None, v(IoprioClass::Be, 0)),
            (Some(0), Some(3), v(IoprioClass::Be, 3)),
            (Some(1), None, v(IoprioClass::Rt, 0)),
            (Some(1), Some(2), v(IoprioClass::Rt, 2)),
            (Some(2), Some(6), v(IoprioClass::Be, 6)),
            (Some(3), None, v(IoprioClass::Idle, 0)),
            (Some(3), Some(5), v(IoprioClass::Idle, 5)),
        ];
        for (c, p, want) in rows {
            assert_eq!(
                Ioprio::from_fio(*c, *p),
                *want,
                "prioclass={c:?} prio={p:?}"
            );
        }
    }

    /// The nice -> level table of the spec (§2.2).
    #[test]
    fn nice_table() {
        let rows = [
            (-20, 0),
            (-16, 0),
            (-15, 1),
            (-11, 1),
            (-10, 2),
            (-6, 2),
            (-5, 3),
            (-1, 3),
            (0, 4),
            (4, 4),
            (5, 5),
            (9, 5),
            (10, 6),
            (14, 6),
            (15, 7),
            (19, 7),
            (-40, 0),
            (40, 7),
        ];
        for (nice, level) in rows {
            assert_eq!(
                Ioprio::task_default(nice),
                v(IoprioClass::Be, level),
                "nice {nice}"
            );
        }
    }

    #[test]
    fn task_ioprio() {
        use SchedPolicy::*;
        // No ioprio_set: derived from policy and nice.
        assert_eq!(
            Ioprio::task_ioprio(IOPRIO_DEFAULT, 0, Normal),
            v(IoprioClass::Be, 4)
        );
        assert_eq!(
            Ioprio::task_ioprio(IOPRIO_DEFAULT, 0, Fifo),
            v(IoprioClass::Rt, 4)
        );
        assert_eq!(
            Ioprio::task_ioprio(IOPRIO_DEFAULT, -20, Deadline),
            v(IoprioClass::Rt, 0)
        );
        assert_eq!(
            Ioprio::task_ioprio(IOPRIO_DEFAULT, 10, Idle),
            v(IoprioClass::Idle, 6)
        );
        assert_eq!(
            Ioprio::task_ioprio(IOPRIO_DEFAULT, 19, Batch),
            v(IoprioClass::Be, 7)
        );
        // An explicit ioprio_set wins over policy and nice.
        let fio = Ioprio::from_fio(Some(3), None);
        assert_eq!(Ioprio::task_ioprio(fio, -20, Fifo), v(IoprioClass::Idle, 0));
    }

    #[test]
    fn check_cap() {
        assert_eq!(
            Ioprio::check_cap(v(IoprioClass::Rt, 0).0 as i32, false),
            Err(IoprioCapError::Eperm)
        );
        assert_eq!(
            Ioprio::check_cap(v(IoprioClass::Rt, 7).0 as i32, true),
            Ok(())
        );
        assert_eq!(
            Ioprio::check_cap(v(IoprioClass::Be, 7).0 as i32, false),
            Ok(())
        );
        assert_eq!(
            Ioprio::check_cap(Ioprio::new(IoprioClass::Be, 2, 3).0 as i32, false),
            Ok(())
        );
        assert_eq!(
            Ioprio::check_cap(v(IoprioClass::Idle, 5).0 as i32, false),
            Ok(())
        );
        assert_eq!(Ioprio::check_cap(0, false), Ok(()));
        assert_eq!(Ioprio::check_cap(1, false), Err(IoprioCapError::Einval));
        assert_eq!(
            Ioprio::check_cap(4 << 13, true),
            Err(IoprioCapError::Einval)
        );
        assert_eq!(
            Ioprio::check_cap(7 << 13, true),
            Err(IoprioCapError::Einval)
        );
        // Bits above the 16-bit value are masked away, as the kernel's macros do.
        assert_eq!(Ioprio::check_cap((1 << 16) | (2 << 13) | 4, false), Ok(()));
    }

    #[test]
    fn print_and_parse() {
        assert_eq!(IOPRIO_DEFAULT.to_string(), "none");
        assert_eq!(v(IoprioClass::Rt, 4).to_string(), "rt/4");
        assert_eq!(v(IoprioClass::Idle, 0).to_string(), "idle/0");
        assert_eq!(Ioprio::new(IoprioClass::Be, 2, 1).to_string(), "be/2+hint1");
        assert_eq!(Ioprio(7 << 13).to_string(), "invalid(0xe000)");
        for p in [
            IOPRIO_DEFAULT,
            v(IoprioClass::Rt, 4),
            v(IoprioClass::Idle, 3),
            Ioprio::new(IoprioClass::Be, 2, 9),
        ] {
            assert_eq!(Ioprio::parse(&p.to_string()).unwrap(), p);
        }
        assert_eq!(Ioprio::parse("idle").unwrap(), v(IoprioClass::Idle, 0));
        assert_eq!(Ioprio::parse("0x4004").unwrap(), v(IoprioClass::Be, 4));
        assert_eq!(
            Ioprio::parse("best-effort/1").unwrap(),
            v(IoprioClass::Be, 1)
        );
        assert!(Ioprio::parse("be").is_err());
        assert!(Ioprio::parse("be/8").is_err());
        assert!(Ioprio::parse("urgent/1").is_err());
    }
}
