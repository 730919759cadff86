//! Text writer tests against fio's own output: the seeds/003 run (fio 3.7,
//! whose per-job block has the same layout as 3.33; the seed lost its leading
//! and repeated spaces, so those lines are compared with whitespace collapsed)
//! and the fio-3.33 sample of the spec (§4.3), compared exactly.

use super::*;
use crate::options::{JobSpec, UnifiedRw};
use crate::report::{DiskUtil, JobReport, Report};
use crate::stats::{plat_idx_to_val, plat_val_to_idx, JobStats};
use crate::test_fixtures::{one_job_report, sample, SEED_003_JOB};

fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A latency in ns whose histogram bucket prints as `usec` after fio's
/// round-up scaling.
fn ns_for_usec(usec: u64) -> u64 {
    let mut v = (usec - 1) * 1000 + 1;
    loop {
        let b = plat_idx_to_val(plat_val_to_idx(v));
        if b.div_ceil(1000) == usec && b > (usec - 1) * 1000 {
            return v;
        }
        v += 1;
        assert!(v < usec * 1000 + 1000, "no bucket for {usec} us");
    }
}

/// The "w/ patch" output of seeds/003.
const SEED_003_OUT: &str = "read: IOPS=100, BW=400KiB/s (410kB/s)(23.4MiB/60005msec)
slat (usec): min=10, max=155, avg=23.24, stdev=16.79
clat (usec): min=2, max=12393, avg=5961.58, stdev=5959.25
lat (usec): min=23, max=12412, avg=5985.91, stdev=5951.92
clat percentiles (usec):
| 1.00th=[ 3], 5.00th=[ 3], 10.00th=[ 4], 20.00th=[ 4],
| 30.00th=[ 4], 40.00th=[ 5], 50.00th=[ 47], 60.00th=[11863],
| 70.00th=[11994], 80.00th=[11994], 90.00th=[11994], 95.00th=[11994],
| 99.00th=[11994], 99.50th=[11994], 99.90th=[12125], 99.95th=[12125],
| 99.99th=[12387]";

#[test]
fn seed_003_header_and_job_block() {
    let jobs = crate::parse::parse_job_file(SEED_003_JOB, "r2.job").unwrap();
    let gids = crate::parse::assign_groupids(&jobs);
    assert_eq!(
        write_header(&jobs, &gids, "fio-3.7-66-gedfc"),
        "file1: (g=0): rw=randread, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=libaio, iodepth=1\n\
         fio-3.7-66-gedfc\nStarting 1 process\n"
    );

    let n = 6001u64;
    let mut st = JobStats {
        name: "file1".into(),
        nr_jobs: 1,
        ..Default::default()
    };
    let r = &mut st.dirs[0];
    r.io_bytes = n * 4096;
    r.total_ios = n;
    r.runtime_ms = 60_005;
    r.slat.stat = sample(10_500, 155_300, n, 23_240.0, 16_790.0);
    r.lat.stat = sample(23_000, 12_412_000, n, 5_985_910.0, 5_951_920.0);
    // clat: summary from the seed, histogram built so each printed
    // percentile is the bucket holding its rank ceil(p*N/100).
    let rank = |p: f64| ((p * n as f64) / 100.0).ceil() as u64;
    let steps: [(u64, f64); 8] = [
        (3, 5.0),
        (4, 30.0),
        (5, 40.0),
        (47, 50.0),
        (11863, 60.0),
        (11994, 99.5),
        (12125, 99.95),
        (12387, 100.0),
    ];
    let mut cum = 0;
    for (usec, p) in steps {
        let v = ns_for_usec(usec);
        let upto = if p == 100.0 { n } else { rank(p) };
        for _ in cum..upto {
            r.clat.hist.add(v);
        }
        cum = upto;
    }
    r.clat.stat = sample(2_500, 12_393_000, n, 5_961_580.0, 5_959_250.0);
    let spec = &jobs[0];
    let jr = JobReport {
        spec,
        stats: &st,
        pid: 1,
    };
    let rs = &crate::report::group_run_stats(&[jr])[0];
    let block = job_text(&jr, rs, "Mon Jan  1 00:00:00 2018");
    let lines: Vec<&str> = block.lines().collect();
    assert_eq!(
        lines[0],
        "file1: (groupid=0, jobs=1): err= 0: pid=1: Mon Jan  1 00:00:00 2018"
    );
    let want: Vec<&str> = SEED_003_OUT.lines().collect();
    for (i, w) in want.iter().enumerate() {
        assert_eq!(squash(lines[i + 1]), *w, "line {}", i + 1);
    }
    // and the exact spacing fio prints
    assert_eq!(
        lines[1],
        "  read: IOPS=100, BW=400KiB/s (410kB/s)(23.4MiB/60005msec)"
    );
    assert_eq!(
        lines[4],
        "     lat (usec): min=23, max=12412, avg=5985.91, stdev=5951.92"
    );
    assert_eq!(lines[5], "    clat percentiles (usec):");
    assert_eq!(
        lines[6],
        "     |  1.00th=[    3],  5.00th=[    3], 10.00th=[    4], 20.00th=[    4],"
    );
    assert_eq!(lines[10], "     | 99.99th=[12387]");
}

