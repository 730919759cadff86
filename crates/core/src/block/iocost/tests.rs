//! Unit tests: the spec's §12.1 fixtures and §12.4 checklist, plus small
//! closed simulations (a fake device with a fixed latency and unlimited
//! parallelism, so iocost is the only bottleneck) for weight shares, work
//! conservation, donation and the busy_level fix.

use std::cell::RefCell;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::rc::Rc;

use super::params::*;
use super::*;
use crate::block::bio::{Op, Origin};
use crate::block::ioprio::Ioprio;
use crate::sim::kerr::Errno;
use crate::sim::trace::{TraceSink, Tracer};

const SEED_MODEL: &str =
    "8:0 ctrl=user model=linear rbps=173471131 rseqiops=3566 rrandiops=3566 wbps=173333269 wseqiops=3566 wrandiops=3566";
const SEED_QOS: &str =
    "8:0 enable=1 ctrl=user rpct=90 rlat=3500 wpct=90 wlat=3500 min=80 max=10000";

fn dev(rot: bool, qd: u32) -> DeviceInfo {
    DeviceInfo {
        name: "sdb".into(),
        major: 8,
        minor: 0,
        rotational: rot,
        nr_requests: 256,
        queue_depth: qd,
        nr_hw_queues: 1,
        max_sectors_kb: 1280,
        logical_block_size: 512,
        capacity_bytes: 1 << 40,
    }
}

