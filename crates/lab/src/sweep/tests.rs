use super::*;

fn example() -> Plan {
    let p = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/iocost-busy-level.toml"
    ));
    let mut plan = Plan::load(p).unwrap();
    plan.combos = crate::compare::cross_product(
        "--param",
        &[
            "iocost.busy_level_fix=off,on".into(),
            "job.*.runtime=2,3".into(),
        ],
    )
    .unwrap();
    plan.seeds = 2;
    plan
}

fn quiet(_: usize, _: usize) {}

#[test]
fn run_order_is_combination_major_first_parameter_slowest() {
    let plan = example();
    let runs = plan.runs();
    assert_eq!(runs.len(), 8);
    assert_eq!((runs[5].combo, runs[5].seed_k), (2, 1));
    for r in &runs {
        assert_eq!(plan.run_spec(r.index).unwrap(), *r);
    }
    assert!(plan.run_spec(8).is_err());
    assert_eq!(
        plan.combos[2][0],
        ("iocost.busy_level_fix".into(), "on".into())
    );
    assert_eq!(plan.combos[1][1], ("job.*.runtime".into(), "3".into()));
}

#[test]
fn results_do_not_depend_on_workers_or_order() {
    let b = example().build().unwrap();
    let runs = b.plan.runs();
    let one = b.run_all(&runs, 1, None, &quiet).unwrap();
    let two = b.run_all(&runs, 2, None, &quiet).unwrap();
    assert_eq!(one, two);
    // each run alone, in reverse, gives the same rows
    let mut rev: Vec<RunRow> = runs.iter().rev().map(|r| b.run_one(*r).unwrap()).collect();
    rev.reverse();
    assert_eq!(one, rev);
    // the seeds differ, so the rows of a combination do too
    assert_ne!(one[0].metrics, one[1].metrics);
    assert_eq!((one[0].seed, one[1].seed), (1, 2));
}

#[test]
fn seed_index_zero_is_blklab_run() {
    let p = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/iocost-busy-level.toml"
    ));
    let sc = Scenario::load(p).unwrap();
    let out = crate::runner::run(&sc, &sc.config, None).unwrap();
    let b = Plan::load(p).unwrap().build().unwrap();
    let row = b.run_one(b.plan.runs()[0]).unwrap();
    assert_eq!(row.metrics, metrics::of(&out.groups));
    // the figures the summary prints: cgB-4k at 197 IOPS with the fix on
    // (197.9/s, truncated as fio's text prints it; the seed's jq rounds: 198)
    let iops = row
        .metrics
        .iter()
        .find(|(k, _)| k == "cgB-4k.iops")
        .unwrap()
        .1;
    assert_eq!(iops, 197.0);
}

#[test]
fn an_interrupted_sweep_resumes_from_its_cache() {
    let dir = std::env::temp_dir().join(format!("blklab-sweep-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let cache = cache::Cache::new(&dir).unwrap();
    let b = example().build().unwrap();
    let runs = b.plan.runs();
    let fresh = b.run_all(&runs, 2, None, &quiet).unwrap();
    // "interrupted": only the odd runs made it to the cache
    let odd: Vec<RunSpec> = runs.iter().copied().filter(|r| r.index % 2 == 1).collect();
    b.run_all(&odd, 2, Some(&cache), &quiet).unwrap();
    let files = std::fs::read_dir(dir.join(cache::Cache::scenario_hash(&b.plan)))
        .unwrap()
        .count();
    assert_eq!(files, odd.len());
    // a cached row is what is returned: poison one entry's metric and see it come back
    let k = cache.key(&b.plan, runs[1]);
    let mut poisoned = cache.get(&k).unwrap().unwrap();
    poisoned.metrics[0].1 = -1.0;
    cache.put(&k, &poisoned).unwrap();
    let resumed = b.run_all(&runs, 2, Some(&cache), &quiet).unwrap();
    assert_eq!(resumed[1].metrics[0].1, -1.0);
    cache.put(&k, &fresh[1]).unwrap();
    let resumed = b.run_all(&runs, 1, Some(&cache), &quiet).unwrap();
    assert_eq!(resumed, fresh);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_parameters_fail_before_anything_runs() {
    let mut plan = example();
    plan.combos = crate::compare::cross_product("--param", &["nosuch.key=1".into()]).unwrap();
    let e = plan.build().err().unwrap().to_string();
    assert!(e.contains("unknown key 'nosuch.key'"), "{e}");
    let mut plan = example();
    plan.combos = crate::compare::cross_product(
        "--param",
        &["cgroup./cgB.io.max=8:0 riops=100,8:0 riops=abc".into()],
    )
    .unwrap();
    let e = format!("{:#}", plan.build().err().unwrap());
    assert!(e.contains("riops=abc"), "{e}");
}
