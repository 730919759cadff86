//! The simulator's side of a case: the same cgroup strings and fio command
//! lines as a scenario file, on a device model standing in for the loop
//! device, run through the same runner and read back through fio's JSON.

use std::fmt::Write as _;
use std::path::Path;

use blklab_lab::scenario::Scenario;

use crate::cases::{Case, HostDevice};
use crate::loop_device::{RawSpeed, FILE_BYTES};
use crate::metrics::{from_fio_json, Metrics};
use crate::qos_loop::{Collect, VrateAdj};
use blklab_core::sim::host_cpus::DEFAULT_SUBMIT_RETURN_NS;
use blklab_core::sim::trace::TraceSink;

use crate::fio_costs::{fio_costs, probe_costs, REAP_NS};

/// How the simulator expresses the capped disk: `stacked` (the default: as
/// the host builds it, the jobs' loop device over a lower loop device with
/// the case's io.max on the lower device in the groups' common parent) or
/// `cloud` (the earlier stand-in: a provisioned volume at the cap). Chosen
/// with `blklab conformance --sim-capped-disk`, to compare the two
/// (docs/fidelity/conformance.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum CappedAs {
    Cloud,
    #[default]
    Stacked,
}

impl std::str::FromStr for CappedAs {
    type Err = String;
    fn from_str(v: &str) -> Result<CappedAs, String> {
        match v {
            "stacked" => Ok(CappedAs::Stacked),
            "cloud" => Ok(CappedAs::Cloud),
            _ => Err(format!("{v}: expected \"cloud\" or \"stacked\"")),
        }
    }
}

/// How the simulator expresses the host's loop device (a loop device over
/// a tmpfs file): `nullb` (the default: null_blk in timer mode completing
/// in the measured QD1 clat less the reap) or `worker` (a `kind = "loop"`,
/// `backing = "tmpfs"` device whose per-blkcg worker does the copy on a
/// CPU: `worker_ns` = the measured QD1 clat less the reap, and less the
/// two wake-ups (`DEFAULT_WAKE_NS`) on a host with CPUs, where the worker
/// and the task are woken once each per QD1 request; or `worker:NS` for a
/// given `worker_ns`); on the stacked capped disk both loop levels get
/// workers of that cost, the lower one over a tmpfs file. Chosen with
/// `blklab conformance --sim-loop`; the default is `nullb` against this
/// host and `worker:4000` against a QEMU guest (sim_request.rs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum LoopAs {
    #[default]
    Nullb,
    Worker(Option<u64>),
}

impl std::str::FromStr for LoopAs {
    type Err = String;
    fn from_str(v: &str) -> Result<LoopAs, String> {
        match v {
            "nullb" => Ok(LoopAs::Nullb),
            "worker" => Ok(LoopAs::Worker(None)),
            _ => match v.strip_prefix("worker:").map(str::parse::<u64>) {
                Some(Ok(ns)) if (1..=1_000_000_000).contains(&ns) => Ok(LoopAs::Worker(Some(ns))),
                _ => Err(format!("{v}: expected \"nullb\", \"worker\" or \"worker:NS\" (NS: the worker's ns per request, 1 to 1000000000)")),
            },
        }
    }
}

