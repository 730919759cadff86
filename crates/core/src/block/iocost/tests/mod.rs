//! Unit tests: the spec's §12.1 fixtures and §12.4 checklist, plus small
//! closed simulations (a fake device with a fixed latency and unlimited
//! parallelism, so iocost is the only bottleneck) for weight shares, work
//! conservation, donation and the busy_level fix.

use super::params::*;
use super::*;
use crate::block::bio::{Op, Origin};
use crate::block::ioprio::Ioprio;
use crate::block::testutil::tree_with;
use crate::sim::kerr::Errno;
use crate::sim::trace::{TraceSink, Tracer};

const SEED_MODEL: &str =
    "8:0 ctrl=user model=linear rbps=173471131 rseqiops=3566 rrandiops=3566 wbps=173333269 wseqiops=3566 wrandiops=3566";
const SEED_QOS: &str =
    "8:0 enable=1 ctrl=user rpct=90 rlat=3500 wpct=90 wlat=3500 min=80 max=10000";

fn dev(rot: bool, qd: u32) -> DeviceInfo {
    DeviceInfo {
        rotational: rot,
        nr_requests: 256,
        queue_depth: qd,
        max_sectors_kb: 1280,
        ..crate::block::testutil::device("sdb", 8, 0)
    }
}

fn build(
    files: &[(&str, &str, &str)],
    d: &DeviceInfo,
) -> Result<Option<IoCost>, (CgId, String, KernelError)> {
    IoCost::new(d, &tree_with(files), Hz(1000), &Switches::default())
}

fn seed() -> IoCost {
    build(
        &[
            ("/", "io.cost.model", SEED_MODEL),
            ("/", "io.cost.qos", SEED_QOS),
        ],
        &dev(false, 128),
    )
    .unwrap()
    .unwrap()
}

fn qos_err(body: &str) -> Errno {
    let mut ioc = seed();
    ioc.apply_qos_body(body, 0).unwrap_err().errno
}

// ---------------------------------------------------------------- parsing

#[test]
fn qos_parsing_checklist() {
    let mut ioc = seed();
    assert_eq!(
        ioc.read_cost_qos(),
        "8:0 enable=1 ctrl=user rpct=90.00 rlat=3500 wpct=90.00 wlat=3500 min=80.00 max=10000.00"
    );
    ioc.apply_qos_body("rpct=100.001", 0).unwrap();
    assert_eq!(ioc.qos[QOS_RPPM], 1_000_000);
    assert!(ioc.read_cost_qos().contains("rpct=100.00 "));
    assert_eq!(qos_err("rpct=101"), Errno::Einval);
    ioc.apply_qos_body("min=0.5", 0).unwrap();
    assert!(
        ioc.read_cost_qos().contains("min=1.00 "),
        "{}",
        ioc.read_cost_qos()
    );
    assert_eq!(qos_err("min=90 max=80"), Errno::Einval);
    assert_eq!(qos_err("ctrl=maybe"), Errno::Einval);
    assert_eq!(qos_err("foo=1"), Errno::Einval);
    assert_eq!(qos_err("rlat=abc"), Errno::Einval);
    assert_eq!(qos_err("rpct="), Errno::Einval);
    assert_eq!(qos_err("min=-1"), Errno::Einval);
    // max above 10000 % is clamped, not rejected
    ioc.apply_qos_body("max=20000", 0).unwrap();
    assert_eq!(ioc.qos[QOS_MAX], VRATE_MAX_PPM as u32);
    // rlat is a u32: silently truncated
    ioc.apply_qos_body("rlat=4294967297", 0).unwrap();
    assert_eq!(ioc.qos[QOS_RLAT], 1);
    // hex / octal like the kernel's match_u64 (base 0)
    ioc.apply_qos_body("wlat=0x10 rlat=010", 0).unwrap();
    assert_eq!((ioc.qos[QOS_WLAT], ioc.qos[QOS_RLAT]), (16, 8));
    // a failed write applies nothing
    let before = ioc.read_cost_qos();
    assert!(ioc.apply_qos_body("rlat=5 bogus", 0).is_err());
    assert_eq!(ioc.read_cost_qos(), before);
    // ctrl=auto brings the preset back (a later parameter key would set user again)
    ioc.apply_qos_body("ctrl=auto", 0).unwrap();
    assert_eq!(
        ioc.read_cost_qos(),
        "8:0 enable=1 ctrl=auto rpct=0.00 rlat=25000 wpct=0.00 wlat=25000 min=1.00 max=10000.00"
    );
    ioc.apply_qos_body("ctrl=auto rpct=50", 0).unwrap();
    assert!(ioc.read_cost_qos().contains("ctrl=user rpct=50.00"));
    ioc.apply_qos_body("enable=0", 0).unwrap();
    assert!(!ioc.enabled());
}

