//! The built-in cases. A case is a scenario (cgroup files with the kernel's
//! own strings, fio command lines) plus how to realise it on the host: the
//! device it runs on, what the host must offer, and the tolerances the
//! simulator is held to. `{DEV}` in a cgroup string stands for the device the
//! jobs use (MAJ:MIN), filled in on both sides.
//!
//! Tolerances are stated per metric; a metric without one is reported, not
//! judged. docs/fidelity/conformance.md gives the repeated real runs that
//! justify them.

use crate::metrics::{Metric, Tolerance};

/// What a case needs from the host's io controller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// blk-throttle: cgroup v2 io.max, or cgroup v1 blkio.throttle.*.
    Throttle,
    /// blk-iocost: cgroup v2 with io.cost.model / io.cost.qos in its root.
    Iocost,
    /// The bfq scheduler with its cgroup weights (io.bfq.weight, or cgroup
    /// v1 blkio.bfq.weight).
    Bfq,
    /// blk-ioprio: cgroup v2 io.prio.class (CONFIG_BLK_CGROUP_IOPRIO).
    Ioprio,
    /// blk-iolatency: cgroup v2 io.latency (CONFIG_BLK_CGROUP_IOLATENCY).
    IoLatency,
}

/// The I/O scheduler of the case's device and its tunables
/// (/sys/block/DEV/queue/iosched/*), set on both sides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scheduler {
    pub name: String,
    pub tunables: Vec<(String, String)>,
}

impl Scheduler {
    /// No scheduler (what the simulated loop device uses by default).
    pub fn none() -> Scheduler {
        Scheduler {
            name: "none".into(),
            tunables: Vec::new(),
        }
    }
}

/// The device the jobs run on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostDevice {
    /// A loop device over a tmpfs file (direct I/O).
    Loop,
    /// The "capped cloud disk": a loop device over another loop device, with
    /// `lower_limit` (io.max keys, e.g. "riops=2000") written for the LOWER
    /// device in the common parent group of the case's groups. The simulator
    /// builds the same stack (`sim::CappedAs`).
    Capped { lower_limit: String },
}

/// One fio invocation of the case.
#[derive(Debug, Clone)]
pub struct CaseJob {
    pub label: String,
    /// The scenario's cgroup ("/A"); "/" is the case's own parent group.
    pub cgroup: String,
    /// fio's options without runtime, filename and output format.
    pub cmdline: String,
}

#[derive(Debug, Clone)]
pub struct Case {
    pub name: String,
    pub about: String,
    pub need: Need,
    pub device: HostDevice,
    /// The scheduler of the device the jobs use (the capped disk's upper one).
    pub scheduler: Scheduler,
    /// Files of the root cgroup (io.cost.model, io.cost.qos), `{DEV}` for the device.
    pub root_files: Vec<(String, String)>,
    /// The case's groups and their files, in creation order.
    pub groups: Vec<(String, Vec<(String, String)>)>,
    pub jobs: Vec<CaseJob>,
    /// fio runtime in seconds (normal, --quick).
    pub runtime_s: u32,
    pub quick_runtime_s: u32,
    /// Deterministic cases are the ones CI holds to tight tolerances.
    pub deterministic: bool,
    pub tolerance: [Option<Tolerance>; 8],
    /// Trace iocost's QoS loop (`iocost_ioc_vrate_adj`) on both sides and
    /// compare its distributions (qos_loop.rs); reported, and the period
    /// judged where `period_tol_ms` says so.
    pub trace_qos: bool,
    /// Judge iocost's period as the traced events show it (`trace_qos`):
    /// the simulator's within this many ms of the real kernel's.
    pub period_tol_ms: Option<f64>,
}

impl Case {
    pub fn tol(&self, m: Metric) -> Option<Tolerance> {
        self.tolerance[m.index()]
    }
    pub fn runtime(&self, quick: bool) -> u32 {
        if quick {
            self.quick_runtime_s
        } else {
            self.runtime_s
        }
    }
}

fn job(label: &str, cgroup: &str, opts: &str) -> CaseJob {
    CaseJob {
        label: label.into(),
        cgroup: cgroup.into(),
        cmdline: format!("--name={label} --direct=1 --ioengine=libaio {opts}"),
    }
}

