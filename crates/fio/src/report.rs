//! What the writers print, and fio's grouping of jobs into reported entries
//! (fio `stat.c`: `__show_run_stats`, `sum_thread_stats`, the group run
//! statistics `struct group_run_stats`).

use crate::options::{JobSpec, UnifiedRw};
use crate::stats::{DirStats, JobStats};

/// Everything fio prints at the end of a run.
#[derive(Clone, Debug)]
pub struct Report<'a> {
    /// `"fio version"` and the version line of the text output (blklab uses
    /// `"fio-3.33-blklab"`).
    pub fio_version: &'a str,
    /// `"timestamp"` (seconds since the epoch).
    pub timestamp_s: u64,
    /// `"timestamp_ms"`.
    pub timestamp_ms: u64,
    /// `ctime()` text without the trailing newline, e.g. `"Tue Apr  7 10:00:00 2026"`.
    pub time_str: &'a str,
    /// The `[global]` options as written (`"global options"`, omitted when empty).
    pub global_options: &'a [(String, String)],
    /// The reported entries in fio's order (see [`group_jobs`]).
    pub jobs: Vec<JobReport<'a>>,
    /// `"disk_util"` / "Disk stats (read/write):" (omitted when empty).
    pub disk_util: Vec<DiskUtil>,
    /// `--output-format=json+`: add the latency histogram `"bins"`.
    pub json_plus: bool,
}

/// One reported entry: a job, or a group of jobs merged by `group_reporting`.
#[derive(Clone, Copy, Debug)]
pub struct JobReport<'a> {
    /// The (first) job's options: name, "job options", percentile and
    /// unified_rw_reporting settings, iodepth.
    pub spec: &'a JobSpec,
    /// Statistics, already merged over the group (see [`group_jobs`]); its
    /// `groupid` selects the run-status group.
    pub stats: &'a JobStats,
    /// The pid printed in the text header line.
    pub pid: u32,
}

/// Host disk statistics over the run, as fio reads them from /proc/diskstats.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DiskUtil {
    pub name: String,
    pub read_ios: u64,
    pub write_ios: u64,
    pub read_merges: u64,
    pub write_merges: u64,
    /// ms
    pub read_ticks: u64,
    /// ms
    pub write_ticks: u64,
    /// ms (time_in_queue)
    pub in_queue: u64,
    /// ms with at least one request in flight.
    pub io_ticks: u64,
    /// Length of the observation, ms.
    pub msec: u64,
}

impl DiskUtil {
    /// fio: 100·io_ticks/msec, capped at 100.
    pub fn util(&self) -> f64 {
        if self.msec == 0 {
            return 0.0;
        }
        let u = 100.0 * self.io_ticks as f64 / self.msec as f64;
        u.min(100.0)
    }
}

/// fio's `sum_thread_stats` of one job into a reported entry. With
/// `unified_rw_reporting=mixed` every direction is folded into the read slot
/// in fio's order (read, write, trim of each job in turn), so the merged
/// floating-point means match fio's to the last digit.
fn sum_into(dst: &mut JobStats, src: &JobStats, unified: UnifiedRw) {
    for l in 0..3 {
        if unified == UnifiedRw::Mixed {
            let s = &src.dirs[l];
            dst.dirs[0].merge_job(s);
        } else {
            dst.dirs[l].merge_job(&src.dirs[l]);
        }
    }
    dst.nr_jobs += src.nr_jobs.max(1);
    dst.sync_total_ios += src.sync_total_ios;
    for i in 0..7 {
        dst.iodepth_level[i] += src.iodepth_level[i];
        dst.iodepth_submit[i] += src.iodepth_submit[i];
        dst.iodepth_complete[i] += src.iodepth_complete[i];
    }
    dst.total_submit += src.total_submit;
    dst.total_complete += src.total_complete;
    for i in 0..10 {
        dst.lat_ns[i] += src.lat_ns[i];
        dst.lat_us[i] += src.lat_us[i];
    }
    for i in 0..12 {
        dst.lat_ms[i] += src.lat_ms[i];
    }
    dst.job_runtime_ms += src.job_runtime_ms;
    dst.elapsed_s = dst.elapsed_s.max(src.elapsed_s);
    dst.add_cpu(src);
}

/// fio's reporting entries (`__show_run_stats`): walk the jobs (every
/// `numjobs` clone, in fio's order, each with its `groupid` in its stats); a
/// job joins the previous entry when it has `group_reporting` and the same
/// group id, otherwise it starts a new entry. Returns, per entry, the index of
/// its first job (whose spec names it) and the merged statistics.
pub fn group_jobs(jobs: &[(&JobSpec, &JobStats)]) -> Vec<(usize, JobStats)> {
    let mut out: Vec<(usize, JobStats, UnifiedRw)> = Vec::new();
    let mut last_gid: Option<u32> = None;
    for (i, (spec, st)) in jobs.iter().enumerate() {
        let join = !out.is_empty() && spec.group_reporting && last_gid == Some(st.groupid);
        if !join {
            let name = if st.name.is_empty() {
                spec.name.clone()
            } else {
                st.name.clone()
            };
            let first = JobStats {
                name,
                groupid: st.groupid,
                ..Default::default()
            };
            out.push((i, first, spec.unified_rw_reporting));
        }
        let (_, dst, unified) = out.last_mut().expect("entry just pushed");
        let u = *unified;
        sum_into(dst, st, u);
        last_gid = Some(st.groupid);
    }
    out.into_iter().map(|(i, s, _)| (i, s)).collect()
}