#[test]
fn parse_float_like_the_kernel() {
    assert_eq!(cgroup_parse_float("90", 2), Ok(9000));
    assert_eq!(cgroup_parse_float("90.5", 2), Ok(9050));
    assert_eq!(cgroup_parse_float("95.00", 2), Ok(9500));
    assert_eq!(cgroup_parse_float("100.001", 2), Ok(10000));
    assert_eq!(cgroup_parse_float("99.995", 2), Ok(10000));
    assert_eq!(cgroup_parse_float("1.05", 2), Ok(105));
    assert_eq!(cgroup_parse_float("90abc", 2), Ok(9000)); // sscanf stops at the junk
    assert_eq!(cgroup_parse_float("1.-5", 2), Err(()));
    assert_eq!(cgroup_parse_float("x", 2), Err(()));
    assert_eq!(cgroup_parse_float("-2", 2), Ok(-200));
}

#[test]
fn model_parsing_and_printing() {
    let mut ioc = seed();
    assert_eq!(ioc.read_cost_model(), SEED_MODEL);
    assert_eq!(
        ioc.apply_model_body("model=foo", 0).unwrap_err().errno,
        Errno::Einval
    );
    assert_eq!(
        ioc.apply_model_body("rbps=1.5", 0).unwrap_err().errno,
        Errno::Einval
    );
    assert_eq!(
        ioc.apply_model_body("xbps=1", 0).unwrap_err().errno,
        Errno::Einval
    );
    ioc.apply_model_body("ctrl=auto", 0).unwrap();
    assert_eq!(
        ioc.read_cost_model(),
        "8:0 ctrl=auto model=linear rbps=488636629 rseqiops=8932 rrandiops=8518 wbps=427891549 wseqiops=28755 wrandiops=21940"
    );
    // zero is accepted and zeroes that coefficient
    ioc.apply_model_body("rrandiops=0", 0).unwrap();
    assert_eq!(ioc.lcoefs[LCOEF_RRANDIO], 0);
    assert!(ioc.read_cost_model().starts_with("8:0 ctrl=user"));
}

