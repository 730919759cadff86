//! The capped disk's race per blk-throttle slice, read from the guest's
//! scheduler trace (guest_cpu.rs captures it; sched_trace.rs parses lines).
//!
//! On the stacked capped disk the cap is io.max on the lower loop device,
//! set on the groups' common parent. Once the parent's budget for a slice
//! is spent every bio waits in its queue; when the next slice opens,
//! blk-throttle's dispatch work (`blk_throtl_dispatch_work_fn`, a kblockd
//! work item) issues the held bios, and the rest of the slice's budget goes
//! to whichever bios reach the lower device first (`tg_may_dispatch` lets a
//! bio through at once while the group has no queued bios and the budget
//! lasts). Who gets there first is decided by how the one vCPU is shared
//! between the fio tasks and the two loop devices' per-blkcg workers.
//!
//! Per slice, per group: the bios the dispatch work released
//! (`block_rq_issue` on the lower device inside that work function) and
//! the bios that passed at once (every other `block_rq_issue` on the lower
//! device), and when the last of those passed. A lower-device request is
//! given the group of the fio task that issued the upper-device request
//! with the same sector (a loop device maps sectors one to one); one whose
//! upper request was issued before the window is counted under `?`.

use std::collections::{BTreeMap, BTreeSet};

use super::sched_trace::parse_trace;

/// The dispatch work of blk-throttle's pending timer.
const DISPATCH_FN: &str = "blk_throtl_dispatch_work_fn";

/// The group of bios whose upper-device issue is not in the window.
const UNKNOWN: &str = "?";

/// One blk-throttle slice as the trace shows it. Times in ns.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Slice {
    /// When the dispatch work started (trace clock).
    pub start_ns: u64,
    /// Bios the dispatch work issued on the lower device, per group.
    pub released: BTreeMap<String, u64>,
    /// Bios that passed the lower device's throttle at once, per group.
    pub direct: BTreeMap<String, u64>,
    /// The last bio of each group that passed at once, after `start_ns`.
    pub last_direct_ns: BTreeMap<String, u64>,
}

/// `DEV SECTOR` of a `block_rq_issue` (`7,2 R 4096 () 92184 + 8 ...`):
/// the device is the first field, the sector the one before `+`.
fn issue_dev_sector(fields: &str) -> Option<(&str, u64)> {
    let w: Vec<&str> = fields.split_whitespace().collect();
    let plus = w.iter().position(|t| *t == "+")?;
    let sector = w.get(plus.checked_sub(1)?)?.parse().ok()?;
    Some((w.first()?, sector))
}

/// The slices of one trace window: `procs` maps fio pids to their group's
/// tag, `upper` and `lower` are the two loop devices (`MAJ:MIN`). Bios
/// issued before the first dispatch work are not counted (a partial slice).
pub fn slices(
    trace: &str,
    procs: &BTreeMap<u32, String>,
    upper: &str,
    lower: &str,
) -> Result<Vec<Slice>, String> {
    let (upper, lower) = (upper.replace(':', ","), lower.replace(':', ","));
    let ev = parse_trace(trace)?;
    let mut group_of: BTreeMap<u64, &str> = BTreeMap::new();
    // the kworkers inside the dispatch work
    let mut dispatching: BTreeSet<u32> = BTreeSet::new();
    let mut out: Vec<Slice> = Vec::new();
    for e in &ev {
        match e.name {
            "workqueue_execute_start" if e.fields.ends_with(DISPATCH_FN) => {
                dispatching.insert(e.pid);
                // one work item per slice start; a second run in the same
                // slice (more bios than one pass dispatches) joins it
                if out.last().is_none_or(|s| !s.direct.is_empty()) {
                    out.push(Slice {
                        start_ns: e.ts_ns,
                        ..Slice::default()
                    });
                }
            }
            "workqueue_execute_end" => {
                dispatching.remove(&e.pid);
            }
            "block_rq_issue" => {
                let Some((dev, sector)) = issue_dev_sector(e.fields) else {
                    return Err(format!(
                        "block_rq_issue without DEV SECTOR: \"{}\"",
                        e.fields
                    ));
                };
                if dev == upper {
                    if let Some(tag) = procs.get(&e.pid) {
                        group_of.insert(sector, tag);
                    }
                } else if dev == lower {
                    let Some(s) = out.last_mut() else { continue };
                    let g = group_of
                        .get(&sector)
                        .copied()
                        .unwrap_or(UNKNOWN)
                        .to_string();
                    if dispatching.contains(&e.pid) {
                        *s.released.entry(g).or_insert(0) += 1;
                    } else {
                        *s.direct.entry(g.clone()).or_insert(0) += 1;
                        s.last_direct_ns.insert(g, e.ts_ns - s.start_ns);
                    }
                }
            }
            _ => {}
        }
    }
    Ok(out)
}

