//! The `[host]` section of a scenario: the host's CPUs and what the
//! kernel's work costs on them (`blklab_core::sim::cpus`), and the fio
//! task's own costs, which may also stay in `[run]` where they began.
//! See docs/scenario.md and docs/fidelity/cpus.md.

use blklab_core::sim::background::{Background, StallDist};
use blklab_core::sim::host_cpus::HostCpus;
use blklab_core::sim::sched_features::SchedFeatures;
use blklab_core::CpuCosts;
use serde::Deserialize;
use toml::Spanned;

use super::{Builder, RawRun};
use crate::limits;

/// `[host]` as written: every value kept whole so that a negative or
/// fractional cost gets its own located message.
#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawHost {
    /// CPUs tasks and interrupts contend for; 0 = the free host (default).
    cpus: Option<Spanned<toml::Value>>,
    irq_ns: Option<Spanned<toml::Value>>,
    irq_tail_ns: Option<Spanned<toml::Value>>,
    wake_ns: Option<Spanned<toml::Value>>,
    wake_tail_ns: Option<Spanned<toml::Value>>,
    timer_ns: Option<Spanned<toml::Value>>,
    timer_tail_ns: Option<Spanned<toml::Value>>,
    /// A woken kernel thread preempts the fio task on its CPU (CFS wake-up
    /// preemption; default false).
    wakeup_preempt: Option<Spanned<toml::Value>>,
    /// The fair class's feature toggles in the kernel's syntax
    /// ("NO_PLACE_LAG NO_RUN_TO_PARITY"; `blklab_core::sim::sched_features`).
    sched_features: Option<Spanned<toml::Value>>,
    /// Background work (`blklab_core::sim::background`): the mean time
    /// between stalls of one CPU, a stall's (mean) length, and how the
    /// length is drawn ("exp", the default, or "fixed"). Off by default.
    stall_interval_ns: Option<Spanned<toml::Value>>,
    stall_ns: Option<Spanned<toml::Value>>,
    stall_dist: Option<Spanned<toml::Value>>,
    /// A kblockd queue run's own CPU time (machine/kblockd.rs; default 0).
    kblockd_ns: Option<Spanned<toml::Value>>,
    /// blk-throttle's held bios leave through its dispatch work item on a
    /// kworker (machine/kthrotld.rs), not in the timer call (default false).
    kthrotld: Option<Spanned<toml::Value>>,
    /// That work item's CPU time per bio it issues (only with `kthrotld`;
    /// default `blklab_core::sim::host_cpus::DEFAULT_THROTL_DISPATCH_NS_PER_BIO`).
    throtl_dispatch_ns_per_bio: Option<Spanned<toml::Value>>,
    /// Every getevents call of an async job costs `reap_ns`, also one that
    /// finds its completions waiting (`HostCpus::reap_every_call`; default
    /// false).
    reap_every_call: Option<Spanned<toml::Value>>,
    /// The waker's side of a wake-up made from a task's context
    /// (`HostCpus::waker_ns`; default 0).
    waker_ns: Option<Spanned<toml::Value>>,
    /// The waker's side of waking a task asleep for a request tag
    /// (`HostCpus::tag_waker_ns`; default: `waker_ns`).
    tag_waker_ns: Option<Spanned<toml::Value>>,
    /// A woken tag waiter's pass of `blk_mq_get_tag`'s loop
    /// (`HostCpus::tag_retry_ns`; default 0).
    tag_retry_ns: Option<Spanned<toml::Value>>,
    /// The part of `submit_ns` after `submit_bio` (`CpuCosts::submit_split`;
    /// default `DEFAULT_SUBMIT_RETURN_NS`, at most `submit_ns`).
    submit_return_ns: Option<Spanned<toml::Value>>,
    /// The part of the way back (`submit_return_ns`) only a submit call
    /// that wakes a sleeping task spends (`HostCpus::submit_wake_ns`;
    /// default 0; at most the way back).
    submit_wake_ns: Option<Spanned<toml::Value>>,
    /// As in `[run]` (one place or the other).
    submit_ns: Option<Spanned<toml::Value>>,
    reap_ns: Option<Spanned<toml::Value>>,
    wake_jitter_ns: Option<Spanned<toml::Value>>,
}

