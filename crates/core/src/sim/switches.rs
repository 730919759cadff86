//! Kernel-behaviour switches: each fix or era the project models is a named
//! switch with every behaviour implemented, so a before/after comparison is one
//! flag (`--variant iocost.busy_level_fix=off,on`).
//!
//! Switches are registered here with their allowed values, default (the current
//! kernel) and a description; a scenario or the command line may set them.
//!
//! A kernel profile names the value of every switch for one kernel version,
//! so a run (and a conformance check against that kernel) can say "as 6.1
//! does" in one word.

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
        name: "iocost.trace_vrate",
        values: &["base", "vtime-rate"],
        default: "base",
        help: "What iocost_ioc_vrate_adj reports as vrate (trace output only): 'base' = v6.2+ (63c9eac4b6d7 \
               'blk-iocost: Trace vtime_base_rate instead of vtime_rate': the old vrate is vtime_base_rate, \
               and a period that holds vrate reports it too), 'vtime-rate' = v5.10..v6.1 (the old vrate, and \
               a held period's new vrate, are ioc->vtime_rate: the base rate plus the vtime_err compensation \
               of ioc_refresh_vrate, up to twice the base; checked in Debian's 6.1.176 source).",
    },
    SwitchDef {
        name: "iocost.donation_usage",
        values: &["u32", "u64"],
        default: "u32",
        help: "How hweight_after_donation multiplies WEIGHT_ONE by a group's usage: 'u32' = every kernel since \
               the v5.10 donation rework that added hweight_after_donation (unchanged in Debian's 6.1.176 \
               and 6.12.117; the same expression in every later copy found): the int constant times the u32 usage is a 32-bit product, which wraps \
               to 0 at full usage, so a group that used its whole share (and has budget left, nobody \
               waiting) is made a donor keeping hwi 1; 'u64' = the product in 64 bits (not in any kernel: \
               such a group keeps its share). Found by the built-6.1-hz1000 guest's trace \
               (docs/fidelity/iocost.md \"A busy group at full usage donates everything\").",
    },
    SwitchDef {
        name: "throttle.wait",
        values: &["current", "joint-fifo-min-wait", "joint-fifo", "slice-capped", "pre-2018"],
        default: "current",
        help: "blk-throttle era: 'pre-2018' = v4.12..v4.18 (iops wait aims at the exact-rate moment, may exceed a slice), \
               'slice-capped' = commit 991f61fe, v4.19..v5.2 (iops wait = rest of the slice window; 0 on a boundary, \
               spinning to the next jiffy), 'joint-fifo' = 6.1.y (one FIFO per direction, bytes and IO charged \
               together, the bps check short-circuiting the iops check, unsigned carryover fields folded into the \
               trim, split pieces counted as IOs, no REQ_META bypass), 'joint-fifo-min-wait' = v6.12..v6.14 and \
               6.12.y (the same FIFO; both waits computed, signed carryover, minimum iops wait HZ/iops+1, REQ_META \
               bypass), 'current' = v6.16+ (split bps/iops queues, carryover kept in the counters, minimum iops \
               wait HZ/iops+1, split pieces counted as IOs).",
    },
    SwitchDef {
        name: "throttle.slice",
        values: &["auto", "100ms", "20ms-nonrot"],
        default: "auto",
        help: "blk-throttle slice length: '100ms' = HZ/10 for every device (current mainline, 6.18.y), \
               '20ms-nonrot' = HZ/50 on non-rotational devices (v4.12..v6.9 with CONFIG_BLK_DEV_THROTTLING_LOW=y, v6.10..v6.17), \
               'auto' = 100ms for throttle.wait=current and the joint-fifo eras (Debian's 6.1 and 6.12), \
               20ms-nonrot for the 2018 eras (the seed run's configuration).",
    },
    SwitchDef {
        name: "ioprio.content_activity",
        values: &["off", "iter-bio", "add-page"],
        default: "off",
        help: "Content-activity-based ioprio promotion (2024 patch, never merged): 'iter-bio' walks the \
               bio's pages before submit, 'add-page' counts pages as they are added.",
    },
    SwitchDef {
        name: "ioprio.policies",
        values: &["promote-to-rt", "none-to-rt"],
        default: "promote-to-rt",
        help: "blk-ioprio's io.prio.class policies: 'promote-to-rt' = v6.5+ (ddf63516d8d3 'blk-ioprio: \
               Introduce promote-to-rt policy': promote-to-rt lifts every non-RT bio to RT/4 and none-to-rt \
               is its alias), 'none-to-rt' = v5.14..v6.4 (no promote-to-rt, EINVAL; none-to-rt is the \
               maximum of the bio's priority and RT/0, so only a bio of class NONE becomes RT and an \
               ordinary task's BE bios stay BE).",
    },
    SwitchDef {
        name: "bfq.idle_groups",
        values: &["ed3ecc991c90", "2d29c9f89fcd"],
        default: "ed3ecc991c90",
        help: "bfq_asymmetric_scenario's group condition: '2d29c9f89fcd' ('block, bfq: improve asymmetric \
               scenarios detection', v4.19..v6.1) = any non-root group with pending requests makes the \
               scenario asymmetric (idling for every sync queue); 'ed3ecc991c90' ('block, bfq: do not idle \
               if only one group is activated', v6.2+) = only two or more groups with pending requests do.",
    },
    SwitchDef {
        name: "bfq.cgroup_request_limit",
        values: &["76f1df88bbc2", "off"],
        default: "76f1df88bbc2",
        help: "bfq_limit_depth's per-cgroup limit: '76f1df88bbc2' (Jan Kara, 'bfq: Limit number of requests \
               consumed by each cgroup', v5.19+: every kernel modelled) = a process whose queue, or one of \
               whose groups, holds its weight's share of the scheduler tags or more allocates with one bit \
               per bitmap word; 'off' = before v5.19 (no per-cgroup limit; async requests and sync writes \
               keep their word depths).",
    },
    SwitchDef {
        name: "bfq.asym_request_size",
        values: &["off", "on"],
        default: "off",
        help: "Yu Kuai's 2021 patch 'block, bfq: consider request size in bfq_asymmetric_scenario()' \
               (never merged): several active groups no longer force idling once 1024 requests of one \
               size were dispatched in a row over at least a second. off = every kernel.",
    },
    SwitchDef {
        name: "blk_mq.insert_run",
        values: &["kblockd", "inline"],
        default: "kblockd",
        help: "How an insertion into an I/O scheduler (one that is not 'none') runs the hardware queue. \
               'kblockd' = every kernel modelled (blk_mq_submit_bio inserts an unplugged request and runs \
               the queue asynchronously: blk_mq_sched_insert_request(rq, false, true, true) in 6.1.176, \
               blk_mq_insert_request + blk_mq_run_hw_queue(hctx, true) in 6.12.117 and mainline): the run \
               is hctx->run_work queued on kblockd with delay 0 (kblockd_mod_delayed_work_on, \
               mod_delayed_work), which replaces a pending BLK_MQ_BUDGET_DELAY re-run, and on a host with \
               CPUs the dispatch happens in a kblockd kernel thread. Where __submit_bio plugs every bio \
               (blk_mq.submit_bio_plug=on), only the completions' and the scheduler's runs are these; \
               the insertion's is the plug's synchronous flush. 'inline' = the simulator's earlier \
               simplification: the submitter dispatches in its own call and a pending delayed re-run stays.",
    },
    SwitchDef {
        name: "blk_mq.submit_bio_plug",
        values: &["off", "on"],
        default: "off",
        help: "Whether __submit_bio opens a plug around every bio when its submitter holds none. 'on' = \
               v6.10..v7.1 (060406c61c7c 'block: add plug while submitting IO'; checked in Debian's 6.12.117 \
               source, and on the development hosts' 6.18.44, whose fio issues every QD1 request of a bfq \
               loop device itself): blk_mq_submit_bio adds the request to that plug and blk_finish_plug \
               flushes it (blk_mq_flush_plug_list(plug, false) -> blk_mq_dispatch_plug_list: the \
               scheduler's insert_requests, then blk_mq_run_hw_queue(hctx, false)), so the insertion's \
               queue run is synchronous, in the submitter's context, and leaves a pending delayed re-run \
               where it is. 'off' = v6.9 and earlier (6.1.176's __submit_bio has no plug) and v7.2+ \
               (9cbbac29d752 'block: Remove redundant plug in __submit_bio()', block-7.2, June 2026): an \
               unplugged insertion runs the queue asynchronously (switch blk_mq.insert_run).",
    },
    SwitchDef {
        name: "sched.fair",
        values: &["cfs", "cfs-vruntime", "eevdf"],
        default: "cfs",
        help: "How the fair scheduling class picks the next task on a host with CPUs ([host] cpus > 0; \
               nothing changes on the free host). 'cfs' = v6.5 and earlier, as the model has it \
               (sim/cpus.rs): one FIFO run queue, CFS's 3 ms slice on one CPU, and with wakeup_preempt a \
               woken kernel thread preempts an fio task at the end of its burst, never the other way. \
               'eevdf' = v6.6+ (147f3efaa241 'sched/fair: Implement an EEVDF-like scheduling policy'; \
               checked in Debian's 6.12.117 kernel/sched/fair.c): virtual runtimes, lag kept over a \
               sleep (place_entity), the eligible task with the earliest virtual deadline runs \
               (pick_eevdf), a task keeps its CPU until its 0.7 ms request is used (RUN_TO_PARITY), a \
               task that sleeps while not eligible stays queued (DELAY_DEQUEUE, 152e11f6df29, v6.12), and \
               with wakeup_preempt any woken task preempts when pick_eevdf chooses it \
               (check_preempt_wakeup_fair); kblockd's kworkers weigh as nice -20. The default is 'cfs', \
               the model every example and calibrate's fits were made with; the 6.12, 6.18 and mainline \
               profiles say 'eevdf'. 'cfs-vruntime' = v6.5 and earlier with CFS's virtual runtimes \
               (sim/cfs.rs; checked in Debian's 6.1.176 kernel/sched/fair.c): a woken task is placed at \
               min_vruntime less half of sched_latency (place_entity's sleeper credit, 3 ms on one CPU) \
               unless it is later already, the smallest virtual runtime runs (pick_next_entity), with \
               wakeup_preempt a woken task preempts when 1 ms (the wake-up granularity) behind the \
               running one (wakeup_preempt_entity), and a task is rescheduled after its sched_slice \
               (check_preempt_tick, checked at its burst's end); the 6.1 profile says it.",
    },
    SwitchDef {
        name: "wbt.lat_show",
        values: &["zero-when-off", "target"],
        default: "zero-when-off",
        help: "What /sys/block/DEV/queue/wbt_lat_usec reads while blk-wbt is disabled (by bfq, by blk-iocost \
               or by default): 'zero-when-off' = 0 (Yu Kuai's 'wbt: don't show valid wbt_lat_usec in sysfs \
               while wbt is disabled', after 6.1), 'target' = the target all the same (Debian's 6.1.y, checked \
               in the QEMU harness).",
    },
];