fn tree_with(files: &[(&str, &str, &str)]) -> CgroupTree {
    let mut t = CgroupTree::new();
    for (path, file, content) in files {
        let id = t.ensure(path).unwrap();
        t.write_file(id, file, content);
    }
    t
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
    let mut ctx = Ctx {
        now: 0,
        hz: Hz(1000),
        dev: &d,
        cgroups: &tree,
        switches: &sw,
        trace: &mut tr,
    };
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
    let mut ctx = Ctx {
        now: 0,
        hz: Hz(1000),
        dev: &d,
        cgroups: &tree,
        switches: &sw,
        trace: &mut tr,
    };
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

// ------------------------------------------------------- small simulation

#[derive(Clone, Default)]
struct Shared(Rc<RefCell<Vec<String>>>);
impl TraceSink for Shared {
    fn event(&mut self, t: Ns, name: &str, payload: &str) {
        self.0
            .borrow_mut()
            .push(crate::sim::trace::format_line(t, name, payload));
    }
}

enum Load {
    /// `qd` IOs always outstanding (fio iodepth) from `from` until `until`.
    Closed { qd: u32, until: Ns },
    /// One IO every `gap` ns, at most one outstanding, until `until`.
    Open { gap: Ns, until: Ns },
}

struct Sim {
    tree: CgroupTree,
    dev: DeviceInfo,
    sw: Switches,
    tracer: Tracer,
    ioc: IoCost,
    now: Ns,
    bios: Vec<Option<Bio>>,
    /// device completions (time, seq, bio id)
    events: BinaryHeap<Reverse<(Ns, u64, BioId)>>,
    /// open-loop submissions (time, seq, cg)
    arrivals: BinaryHeap<Reverse<(Ns, u64, CgId)>>,
    seq: u64,
    dev_lat: Ns,
    bytes: u32,
    loads: BTreeMap<CgId, Load>,
    done: BTreeMap<CgId, u64>,
    next_sector: u64,
    /// completions per cgroup with completion time inside [win.0, win.1)
    win: (Ns, Ns),
}

impl Sim {
    fn new(files: &[(&str, &str, &str)], dev_lat: Ns, bytes: u32, trace: bool) -> Sim {
        let tree = tree_with(files);
        let dev = dev(false, 1024);
        let sw = Switches::default();
        let ioc = IoCost::new(&dev, &tree, Hz(1000), &sw).unwrap().unwrap();
        let tracer = if trace {
            Tracer::new(Some(Box::new(Shared::default())))
        } else {
            Tracer::default()
        };
        Sim {
            tree,
            dev,
            sw,
            tracer,
            ioc,
            now: 0,
            bios: Vec::new(),
            events: BinaryHeap::new(),
            arrivals: BinaryHeap::new(),
            seq: 0,
            dev_lat,
            bytes,
            loads: BTreeMap::new(),
            done: BTreeMap::new(),
            next_sector: 0,
            win: (0, u64::MAX),
        }
    }

    fn submit(&mut self, cg: CgId) {
        // far apart: every IO is random for the model
        self.next_sector += 1 << 20;
        let bio = {
            let mut b = Bio::new(
                0,
                cg,
                Op::Read,
                self.next_sector,
                self.bytes,
                Origin::Kernel { tag: 0 },
            );
            (b.t_submit, b.t_queue) = (self.now, self.now);
            b
        };
        let id = match self.bios.iter().position(|b| b.is_none()) {
            Some(i) => i,
            None => {
                self.bios.push(None);
                self.bios.len() - 1
            }
        } as BioId;
        let mut bio = bio;
        let mut ctx = Ctx {
            now: self.now,
            hz: Hz(1000),
            dev: &self.dev,
            cgroups: &self.tree,
            switches: &self.sw,
            trace: &mut self.tracer,
        };
        let v = self.ioc.throttle(&mut ctx, id, &mut bio);
        self.bios[id as usize] = Some(bio);
        if v == QosVerdict::Proceed {
            self.issue(id);
        }
    }

    fn issue(&mut self, id: BioId) {
        let b = self.bios[id as usize].as_mut().unwrap();
        b.t_issue = self.now;
        self.seq += 1;
        self.events
            .push(Reverse((self.now + self.dev_lat, self.seq, id)));
    }

    fn complete(&mut self, id: BioId) {
        let bio = self.bios[id as usize].take().unwrap();
        let rq = Request {
            dev: 0,
            op: bio.op,
            cg: bio.cg,
            ioprio: bio.ioprio,
            sector: bio.sector,
            bytes: bio.bytes,
            sync: true,
            bios: vec![id],
            start_time: bio.t_issue,
            alloc_time: bio.t_issue,
            insert_time: bio.t_issue,
            issue_time: bio.t_issue,
            fifo_time: 0,
            done_time: self.now,
        };
        let mut rel = Vec::new();
        let mut ctx = Ctx {
            now: self.now,
            hz: Hz(1000),
            dev: &self.dev,
            cgroups: &self.tree,
            switches: &self.sw,
            trace: &mut self.tracer,
        };
        let ioc = &mut self.ioc;
        ioc.done_bio(&mut ctx, &bio, &mut rel);
        ioc.done(&mut ctx, &rq, &mut rel);
        assert!(rel.is_empty());
        if self.now >= self.win.0 && self.now < self.win.1 {
            *self.done.entry(bio.cg).or_default() += 1;
        }
        match self.loads.get(&bio.cg) {
            Some(Load::Closed { until, .. }) if self.now < *until => self.submit(bio.cg),
            _ => {}
        }
    }

    fn start(&mut self) {
        let loads: Vec<(CgId, u32, Ns)> = self
            .loads
            .iter()
            .map(|(&cg, l)| match l {
                Load::Closed { qd, .. } => (cg, *qd, 0),
                Load::Open { gap, .. } => (cg, 0, *gap),
            })
            .collect();
        for (cg, qd, gap) in loads {
            for _ in 0..qd {
                self.submit(cg);
            }
            if gap > 0 {
                self.seq += 1;
                self.arrivals.push(Reverse((0, self.seq, cg)));
            }
        }
    }

    fn run_until(&mut self, end: Ns) {
        loop {
            let t_ev = self.events.peek().map(|Reverse((t, _, _))| *t);
            let t_arr = self.arrivals.peek().map(|Reverse((t, _, _))| *t);
            let t_tm = self.ioc.next_timer();
            let t = [t_ev, t_arr, t_tm].into_iter().flatten().min();
            let Some(t) = t else { break };
            if t >= end {
                break;
            }
            assert!(t >= self.now, "time went backwards");
            self.now = t;
            if t_tm == Some(t) {
                let mut rel = Vec::new();
                let mut ctx = Ctx {
                    now: self.now,
                    hz: Hz(1000),
                    dev: &self.dev,
                    cgroups: &self.tree,
                    switches: &self.sw,
                    trace: &mut self.tracer,
                };
                self.ioc.timer(&mut ctx, &mut rel);
                for id in rel {
                    self.issue(id);
                }
            } else if t_ev == Some(t) {
                let Reverse((_, _, id)) = self.events.pop().unwrap();
                self.complete(id);
            } else {
                let Reverse((_, _, cg)) = self.arrivals.pop().unwrap();
                if let Some(Load::Open { gap, until }) = self.loads.get(&cg) {
                    let (gap, until) = (*gap, *until);
                    if t < until {
                        self.submit(cg);
                        self.seq += 1;
                        self.arrivals.push(Reverse((t + gap, self.seq, cg)));
                    }
                }
            }
        }
        self.now = end;
    }

    fn count(&self, cg: CgId) -> u64 {
        self.done.get(&cg).copied().unwrap_or(0)
    }
}

/// The model below: 4 KiB random reads cost exactly 1 ms at 100 % (1000 IOPS).
const MODEL_1K: &str = "8:0 ctrl=user model=linear rbps=4096000000 rseqiops=1000 rrandiops=1000 wbps=4096000000 wseqiops=1000 wrandiops=1000";
const QOS_FIXED: &str = "8:0 enable=1 ctrl=user rpct=0 rlat=5000 wpct=0 wlat=5000 min=100 max=100";
const MS: Ns = 1_000_000;
const SEC: Ns = 1_000_000_000;

fn within(v: u64, want: u64, pct: u64) -> bool {
    v * 100 >= want * (100 - pct) && v * 100 <= want * (100 + pct)
}

#[test]
fn weight_shares_with_fixed_vrate() {
    let mut s = Sim::new(
        &[
            ("/", "io.cost.model", MODEL_1K),
            ("/", "io.cost.qos", QOS_FIXED),
            ("/a", "io.weight", "100"),
            ("/b", "io.weight", "300"),
        ],
        100_000,
        4096,
        false,
    );
    s.loads.insert(
        1,
        Load::Closed {
            qd: 16,
            until: u64::MAX,
        },
    );
    s.loads.insert(
        2,
        Load::Closed {
            qd: 16,
            until: u64::MAX,
        },
    );
    s.win = (500 * MS, 2500 * MS);
    s.start();
    s.run_until(2500 * MS);
    let (a, b) = (s.count(1), s.count(2));
    // 2 s at the model's 1000 IOPS, split 1:3
    assert!(within(a + b, 2000, 1), "total {}", a + b);
    assert!(within(a * 3, b, 2), "a={a} b={b}");
    assert_eq!(s.ioc.vrate(), VTIME_PER_USEC);
    // iocost held the excess in its waitq: the submitters slept
    assert!(s.ioc.iocgs[1].waitq.len() + s.ioc.iocgs[2].waitq.len() > 20);
}

#[test]
fn idle_sibling_share_goes_to_the_active_one() {
    let mut s = Sim::new(
        &[
            ("/", "io.cost.model", MODEL_1K),
            ("/", "io.cost.qos", QOS_FIXED),
            ("/a", "io.weight", "100"),
            ("/b", "io.weight", "100"),
        ],
        100_000,
        4096,
        false,
    );
    s.loads.insert(
        1,
        Load::Closed {
            qd: 16,
            until: u64::MAX,
        },
    );
    s.loads.insert(
        2,
        Load::Closed {
            qd: 16,
            until: 1000 * MS,
        },
    );
    s.win = (300 * MS, 900 * MS);
    s.start();
    s.run_until(900 * MS);
    assert!(
        within(s.count(1), 300, 3) && within(s.count(2), 300, 3),
        "{:?}",
        s.done
    );
    s.done.clear();
    s.win = (1300 * MS, 2300 * MS);
    s.run_until(2300 * MS);
    // b went idle and was deactivated: a alone gets the whole model rate
    assert!(!s.ioc.iocgs[2].on_active);
    assert!(within(s.count(1), 1000, 2), "{:?}", s.done);
    assert_eq!(s.count(2), 0);
}

#[test]
fn donation_gives_unused_share_to_the_busy_sibling() {
    let mut s = Sim::new(
        &[
            ("/", "io.cost.model", MODEL_1K),
            ("/", "io.cost.qos", QOS_FIXED),
            ("/a", "io.weight", "100"),
            ("/b", "io.weight", "100"),
        ],
        100_000,
        4096,
        true,
    );
    let sink = Shared::default();
    s.tracer = Tracer::new(Some(Box::new(sink.clone())));
    s.loads.insert(
        1,
        Load::Closed {
            qd: 16,
            until: u64::MAX,
        },
    );
    // b: 100 IOPS, 10 % of the device
    s.loads.insert(
        2,
        Load::Open {
            gap: 10 * MS,
            until: u64::MAX,
        },
    );
    s.win = (1000 * MS, 3000 * MS);
    s.start();
    s.run_until(3000 * MS);
    let (a, b) = (s.count(1), s.count(2));
    assert!(within(b, 200, 2), "b={b}");
    // without donation a would be held to 50 % (1000 IOs in 2 s)
    assert!(a > 1600, "a={a} b={b}");
    assert!(a + b <= 2040, "a={a} b={b}");
    let lines = sink.0.borrow();
    assert!(
        lines
            .iter()
            .any(|l| l.contains("iocost_inuse_transfer: [sdb:/b]")),
        "no transfer"
    );
    assert!(lines
        .iter()
        .any(|l| l.contains("iocost_iocg_activate: [sdb:/a]")));
}

/// A period with no completions while IOs are lagging: before the fix the
/// "QoS met" branch resets busy_level to 0; with it busy_level is kept and a
/// positive value still cuts vrate.
fn no_completion_period(fix: &str) -> (i32, u64, Vec<String>) {
    let tree = tree_with(&[
        ("/", "io.cost.model", SEED_MODEL),
        ("/", "io.cost.qos", SEED_QOS),
        ("/a", "io.weight", "100"),
    ]);
    let d = dev(false, 128);
    let mut sw = Switches::default();
    sw.set("iocost.busy_level_fix", fix).unwrap();
    let sink = Shared::default();
    let mut tr = Tracer::new(Some(Box::new(sink.clone())));
    let mut ioc = IoCost::new(&d, &tree, Hz(1000), &sw).unwrap().unwrap();
    let mk = |sector: u64, bytes: u32| {
        Bio::new(0, 1, Op::Read, sector, bytes, Origin::Kernel { tag: 0 })
    };
    let mut ctx = Ctx {
        now: SEC,
        hz: Hz(1000),
        dev: &d,
        cgroups: &tree,
        switches: &sw,
        trace: &mut tr,
    };
    // one 256 KiB read fits the initial budget and stays in flight forever
    let mut b0 = mk(1 << 20, 256 << 10);
    assert_eq!(ioc.throttle(&mut ctx, 0, &mut b0), QosVerdict::Proceed);
    // three 1 MiB reads wait in iocost
    for i in 1..4u32 {
        let mut b = mk((i as u64) << 24, 1 << 20);
        assert_eq!(ioc.throttle(&mut ctx, i, &mut b), QosVerdict::Wait);
    }
    ioc.busy_level = 4; // as after four busy periods
    let v0 = ioc.vrate();
    let mut released = Vec::new();
    // run timers until the first period timer has fired
    while ioc.cur_period == 0 {
        let t = ioc.next_timer().unwrap();
        let mut ctx = Ctx {
            now: t,
            hz: Hz(1000),
            dev: &d,
            cgroups: &tree,
            switches: &sw,
            trace: &mut tr,
        };
        ioc.timer(&mut ctx, &mut released);
    }
    assert_eq!(
        released,
        vec![1],
        "the first 1 MiB read was woken by its waitq timer"
    );
    let lines = sink.0.borrow().clone();
    let _ = v0;
    (ioc.busy_level, ioc.vrate(), lines)
}

#[test]
fn busy_level_fix_off_resets_on_empty_period() {
    let (busy, vrate, lines) = no_completion_period("off");
    assert_eq!(busy, 0);
    assert_eq!(vrate, VTIME_PER_USEC);
    let adj: Vec<_> = lines
        .iter()
        .filter(|l| l.contains("iocost_ioc_vrate_adj: "))
        .collect();
    assert_eq!(adj.len(), 1, "{lines:#?}");
    assert!(
        adj[0].ends_with(
            "[sdb] vrate=137438->137438 busy=0 missed_ppm=0:0 rq_wait_pct=0 lagging=1 shortages=1"
        ),
        "{}",
        adj[0]
    );
}

#[test]
fn busy_level_fix_on_keeps_level_and_cuts_vrate() {
    let (busy, vrate, lines) = no_completion_period("on");
    assert_eq!(busy, 4);
    assert_eq!(vrate, div_round_up(VTIME_PER_USEC * 99, 100));
    assert!(lines.iter().any(|l| l.ends_with(
        "[sdb] vrate=137438->136064 busy=4 missed_ppm=0:0 rq_wait_pct=0 lagging=1 shortages=1"
    )));
    assert!(lines.iter().any(|l| l.ends_with(
        "[sdb] vrate=100.00%->99.00% busy=4 missed_ppm=0:0 rq_wait_pct=0 lagging=1 shortages=1"
    )));
}

#[test]
fn busy_level_state_machine() {
    use super::period::{LatStat, PeriodSignals};
    let mut ioc = seed();
    let sig = |missed: u32, done: u32, lag: i32, short: i32| PeriodSignals {
        lat: LatStat {
            missed_ppm: [missed, 0],
            rq_wait_pct: 0,
            nr_done: done,
        },
        nr_lagging: lag,
        nr_shortages: short,
    };
    ioc.busy_level = -2;
    ioc.update_busy_level(&sig(200_000, 10, 0, 0), true);
    assert_eq!(ioc.busy_level, 1); // missed > 10 %: max(b,0)+1
    ioc.update_busy_level(&sig(0, 10, 0, 1), true);
    assert_eq!(ioc.busy_level, -1); // met with shortages and no lagging
    ioc.update_busy_level(&sig(0, 10, 2, 1), true);
    assert_eq!(ioc.busy_level, -1); // lagging: no further decrement
    ioc.update_busy_level(&sig(90_000, 10, 0, 1), true);
    assert_eq!(ioc.busy_level, 0); // hysteresis band (7.5 % < 9 % <= 10 %)
    ioc.busy_level = 7;
    ioc.update_busy_level(&sig(0, 10, 0, 0), true);
    assert_eq!(ioc.busy_level, 0); // nobody short: coast
    ioc.busy_level = 7;
    ioc.update_busy_level(&sig(0, 0, 3, 1), true);
    assert_eq!(ioc.busy_level, 7);
    ioc.update_busy_level(&sig(0, 0, 3, 1), false);
    assert_eq!(ioc.busy_level, 0);
    ioc.busy_level = 1000;
    ioc.update_busy_level(&sig(1_000_000, 1, 0, 0), false);
    assert_eq!(ioc.busy_level, 1000);
}

#[test]
fn latency_and_rq_wait_accounting() {
    let d = dev(false, 128);
    let tree = CgroupTree::new();
    let sw = Switches::default();
    let mut tr = Tracer::default();
    let mut ioc = seed();
    let rq = |op: Op, bytes: u32, start: Ns, alloc: Ns| Request {
        dev: 0,
        op,
        cg: 0,
        ioprio: Ioprio::default(),
        sector: 0,
        bytes,
        sync: true,
        bios: vec![],
        // `start` = allocation began (alloc_time_ns), `alloc` = tag obtained (start_time_ns)
        alloc_time: start,
        start_time: alloc,
        insert_time: alloc,
        issue_time: alloc,
        fifo_time: 0,
        done_time: 0,
    };
    let mut rel = Vec::new();
    // 1 MiB read: 3.5 ms + 6.063946 ms allowance
    let mut ctx = Ctx {
        now: 10 * MS + 9_563_946,
        hz: Hz(1000),
        dev: &d,
        cgroups: &tree,
        switches: &sw,
        trace: &mut tr,
    };
    ioc.done(&mut ctx, &rq(Op::Read, 1 << 20, 10 * MS, 10 * MS), &mut rel);
    ctx.now += 1;
    ioc.done(&mut ctx, &rq(Op::Read, 1 << 20, 10 * MS, 11 * MS), &mut rel);
    ioc.done(&mut ctx, &rq(Op::Flush, 0, 10 * MS, 10 * MS), &mut rel);
    assert_eq!((ioc.nr_met, ioc.nr_missed), ([1, 0], [1, 0]));
    let l = ioc.lat_stat();
    assert_eq!(l.missed_ppm, [500_000, 0]);
    assert_eq!(l.nr_done, 2);
    assert_eq!(l.rq_wait_pct, 14); // 1 ms of rq wait in a 7 ms period
    assert_eq!(ioc.lat_stat().nr_done, 0);
}

#[test]
fn io_stat_fields() {
    let mut ioc = seed();
    assert_eq!(ioc.io_stat(0), " cost.vrate=100.00 cost.usage=0");
    assert_eq!(ioc.io_stat(0).len(), ioc.pd_stat(0).len());
    ioc.vtime_base_rate = 175_247;
    ioc.debug_stats = true;
    assert_eq!(
        ioc.io_stat(0),
        " cost.vrate=127.51 cost.usage=0 cost.wait=0 cost.indebt=0 cost.indelay=0"
    );
    ioc.enabled = false;
    assert_eq!(ioc.io_stat(0), "");
}
