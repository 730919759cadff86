//! Stacked devices end to end: a loop device over a null_blk device, and a
//! dm-linear device over one. The lower device's controllers see the
//! upper device's I/O under the original cgroups.

use super::*;
use crate::block::bio::Origin;
use crate::drivers::dm_linear::DmLinearSpec;
use crate::drivers::loop_dev::LoopSpec;
use crate::machine::{SetupError, StackErrorKind};

/// nullb0 (252:0, 10 µs, 256 deep) and a stacked device `upper` (7:0) over it.
fn stack(upper: ModelSpec, upper_cap: u64) -> Vec<DeviceConfig> {
    let lower = nullb_dev(10_000, 256);
    let mut up = nullb_dev(10_000, 128);
    up.info.name = "up0".into();
    up.info.major = 7;
    up.info.minor = 0;
    up.info.capacity_bytes = upper_cap;
    up.model = upper;
    vec![lower, up]
}

fn loop_over_nullb() -> Vec<DeviceConfig> {
    stack(ModelSpec::Loop(LoopSpec::over("nullb0")), 1 << 34)
}

/// Jobs `(spec, cgroup)` on the upper device (index 1), with `io_max`
/// written on `io_max.0`.
fn on_upper(
    devs: Vec<DeviceConfig>,
    jobs: Vec<(JobSpec, &str)>,
    io_max: (&str, &str),
) -> SimConfig {
    let mut cfg = config(devs, jobs);
    for j in &mut cfg.jobs {
        j.dev = 1;
    }
    let cg = cfg.cgroups.ensure(io_max.0).unwrap();
    cfg.cgroups.write_file(cg, "io.max", io_max.1);
    cfg
}

fn field(io_stat: &str, devno: &str, key: &str) -> u64 {
    let line = io_stat
        .lines()
        .find(|l| l.starts_with(&format!("{devno} ")))
        .unwrap_or_else(|| panic!("no {devno} in {io_stat:?}"));
    line.split_whitespace()
        .find_map(|f| f.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("no {key} in {line}"))
        .parse()
        .unwrap()
}

#[test]
fn loop_charges_its_lower_bios_to_the_original_cgroup() {
    // a generous limit on the lower device, only so that blk-throttle
    // counts every cgroup's bios there
    let cfg = on_upper(
        loop_over_nullb(),
        vec![
            (job("a", RwPattern::RandRead, 4096, 4, 1), "/p/a"),
            (job("b", RwPattern::RandWrite, 8192, 2, 1), "/p/b"),
        ],
        ("/p", "252:0 riops=1000000 wiops=1000000"),
    );
    let mut sim = Sim::new(cfg, Tracer::default()).unwrap();
    let r = sim.run();
    let (a, b) = (
        sim.cgroups().find("/p/a").unwrap(),
        sim.cgroups().find("/p/b").unwrap(),
    );
    let (sa, sb) = (sim.io_stat(a), sim.io_stat(b));
    let ra = &r.jobs[0].stats.dirs[0];
    let wb = &r.jobs[1].stats.dirs[1];
    // every I/O of a job is one bio on the lower device, in the job's cgroup
    // (one more per job at most: the I/Os in flight at the end)
    let (rios, wios) = (field(&sa, "252:0", "rios"), field(&sb, "252:0", "wios"));
    assert!(
        rios >= ra.total_ios && rios <= ra.total_ios + 4,
        "{rios} {}",
        ra.total_ios
    );
    assert!(
        wios >= wb.total_ios && wios <= wb.total_ios + 2,
        "{wios} {}",
        wb.total_ios
    );
    assert_eq!(field(&sb, "252:0", "wbytes"), wios * 8192);
    assert_eq!(field(&sa, "252:0", "wios"), 0);
    assert_eq!(field(&sb, "252:0", "rios"), 0);
    // nothing else was charged there (not the root, as the loop worker's
    // own cgroup would be): the root's counts are its children's, which
    // pass through it on their way up the hierarchy
    let root = sim.io_stat(crate::block::blk_cgroup::ROOT);
    assert_eq!(field(&root, "252:0", "rios"), rios);
    assert_eq!(field(&root, "252:0", "wios"), wios);
    // both levels count the I/O in their own /sys/block/*/stat
    let (lo, up) = (&r.devices[0], &r.devices[1]);
    assert_eq!(lo.stat[0], up.stat[0]);
    assert_eq!(lo.stat[4], up.stat[4]);
    assert!(up.stat[0] >= ra.total_ios);
}

