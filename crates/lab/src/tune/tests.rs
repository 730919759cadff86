use super::space::Qos;
use super::target::Target;
use super::*;

fn q(max: f64) -> Qos {
    Qos {
        rpct: 90.0,
        rlat_us: 1000,
        wpct: 90.0,
        wlat_us: 1000,
        min: 25.0,
        max,
        scale: None,
    }
}

fn scored(max: f64, p99: f64, mbps: f64, t: &Target) -> Scored {
    Scored {
        qos: q(max),
        worst: vec![p99],
        others_mbps: mbps,
        feasible: t.met(p99),
    }
}

#[test]
fn the_front_and_the_pick_on_a_table_worked_by_hand() {
    let t = Target::parse("p99<=5ms").unwrap();
    let s = vec![
        scored(50.0, 1.0, 10.0, &t), // front (lowest latency)
        scored(60.0, 2.0, 9.0, &t),  // dominated by 0
        scored(70.0, 4.0, 20.0, &t), // front, best feasible
        scored(80.0, 4.0, 20.0, &t), // same point as 2: not repeated
        scored(90.0, 9.0, 30.0, &t), // front, infeasible
    ];
    let o = pick(&[t], s);
    assert_eq!(o.front, vec![4, 2, 0]);
    assert_eq!(o.recommended, Some(2));
    assert!(o.binding.is_empty());
}

#[test]
fn with_no_feasible_setting_the_binding_target_and_its_best_value_are_named() {
    let lat = Target::parse("p99<=1ms").unwrap();
    let iops = Target::parse("iops>=100").unwrap();
    let mk = |p99: f64, io: f64, mbps: f64| Scored {
        qos: q(100.0),
        worst: vec![p99, io],
        others_mbps: mbps,
        feasible: false,
    };
    // iops is met by the first two; latency by none: latency binds, at its
    // best value anywhere (2 ms, the third candidate)
    let o = pick(
        &[lat.clone(), iops.clone()],
        vec![mk(3.0, 150.0, 1.0), mk(5.0, 120.0, 2.0), mk(2.0, 50.0, 3.0)],
    );
    assert_eq!(o.recommended, None);
    assert_eq!((o.binding, o.joint), (vec![(0, Some((2.0, 2)))], false));
    // each reachable alone, never together: latency's best among those
    // meeting iops is 3 ms (the first), iops's best among those meeting
    // latency is 50 (the second)
    let o = pick(&[lat, iops], vec![mk(3.0, 150.0, 1.0), mk(0.5, 50.0, 3.0)]);
    assert_eq!(
        (o.binding, o.joint),
        (vec![(0, Some((3.0, 0))), (1, Some((50.0, 1)))], true)
    );
}

/// cgB protected by `target`, vrate bounds from `min` x `max`, rlat 5 ms.
fn options(target: &str, min: &[f64], max: &[f64], seeds: u64) -> Options {
    Options {
        protect: vec!["/cgB".into()],
        targets: vec![Target::parse(target).unwrap()],
        space: Space {
            rpct: vec![90.0],
            rlat_us: vec![5000],
            min: min.to_vec(),
            max: max.to_vec(),
            ..Space::default()
        },
        seeds,
        phase: None,
    }
}

fn scenario_plan() -> Plan {
    let path = std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/tune-vrate.toml"
    ));
    Plan::load(path).unwrap()
}

/// Run the tuning and check the hand calculation's answer (below): max =
/// 40, cgA at the budget's 4000 - 100 reads a second, at most 10 % over.
fn hand_answer(setup: &Setup) -> Outcome {
    let built = setup.plan.clone().build().unwrap();
    let rows = built
        .run_all(&built.plan.runs(), 0, None, &|_, _| {})
        .unwrap();
    let out = setup.evaluate(&rows).unwrap();
    let r = &out.scored[out.recommended.expect("a feasible setting")];
    assert_eq!(r.qos.max, 40.0, "{}", render::table(setup, &out));
    let expect_mbps = (4000.0 - 100.0) * 4096.0 / 1048576.0;
    assert!(
        r.others_mbps >= expect_mbps && r.others_mbps < 1.1 * expect_mbps,
        "{}",
        r.others_mbps
    );
    out
}