/// How the simulated side expresses the real one's host: its CPUs, the
/// capped disk, the loop device (`--sim-cpus`, `--sim-capped-disk`,
/// `--sim-loop`), as resolved for the real side
/// (`sim_request::SimRequest::for_side`); `Default` is the free host.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct SimChoices {
    /// The scenario's `[host] cpus`; 0 = the free host.
    pub cpus: u32,
    pub capped: CappedAs,
    pub loop_as: LoopAs,
    /// The scenario's `[host] wakeup_preempt` (with cpus > 0): a woken loop
    /// worker preempts the fio task on its CPU, as the QEMU guests' traces
    /// show (`--sim-wakeup-preempt`; vm/guest_cpu.rs).
    pub wakeup_preempt: bool,
    /// The scenario's `[host] kblockd_ns` (with cpus > 0): a kblockd queue
    /// run's CPU time (`--sim-kblockd`; 0 = the default).
    pub kblockd_ns: u64,
    /// The scenario's `[host] kthrotld` (with cpus > 0): blk-throttle's
    /// held bios leave through its dispatch work's kworker
    /// (`--sim-kthrotld`; off by default).
    pub kthrotld: bool,
    /// The scenario's `[host] reap_every_call` (with cpus > 0): every
    /// getevents call costs `reap_ns`, also one that finds its completions
    /// waiting (`--sim-reap-every`; off by default, docs/fidelity/cpus.md).
    pub reap_every_call: bool,
    /// The scenario's `[host] waker_ns` (with cpus > 0): the waker's side
    /// of a wake-up made from a task's context (`--sim-waker`; the guest
    /// expression's default `guest_costs::GUEST_WAKER_NS`).
    pub waker_ns: u64,
    /// The scenario's `[host] tag_waker_ns` (with cpus > 0): the waker's
    /// side of waking a task asleep for a request tag (`--sim-tag-waker`;
    /// None: not written, the same as `waker_ns`).
    pub tag_waker_ns: Option<u64>,
    /// The scenario's `[host] submit_return_ns` (with cpus > 0; 0 = the
    /// simulator's default), cut to fio's submit cost.
    pub submit_return_ns: u64,
    /// The scenario's `[host] tag_retry_ns` (with cpus > 0; 0 = none).
    pub tag_retry_ns: u64,
    /// The scenario's `[host] submit_wake_ns` (with cpus > 0; 0 = every
    /// submit call costs the probe's slat), cut to the way back: the part
    /// of it only a call that wakes a sleeping task spends
    /// (`--sim-submit-wake`, an experiment: 0 by default, the guests'
    /// measured `guest_costs::GUEST_SUBMIT_WAKE_NS` without a value).
    pub submit_wake_ns: u64,
    /// The scenario's `[host] sched_features` (with cpus > 0): the fair
    /// class's features turned off (`--sim-sched-features`), to match the
    /// guest's `BLKLAB_GUEST_SCHED_FEATURES`; default: the kernel's.
    pub sched_features: blklab_core::sim::sched_features::SchedFeatures,
    /// Where fio's `submit_ns` and `reap_ns` come from (`--sim-costs`:
    /// the QD1 probe by default, or the guest's measured costs), and the
    /// expression only reported beside the judged one.
    pub costs: crate::fio_costs::SimCosts,
    /// The user chose how this host's CPUs or loop device are expressed
    /// (`--sim-cpus`, `--sim-loop`): then every case keeps that expression;
    /// otherwise the bfq cases take the host's CPUs (`for_host_case`).
    pub host_chosen: bool,
}

/// The parent group of the case's groups in the stacked expression: io.max
/// has no root-cgroup file, so the case's own parent group (the scenario's
/// "/" otherwise) becomes this group.
const STACKED_PARENT: &str = "/capped";

/// The device the simulator models and the kernel it stands for.
#[derive(Debug, Clone, PartialEq)]
pub struct SimDevice {
    pub name: String,
    /// MAJ:MIN (the real device's number when there is one).
    pub devno: String,
    /// /sys/block/DEV/queue/rotational of the real device (blk-throttle's
    /// slice depends on it in some kernels).
    pub rotational: bool,
    /// The kernel-behaviour switches of the kernel the case ran on (its
    /// profile); empty for the simulator's defaults.
    pub switches: Vec<(String, String)>,
    /// CONFIG_HZ of the kernel the case ran on (the scenario's `hz`).
    pub hz: u32,
    /// How the simulator expresses the host (CPUs, capped disk, loop).
    pub sim: SimChoices,
}

/// The HZ the simulator assumes when the real kernel's is not known: the
/// stock Debian kernels' (and this host's).
pub const DEFAULT_HZ: u32 = 250;

impl SimDevice {
    /// A stand-in when no real device was made (the case did not run there).
    pub fn placeholder(switches: &[(String, String)]) -> SimDevice {
        SimDevice {
            name: "loop99".into(),
            devno: "7:99".into(),
            rotational: false,
            switches: switches.to_vec(),
            hz: DEFAULT_HZ,
            sim: SimChoices::default(),
        }
    }
}