fn files(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(f, v)| (f.to_string(), v.to_string()))
        .collect()
}

/// Throttle pacing tolerances, from repeated real runs (docs/fidelity/
/// conformance.md: 5 runs x 5 s and 3 runs x 3 s per case, with another
/// helper loading the host): IOPS and MB/s are the controller's rate (real
/// spread <= 0.2 %, simulator within 0.4 %; 2 % is one I/O in 3 s at 32 IOPS).
/// The mean completion latency is the queueing the throttle imposes (real
/// spread up to 17 % with thinktime). p99 and max sit at the throttle's
/// dispatch instants, which its timer sets in jiffies: a floor of one jiffy
/// (4 ms at HZ=250) for p99 and two for the single-sample max (real spread up
/// to 25 %). p50/p90 of the unthrottled I/Os are the loop device's own speed,
/// which moves with host load: reported, not judged.
const THROTTLE_TOL: [Option<Tolerance>; 8] = [
    Some(Tolerance::rel(0.02)),
    Some(Tolerance::rel(0.02)),
    None,
    Some(Tolerance::rel_abs(0.15, 200.0)),
    None,
    None,
    Some(Tolerance::rel_abs(0.10, 4000.0)),
    Some(Tolerance::rel_abs(0.20, 8000.0)),
];

/// Throttle pacing with fio's thinktime: as THROTTLE_TOL, but the real
/// completion latencies (mean, p99, max) may be up to one jiffy (4 ms at
/// HZ=250) further below the simulator's. The throttle's wait for an I/O is
/// the budget interval less the thinktime, and the simulator wakes fio on
/// time; on a busy host fio's thinktime sleep ends late and the wait shrinks
/// by as much (same rate). Measured with two CPU hogs on the 2-core VM, for
/// rbps-thinktime (20 ms thinktime): real mean 1.6 ms below the simulator
/// (+15.6 %), in another run real p99 60.0 ms against 67.6 ms (+12.7 %);
/// riops-thinktime: mean 0.16 ms below. Real figures above the simulator's
/// are still held to THROTTLE_TOL.
const THROTTLE_THINKTIME_TOL: [Option<Tolerance>; 8] = {
    let mut t = THROTTLE_TOL;
    t[3] = Some(Tolerance::rel_abs(0.15, 200.0).real_lower_by(4000.0));
    t[6] = Some(Tolerance::rel_abs(0.10, 4000.0).real_lower_by(4000.0));
    t[7] = Some(Tolerance::rel_abs(0.20, 8000.0).real_lower_by(4000.0));
    t
};

/// Fixed vrate: throughput follows io.cost.model exactly on the real kernel
/// (the spec reports agreement "to a fraction of a percent"); latencies
/// depend on the issue pattern and are reported.
const VRATE_TOL: [Option<Tolerance>; 8] = [
    Some(Tolerance::rel(0.02)),
    Some(Tolerance::rel(0.02)),
    None,
    None,
    None,
    None,
    None,
    None,
];

/// Capped disk: the sum follows the cap but the split between groups and the
/// latencies move with scheduling; loose, and not part of CI's tight set.
const CAPPED_TOL: [Option<Tolerance>; 8] = [
    Some(Tolerance::rel(0.15)),
    Some(Tolerance::rel(0.15)),
    None,
    Some(Tolerance::rel(0.25)),
    None,
    None,
    None,
    None,
];

fn throttle(name: &str, about: &str, io_max: &str, opts: &str) -> Case {
    Case {
        name: name.into(),
        about: about.into(),
        need: Need::Throttle,
        device: HostDevice::Loop,
        scheduler: Scheduler::none(),
        root_files: vec![],
        groups: vec![("/A".into(), files(&[("io.max", io_max)]))],
        jobs: vec![job("A", "/A", opts)],
        runtime_s: 5,
        quick_runtime_s: 3,
        deterministic: true,
        tolerance: if opts.contains("--thinktime") {
            THROTTLE_THINKTIME_TOL
        } else {
            THROTTLE_TOL
        },
        trace_qos: false,
        period_tol_ms: None,
    }
}

