//! End-to-end reproduction of seed 000 ("blk-iocost: fix busy_level reset
//! when no IOs complete"): examples/iocost-busy-level{,-32k,-256k}.toml run
//! through the real `blklab` binary with `iocost.busy_level_fix` off and on.
//!
//! The seed's tables (Azure P20, 10 s runs) and the tolerances used here:
//!
//! | row       | before (seed) | after (seed)   | asserted before | asserted after |
//! |-----------|---------------|----------------|-----------------|----------------|
//! | cgB IOPS  | 5 / 6 / 5     | 199 / 200 / 200| <= 25 (4k, 32k) | >= 150         |
//! | cgB clat  | 170..191 ms   | 1.95..3.69 ms  | >= 40 (4k, 32k) | <= 10 ms       |
//! | cgA IOPS  | 166 / 167 / 166 | 162 / 146 / 110 | >= 155        | strictly falling with cgB's bs, 256k in 95..=130 |
//!
//! Why these bounds: cgB's rate target is 200 IOPS, so "starved" and "served"
//! are an order of magnitude apart; the bounds sit between the two regimes with
//! room for the simulator's known deviations (docs/fidelity/iocost.md,
//! "Reproducing the busy_level seed": before, cgB gets 11 / 11 / 20 IOPS instead
//! of 5; after, 256k cgB reaches ~167 instead of 200 because it sometimes waits
//! in iocost while vrate dips toward min=80 %). The whole run is deterministic
//! (seed 1), so these are not statistical tolerances but margins against model
//! changes that keep the mechanism intact.
//!
//! The 256k "before" row is not reproduced under the kernel's arithmetic
//! (`iocost.donation_usage=u32`, the default): cgA, at full usage with budget
//! left at every period, is a donor keeping hwi 1, so nobody is short, cgB's
//! surplus is never transferred, and both groups keep half: cgB gets 162 IOPS
//! with the fix or without it. The seed's cgB waits up to 760 ms behind cgA's
//! 128 MiB in the device, which needs vrate far above the device (the bug the
//! seed fixes), while the model's vrate stays at 105 % (held by nr_lagging).
//! `seed_256k_before_is_not_reproduced` pins that gap (docs/fidelity/iocost.md,
//! "A busy group at full usage donates everything").
//!
//! The examples run at HZ=1000 (the 7 ms period lasts 8 ms). At HZ=250 it
//! lasts 12 ms and the kernel's `ioc_refresh_vrate`, which repays thrown-away
//! vtime over `period_us`, hands cgA 12/7 of cgB's discarded budget: the 256k
//! "after" row becomes cgA 159 / cgB 25 IOPS, against the seed's 110 / 200
//! (docs/fidelity/iocost.md, "Period length and the vtime_err repayment").

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn blklab(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_blklab"))
        .current_dir(root())
        .args(args)
        .output()
        .expect("running blklab");
    assert!(
        out.status.success(),
        "blklab {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[derive(Debug, Clone, Copy)]
struct Row {
    iops: u64,
    slat_ms: f64,
    clat_ms: f64,
}

/// One run's summary rows for cgA and cgB.
fn run(example: &str, fix: &str) -> (Row, Row) {
    run_with(example, fix, "u32")
}

/// `run` with `iocost.donation_usage` set to `donation`.
fn run_with(example: &str, fix: &str, donation: &str) -> (Row, Row) {
    let text = blklab(&[
        "run",
        example,
        "--set",
        &format!("iocost.busy_level_fix={fix}"),
        "--set",
        &format!("iocost.donation_usage={donation}"),
        "--output-format",
        "summary",
    ]);
    let row = |prefix: &str| {
        let l = text
            .lines()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix} row in\n{text}"));
        let f: Vec<&str> = l.split_whitespace().collect();
        Row {
            iops: f[1].parse().unwrap(),
            slat_ms: f[3].parse().unwrap(),
            clat_ms: f[4].parse().unwrap(),
        }
    };
    (row("cgA-1m"), row("cgB-"))
}

const EXAMPLES: [(&str, &str); 3] = [
    ("4k", "examples/iocost-busy-level.toml"),
    ("32k", "examples/iocost-busy-level-32k.toml"),
    ("256k", "examples/iocost-busy-level-256k.toml"),
];

fn check_bs(bs: &str, example: &str) -> Row {
    let (a_off, b_off) = run(example, "off");
    let (a_on, b_on) = run(example, "on");
    let ctx = format!("cgB-{bs}: off A {a_off:?} B {b_off:?}; on A {a_on:?} B {b_on:?}");
    check_after(a_on, b_on, &ctx);
    if bs == "256k" {
        return a_on;
    }
    // Before: vrate stays above the device's capacity, cgA fills the device
    // queue and cgB's QD1 IOs wait behind it.
    assert!(b_off.iops <= 25, "before: cgB starved; {ctx}");
    assert!(
        b_off.clat_ms >= 40.0,
        "before: cgB clat hundreds of ms; {ctx}"
    );
    assert!(a_off.iops >= 155, "before: cgA at device capacity; {ctx}");
    a_on
}

/// After: vrate comes down, cgA is held in iocost (its clat is waitq time),
/// cgB gets its 200 IOPS at device latency.
fn check_after(a_on: Row, b_on: Row, ctx: &str) {
    assert!(b_on.iops >= 150, "after: cgB served; {ctx}");
    assert!(b_on.clat_ms <= 10.0, "after: cgB clat a few ms; {ctx}");
    assert!(
        b_on.slat_ms < 2.0,
        "after: cgB barely waits in iocost; {ctx}"
    );
    assert!(a_on.clat_ms >= 600.0, "after: cgA waits in iocost; {ctx}");
}

/// The gap the module comment describes: under the kernel's 32-bit product
/// the busy_level fix changes nothing in the 256k example (cgB served either
/// way); with the 64-bit product cgB's donations reach cgA and cgB starves
/// before the fix, as in the seed, though through donation, not vrate.
#[test]
fn seed_256k_before_is_not_reproduced() {
    let ex = "examples/iocost-busy-level-256k.toml";
    let (a_off, b_off) = run(ex, "off");
    let (a_on, b_on) = run(ex, "on");
    let ctx = format!("off A {a_off:?} B {b_off:?}; on A {a_on:?} B {b_on:?}");
    assert_eq!((a_off.iops, b_off.iops), (a_on.iops, b_on.iops), "{ctx}");
    assert!(b_off.iops >= 150, "{ctx}");
    let (_, b_off64) = run_with(ex, "off", "u64");
    assert!(b_off64.iops <= 25, "u64: {b_off64:?}");
}

/// The 256k seed at HZ=250: the 7 ms period lasts 12 ms, `ioc_refresh_vrate`
/// repays 12/7 of the budget cgB's donation throws away, and cgA, which always
/// has waiters, runs far above what vrate (cut to min=80 %: 127 1 MiB IOs/s
/// under the model) lets through, leaving cgB queued behind it in the device.
/// Kernel arithmetic (crates/core/src/block/iocost/tests/vrate_comp.rs); the
/// reason the seed examples run at HZ=1000.
#[test]
fn seed_256k_at_hz_250_overshoots_through_the_vtime_err_repayment() {
    let text = std::fs::read_to_string(root().join("examples/iocost-busy-level-256k.toml"))
        .expect("reading the 256k example");
    assert!(text.contains("\nhz = 1000\n"), "the example's HZ changed");
    let dir = std::env::temp_dir().join(format!("blklab-seed-hz250-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("iocost-busy-level-256k-hz250.toml");
    std::fs::write(&path, text.replace("\nhz = 1000\n", "\nhz = 250\n")).unwrap();
    // the repayment shows only while cgB's surplus reaches cgA, which under
    // the kernel's 32-bit product it never does here (module comment)
    let (a_on, b_on) = run_with(path.to_str().unwrap(), "on", "u64");
    let (a_1000, _) = run_with("examples/iocost-busy-level-256k.toml", "on", "u64");
    std::fs::remove_dir_all(&dir).ok();
    let ctx = format!("HZ=250 A {a_on:?} B {b_on:?}; HZ=1000 A {a_1000:?}");
    assert!(a_on.iops >= 145, "cgA above vrate's 127/s: {ctx}");
    assert!(a_on.iops >= a_1000.iops + 25, "{ctx}");
    assert!(
        b_on.iops <= 60,
        "cgB queued behind cgA in the device: {ctx}"
    );
}

#[test]
fn seed_000_shape_per_block_size() {
    let mut a_after = Vec::new();
    for (bs, ex) in EXAMPLES {
        a_after.push(check_bs(bs, ex).iops);
    }
    // cgA's share falls as cgB's IOs get bigger (seed: 162 / 146 / 110).
    assert!(
        a_after[0] > a_after[1] && a_after[1] > a_after[2],
        "{a_after:?}"
    );
    assert!(a_after[0] >= 145, "{a_after:?}");
    assert!((95..=130).contains(&a_after[2]), "{a_after:?}");
}

/// Parsed `iocost_ioc_vrate_adj` payload.
#[derive(Debug, PartialEq)]
struct Adj {
    old: u64,
    new: u64,
    busy: i32,
    missed: (u32, u32),
    rq_wait: u32,
    lagging: i32,
    shortages: i32,
}

/// Parse `[sda] vrate=A->B busy=N missed_ppm=R:W rq_wait_pct=P lagging=L shortages=S`,
/// the kernel's TP_printk layout; `pct` parses the blklab percentage variant
/// (`vrate=127.50%->126.23%`, in hundredths).
fn parse_adj(payload: &str, pct: bool) -> Option<Adj> {
    let rest = payload.strip_prefix("[sda] vrate=")?;
    let (old, rest) = rest.split_once("->")?;
    let (new, rest) = rest.split_once(" busy=")?;
    let num = |s: &str| -> Option<u64> {
        if pct {
            let (i, f) = s.strip_suffix('%')?.split_once('.')?;
            (f.len() == 2).then_some(())?;
            Some(i.parse::<u64>().ok()? * 100 + f.parse::<u64>().ok()?)
        } else {
            s.parse().ok()
        }
    };
    let (busy, rest) = rest.split_once(" missed_ppm=")?;
    let (missed, rest) = rest.split_once(" rq_wait_pct=")?;
    let (r, w) = missed.split_once(':')?;
    let (rq, rest) = rest.split_once(" lagging=")?;
    let (lag, sh) = rest.split_once(" shortages=")?;
    Some(Adj {
        old: num(old)?,
        new: num(new)?,
        busy: busy.parse().ok()?,
        missed: (r.parse().ok()?, w.parse().ok()?),
        rq_wait: rq.parse().ok()?,
        lagging: lag.parse().ok()?,
        shortages: sh.parse().ok()?,
    })
}

/// (event name, payload) of every trace line, checking the ftrace line layout.
fn trace_events(path: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .map(|l| {
            // "<task>-<pid> [<cpu>] <flags> <secs>.<usecs>: <event>: <payload>"
            let (head, rest) = l.split_once(": ").unwrap_or_else(|| panic!("{l}"));
            let ts = head.split_whitespace().last().unwrap();
            let (s, us) = ts.split_once('.').unwrap();
            assert!(s.parse::<u64>().is_ok() && us.len() == 6, "{l}");
            let (ev, payload) = rest.split_once(": ").unwrap_or_else(|| panic!("{l}"));
            (ev.to_string(), payload.to_string())
        })
        .collect()
}

fn traced(fix: &str) -> Vec<(String, String)> {
    let path = std::env::temp_dir().join(format!(
        "blklab-iocost-seed-{}-{fix}.trace",
        std::process::id()
    ));
    blklab(&[
        "run",
        "examples/iocost-busy-level.toml",
        "--set",
        &format!("iocost.busy_level_fix={fix}"),
        "--output-format",
        "summary",
        "--trace",
        path.to_str().unwrap(),
    ]);
    let ev = trace_events(&path);
    std::fs::remove_file(&path).ok();
    ev
}

#[test]
fn trace_shows_the_reset_before_and_not_after() {
    for fix in ["off", "on"] {
        let ev = traced(fix);
        let mut raw = Vec::new();
        let mut pct = Vec::new();
        for (name, payload) in &ev {
            match name.as_str() {
                "iocost_ioc_vrate_adj" => raw.push(
                    parse_adj(payload, false).unwrap_or_else(|| panic!("bad line: {payload}")),
                ),
                "iocost_ioc_vrate_adj_pct" => pct.push(
                    parse_adj(payload, true).unwrap_or_else(|| panic!("bad line: {payload}")),
                ),
                _ => {}
            }
        }
        assert!(raw.len() > 100, "{fix}: {} vrate_adj lines", raw.len());
        // The percentage line is the raw one converted as seed 002's bpftrace
        // script does (v * 10000 / VTIME_PER_USEC, printed %d.%02d).
        assert_eq!(raw.len(), pct.len());
        for (r, p) in raw.iter().zip(&pct) {
            assert_eq!(p.old, r.old * 10000 / 137438);
            assert_eq!(p.new, r.new * 10000 / 137438);
            assert_eq!(
                (p.busy, p.missed, p.rq_wait, p.lagging, p.shortages),
                (r.busy, r.missed, r.rq_wait, r.lagging, r.shortages)
            );
            // rq-wait stays 0 as in the seed's trace: tags never run out.
            assert_eq!(r.rq_wait, 0);
        }
        // The seed's signature: a busy period, then busy=0 missed_ppm=0:0 with
        // lagging IOs (a period in which nothing completed).
        let resets = raw
            .windows(2)
            .filter(|w| {
                w[0].busy > 0 && w[1].busy == 0 && w[1].missed == (0, 0) && w[1].lagging > 0
            })
            .count();
        // The per-period summary tells which periods had no completion.
        let periods: Vec<(u32, i32, i32)> = ev
            .iter()
            .filter(|(n, _)| n == "iocost_period")
            .map(|(_, p)| {
                let field = |k: &str| {
                    p.split_whitespace()
                        .find_map(|f| f.strip_prefix(k))
                        .unwrap_or_else(|| panic!("{k} in {p}"))
                        .to_string()
                };
                (
                    field("nr_done=").parse().unwrap(),
                    field("busy=").parse().unwrap(),
                    field("lagging=").parse().unwrap(),
                )
            })
            .collect();
        let empty_lagging: Vec<(i32, i32)> = periods
            .windows(2)
            .filter(|w| w[1].0 == 0 && w[1].2 > 0)
            .map(|w| (w[0].1, w[1].1))
            .collect();
        assert!(empty_lagging.len() > 100, "{fix}: {}", empty_lagging.len());
        if fix == "off" {
            assert!(resets > 100, "off: {resets} resets");
            // Every empty period with lagging IOs reads as "QoS met".
            assert!(empty_lagging.iter().all(|&(_, b)| b <= 0));
            // vrate never comes down: no vrate_adj line lowers it.
            assert!(raw.iter().all(|a| a.new >= a.old));
        } else {
            // busy_level is kept through empty periods with lagging IOs...
            assert!(empty_lagging.iter().all(|&(prev, b)| prev == b));
            // ...so positive busy levels build up and cut vrate.
            assert!(raw.iter().any(|a| a.busy >= 4 && a.new < a.old));
        }
    }
}

#[test]
fn io_stat_has_cost_fields_per_cgroup() {
    let text = blklab(&[
        "run",
        "examples/iocost-busy-level.toml",
        "--output-format",
        "summary",
        "--io-stat",
    ]);
    let sect = text
        .split("io.stat at the end of the run:\n")
        .nth(1)
        .unwrap_or_else(|| panic!("{text}"));
    let usage = |cg: &str| -> u64 {
        let l = sect
            .lines()
            .find(|l| l.split_whitespace().next() == Some(cg))
            .unwrap_or_else(|| panic!("no {cg} in {sect}"));
        assert!(l.contains(" 8:0 "), "{l}");
        l.split_whitespace()
            .find_map(|f| f.strip_prefix("cost.usage="))
            .unwrap()
            .parse()
            .unwrap()
    };
    let (root, a, b) = (usage("/"), usage("/cgA"), usage("/cgB"));
    // Only the root line carries cost.vrate (two decimals).
    let root_line = sect.lines().find(|l| l.starts_with("/ ")).unwrap();
    let vrate = root_line
        .split_whitespace()
        .find_map(|f| f.strip_prefix("cost.vrate="))
        .unwrap();
    assert_eq!(vrate.split_once('.').unwrap().1.len(), 2, "{root_line}");
    assert!(!sect
        .lines()
        .any(|l| !l.starts_with("/ ") && l.contains("cost.vrate")));
    // Children's usage is pushed up into the root (iocg_flush_stat).
    assert_eq!(root, a + b);
    // cgA used most of ~10 s of device time; cgB (4k at 200 IOPS) ~0.6 s.
    assert!((8_000_000..=11_000_000).contains(&a), "{a}");
    assert!((300_000..=1_000_000).contains(&b), "{b}");
}

/// Spec §12.3 item 10, the simulator's side (the real-kernel side cannot run
/// on this VM, see docs/fidelity/iocost.md): with vrate fixed at 100 % and a
/// device far faster than the model (2000 IOPS), iocost makes the submitter
/// sleep; fio then shows slat ≈ 1/IOPS and clat ≈ (iodepth-1)/IOPS with little
/// spread, as measured on a real 6.18 kernel.
#[test]
fn fio_slat_clat_split_under_iocost() {
    let text = blklab(&[
        "run",
        "examples/iocost-fio-split.toml",
        "--output-format",
        "summary",
    ]);
    let l = text
        .lines()
        .find(|l| l.starts_with("split-4k-qd16"))
        .unwrap_or_else(|| panic!("{text}"));
    let f: Vec<f64> = l
        .split_whitespace()
        .skip(1)
        .map(|v| v.parse().unwrap())
        .collect();
    let (iops, slat, clat, p99) = (f[0], f[2], f[3], f[6]);
    assert!((1900.0..=2100.0).contains(&iops), "{l}");
    let per_io_ms = 1000.0 / iops;
    assert!(
        (slat / per_io_ms - 1.0).abs() < 0.1,
        "slat {slat} vs 1/IOPS {per_io_ms}: {l}"
    );
    assert!(
        (clat / (15.0 * per_io_ms) - 1.0).abs() < 0.1,
        "clat {clat} vs 15/IOPS: {l}"
    );
    assert!(p99 <= 1.2 * clat, "spread: {l}");
}

/// The script's order (examples/iocost-busy-level-seq.toml): the 32k and 256k
/// iterations inherit the vrate the bug left above the volume's ceiling, so
/// cgA backs the volume up from their first period and cgB gets none of the
/// unsaturated first ~0.3 s a cold ioc (vrate 100 %) gives it: the seed's 5–6
/// IOPS instead of the cold runs' 11 / 19.
#[test]
fn back_to_back_iterations_starve_cgb_from_the_start_before_the_fix() {
    let text = blklab(&[
        "run",
        "examples/iocost-busy-level-seq.toml",
        "--set",
        "iocost.busy_level_fix=off",
        "--output-format",
        "summary",
    ]);
    let iops = |label: &str| -> u64 {
        let l = text
            .lines()
            .find(|l| l.starts_with(label))
            .unwrap_or_else(|| panic!("no {label} row in\n{text}"));
        l.split_whitespace().nth(1).unwrap().parse().unwrap()
    };
    // the first iteration is the cold 4k example (its 80 I/Os in the first
    // second included)
    let (_, cold_4k) = run("examples/iocost-busy-level.toml", "off");
    assert_eq!(iops("bs4k/cgB-4k"), cold_4k.iops);
    let (_, cold_256k) = run("examples/iocost-busy-level-256k.toml", "off");
    for label in ["bs32k/cgB-32k", "bs256k/cgB-256k"] {
        let warm = iops(label);
        // at most ~70 I/Os in 10 s: no unsaturated start (the cold runs get
        // 80–97 in their first second alone)
        assert!(warm <= 7, "{label}: {warm} IOPS\n{text}");
    }
    assert!(
        cold_256k.iops >= 2 * iops("bs256k/cgB-256k"),
        "cold 256k {} vs warm\n{text}",
        cold_256k.iops
    );
}