/// The switches of kernel profile `name` (see `blklab switches --kernel`).
pub fn profile_switches(name: &str) -> Result<Vec<(String, String)>, String> {
    // A registry kernel's profile is its series: built-6.1-hz1000 is a 6.1;
    // a local kernel's, the profile nearest its image's release.
    let series = match blklab_vm::local::dir_of(name) {
        Some(dir) => {
            let t = blklab_vm::local::read(dir).map_err(|e| e.to_string())?;
            Some(local_profile(&t.series())?)
        }
        None => blklab_vm::kernels::pin(name).map(|p| p.series()).ok(),
    };
    let p = blklab_core::sim::switches::profile(series.as_deref().unwrap_or(name))?;
    Ok(p.values
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect())
}

/// The profile a local kernel of `series` (`major.minor`) runs under: its
/// own if there is one, else the newest numbered profile before it (a 6.13
/// tree runs as 6.12: the switches record fixes, and a later tree has at
/// least those of the profile before it; what it changed itself is what
/// the run is for).
pub fn local_profile(series: &str) -> Result<String, String> {
    let num = |s: &str| -> Option<(u32, u32)> {
        let (a, b) = s.split_once('.')?;
        Some((a.parse().ok()?, b.parse().ok()?))
    };
    let want = num(series).ok_or_else(|| format!("kernel series '{series}' is not MAJOR.MINOR"))?;
    blklab_core::sim::switches::PROFILES
        .iter()
        .filter_map(|p| num(p.name).map(|n| (n, p.name)))
        .filter(|(n, _)| *n <= want)
        .max()
        .map(|(_, name)| name.to_string())
        .ok_or_else(|| format!("no kernel profile at or before {series}"))
}

/// The switches of the profile for this host's kernel (major.minor of
/// `uname -r`), or none (the simulator's defaults) when no profile names it.
pub fn host_switches() -> Vec<(String, String)> {
    let rel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let mm: Vec<&str> = rel.trim().split(['.', '-']).take(2).collect();
    profile_switches(&mm.join(".")).unwrap_or_default()
}