/// io.max riops=5 at QD1: an HZ/10 slice earns 5 * S / HZ = 0 IOs, so the
/// blk-throttle eras part ways (docs/fidelity/throttle.md): 6.1 waits to the
/// window's end, finds nothing, and gets ~3.3 IOPS; v6.11+ waits at least
/// HZ/5 + 1 jiffies (1beabab88ece) and gets ~4.8. 20 s even with --quick:
/// ~100 IOs, so one IO is 1% against the ±2% IOPS tolerance (at 10 s the
/// host's 6.18 run measured +1.4%: 48 IOs, one of them the run's last).
fn throttle_riops_low() -> Case {
    Case {
        runtime_s: 20,
        quick_runtime_s: 20,
        ..throttle(
            "throttle-riops-low",
            "io.max riops=5, 4k randread QD1 (a 100 ms slice earns 0 IOs: 6.1 ~3.3/s, 6.11+ ~4.8/s)",
            "{DEV} riops=5",
            "--rw=randread --bs=4k --iodepth=1",
        )
    }
}

/// The fixed-vrate cost model: far below a tmpfs loop device's speed (it does
/// more than 15k 4k IOPS at QD1), so throughput is the model's: 4k random reads cost
/// 1/2000 s, 64k sequential reads 1/4000 s - 4k/100MB/s + 64k/100MB/s.
/// blk-iocost charges a read as random only when it lands more than
/// LCOEF_RANDIO_PAGES (4096 pages, 16 MiB) from the group's previous one; on
/// the 64 MiB device 7/16 of uniformly random reads are nearer and cost the
/// sequential rate, so "random" 4k reads alone run at 2560 IOPS, not 2000
/// (the simulator does the same, which the case checks).
pub const VRATE_MODEL: &str = "{DEV} ctrl=user model=linear rbps=100000000 rseqiops=4000 rrandiops=2000 wbps=100000000 wseqiops=4000 wrandiops=2000";
/// vrate pinned at 100 %: no latency targets, min = max = 100.
pub const VRATE_QOS: &str = "{DEV} enable=1 ctrl=user rpct=0 rlat=0 wpct=0 wlat=0 min=100 max=100";

fn vrate(weights: &[u32], bs: &str, rw: &str) -> Case {
    let shape = match weights {
        [_] => "alone".to_string(),
        w => w.iter().map(u32::to_string).collect::<Vec<_>>().join("-"),
    };
    let names = ["A", "B", "C"];
    let mut groups = Vec::new();
    let mut jobs = Vec::new();
    for (i, w) in weights.iter().enumerate() {
        let g = format!("/{}", names[i]);
        groups.push((
            g.clone(),
            vec![("io.weight".into(), format!("default {w}"))],
        ));
        jobs.push(job(
            names[i],
            &g,
            &format!("--rw={rw} --bs={bs} --iodepth=32"),
        ));
    }
    let kind = if rw == "randread" { "rand" } else { "seq" };
    Case {
        name: format!("iocost-vrate-{shape}-{bs}-{kind}"),
        about: format!(
            "iocost, vrate fixed at 100 %, model far below the device; weights {}; {bs} {rw} QD32",
            if weights.len() == 1 {
                "(one group alone)".to_string()
            } else {
                shape.replace('-', ":")
            }
        ),
        need: Need::Iocost,
        device: HostDevice::Loop,
        scheduler: Scheduler::none(),
        root_files: files(&[("io.cost.model", VRATE_MODEL), ("io.cost.qos", VRATE_QOS)]),
        groups,
        jobs,
        runtime_s: 5,
        quick_runtime_s: 3,
        deterministic: true,
        tolerance: VRATE_TOL,
        trace_qos: false,
        period_tol_ms: None,
    }
}

/// The lower device's cap for the capped-disk cases.
pub const CAP_LIMIT: &str = "riops=2000";
/// iocost on the capped disk: the model matches the cap, latency QoS at 5 ms p95.
pub const CAPPED_MODEL: &str = "{DEV} ctrl=user model=linear rbps=400000000 rseqiops=2000 rrandiops=2000 wbps=400000000 wseqiops=2000 wrandiops=2000";
pub const CAPPED_QOS: &str =
    "{DEV} enable=1 ctrl=user rpct=95 rlat=5000 wpct=95 wlat=5000 min=25 max=200";