/// The fio-3.33 sample in the spec: 2 jobs, group_reporting, mixed, QD 4.
fn spec_sample() -> (JobSpec, JobStats) {
    let mut spec = JobSpec::new("job");
    spec.iodepth = 4;
    spec.unified_rw_reporting = UnifiedRw::Mixed;
    spec.group_reporting = true;
    let n = 139_333u64;
    let mut st = JobStats {
        name: "job".into(),
        nr_jobs: 2,
        ..Default::default()
    };
    let m = &mut st.dirs[0];
    m.io_bytes = n * 4096;
    m.total_ios = n;
    m.runtime_ms = 1001;
    m.slat.stat = sample(684, 969_669, n, 10_297.98, 16_804.37);
    m.clat.stat = sample(1208, 30_263_123, n, 42_337.60, 493_219.42);
    m.lat.stat = sample(4_100, 30_264_500, n, 52_640.0, 493_530.0);
    m.bw = sample(535_248, 535_248, 4, 535_248.0, 0.0);
    m.iops = sample(133_812, 133_812, 4, 133_812.0, 0.0);
    // 99.99 % answered by a 26.6 ms tail: the block switches to usec
    for _ in 0..n - 14 {
        m.clat.hist.add(6_000);
    }
    for _ in 0..14 {
        m.clat.hist.add(26_600_000);
    }
    let pct = |c: f64| ((c / 100.0) * n as f64).round() as u64;
    st.lat_us = [
        1,
        0,
        pct(37.14),
        pct(8.45),
        pct(33.06),
        pct(18.52),
        0,
        0,
        0,
        0,
    ];
    st.lat_ms = [1, 0, 0, 0, pct(0.03), 0, 0, 0, 0, 0, 0, 0];
    st.iodepth_level = [1, 1, n - 2, 0, 0, 0, 0];
    st.iodepth_submit = [0, 40_000, 0, 0, 0, 0, 0];
    st.total_submit = 40_000;
    st.iodepth_complete = [0, 40_000, 0, 0, 0, 0, 0];
    st.total_complete = 40_000;
    st.job_runtime_ms = 2002;
    (spec, st)
}