#[test]
fn weight_parsing() {
    assert_eq!(
        parse_weight_line("default 50").unwrap(),
        WeightLine::Default(50)
    );
    assert_eq!(parse_weight_line("200").unwrap(), WeightLine::Default(200));
    assert_eq!(parse_weight_line("0").unwrap_err().errno, Errno::Einval);
    assert_eq!(parse_weight_line("10001").unwrap_err().errno, Errno::Einval);
    assert_eq!(
        parse_weight_line("default").unwrap_err().errno,
        Errno::Einval
    );
    assert_eq!(
        parse_weight_line("8:0 300").unwrap(),
        WeightLine::Dev((8, 0), 300)
    );
    assert_eq!(
        parse_weight_line("8:0 default").unwrap(),
        WeightLine::Dev((8, 0), 0)
    );
    assert_eq!(parse_weight_line("8:0 0").unwrap_err().errno, Errno::Einval);
    assert_eq!(
        parse_weight_line("sda 10").unwrap_err().errno,
        Errno::Einval
    );

    let d = dev(false, 128);
    let mut ioc = build(
        &[
            ("/", "io.cost.qos", "8:0 enable=1"),
            ("/a", "io.weight", "default 50"),
            ("/a", "io.weight", "8:0 300"),
            ("/b", "io.weight", "8:1 300"),
        ],
        &d,
    )
    .unwrap()
    .unwrap();
    assert_eq!(ioc.read_weight(1), "default 50\n8:0 300");
    assert_eq!(ioc.read_weight(2), "default 100");
    assert_eq!(ioc.iocgs[1].weight, 300 * WEIGHT_ONE);
    // writing "8:0 default" clears the override
    let tree = tree_with(&[("/a", "io.weight", ""), ("/b", "io.weight", "")]);
    let sw = Switches::default();
    let mut tr = Tracer::default();
    let mut ctx = crate::block::testutil::ctx(0, &d, &tree, &sw, &mut tr);
    assert_eq!(
        ioc.write_file(&mut ctx, 1, "io.weight", "8:0 default"),
        Some(Ok(()))
    );
    assert_eq!(ioc.read_weight(1), "default 50");
    assert_eq!(ioc.iocgs[1].weight, 50 * WEIGHT_ONE);
    assert_eq!(ioc.write_file(&mut ctx, 1, "io.weight", "8:1 20"), None);
    assert_eq!(
        ioc.write_file(&mut ctx, 0, "io.cost.qos", "8:0 rpct=101")
            .unwrap()
            .unwrap_err()
            .errno,
        Errno::Einval
    );
    assert_eq!(ioc.write_file(&mut ctx, 1, "io.max", "8:0 riops=1"), None);
}

#[test]
fn construction_errors_and_absence() {
    let d = dev(false, 128);
    assert!(build(&[], &d).unwrap().is_none());
    assert!(build(&[("/", "io.cost.qos", "8:1 enable=1")], &d)
        .unwrap()
        .is_none());
    let e = build(&[("/", "io.cost.qos", "8:0 enable=1 rpct=101")], &d).unwrap_err();
    assert_eq!(
        (e.0, e.1.as_str(), e.2.errno),
        (0, "io.cost.qos", Errno::Einval)
    );
    let e = build(&[("/a", "io.weight", "8:0 50")], &d).unwrap_err();
    assert_eq!(
        (e.0, e.1.as_str(), e.2.errno),
        (1, "io.weight", Errno::Eopnotsupp)
    );
    let e = build(
        &[
            ("/", "io.cost.qos", "8:0 enable=1"),
            ("/a", "io.weight", "0"),
        ],
        &d,
    )
    .unwrap_err();
    assert_eq!((e.0, e.1.as_str()), (1, "io.weight"));
    // initialized but disabled: present, bypassing
    let ioc = build(&[("/", "io.cost.model", "8:0 rbps=1000000")], &d)
        .unwrap()
        .unwrap();
    assert!(!ioc.enabled());
}

#[test]
fn autop_presets_by_device_class() {
    let pick = |rot, qd| {
        let ioc = build(&[("/", "io.cost.qos", "8:0 enable=1")], &dev(rot, qd))
            .unwrap()
            .unwrap();
        (ioc.autop_idx, ioc.period_us, ioc.read_cost_model())
    };
    let (i, p, m) = pick(true, 32);
    assert_eq!((i, p), (AUTOP_HDD, 500_000));
    assert!(m.contains("rbps=174019176 rseqiops=41708 rrandiops=370"));
    assert_eq!(pick(false, 1).0, AUTOP_SSD_QD1);
    assert_eq!(pick(false, 1).1, 50_000);
    assert_eq!(pick(false, 64).0, AUTOP_SSD_DFL);
    // 4 KiB random read costs per preset (µs at 100 %): HDD 2702.7, QD1 144.0, DFL 117.4, FAST 1.3
    let us10 = |idx: usize| {
        let c = cost::lcoefs_from(&AUTOP[idx].i_lcoefs);
        (cost::vtime_cost(&c, Op::Read, 1 << 30, 4096, 1, false) * 10 + VTIME_PER_USEC / 2)
            / VTIME_PER_USEC
    };
    assert_eq!(
        [
            us10(AUTOP_HDD),
            us10(AUTOP_SSD_QD1),
            us10(AUTOP_SSD_DFL),
            us10(AUTOP_SSD_FAST)
        ],
        [27027, 1440, 1174, 13]
    );
}