/// A heavy (QD`heavy_qd`) and a light (QD1) random reader on the loop
/// device, in cgroups /p/heavy and /p/light, with riops=2000 on /p for the
/// lower device: (total IOPS, light IOPS, light mean clat in ms).
fn heavy_and_light(heavy_qd: u32) -> (f64, f64, f64) {
    let cfg = on_upper(
        loop_over_nullb(),
        vec![
            (
                job("heavy", RwPattern::RandRead, 4096, heavy_qd, 4),
                "/p/heavy",
            ),
            (job("light", RwPattern::RandRead, 4096, 1, 4), "/p/light"),
        ],
        ("/p", "252:0 riops=2000"),
    );
    let r = Sim::new(cfg, Tracer::default()).unwrap().run();
    let (h, l) = (&r.jobs[0].stats.dirs[0], &r.jobs[1].stats.dirs[0]);
    (h.iops() + l.iops(), l.iops(), l.clat.stat.mean / 1e6)
}

#[test]
fn io_max_on_the_lower_parent_binds_the_sum_and_queues_children_apart() {
    // QD64: the upper loop device's 128 tags are never short, so what the
    // light job waits for is blk-throttle alone
    let (total, light_iops, light_ms) = heavy_and_light(64);
    // the parent's limit holds the two children together: 2000 IOPS, within
    // the first slice's grace and the runtime's rounding (2 %)
    assert!((total - 2000.0).abs() < 40.0, "{total} IOPS");
    // the iops budget is a whole 100 ms slice (`tg_dispatch_iops_time`
    // rounds the elapsed time up to the slice): 200 bios pass at each slice
    // start, then all wait and the held queue (~65 bios, less than a
    // slice's budget) moves up in one jiffy at the next slice. The light job
    // runs at the device's speed in the open phase and waits up to a slice
    // once a slice: ~220 IOPS, a mean clat of ~4.5 ms. (Its place in the
    // held queue does not show here; machine/tests/throttle_order.rs shows
    // where it does.)
    assert!(light_ms < 6.0, "light clat {light_ms} ms");
    assert!(light_iops > 180.0, "light {light_iops} IOPS");
    // QD128 fills the loop device's 128 tags (hw_queue_depth): the light
    // job's bio may also sleep for a tag until a batch of them is freed
    // (sbitmap's wake_batch), as on the host; still far from 64 ms
    let (total, light_iops, light_ms) = heavy_and_light(128);
    assert!((total - 2000.0).abs() < 40.0, "{total} IOPS");
    assert!(light_ms < 12.0, "light clat {light_ms} ms beside QD128");
    assert!(light_iops > 80.0, "light {light_iops} IOPS beside QD128");
}

fn dm_linear(offset: u64, cap: u64) -> Vec<DeviceConfig> {
    stack(
        ModelSpec::DmLinear(DmLinearSpec {
            backend: "nullb0".into(),
            offset,
        }),
        cap,
    )
}

