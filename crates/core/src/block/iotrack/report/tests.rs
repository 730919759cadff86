//! Report tests: a hand-computed interval (basic and -x) and the consistency
//! relations of the RFC v2 sample table.

use super::*;
use crate::block::bio::Op;
use crate::block::diskstats::DiskStats;
use crate::block::iotrack::DEFAULT_THRESH_NS;

const MS: u64 = 1_000_000;
const US: u64 = 1_000;

/// Root: 300 reads of test1 (4 KiB, Q2C 1 ms, D2C 250 µs) plus 100 writes of its
/// own (8 KiB, Q2C 5 ms, no D stamp), over a 1000 ms interval.
fn sample() -> (Sample, Sample) {
    let mut root = IotrackCounters::default();
    let mut test1 = IotrackCounters::default();
    for i in 0..300u64 {
        let q = i * MS;
        for c in [&mut test1, &mut root] {
            c.account(0, 8, q, q + 750 * US, q + MS, &DEFAULT_THRESH_NS);
        }
    }
    for i in 0..100u64 {
        root.account(1, 16, i * MS, 0, i * MS + 5 * MS, &DEFAULT_THRESH_NS);
    }
    let prev = Sample {
        time_ns: 0,
        dev_name: "sda".into(),
        dev: [0; 11],
        cgroups: vec![
            ("/".into(), IotrackCounters::default()),
            ("test1".into(), IotrackCounters::default()),
        ],
    };
    let cur = Sample {
        time_ns: 1_000 * MS,
        dev_name: "sda".into(),
        dev: [300, 10, 2400, 600, 100, 5, 1600, 500, 2, 800, 1100],
        cgroups: vec![("/".into(), root), ("test1".into(), test1)],
    };
    (prev, cur)
}

const TIME: &str = "Time: 2020-03-27 14:27:13\n";
const DEV_HEADER: &str = concat!(
    "Device           ",
    "rrqm/s   wrqm/s   r/s      w/s      rMB/s    wMB/s    avgrqkb  avgqu-sz ",
    "await    r_await  w_await  svctm    %util    conc    \n"
);
// rrqm 10/s, wrqm 5/s, 300 r/s, 100 w/s, 2400 sectors = 1.171875 MB/s, 1600 = 0.78125,
// avgrqkb (2400+1600)/2/400 = 5, avgqu 1100/1000, await 1100/400 = 2.75, r_await 2,
// w_await 5, svctm 0, %util 80, conc 1100/800 = 1.375 (a tie: rounds to even, 1.38).
const DEV_ROW: &str = concat!(
    "sda              ",
    "10       5        300      100      1.17     0.78     5.00     1.10     ",
    "2.75     2.00     5.00     0.00     80.00    1.38    \n"
);

#[test]
fn basic_layout() {
    let (prev, cur) = sample();
    let out = format_interval(&[prev], &[cur], 1000.0, false, "2020-03-27 14:27:13");
    let header = concat!(
        "Device           io/s     MB/s     %io    %byte  %tm    %dtm   %d2c   ad2c     aq2c     ",
        "%hit0  %hit1  %hit2  %hit3  %hit4  %hit5  %hit6  %hit7  cgroup\n"
    );
    // Root: 400 io/s; 4000 sectors = 1.953125 MB/s; Q2C 3e8 + 5e8 ns, D2C 7.5e7 ns:
    // %d2c 9.375 (tie → 9.38), ad2c 75 ms / 400 = 0.1875, aq2c 800 ms / 400 = 2.
    // Q2C 1 ms is not below the 1 ms threshold: reads hit buckets 5..7, writes (5 ms) bucket 7.
    let root = concat!(
        "sda              400      1.95     100.00 100.00 100.00 100.00 9.38   0.19     2.00     ",
        "0.00   0.00   0.00   0.00   0.00   75.00  75.00  100.00 /\n"
    );
    // test1: 300 of 400 IOs, 2400 of 4000 sectors, 3e8 of 8e8 ns Q2C, all the D2C.
    let test1 = concat!(
        "sda              300      1.17     75.00  60.00  37.50  100.00 25.00  0.25     1.00     ",
        "0.00   0.00   0.00   0.00   0.00   100.00 100.00 100.00 /test1\n"
    );
    let expected = [TIME, DEV_HEADER, DEV_ROW, "\n", header, root, test1, "\n"].concat();
    assert_eq!(out, expected);
}

