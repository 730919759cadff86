//! From Q/D/C trace events to per-(cgroup, device) blk-iotrack counters.
//!
//! Matching follows btt (blktrace `btt/doc/btt.tex`): a bio is known from its
//! Q; the D and C of the *request* that covers its sector range are its D and
//! C. A merged request (M/F events) therefore completes several bios at once;
//! a split (X, `bio_split` traced by `trace_block_split`) turns one pending bio
//! into fragments that complete separately and are each counted, as
//! blk-iotrack counts each split child (spec §1.3, §5.4). The counters are
//! applied to the bio's cgroup and every ancestor up to "/", as
//! `iotrack_account_bio()` walks `blkg->parent`.
//!
//! Memory is bounded: pending bios are capped (`max_pending`), and entries
//! older than `stale_ns` are evicted by `sweep()`; both are counted.

use crate::events::{Action, CgRef, Event, Ns, OpClass};
use crate::iotrack::{IotrackCounters, DEFAULT_THRESH_NS};
use std::collections::BTreeMap;

#[derive(Debug, Clone)]
pub struct AccountConfig {
    pub thresh: [u64; 8],
    /// Upper bound on bios waiting for their completion.
    pub max_pending: usize,
    /// A bio with no completion after this long is dropped by `sweep()`.
    pub stale_ns: Ns,
}

impl Default for AccountConfig {
    fn default() -> Self {
        AccountConfig {
            thresh: DEFAULT_THRESH_NS,
            max_pending: 1 << 20,
            stale_ns: 60_000_000_000,
        }
    }
}

/// Counts of everything that did not go the normal Q→D→C way. Surfaced in
/// the report: nothing is silently dropped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AccountStats {
    pub queued: u64,
    pub completed: u64,
    pub splits: u64,
    pub partial_completions: u64,
    pub requeues: u64,
    /// D with no pending bio in its range (Q before tracing started, or lost)
    pub unmatched_issue: u64,
    /// C with no pending bio in its range
    pub unmatched_complete: u64,
    /// pending bio overwritten by a new Q at the same dev+sector
    pub replaced: u64,
    /// pending bios removed by `sweep()` (no C within `stale_ns`)
    pub evicted_stale: u64,
    /// Qs ignored because `max_pending` was reached
    pub dropped_full: u64,
    /// C earlier than or equal to Q (skipped, as blk-iotrack does)
    pub nonpositive_q2c: u64,
}

#[derive(Debug, Clone, Copy)]
struct Pending {
    end: u64,
    q: Ns,
    d: Ns,
    cg: u32,
    op: OpClass,
}

/// Maps a cgroup reference of an event to its path ("/a/b"); `None` when the
/// id cannot be resolved.
pub trait CgroupNames {
    fn name_of(&mut self, cg: CgRef) -> Option<String>;
}

/// Interned cgroup paths with their ancestor chains.
#[derive(Debug, Default, Clone)]
pub struct CgTable {
    paths: Vec<String>,
    index: BTreeMap<String, u32>,
    ancestors: Vec<Vec<u32>>,
}

impl CgTable {
    /// Index of `path`, creating it and its ancestors.
    pub fn intern(&mut self, path: &str) -> u32 {
        let norm = normalize(path);
        if let Some(i) = self.index.get(&norm) {
            return *i;
        }
        let mut chain = Vec::new();
        if norm != "/" {
            let parent = match norm.rfind('/') {
                Some(0) | None => "/".to_string(),
                Some(k) => norm[..k].to_string(),
            };
            let pi = self.intern(&parent);
            chain = self.ancestors[pi as usize].clone();
        }
        let i = self.paths.len() as u32;
        chain.push(i);
        self.paths.push(norm.clone());
        self.index.insert(norm, i);
        self.ancestors.push(chain);
        i
    }
    pub fn path(&self, i: u32) -> &str {
        &self.paths[i as usize]
    }
    pub fn len(&self) -> usize {
        self.paths.len()
    }
    pub fn is_empty(&self) -> bool {
        self.paths.is_empty()
    }
}

fn normalize(p: &str) -> String {
    let parts: Vec<&str> = p.split('/').filter(|s| !s.is_empty()).collect();
    format!("/{}", parts.join("/"))
}

pub struct Accountant {
    cfg: AccountConfig,
    pending: BTreeMap<(u32, u64), Pending>,
    cg_of: BTreeMap<CgRef, u32>,
    pub cgroups: CgTable,
    counters: BTreeMap<(u32, u32), IotrackCounters>,
    pub stats: AccountStats,
    scratch: Vec<(u64, Pending)>,
    last_time: Ns,
}

