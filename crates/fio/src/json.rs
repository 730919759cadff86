//! fio's JSON output (`--output-format=json` / `json+`), byte for byte in
//! fio 3.33's layout (fio `stat.c`: `show_thread_status_json`,
//! `add_ddir_status_json`, `add_ddir_lat_json`, `__show_run_stats`; `json.c`:
//! the printer).
//!
//! Layout rules of fio's printer: `"key" : value`, two spaces of indentation
//! per nesting level, `{`/`[` followed by a newline, members separated by
//! `",\n"`, integers as `%lld`, floats as `%f`. Strings escape only `\` and `"`,
//! and a pair whose string value is empty is dropped (so a bare option such as
//! `time_based` does not appear in `"job options"`).

use crate::cfmt::json_f;
use crate::options::UnifiedRw;
use crate::report::{
    active_percentiles, bw_agg_percent, calc_dist, calc_lat, effective_dirs, group_run_stats,
    GroupRunStats, Report,
};
use crate::stats::{DirStats, LatStat};

/// A JSON value as fio builds it.
#[derive(Clone, Debug)]
pub enum JVal {
    Str(String),
    Int(i64),
    Float(f64),
    Obj(JObj),
    Arr(Vec<JVal>),
}

/// An ordered JSON object.
#[derive(Clone, Debug, Default)]
pub struct JObj(pub Vec<(String, JVal)>);

impl JObj {
    pub fn new() -> JObj {
        JObj(Vec::new())
    }
    /// fio's `json_object_add_value_string`: an empty string adds nothing.
    pub fn str(&mut self, k: &str, v: &str) {
        if !v.is_empty() {
            self.0.push((k.to_string(), JVal::Str(v.to_string())));
        }
    }
    /// Integers are `long long` in fio; larger u64 values wrap as they would.
    pub fn int(&mut self, k: &str, v: u64) {
        self.0.push((k.to_string(), JVal::Int(v as i64)));
    }
    pub fn float(&mut self, k: &str, v: f64) {
        self.0.push((k.to_string(), JVal::Float(v)));
    }
    pub fn obj(&mut self, k: &str, v: JObj) {
        self.0.push((k.to_string(), JVal::Obj(v)));
    }
    pub fn arr(&mut self, k: &str, v: Vec<JVal>) {
        self.0.push((k.to_string(), JVal::Arr(v)));
    }
    pub fn get(&self, k: &str) -> Option<&JVal> {
        self.0.iter().find(|(n, _)| n == k).map(|(_, v)| v)
    }
}

fn indent(level: usize, out: &mut String) {
    for _ in 0..level {
        out.push_str("  ");
    }
}

fn escape(s: &str, out: &mut String) {
    for c in s.chars() {
        if c == '\\' || c == '"' {
            out.push('\\');
        }
        out.push(c);
    }
}

fn print_value(v: &JVal, level: usize, out: &mut String) {
    match v {
        JVal::Str(s) => {
            out.push('"');
            escape(s, out);
            out.push('"');
        }
        JVal::Int(i) => out.push_str(&i.to_string()),
        JVal::Float(f) => out.push_str(&json_f(*f)),
        JVal::Obj(o) => print_object(o, level, out),
        JVal::Arr(a) => {
            out.push_str("[\n");
            for (i, e) in a.iter().enumerate() {
                if i > 0 {
                    out.push_str(",\n");
                }
                indent(level + 1, out);
                print_value(e, level + 1, out);
            }
            out.push('\n');
            indent(level, out);
            out.push(']');
        }
    }
}

/// fio's `json_print_object` for an object at nesting `level`.
pub fn print_object(o: &JObj, level: usize, out: &mut String) {
    out.push_str("{\n");
    for (i, (k, v)) in o.0.iter().enumerate() {
        if i > 0 {
            out.push_str(",\n");
        }
        indent(level + 1, out);
        out.push('"');
        out.push_str(k);
        out.push_str("\" : ");
        print_value(v, level + 1, out);
    }
    out.push('\n');
    indent(level, out);
    out.push('}');
}