#[test]
fn dm_linear_clones_at_the_offset_in_the_original_blkg() {
    let start = 1u64 << 21; // 1 GiB in sectors
    let cfg = on_upper(
        dm_linear(start, 1 << 30),
        vec![(job("a", RwPattern::Read, 65536, 4, 1), "/c")],
        ("/c", "252:0 rbps=104857600"),
    );
    let mut sim = Sim::new(cfg, Tracer::default()).unwrap();
    let c = sim.cgroups().find("/c").unwrap();
    let mut clones = 0;
    for step in 1..200u64 {
        sim.run_until(step * 997_000);
        let bios = &sim.k.blk.bios;
        for i in 0..bios.capacity_used() as u32 {
            let Some(cl) = bios.try_get(i) else { continue };
            let Origin::Clone { parent } = cl.origin else {
                continue;
            };
            let p = bios.get(parent);
            assert_eq!((p.dev, cl.dev), (1, 0));
            assert_eq!(cl.sector, p.sector + start);
            assert_eq!((cl.cg, p.cg), (c, c));
            assert_eq!((cl.bytes, cl.op), (p.bytes, p.op));
            clones += 1;
        }
    }
    assert!(clones > 100, "{clones} clones seen in flight");
    let r = sim.run();
    // the clones are throttled below in /c: 100 MiB/s
    let bw = r.jobs[0].stats.dirs[0].bw_bytes() as f64;
    assert!((bw / 104857600.0 - 1.0).abs() < 0.03, "{bw} B/s");
    // dm accounts its bios, the lower device its requests: same counts
    assert_eq!(r.devices[0].stat[0], r.devices[1].stat[0]);
    assert_eq!(r.devices[0].stat[2], r.devices[1].stat[2]);
}

fn setup_err(devs: Vec<DeviceConfig>) -> (String, String) {
    match Sim::new(config(devs, vec![]), Tracer::default()) {
        Err(SetupError::Device { dev, msg }) => (dev, msg),
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("accepted"),
    }
}

#[test]
fn bad_stacks_are_refused() {
    use crate::machine::resolve_stacking;
    // a missing backend
    let mut d = loop_over_nullb();
    d[1].model = ModelSpec::Loop(LoopSpec::over("sdz"));
    let (dev, msg) = setup_err(d.clone());
    assert_eq!(dev, "up0");
    assert!(msg.contains("backend 'sdz': no such device"), "{msg}");
    // a device on itself, and two devices on each other
    d[1].model = ModelSpec::Loop(LoopSpec::over("up0"));
    let e = resolve_stacking(&d).unwrap_err();
    assert_eq!(e.dev, 1);
    assert_eq!(
        e.kind,
        StackErrorKind::Cycle(vec!["up0".into(), "up0".into()])
    );
    d[0].model = ModelSpec::DmLinear(DmLinearSpec {
        backend: "up0".into(),
        offset: 0,
    });
    d[1].model = ModelSpec::Loop(LoopSpec::over("nullb0"));
    let e = resolve_stacking(&d).unwrap_err();
    assert_eq!(e.dev, 0);
    assert_eq!(
        e.kind,
        StackErrorKind::Cycle(vec!["nullb0".into(), "up0".into(), "nullb0".into()])
    );
    // a scheduler, and wbt, on the bio-based device
    let mut d = dm_linear(0, 1 << 30);
    d[1].scheduler = "mq-deadline".into();
    let (_, msg) = setup_err(d.clone());
    assert!(msg.contains("bio-based and has no I/O scheduler"), "{msg}");
    // past the end of the backend (16 GiB): 1 sector too far
    let d = dm_linear(1, 1 << 34);
    let (_, msg) = setup_err(d);
    assert!(msg.contains("beyond the end of nullb0"), "{msg}");
    assert!(resolve_stacking(&dm_linear(0, 1 << 34)).is_ok());
    // iocost on the bio-based device
    let mut cfg = config(dm_linear(0, 1 << 30), vec![]);
    cfg.cgroups.write_file(0, "io.cost.qos", "7:0 enable=1");
    match Sim::new(cfg, Tracer::default()) {
        Err(e) => assert!(e.to_string().contains("EOPNOTSUPP"), "{e}"),
        Ok(_) => panic!("iocost on dm-linear accepted"),
    }
}