fn capped(on: bool) -> Case {
    let groups = vec![
        ("/A".into(), files(&[("io.weight", "default 100")])),
        ("/B".into(), files(&[("io.weight", "default 300")])),
    ];
    Case {
        name: format!("capped-qos-iocost-{}", if on { "on" } else { "off" }),
        about: format!(
            "capped disk ({CAP_LIMIT} on the lower loop), groups weighted 100:300, 4k randread QD32 each, iocost {}",
            if on { "on with latency QoS (p95 5 ms)" } else { "off" }
        ),
        need: if on { Need::Iocost } else { Need::Throttle },
        device: HostDevice::Capped {
            lower_limit: CAP_LIMIT.into(),
        },
        scheduler: Scheduler::none(),
        root_files: if on {
            files(&[("io.cost.model", CAPPED_MODEL), ("io.cost.qos", CAPPED_QOS)])
        } else {
            vec![]
        },
        groups,
        jobs: vec![
            job("A", "/A", "--rw=randread --bs=4k --iodepth=32"),
            job("B", "/B", "--rw=randread --bs=4k --iodepth=32"),
        ],
        runtime_s: 8,
        quick_runtime_s: 4,
        deterministic: false,
        tolerance: CAPPED_TOL,
        trace_qos: on,
        period_tol_ms: None,
    }
}

/// The latency targets of the period cases (µs): periods of 4, 10 and 50 ms
/// before the timer's rounding (`ioc_refresh_period_us`: twice the target
/// at rpct 95).
pub const PERIOD_RLAT_US: [u32; 3] = [2000, 5000, 25000];

/// iocost's period length on the real kernel: the capped disk, saturated
/// with the latency target `rlat_us` (missed, so every period is busy and
/// traced), the period read from the events' timestamps (qos_loop.rs).
/// Judged to 1 ms: the period is whole jiffies (4 ms at HZ=250, 1 ms at
/// HZ=1000), so a timer that keeps one jiffy more or less fails at either
/// HZ, and the guest's clock under icount has no jitter of its own beyond
/// the softirq running the timer a tick late.
fn period(rlat_us: u32) -> Case {
    let mut c = capped(true);
    let ms = rlat_us / 1000;
    c.name = format!("iocost-period-rlat-{ms}ms");
    c.about = format!(
        "iocost's period with a {ms} ms read latency target (period 2 x {ms} ms before jiffy rounding) on the capped disk ({CAP_LIMIT} on the lower loop), groups 100:300, 4k randread QD32 each"
    );
    c.root_files = files(&[
        ("io.cost.model", CAPPED_MODEL),
        (
            "io.cost.qos",
            &format!("{{DEV}} enable=1 ctrl=user rpct=95 rlat={rlat_us} wpct=95 wlat={rlat_us} min=25 max=200"),
        ),
    ]);
    c.runtime_s = 4;
    c.quick_runtime_s = 3;
    c.tolerance = [None; 8];
    c.period_tol_ms = Some(1.0);
    c
}

/// A light job beside a heavy one on the capped disk, no controller above
/// the cap: how long the QD1 job's I/Os wait. On the real rig the cap is
/// blk-throttle on the lower loop device, in the groups' common parent,
/// where each child group queues on its own and the parent takes from them
/// in turn (`throtl_pop_queued`), so the light job does not wait behind
/// the heavy one's 128 I/Os. Reported, not judged: against the QEMU
/// kernels the guest's machine gives A within 5-20 % (the figure follows
/// fio's submit cost from the probe, and that match rests on a
/// compensating error: docs/fidelity/guest-slat.md); on this host the race
/// is its shared cores' (docs/fidelity/conformance-vm.md, issue 13).
fn light_beside_heavy() -> Case {
    let mut c = capped(false);
    c.name = "capped-qd1-beside-qd128".into();
    c.about = format!(
        "capped disk ({CAP_LIMIT} on the lower loop), no controller on the upper device: A 4k randread QD1 beside B 4k randread QD128; A's latency"
    );
    c.groups = vec![("/A".into(), vec![]), ("/B".into(), vec![])];
    c.jobs = vec![
        job("A", "/A", "--rw=randread --bs=4k --iodepth=1"),
        job("B", "/B", "--rw=randread --bs=4k --iodepth=128"),
    ];
    c.runtime_s = 6;
    c.quick_runtime_s = 3;
    c.tolerance = [None; 8];
    c
}