/// fio's `add_ddir_lat_json`.
fn lat_json(ls: &LatStat, percentiles: bool, plist: &[f64], json_plus: bool) -> JObj {
    let mut o = JObj::new();
    let st = &ls.stat;
    if st.samples == 0 {
        o.int("min", 0);
        o.int("max", 0);
        o.float("mean", 0.0);
        o.float("stddev", 0.0);
    } else {
        o.int("min", st.min);
        o.int("max", st.max);
        o.float("mean", st.mean);
        o.float("stddev", st.stddev());
    }
    o.int("N", st.samples);
    if percentiles && st.samples > 0 {
        let mut p = JObj::new();
        for (pct, v) in ls.hist.percentiles(plist) {
            p.int(&json_f(pct), v);
        }
        o.obj("percentile", p);
        if json_plus {
            let mut b = JObj::new();
            for (val, cnt) in ls.hist.bins() {
                b.int(&val.to_string(), cnt);
            }
            o.obj("bins", b);
        }
    }
    o
}

/// fio's `add_ddir_status_json` for a read/write/trim/mixed object.
fn dir_json(
    ds: &DirStats,
    rs: &GroupRunStats,
    agg_ddir: usize,
    r: &crate::report::JobReport,
    json_plus: bool,
) -> JObj {
    let spec = r.spec;
    let plist = active_percentiles(spec);
    let mut o = JObj::new();
    let (bw_bytes, bw, iops) = match (ds.io_bytes * 1000).checked_div(ds.runtime_ms) {
        Some(b) => (
            b,
            b / 1024,
            1000.0 * ds.total_ios as f64 / ds.runtime_ms as f64,
        ),
        None => (0, 0, 0.0),
    };
    o.int("io_bytes", ds.io_bytes);
    o.int("io_kbytes", ds.io_bytes >> 10);
    o.int("bw_bytes", bw_bytes);
    o.int("bw", bw);
    o.float("iops", iops);
    o.int("runtime", ds.runtime_ms);
    o.int("total_ios", ds.total_ios);
    o.int("short_ios", ds.short_ios);
    o.int("drop_ios", ds.drop_ios);
    o.obj(
        "slat_ns",
        lat_json(&ds.slat, spec.slat_percentiles, &plist, json_plus),
    );
    o.obj(
        "clat_ns",
        lat_json(&ds.clat, spec.clat_percentiles, &plist, json_plus),
    );
    o.obj(
        "lat_ns",
        lat_json(&ds.lat, spec.lat_percentiles, &plist, json_plus),
    );

    let b = &ds.bw;
    if b.samples > 0 {
        o.int("bw_min", b.min);
        o.int("bw_max", b.max);
        o.float("bw_agg", bw_agg_percent(rs, agg_ddir, b.mean));
        o.float("bw_mean", b.mean);
        o.float("bw_dev", b.stddev());
    } else {
        o.int("bw_min", 0);
        o.int("bw_max", 0);
        o.float("bw_agg", 0.0);
        o.float("bw_mean", 0.0);
        o.float("bw_dev", 0.0);
    }
    o.int("bw_samples", b.samples);
    let i = &ds.iops;
    if i.samples > 0 {
        o.int("iops_min", i.min);
        o.int("iops_max", i.max);
        o.float("iops_mean", i.mean);
        o.float("iops_stddev", i.stddev());
    } else {
        o.int("iops_min", 0);
        o.int("iops_max", 0);
        o.float("iops_mean", 0.0);
        o.float("iops_stddev", 0.0);
    }
    o.int("iops_samples", i.samples);
    o
}