fn esc(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// The lower loop device of the stacked capped disk: its name and MAJ:MIN
/// (the upper device's major, a minor no real loop device of the run has).
fn lower_of(dev: &SimDevice) -> (String, String) {
    let (major, minor) = dev.devno.split_once(':').unwrap_or(("7", "0"));
    let minor: u32 = minor.parse().unwrap_or(0);
    (
        format!("{}lower", dev.name),
        format!("{major}:{}", minor + 512),
    )
}

/// The scenario (TOML) the simulator runs for `case` on `dev`.
///
/// The loop device is modelled as null_blk in timer mode whose completion
/// time is the measured QD1 clat less fio's reap cost, with the measured slat
/// as the submit cost: for controller-bound cases the device is fast and only
/// its latency shows. The capped disk is built as [`CappedAs::Stacked`]
/// says: a loop device over a lower device completing in two loop layers'
/// time, the cap being blk-throttle on the lower device in the groups'
/// common parent, as on the host. [`CappedAs::Cloud`] instead makes it a
/// `cloud` volume provisioned at the lower device's limit with no burst,
/// its latency two loop layers, and a 100 ms throttle window and bucket
/// (blk-throttle's slice, whose budget comes at once: completions in 100 ms
/// waves).
pub fn scenario_text(case: &Case, dev: &SimDevice, raw: &RawSpeed, runtime_s: u32) -> String {
    let SimChoices {
        capped, loop_as, ..
    } = dev.sim;

    let (dev_name, devno) = (dev.name.as_str(), dev.devno.as_str());
    let stacked = capped == CappedAs::Stacked && matches!(case.device, HostDevice::Capped { .. });
    // the case's cgroup paths, under the stacked expression's parent
    let cg = |g: &str| -> String {
        if !stacked {
            g.to_string()
        } else if g == "/" {
            STACKED_PARENT.to_string()
        } else {
            format!("{STACKED_PARENT}{g}")
        }
    };
    let mut s = String::new();
    let _ = writeln!(s, "description = \"{}\"", esc(&case.about));
    let _ = writeln!(s, "\n[run]\nseed = 1\nhz = {}", dev.hz);
    // fio's costs (fio_costs.rs). By default the probe's whole slat.
    // Simplified: with CPUs, under CFS, that slat already holds the loop
    // work the simulated worker adds again inside the call (the simulated
    // probe gives the slat plus the worker and two wake-ups); the probe less
    // that work fails the judged capped cases, whose simulated race needs
    // the larger cost (docs/fidelity/guest-slat.md), so fio's slat is not
    // judged. `--sim-costs measured` takes the guest's quiet-submit probe
    // instead; `run` refuses it without that probe, so the probe's costs
    // here stand only for `--show`'s placeholder.
    let costs = fio_costs(raw, dev.sim.costs.judged).unwrap_or_else(|_| probe_costs(raw));
    let _ = writeln!(
        s,
        "submit_ns = {}\nreap_ns = {}",
        costs.submit_ns, costs.reap_ns
    );
    if dev.sim.cpus > 0 {
        let _ = writeln!(s, "\n[host]\ncpus = {}", dev.sim.cpus);
        if dev.sim.wakeup_preempt {
            let _ = writeln!(s, "wakeup_preempt = true");
        }
        if dev.sim.kblockd_ns > 0 {
            let _ = writeln!(s, "kblockd_ns = {}", dev.sim.kblockd_ns);
        }
        if dev.sim.kthrotld {
            let _ = writeln!(s, "kthrotld = true");
        }
        if dev.sim.reap_every_call {
            let _ = writeln!(s, "reap_every_call = true");
        }
        if dev.sim.waker_ns > 0 {
            let _ = writeln!(s, "waker_ns = {}", dev.sim.waker_ns);
        }
        if let Some(ns) = dev.sim.tag_waker_ns {
            let _ = writeln!(s, "tag_waker_ns = {ns}");
        }
        let submit_ns = costs.submit_ns;
        let mut submit_return_ns = DEFAULT_SUBMIT_RETURN_NS.min(submit_ns);
        if dev.sim.submit_return_ns > 0 {
            submit_return_ns = dev.sim.submit_return_ns.min(submit_ns);
            let _ = writeln!(s, "submit_return_ns = {submit_return_ns}");
        }
        let submit_wake_ns = dev.sim.submit_wake_ns.min(submit_return_ns);
        if submit_wake_ns > 0 {
            let _ = writeln!(s, "submit_wake_ns = {submit_wake_ns}");
        }
        if dev.sim.tag_retry_ns > 0 {
            let _ = writeln!(s, "tag_retry_ns = {}", dev.sim.tag_retry_ns);
        }
        let features = dev.sim.sched_features.kernel_syntax();
        if !features.is_empty() {
            let _ = writeln!(s, "sched_features = \"{features}\"");
        }
    }
    if !dev.switches.is_empty() {
        let _ = writeln!(s, "\n[run.switches]");
        for (k, v) in &dev.switches {
            let _ = writeln!(s, "\"{}\" = \"{}\"", esc(k), esc(v));
        }
    }
    let _ = writeln!(
        s,
        "\n[[device]]\nname = \"{dev_name}\"\ndevno = \"{devno}\"\nscheduler = \"{}\"\nqueue_depth = 128\nnr_requests = {}\nrotational = {}\ncapacity = \"{}\"",
        esc(&case.scheduler.name),
        // the kernel's default: the hardware depth with none, twice it
        // (capped at 2 x 128) with a scheduler (blk_mq_init_sched)
        if case.scheduler.name == "none" { 128 } else { 256 },
        dev.rotational,
        FILE_BYTES
    );
    if !case.scheduler.tunables.is_empty() {
        let _ = writeln!(s, "[device.iosched]");
        for (k, v) in &case.scheduler.tunables {
            let _ = writeln!(s, "\"{}\" = \"{}\"", esc(k), esc(v));
        }
    }
    // the loop worker's ns per request under `--sim-loop worker[:NS]`: the
    // measured QD1 clat less the reap, and less the two wake-ups
    // (`DEFAULT_WAKE_NS`) on a host with CPUs, where the worker and the
    // task are woken once each per QD1 request. `--sim-costs measured`
    // gives every level the quiet-submit probe's (quiet_kworkers.rs)
    let worker_ns = match loop_as {
        LoopAs::Nullb => None,
        LoopAs::Worker(_) if costs.loop_worker_ns.is_some() => costs.loop_worker_ns,
        LoopAs::Worker(Some(ns)) => Some(ns),
        LoopAs::Worker(None) => {
            let wakes_ns = if dev.sim.cpus > 0 {
                2 * blklab_core::sim::host_cpus::DEFAULT_WAKE_NS
            } else {
                0
            };
            Some(raw.clat_ns.saturating_sub(REAP_NS + wakes_ns).max(1_000))
        }
    };
    // one loop level's device model: a tmpfs loop with its workers, or
    // null_blk completing in `levels` loop layers' measured time
    let loop_model = |levels: u64| match worker_ns {
        Some(ns) => format!("kind = \"loop\"\nbacking = \"tmpfs\"\nworker_ns = {ns}"),
        None => format!(
            "kind = \"nullb\"\nirqmode = 2\nhw_queue_depth = 128\ncompletion_nsec = {}",
            levels * raw.clat_ns.saturating_sub(REAP_NS).max(1_000)
        ),
    };
    match &case.device {
        HostDevice::Loop => {
            let _ = writeln!(s, "[device.model]\n{}", loop_model(1));
        }
        HostDevice::Capped { lower_limit } if stacked => {
            // upper loop over lower loop: each level's own queue. By
            // default the lower one completes in the time the cloud
            // expression gives its volume (two loop layers: the upper
            // loop's own work is folded into the lower one's completion);
            // with `--sim-loop worker[:NS]` each level has its workers,
            // the upper one's submitting the lower bio after `worker_ns`,
            // the lower one's copying from its tmpfs file in `worker_ns`
            // (the same figure for both: no measured split between them)
            let (lname, ldevno) = lower_of(dev);
            let upper_worker = worker_ns
                .map(|ns| format!("\nworker_ns = {ns}"))
                .unwrap_or_default();
            let lower_model = loop_model(2);
            let _ = writeln!(
                s,
                "[device.model]\nkind = \"loop\"\nbackend = \"{lname}\"{upper_worker}\n\n[[device]]\nname = \"{lname}\"\ndevno = \"{ldevno}\"\nrotational = {}\ncapacity = \"{}\"\n[device.model]\n{lower_model}",
                dev.rotational,
                FILE_BYTES,
            );
            let _ = writeln!(
                s,
                "\n[cgroup.\"{STACKED_PARENT}\"]\n\"io.max\" = \"{ldevno} {}\"",
                esc(lower_limit)
            );
        }
        HostDevice::Capped { lower_limit } => {
            let (mut iops, mut bps) = (1u64 << 30, 1u64 << 36);
            for kv in lower_limit.split_whitespace() {
                if let Some((k, v)) = kv.split_once('=') {
                    let v: u64 = v.parse().unwrap_or(0);
                    match k {
                        "riops" | "wiops" if v > 0 => iops = iops.min(v),
                        "rbps" | "wbps" if v > 0 => bps = bps.min(v),
                        _ => {}
                    }
                }
            }
            // the lower device's blk-throttle slice: HZ/50 on a
            // non-rotational device in the kernels that kept it (6.10..6.17)
            let slice_ms = if !dev.rotational
                && dev
                    .switches
                    .iter()
                    .any(|(k, v)| k == "throttle.slice" && v == "20ms-nonrot")
            {
                20
            } else {
                100
            };
            let _ = writeln!(
                s,
                "[device.model]\nkind = \"cloud\"\niops = {iops}\nbps = {bps}\nburst_iops = {iops}\nburst_bps = {bps}\nthrottle_window_ms = {slice_ms}\nbucket_ms = {slice_ms}\nlatency_ns = {}\nqueue_depth = 128",
                2 * raw.clat_ns.saturating_sub(REAP_NS).max(1_000)
            );
        }
    }
    let sub = |v: &str| v.replace("{DEV}", devno);
    if !case.root_files.is_empty() {
        let _ = writeln!(s, "\n[cgroup.\"/\"]");
        for (f, v) in &case.root_files {
            let _ = writeln!(s, "\"{f}\" = \"{}\"", esc(&sub(v)));
        }
    }
    for (g, fs) in &case.groups {
        let _ = writeln!(s, "\n[cgroup.\"{}\"]", cg(g));
        for (f, v) in fs {
            let _ = writeln!(s, "\"{f}\" = \"{}\"", esc(&sub(v)));
        }
    }
    for j in &case.jobs {
        let _ = writeln!(
            s,
            "\n[[job]]\nlabel = \"{}\"\ncgroup = \"{}\"\ncmdline = \"{} --runtime={runtime_s} --time_based\"",
            esc(&j.label),
            esc(&cg(&j.cgroup)),
            esc(&j.cmdline)
        );
        if stacked {
            let _ = writeln!(s, "device = \"{}\"", esc(dev_name));
        }
    }
    s
}

/// What the simulator produced for a case.
#[derive(Debug, Clone)]
pub struct SimOut {
    /// One Metrics per job, in the case's order.
    pub jobs: Vec<Metrics>,
    /// iocost's QoS-loop events when the case traces them.
    pub qos: Option<Result<Vec<VrateAdj>, String>>,
    /// io.stat of every cgroup with fields at the end (`runner::io_stat_all`).
    pub io_stat: Vec<(String, String)>,
}

/// Run the simulator on the case.
pub fn run(case: &Case, dev: &SimDevice, raw: &RawSpeed, runtime_s: u32) -> Result<SimOut, String> {
    let stacked =
        dev.sim.capped == CappedAs::Stacked && matches!(case.device, HostDevice::Capped { .. });
    fio_costs(raw, dev.sim.costs.judged)?;
    let text = scenario_text(case, dev, raw, runtime_s);
    let origin = format!("<conformance case {}>", case.name);
    let sc = Scenario::parse(&text, Path::new(&origin)).map_err(|e| e.to_string())?;
    let collect = Collect::default();
    let sink: Option<Box<dyn TraceSink>> = case
        .trace_qos
        .then(|| Box::new(collect.clone()) as Box<dyn TraceSink>);
    let out = blklab_lab::runner::run(&sc, &sc.config, sink).map_err(|e| format!("{e:#}"))?;
    let mut jobs = Vec::new();
    for i in 0..sc.invocations.len() {
        let json = blklab_lab::output::json(&sc, &out, i);
        let parsed = from_fio_json(&json)?;
        let (_, m) = parsed
            .into_iter()
            .next()
            .ok_or("the simulator's fio JSON has no job")?;
        jobs.push(m);
    }
    Ok(SimOut {
        jobs,
        qos: case.trace_qos.then(|| collect.take()),
        // the case's own paths again
        io_stat: out
            .io_stat
            .iter()
            .map(|(p, v)| {
                let p = match p.strip_prefix(STACKED_PARENT).filter(|_| stacked) {
                    Some("") => "/".to_string(),
                    Some(rest) if rest.starts_with('/') => rest.to_string(),
                    _ => p.clone(),
                };
                (p, v.clone())
            })
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_local_kernel_runs_under_the_nearest_profile_before_it() {
        assert_eq!(local_profile("6.1").unwrap(), "6.1");
        assert_eq!(local_profile("6.12").unwrap(), "6.12");
        assert_eq!(local_profile("6.13").unwrap(), "6.12");
        assert_eq!(local_profile("6.11").unwrap(), "6.1");
        assert_eq!(local_profile("7.2").unwrap(), "6.18");
        assert!(local_profile("5.15")
            .unwrap_err()
            .contains("no kernel profile at or before 5.15"));
        assert!(local_profile("six")
            .unwrap_err()
            .contains("not MAJOR.MINOR"));
    }

    fn dev7() -> SimDevice {
        SimDevice {
            name: "loop7".into(),
            devno: "7:7".into(),
            rotational: false,
            switches: Vec::new(),
            hz: DEFAULT_HZ,
            sim: SimChoices::default(),
        }
    }

    #[test]
    fn profiles_become_run_switches_and_set_the_capped_slice() {
        let c = crate::cases::select(&["capped-qos-iocost-off".into()])
            .unwrap()
            .remove(0);
        let mut d = dev7();
        // a v6.10..v6.17 mainline kernel: HZ/50 slices on non-rotational devices
        d.switches = profile_switches("6.12").unwrap();
        for (k, v) in d.switches.iter_mut() {
            if k == "throttle.slice" {
                *v = "20ms-nonrot".into();
            }
        }
        let cloud = |d: &SimDevice| {
            let mut d = d.clone();
            d.sim.capped = CappedAs::Cloud;
            scenario_text(&c, &d, &RawSpeed::default(), 1)
        };
        let t = cloud(&d);
        assert!(
            t.contains("[run.switches]") && t.contains("\"throttle.slice\" = \"20ms-nonrot\""),
            "{t}"
        );
        assert!(t.contains("throttle_window_ms = 20"), "{t}");
        Scenario::parse(&t, Path::new("x.toml")).unwrap();
        d.rotational = true;
        let t = cloud(&d);
        assert!(
            t.contains("throttle_window_ms = 100") && t.contains("rotational = true"),
            "{t}"
        );
    }

    #[test]
    fn the_choices_parse_and_refuse_what_they_do_not_know() {
        assert_eq!("cloud".parse::<CappedAs>(), Ok(CappedAs::Cloud));
        assert_eq!("stacked".parse::<CappedAs>(), Ok(CappedAs::Stacked));
        assert!("fifo".parse::<CappedAs>().unwrap_err().contains("expected"));
        assert_eq!("nullb".parse::<LoopAs>(), Ok(LoopAs::Nullb));
        assert_eq!("worker".parse::<LoopAs>(), Ok(LoopAs::Worker(None)));
        assert_eq!(
            "worker:6000".parse::<LoopAs>(),
            Ok(LoopAs::Worker(Some(6000)))
        );
        for bad in ["worker:0", "worker:x", "worker:2000000000", "loop"] {
            assert!(bad.parse::<LoopAs>().is_err(), "{bad}");
        }
        assert_eq!(
            SimChoices::default(),
            SimChoices {
                cpus: 0,
                capped: CappedAs::Stacked,
                loop_as: LoopAs::Nullb,
                wakeup_preempt: false,
                kblockd_ns: 0,
                kthrotld: false,
                reap_every_call: false,
                waker_ns: 0,
                tag_waker_ns: None,
                submit_return_ns: 0,
                tag_retry_ns: 0,
                submit_wake_ns: 0,
                sched_features: Default::default(),
                costs: Default::default(),
                host_chosen: false,
            }
        );
    }

    #[test]
    fn the_stacked_capped_disk_is_a_loop_over_a_capped_lower_device() {
        let c = crate::cases::select(&["capped-qos-iocost-on".into()])
            .unwrap()
            .remove(0);
        let raw = RawSpeed::default();
        let t = scenario_text(&c, &dev7(), &raw, 1);
        let sc = Scenario::parse(&t, Path::new("x.toml")).unwrap_or_else(|e| panic!("{e}\n{t}"));
        let d = &sc.config.devices;
        assert_eq!(d.len(), 2, "{t}");
        assert_eq!(
            (d[0].info.name.as_str(), d[1].info.name.as_str()),
            ("loop7", "loop7lower")
        );
        assert_eq!(d[0].model.backend().map(|b| b.0), Some("loop7lower"));
        // the cap on the lower device, in the groups' common parent; iocost
        // on the upper one (the case's root files name {DEV})
        let cg = &sc.config.cgroups;
        let p = cg.find("/capped").unwrap();
        assert_eq!(
            cg.get(p).files.get("io.max").map(String::as_str),
            Some("7:519 riops=2000")
        );
        let root = cg.get(0).files.get("io.cost.qos").unwrap();
        assert!(root.starts_with("7:7 "), "{root}");
        for j in &sc.config.jobs {
            assert_eq!(j.dev, 0);
            assert!(cg.get(j.cgroup).path.starts_with("/capped/"));
        }
        // the default
        assert_eq!(t, scenario_text(&c, &dev7(), &raw, 1));
    }

    #[test]
    fn sim_loop_worker_gives_both_levels_of_the_stacked_disk_their_workers() {
        let cases = crate::cases::select(&["capped-qd1-beside-qd128".into()]).unwrap();
        let (c, raw, mut d) = (&cases[0], RawSpeed::default(), dev7());
        let default = scenario_text(c, &d, &raw, 1);
        assert!(!default.contains("worker_ns"), "{default}");
        assert!(default.contains("kind = \"nullb\""), "{default}");
        d.sim.loop_as = LoopAs::Worker(Some(4_000));
        d.sim.cpus = 1;
        let t = scenario_text(c, &d, &raw, 1);
        let sc = Scenario::parse(&t, Path::new("x.toml")).unwrap_or_else(|e| panic!("{e}\n{t}"));
        let devs = &sc.config.devices;
        assert_eq!(devs.len(), 2, "{t}");
        assert_eq!(devs[0].model.backend().map(|b| b.0), Some("loop7lower"));
        for (i, dv) in devs.iter().enumerate() {
            let w = dv
                .model
                .loop_worker()
                .unwrap_or_else(|| panic!("device {i}: no worker\n{t}"));
            assert_eq!(w.cost_ns(false, 4096), 4_000, "device {i}");
        }
        assert!(!t.contains("nullb"), "{t}");
        // the cap stays on the lower device
        let cg = &sc.config.cgroups;
        let p = cg.find("/capped").unwrap();
        assert_eq!(
            cg.get(p).files.get("io.max").map(String::as_str),
            Some("7:519 riops=2000")
        );
    }

    use crate::cases;
    use crate::metrics::Metric;

    #[test]
    fn every_case_is_a_valid_scenario() {
        for c in cases::all() {
            let t = scenario_text(&c, &dev7(), &RawSpeed::default(), 1);
            if let Err(e) = Scenario::parse(&t, Path::new("x.toml")) {
                panic!("case {}: {e}\n{t}", c.name);
            }
        }
    }

    #[test]
    fn simulated_riops_pacing_follows_the_limit() {
        let c = cases::select(&["throttle-riops".into()]).unwrap().remove(0);
        let m = run(&c, &dev7(), &RawSpeed::default(), 2).unwrap().jobs;
        let iops = m[0].get(Metric::Iops);
        assert!((iops - 1000.0).abs() < 20.0, "iops {iops}");
    }

    /// The fixed-vrate cases' expected figures follow from the cost model:
    /// 4k sequential alone = rseqiops; weights 100:300 split 1:3; "random" 4k
    /// on the 64 MiB device = 2560 IOPS (7/16 of the seeks are under 16 MiB).
    #[test]
    fn simulated_fixed_vrate_follows_the_cost_model() {
        let iops = |name: &str| -> Vec<f64> {
            let c = cases::select(&[name.into()]).unwrap().remove(0);
            run(&c, &dev7(), &RawSpeed::default(), 2)
                .unwrap()
                .jobs
                .iter()
                .map(|m| m.get(Metric::Iops))
                .collect()
        };
        let seq = iops("iocost-vrate-alone-4k-seq");
        assert!((seq[0] - 4000.0).abs() < 40.0, "{seq:?}");
        let rand = iops("iocost-vrate-alone-4k-rand");
        assert!((rand[0] - 2560.0).abs() < 60.0, "{rand:?}");
        let w = iops("iocost-vrate-100-300-4k-seq");
        assert!((w[1] / w[0] - 3.0).abs() < 0.05, "{w:?}");
        assert!((w[0] + w[1] - 4000.0).abs() < 40.0, "{w:?}");
    }
}
