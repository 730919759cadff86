//! The report of the userspace `iotrack` tool (dublio/iotrack, iotrack.c):
//! every interval it reads `/sys/block/DEV/stat` and each monitored cgroup's
//! `io.iotrack.stat`, turns the deltas into rates and shares, and prints an
//! iostat-like device table followed by one row per (cgroup, device).
//!
//! The arithmetic mirrors the tool's C types on purpose: its results are
//! `float` (f32), some intermediate products are `double`, and counter deltas
//! are stored back into integers after passing through a float. Reproducing
//! that makes the printed digits match the tool's, including its rounding (for
//! example, deltas above 2^24 lose precision). The metric structs hold those f32
//! values widened to f64.
//!
//! Layout quirks kept: headers are printed every interval; all columns are
//! left-aligned and followed by a space, so lines end in padding; `svctm` is
//! always 0; `avgrqkb` divides a sector count by a rate (right only for a
//! 1000 ms interval); the per-direction hit percentages (`%rhit`…) are divided
//! by the cgroup's IO count over all directions; mean/min/max are the kernel's
//! cumulative values, not interval values.

use std::fmt::Write;

use super::{IotrackCounters, IOT_NR, LAT_BUCKET_NR};

/// Index of the "all directions" column in the 4-wide metric arrays
/// (0 read, 1 write, 2 other, 3 all).
pub const ALL: usize = IOT_NR;

/// One reading of one device: the 11 leading fields of `/sys/block/DEV/stat`
/// and each monitored cgroup's counters for that device, root `"/"` first, then
/// the cgroups in the user's order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sample {
    pub time_ns: u64,
    pub dev_name: String,
    pub dev: [u64; 11],
    pub cgroups: Vec<(String, IotrackCounters)>,
}

/// One cgroup's interval metrics on one device (`struct blk_iotrack` of the tool).
/// Arrays are indexed 0 read, 1 write, 2 other, 3 all ([`ALL`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CgMetrics {
    /// Cumulative Q2C mean/min/max in µs (the `-x` columns).
    pub mean_us: f64,
    pub min_us: f64,
    pub max_us: f64,
    pub delta_ios: [u64; 4],
    pub delta_sectors: [u64; 4],
    pub delta_tms: [u64; 4],
    pub delta_dtms: [u64; 4],
    /// io/s
    pub iops: [f64; 4],
    /// MB/s (MiB: 2048 sectors)
    pub mbps: [f64; 4],
    /// %io: share of the device's (root cgroup's) IOs
    pub io_pct: [f64; 4],
    /// %byte: share of the device's sectors
    pub byte_pct: [f64; 4],
    /// %tm: share of the device's summed Q2C
    pub tm_pct: [f64; 4],
    /// %dtm: share of the device's summed D2C
    pub dtm_pct: [f64; 4],
    /// %d2c: own D2C / own Q2C
    pub d2c_pct: [f64; 4],
    /// ad2c: average D2C, ms
    pub ad2c_ms: [f64; 4],
    /// aq2c: average Q2C, ms
    pub aq2c_ms: [f64; 4],
    /// %hit: [direction][bucket], every row divided by the cgroup's total IOs.
    pub hit_pct: [[f64; 8]; 4],
}

/// The device line's metrics (`struct block_device` of the tool).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DevMetrics {
    pub rrqm: f64,
    pub wrqm: f64,
    pub r: f64,
    pub w: f64,
    pub rmb: f64,
    pub wmb: f64,
    pub avgrqkb: f64,
    pub avgqu: f64,
    pub await_ms: f64,
    pub r_await: f64,
    pub w_await: f64,
    pub util: f64,
    pub conc: f64,
}

/// The first part of `block_gq_calc_data`: deltas (through f32, as the tool
/// does) and the rates.
struct Base {
    ios: [u64; 4],
    sts: [u64; 4],
    tms: [u64; 4],
    dtms: [u64; 4],
    iops: [f32; 4],
    bps: [f32; 4],
}