/// One `jobs[]` entry (fio's `show_thread_status_json`).
pub fn job_json(r: &crate::report::JobReport, rs: &GroupRunStats, json_plus: bool) -> JObj {
    let spec = r.spec;
    let st = r.stats;
    let unified = spec.unified_rw_reporting;
    let mut root = JObj::new();
    let name = if st.name.is_empty() {
        spec.name.as_str()
    } else {
        st.name.as_str()
    };
    root.str("jobname", name);
    root.int("groupid", st.groupid as u64);
    root.int("error", 0);
    root.int("eta", 0);
    root.int("elapsed", st.elapsed_s);
    if !spec.raw_options.is_empty() {
        let mut jo = JObj::new();
        for (k, v) in &spec.raw_options {
            jo.str(k, v);
        }
        root.obj("job options", jo);
    }

    let dirs = effective_dirs(st, unified);
    const NAMES: [&str; 3] = ["read", "write", "trim"];
    for (d, ds) in dirs.iter().enumerate() {
        if unified == UnifiedRw::Mixed && d != 0 {
            continue;
        }
        let key = if unified == UnifiedRw::Mixed {
            "mixed"
        } else {
            NAMES[d]
        };
        root.obj(key, dir_json(ds, rs, d, r, json_plus));
    }
    if unified != UnifiedRw::Mixed {
        let mut s = JObj::new();
        s.int("total_ios", st.sync_total_ios);
        s.obj("lat_ns", lat_json(&LatStat::default(), false, &[], false));
        root.obj("sync", s);
    }
    if unified == UnifiedRw::Both {
        // fio compares the mixed bandwidth with the group's *read* aggregate.
        let m = st.mixed();
        root.obj("mixed", dir_json(&m, rs, 0, r, json_plus));
    }

    root.int("job_runtime", st.job_runtime_ms);
    let (usr_cpu, sys_cpu) = st.cpu_pct();
    root.float("usr_cpu", usr_cpu);
    root.float("sys_cpu", sys_cpu);
    root.int("ctx", st.ctx);
    root.int("majf", 0);
    root.int("minf", 0);

    let total: u64 = dirs.iter().map(|d| d.total_ios).sum();
    let dist = |map: &[u64], tot: u64, keys: &[&str]| {
        let mut o = JObj::new();
        for (k, v) in keys.iter().zip(calc_dist(map, tot)) {
            o.float(k, v);
        }
        o
    };
    root.obj(
        "iodepth_level",
        dist(
            &st.iodepth_level,
            total,
            &["1", "2", "4", "8", "16", "32", ">=64"],
        ),
    );
    let bkeys = ["0", "4", "8", "16", "32", "64", ">=64"];
    root.obj(
        "iodepth_submit",
        dist(&st.iodepth_submit, st.total_submit, &bkeys),
    );
    root.obj(
        "iodepth_complete",
        dist(&st.iodepth_complete, st.total_complete, &bkeys),
    );
    let lat = |map: &[u64], keys: &[&str]| {
        let mut o = JObj::new();
        for (k, v) in keys.iter().zip(calc_lat(map, total)) {
            o.float(k, v);
        }
        o
    };
    let nkeys = [
        "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000",
    ];
    root.obj("latency_ns", lat(&st.lat_ns, &nkeys));
    root.obj("latency_us", lat(&st.lat_us, &nkeys));
    root.obj(
        "latency_ms",
        lat(
            &st.lat_ms,
            &[
                "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000",
            ],
        ),
    );
    // fio's latency target is unset, so the depth is the job's iodepth.
    root.int("latency_depth", spec.iodepth as u64);
    root.int("latency_target", 0);
    root.float("latency_percentile", 100.0);
    root.int("latency_window", 0);
    if let Some(d) = &spec.description {
        root.str("desc", d);
    }
    root
}

/// The whole JSON document as a tree.
pub fn report_json(r: &Report) -> JObj {
    let groups = group_run_stats(&r.jobs);
    let mut root = JObj::new();
    root.str("fio version", r.fio_version);
    root.int("timestamp", r.timestamp_s);
    root.int("timestamp_ms", r.timestamp_ms);
    root.str("time", r.time_str);
    if !r.global_options.is_empty() {
        let mut g = JObj::new();
        for (k, v) in r.global_options {
            g.str(k, v);
        }
        root.obj("global options", g);
    }
    let jobs: Vec<JVal> = r
        .jobs
        .iter()
        .map(|j| JVal::Obj(job_json(j, &groups[j.stats.groupid as usize], r.json_plus)))
        .collect();
    root.arr("jobs", jobs);
    if !r.disk_util.is_empty() {
        let arr = r
            .disk_util
            .iter()
            .map(|d| {
                let mut o = JObj::new();
                o.str("name", &d.name);
                o.int("read_ios", d.read_ios);
                o.int("write_ios", d.write_ios);
                o.int("read_merges", d.read_merges);
                o.int("write_merges", d.write_merges);
                o.int("read_ticks", d.read_ticks);
                o.int("write_ticks", d.write_ticks);
                o.int("in_queue", d.in_queue);
                o.float("util", d.util());
                JVal::Obj(o)
            })
            .collect();
        root.arr("disk_util", arr);
    }
    root
}

/// fio's JSON output for the report, ending with a newline.
pub fn write_json(r: &Report) -> String {
    let mut out = String::new();
    print_object(&report_json(r), 0, &mut out);
    out.push('\n');
    out
}

#[cfg(test)]
#[path = "json_tests.rs"]
mod tests;
