//! The simulator's side of a case: the same cgroup strings and fio command
//! lines as a scenario file, on a device model standing in for the loop
//! device, run through the same runner and read back through fio's JSON.

use std::fmt::Write as _;
use std::path::Path;

use blklab_lab::scenario::Scenario;

use crate::cases::{Case, HostDevice};
use crate::loop_device::{RawSpeed, FILE_BYTES};
use crate::metrics::{from_fio_json, Metrics};

/// fio's reap cost in the simulator (the scenario's `reap_ns`).
const REAP_NS: u64 = 1_000;

fn esc(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// The scenario (TOML) the simulator runs for `case` on device `devno`
/// (MAJ:MIN, the real device's number when there is one).
///
/// The loop device is modelled as null_blk in timer mode whose completion
/// time is the measured QD1 clat less fio's reap cost, with the measured slat
/// as the submit cost: for controller-bound cases the device is fast and only
/// its latency shows. The capped disk becomes a `cloud` volume provisioned at
/// the lower device's limit with no burst, its latency two loop layers, and
/// a 100 ms throttle window and bucket: the real cap is blk-throttle on the
/// lower loop, which on this kernel grants a 100 ms slice's budget at once and
/// holds the rest to the next slice, so completions come in 100 ms waves (a
/// smooth token bucket would give every I/O the same mean latency instead).
pub fn scenario_text(
    case: &Case,
    dev_name: &str,
    devno: &str,
    raw: &RawSpeed,
    runtime_s: u32,
) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "description = \"{}\"", esc(&case.about));
    let _ = writeln!(s, "\n[run]\nseed = 1\nhz = 250");
    let _ = writeln!(s, "submit_ns = {}\nreap_ns = {REAP_NS}", raw.slat_ns.max(1));
    let _ = writeln!(
        s,
        "\n[[device]]\nname = \"{dev_name}\"\ndevno = \"{devno}\"\nscheduler = \"none\"\nqueue_depth = 128\nnr_requests = 128\nrotational = false\ncapacity = \"{}\"",
        FILE_BYTES
    );
    match &case.device {
        HostDevice::Loop => {
            let _ = writeln!(
                s,
                "[device.model]\nkind = \"nullb\"\nirqmode = 2\nhw_queue_depth = 128\ncompletion_nsec = {}",
                raw.clat_ns.saturating_sub(REAP_NS).max(1_000)
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
            let _ = writeln!(
                s,
                "[device.model]\nkind = \"cloud\"\niops = {iops}\nbps = {bps}\nburst_iops = {iops}\nburst_bps = {bps}\nthrottle_window_ms = 100\nbucket_ms = 100\nlatency_ns = {}\nqueue_depth = 128",
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
        let _ = writeln!(s, "\n[cgroup.\"{g}\"]");
        for (f, v) in fs {
            let _ = writeln!(s, "\"{f}\" = \"{}\"", esc(&sub(v)));
        }
    }
    for j in &case.jobs {
        let _ = writeln!(
            s,
            "\n[[job]]\nlabel = \"{}\"\ncgroup = \"{}\"\ncmdline = \"{} --runtime={runtime_s} --time_based\"",
            esc(&j.label),
            esc(&j.cgroup),
            esc(&j.cmdline)
        );
    }
    s
}

/// Run the simulator on the case; one Metrics per job, in the case's order.
pub fn run(
    case: &Case,
    dev_name: &str,
    devno: &str,
    raw: &RawSpeed,
    runtime_s: u32,
) -> Result<Vec<Metrics>, String> {
    let text = scenario_text(case, dev_name, devno, raw, runtime_s);
    let origin = format!("<conformance case {}>", case.name);
    let sc = Scenario::parse(&text, Path::new(&origin)).map_err(|e| e.to_string())?;
    let out = blklab_lab::runner::run(&sc, &sc.config, None).map_err(|e| format!("{e:#}"))?;
    let mut v = Vec::new();
    for i in 0..sc.invocations.len() {
        let json = blklab_lab::output::json(&sc, &out, i);
        let jobs = from_fio_json(&json)?;
        let (_, m) = jobs
            .into_iter()
            .next()
            .ok_or("the simulator's fio JSON has no job")?;
        v.push(m);
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cases;
    use crate::metrics::Metric;

    #[test]
    fn every_case_is_a_valid_scenario() {
        for c in cases::all() {
            let t = scenario_text(&c, "loop7", "7:7", &RawSpeed::default(), 1);
            if let Err(e) = Scenario::parse(&t, Path::new("x.toml")) {
                panic!("case {}: {e}\n{t}", c.name);
            }
        }
    }

    #[test]
    fn simulated_riops_pacing_follows_the_limit() {
        let c = cases::select(&["throttle-riops".into()]).unwrap().remove(0);
        let m = run(&c, "loop7", "7:7", &RawSpeed::default(), 2).unwrap();
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
            run(&c, "loop7", "7:7", &RawSpeed::default(), 2)
                .unwrap()
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
