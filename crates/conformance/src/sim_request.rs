//! What the command line asks of the simulated side (`--sim-cpus`,
//! `--sim-loop`, `--sim-wakeup-preempt`, ...) and what that becomes on the
//! machine the real side runs on (issue 13): an option left out takes the
//! real side's default, one given overrides it.
//!
//! - This host ([`RealSide::Host`]): the free host (no CPUs, null_blk for
//!   the loop device). The host's two cores are shared with other work and
//!   are not a machine the model targets.
//! - A QEMU guest ([`RealSide::Qemu`]): the guest's own machine, one vCPU
//!   shared by fio, the loop devices' kworkers and the interrupts
//!   (crates/vm's qemu.rs boots it with `-smp 1`): `cpus = 1`, the loop
//!   devices as work items on the kworker pool at [`GUEST_LOOP_WORKER_NS`]
//!   per level, wake-up preemption on (a woken kworker takes the CPU from
//!   fio, as the guests' scheduler traces show; docs/fidelity/cpus.md), and
//!   fio's submit cost from the guest's own probe (`raw.slat_ns`, as on
//!   every side; it holds the loop work too, which this machine charges
//!   again: docs/fidelity/guest-slat.md). `--sim-cpus 0` gives the free host for comparison.

use crate::fio_costs::{CostSource, SimCosts};
use crate::guest_costs::{
    GUEST_LOOP_WORKER_NS, GUEST_SUBMIT_RETURN_NS, GUEST_TAG_RETRY_NS, GUEST_WAKER_NS,
};
use crate::share::RealSide;
use crate::sim::{CappedAs, LoopAs, SimChoices};
use blklab_core::sim::sched_features::SchedFeatures;

/// The simulated side as asked for: `None` = the real side's default.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct SimRequest {
    /// `--sim-cpus`.
    pub cpus: Option<u32>,
    /// `--sim-capped-disk` (the same default on every side).
    pub capped: CappedAs,
    /// `--sim-loop`.
    pub loop_as: Option<LoopAs>,
    /// `--sim-wakeup-preempt[=true|false]`.
    pub wakeup_preempt: Option<bool>,
    /// `--sim-kblockd` (0 = none, on every side).
    pub kblockd_ns: u64,
    /// `--sim-kthrotld` (off on every side).
    pub kthrotld: bool,
    /// `--sim-reap-every` (off on every side).
    pub reap_every_call: bool,
    /// `--sim-waker`.
    pub waker_ns: Option<u64>,
    /// `--sim-tag-waker` (unset: the waker's cost, `waker_ns`).
    pub tag_waker_ns: Option<u64>,
    /// `--sim-submit-wake` (0, the default: every submit call costs the
    /// probe's slat).
    pub submit_wake_ns: u64,
    /// `--sim-sched-features` (the kernel's, on every side).
    pub sched_features: SchedFeatures,
    /// `--sim-costs` (the probe by default, on every side).
    pub costs: SimCosts,
}