impl Builder<'_> {
    /// A non-negative integer of `[host]`, or a located error (None).
    fn host_int(&mut self, key: &str, v: &Spanned<toml::Value>) -> Option<u64> {
        match v.get_ref() {
            toml::Value::Integer(i) if *i >= 0 => Some(*i as u64),
            other => self.err(
                &v.span(),
                format!("host.{key} = {other}: expected a non-negative integer"),
            ),
        }
    }

    /// A `[host]` switch: false unless set to true; anything but a boolean
    /// is a located error.
    fn host_bool(&mut self, key: &str, v: &Option<Spanned<toml::Value>>) -> bool {
        match v.as_ref().map(|v| (v, v.get_ref())) {
            None => false,
            Some((_, toml::Value::Boolean(b))) => *b,
            Some((v, other)) => self
                .err(
                    &v.span(),
                    format!("host.{key} = {other}: expected true or false"),
                )
                .unwrap_or(false),
        }
    }

    /// A `[host]` cost in ns, bounded as the `[run]` costs are.
    fn host_cost(&mut self, key: &str, v: &Option<Spanned<toml::Value>>, dflt: u64) -> u64 {
        let Some(v) = v else { return dflt };
        let Some(n) = self.host_int(key, v) else {
            return dflt;
        };
        match limits::host_ns(key, n) {
            Ok(n) => n,
            Err(e) => {
                self.err::<()>(&v.span(), format!("host.{e}"));
                dflt
            }
        }
    }

    /// `[host]`'s background work: the keys together, checked as a whole
    /// (`Background::check`), the message at the key it is about.
    fn background(&mut self, h: &RawHost) -> Background {
        let dist = match &h.stall_dist {
            None => StallDist::default(),
            Some(v) => match v.get_ref().as_str().and_then(StallDist::parse) {
                Some(d) => d,
                None => self
                    .err(
                        &v.span(),
                        format!(
                            "host.stall_dist = {}: expected {}",
                            v.get_ref(),
                            StallDist::NAMES.map(|n| format!("\"{n}\"")).join(" or ")
                        ),
                    )
                    .unwrap_or_default(),
            },
        };
        let b = Background {
            interval_ns: self.host_cost("stall_interval_ns", &h.stall_interval_ns, 0),
            stall_ns: self.host_cost("stall_ns", &h.stall_ns, 0),
            dist,
        };
        if let Err(e) = b.check() {
            // at the key the message names first (both keys are set when
            // the check fails on their values)
            let at = if e.starts_with("stall_ns") {
                h.stall_ns.as_ref().or(h.stall_interval_ns.as_ref())
            } else {
                h.stall_interval_ns.as_ref().or(h.stall_ns.as_ref())
            };
            if let Some(v) = at {
                self.err::<()>(&v.span(), format!("host.{e}"));
            }
            return Background::default();
        }
        if b.enabled() {
            b
        } else {
            // stall_dist alone: no stalls to draw
            if let Some(v) = &h.stall_dist {
                self.err::<()>(
                    &v.span(),
                    "host.stall_dist needs stall_interval_ns and stall_ns",
                );
            }
            Background::default()
        }
    }

    /// `[host] submit_return_ns`: when given, not more than the call it is
    /// a part of; the default is cut to `submit_ns` where that is shorter
    /// (`CpuCosts::submit_split`).
    fn submit_return(&mut self, h: &RawHost, submit_ns: u64, dflt: u64) -> u64 {
        let n = self.host_cost("submit_return_ns", &h.submit_return_ns, dflt);
        match &h.submit_return_ns {
            Some(v) if n > submit_ns => self
                .err(
                    &v.span(),
                    format!(
                        "host.submit_return_ns = {n}: more than submit_ns ({submit_ns}), \
                         the submit call it is the last part of"
                    ),
                )
                .unwrap_or(dflt),
            _ => n,
        }
    }

    /// `[host] submit_wake_ns`: a part of the way back, so not more than
    /// `submit_return_ns` (as cut to `submit_ns`).
    fn submit_wake(&mut self, h: &RawHost, return_ns: u64) -> u64 {
        let n = self.host_cost("submit_wake_ns", &h.submit_wake_ns, 0);
        match &h.submit_wake_ns {
            Some(v) if n > return_ns => self
                .err(
                    &v.span(),
                    format!(
                        "host.submit_wake_ns = {n}: more than the submit call's way back \
                         (submit_return_ns {return_ns}), the part it comes from"
                    ),
                )
                .unwrap_or(0),
            _ => n,
        }
    }

    /// The host's CPU costs from `[run]` and `[host]`.
    pub(super) fn host(&mut self, run: &RawRun, host: Option<&RawHost>) -> CpuCosts {
        let dflt = CpuCosts::default();
        let empty = RawHost::default();
        let h = host.unwrap_or(&empty);
        // the task's own costs: [run] as always, or [host], not both
        let task_cost = |b: &mut Self,
                         key: &str,
                         in_run: &Option<Spanned<u64>>,
                         in_host: &Option<Spanned<toml::Value>>,
                         d: u64| {
            match (in_run, in_host) {
                (Some(r), Some(hv)) => {
                    let at = b.src.at(&r.span());
                    b.err::<()>(
                        &hv.span(),
                        format!("host.{key}: also set in [run] at {at}; set it in one place"),
                    );
                    d
                }
                (Some(r), None) => match limits::host_ns(key, *r.get_ref()) {
                    Ok(x) => x,
                    Err(e) => {
                        b.err::<()>(&r.span(), format!("run.{e}"));
                        d
                    }
                },
                (None, hv) => b.host_cost(key, hv, d),
            }
        };
        let submit_ns = task_cost(
            self,
            "submit_ns",
            &run.submit_ns,
            &h.submit_ns,
            dflt.submit_ns,
        );
        let reap_ns = task_cost(self, "reap_ns", &run.reap_ns, &h.reap_ns, dflt.reap_ns);
        let wake_jitter_ns = task_cost(
            self,
            "wake_jitter_ns",
            &run.wake_jitter_ns,
            &h.wake_jitter_ns,
            dflt.wake_jitter_ns,
        );
        let nr = match &h.cpus {
            None => 0,
            Some(v) => match self.host_int("cpus", v) {
                Some(n) if n <= HostCpus::MAX_NR as u64 => n as u32,
                Some(n) => {
                    self.err::<()>(
                        &v.span(),
                        format!("host.cpus = {n}: at most {}", HostCpus::MAX_NR),
                    );
                    0
                }
                None => 0,
            },
        };
        let m = HostCpus::measured(nr);
        let submit_return_ns = self.submit_return(h, submit_ns, m.submit_return_ns);
        let cpus = HostCpus {
            nr,
            irq_ns: self.host_cost("irq_ns", &h.irq_ns, m.irq_ns),
            irq_tail_ns: self.host_cost("irq_tail_ns", &h.irq_tail_ns, 0),
            wake_ns: self.host_cost("wake_ns", &h.wake_ns, m.wake_ns),
            wake_tail_ns: self.host_cost("wake_tail_ns", &h.wake_tail_ns, 0),
            timer_ns: self.host_cost("timer_ns", &h.timer_ns, m.timer_ns),
            timer_tail_ns: self.host_cost("timer_tail_ns", &h.timer_tail_ns, 0),
            kblockd_ns: self.host_cost("kblockd_ns", &h.kblockd_ns, 0),
            throtl_dispatch_ns_per_bio: self.host_cost(
                "throtl_dispatch_ns_per_bio",
                &h.throtl_dispatch_ns_per_bio,
                m.throtl_dispatch_ns_per_bio,
            ),
            waker_ns: self.host_cost("waker_ns", &h.waker_ns, 0),
            tag_waker_ns: h
                .tag_waker_ns
                .is_some()
                .then(|| self.host_cost("tag_waker_ns", &h.tag_waker_ns, 0)),
            tag_retry_ns: self.host_cost("tag_retry_ns", &h.tag_retry_ns, 0),
            submit_return_ns,
            submit_wake_ns: if nr > 0 {
                self.submit_wake(h, submit_return_ns.min(submit_ns))
            } else {
                0
            },
            wakeup_preempt: self.host_bool("wakeup_preempt", &h.wakeup_preempt),
            kthrotld: self.host_bool("kthrotld", &h.kthrotld),
            reap_every_call: self.host_bool("reap_every_call", &h.reap_every_call),
            features: match &h.sched_features {
                None => SchedFeatures::default(),
                Some(v) => {
                    let parsed = match v.get_ref() {
                        toml::Value::String(s) => SchedFeatures::parse(s),
                        other => Err(format!("{other}: expected a string of feature names")),
                    };
                    match parsed {
                        Ok(f) => f,
                        Err(e) => self
                            .err(&v.span(), format!("host.sched_features = {e}"))
                            .unwrap_or_default(),
                    }
                }
            },
            // (with cpus = 0 the keys are refused below, once)
            background: if nr > 0 {
                self.background(h)
            } else {
                Background::default()
            }, // from the run's switch sched.fair and hz (machine/mod.rs)
            ..HostCpus::default()
        };
        if let (Some(v), true) = (&h.throtl_dispatch_ns_per_bio, nr > 0 && !cpus.kthrotld) {
            self.err::<()>(
                &v.span(),
                "host.throtl_dispatch_ns_per_bio needs kthrotld = true (without it the held bios \
                 leave in the timer call, costing no kworker anything)"
                    .to_string(),
            );
        }
        if nr == 0 {
            // the free host has no CPUs to charge: a cost there would be ignored
            for (key, v) in [
                ("irq_ns", &h.irq_ns),
                ("irq_tail_ns", &h.irq_tail_ns),
                ("wake_ns", &h.wake_ns),
                ("wake_tail_ns", &h.wake_tail_ns),
                ("timer_ns", &h.timer_ns),
                ("timer_tail_ns", &h.timer_tail_ns),
                ("wakeup_preempt", &h.wakeup_preempt),
                ("sched_features", &h.sched_features),
                ("stall_interval_ns", &h.stall_interval_ns),
                ("stall_ns", &h.stall_ns),
                ("stall_dist", &h.stall_dist),
                ("kblockd_ns", &h.kblockd_ns),
                ("kthrotld", &h.kthrotld),
                ("throtl_dispatch_ns_per_bio", &h.throtl_dispatch_ns_per_bio),
                ("reap_every_call", &h.reap_every_call),
                ("waker_ns", &h.waker_ns),
                ("tag_waker_ns", &h.tag_waker_ns),
                ("tag_retry_ns", &h.tag_retry_ns),
                ("submit_return_ns", &h.submit_return_ns),
                ("submit_wake_ns", &h.submit_wake_ns),
            ] {
                if let Some(v) = v {
                    self.err::<()>(
                        &v.span(),
                        format!(
                            "host.{key} needs cpus > 0 (cpus = 0, the default, is the free \
                             host, where the kernel's work costs nothing)"
                        ),
                    );
                }
            }
            return CpuCosts {
                submit_ns,
                reap_ns,
                wake_jitter_ns,
                cpus: HostCpus::default(),
            };
        }
        CpuCosts {
            submit_ns,
            reap_ns,
            wake_jitter_ns,
            cpus,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::Scenario;
    use blklab_core::sim::host_cpus::HostCpus;

    const DEV: &str = "[[device]]\nname = \"sda\"\ndevno = \"8:0\"\n[device.model]\nkind = \"nullb\"\n[[job]]\ncmdline = \"--name=a\"\n";

    fn parse(head: &str) -> Result<blklab_core::CpuCosts, String> {
        Scenario::parse(&format!("{head}\n{DEV}"), std::path::Path::new("t.toml"))
            .map(|s| s.config.cpu)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn no_host_is_the_free_host_with_the_run_costs() {
        let c = parse("[run]\nsubmit_ns = 3000\nreap_ns = 500\n").unwrap();
        assert_eq!(
            (c.submit_ns, c.reap_ns, c.cpus),
            (3000, 500, HostCpus::default())
        );
    }

    #[test]
    fn host_section_sets_cpus_costs_and_defaults() {
        let c = parse("[host]\ncpus = 2\nirq_ns = 1500\nwake_tail_ns = 4000\nsubmit_ns = 2500\n")
            .unwrap();
        assert_eq!(c.submit_ns, 2500);
        assert_eq!(
            c.cpus,
            HostCpus {
                irq_ns: 1500,
                wake_tail_ns: 4000,
                ..HostCpus::measured(2)
            }
        );
        assert!(!c.cpus.wakeup_preempt, "off unless asked for");
        let c = parse("[host]\ncpus = 1\nwakeup_preempt = true\n").unwrap();
        assert!(c.cpus.wakeup_preempt);
        assert_eq!(c.cpus.kblockd_ns, 0, "0 unless asked for");
        let c = parse("[host]\ncpus = 1\nkblockd_ns = 5500\n").unwrap();
        assert_eq!(c.cpus.kblockd_ns, 5500);
        assert_eq!(
            c.cpus.throtl_dispatch_ns_per_bio,
            blklab_core::sim::host_cpus::DEFAULT_THROTL_DISPATCH_NS_PER_BIO,
            "the guests' figure unless asked for"
        );
        assert!(!c.cpus.kthrotld, "off unless asked for");
        let c =
            parse("[host]\ncpus = 1\nkthrotld = true\nthrotl_dispatch_ns_per_bio = 0\n").unwrap();
        assert!(c.cpus.kthrotld);
        assert_eq!(c.cpus.throtl_dispatch_ns_per_bio, 0);
        assert!(!c.cpus.reap_every_call, "off unless asked for");
        let c = parse("[host]\ncpus = 1\nreap_every_call = true\n").unwrap();
        assert!(c.cpus.reap_every_call);
        assert_eq!(c.cpus.waker_ns, 0, "0 unless asked for");
        let c = parse("[host]\ncpus = 1\nwaker_ns = 2000\n").unwrap();
        assert_eq!(c.cpus.waker_ns, 2000);
        assert_eq!(c.cpus.tag_waker_ns, None, "unset: waker_ns's");
        assert_eq!(c.cpus.tag_waker_cost(), 2000);
        let c = parse("[host]\ncpus = 1\nwaker_ns = 2000\ntag_waker_ns = 4000\n").unwrap();
        assert_eq!(c.cpus.tag_waker_ns, Some(4000));
        assert_eq!(c.cpus.tag_waker_cost(), 4000);
        assert_eq!(c.cpus.submit_wake_ns, 0, "0 unless asked for");
        let c = parse(
            "[host]\ncpus = 1\nsubmit_ns = 9000\nsubmit_return_ns = 3000\nsubmit_wake_ns = 2000\n",
        )
        .unwrap();
        assert_eq!(c.cpus.submit_wake_ns, 2000);
        assert_eq!(
            c.submit_split(),
            (6000, 1000),
            "the way back without the wake part"
        );
        let c = parse("[host]\ncpus = 1\nsubmit_ns = 17300\nsubmit_return_ns = 4000\n").unwrap();
        assert_eq!(c.submit_split(), (13_300, 4_000));
        // the default, cut to a shorter call
        let c = parse("[host]\ncpus = 1\nsubmit_ns = 2000\n").unwrap();
        assert_eq!(c.cpus.submit_return_ns, 6_000);
        assert_eq!(c.submit_split(), (0, 2_000));
    }

    #[test]
    fn background_stalls_are_off_unless_asked_for() {
        use blklab_core::sim::background::{Background, StallDist};
        assert_eq!(
            parse("[host]\ncpus = 2\n").unwrap().cpus.background,
            Background::default()
        );
        let c =
            parse("[host]\ncpus = 2\nstall_interval_ns = 4000000\nstall_ns = 200000\n").unwrap();
        assert_eq!(
            c.cpus.background,
            Background {
                interval_ns: 4_000_000,
                stall_ns: 200_000,
                dist: StallDist::Exp
            }
        );
        let c = parse(
            "[host]\ncpus = 2\nstall_interval_ns = 50000\nstall_ns = 5000\nstall_dist = \"fixed\"\n",
        )
        .unwrap();
        assert_eq!(c.cpus.background.dist, StallDist::Fixed);
    }

    #[test]
    fn bad_host_values_are_located() {
        let cases: &[(&str, &[&str])] = &[
            (
                "[host]\ncpus = 2\nirq_ns = -5\n",
                &["t.toml:3:10", "host.irq_ns = -5", "non-negative integer"],
            ),
            (
                "[host]\ncpus = 2\nwake_ns = 2.5\n",
                &["t.toml:3:11", "host.wake_ns = 2.5"],
            ),
            (
                "[host]\ncpus = 1025\n",
                &["t.toml:2:8", "host.cpus = 1025: at most 1024"],
            ),
            ("[host]\ncpus = -1\n", &["t.toml:2:8", "non-negative"]),
            (
                "[host]\ncpus = 1\ntimer_ns = 1000000000000\n",
                &["t.toml:3:12", "timer_ns", "at most"],
            ),
            (
                "[host]\nirq_ns = 100\n",
                &["t.toml:2:10", "host.irq_ns needs cpus > 0"],
            ),
            (
                "[run]\nsubmit_ns = 1\n[host]\nsubmit_ns = 2\n",
                &["t.toml:4:13", "also set in [run] at t.toml:2:13"],
            ),
            ("[host]\ncpu = 2\n", &["t.toml:2:1", "unknown field `cpu`"]),
            (
                "[host]\ncpus = 1\nwakeup_preempt = 1\n",
                &[
                    "t.toml:3:18",
                    "host.wakeup_preempt = 1: expected true or false",
                ],
            ),
            (
                "[host]\ncpus = 1\nsched_features = \"NO_PLACE_LAGG\"\n",
                &[
                    "t.toml:3:18",
                    "host.sched_features = 'NO_PLACE_LAGG': unknown scheduler feature",
                ],
            ),
            (
                "[host]\ncpus = 1\nsched_features = \"NO_PREEMPT_SHORT\"\n",
                &["t.toml:3:18", "PREEMPT_SHORT is not mirrored"],
            ),
            (
                "[host]\nsched_features = \"NO_PLACE_LAG\"\n",
                &["t.toml:2:18", "host.sched_features needs cpus > 0"],
            ),
            (
                "[host]\nwakeup_preempt = true\n",
                &["t.toml:2:18", "host.wakeup_preempt needs cpus > 0"],
            ),
            (
                "[host]\nstall_interval_ns = 4000000\nstall_ns = 1000\n",
                &["t.toml:2:21", "host.stall_interval_ns needs cpus > 0"],
            ),
            (
                "[host]\ncpus = 1\nstall_ns = 1000\n",
                &["t.toml:3:12", "host.stall_ns needs stall_interval_ns"],
            ),
            (
                "[host]\ncpus = 1\nstall_interval_ns = 4000000\n",
                &["t.toml:3:21", "host.stall_interval_ns needs stall_ns"],
            ),
            (
                "[host]\ncpus = 1\nstall_interval_ns = 5000\nstall_ns = 1000\n",
                &["t.toml:3:21", "stall_interval_ns = 5000: at least 10000"],
            ),
            (
                "[host]\ncpus = 1\nstall_interval_ns = 100000\nstall_ns = 60000\n",
                &["t.toml:4:12", "stall_ns = 60000", "at most 50000"],
            ),
            (
                "[host]\ncpus = 1\nstall_interval_ns = -4\nstall_ns = 10\n",
                &["t.toml:3:21", "host.stall_interval_ns = -4: expected a non-negative"],
            ),
            (
                "[host]\ncpus = 1\nstall_interval_ns = 100000\nstall_ns = 10\nstall_dist = \"pareto\"\n",
                &["t.toml:5:14", "stall_dist = \"pareto\": expected \"exp\" or \"fixed\""],
            ),
            (
                "[host]\ncpus = 1\nstall_dist = \"fixed\"\n",
                &["t.toml:3:14", "stall_dist needs stall_interval_ns and stall_ns"],
            ),
            (
                "[host]\nkblockd_ns = 4000\n",
                &["t.toml:2:14", "host.kblockd_ns needs cpus > 0"],
            ),
            (
                "[host]\nwaker_ns = 2000\n",
                &["t.toml:2:12", "host.waker_ns needs cpus > 0"],
            ),
            (
                "[host]\ntag_waker_ns = 4000\n",
                &["t.toml:2:16", "host.tag_waker_ns needs cpus > 0"],
            ),
            (
                "[host]\ncpus = 1\ntag_waker_ns = -4000\n",
                &["t.toml:3:16", "host.tag_waker_ns = -4000: expected a non-negative"],
            ),
            (
                "[host]\ncpus = 1\ntag_waker_ns = \"4us\"\n",
                &["t.toml:3:16", "host.tag_waker_ns = \"4us\": expected a non-negative"],
            ),
            (
                "[host]\nsubmit_return_ns = 1000\n",
                &["t.toml:2:20", "host.submit_return_ns needs cpus > 0"],
            ),
            (
                "[host]\ncpus = 1\nsubmit_ns = 2000\nsubmit_return_ns = 2500\n",
                &["t.toml:4:20", "submit_return_ns = 2500: more than submit_ns (2000)"],
            ),
            (
                "[host]\nsubmit_wake_ns = 1000\n",
                &["t.toml:2:18", "host.submit_wake_ns needs cpus > 0"],
            ),
            (
                "[host]\ncpus = 1\nsubmit_ns = 9000\nsubmit_return_ns = 3000\nsubmit_wake_ns = 3500\n",
                &["t.toml:5:18", "submit_wake_ns = 3500: more than the submit call's way back (submit_return_ns 3000)"],
            ),
            (
                "[host]\nthrotl_dispatch_ns_per_bio = 2600\n",
                &["t.toml:2:30", "host.throtl_dispatch_ns_per_bio needs cpus > 0"],
            ),
            (
                "[host]\ncpus = 1\nkthrotld = true\nthrotl_dispatch_ns_per_bio = -5\n",
                &[
                    "t.toml:4:30",
                    "host.throtl_dispatch_ns_per_bio = -5",
                    "non-negative integer",
                ],
            ),
            (
                "[host]\ncpus = 1\nthrotl_dispatch_ns_per_bio = 2600\n",
                &["t.toml:3:30", "throtl_dispatch_ns_per_bio needs kthrotld = true"],
            ),
            (
                "[host]\ncpus = 1\nkthrotld = \"yes\"\n",
                &["t.toml:3:12", "host.kthrotld = \"yes\": expected true or false"],
            ),
            (
                "[host]\nkthrotld = true\n",
                &["t.toml:2:12", "host.kthrotld needs cpus > 0"],
            ),
            (
                "[host]\nreap_every_call = true\n",
                &["t.toml:2:19", "host.reap_every_call needs cpus > 0"],
            ),
            (
                "[host]\ncpus = 1\nreap_every_call = 1\n",
                &["t.toml:3:19", "host.reap_every_call = 1: expected true or false"],
            ),
            (
                "[host]\ncpus = 1\nkblockd_ns = -1\n",
                &[
                    "t.toml:3:14",
                    "host.kblockd_ns = -1",
                    "non-negative integer",
                ],
            ),
        ];
        for (text, want) in cases {
            let e = parse(text).expect_err(text);
            for w in *want {
                assert!(e.contains(w), "{text:?}: {e:?} lacks {w:?}");
            }
        }
    }
}