fn base(prev: &IotrackCounters, cur: &IotrackCounters, t: f32) -> Base {
    let mut b = Base {
        ios: [0; 4],
        sts: [0; 4],
        tms: [0; 4],
        dtms: [0; 4],
        iops: [0.0; 4],
        bps: [0.0; 4],
    };
    let t = t as f64;
    // io/s and the IO deltas
    let mut total = 0f32;
    for i in 0..IOT_NR {
        let delta = cur.ios[i].wrapping_sub(prev.ios[i]) as f32;
        b.iops[i] = (1000.0 * delta as f64 / t) as f32;
        b.ios[i] = delta as u64;
        total += delta;
    }
    b.iops[ALL] = (1000.0 * total as f64 / t) as f32;
    b.ios[ALL] = total as u64;
    // MB/s
    let mut total = 0f32;
    for i in 0..IOT_NR {
        let delta = cur.sectors[i].wrapping_sub(prev.sectors[i]) as f32;
        b.bps[i] = (1000.0 * delta as f64 / 2048.0 / t) as f32;
        b.sts[i] = delta as u64;
        total += delta;
    }
    b.bps[ALL] = (1000.0 * total as f64 / 2048.0 / t) as f32;
    b.sts[ALL] = total as u64;
    // Q2C and D2C time deltas
    let mut total = 0f32;
    for i in 0..IOT_NR {
        let delta = cur.tms[i].wrapping_sub(prev.tms[i]) as f32;
        b.tms[i] = delta as u64;
        total += delta;
    }
    b.tms[ALL] = total as u64;
    let mut total = 0f32;
    for i in 0..IOT_NR {
        let delta = cur.dtms[i].wrapping_sub(prev.dtms[i]) as f32;
        b.dtms[i] = delta as u64;
        total += delta;
    }
    b.dtms[ALL] = total as u64;
    b
}

/// `100.0 * part / (float)device_total` (0 when the device total is 0).
fn share(part: u64, device_total: u64) -> f32 {
    let d = device_total as f32;
    if d > 0.0 {
        (100.0 * part as f64 / d as f64) as f32
    } else {
        0.0
    }
}

/// Interval metrics of one cgroup on one device, given its previous and current
/// counters and the root cgroup's (the device totals). `interval_ms` is the
/// tool's `-i` value: the tool divides by the nominal interval, not the measured one.
pub fn metrics(
    prev: &IotrackCounters,
    cur: &IotrackCounters,
    root_prev: &IotrackCounters,
    root_cur: &IotrackCounters,
    interval_ms: f64,
) -> CgMetrics {
    let t = interval_ms as f32;
    let b = base(prev, cur, t);
    let root = base(root_prev, root_cur, t);
    let mut m = CgMetrics {
        mean_us: cur.lat_mean as f32 as f64 / 1000.0,
        min_us: cur.shown_min() as f32 as f64 / 1000.0,
        max_us: cur.lat_max as f32 as f64 / 1000.0,
        delta_ios: b.ios,
        delta_sectors: b.sts,
        delta_tms: b.tms,
        delta_dtms: b.dtms,
        ..CgMetrics::default()
    };
    for i in 0..=ALL {
        m.iops[i] = b.iops[i] as f64;
        m.mbps[i] = b.bps[i] as f64;
        m.io_pct[i] = share(b.ios[i], root.ios[ALL]) as f64;
        m.byte_pct[i] = share(b.sts[i], root.sts[ALL]) as f64;
        m.tm_pct[i] = share(b.tms[i], root.tms[ALL]) as f64;
        m.dtm_pct[i] = share(b.dtms[i], root.dtms[ALL]) as f64;
        m.d2c_pct[i] = if b.tms[i] > 0 {
            (100.0 * b.dtms[i] as f64 / b.tms[i] as f64) as f32 as f64
        } else {
            0.0
        };
        let n = b.ios[i];
        m.ad2c_ms[i] = if n > 0 {
            (b.dtms[i] as f64 / 1_000_000.0 / n as f64) as f32 as f64
        } else {
            0.0
        };
        m.aq2c_ms[i] = if n > 0 {
            (b.tms[i] as f64 / 1_000_000.0 / n as f64) as f32 as f64
        } else {
            0.0
        };
    }
    let total_cgroup = b.ios[ALL] as f32;
    let pct = |x: f32| {
        if total_cgroup > 0.0 {
            (100.0 * x as f64 / total_cgroup as f64) as f32 as f64
        } else {
            0.0
        }
    };
    let mut total_hit = [0f32; LAT_BUCKET_NR];
    for i in 0..IOT_NR {
        for (j, th) in total_hit.iter_mut().enumerate() {
            let delta = cur.hit[i][j].wrapping_sub(prev.hit[i][j]) as f32;
            m.hit_pct[i][j] = pct(delta);
            *th += delta;
        }
    }
    for (out, &th) in m.hit_pct[ALL].iter_mut().zip(total_hit.iter()) {
        *out = pct(th);
    }
    m
}