fn counts(m: &BTreeMap<String, u64>) -> String {
    if m.is_empty() {
        return "none".into();
    }
    m.iter()
        .map(|(g, n)| format!("{g} {n}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// One report line for repetition `rep`'s slices.
pub fn describe(rep: u32, slices: &[Slice]) -> String {
    let per: Vec<String> = slices
        .iter()
        .map(|s| {
            let last = s
                .last_direct_ns
                .iter()
                .map(|(g, ns)| format!("{g} {:.2}", *ns as f64 / 1e6))
                .collect::<Vec<_>>()
                .join(" ");
            format!(
                "released {} | at once {} (last at ms: {})",
                counts(&s.released),
                counts(&s.direct),
                if last.is_empty() { "-".into() } else { last }
            )
        })
        .collect();
    format!(
        "guest throttle slices, run {rep} (lower device's block_rq_issue per blk-throttle slice): {}",
        if per.is_empty() {
            "no dispatch work in the window".to_string()
        } else {
            per.join("; ")
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shape of Debian 6.12's trace: fio A (pid 374) and B (379) on
    /// the upper loop 7:2, the dispatch work issuing held bios on the
    /// lower loop 7:1, then bios passing at once.
    const TRACE: &str = "\
             fio-379     [000] .....     6.900001: block_rq_issue: 7,2 R 4096 () 100 + 8 be,0,4 [fio]
             fio-374     [000] .....     6.900002: block_rq_issue: 7,2 R 4096 () 200 + 8 be,0,4 [fio]
    kworker/u4:0-12      [000] .....     6.900003: block_rq_issue: 7,1 R 4096 () 100 + 8 be,0,4 [kworker/u4:0]
     kworker/0:1-10      [000] .....     6.949909: workqueue_execute_start: work struct 000000003108cb27: function blk_throtl_dispatch_work_fn
     kworker/0:1-10      [000] .N...     6.949960: block_rq_issue: 7,1 R 4096 () 100 + 8 be,0,4 [kworker/0:1]
     kworker/0:1-10      [000] .N...     6.949964: block_rq_issue: 7,1 R 4096 () 200 + 8 be,0,4 [kworker/0:1]
     kworker/0:1-10      [000] .N...     6.949965: block_rq_issue: 7,1 R 4096 () 999 + 8 be,0,4 [kworker/0:1]
     kworker/0:1-10      [000] .N...     6.950244: workqueue_execute_end: work struct 000000003108cb27: function blk_throtl_dispatch_work_fn
             fio-374     [000] .....     6.950283: block_rq_issue: 7,2 R 4096 () 300 + 8 be,0,4 [fio]
    kworker/u4:0-12      [000] .....     6.950297: block_rq_issue: 7,1 R 4096 () 300 + 8 be,0,4 [kworker/u4:0]
             fio-379     [000] .....     6.950300: block_rq_issue: 7,2 R 4096 () 400 + 8 be,0,4 [fio]
    kworker/u4:3-521     [000] .....     6.951909: block_rq_issue: 7,1 R 4096 () 400 + 8 be,0,4 [kworker/u4:3]
             fio-374     [000] .....     6.951950: block_rq_issue: 7,2 R 4096 () 500 + 8 be,0,4 [fio]
    kworker/u4:3-521     [000] .....     6.952909: block_rq_issue: 7,1 R 4096 () 500 + 8 be,0,4 [kworker/u4:3]
     kworker/0:1-10      [000] .....     7.049910: workqueue_execute_start: work struct 000000003108cb27: function blk_throtl_dispatch_work_fn
     kworker/0:1-10      [000] .....     7.049950: block_rq_issue: 7,1 R 4096 () 600 + 8 be,0,4 [kworker/0:1]
     kworker/0:1-10      [000] .....     7.049990: workqueue_execute_end: work struct 000000003108cb27: function blk_throtl_dispatch_work_fn
";

    fn procs() -> BTreeMap<u32, String> {
        [(374, "A".to_string()), (379, "B".to_string())].into()
    }

    #[test]
    fn released_and_direct_bios_per_slice_and_group() {
        let s = slices(TRACE, &procs(), "7:2", "7:1").unwrap();
        assert_eq!(s.len(), 2, "{s:?}");
        // the bio issued on the lower device before the first slice is not counted
        let count = |m: &BTreeMap<String, u64>, g: &str| m.get(g).copied().unwrap_or(0);
        assert_eq!(
            (
                count(&s[0].released, "A"),
                count(&s[0].released, "B"),
                count(&s[0].released, "?")
            ),
            (1, 1, 1)
        );
        assert_eq!((count(&s[0].direct, "A"), count(&s[0].direct, "B")), (2, 1));
        assert_eq!(s[0].last_direct_ns["A"], 3_000_000);
        assert_eq!(s[0].last_direct_ns["B"], 2_000_000);
        assert_eq!(count(&s[1].released, "?"), 1);
        assert!(s[1].direct.is_empty());
        let d = describe(0, &s);
        assert!(
            d.contains("released ? 1 A 1 B 1 | at once A 2 B 1 (last at ms: A 3.00 B 2.00); released ? 1 | at once none (last at ms: -)"),
            "{d}"
        );
    }

    #[test]
    fn a_6_1_issue_line_without_ioprio_parses_and_bad_lines_are_named() {
        // 6.1's block_rq_issue has no ioprio field
        let t = "     kworker/0:2-30      [000] .....     6.500700: workqueue_execute_start: work struct 0000000011111111: function blk_throtl_dispatch_work_fn
     kworker/0:2-30      [000] .....     6.500750: block_rq_issue: 7,1 R 4096 () 8 + 8 [kworker/0:2]
";
        let s = slices(t, &procs(), "7:2", "7:1").unwrap();
        assert_eq!(s[0].released["?"], 1);
        let bad = "     kworker/0:2-30      [000] .....     6.500750: block_rq_issue: 7,1 R\n";
        let e = slices(bad, &procs(), "7:2", "7:1").unwrap_err();
        assert!(e.contains("DEV SECTOR"), "{e}");
        assert!(slices("garbage\n", &procs(), "7:2", "7:1")
            .unwrap_err()
            .starts_with("line 1:"));
        assert!(describe(1, &[]).contains("no dispatch work"));
    }
}