// ------------------------------------------------------- period and costs

#[test]
fn periods_from_qos() {
    let mut ioc = seed();
    assert_eq!((ioc.period_us, ioc.timer_slack_ns), (7_000, 70_000));
    ioc.apply_qos_body("rpct=0 rlat=25000 wpct=0 wlat=25000", 0)
        .unwrap();
    assert_eq!(ioc.period_us, 50_000);
    ioc.apply_qos_body("rlat=0 wlat=0", 0).unwrap();
    assert_eq!(ioc.period_us, 1_000);
    ioc.apply_qos_body("rpct=80 rlat=10000 wpct=80 wlat=10000", 0)
        .unwrap();
    assert_eq!(ioc.period_us, 40_000);
    ioc.apply_qos_body("rpct=75 rlat=1000 wlat=1000", 0)
        .unwrap();
    assert_eq!(ioc.period_us, 5_000);
    ioc.apply_qos_body("rpct=50 rlat=200000 wlat=1000", 0)
        .unwrap();
    assert_eq!(ioc.period_us, 1_000_000); // 10 x 200 ms, clamped to 1 s
}

#[test]
fn seed_costs_exact() {
    let ioc = seed();
    let c = &ioc.lcoefs;
    assert_eq!(
        (c[LCOEF_RPAGE], c[LCOEF_RSEQIO], c[LCOEF_RRANDIO]),
        (3_245_159, 35_296_332, 35_296_332)
    );
    assert_eq!(
        (c[LCOEF_WPAGE], c[LCOEF_WSEQIO], c[LCOEF_WRANDIO]),
        (3_247_766, 35_293_725, 35_293_725)
    );
    let rand = |bytes: u32| cost::vtime_cost(c, Op::Read, 1 << 30, bytes, 8, false);
    assert_eq!(
        [rand(4096), rand(32 << 10), rand(256 << 10), rand(1 << 20)],
        [38_541_491, 61_257_604, 242_986_508, 866_057_036]
    );
    // first bio of an iocg (cursor 0) is sequential; merges pay only the size
    assert_eq!(
        cost::vtime_cost(c, Op::Read, 1 << 30, 4096, 0, false),
        38_541_491
    );
    assert_eq!(
        cost::vtime_cost(c, Op::Read, 1 << 30, 4096, 8, true),
        3_245_159
    );
    assert_eq!(cost::vtime_cost(c, Op::Flush, 0, 4096, 0, false), 0);
    assert_eq!(cost::vtime_cost(c, Op::Read, 0, 0, 0, false), 0);
    assert_eq!(
        cost::size_vtime_cost(c, Op::Read, 4096) / VTIME_PER_NSEC,
        23_687
    );
    assert_eq!(
        cost::size_vtime_cost(c, Op::Read, 1 << 20) / VTIME_PER_NSEC,
        6_063_946
    );
    assert_eq!(
        (ioc.margins.min, ioc.margins.low, ioc.margins.target),
        (96_206_600, 192_413_200, 481_033_000)
    );
    assert_eq!((ioc.vrate_min, ioc.vrate_max), (109_951, 13_743_800));
}