impl SimRequest {
    /// The choices for a real side of `side`, or why the options do not go
    /// together there.
    pub fn for_side(&self, side: RealSide) -> Result<SimChoices, String> {
        let cpus = self.cpus.unwrap_or(match side {
            RealSide::Host => 0,
            RealSide::Qemu => 1,
        });
        // the guest's machine: a QEMU guest expressed with CPUs
        let guest_machine = side == RealSide::Qemu && cpus > 0;
        let loop_as = self.loop_as.unwrap_or(if guest_machine {
            LoopAs::Worker(Some(GUEST_LOOP_WORKER_NS))
        } else {
            LoopAs::Nullb
        });
        let wakeup_preempt = self.wakeup_preempt.unwrap_or(guest_machine);
        let waker_ns = self
            .waker_ns
            .unwrap_or(if guest_machine { GUEST_WAKER_NS } else { 0 });
        let submit_wake_ns = self.submit_wake_ns;
        if cpus == 0 {
            if submit_wake_ns > 0 {
                return Err("--sim-submit-wake needs --sim-cpus > 0 (the free host charges every submit call alike)".into());
            }
            if waker_ns > 0 {
                return Err(
                    "--sim-waker needs --sim-cpus > 0 (the free host has no CPU to charge)".into(),
                );
            }
            if self.tag_waker_ns.is_some() {
                return Err(
                    "--sim-tag-waker needs --sim-cpus > 0 (the free host has no CPU to charge)"
                        .into(),
                );
            }
            if wakeup_preempt {
                return Err("--sim-wakeup-preempt needs --sim-cpus > 0 (the free host has no CPU to preempt)".into());
            }
            if self.kblockd_ns > 0 {
                return Err(
                    "--sim-kblockd needs --sim-cpus > 0 (the free host has no CPU for kblockd)"
                        .into(),
                );
            }
            if self.kthrotld {
                return Err(
                    "--sim-kthrotld needs --sim-cpus > 0 (the free host has no CPU for kthrotld)"
                        .into(),
                );
            }
            if self.reap_every_call {
                return Err("--sim-reap-every needs --sim-cpus > 0 (the free host charges no CPU for a reap)".into());
            }
            if self.sched_features != SchedFeatures::default() {
                return Err(
                    "--sim-sched-features needs --sim-cpus > 0 (the free host has no scheduler)"
                        .into(),
                );
            }
        }
        if side == RealSide::Host && self.costs.uses(CostSource::Measured) {
            return Err("--sim-costs measured needs a QEMU guest (--kernel debian-6.12, ...): the quiet-submit probe runs there".into());
        }
        if matches!(self.loop_as, Some(LoopAs::Worker(_))) && self.costs.uses(CostSource::Measured)
        {
            return Err("--sim-loop worker[:NS] and --sim-costs measured both set the loop worker's cost (measured takes the quiet-submit probe's): give one".into());
        }
        if waker_ns > 1_000_000_000 {
            return Err(format!("--sim-waker {waker_ns}: at most 1000000000 ns"));
        }
        if let Some(ns) = self.tag_waker_ns.filter(|&ns| ns > 1_000_000_000) {
            return Err(format!("--sim-tag-waker {ns}: at most 1000000000 ns"));
        }
        if submit_wake_ns > 1_000_000_000 {
            return Err(format!(
                "--sim-submit-wake {submit_wake_ns}: at most 1000000000 ns"
            ));
        }
        if self.kblockd_ns > 1_000_000_000 {
            return Err(format!(
                "--sim-kblockd {}: at most 1000000000 ns",
                self.kblockd_ns
            ));
        }
        Ok(SimChoices {
            cpus,
            capped: self.capped,
            loop_as,
            wakeup_preempt,
            kblockd_ns: self.kblockd_ns,
            kthrotld: self.kthrotld,
            reap_every_call: self.reap_every_call,
            waker_ns,
            tag_waker_ns: self.tag_waker_ns,
            submit_return_ns: if guest_machine {
                GUEST_SUBMIT_RETURN_NS
            } else {
                0
            },
            tag_retry_ns: if guest_machine { GUEST_TAG_RETRY_NS } else { 0 },
            submit_wake_ns,
            sched_features: self.sched_features,
            costs: self.costs,
            host_chosen: self.cpus.is_some() || self.loop_as.is_some(),
        })
    }
}

/// The loop worker's CPU per level in the host's expression of the bfq
/// cases: the guests' measured figure (no host measurement of its own).
pub const HOST_BFQ_LOOP_WORKER_NS: u64 = GUEST_LOOP_WORKER_NS;

impl SimChoices {
    /// The expression of `case` on this host, whose CPUs are `host_cpus`:
    /// the invocation's, except that a bfq case, unless the user chose the
    /// expression, gets the host's CPUs and a loop worker. bfq's split
    /// between weighted groups turns on whether a group's process has a
    /// request queued when bfq looks, which the CPUs decide; on the free
    /// host the one-job cases flip with the probe (docs/fidelity/
    /// conformance.md, "The host's bfq cases want the host's CPUs
    /// expressed"). Simplified: the loop worker costs the guests' 4 µs.
    pub fn for_host_case(&self, case: &crate::cases::Case, host_cpus: u32) -> SimChoices {
        if self.host_chosen || case.need != crate::cases::Need::Bfq || host_cpus == 0 {
            return *self;
        }
        SimChoices {
            cpus: host_cpus,
            loop_as: LoopAs::Worker(Some(HOST_BFQ_LOOP_WORKER_NS)),
            ..*self
        }
    }