/// The device line's metrics (`iostat_calc`) from two readings of the 11 fields.
pub fn dev_metrics(prev: &[u64; 11], cur: &[u64; 11], interval_ms: f64) -> DevMetrics {
    let t = interval_ms as f32;
    let d = |i: usize| cur[i].wrapping_sub(prev[i]);
    let delta_io_ticks = d(9) as f32;
    let delta_tiq = d(10) as f32;
    let rrqm = (1000u64.wrapping_mul(d(1))) as f32 / t;
    let wrqm = (1000u64.wrapping_mul(d(5))) as f32 / t;
    let t_r_ios = d(0) as f32;
    let r = (1000.0 * t_r_ios as f64 / t as f64) as f32;
    let t_w_ios = d(4) as f32;
    let w = (1000.0 * t_w_ios as f64 / t as f64) as f32;
    let t_r_sector = d(2) as f32;
    let rmb = (1000.0f32 * t_r_sector) / 2048.0f32 / t;
    let t_w_sector = d(6) as f32;
    let wmb = (1000.0f32 * t_w_sector) / 2048.0f32 / t;
    let avgrqkb = if r + w > 0.0 {
        (((t_r_sector + t_w_sector) as f64 / 2.0) / (r + w) as f64) as f32
    } else {
        0.0
    };
    let avgqu = d(10) as f32 / t;
    let t_r_ticks = d(3) as f32;
    let t_w_ticks = d(7) as f32;
    let await_ms = if t_r_ios + t_w_ios != 0.0 {
        (t_r_ticks + t_w_ticks) / (t_r_ios + t_w_ios)
    } else {
        0.0
    };
    let r_await = if t_r_ios != 0.0 {
        t_r_ticks / t_r_ios
    } else {
        0.0
    };
    let w_await = if t_w_ios != 0.0 {
        t_w_ticks / t_w_ios
    } else {
        0.0
    };
    let util = 100.0f32 * delta_io_ticks / t;
    let conc = if delta_io_ticks > 0.0 {
        delta_tiq / delta_io_ticks
    } else {
        0.0
    };
    DevMetrics {
        rrqm: rrqm as f64,
        wrqm: wrqm as f64,
        r: r as f64,
        w: w as f64,
        rmb: rmb as f64,
        wmb: wmb as f64,
        avgrqkb: avgrqkb as f64,
        avgqu: avgqu as f64,
        await_ms: await_ms as f64,
        r_await: r_await as f64,
        w_await: w_await as f64,
        util: util as f64,
        conc: conc as f64,
    }
}

/// `iostat_show_header`
pub fn device_header() -> String {
    let mut s = format!("{:<16} ", "Device");
    for h in [
        "rrqm/s", "wrqm/s", "r/s", "w/s", "rMB/s", "wMB/s", "avgrqkb", "avgqu-sz", "await",
        "r_await", "w_await", "svctm", "%util",
    ] {
        let _ = write!(s, "{h:<8} ");
    }
    s.push_str("conc    \n");
    s
}

/// `iostat_show`
pub fn device_row(name: &str, m: &DevMetrics) -> String {
    let mut s = format!("{name:<16} ");
    for v in [m.rrqm, m.wrqm, m.r, m.w] {
        let _ = write!(s, "{v:<8.0} ");
    }
    for v in [
        m.rmb, m.wmb, m.avgrqkb, m.avgqu, m.await_ms, m.r_await, m.w_await, 0.0, m.util,
    ] {
        let _ = write!(s, "{v:<8.2} ");
    }
    let _ = writeln!(s, "{:<8.2}", m.conc);
    s
}

/// The cgroup table's column groups: (basic header, extended headers, width).
const GROUPS: [(&str, [&str; 3], usize); 9] = [
    ("io/s", ["rio/s", "wio/s", "oio/s"], 8),
    ("MB/s", ["rMB/s", "wMB/s", "oMB/s"], 8),
    ("%io", ["%rio", "%wio", "%oio"], 6),
    ("%byte", ["%rMB", "%wMB", "%oMB"], 6),
    ("%tm", ["%rtm", "%wtm", "%otm"], 6),
    ("%dtm", ["%rdtm", "%wdtm", "%odtm"], 6),
    ("%d2c", ["%rd2c", "%wd2c", "%od2c"], 6),
    ("ad2c", ["rad2c", "wad2c", "oad2c"], 8),
    ("aq2c", ["raq2c", "waq2c", "oaq2c"], 8),
];

/// `block_cgroup_show_header`
pub fn cgroup_header(extended: bool) -> String {
    let mut s = format!("{:<16} ", "Device");
    if extended {
        for h in ["mean(us)", "min(us)", "max(us)"] {
            let _ = write!(s, "{h:<8} ");
        }
    }
    for (h, ext, w) in GROUPS {
        let _ = write!(s, "{h:<w$} ");
        if extended {
            for e in ext {
                let _ = write!(s, "{e:<w$} ");
            }
        }
    }
    for j in 0..LAT_BUCKET_NR {
        let _ = write!(s, "{:<6} ", format!("%hit{j}"));
    }
    if extended {
        for p in ["r", "w", "o"] {
            for j in 0..LAT_BUCKET_NR {
                let _ = write!(s, "{:<6} ", format!("%{p}hit{j}"));
            }
        }
    }
    s.push_str("cgroup\n");
    s
}