impl Accountant {
    pub fn new(cfg: AccountConfig) -> Self {
        let mut cgroups = CgTable::default();
        cgroups.intern("/");
        Accountant {
            cfg,
            pending: BTreeMap::new(),
            cg_of: BTreeMap::new(),
            cgroups,
            counters: BTreeMap::new(),
            stats: AccountStats::default(),
            scratch: Vec::new(),
            last_time: 0,
        }
    }

    pub fn pending_len(&self) -> usize {
        self.pending.len()
    }

    fn cg_index(&mut self, cg: CgRef, names: &mut dyn CgroupNames) -> u32 {
        if let Some(i) = self.cg_of.get(&cg) {
            return *i;
        }
        let path = match cg {
            CgRef::None => "/".to_string(),
            // not resolvable: keep it visible as its own child of "/"
            CgRef::Id(id) => names.name_of(cg).unwrap_or_else(|| format!("/cgid-{id}")),
            CgRef::Path(i) => names.name_of(cg).unwrap_or_else(|| format!("/cgpath-{i}")),
        };
        let i = self.cgroups.intern(&path);
        self.cg_of.insert(cg, i);
        i
    }

    /// Feed one event (in time order).
    pub fn feed(&mut self, ev: &Event, names: &mut dyn CgroupNames) {
        self.last_time = self.last_time.max(ev.time_ns);
        match ev.action {
            Action::Queue => {
                let cg = self.cg_index(ev.cg, names);
                if self.pending.len() >= self.cfg.max_pending {
                    self.stats.dropped_full += 1;
                    return;
                }
                self.stats.queued += 1;
                let p = Pending {
                    end: ev.sector + ev.nsectors as u64,
                    q: ev.time_ns,
                    d: 0,
                    cg,
                    op: ev.op,
                };
                if self.pending.insert((ev.dev, ev.sector), p).is_some() {
                    self.stats.replaced += 1;
                }
            }
            Action::Split => {
                // bio [sector, end) becomes [sector, new) + [new, end)
                let key = (ev.dev, ev.sector);
                let new = ev.aux;
                if let Some(p) = self.pending.get_mut(&key) {
                    if new > ev.sector && new < p.end {
                        let tail = Pending { end: p.end, ..*p };
                        p.end = new;
                        self.stats.splits += 1;
                        if self.pending.insert((ev.dev, new), tail).is_some() {
                            self.stats.replaced += 1;
                        }
                    }
                }
            }
            Action::Issue => {
                let (s, e) = (ev.sector, ev.sector + ev.nsectors as u64);
                let mut any = false;
                if e == s {
                    if let Some(p) = self.pending.get_mut(&(ev.dev, s)) {
                        if p.end == s {
                            // blk_mq_start_request stamps every bio; a requeued
                            // request is stamped again (the last D counts)
                            p.d = ev.time_ns;
                            any = true;
                        }
                    }
                } else {
                    for (_, p) in self.pending.range_mut((ev.dev, s)..(ev.dev, e)) {
                        p.d = ev.time_ns;
                        any = true;
                    }
                }
                if !any {
                    self.stats.unmatched_issue += 1;
                }
            }
            Action::Requeue => self.stats.requeues += 1,
            Action::Complete => self.complete(ev),
            _ => {}
        }
    }

    fn complete(&mut self, ev: &Event) {
        let (s, e) = (ev.sector, ev.sector + ev.nsectors as u64);
        self.scratch.clear();
        if e == s {
            if let Some(p) = self.pending.get(&(ev.dev, s)) {
                if p.end == s {
                    self.scratch.push((s, *p));
                }
            }
        } else {
            for (k, p) in self.pending.range((ev.dev, s)..(ev.dev, e)) {
                self.scratch.push((k.1, *p));
            }
        }
        if self.scratch.is_empty() {
            self.stats.unmatched_complete += 1;
            return;
        }
        let scratch = std::mem::take(&mut self.scratch);
        for (start, p) in &scratch {
            self.pending.remove(&(ev.dev, *start));
            if p.end > e {
                // partial completion (blk_update_request with fewer bytes):
                // the bio ends later; bio_endio comes with a later C
                self.stats.partial_completions += 1;
                self.pending.insert((ev.dev, e), *p);
                continue;
            }
            let c = ev.time_ns;
            if c <= p.q {
                self.stats.nonpositive_q2c += 1;
                continue;
            }
            self.stats.completed += 1;
            let sectors = p.end - *start;
            // the whole bio: for a partially completed one the original start
            // is gone, so its size is counted from where it was re-keyed
            let chain_len = self.cgroups.ancestors[p.cg as usize].len();
            for k in 0..chain_len {
                let g = self.cgroups.ancestors[p.cg as usize][k];
                self.counters.entry((ev.dev, g)).or_default().account(
                    p.op as usize,
                    sectors,
                    p.q,
                    p.d,
                    c,
                    &self.cfg.thresh,
                );
            }
        }
        self.scratch = scratch;
    }