/// The directions fio reports for an entry: with `mixed`, all directions
/// folded into the first slot (fio folds them when summing the entry).
pub fn effective_dirs(stats: &JobStats, unified: UnifiedRw) -> [DirStats; 3] {
    if unified == UnifiedRw::Mixed {
        [stats.mixed(), DirStats::default(), DirStats::default()]
    } else {
        stats.dirs.clone()
    }
}

pub(crate) fn unified_bits(u: UnifiedRw) -> u8 {
    match u {
        UnifiedRw::None => 0,
        UnifiedRw::Mixed => 1,
        UnifiedRw::Both => 2,
    }
}

/// fio's `struct group_run_stats` for one reporting group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupRunStats {
    pub groupid: u32,
    pub max_run: [u64; 3],
    pub min_run: [u64; 3],
    pub max_bw: [u64; 3],
    pub min_bw: [u64; 3],
    pub iobytes: [u64; 3],
    /// Aggregate bandwidth, bytes/s: iobytes·1000 / max_run.
    pub agg: [u64; 3],
    pub kb_base: u32,
    /// OR of the members' unified_rw_reporting (0 none, 1 mixed, 2 both), as fio keeps it.
    pub unified: u8,
}

/// The run-status groups 0..=max groupid, from the reported entries.
pub fn group_run_stats(jobs: &[JobReport]) -> Vec<GroupRunStats> {
    let n = jobs
        .iter()
        .map(|j| j.stats.groupid as usize + 1)
        .max()
        .unwrap_or(0);
    let mut gs: Vec<GroupRunStats> = (0..n)
        .map(|g| GroupRunStats {
            groupid: g as u32,
            max_run: [0; 3],
            min_run: [u64::MAX; 3],
            max_bw: [0; 3],
            min_bw: [u64::MAX; 3],
            iobytes: [0; 3],
            agg: [0; 3],
            kb_base: 1024,
            unified: 0,
        })
        .collect();
    for j in jobs {
        let rs = &mut gs[j.stats.groupid as usize];
        rs.kb_base = j.spec.kb_base;
        rs.unified |= unified_bits(j.spec.unified_rw_reporting);
        let dirs = effective_dirs(j.stats, j.spec.unified_rw_reporting);
        for (d, ds) in dirs.iter().enumerate() {
            let rt = ds.runtime_ms;
            if rt == 0 {
                continue;
            }
            if rt < rs.min_run[d] || rs.min_run[d] == 0 {
                rs.min_run[d] = rt;
            }
            if rt > rs.max_run[d] {
                rs.max_run[d] = rt;
            }
            let bw = ds.io_bytes * 1000 / rt;
            if bw < rs.min_bw[d] {
                rs.min_bw[d] = bw;
            }
            if bw > rs.max_bw[d] {
                rs.max_bw[d] = bw;
            }
            rs.iobytes[d] += ds.io_bytes;
        }
    }
    for rs in gs.iter_mut() {
        for d in 0..3 {
            if let Some(agg) = (rs.iobytes[d] * 1000).checked_div(rs.max_run[d]) {
                rs.agg[d] = agg;
            }
        }
    }
    gs
}

/// fio's `convert_agg_kbytes_percent`: a member's mean bandwidth (KiB/s, which
/// fio passes as an `int`, truncating it) as a percentage of the group's
/// aggregate, at most 100; 100 when the aggregate is at most 1 KiB/s.
pub fn bw_agg_percent(rs: &GroupRunStats, ddir: usize, mean_kib: f64) -> f64 {
    let agg = rs.agg[ddir];
    if agg <= 1024 {
        return 100.0;
    }
    let m = mean_kib as i32;
    let p = m as f64 * 100.0 / (agg as f64 / 1024.0);
    p.min(100.0)
}

/// Percentages of a distribution (fio `stat_calc_dist`): a non-zero share
/// below 0.1 shows as 0.1.
pub fn calc_dist(map: &[u64], total: u64) -> Vec<f64> {
    map.iter()
        .map(|&m| {
            if total == 0 {
                return 0.0;
            }
            let v = m as f64 / total as f64 * 100.0;
            if v < 0.1 && m > 0 {
                0.1
            } else {
                v
            }
        })
        .collect()
}

