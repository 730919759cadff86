//! bfq end to end: seed 004's two-cgroup experiment (io.bfq.weight 800/100)
//! through the whole engine, and the checks of io.bfq.weight writes a
//! scenario makes before the run. The simulator is deterministic; the
//! tolerances say how close to the weights' ratio a share must be.

use std::path::Path;

use blklab_lab::report::Row;
use blklab_lab::runner;
use blklab_lab::scenario::Scenario;

fn example(name: &str) -> Scenario {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name);
    Scenario::load(&p).unwrap_or_else(|e| panic!("{e}"))
}

/// IOPS per reporting group (test1, test2).
fn iops(sc: &Scenario, sets: &[(&str, &str)]) -> Vec<f64> {
    let mut cfg = sc.config.clone();
    for (k, v) in sets {
        cfg.switches.set(k, v).unwrap();
    }
    let out = runner::run(sc, &cfg, None).unwrap();
    out.groups.iter().map(|g| Row::from_group(g).iops).collect()
}

#[test]
fn seed004_eight_jobs_share_follows_the_weights_and_bfq_costs_throughput() {
    let bfq = iops(&example("bfq-seed004-8jobs.toml"), &[]);
    let none = iops(&example("bfq-seed004-8jobs-none.toml"), &[]);
    let share = bfq[0] / (bfq[0] + bfq[1]);
    // the seed: 88.88 % (= 800/900). Both cgroups are always backlogged and
    // idling keeps the heavier one in service: the share is the weights'
    // ratio within 1 %.
    assert!(
        (share - 800.0 / 900.0).abs() < 0.01,
        "test1 share {share:.4}"
    );
    // without a scheduler the two equal loads split evenly
    let none_share = none[0] / (none[0] + none[1]);
    assert!(
        (none_share - 0.5).abs() < 0.01,
        "none share {none_share:.4}"
    );
    // bfq's total stays under what its per-request lock time allows
    // (1 / 1.9 us = 526k) and well under none's
    let (tb, tn) = (bfq[0] + bfq[1], none[0] + none[1]);
    assert!(tb < 526_316.0, "bfq total {tb}");
    assert!(tb < 0.7 * tn, "bfq {tb} vs none {tn}");
}

/// test1's share of the IOs in seed 004's first load (one job per cgroup,
/// iodepth 8), with the host's CPUs and the run's seed as given.
fn first_load_share(cpus: u32, seed: u64) -> f64 {
    let sc = example("bfq-seed004-1job.toml");
    let mut cfg = sc.config.clone();
    cfg.cpu.cpus.nr = cpus;
    cfg.seed = seed;
    let out = runner::run(&sc, &cfg, None).unwrap();
    let v: Vec<f64> = out.groups.iter().map(|g| Row::from_group(g).iops).collect();
    v[0] / (v[0] + v[1])
}

#[test]
fn seed004_first_load_loses_its_weight_only_when_both_fio_share_a_cpu() {
    // With a CPU each (here the free host), test1 keeps 800/900 whatever
    // the seed: while its queue waits for its next request, some of its 8
    // requests are still in the drive, so bfq idles and injects nothing.
    for seed in [1, 2] {
        let s = first_load_share(0, seed);
        assert!(
            (s - 800.0 / 900.0).abs() < 0.01,
            "free host seed {seed}: {s:.4}"
        );
    }
    // On one CPU the run settles in one of two regimes (docs/fidelity/bfq.md,
    // "Seed 004"): test1's eight reads complete together while its fio waits
    // for the CPU, bfq finds the drive empty and injects test2, whose fio
    // then takes more of the CPU. Seeds 1-8 give 65.3, 67.4, 76.2, 88.8,
    // 88.7, 88.7, 86.4 and 88.9 %; the seed's table has 67.74 %. Over eight
    // seeds the low regime must show, and the high one stay at the weights
    // (which seed lands where moves with any change to the CPU model).
    let shares: Vec<f64> = (1..=8).map(|seed| first_load_share(1, seed)).collect();
    let low = shares.iter().cloned().fold(f64::MAX, f64::min);
    let high = shares.iter().cloned().fold(f64::MIN, f64::max);
    assert!(low < 0.75, "one CPU, seeds 1-8: {shares:?}");
    assert!(high > 0.87, "one CPU, seeds 1-8: {shares:?}");
}

fn with_cgroup_file(sched: &str, line: &str) -> Result<Scenario, String> {
    let text = format!(
        r#"
[[device]]
name = "nvme0n1"
devno = "259:0"
scheduler = "{sched}"
[device.model]
kind = "nullb"

[cgroup."/a"]
"io.bfq.weight" = "{line}"

[[job]]
cgroup = "/a"
cmdline = "--name=a --direct=1 --rw=randread --bs=4k --ioengine=libaio --iodepth=1 --runtime=10ms --time_based"
"#
    );
    Scenario::parse(&text, Path::new("inline.toml")).map_err(|e| e.to_string())
}

#[test]
fn io_bfq_weight_writes_are_checked_like_the_kernel() {
    assert!(with_cgroup_file("bfq", "default 800")
        .unwrap()
        .warnings
        .is_empty());
    // on a device without bfq: accepted, no effect, warned
    let sc = with_cgroup_file("none", "default 800").unwrap();
    assert!(
        sc.warnings
            .iter()
            .any(|w| w.contains("io.bfq.weight has no effect")),
        "{:?}",
        sc.warnings
    );
    for (line, sched, errno) in [
        ("1001", "bfq", "ERANGE"),
        ("default 0", "bfq", "ERANGE"),
        ("259:0 0", "bfq", "ERANGE"),
        ("259:0 lots", "bfq", "EINVAL"),
        ("8:0 100", "bfq", "ENODEV"),
        ("259:0 100", "none", "EOPNOTSUPP"),
    ] {
        let e = with_cgroup_file(sched, line).unwrap_err();
        assert!(e.contains(errno), "{line} on {sched}: {e}");
    }
}
