//! The tables of `--timeseries`: names, columns and units. docs/report.md
//! is written from this list; a test keeps the two in step.

/// One column: its name (which carries the unit) and what it holds.
#[derive(Clone, Copy, Debug)]
pub struct ColumnSpec {
    pub name: &'static str,
    pub doc: &'static str,
}

/// One table (one CSV file, `NAME.csv`).
#[derive(Clone, Copy, Debug)]
pub struct TableSpec {
    pub name: &'static str,
    pub doc: &'static str,
    pub columns: &'static [ColumnSpec],
}

const fn c(name: &'static str, doc: &'static str) -> ColumnSpec {
    ColumnSpec { name, doc }
}

pub const IOCOST_PERIOD: usize = 0;
pub const IOCOST_CGROUP: usize = 1;
pub const THROTTLE: usize = 2;
pub const DEVICE: usize = 3;
pub const CGROUP_IO: usize = 4;
pub const LATENCY_CDF: usize = 5;
pub const IOTRACK: usize = 6;

/// Every table, indexed by the constants above.
pub const TABLES: &[TableSpec] = &[
    TableSpec {
        name: "iocost_period",
        doc: "one row per blk-iocost period per device (what iocost_monitor.py prints for the device)",
        columns: &[
            c("time_s", "end of the period (the timer's run), seconds since the start"),
            c("device", "device name"),
            c("period", "the period's number (ioc->cur_period)"),
            c("period_us", "the period's length, µs"),
            c("vrate_pct", "vtime_base_rate after this period's adjustment, % of nominal"),
            c("busy_level", "ioc->busy_level after this period"),
            c("missed_ppm_read", "reads that missed the rlat target, parts per million"),
            c("missed_ppm_write", "writes that missed the wlat target, parts per million"),
            c("rq_wait_pct", "time spent waiting for a request, % of the period"),
            c("nr_lagging", "iocgs with I/O in flight for more than a period"),
            c("nr_shortages", "iocgs short of budget"),
            c("nr_active", "active iocgs"),
            c("nr_done", "I/Os completed during the period"),
            c("usage_us", "device time used by all iocgs during the period, µs"),
        ],
    },
    TableSpec {
        name: "iocost_cgroup",
        doc: "one row per active iocg per period (iocost_monitor.py's cgroup rows)",
        columns: &[
            c("time_s", "end of the period, seconds"),
            c("device", "device name"),
            c("cgroup", "cgroup path"),
            c("period", "the period's number"),
            c("weight_active", "active weight (io.weight units, 1..10000)"),
            c("weight_inuse", "inuse weight (io.weight units)"),
            c("hweight_active_pct", "hierarchical active weight, % of the device"),
            c("hweight_inuse_pct", "hierarchical inuse weight, % of the device"),
            c("usage_pct", "device time used during the period, % of the period"),
            c("debt_ms", "absolute vtime debt, ms of device time"),
            c("delay_ms", "blkcg delay charged to the cgroup's tasks, ms"),
        ],
    },
    TableSpec {
        name: "throttle",
        doc: "one row per interval per (device, cgroup) that blk-throttle held bios of",
        columns: &[
            c("time_s", "end of the interval, seconds"),
            c("device", "device name"),
            c("cgroup", "cgroup path (of the bio)"),
            c("queued_bios", "bios held by blk-throttle at the end of the interval"),
            c("throttled_bios", "bios blk-throttle queued during the interval"),
            c("dispatched_bios", "bios blk-throttle let go during the interval"),
            c("wait_avg_ms", "mean time in the throttle of the bios dispatched, ms"),
            c("wait_max_ms", "longest time in the throttle of the bios dispatched, ms"),
        ],
    },
    TableSpec {
        name: "device",
        doc: "one row per interval per device",
        columns: &[
            c("time_s", "end of the interval, seconds"),
            c("device", "device name"),
            c("util_pct", "time with at least one request at the device, % of the interval"),
            c("in_flight_avg", "time-weighted mean of requests at the device"),
            c("in_flight_max", "most requests at the device at once"),
            c("queue_depth", "the device's queue depth (requests it accepts at once)"),
        ],
    },
    TableSpec {
        name: "cgroup_io",
        doc: "one row per interval per (cgroup, direction) with fio completions",
        columns: &[
            c("time_s", "end of the interval, seconds"),
            c("cgroup", "cgroup path of the jobs"),
            c("ddir", "read or write"),
            c("ios", "I/Os completed (reaped by fio) in the interval"),
            c("iops", "I/Os per second over the interval"),
            c("bw_mib_s", "MiB per second over the interval"),
            c("clat_mean_us", "mean completion latency, µs"),
            c("clat_p50_us", "median completion latency (fio's histogram), µs"),
            c("clat_p90_us", "90th percentile completion latency, µs"),
            c("clat_p99_us", "99th percentile completion latency, µs"),
            c("clat_max_us", "largest completion latency, µs"),
        ],
    },
    TableSpec {
        name: "latency_cdf",
        doc: "whole-run distribution of completion latency per (cgroup, direction), one row per non-empty histogram bin",
        columns: &[
            c("cgroup", "cgroup path of the jobs"),
            c("ddir", "read or write"),
            c("clat_us", "the bin's value (fio's histogram), µs"),
            c("fraction", "share of I/Os with a latency up to this bin, 0..1"),
        ],
    },
    TableSpec {
        name: "iotrack",
        doc: "one row per interval per (device, cgroup) the iotrack tool monitors (the devices and cgroups with jobs, and the root): the tool's interval figures, all directions together",
        columns: &[
            c("time_s", "end of the interval, seconds"),
            c("device", "device name"),
            c("cgroup", "cgroup path (`/` is the root: the device's totals)"),
            c("ios", "I/Os the cgroup completed on the device in the interval (blk-iotrack, every direction)"),
            c("iops", "I/Os per second over the interval"),
            c("mib_s", "MiB per second over the interval"),
            c("io_pct", "%io: share of the device's I/Os"),
            c("byte_pct", "%byte: share of the device's bytes"),
            c("tm_pct", "%tm: share of the device's summed Q2C time"),
            c("dtm_pct", "%dtm: share of the device's summed D2C time (device time)"),
            c("d2c_pct", "%d2c: the cgroup's D2C time as a share of its Q2C time"),
            c("aq2c_ms", "mean Q2C (queue to completion) latency, ms"),
            c("ad2c_ms", "mean D2C (driver to completion) latency, ms"),
            c("hit0_pct", "%hit0: share of the cgroup's I/Os with Q2C below threshold 0 of io.iotrack.lat_thresh (default 50 µs)"),
            c("hit1_pct", "%hit1: below threshold 1 (default 100 µs)"),
            c("hit2_pct", "%hit2: below threshold 2 (default 200 µs)"),
            c("hit3_pct", "%hit3: below threshold 3 (default 400 µs)"),
            c("hit4_pct", "%hit4: below threshold 4 (default 1 ms)"),
            c("hit5_pct", "%hit5: below threshold 5 (default 2 ms)"),
            c("hit6_pct", "%hit6: below threshold 6 (default 4 ms)"),
            c("hit7_pct", "%hit7: below threshold 7 (default 8 ms)"),
        ],
    },
];