/// The value of every switch for one kernel version.
#[derive(Debug)]
pub struct KernelProfile {
    /// The name a user gives (`--kernel-profile 6.12`).
    pub name: &'static str,
    /// Which kernels it describes.
    pub describes: &'static str,
    /// (switch, value) for every registered switch.
    pub values: &'static [(&'static str, &'static str)],
    /// Where the kernel differs from every modelled behaviour, and what the
    /// profile picks instead.
    pub notes: &'static str,
}

/// The kernels the project checks against: the stock Debian kernels the
/// conformance harness boots, the development hosts' kernel, and mainline.
pub const PROFILES: &[KernelProfile] = &[
    KernelProfile {
        name: "6.1",
        describes: "Linux 6.1 LTS (Debian bookworm, the harness's debian-6.1)",
        values: &[
            ("blk.split", "on"),
            ("iocost.busy_level_fix", "off"),
            ("iocost.trace_vrate", "vtime-rate"),
            ("iocost.donation_usage", "u32"),
            ("throttle.wait", "joint-fifo"),
            ("throttle.slice", "100ms"),
            ("ioprio.content_activity", "off"),
            ("ioprio.policies", "none-to-rt"),
            ("bfq.idle_groups", "2d29c9f89fcd"),
            ("bfq.asym_request_size", "off"),
            ("bfq.cgroup_request_limit", "76f1df88bbc2"),
            ("blk_mq.insert_run", "kblockd"),
            ("blk_mq.submit_bio_plug", "off"),
            ("sched.fair", "cfs-vruntime"),
            ("wbt.lat_show", "target"),
        ],
        notes: "blk-throttle is 6.1.y's single FIFO (throttle.wait=joint-fifo, checked against Debian's \
                6.1.176 source): bytes and IO charged together, the iops check skipped while the bps check \
                fails, unsigned carryover (a debt at a limit change lets bios through), no minimum iops \
                wait, REQ_META throttled like any bio. CONFIG_BLK_DEV_THROTTLING_LOW is off in Debian's 6.1, \
                so every device has HZ/10 slices. iocost_ioc_vrate_adj still reports vtime_rate \
                (iocost.trace_vrate=vtime-rate): the QEMU guests' 6.1 traces show vrates up to twice the \
                base rate.",
    },
    KernelProfile {
        name: "6.12",
        describes: "Linux 6.12 LTS (Debian trixie, the harness's debian-6.12)",
        values: &[
            ("blk.split", "on"),
            ("iocost.busy_level_fix", "off"),
            ("iocost.trace_vrate", "base"),
            ("iocost.donation_usage", "u32"),
            ("throttle.wait", "joint-fifo-min-wait"),
            ("throttle.slice", "100ms"),
            ("ioprio.content_activity", "off"),
            ("ioprio.policies", "promote-to-rt"),
            ("bfq.idle_groups", "ed3ecc991c90"),
            ("bfq.asym_request_size", "off"),
            ("bfq.cgroup_request_limit", "76f1df88bbc2"),
            ("blk_mq.insert_run", "kblockd"),
            ("blk_mq.submit_bio_plug", "on"),
            ("sched.fair", "eevdf"),
            ("wbt.lat_show", "zero-when-off"),
        ],
        notes: "v6.10..v6.17 left non-rotational devices at HZ/50 slices after io.low was removed; \
                the fix (f76581f9f1d2) reached 6.12.y stable too: the harness's 6.12.117 shows HZ/10 \
                slices on a non-rotational loop device (p99 of a riops-throttled job at 98 ms, not 20). \
                blk-throttle is the v6.12..v6.14 single FIFO (throttle.wait=joint-fifo-min-wait, checked \
                against Debian's 6.12.117 source): bytes and IO charged together in one FIFO per \
                direction, signed carryover fields, minimum iops wait HZ/iops+1; the v6.16 split into bps \
                and iops queues is not in 6.12.y. __submit_bio holds a plug around every bio \
                (blk_mq.submit_bio_plug=on, 060406c61c7c, v6.10; still in Debian's 6.12.117): an \
                insertion's queue run is synchronous, in the submitter's context.",
    },
    KernelProfile {
        name: "6.18",
        describes: "Linux 6.18.y stable (the development hosts' kernel)",
        values: &[
            ("blk.split", "on"),
            ("iocost.busy_level_fix", "off"),
            ("iocost.trace_vrate", "base"),
            ("iocost.donation_usage", "u32"),
            ("throttle.wait", "current"),
            ("throttle.slice", "100ms"),
            ("ioprio.content_activity", "off"),
            ("ioprio.policies", "promote-to-rt"),
            ("bfq.idle_groups", "ed3ecc991c90"),
            ("bfq.asym_request_size", "off"),
            ("bfq.cgroup_request_limit", "76f1df88bbc2"),
            ("blk_mq.insert_run", "kblockd"),
            ("blk_mq.submit_bio_plug", "on"),
            ("sched.fair", "eevdf"),
            ("wbt.lat_show", "zero-when-off"),
        ],
        notes: "Carries the blk-throttle slice fix (HZ/10 on every device); predates the 2026 \
                blk-iocost busy_level fix. Insertions run the queue synchronously \
                (blk_mq.submit_bio_plug=on): on the development hosts' 6.18.44, fio itself issues \
                19,777 of 19,777 QD1 requests of a bfq loop device (block_rq_issue's task), none \
                a kworker.",
    },
    KernelProfile {
        name: "mainline",
        describes: "Current mainline with the 2026 blk-iocost fix (the simulator's defaults)",
        values: &[
            ("blk.split", "on"),
            ("iocost.busy_level_fix", "on"),
            ("iocost.trace_vrate", "base"),
            ("iocost.donation_usage", "u32"),
            ("throttle.wait", "current"),
            ("throttle.slice", "100ms"),
            ("ioprio.content_activity", "off"),
            ("ioprio.policies", "promote-to-rt"),
            ("bfq.idle_groups", "ed3ecc991c90"),
            ("bfq.asym_request_size", "off"),
            ("bfq.cgroup_request_limit", "76f1df88bbc2"),
            ("blk_mq.insert_run", "kblockd"),
            ("blk_mq.submit_bio_plug", "off"),
            ("sched.fair", "eevdf"),
            ("wbt.lat_show", "zero-when-off"),
        ],
        notes: "No plug around every bio (blk_mq.submit_bio_plug=off): 9cbbac29d752 'block: Remove \
                redundant plug in __submit_bio()' (block-7.2, June 2026). A proposed follow-up \
                (September 2026, 'blk-mq: run the hw queue synchronously for unplugged scheduler \
                inserts') would make the insertion's run synchronous again; not known to be merged.",
    },
];