/// mq-deadline serving two priority classes. Reported, not judged: the BE
/// class is dispatched only while the RT class has nothing queued or in
/// flight (`dd_dispatch_request`) or once a request has aged
/// (`dd_dispatch_prio_aged_requests`), so the split depends on how the
/// lower loop device spreads its completions — emulated CPU time under
/// QEMU, the host's CPUs on the host — which the simulated capped disk does
/// not model yet (docs/fidelity/conformance.md; the saturation issue).
const IOPRIO_TOL: [Option<Tolerance>; 8] = [None; 8];

/// The aging window of the ioprio cases: BE requests wait this long behind a
/// busy RT class before `dd_dispatch_prio_aged_requests` serves them.
pub const PRIO_AGING_MS: u32 = 1000;

/// RT beside BE on mq-deadline in front of the capped disk: job A (QD4) is
/// RT, job B (QD32) BE — by fio's `prioclass` (ioprio_set) or, with
/// `by_cgroup`, by `io.prio.class` of A's group (blk-ioprio).
fn ioprio(by_cgroup: bool) -> Case {
    let (a_opts, groups) = if by_cgroup {
        (
            "--rw=randread --bs=4k --iodepth=4",
            vec![
                // `none-to-rt`: the v5.14 name, which 6.1 knows and later
                // kernels keep as an alias of `promote-to-rt` (6.1 refuses
                // `promote-to-rt` with EINVAL). A's I/O has no class of its
                // own, so both make it RT.
                ("/A".into(), files(&[("io.prio.class", "none-to-rt")])),
                ("/B".into(), vec![]),
            ],
        )
    } else {
        (
            "--rw=randread --bs=4k --iodepth=4 --prioclass=1",
            vec![("/A".into(), vec![]), ("/B".into(), vec![])],
        )
    };
    let how = if by_cgroup {
        "io.prio.class none-to-rt on A's group"
    } else {
        "fio prioclass=1 (RT) for A"
    };
    Case {
        name: if by_cgroup {
            "ioprio-class-rt-be-mq-deadline".into()
        } else {
            "ioprio-rt-be-mq-deadline".into()
        },
        about: format!(
            "capped disk ({CAP_LIMIT}) behind mq-deadline (prio_aging_expire={PRIO_AGING_MS} ms): A RT QD4 by {how}, B BE QD32, 4k randread; B runs when RT has nothing queued or in flight, or once aged"
        ),
        need: if by_cgroup { Need::Ioprio } else { Need::Throttle },
        device: HostDevice::Capped {
            lower_limit: CAP_LIMIT.into(),
        },
        scheduler: Scheduler {
            name: "mq-deadline".into(),
            tunables: vec![("prio_aging_expire".into(), PRIO_AGING_MS.to_string())],
        },
        root_files: vec![],
        groups,
        jobs: vec![
            job("A", "/A", a_opts),
            job("B", "/B", "--rw=randread --bs=4k --iodepth=32"),
        ],
        runtime_s: 8,
        quick_runtime_s: 5,
        deterministic: false,
        tolerance: IOPRIO_TOL,
        trace_qos: false,
        period_tol_ms: None,
    }
}

/// bfq's per-job figures are reported, not judged: absolute figures on a
/// loop device under bfq are set by the host CPU (bfq's lock, the loop
/// worker, fio itself on a loaded host), which the simulator does not
/// model beyond its per-request lock time. What these cases judge is the
/// split between the weighted groups (`share_check` below; the real runs
/// are in docs/fidelity/conformance.md and bfq.md).
const BFQ_TOL: [Option<Tolerance>; 8] = [None; 8];

