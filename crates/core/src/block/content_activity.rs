//! "Content activity based ioprio" (Zhaoyang Huang, PATCHv8, 5 Feb 2024;
//! never merged): raise a bio's priority class when enough of its pages are
//! hot, meaning they carry PG_workingset. Two mutually exclusive APIs exist
//! in v8 and both are modelled, selected by the switch
//! `ioprio.content_activity = off | iter-bio | add-page`:
//!
//! * `iter-bio` (`CONFIG_BLK_CONT_ACT_BASED_IOPRIO_ITER_BIO`,
//!   `bio_set_active_ioprio`): the filesystem calls it once, before
//!   `submit_bio`; it walks the bio's (multi-page) bvecs.
//! * `add-page` (`..._ADD_PAGE`, `bio_set_active_ioprio_page/_folio`): the
//!   filesystem calls it after every successful `bio_add_page/_folio`; a
//!   per-bio counter `bi_cont_act` accumulates.
//!
//! Everything here is a pure function of a description of the bio: one
//! [`PageAdd`] per successful add, in order, with the page's flags as the
//! page-cache model sees them. The result is the bio's priority *before*
//! `submit_bio`; `bio_set_ioprio` (crate::block::blk_ioprio) then keeps it because
//! its class is no longer NONE, and io.prio.class still applies on top.

use crate::block::ioprio::{Ioprio, IoprioClass};
use crate::sim::switches::Switches;

/// The switch that selects the variant.
pub const SWITCH: &str = "ioprio.content_activity";

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    #[default]
    Off,
    IterBio,
    AddPage,
}

impl Mode {
    pub fn from_switches(sw: &Switches) -> Mode {
        match sw.get(SWITCH) {
            "iter-bio" => Mode::IterBio,
            "add-page" => Mode::AddPage,
            _ => Mode::Off,
        }
    }
}

/// One successful `bio_add_page` / `bio_add_folio` call, as the patch sees it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PageAdd {
    /// PG_workingset of the page (for a folio: of its head page). This is the
    /// only flag the v8 rule reads.
    pub workingset: bool,
    /// PG_active. Carried so that the page-cache model can describe pages
    /// completely; the v8 rule does **not** consult it.
    pub active: bool,
    /// `bvec_try_merge_page` succeeded: the page is physically contiguous with
    /// the end of the previous bvec (or is the same page), so the add extended
    /// that bvec and `bi_vcnt` did not grow. Ignored for the first add.
    pub merges_into_prev: bool,
}

impl PageAdd {
    pub fn new(workingset: bool) -> PageAdd {
        PageAdd {
            workingset,
            active: false,
            merges_into_prev: false,
        }
    }
}

/// What the rule needs to know about the submitting task (`current`): the
/// class of `get_current_ioprio()` and whether `task_is_realtime(current)`.
/// For writeback this is the flusher kworker (BE, not real-time).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Submitter {
    /// `get_current_ioprio()` (see `Ioprio::task_ioprio`).
    pub task_prio: Ioprio,
    /// SCHED_FIFO/RR/DEADLINE.
    pub realtime: bool,
}

impl Default for Submitter {
    /// A SCHED_NORMAL nice-0 task (or a flusher kworker): BE/4.
    fn default() -> Submitter {
        Submitter {
            task_prio: Ioprio::task_default(0),
            realtime: false,
        }
    }
}

/// The class used when more than a quarter of the bvecs are active:
/// `max(class of get_current_ioprio(), BE)` as a numeric maximum of class
/// codes, so NONE and RT give BE while IDLE stays IDLE.
#[inline]
fn be_floor(task: &Submitter) -> u16 {
    (task.task_prio.class() as u16).max(IoprioClass::Be as u16)
}

#[inline]
fn with_class(prio: Ioprio, class: u16) -> Ioprio {
    // IOPRIO_PRIO_VALUE_HINT(class, level, hint): level and hint untouched.
    Ioprio(((class & 7) << crate::block::ioprio::IOPRIO_CLASS_SHIFT) | (prio.0 & 0x1fff))
}