    /// One line saying how the simulator expresses the host, for the
    /// results' header.
    pub fn describe(&self) -> String {
        if self.cpus == 0 {
            return format!(
                "simulated host: free (no CPUs), loop device {}",
                loop_words(self.loop_as)
            );
        }
        let loop_device = match self.loop_as {
            LoopAs::Worker(_) if self.costs.judged == CostSource::Measured => {
                "with workers of the quiet-submit probe's measured cost per level".to_string()
            }
            l => loop_words(l),
        };
        format!(
            "simulated host: {} CPU(s), loop device {loop_device}, wake-up preemption {}{}{}",
            self.cpus,
            if self.wakeup_preempt { "on" } else { "off" },
            if self.kthrotld {
                ", blk-throttle's release through kthrotld"
            } else {
                ""
            },
            if self.reap_every_call {
                ", every getevents call charged"
            } else {
                ""
            }
        )
    }
}

fn loop_words(l: LoopAs) -> String {
    match l {
        LoopAs::Nullb => "as null_blk".into(),
        LoopAs::Worker(None) => "with workers costed from the probe".into(),
        LoopAs::Worker(Some(ns)) => {
            format!("with workers of {:.1} µs per level", ns as f64 / 1000.0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guest_costs::GUEST_SUBMIT_WAKE_NS;

    #[test]
    fn a_qemu_guest_is_expressed_as_its_own_machine_and_the_host_as_the_free_host() {
        let none = SimRequest::default();
        let host = none.for_side(RealSide::Host).unwrap();
        assert_eq!(host, SimChoices::default(), "the host: today's free host");
        // ... but its bfq cases get the host's CPUs and a loop worker,
        // unless the user chose the expression
        let all = crate::cases::all();
        let bfq = all.iter().find(|c| c.name == "bfq-800-100-4j-qd8").unwrap();
        let throttle = all
            .iter()
            .find(|c| c.name.starts_with("throttle-"))
            .unwrap();
        let b = host.for_host_case(bfq, 2);
        assert_eq!(
            (b.cpus, b.loop_as),
            (2, LoopAs::Worker(Some(HOST_BFQ_LOOP_WORKER_NS)))
        );
        assert_eq!(host.for_host_case(throttle, 2), host);
        let chosen = SimRequest {
            cpus: Some(0),
            ..SimRequest::default()
        }
        .for_side(RealSide::Host)
        .unwrap();
        assert!(chosen.host_chosen);
        assert_eq!(chosen.for_host_case(bfq, 2), chosen);
        let guest = none.for_side(RealSide::Qemu).unwrap();
        assert_eq!(guest.cpus, 1);
        assert_eq!(guest.loop_as, LoopAs::Worker(Some(GUEST_LOOP_WORKER_NS)));
        assert!(guest.wakeup_preempt);
        assert_eq!(guest.waker_ns, GUEST_WAKER_NS);
        assert_eq!(guest.submit_return_ns, GUEST_SUBMIT_RETURN_NS);
        assert_eq!(guest.tag_retry_ns, GUEST_TAG_RETRY_NS);
        assert_eq!(guest.submit_wake_ns, 0, "an experiment, off by default");
        assert!(!guest.kthrotld, "an experiment, off by default");
        assert!(!guest.reap_every_call, "an experiment, off by default");
        let every = SimRequest {
            reap_every_call: true,
            ..SimRequest::default()
        };
        assert!(every.for_side(RealSide::Qemu).unwrap().reap_every_call);
        let every_on_free_host = SimRequest {
            cpus: Some(0),
            ..every
        };
        assert!(every_on_free_host
            .for_side(RealSide::Qemu)
            .unwrap_err()
            .contains("--sim-reap-every needs --sim-cpus > 0"));
        let kthrotld_on_free_host = SimRequest {
            cpus: Some(0),
            kthrotld: true,
            ..SimRequest::default()
        };
        assert!(kthrotld_on_free_host
            .for_side(RealSide::Qemu)
            .unwrap_err()
            .contains("--sim-kthrotld needs --sim-cpus > 0"));
        let no_waker = SimRequest {
            waker_ns: Some(0),
            ..SimRequest::default()
        };
        assert_eq!(no_waker.for_side(RealSide::Qemu).unwrap().waker_ns, 0);
        let waker_on_free_host = SimRequest {
            cpus: Some(0),
            waker_ns: Some(2000),
            ..SimRequest::default()
        };
        assert!(waker_on_free_host
            .for_side(RealSide::Qemu)
            .unwrap_err()
            .contains("--sim-waker needs --sim-cpus > 0"));
        assert_eq!(guest.tag_waker_ns, None, "unset: the waker's cost");
        let tag_waker = SimRequest {
            tag_waker_ns: Some(4000),
            ..SimRequest::default()
        };
        assert_eq!(
            tag_waker.for_side(RealSide::Qemu).unwrap().tag_waker_ns,
            Some(4000)
        );
        assert!(SimRequest {
            cpus: Some(0),
            ..tag_waker
        }
        .for_side(RealSide::Qemu)
        .unwrap_err()
        .contains("--sim-tag-waker needs --sim-cpus > 0"));
        assert!(SimRequest {
            tag_waker_ns: Some(2_000_000_000),
            ..SimRequest::default()
        }
        .for_side(RealSide::Qemu)
        .unwrap_err()
        .contains("--sim-tag-waker 2000000000: at most"));
        let wake_on_free_host = SimRequest {
            cpus: Some(0),
            submit_wake_ns: GUEST_SUBMIT_WAKE_NS,
            ..SimRequest::default()
        };
        assert!(wake_on_free_host
            .for_side(RealSide::Qemu)
            .unwrap_err()
            .contains("--sim-submit-wake needs --sim-cpus > 0"));
    }

    #[test]
    fn given_options_override_the_default_and_cpus_0_is_the_free_host() {
        let free = SimRequest {
            cpus: Some(0),
            ..SimRequest::default()
        };
        assert_eq!(
            free.for_side(RealSide::Qemu).unwrap(),
            SimChoices {
                host_chosen: true,
                ..SimChoices::default()
            }
        );
        let nullb = SimRequest {
            loop_as: Some(LoopAs::Nullb),
            wakeup_preempt: Some(false),
            ..SimRequest::default()
        };
        let g = nullb.for_side(RealSide::Qemu).unwrap();
        assert_eq!(
            (g.cpus, g.loop_as, g.wakeup_preempt),
            (1, LoopAs::Nullb, false)
        );
        let host_cpus = SimRequest {
            cpus: Some(1),
            ..SimRequest::default()
        };
        let h = host_cpus.for_side(RealSide::Host).unwrap();
        assert_eq!(
            (h.cpus, h.loop_as, h.wakeup_preempt),
            (1, LoopAs::Nullb, false)
        );
    }

    #[test]
    fn cpu_options_without_cpus_are_refused() {
        let preempt = SimRequest {
            wakeup_preempt: Some(true),
            ..SimRequest::default()
        };
        let e = preempt.for_side(RealSide::Host).unwrap_err();
        assert!(
            e.contains("--sim-wakeup-preempt needs --sim-cpus > 0"),
            "{e}"
        );
        assert!(preempt.for_side(RealSide::Qemu).is_ok());
        let kblockd = SimRequest {
            cpus: Some(0),
            kblockd_ns: 4000,
            ..SimRequest::default()
        };
        assert!(kblockd
            .for_side(RealSide::Qemu)
            .unwrap_err()
            .contains("--sim-kblockd"));
        let measured = SimRequest {
            costs: "probe,measured".parse().unwrap(),
            ..SimRequest::default()
        };
        assert!(measured
            .for_side(RealSide::Host)
            .unwrap_err()
            .contains("--sim-costs measured needs a QEMU guest"));
        assert_eq!(
            measured.for_side(RealSide::Qemu).unwrap().costs,
            measured.costs
        );
        let huge = SimRequest {
            kblockd_ns: 2_000_000_000,
            ..SimRequest::default()
        };
        assert!(huge
            .for_side(RealSide::Qemu)
            .unwrap_err()
            .contains("at most"));
    }

    #[test]
    fn measured_costs_take_the_quiet_probe_and_are_refused_without_it() {
        let c = crate::cases::select(&["capped-qd1-beside-qd128".into()])
            .unwrap()
            .remove(0);
        let guest = SimRequest {
            costs: "measured".parse().unwrap(),
            ..Default::default()
        }
        .for_side(RealSide::Qemu)
        .unwrap();
        // the sim's own tests' loop7 (sim.rs `dev7`)
        let dev7 = crate::sim::SimDevice {
            name: "loop7".into(),
            devno: "7:7".into(),
            rotational: false,
            switches: Vec::new(),
            hz: crate::sim::DEFAULT_HZ,
            sim: SimChoices::default(),
        };
        let dev = crate::sim::SimDevice {
            sim: guest,
            ..dev7.clone()
        };
        let raw = crate::loop_device::RawSpeed {
            slat_ns: 17_300,
            quiet: Some(crate::probe_cpu::QuietProbe {
                jobs: 4,
                ios: 40_000,
                slat_ns: 2_500,
                cpu_per_io_ns: 9_000,
                ctx_per_kio: 0,
                // 3.5 µs of kworker CPU per request, 0.1 fio wake-ups and
                // 0.05 switch-ins: a 3.15 µs worker
                kworkers: Some(crate::quiet_kworkers::QuietKworkers {
                    ios: 1_000,
                    kworker_ns: 3_500_000,
                    fio_wakes: 100,
                    switch_ins: 50,
                }),
            }),
            ..crate::loop_device::RawSpeed::default()
        };
        let t = crate::sim::scenario_text(&c, &dev, &raw, 1);
        // the quiet probe's slat and the CPU outside it; the way back cut
        // to the (smaller) submit cost
        assert!(t.contains("submit_ns = 2500\nreap_ns = 6500\n"), "{t}");
        assert!(t.contains("submit_return_ns = 2500\n"), "{t}");
        // both levels of the stacked disk get the trace's worker
        assert_eq!(t.matches("worker_ns = 3150\n").count(), 2, "{t}");
        assert!(!t.contains("worker_ns = 4000"), "{t}");
        assert!(guest
            .describe()
            .contains("workers of the quiet-submit probe's measured cost"));
        let probe = crate::sim::SimDevice {
            sim: SimChoices {
                costs: Default::default(),
                ..guest
            },
            ..dev7.clone()
        };
        let t = crate::sim::scenario_text(&c, &probe, &raw, 1);
        assert!(t.contains("submit_ns = 17300\nreap_ns = 1000\n"), "{t}");
        assert_eq!(t.matches("worker_ns = 4000\n").count(), 2, "{t}");
        assert!(probe.sim.describe().contains("workers of 4.0 µs per level"));
        assert!(!t.contains("reap_every_call"), "off unless asked for: {t}");
        // --sim-reap-every: the scenario asks for every getevents call's cost
        let every = crate::sim::SimDevice {
            sim: SimChoices {
                reap_every_call: true,
                ..guest
            },
            ..dev7.clone()
        };
        let t = crate::sim::scenario_text(&c, &every, &raw, 1);
        assert!(t.contains("\nreap_every_call = true\n"), "{t}");
        assert!(!t.contains("tag_waker_ns"), "unset unless asked for: {t}");
        // --sim-tag-waker: the scenario's [host] gets the tag waiter's cost
        let tag = crate::sim::SimDevice {
            sim: SimChoices {
                tag_waker_ns: Some(4000),
                ..guest
            },
            ..dev7.clone()
        };
        let t = crate::sim::scenario_text(&c, &tag, &raw, 1);
        assert!(t.contains("\ntag_waker_ns = 4000\n"), "{t}");
        let e = crate::sim::run(&c, &dev, &crate::loop_device::RawSpeed::default(), 1)
            .err()
            .unwrap();
        assert!(e.contains("no quiet-submit probe"), "{e}");
        // the worker's cost comes from one place: --sim-loop worker with
        // measured (judged or reported) is refused, nullb is not
        for costs in ["measured", "probe,measured"] {
            let both = SimRequest {
                costs: costs.parse().unwrap(),
                loop_as: Some(LoopAs::Worker(Some(4_000))),
                ..Default::default()
            };
            assert!(both
                .for_side(RealSide::Qemu)
                .unwrap_err()
                .contains("both set the loop worker's cost"));
        }
        let nullb = SimRequest {
            costs: "measured".parse().unwrap(),
            loop_as: Some(LoopAs::Nullb),
            ..Default::default()
        };
        assert!(nullb.for_side(RealSide::Qemu).is_ok());
    }
}
