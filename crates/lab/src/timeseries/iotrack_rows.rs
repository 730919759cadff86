//! The `iotrack` table: the iotrack tool's interval figures for every
//! monitored (device, cgroup), from two readings of blk-iotrack's counters —
//! the same arithmetic as the tool's interval block
//! (`iotrack::report::metrics`), all directions together.

use blklab_core::block::iotrack::report::{metrics, Sample};

use super::Cell;

/// The `ALL` row of the tool's per-direction arrays.
const ALL: usize = 3;

/// The rows of one interval ending at `end_ns` and `len_ns` long, given the
/// readings at its start (`prev`) and end (`cur`), one per device.
pub(super) fn rows(prev: &[Sample], cur: &[Sample], end_ns: u64, len_ns: u64) -> Vec<Vec<Cell>> {
    let ms = len_ns as f64 / 1e6;
    let mut out = Vec::new();
    for (p, c) in prev.iter().zip(cur) {
        let (Some(root_p), Some(root_c)) = (p.cgroups.first(), c.cgroups.first()) else {
            continue;
        };
        for (cp, cc) in p.cgroups.iter().zip(&c.cgroups) {
            let m = metrics(&cp.1, &cc.1, &root_p.1, &root_c.1, ms);
            let mut row = vec![
                Cell::Float(end_ns as f64 / 1e9),
                Cell::Text(c.dev_name.clone()),
                Cell::Text(cc.0.clone()),
                Cell::Int(m.delta_ios[ALL] as i64),
                Cell::Float(m.iops[ALL]),
                Cell::Float(m.mbps[ALL]),
                Cell::Float(m.io_pct[ALL]),
                Cell::Float(m.byte_pct[ALL]),
                Cell::Float(m.tm_pct[ALL]),
                Cell::Float(m.dtm_pct[ALL]),
                Cell::Float(m.d2c_pct[ALL]),
                Cell::Float(m.aq2c_ms[ALL]),
                Cell::Float(m.ad2c_ms[ALL]),
            ];
            row.extend(m.hit_pct[ALL].iter().map(|&v| Cell::Float(v)));
            out.push(row);
        }
    }
    out
}