#[test]
fn extended_layout() {
    let (prev, cur) = sample();
    let out = format_interval(&[prev], &[cur], 1000.0, true, "2020-03-27 14:27:13");
    let header = concat!(
        "Device           mean(us) min(us)  max(us)  ",
        "io/s     rio/s    wio/s    oio/s    MB/s     rMB/s    wMB/s    oMB/s    ",
        "%io    %rio   %wio   %oio   %byte  %rMB   %wMB   %oMB   ",
        "%tm    %rtm   %wtm   %otm   %dtm   %rdtm  %wdtm  %odtm  %d2c   %rd2c  %wd2c  %od2c  ",
        "ad2c     rad2c    wad2c    oad2c    aq2c     raq2c    waq2c    oaq2c    ",
        "%hit0  %hit1  %hit2  %hit3  %hit4  %hit5  %hit6  %hit7  ",
        "%rhit0 %rhit1 %rhit2 %rhit3 %rhit4 %rhit5 %rhit6 %rhit7 ",
        "%whit0 %whit1 %whit2 %whit3 %whit4 %whit5 %whit6 %whit7 ",
        "%ohit0 %ohit1 %ohit2 %ohit3 %ohit4 %ohit5 %ohit6 %ohit7 cgroup\n"
    );
    // mean 8e8/400 = 2 ms, min 1 ms, max 5 ms. The per-direction hits are divided
    // by all 400 IOs: reads 300/400 = 75 %, writes 100/400 = 25 %.
    let root = concat!(
        "sda              2000.00  1000.00  5000.00  ",
        "400      300      100      0        1.95     1.17     0.78     0.00     ",
        "100.00 75.00  25.00  0.00   100.00 60.00  40.00  0.00   ",
        "100.00 37.50  62.50  0.00   100.00 100.00 0.00   0.00   9.38   25.00  0.00   0.00   ",
        "0.19     0.25     0.00     0.00     2.00     1.00     5.00     0.00     ",
        "0.00   0.00   0.00   0.00   0.00   75.00  75.00  100.00 ",
        "0.00   0.00   0.00   0.00   0.00   75.00  75.00  75.00  ",
        "0.00   0.00   0.00   0.00   0.00   0.00   0.00   25.00  ",
        "0.00   0.00   0.00   0.00   0.00   0.00   0.00   0.00   /\n"
    );
    let lines: Vec<&str> = out.split_inclusive('\n').collect();
    assert_eq!(lines.len(), 8);
    assert_eq!(lines[0], TIME);
    assert_eq!(lines[1], DEV_HEADER);
    assert_eq!(lines[2], DEV_ROW);
    assert_eq!(lines[4], header);
    assert_eq!(lines[5], root);
    assert!(lines[6]
        .starts_with("sda              1000.00  1000.00  1000.00  300      300      0        0  "));
    assert!(lines[6].ends_with(" /test1\n"));
}

#[test]
fn missing_and_idle_cgroups() {
    // A cgroup absent from the sample shows zeros (min 0); an idle blkg shows the
    // kernel's 2^64-1 min. A zero-length interval of no IO prints zeros, not NaN.
    let (prev, mut cur) = sample();
    cur.cgroups
        .push(("/idle".into(), IotrackCounters::default()));
    let out = format_interval(
        std::slice::from_ref(&prev),
        std::slice::from_ref(&cur),
        1000.0,
        true,
        "t",
    );
    let idle = out.lines().find(|l| l.ends_with("/idle")).unwrap();
    assert!(
        idle.starts_with("sda              0.00     18446744073709552.00 0.00     0        "),
        "{idle}"
    );
    let m = metrics(
        &IotrackCounters::default(),
        &IotrackCounters::default(),
        &prev.cgroups[0].1,
        &cur.cgroups[0].1,
        1000.0,
    );
    assert_eq!(m.io_pct, [0.0; 4]);
    assert_eq!(m.hit_pct, [[0.0; 8]; 4]);
    let mut two = cur.clone();
    two.dev_name = "sdb".into();
    two.cgroups.retain(|(n, _)| n != "test1");
    let out = format_interval(&[prev], &[cur, two], 1000.0, false, "t");
    let rows: Vec<&str> = out.lines().filter(|l| l.starts_with("sd")).collect();
    // Two device lines, then cgroup-major rows: / sda, / sdb, /test1 sda, /test1 sdb, /idle sda, /idle sdb.
    assert_eq!(rows.len(), 8);
    assert!(rows[2].starts_with("sda") && rows[2].ends_with(" /"));
    assert!(rows[3].starts_with("sdb") && rows[3].ends_with(" /"));
    assert!(
        rows[5].starts_with("sdb              0        0.00     0.00   ")
            && rows[5].ends_with(" /test1")
    );
}