#[test]
fn spec_sample_lines() {
    let (spec, st) = spec_sample();
    let du = DiskUtil {
        name: "vda".into(),
        read_ios: 32171,
        write_ios: 12839,
        read_merges: 0,
        write_merges: 68,
        read_ticks: 928,
        write_ticks: 4521,
        in_queue: 5449,
        io_ticks: 7149,
        msec: 10_000,
    };
    let r = Report {
        time_str: "Tue Apr  7 10:00:00 2026",
        disk_util: vec![du],
        ..one_job_report(&spec, &st, 777)
    };
    let out = write_text(&r);
    let expect_in_order = [
        "",
        "job: (groupid=0, jobs=2): err= 0: pid=777: Tue Apr  7 10:00:00 2026",
        "  mixed: IOPS=139k, BW=544MiB/s (570MB/s)(544MiB/1001msec)",
        "    slat (nsec): min=684, max=969669, avg=10297.98, stdev=16804.37",
        "    clat (nsec): min=1208, max=30263k, avg=42337.60, stdev=493219.42",
        "     lat (usec): min=4, max=30264, avg=52.64, stdev=493.53",
        "    clat percentiles (usec):",
        "     |  1.00th=[    6],  5.00th=[    6], 10.00th=[    6], 20.00th=[    6],",
    ];
    let lines: Vec<&str> = out.lines().collect();
    // the percentile rows are checked separately below (all values equal here)
    for (i, w) in expect_in_order.iter().enumerate() {
        assert_eq!(lines[i], *w, "line {i}");
    }
    let rest = [
        "   bw (  KiB/s): min=535248, max=535248, per=96.13%, avg=535248.00, stdev= 0.00, samples=4",
        "   iops        : min=133812, max=133812, avg=133812.00, stdev= 0.00, samples=4",
        "  lat (usec)   : 2=0.01%, 10=37.14%, 20=8.45%, 50=33.06%, 100=18.52%",
        "  lat (msec)   : 2=0.01%, 50=0.03%",
        "  cpu          : usr=0.00%, sys=0.00%, ctx=0, majf=0, minf=0",
        "  IO depths    : 1=0.1%, 2=0.1%, 4=100.0%, 8=0.0%, 16=0.0%, 32=0.0%, >=64=0.0%",
        "     submit    : 0=0.0%, 4=100.0%, 8=0.0%, 16=0.0%, 32=0.0%, 64=0.0%, >=64=0.0%",
        "     complete  : 0=0.0%, 4=100.0%, 8=0.0%, 16=0.0%, 32=0.0%, 64=0.0%, >=64=0.0%",
        "     issued rwts: total=139333,0,0,0 short=0,0,0,0 dropped=0,0,0,0",
        "     latency   : target=0, window=0, percentile=100.00%, depth=4",
        "",
        "Run status group 0 (all jobs):",
        "  MIXED: bw=544MiB/s (570MB/s), 544MiB/s-544MiB/s (570MB/s-570MB/s), io=544MiB (571MB), run=1001-1001msec",
        "",
        "Disk stats (read/write):",
        "  vda: ios=32171/12839, merge=0/68, ticks=928/4521, in_queue=5449, util=71.49%",
    ];
    assert_eq!(
        lines[11], "     | 99.99th=[26608]",
        "the spec's last percentile row"
    );
    let start = lines
        .iter()
        .position(|l| l.starts_with("   bw ("))
        .expect("bw line");
    assert_eq!(&lines[start..], &rest[..]);
}