/// The profile named `name` (a kernel version as the profiles spell it; a
/// `debian-` prefix, as the conformance harness names its kernels, is accepted).
pub fn profile(name: &str) -> Result<&'static KernelProfile, String> {
    let short = name.strip_prefix("debian-").unwrap_or(name);
    PROFILES.iter().find(|p| p.name == short).ok_or_else(|| {
        let known: Vec<&str> = PROFILES.iter().map(|p| p.name).collect();
        format!(
            "unknown kernel profile '{name}' (known: {})",
            known.join(", ")
        )
    })
}

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
    /// Every switch as kernel profile `p` has it; switches set afterwards
    /// override it.
    pub fn from_profile(p: &KernelProfile) -> Switches {
        let mut s = Switches::default();
        for (k, v) in p.values {
            s.set(k, v)
                .expect("profiles name registered switches and values");
        }
        s
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

    #[test]
    fn every_profile_names_every_switch_once_with_a_valid_value() {
        for p in PROFILES {
            for d in SWITCHES {
                let n = p.values.iter().filter(|(k, _)| *k == d.name).count();
                assert_eq!(n, 1, "profile {} names {} {n} times", p.name, d.name);
            }
            assert_eq!(p.values.len(), SWITCHES.len(), "profile {}", p.name);
            let s = Switches::from_profile(p);
            assert_eq!(s.explicit().count(), SWITCHES.len());
        }
        // mainline is the defaults (an 'auto' default is what the profile
        // spells out: throttle.slice auto is 100ms under throttle.wait=current)
        // except sched.fair, whose default is the model the examples and
        // calibrate's fits were made with (its help says so)
        let m = Switches::from_profile(profile("mainline").unwrap());
        for d in SWITCHES
            .iter()
            .filter(|d| d.default != "auto" && d.name != "sched.fair")
        {
            assert_eq!(m.get(d.name), d.default, "{}", d.name);
        }
        assert_eq!(profile("debian-6.12").unwrap().name, "6.12");
        assert!(profile("5.4")
            .unwrap_err()
            .contains("6.1, 6.12, 6.18, mainline"));
    }
}