/// The RFC v2 cover letter's table (two fio randread jobs, bfq weights 800/100):
/// test1 aq2c 1.18 ms ad2c 0.09 ms; test2 aq2c 11.06 ms ad2c 0.13 ms %d2c 1.17;
/// the root's aq2c equals the device await; the children's %io add up to 100.
/// Rebuilt here from per-bio completions through the kernel accounting path.
#[test]
fn rfc_v2_sample_consistency() {
    use crate::block::blk_cgroup::CgroupTree;
    let mut tree = CgroupTree::new();
    let t1 = tree.ensure("/test1").unwrap();
    let t2 = tree.ensure("/test2").unwrap();
    let mut k = vec![IotrackCounters::default(); tree.len()];
    let mut disk = DiskStats::default();
    // (cgroup, count, q2c, d2c) per 1 s: 19318 and 2424 IOs of 4 KiB (≈ 193183 and
    // 24235 scaled by 1/10).
    let jobs = [
        (t1, 19_318u64, 1_180 * US, 90 * US),
        (t2, 2_424u64, 11_060 * US, 129_400),
    ];
    let mut events: Vec<(u64, bool, u64, Op, u64)> = Vec::new(); // (time, is_done, start, op, sectors)
    for &(cg, n, q2c, d2c) in &jobs {
        for i in 0..n {
            let q = i * (1_000 * MS - 20 * MS) / n;
            let c = q + q2c;
            for a in tree.ancestors(cg) {
                k[a as usize].account(0, 8, q, c - d2c, c, &DEFAULT_THRESH_NS);
            }
            // One request per bio, started at Q (no rq_qos wait before allocation).
            events.push((q, false, q, Op::Read, 8));
            events.push((c, true, q, Op::Read, 8));
        }
    }
    events.sort_by_key(|e| (e.0, e.1));
    for (t, is_done, start, op, sectors) in events {
        if is_done {
            disk.done(t, op, sectors, start);
        } else {
            disk.start(t, op);
        }
    }
    let zero = IotrackCounters::default();
    let root = &k[0];
    let m1 = metrics(&zero, &k[t1 as usize], &zero, root, 1000.0);
    let m2 = metrics(&zero, &k[t2 as usize], &zero, root, 1000.0);
    let mr = metrics(&zero, root, &zero, root, 1000.0);
    let f = |x: f64| format!("{x:.2}");
    assert_eq!(
        (f(m1.aq2c_ms[ALL]), f(m1.ad2c_ms[ALL])),
        ("1.18".into(), "0.09".into())
    );
    assert_eq!(
        (f(m2.aq2c_ms[ALL]), f(m2.ad2c_ms[ALL]), f(m2.d2c_pct[ALL])),
        ("11.06".into(), "0.13".into(), "1.17".into())
    );
    // %d2c = ad2c / aq2c for the same cgroup (before rounding).
    assert!((m2.d2c_pct[ALL] - 100.0 * m2.ad2c_ms[ALL] / m2.aq2c_ms[ALL]).abs() < 1e-3);
    // Children's shares add up to the root's 100 %.
    assert_eq!(f(mr.io_pct[ALL]), "100.00");
    assert!((m1.io_pct[ALL] + m2.io_pct[ALL] - 100.0).abs() < 1e-3);
    assert!((m1.byte_pct[ALL] + m2.byte_pct[ALL] - 100.0).abs() < 1e-3);
    assert!((m1.tm_pct[ALL] + m2.tm_pct[ALL] - 100.0).abs() < 1e-3);
    // test2 gets ~11 % of the IOs but over half of the summed Q2C, as in the RFC (54.09 %).
    assert!(m2.tm_pct[ALL] > 50.0 && m2.io_pct[ALL] < 12.0);
    // The root's aq2c equals the device's await (Q == request start here).
    let dm = dev_metrics(&[0; 11], &disk.stat_fields(1_000 * MS), 1000.0);
    assert_eq!(f(mr.aq2c_ms[ALL]), f(dm.await_ms));
    assert_eq!(f(mr.aq2c_ms[ALL]), "2.28");
    assert_eq!(dm.r as u64, 21_742);
}