#[test]
fn percentile_block_rules() {
    let mut h = crate::stats::PlatHist::default();
    for v in 1..=1000u64 {
        h.add(v * 1_000_000); // 1 ms .. 1 s
    }
    let plist = crate::options::DEFAULT_PERCENTILES;
    let b = percentiles_block(&h, &plist, 2, "clat");
    let l: Vec<&str> = b.lines().collect();
    assert_eq!(l[0], "    clat percentiles (msec):");
    assert!(l[1].starts_with("     |  1.00th=[   11],"), "{}", l[1]);
    assert_eq!(l.len(), 6, "17 values, 4 per line");
    assert!(l[5].starts_with("     | 99.99th=[ 1003]"), "{}", l[5]);
    // three decimals: %6.3f labels, still 4 per line (73 / (3+10+5))
    let b = percentiles_block(&h, &[50.0, 99.999], 3, "lat");
    let up = |v: u64| {
        plat_idx_to_val(plat_val_to_idx(v))
            .div_ceil(1000)
            .div_ceil(1000)
    };
    assert_eq!(
        up(500_000_000),
        502,
        "rank 500 of 1000: the 500 ms bucket, rounded up twice"
    );
    assert_eq!(
        b.lines().nth(1).unwrap(),
        "     | 50.000th=[  502], 99.999th=[ 1003]"
    );
    // nsec when small; wide values widen the column
    let mut h = crate::stats::PlatHist::default();
    h.add(100);
    assert_eq!(
        percentiles_block(&h, &[50.0], 0, "slat"),
        "    slat percentiles (nsec):\n     |  50th=[  100]\n"
    );
    assert_eq!(
        percentiles_block(&crate::stats::PlatHist::default(), &[50.0], 2, "x"),
        ""
    );
}

#[test]
fn header_for_clones_threads_and_sizes() {
    let jobs = crate::parse::parse_cmdline(
        &[
            "--name=a",
            "--numjobs=3",
            "--bs=64k,1m",
            "--rw=randrw",
            "--name=b",
            "--thread",
            "--bsrange=512-8k",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect::<Vec<_>>(),
    )
    .unwrap();
    let h = write_header(&jobs, &[0, 0], "fio-3.33-blklab");
    assert_eq!(
        h,
        "a: (g=0): rw=randrw, bs=(R) 64.0KiB-64.0KiB, (W) 1024KiB-1024KiB, (T) 1024KiB-1024KiB, ioengine=psync, iodepth=1\n\
         ...\n\
         b: (g=0): rw=read, bs=(R) 512B-8192B, (W) 512B-8192B, (T) 512B-8192B, ioengine=psync, iodepth=1\n\
         fio-3.33-blklab\nStarting 1 thread and 3 processes\n"
    );
}

#[test]
fn display_lat_units() {
    assert_eq!(
        display_lat("clat", &sample(1500, 5000, 10, 2500.0, 400.0)),
        "    clat (nsec): min=1500, max=5000, avg=2500.00, stdev=400.00\n"
    );
    assert_eq!(
        display_lat("clat", &sample(3_000_000, 900_000_000, 10, 5e7, 2e6)),
        "    clat (msec): min=3, max=900, avg=50.00, stdev= 2.00\n"
    );
    // stdev too small for usec: stays nsec even with a large max
    assert_eq!(
        display_lat("slat", &sample(3_000, 900_000, 10, 5_000.0, 900.0)),
        "    slat (nsec): min=3000, max=900000, avg=5000.00, stdev=900.00\n"
    );
}

#[test]
fn group_lines_none_and_both() {
    let (mut spec, mut st) = spec_sample();
    st.dirs[1] = st.dirs[0].clone();
    st.dirs[1].runtime_ms = 1000;
    spec.unified_rw_reporting = UnifiedRw::Both;
    let jr = JobReport {
        spec: &spec,
        stats: &st,
        pid: 1,
    };
    let rs = &crate::report::group_run_stats(&[jr])[0];
    let g = group_text(rs);
    let l: Vec<&str> = g.lines().collect();
    assert_eq!(l[1], "Run status group 0 (all jobs):");
    assert!(l[2].starts_with("   READ: bw=544MiB/s"), "{}", l[2]);
    assert!(l[3].starts_with("  WRITE: bw=544MiB/s"), "{}", l[3]);
    assert!(l[4].starts_with("  MIXED: bw=1088MiB/s"), "{}", l[4]);
    assert!(l[4].ends_with("run=1000-1001msec"), "{}", l[4]);
    let t = job_text(&jr, rs, "now");
    assert!(t.contains("\n  read: IOPS=139k"));
    assert!(t.contains("\n  write: IOPS=139k"));
    assert!(t.contains("\n  mixed: IOPS=278k"), "{t}");
}
