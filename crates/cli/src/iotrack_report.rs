//! `blklab run --iotrack MS [-x]`: the blk-iotrack tool's periodic report
//! (dublio/iotrack's layout) over simulated time, its final totals, and the
//! same per-cgroup figures for fio's JSON documents.
//!
//! Which cgroups: the root first (it covers the whole device), then every
//! cgroup of the scenario in tree order, as if all were given with `-g`.

use blklab_core::cgroup::CgId;
use blklab_core::iotrack::report::{format_interval, metrics, Sample};
use blklab_core::iotrack::IotrackCounters;
use blklab_core::Sim;
use blklab_fio::json::{JObj, JVal};

/// The cgroups the report covers besides the root.
pub fn report_cgroups(sim: &Sim) -> Vec<CgId> {
    sim.cgroups()
        .ids()
        .filter(|&c| c != blklab_core::cgroup::ROOT)
        .collect()
}

/// One sample per device.
pub fn samples(sim: &Sim, cgs: &[CgId]) -> Vec<Sample> {
    (0..sim.nr_devices() as u16)
        .map(|d| sim.iotrack_sample(d, cgs))
        .collect()
}

/// All-zero samples for the start of the run (the tool's baseline).
pub fn zero_samples(like: &[Sample]) -> Vec<Sample> {
    like.iter()
        .map(|s| Sample {
            time_ns: 0,
            dev_name: s.dev_name.clone(),
            dev: [0; 11],
            cgroups: s
                .cgroups
                .iter()
                .map(|(p, _)| (p.clone(), IotrackCounters::default()))
                .collect(),
        })
        .collect()
}

/// "YYYY-mm-dd HH:MM:SS" of a simulated instant (the simulation starts at the Unix epoch).
pub fn time_str(ns: u64) -> String {
    let (y, m, d, hh, mm, ss, _) = crate::output::civil(ns / 1_000_000_000);
    format!("{y:04}-{m:02}-{d:02} {hh:02}:{mm:02}:{ss:02}")
}

/// The whole run's per-cgroup figures as a JSON array (one entry per device
/// and cgroup), for an `"iotrack"` key in fio's JSON documents.
pub fn json_totals(last: &[Sample]) -> Vec<JVal> {
    let mut out = Vec::new();
    for s in last {
        let root = s.cgroups.first().map(|c| c.1.clone()).unwrap_or_default();
        let zero = IotrackCounters::default();
        let ms = (s.time_ns as f64 / 1e6).max(1e-9);
        for (path, c) in &s.cgroups {
            let m = metrics(&zero, c, &zero, &root, ms);
            let mut o = JObj::new();
            o.str("device", &s.dev_name);
            o.str("cgroup", path);
            o.arr("ios", c.ios.iter().map(|&v| JVal::Int(v as i64)).collect());
            o.arr(
                "sectors",
                c.sectors.iter().map(|&v| JVal::Int(v as i64)).collect(),
            );
            o.arr(
                "q2c_ns",
                c.tms.iter().map(|&v| JVal::Int(v as i64)).collect(),
            );
            o.arr(
                "d2c_ns",
                c.dtms.iter().map(|&v| JVal::Int(v as i64)).collect(),
            );
            o.float("iops", m.iops[3]);
            o.float("mbps", m.mbps[3]);
            o.float("io_pct", m.io_pct[3]);
            o.float("byte_pct", m.byte_pct[3]);
            o.float("tm_pct", m.tm_pct[3]);
            o.float("dtm_pct", m.dtm_pct[3]);
            o.float("d2c_pct", m.d2c_pct[3]);
            o.float("ad2c_ms", m.ad2c_ms[3]);
            o.float("aq2c_ms", m.aq2c_ms[3]);
            o.float("lat_mean_us", m.mean_us);
            o.float("lat_min_us", m.min_us);
            o.float("lat_max_us", m.max_us);
            o.arr(
                "hit_pct",
                m.hit_pct[3].iter().map(|&v| JVal::Float(v)).collect(),
            );
            o.arr(
                "lat_thresh_ns",
                blklab_core::iotrack::DEFAULT_THRESH_NS
                    .iter()
                    .map(|&v| JVal::Int(v as i64))
                    .collect(),
            );
            out.push(JVal::Obj(o));
        }
    }
    out
}

/// Step a simulation, printing one report block per interval into `out`.
/// Returns the last samples (for the totals).
pub fn step(sim: &mut Sim, interval_ns: u64, extended: bool, out: &mut String) -> Vec<Sample> {
    let cgs = report_cgroups(sim);
    let mut prev = samples(sim, &cgs);
    let mut t = interval_ns;
    while sim.run_until(t) {
        let cur = samples(sim, &cgs);
        out.push_str(&format_interval(
            &prev,
            &cur,
            interval_ns as f64 / 1e6,
            extended,
            &time_str(t),
        ));
        prev = cur;
        t += interval_ns;
    }
    samples(sim, &cgs)
}

/// The totals block: every counter since the start, over the whole run.
pub fn totals(last: &[Sample], extended: bool) -> String {
    let ms = last
        .first()
        .map(|s| s.time_ns as f64 / 1e6)
        .unwrap_or(0.0)
        .max(1e-9);
    let t = last.first().map(|s| s.time_ns).unwrap_or(0);
    let mut s = String::from("blk-iotrack totals for the whole run:\n");
    s.push_str(&format_interval(
        &zero_samples(last),
        last,
        ms,
        extended,
        &time_str(t),
    ));
    s
}

#[cfg(test)]
mod tests {
    #[test]
    fn time_str_layout() {
        assert_eq!(super::time_str(0), "1970-01-01 00:00:00");
        assert_eq!(
            super::time_str(86_400_000_000_000 * 31 + 61_000_000_000),
            "1970-02-01 00:01:01"
        );
    }
}