/// The bfq shapes (jobs per group, iodepth) and the tolerance of /A's
/// share of the case's I/Os, in percentage points (None: reported), on
/// this host and in a QEMU guest. docs/fidelity/conformance.md and
/// conformance-vm.md give the repeated runs behind them.
///
/// On this host only 4 jobs of QD8 per group keep /A backlogged enough
/// that the real split does not depend on how the CPU is shared: with one
/// job per group the host's split moved between 22 % and 87 % from run to
/// run.
///
/// In the guests (one vCPU) the real split of 1j-qd1 and 4j-qd8 stays at
/// 87.3-89.8 % on all three kernels across sessions, and the simulator's
/// guest expression gives 86.9-89.8 % at each run's probe (2026-11-26,
/// after the waker's cost and `blk_mq_get_tag`'s loop). Its one-CPU
/// lock-step still flips with fio's probed submit cost: ±0.2 µs moves
/// 6.12's 1j-qd1 between 79 and 89 % and 6.1's 4j-qd8 between 80 and 88 %.
/// 10 points hold that and still fail the model as it was before
/// (50-64 % on these shapes: bfq's weights not honoured). 1j-qd32 stays
/// reported: the real kernels split it between 48 % and 99 % (6.12) and
/// 80-88 % (6.1) from run to run.
const BFQ_SHAPES: [(u32, u32, Option<f64>, Option<f64>); 3] = [
    (1, 1, None, Some(10.0)),
    (1, 32, None, None),
    (4, 8, Some(6.0), Some(10.0)),
];

/// The group-share check of `case`: the bfq cases weigh /A against /B.
pub fn share_check(case: &Case) -> Option<crate::share::ShareCheck> {
    let (_, _, host, qemu) = BFQ_SHAPES
        .iter()
        .find(|(j, d, _, _)| bfq_name(*j, *d) == case.name)?;
    Some(crate::share::ShareCheck {
        cgroup: "/A",
        host_tol_pts: *host,
        qemu_tol_pts: *qemu,
    })
}

fn bfq_name(jobs: u32, depth: u32) -> String {
    format!("bfq-800-100-{jobs}j-qd{depth}")
}

/// The suffix of a bfq case's twin without a scheduler: the same groups,
/// weights and jobs on a device whose scheduler is `none` (the weights are
/// written and do nothing), so that the two totals give bfq's cost in
/// throughput (sched_cost.rs).
pub const NO_SCHED_TWIN: &str = "-none";

/// `bfq_shares` without a scheduler (see [`NO_SCHED_TWIN`]); reported only.
fn bfq_twin_without_scheduler(jobs: u32, depth: u32) -> Case {
    let mut c = bfq_shares(jobs, depth);
    c.name.push_str(NO_SCHED_TWIN);
    c.about = format!(
        "{jobs} job(s) of 4k randread QD{depth} per group without a scheduler (io.bfq.weight 800:100 written, no effect): total throughput against bfq's"
    );
    c.scheduler.name = "none".into();
    c
}

/// Two groups weighted 800:100 under bfq (seed 004's weights), `jobs` 4k
/// random-read jobs of `depth` each per group.
fn bfq_shares(jobs: u32, depth: u32) -> Case {
    let mut v = Vec::new();
    for (g, n) in [("/A", "A"), ("/B", "B")] {
        for i in 0..jobs {
            v.push(job(
                &format!("{n}{i}"),
                g,
                &format!("--rw=randread --bs=4k --iodepth={depth}"),
            ));
        }
    }
    Case {
        name: bfq_name(jobs, depth),
        about: format!(
            "bfq, groups weighted 800:100 (io.bfq.weight), {jobs} job(s) of 4k randread QD{depth} per group"
        ),
        need: Need::Bfq,
        device: HostDevice::Loop,
        root_files: vec![],
        groups: vec![
            ("/A".into(), files(&[("io.bfq.weight", "default 800")])),
            ("/B".into(), files(&[("io.bfq.weight", "default 100")])),
        ],
        jobs: v,
        scheduler: Scheduler {
            name: "bfq".into(),
            tunables: Vec::new(),
        },
        runtime_s: 5,
        quick_runtime_s: 3,
        deterministic: false,
        tolerance: BFQ_TOL,
        trace_qos: false,
        period_tol_ms: None,
    }
}

// ---- blk-iolatency (issue 21) ----