    /// Drop pending bios queued more than `stale_ns` before `now`.
    pub fn sweep(&mut self, now: Ns) {
        let limit = now.saturating_sub(self.cfg.stale_ns);
        let before = self.pending.len();
        self.pending.retain(|_, p| p.q >= limit);
        self.stats.evicted_stale += (before - self.pending.len()) as u64;
    }

    /// Devices that have counters.
    pub fn devices(&self) -> Vec<u32> {
        let mut v: Vec<u32> = self.counters.keys().map(|k| k.0).collect();
        v.dedup();
        v
    }

    /// Cumulative counters of `dev`: "/" first, then the other paths in
    /// order; with a non-empty `only`, just "/" and those paths (in order).
    pub fn snapshot(&self, dev: u32, only: &[String]) -> Vec<(String, IotrackCounters)> {
        let get = |i: u32| self.counters.get(&(dev, i)).cloned().unwrap_or_default();
        let mut out = vec![("/".to_string(), get(0))];
        if only.is_empty() {
            let mut rest: Vec<(String, u32)> = self
                .counters
                .range((dev, 1)..=(dev, u32::MAX))
                .map(|(k, _)| (self.cgroups.path(k.1).to_string(), k.1))
                .collect();
            rest.sort();
            out.extend(rest.into_iter().map(|(p, i)| (p, get(i))));
        } else {
            for p in only {
                let n = normalize(p);
                if n == "/" {
                    continue;
                }
                let c = self
                    .cgroups
                    .index
                    .get(&n)
                    .map(|i| get(*i))
                    .unwrap_or_default();
                out.push((n, c));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::mkdev;

    struct Names;
    impl CgroupNames for Names {
        fn name_of(&mut self, cg: CgRef) -> Option<String> {
            match cg {
                CgRef::Id(1) => Some("/".into()),
                CgRef::Id(41) => Some("/lab/a".into()),
                CgRef::Id(61) => Some("/lab/b".into()),
                _ => None,
            }
        }
    }

    const DEV: u32 = 7 << 20;

    fn e(t: Ns, a: Action, s: u64, n: u32, cg: u64) -> Event {
        Event {
            time_ns: t,
            dev: DEV,
            action: a,
            op: OpClass::Read,
            sector: s,
            nsectors: n,
            aux: 0,
            cg: CgRef::Id(cg),
        }
    }

    fn get<'a>(s: &'a [(String, IotrackCounters)], p: &str) -> &'a IotrackCounters {
        &s.iter().find(|x| x.0 == p).unwrap().1
    }

    #[test]
    fn simple_q_d_c_charges_cgroup_and_ancestors() {
        let mut a = Accountant::new(AccountConfig::default());
        a.feed(&e(1_000, Action::Queue, 100, 8, 41), &mut Names);
        a.feed(&e(31_000, Action::Issue, 100, 8, 41), &mut Names);
        a.feed(&e(81_000, Action::Complete, 100, 8, 41), &mut Names);
        let s = a.snapshot(DEV, &[]);
        let names: Vec<&str> = s.iter().map(|x| x.0.as_str()).collect();
        assert_eq!(names, ["/", "/lab", "/lab/a"]);
        for p in ["/", "/lab", "/lab/a"] {
            let c = get(&s, p);
            assert_eq!(c.ios, [1, 0, 0]);
            assert_eq!(c.sectors[0], 8);
            assert_eq!(c.tms[0], 80_000);
            assert_eq!(c.dtms[0], 50_000);
        }
        assert_eq!(a.pending_len(), 0);
    }

    #[test]
    fn merged_request_completes_every_bio() {
        let mut a = Accountant::new(AccountConfig::default());
        a.feed(&e(1_000, Action::Queue, 100, 8, 41), &mut Names);
        a.feed(&e(2_000, Action::Queue, 108, 8, 61), &mut Names);
        a.feed(&e(2_000, Action::BackMerge, 108, 8, 61), &mut Names);
        a.feed(&e(10_000, Action::Issue, 100, 16, 41), &mut Names);
        a.feed(&e(20_000, Action::Complete, 100, 16, 41), &mut Names);
        let s = a.snapshot(DEV, &[]);
        assert_eq!(get(&s, "/").ios[0], 2);
        assert_eq!(get(&s, "/").sectors[0], 16);
        assert_eq!(get(&s, "/lab/a").tms[0], 19_000);
        assert_eq!(get(&s, "/lab/b").tms[0], 18_000);
        assert_eq!(get(&s, "/lab/b").dtms[0], 10_000);
    }

    #[test]
    fn split_fragments_count_separately() {
        let mut a = Accountant::new(AccountConfig::default());
        a.feed(&e(1_000, Action::Queue, 0, 4096, 41), &mut Names);
        let mut x = e(1_000, Action::Split, 0, 0, 41);
        x.aux = 2560;
        a.feed(&x, &mut Names);
        a.feed(&e(2_000, Action::Issue, 0, 2560, 41), &mut Names);
        a.feed(&e(3_000, Action::Issue, 2560, 1536, 41), &mut Names);
        a.feed(&e(5_000, Action::Complete, 0, 2560, 41), &mut Names);
        a.feed(&e(7_000, Action::Complete, 2560, 1536, 41), &mut Names);
        let c = get(&a.snapshot(DEV, &[]), "/lab/a").clone();
        assert_eq!(c.ios[0], 2);
        assert_eq!(c.sectors[0], 4096);
        assert_eq!(c.tms[0], 4_000 + 6_000);
        assert_eq!(c.dtms[0], 3_000 + 4_000);
        assert_eq!(a.stats.splits, 1);
    }

    #[test]
    fn unsplit_fragments_without_x_complete_as_one_bio() {
        // act_mask without read/write drops X: the bio completes with its last fragment
        let mut a = Accountant::new(AccountConfig::default());
        a.feed(&e(1_000, Action::Queue, 0, 16, 41), &mut Names);
        a.feed(&e(2_000, Action::Issue, 0, 8, 41), &mut Names);
        a.feed(&e(4_000, Action::Complete, 0, 8, 41), &mut Names);
        assert_eq!(a.pending_len(), 1);
        a.feed(&e(5_000, Action::Issue, 8, 8, 41), &mut Names);
        a.feed(&e(9_000, Action::Complete, 8, 8, 41), &mut Names);
        let c = get(&a.snapshot(DEV, &[]), "/lab/a").clone();
        assert_eq!((c.ios[0], c.tms[0]), (1, 8_000));
        assert_eq!(a.stats.partial_completions, 1);
    }

    #[test]
    fn unknown_cgroup_unmatched_and_stale_are_counted() {
        let mut a = Accountant::new(AccountConfig {
            max_pending: 2,
            stale_ns: 1_000,
            ..Default::default()
        });
        a.feed(&e(10, Action::Complete, 5, 8, 41), &mut Names);
        a.feed(&e(10, Action::Issue, 5, 8, 41), &mut Names);
        assert_eq!(
            (a.stats.unmatched_complete, a.stats.unmatched_issue),
            (1, 1)
        );
        a.feed(&e(100, Action::Queue, 0, 8, 99), &mut Names);
        a.feed(&e(200, Action::Queue, 8, 8, 99), &mut Names);
        a.feed(&e(300, Action::Queue, 16, 8, 99), &mut Names);
        assert_eq!(a.stats.dropped_full, 1);
        a.sweep(1_150);
        assert_eq!(a.stats.evicted_stale, 1);
        a.feed(&e(1_200, Action::Complete, 8, 8, 99), &mut Names);
        let s = a.snapshot(DEV, &[]);
        assert_eq!(get(&s, "/cgid-99").ios[0], 1);
        assert_eq!(a.pending_len(), 0);
        // bounded: the cgroup/ref tables only grow with distinct cgroups
        assert_eq!(a.cgroups.len(), 2);
    }

    #[test]
    fn only_filter_keeps_order() {
        let mut a = Accountant::new(AccountConfig::default());
        a.feed(&e(1, Action::Queue, 0, 8, 61), &mut Names);
        a.feed(&e(5, Action::Complete, 0, 8, 61), &mut Names);
        let s = a.snapshot(DEV, &["lab/b".into(), "/lab/a".into()]);
        let names: Vec<&str> = s.iter().map(|x| x.0.as_str()).collect();
        assert_eq!(names, ["/", "/lab/b", "/lab/a"]);
        assert_eq!(s[2].1.ios[0], 0);
        let _ = mkdev(7, 0);
    }
}