/// `bio_set_active_ioprio` (ITER_BIO variant). `bio_prio` is the bio's
/// priority when the filesystem calls the function (normally NONE/0).
///
/// The walk takes one sample per bvec — the first page of a multi-page bvec
/// (`bio_for_each_bvec`) — and `n` is `bi_vcnt`, the number of bvecs. Pages
/// merged into a previous bvec are therefore not sampled at all.
pub fn iter_bio(bio_prio: Ioprio, task: &Submitter, adds: &[PageAdd]) -> Ioprio {
    if task.realtime {
        // RT tasks: the bio is forced to class RT, level/hint kept, nothing counted.
        return with_class(bio_prio, IoprioClass::Rt as u16);
    }
    let n = bvec_count(adds);
    let mut class = bio_prio.class() as u16;
    let mut active = 0u32;
    let mut walked = 0u32;
    for (i, a) in adds.iter().enumerate() {
        if i > 0 && a.merges_into_prev {
            continue; // not the first page of a bvec: not sampled
        }
        active += a.workingset as u32;
        walked += 1;
        if active > n / 2 {
            class = IoprioClass::Rt as u16;
            break;
        } else if active > n / 4 {
            if active == walked {
                // Every bvec so far was active: RT at once.
                class = IoprioClass::Rt as u16;
                break;
            }
            class = be_floor(task);
        }
    }
    // The patch re-tests against the walked count; with `walked == n` (no
    // clone or split changing bi_vcnt, which this model does not produce)
    // these lines cannot change the result, but they are kept as written.
    if class == IoprioClass::None as u16 && active > walked / 2 {
        class = IoprioClass::Rt as u16;
    } else if class == IoprioClass::None as u16 && active > walked / 4 {
        class = be_floor(task);
    }
    with_class(bio_prio, class)
}

/// `bi_vcnt` after all the adds: each add that did not merge into the
/// previous bvec opens a new one.
pub fn bvec_count(adds: &[PageAdd]) -> u32 {
    adds.iter()
        .enumerate()
        .filter(|(i, a)| *i == 0 || !a.merges_into_prev)
        .count() as u32
}

/// State of one bio under the ADD_PAGE variant: the bio's priority, the
/// `bi_cont_act` counter (which the patch adds to `struct bio` without
/// initialising it in `bio_init`; the model starts it at 0) and `bi_vcnt`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AddPageState {
    pub prio: Ioprio,
    pub cont_act: u64,
    pub vcnt: u32,
}

impl AddPageState {
    pub fn new(bio_prio: Ioprio) -> AddPageState {
        AddPageState {
            prio: bio_prio,
            cont_act: 0,
            vcnt: 0,
        }
    }

    /// One `bio_add_page` followed by `bio_set_active_ioprio_page` (or the
    /// folio pair, which tests the head page). The counter counts pages while
    /// `bi_vcnt` counts bvecs: a page merged into the previous bvec is still
    /// counted (the author's "bvec_try_merge_page" caveat), so the ratio is
    /// inflated and may exceed 1. There is no real-time short-cut here.
    pub fn add(&mut self, task: &Submitter, page: PageAdd) {
        if self.vcnt == 0 || !page.merges_into_prev {
            self.vcnt += 1;
        }
        self.cont_act += page.workingset as u64;
        let v = self.vcnt as u64;
        let class = if self.cont_act > v / 2 {
            IoprioClass::Rt as u16
        } else if self.cont_act > v / 4 {
            be_floor(task)
        } else {
            // Nothing crossed: the class left by an earlier call survives.
            self.prio.class() as u16
        };
        self.prio = with_class(self.prio, class);
    }
}

/// The ADD_PAGE variant over a whole bio: the priority after the last add.
pub fn add_page(bio_prio: Ioprio, task: &Submitter, adds: &[PageAdd]) -> Ioprio {
    let mut st = AddPageState::new(bio_prio);
    for a in adds {
        st.add(task, *a);
    }
    st.prio
}