/// io.latency cases the simulator does not follow for the same reason as
/// the kernel: reported, not judged. At 2000 µs (`-on`) and 100 µs
/// (`-tight`) the real kernel's A misses now and then (B's depth dips, or
/// oscillates 8 ↔ 16) while the simulated capped disk completes A's bios in
/// ~2 µs and never misses; B's depth >= 8 does not move the split, so IOPS
/// agree without the mechanism agreeing (docs/fidelity/iolatency.md).
const IOLATENCY_TOL: [Option<Tolerance>; 8] = [None; 8];

/// `-off` (no target) and `-miss` (every window misses on both sides, B
/// scaled to depth 1 by ~4 s): the capped disk's tolerances. 3 × 8 s on
/// built-6.1-hz1000 (docs/fidelity/conformance.md): real IOPS spread
/// 0.7–0.9 % (off) and 2.2–2.4 % (miss); simulator −10 % / +9 % (off) and
/// −5 % / +4 % (miss) per job; clat mean within 11 %. B's depth sequence and
/// slat mean (its sleep in `rq_qos_wait`, real 871 / sim 863 µs) are
/// reported: the per-case tolerance would hold A's slat (fio's submit cost)
/// to the same band.
const IOLATENCY_JUDGED_TOL: [Option<Tolerance>; 8] = CAPPED_TOL;

/// The io.latency target of A in the iolatency cases (µs).
pub const IOLATENCY_TARGET_US: u32 = 2000;
/// A target A cannot meet on the capped disk (µs).
pub const IOLATENCY_TIGHT_US: u32 = 100;
/// A target no I/O can meet (µs): every window of A misses on both sides,
/// so B's depth is halved at every scale event (500 ms apart) down to 1.
pub const IOLATENCY_MISS_US: u32 = 1;

/// A (4k randread QD4) beside B (4k randread QD32) on the capped disk, A
/// protected by io.latency with `target_us` (None: no io.latency, the
/// comparison): B's depth is halved whenever more than a tenth of A's I/Os
/// in a window take longer than the target, so A's latency falls and B's
/// share with it. At the 2000 µs target A meets it (its p90 is about
/// 0.5 ms on the real kernel) and nothing is throttled; at 100 µs it misses.
fn iolatency(name: &str, target_us: Option<u32>, tolerance: [Option<Tolerance>; 8]) -> Case {
    let a_files = match target_us {
        Some(t) => files(&[("io.latency", &format!("{{DEV}} target={t}"))]),
        None => vec![],
    };
    Case {
        name: format!("iolatency-protect-{name}"),
        about: format!(
            "capped disk ({CAP_LIMIT}), A 4k randread QD4 beside B 4k randread QD32, {}",
            match target_us {
                Some(t) => format!("A with io.latency target={t} us"),
                None => "no io.latency (the comparison)".to_string(),
            }
        ),
        need: if target_us.is_some() {
            Need::IoLatency
        } else {
            Need::Throttle
        },
        device: HostDevice::Capped {
            lower_limit: CAP_LIMIT.into(),
        },
        scheduler: Scheduler::none(),
        root_files: vec![],
        groups: vec![("/A".into(), a_files), ("/B".into(), vec![])],
        jobs: vec![
            job("A", "/A", "--rw=randread --bs=4k --iodepth=4"),
            job("B", "/B", "--rw=randread --bs=4k --iodepth=32"),
        ],
        runtime_s: 8,
        quick_runtime_s: 5,
        deterministic: false,
        tolerance,
        trace_qos: false,
        period_tol_ms: None,
    }
}