/// Latency distribution percentages (fio `stat_calc_lat`): a non-zero share
/// below 0.01 shows as 0.01.
pub fn calc_lat(map: &[u64], total: u64) -> Vec<f64> {
    map.iter()
        .map(|&m| {
            if total == 0 {
                return 0.0;
            }
            let v = m as f64 / total as f64 * 100.0;
            if v < 0.01 && m > 0 {
                0.01
            } else {
                v
            }
        })
        .collect()
}

/// The percentile list fio evaluates: the configured values up to the first 0
/// (fio ends the list at a zero entry).
pub fn active_percentiles(spec: &JobSpec) -> Vec<f64> {
    spec.percentile_list
        .iter()
        .copied()
        .take_while(|&p| p != 0.0)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::JobSpec;

    fn job(groupid: u32, bytes: u64, rt: u64, clat: &[u64]) -> JobStats {
        let mut s = JobStats {
            name: "j".into(),
            groupid,
            nr_jobs: 1,
            ..Default::default()
        };
        s.dirs[0].io_bytes = bytes;
        s.dirs[0].total_ios = clat.len() as u64;
        s.dirs[0].runtime_ms = rt;
        for &c in clat {
            s.dirs[0].clat.add(c);
        }
        s.job_runtime_ms = rt;
        s
    }

    #[test]
    fn grouping_follows_group_reporting_and_groupid() {
        let mut gr = JobSpec::new("a");
        gr.group_reporting = true;
        let plain = JobSpec::new("b");
        let (s1, s2, s3, s4) = (
            job(0, 100, 10, &[1, 2]),
            job(0, 300, 20, &[3]),
            job(1, 5, 1, &[9]),
            job(1, 5, 1, &[9]),
        );
        let input = [(&gr, &s1), (&gr, &s2), (&gr, &s3), (&plain, &s4)];
        let g = group_jobs(&input);
        assert_eq!(g.len(), 3);
        assert_eq!(g[0].0, 0);
        assert_eq!(g[0].1.nr_jobs, 2);
        assert_eq!(g[0].1.dirs[0].io_bytes, 400);
        assert_eq!(g[0].1.dirs[0].runtime_ms, 20);
        assert_eq!(g[0].1.dirs[0].clat.stat.samples, 3);
        assert_eq!(g[0].1.job_runtime_ms, 30);
        assert_eq!(g[1].0, 2);
        assert_eq!(g[2].0, 3);
    }

    #[test]
    fn mixed_folds_directions_in_fio_order() {
        let mut spec = JobSpec::new("m");
        spec.group_reporting = true;
        spec.unified_rw_reporting = UnifiedRw::Mixed;
        let mut a = job(0, 100, 10, &[10, 20]);
        a.dirs[1].io_bytes = 50;
        a.dirs[1].runtime_ms = 12;
        a.dirs[1].clat.add(30);
        let g = group_jobs(&[(&spec, &a)]);
        let d = &g[0].1.dirs[0];
        assert_eq!(d.io_bytes, 150);
        assert_eq!(d.runtime_ms, 12);
        assert_eq!(d.clat.stat.samples, 3);
        assert!((d.clat.stat.mean - 20.0).abs() < 1e-12);
        assert_eq!(g[0].1.dirs[1].io_bytes, 0);
        // folding again (as the writers do) changes nothing
        let e = effective_dirs(&g[0].1, UnifiedRw::Mixed);
        assert_eq!(e[0].clat.stat, d.clat.stat);
    }

    #[test]
    fn run_stats_and_bw_agg() {
        let spec = JobSpec::new("x");
        let s1 = job(0, 1_000_000, 1000, &[1]);
        let s2 = job(0, 3_000_000, 2000, &[1]);
        let jobs = [
            JobReport {
                spec: &spec,
                stats: &s1,
                pid: 1,
            },
            JobReport {
                spec: &spec,
                stats: &s2,
                pid: 2,
            },
        ];
        let rs = group_run_stats(&jobs);
        assert_eq!(rs.len(), 1);
        assert_eq!(rs[0].max_run[0], 2000);
        assert_eq!(rs[0].min_run[0], 1000);
        assert_eq!(rs[0].min_bw[0], 1_000_000);
        assert_eq!(rs[0].max_bw[0], 1_500_000);
        assert_eq!(rs[0].agg[0], 2_000_000);
        // 976.5 KiB/s (truncated to 976 as fio's int parameter) of 1953.125 KiB/s
        let p = bw_agg_percent(&rs[0], 0, 976.9);
        assert!((p - 976.0 * 100.0 / 1953.125).abs() < 1e-9);
        assert_eq!(bw_agg_percent(&rs[0], 1, 5.0), 100.0);
    }

    #[test]
    fn dist_minimums() {
        assert_eq!(calc_dist(&[1, 9999, 0], 10000), vec![0.1, 99.99, 0.0]);
        let l = calc_lat(&[1, 99999], 100000);
        assert_eq!(l[0], 0.01);
        assert!((l[1] - 99.999).abs() < 1e-9);
        assert_eq!(calc_dist(&[0, 0], 0), vec![0.0, 0.0]);
    }
}