/// `block_gq_show_data`: one row; the cgroup path gets a leading '/' if missing.
pub fn cgroup_row(dev_name: &str, cgroup: &str, m: &CgMetrics, extended: bool) -> String {
    let mut s = format!("{dev_name:<16} ");
    if extended {
        for v in [m.mean_us, m.min_us, m.max_us] {
            let _ = write!(s, "{v:<8.2} ");
        }
    }
    let cols: [(&[f64; 4], usize, usize); 9] = [
        (&m.iops, 8, 0),
        (&m.mbps, 8, 2),
        (&m.io_pct, 6, 2),
        (&m.byte_pct, 6, 2),
        (&m.tm_pct, 6, 2),
        (&m.dtm_pct, 6, 2),
        (&m.d2c_pct, 6, 2),
        (&m.ad2c_ms, 8, 2),
        (&m.aq2c_ms, 8, 2),
    ];
    for (vals, w, p) in cols {
        let _ = write!(s, "{:<w$.p$} ", vals[ALL]);
        if extended {
            for v in &vals[..IOT_NR] {
                let _ = write!(s, "{v:<w$.p$} ");
            }
        }
    }
    for v in &m.hit_pct[ALL] {
        let _ = write!(s, "{v:<6.2} ");
    }
    if extended {
        for row in &m.hit_pct[..IOT_NR] {
            for v in row {
                let _ = write!(s, "{v:<6.2} ");
            }
        }
    }
    if !cgroup.starts_with('/') {
        s.push('/');
    }
    s.push_str(cgroup);
    s.push('\n');
    s
}

fn find<'a>(s: &'a Sample, name: &str) -> Option<&'a IotrackCounters> {
    s.cgroups.iter().find(|(n, _)| n == name).map(|(_, c)| c)
}

fn root_of(s: &Sample) -> Option<&IotrackCounters> {
    find(s, "/").or_else(|| find(s, ""))
}

/// One interval block as the tool prints it (to stderr): `Time:` line, device
/// header and one line per device, a blank line, the cgroup header, one row per
/// cgroup and device (cgroup-major, root first), a blank line.
///
/// `cur[i]` and `prev[i]` are readings of the same device (matched by name;
/// a device missing from `prev` counts from zero). A cgroup missing from a
/// device's sample is shown with zero counters, as the tool's zeroed memory
/// would; the extended min then reads 0, whereas a present blkg without
/// samples shows the kernel's 2^64-1.
pub fn format_interval(
    prev: &[Sample],
    cur: &[Sample],
    interval_ms: f64,
    extended: bool,
    time_str: &str,
) -> String {
    let zero = IotrackCounters::default();
    let prev_of = |i: usize, c: &Sample| -> Option<&Sample> {
        match prev.get(i) {
            Some(p) if p.dev_name == c.dev_name => Some(p),
            _ => prev.iter().find(|p| p.dev_name == c.dev_name),
        }
    };
    let mut out = format!("Time: {time_str}\n");
    out.push_str(&device_header());
    for (i, c) in cur.iter().enumerate() {
        let p = prev_of(i, c).map(|p| p.dev).unwrap_or([0; 11]);
        out.push_str(&device_row(
            &c.dev_name,
            &dev_metrics(&p, &c.dev, interval_ms),
        ));
    }
    out.push('\n');
    out.push_str(&cgroup_header(extended));
    // Cgroups in order of first appearance, root first.
    let mut names: Vec<&str> = vec!["/"];
    for c in cur {
        for (n, _) in &c.cgroups {
            let n = if n.is_empty() { "/" } else { n.as_str() };
            if !names.contains(&n) {
                names.push(n);
            }
        }
    }
    for name in names {
        for (i, c) in cur.iter().enumerate() {
            let p = prev_of(i, c);
            let (root_cur, root_prev) = (
                root_of(c).unwrap_or(&zero),
                p.and_then(root_of).unwrap_or(&zero),
            );
            let (cg_cur, cg_prev) = if name == "/" {
                (root_cur, root_prev)
            } else {
                (
                    find(c, name).unwrap_or(&zero),
                    p.and_then(|p| find(p, name)).unwrap_or(&zero),
                )
            };
            let mut m = metrics(cg_prev, cg_cur, root_prev, root_cur, interval_ms);
            if std::ptr::eq(cg_cur, &zero) {
                m.min_us = 0.0;
            }
            out.push_str(&cgroup_row(&c.dev_name, name, &m, extended));
        }
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests;