#[test]
fn vrate_stepping_matches_thread() {
    let d = dev(false, 128);
    let tree = CgroupTree::new();
    let sw = Switches::default();
    let sink = Shared::default();
    let mut tr = Tracer::new(Some(Box::new(sink.clone())));
    let mut ctx = crate::block::testutil::ctx(0, &d, &tree, &sw, &mut tr);
    let mut ioc = seed();
    ioc.vtime_base_rate = 175_247; // prints as 127.50 %
    assert_eq!(trace::vrate_pct_str(ioc.vtime_base_rate), "127.50%");
    let mut seen = vec![];
    for busy in [4, 5] {
        let prev = ioc.busy_level;
        ioc.busy_level = busy;
        ioc.adjust_base_vrate(&mut ctx, 0, 3, 1, prev, [1_000_000, 1_000_000]);
        seen.push(trace::vrate_pct_str(ioc.vtime_base_rate));
    }
    assert_eq!(seen, ["126.23%", "124.97%"]);
    let lines = sink.0.borrow();
    assert!(lines[0].ends_with(
        "iocost_ioc_vrate_adj: [sdb] vrate=175247->173495 busy=4 missed_ppm=1000000:1000000 rq_wait_pct=0 lagging=3 shortages=1"
    ));
    assert!(lines[1].ends_with(
        "iocost_ioc_vrate_adj_pct: [sdb] vrate=127.50%->126.23% busy=4 missed_ppm=1000000:1000000 rq_wait_pct=0 lagging=3 shortages=1"
    ));
    assert!(lines[3].ends_with("[sdb] vrate=126.23%->124.97% busy=5 missed_ppm=1000000:1000000 rq_wait_pct=0 lagging=3 shortages=1"));
    drop(lines);
    // clamping: the step never crosses min, out-of-range vrates come back by 4 %
    ioc.vtime_base_rate = 110_000;
    ioc.busy_level = 60;
    ioc.adjust_base_vrate(&mut ctx, 0, 0, 0, 60, [0, 0]);
    assert_eq!(ioc.vtime_base_rate, ioc.vrate_min);
    ioc.vtime_base_rate = 100_000;
    ioc.adjust_base_vrate(&mut ctx, 0, 0, 0, 60, [0, 0]);
    assert_eq!(ioc.vtime_base_rate, 104_000);
    // busy_level within -3..3 moves nothing
    ioc.vtime_base_rate = 137_438;
    ioc.busy_level = -3;
    ioc.adjust_base_vrate(&mut ctx, 0, 0, 1, -2, [0, 0]);
    assert_eq!(ioc.vtime_base_rate, 137_438);
}

#[test]
fn hweights_flat_and_nested() {
    let d = dev(false, 128);
    let mut ioc = build(
        &[
            ("/", "io.cost.qos", "8:0 enable=1"),
            ("/a", "io.weight", "100"),
            ("/b", "io.weight", "300"),
            ("/b/x", "io.weight", "100"),
            ("/b/y", "io.weight", "100"),
        ],
        &d,
    )
    .unwrap()
    .unwrap();
    let now = ioc.ioc_now(0);
    // activate a, b/x, b/y by hand (leaf-only)
    for idx in [1usize, 3, 4] {
        ioc.iocgs[idx].on_active = true;
        let w = ioc.iocgs[idx].weight;
        ioc.propagate_weights(idx, w, w, true, &now);
    }
    assert_eq!(ioc.current_hweight(1), (16384, 16384));
    assert_eq!(ioc.current_hweight(3), (24576, 24576));
    assert_eq!(ioc.current_hweight(4), (24576, 24576));
    // a donates half its weight: others' hwi grow, hwa unchanged
    ioc.propagate_weights(1, 100 * WEIGHT_ONE, 50 * WEIGHT_ONE, true, &now);
    let (hwa, hwi) = ioc.current_hweight(1);
    assert_eq!(hwa, 16384);
    assert_eq!(hwi, 65536 * 50 / 350);
    assert_eq!(ioc.current_hweight_max(1), 16384);
    assert_eq!(ioc.current_hweight(3).1, 65536 * 150 / 350);
}

mod donation_usage;
mod harness;
use harness::Shared;
mod shares;
mod trace_vrate;
mod vrate_comp;
mod warm;