/// Every built-in case, in run order.
pub fn all() -> Vec<Case> {
    let mut v = vec![
        throttle(
            "throttle-riops",
            "io.max riops=1000, 4k randread QD8",
            "{DEV} riops=1000",
            "--rw=randread --bs=4k --iodepth=8",
        ),
        throttle(
            "throttle-riops-thinktime",
            "io.max riops=200, 4k randread QD1 with 4 ms thinktime (unthrottled it would do ~240/s)",
            "{DEV} riops=200",
            "--rw=randread --bs=4k --iodepth=1 --thinktime=4ms",
        ),
        throttle(
            "throttle-rbps",
            "io.max rbps=8 MiB/s, 64k sequential read QD4",
            "{DEV} rbps=8388608",
            "--rw=read --bs=64k --iodepth=4",
        ),
        throttle(
            "throttle-rbps-thinktime",
            "io.max rbps=2 MiB/s, 64k sequential read QD1 with 20 ms thinktime (unthrottled ~3.1 MiB/s)",
            "{DEV} rbps=2097152",
            "--rw=read --bs=64k --iodepth=1 --thinktime=20ms",
        ),
        throttle_riops_low(),
    ];
    for (bs, rw) in [
        ("4k", "randread"),
        ("4k", "read"),
        ("64k", "randread"),
        ("64k", "read"),
    ] {
        for w in [&[100u32, 300][..], &[100, 100], &[100]] {
            v.push(vrate(w, bs, rw));
        }
    }
    v.push(capped(false));
    v.push(capped(true));
    v.extend(PERIOD_RLAT_US.iter().map(|&r| period(r)));
    v.push(light_beside_heavy());
    for (jobs, depth) in [(1, 1), (1, 32), (4, 8)] {
        v.push(bfq_shares(jobs, depth));
    }
    v.push(bfq_twin_without_scheduler(4, 8));
    v.push(ioprio(false));
    v.push(ioprio(true));
    v.push(iolatency("off", None, IOLATENCY_JUDGED_TOL));
    v.push(iolatency("on", Some(IOLATENCY_TARGET_US), IOLATENCY_TOL));
    v.push(iolatency("tight", Some(IOLATENCY_TIGHT_US), IOLATENCY_TOL));
    v.push(iolatency(
        "miss",
        Some(IOLATENCY_MISS_US),
        IOLATENCY_JUDGED_TOL,
    ));
    v
}

/// The cases named (all when `names` is empty); unknown names are an error
/// listing the known ones. A name ending in `*` selects by prefix.
pub fn select(names: &[String]) -> Result<Vec<Case>, String> {
    let all = all();
    if names.is_empty() {
        return Ok(all);
    }
    let mut out: Vec<Case> = Vec::new();
    for n in names {
        let hits: Vec<&Case> = match n.strip_suffix('*') {
            Some(p) => all.iter().filter(|c| c.name.starts_with(p)).collect(),
            None => all.iter().filter(|c| &c.name == n).collect(),
        };
        if hits.is_empty() {
            let known: Vec<&str> = all.iter().map(|c| c.name.as_str()).collect();
            return Err(format!(
                "no conformance case '{n}' (known: {})",
                known.join(", ")
            ));
        }
        for c in hits {
            if !out.iter().any(|o| o.name == c.name) {
                out.push(c.clone());
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_required_cases_exist_with_unique_names() {
        let all = all();
        let mut names: Vec<&str> = all.iter().map(|c| c.name.as_str()).collect();
        let n = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), n, "duplicate case names");
        for want in [
            "throttle-riops",
            "throttle-riops-thinktime",
            "throttle-rbps",
            "throttle-rbps-thinktime",
            "iocost-vrate-100-300-4k-rand",
            "iocost-vrate-100-100-64k-seq",
            "iocost-vrate-alone-4k-seq",
            "capped-qos-iocost-off",
            "capped-qos-iocost-on",
            "capped-qd1-beside-qd128",
            "iocost-period-rlat-2ms",
            "iocost-period-rlat-5ms",
            "iocost-period-rlat-25ms",
            "ioprio-rt-be-mq-deadline",
            "ioprio-class-rt-be-mq-deadline",
        ] {
            assert!(names.contains(&want), "missing case {want}");
        }
        assert_eq!(
            all.iter()
                .filter(|c| c.name.starts_with("iocost-vrate"))
                .count(),
            12
        );
    }

    #[test]
    fn select_by_name_and_prefix() {
        assert_eq!(select(&["throttle-*".into()]).unwrap().len(), 5);
        assert_eq!(select(&["throttle-rbps".into()]).unwrap().len(), 1);
        let e = select(&["nope".into()]).unwrap_err();
        assert!(e.contains("no conformance case 'nope'") && e.contains("throttle-riops"));
    }
}