/// The bio's priority before `submit_bio` under `mode`.
pub fn apply(mode: Mode, bio_prio: Ioprio, task: &Submitter, adds: &[PageAdd]) -> Ioprio {
    match mode {
        Mode::Off => bio_prio,
        Mode::IterBio => iter_bio(bio_prio, task, adds),
        Mode::AddPage => add_page(bio_prio, task, adds),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::ioprio::IOPRIO_DEFAULT;

    const RT0: Ioprio = Ioprio(1 << 13);
    const BE0: Ioprio = Ioprio(2 << 13);

    fn pages(flags: &[bool]) -> Vec<PageAdd> {
        flags.iter().map(|&w| PageAdd::new(w)).collect()
    }
    fn normal() -> Submitter {
        Submitter::default()
    }

    /// §6.3 threshold table for ITER_BIO, checked at the edges: one fewer
    /// active than each threshold must not reach it.
    #[test]
    fn iter_bio_threshold_table() {
        // (n, RT if active count >=, RT if the first k are all active, BE floor if active >=)
        let table: &[(usize, usize, usize, Option<usize>)] = &[
            (1, 1, 1, None),
            (2, 2, 1, Some(1)),
            (3, 2, 1, Some(1)),
            (4, 3, 2, Some(2)),
            (7, 4, 2, Some(2)),
            (8, 5, 3, Some(3)),
            (16, 9, 5, Some(5)),
            (32, 17, 9, Some(9)),
            (64, 33, 17, Some(17)),
        ];
        let t = normal();
        for &(n, rt_count, lead, floor) in table {
            // Active pages at the end, after an inactive first page, so the
            // leading-run rule cannot fire.
            let tail = |k: usize| -> Vec<bool> { (0..n).map(|i| i >= n - k && i > 0).collect() };
            // Only testable without the leading-run rule when the first page can be cold.
            if rt_count < n {
                assert_eq!(
                    iter_bio(IOPRIO_DEFAULT, &t, &pages(&tail(rt_count))).class(),
                    IoprioClass::Rt,
                    "n={n}"
                );
                let below = iter_bio(IOPRIO_DEFAULT, &t, &pages(&tail(rt_count - 1)));
                assert_ne!(
                    below.class(),
                    IoprioClass::Rt,
                    "n={n} one below the RT count"
                );
            }
            // The leading run of `lead` active bvecs.
            let run: Vec<bool> = (0..n).map(|i| i < lead).collect();
            assert_eq!(
                iter_bio(IOPRIO_DEFAULT, &t, &pages(&run)).class(),
                IoprioClass::Rt,
                "n={n} lead"
            );
            if let Some(f) = floor {
                assert_eq!(
                    iter_bio(IOPRIO_DEFAULT, &t, &pages(&tail(f))),
                    BE0,
                    "n={n} floor"
                );
                assert_eq!(
                    iter_bio(IOPRIO_DEFAULT, &t, &pages(&tail(f - 1))),
                    IOPRIO_DEFAULT,
                    "n={n} below floor"
                );
                if lead > 1 {
                    let short: Vec<bool> = (0..n).map(|i| i < lead - 1).collect();
                    assert_ne!(
                        iter_bio(IOPRIO_DEFAULT, &t, &pages(&short)).class(),
                        IoprioClass::Rt,
                        "n={n}"
                    );
                }
            }
        }
    }

    /// The spec's 8-page example: only the first two pages active.
    /// ADD_PAGE: RT after calls 1–3, BE floor after 4–7, call 8 crosses
    /// nothing -> BE floor. ITER_BIO: 2 <= 8/4 -> unchanged.
    #[test]
    fn eight_page_example_variants_disagree() {
        let t = normal();
        let adds = pages(&[true, true, false, false, false, false, false, false]);
        let mut st = AddPageState::new(IOPRIO_DEFAULT);
        let mut classes = Vec::new();
        for a in &adds {
            st.add(&t, *a);
            classes.push(st.prio.class());
        }
        use IoprioClass::*;
        assert_eq!(classes, vec![Rt, Rt, Rt, Be, Be, Be, Be, Be]);
        assert_eq!(add_page(IOPRIO_DEFAULT, &t, &adds), BE0);
        assert_eq!(iter_bio(IOPRIO_DEFAULT, &t, &adds), IOPRIO_DEFAULT);
    }

    /// Bvec-merge caveat: 8 pages, each physically contiguous with the one
    /// before, make one bvec. ADD_PAGE counts 1 active page per call against
    /// bi_vcnt = 1, so a single active page anywhere makes the bio RT;
    /// ITER_BIO samples only the first page of the single bvec.
    #[test]
    fn bvec_merge_caveat() {
        let t = normal();
        let mut adds = pages(&[false, false, false, false, false, false, false, true]);
        for a in adds.iter_mut().skip(1) {
            a.merges_into_prev = true;
        }
        assert_eq!(bvec_count(&adds), 1);
        assert_eq!(add_page(IOPRIO_DEFAULT, &t, &adds), RT0);
        assert_eq!(iter_bio(IOPRIO_DEFAULT, &t, &adds), IOPRIO_DEFAULT);
        // The ratio can exceed 1: 8 active pages in 1 bvec.
        let mut st = AddPageState::new(IOPRIO_DEFAULT);
        for a in &adds {
            st.add(
                &t,
                PageAdd {
                    workingset: true,
                    ..*a
                },
            );
        }
        assert_eq!((st.cont_act, st.vcnt), (8, 1));
        // And the other way round: a hot first page makes ITER_BIO RT even
        // though the rest of the (single) bvec is cold.
        adds[0].workingset = true;
        adds[7].workingset = false;
        assert_eq!(iter_bio(IOPRIO_DEFAULT, &t, &adds), RT0);
    }

    /// RT short-cut exists only in ITER_BIO: a real-time task's bio becomes
    /// RT with no active page; ADD_PAGE ignores the task's policy.
    #[test]
    fn rt_task_shortcut_iter_bio_only() {
        let rt = Submitter {
            task_prio: Ioprio::new(IoprioClass::Rt, 4, 0),
            realtime: true,
        };
        let cold = pages(&[false; 8]);
        let lvl = Ioprio::new(IoprioClass::None, 0, 2); // hint kept
        assert_eq!(
            iter_bio(lvl, &rt, &cold),
            Ioprio::new(IoprioClass::Rt, 0, 2)
        );
        assert_eq!(add_page(lvl, &rt, &cold), lvl);
        // The > 1/4 floor for an RT-class (but here non-realtime-flagged) task is BE.
        let rt_class = Submitter {
            realtime: false,
            ..rt
        };
        let q = pages(&[false, false, false, false, false, true, true, true]);
        assert_eq!(iter_bio(IOPRIO_DEFAULT, &rt_class, &q), BE0);
    }

    /// The "floor" is a numeric max of class codes: an IDLE task stays IDLE,
    /// and levels are never touched (NONE/0 becomes RT/0 or BE/0, not /4).
    #[test]
    fn floor_and_levels() {
        let idle = Submitter {
            task_prio: Ioprio::new(IoprioClass::Idle, 0, 0),
            realtime: false,
        };
        let q = pages(&[false, false, false, false, false, true, true, true]);
        assert_eq!(
            iter_bio(IOPRIO_DEFAULT, &idle, &q).class(),
            IoprioClass::Idle
        );
        assert_eq!(
            add_page(IOPRIO_DEFAULT, &idle, &q).class(),
            IoprioClass::Idle
        );
        let be3 = Ioprio::new(IoprioClass::Be, 3, 0);
        let hot = pages(&[true; 4]);
        assert_eq!(
            iter_bio(be3, &normal(), &hot),
            Ioprio::new(IoprioClass::Rt, 3, 0)
        );
        assert_eq!(
            add_page(be3, &normal(), &hot),
            Ioprio::new(IoprioClass::Rt, 3, 0)
        );
    }

    #[test]
    fn mode_from_switch() {
        let mut sw = Switches::default();
        assert_eq!(Mode::from_switches(&sw), Mode::Off);
        sw.set(SWITCH, "add-page").unwrap();
        assert_eq!(Mode::from_switches(&sw), Mode::AddPage);
        let adds = pages(&[true]);
        assert_eq!(
            apply(Mode::Off, IOPRIO_DEFAULT, &normal(), &adds),
            IOPRIO_DEFAULT
        );
        assert_eq!(
            apply(Mode::from_switches(&sw), IOPRIO_DEFAULT, &normal(), &adds),
            RT0
        );
        sw.set(SWITCH, "iter-bio").unwrap();
        assert_eq!(
            apply(Mode::from_switches(&sw), IOPRIO_DEFAULT, &normal(), &adds),
            RT0
        );
        // Empty bio: nothing changes in either variant.
        assert_eq!(iter_bio(BE0, &normal(), &[]), BE0);
        assert_eq!(add_page(BE0, &normal(), &[]), BE0);
    }
}