/// The device does 5000 4 KiB random reads a second; iocost's model says
/// 10000. At vrate V % iocost lets 100·V of them through: up to V = 50 the
/// device keeps up and cgB's reads wait only their own 0.2 ms, above it the
/// device queue fills with cgA's 64 reads (12.8 ms ahead of each of cgB's).
/// With vrate pinned (min = max) at 25, 40, 60, 80 or 100 and cgB's p99 at
/// most 5 ms, the answer is the largest bound under 50: max = 40, where cgA
/// gets 4000 - 100 (cgB's) reads a second = 15.2 MiB/s. vrate starts at
/// 100 % and iocost moves it 4 % a period toward the bounds
/// (`ioc_adjust_base_vrate`, about 0.4 s here): fio's `ramp_time=2` keeps
/// that out of the figures. The simulator gives cgA about 8 % more than the
/// budget (4231/s at 40 %, 2605/s at 25 %): the hand figure is a floor, and
/// the check allows 10 % above it.
#[test]
fn the_tuner_finds_the_vrate_a_hand_calculation_gives() {
    let pinned = [25.0, 40.0, 60.0, 80.0, 100.0];
    let opts = options("p99<=5ms", &pinned, &pinned, 2);
    let setup = Setup::new(scenario_plan(), opts).unwrap();
    assert_eq!(
        (setup.protected.clone(), setup.others.clone()),
        (vec!["cgB".to_string()], vec!["cgA".to_string()])
    );
    let out = hand_answer(&setup);
    // every candidate above the device's 50 % misses the target
    for s in &out.scored {
        assert_eq!(s.feasible, s.qos.max < 50.0, "{:?}", s);
    }
    assert!(render::verdict(&setup, &out).contains("max=40"));
    let page = report::html(&setup, &out).unwrap();
    assert!(page.contains("<svg") && page.contains("Pareto front") && page.contains("max=40"));
}

#[test]
fn an_unreachable_target_names_the_best_achievable_value() {
    let opts = options("p99<=50us", &[25.0], &[25.0, 100.0], 1);
    let setup = Setup::new(scenario_plan(), opts).unwrap();
    let built = setup.plan.clone().build().unwrap();
    let rows = built
        .run_all(&built.plan.runs(), 1, None, &|_, _| {})
        .unwrap();
    let out = setup.evaluate(&rows).unwrap();
    assert_eq!(out.recommended, None);
    let v = render::verdict(&setup, &out);
    // the best is the lower of the two candidates' p99, named with its setting
    let best = out
        .scored
        .iter()
        .map(|s| s.worst[0])
        .fold(f64::MAX, f64::min);
    assert!(best > 0.2, "cgB's reads take at least the device's 0.2 ms");
    let want = format!("binding: p99<=50us — best achievable p99 {best:.2}ms");
    assert!(v.contains(&want), "{v}");
}

fn phased_plan() -> Plan {
    let path = std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/tune-vrate-phased.toml"
    ));
    Plan::load(path).unwrap()
}

/// The hand-computable case above with a warm-up phase instead of
/// `ramp_time`: the warm-up (cgA alone) takes vrate to the candidate's
/// bounds, and the measured phase starts there. `--phase measure` judges
/// that phase's jobs only: the warm-up's cgA is neither protected nor one
/// of the others whose throughput is maximised, and the answer is the hand
/// calculation's max = 40 again.
#[test]
fn tune_judges_only_the_named_phase() {
    let pinned = [25.0, 40.0, 60.0];
    let mut opts = options("p99<=5ms", &pinned, &pinned, 1);
    opts.phase = Some("measure".into());
    let setup = Setup::new(phased_plan(), opts).unwrap();
    assert_eq!(
        (setup.protected.clone(), setup.others.clone()),
        (
            vec!["measure/cgB".to_string()],
            vec!["measure/cgA".to_string()]
        )
    );
    hand_answer(&setup);

    // without --phase every phase's jobs count: the warm-up's cgA joins the others
    let all = Setup::new(phased_plan(), options("p99<=5ms", &pinned, &pinned, 1)).unwrap();
    assert_eq!(all.others, vec!["warmup/cgA", "measure/cgA"]);
}

#[test]
fn a_phase_that_is_not_there_is_an_error() {
    let mut opts = options("p99<=5ms", &[40.0], &[40.0], 1);
    opts.phase = Some("steady".into());
    let e = Setup::new(phased_plan(), opts).err().unwrap().to_string();
    assert_eq!(
        e,
        "--phase steady: no such phase (declared: warmup, measure)"
    );
    let mut opts = options("p99<=5ms", &[40.0], &[40.0], 1);
    opts.phase = Some("measure".into());
    let e = Setup::new(scenario_plan(), opts).err().unwrap().to_string();
    assert_eq!(e, "--phase measure: the scenario declares no [[phase]]");
    let mut opts = options("p99<=5ms", &[40.0], &[40.0], 1);
    opts.protect = vec!["/cgB".into()];
    opts.phase = Some("warmup".into());
    let e = Setup::new(phased_plan(), opts).err().unwrap().to_string();
    assert_eq!(e, "--protect /cgB: no job of phase warmup runs in it");
}
