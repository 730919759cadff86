//! blk-iolatency on constructed latency samples: windows, the parent's
//! cookie, siblings' depths, recovery, the timer and the parser's place in
//! set-up.

use super::scale::{self, ChildLat, DEFAULT_SCALE_COOKIE};
use super::*;
use crate::block::bio::{Bio, Op, Origin};
use crate::block::ctx::Ctx;
use crate::block::rq_qos::{QosVerdict, RqQos};
use crate::block::testutil;
use crate::sim::kerr::Errno;
use crate::sim::switches::Switches;
use crate::sim::trace::Tracer;

const MS: Ns = 1_000_000;

struct Rig {
    lat: IoLatency,
    dev: DeviceInfo,
    cg: CgroupTree,
    sw: Switches,
    tr: Tracer,
    next_id: BioId,
    released: Vec<BioId>,
}

impl Rig {
    /// /a with target `a_usec`, /b with `b` (None = no file), qd 64, SSD.
    fn new(a_usec: u64, b: Option<u64>) -> Rig {
        let dev = testutil::device("nvme0n1", 259, 0);
        let a = format!("259:0 target={a_usec}");
        let mut files = vec![("/a", "io.latency", a.as_str())];
        let bl;
        if let Some(b) = b {
            bl = format!("259:0 target={b}");
            files.push(("/b", "io.latency", bl.as_str()));
        }
        let mut cg = testutil::tree_with(&files);
        cg.ensure("/b").unwrap();
        let lat = IoLatency::new(&dev, &cg, false).unwrap().unwrap();
        Rig {
            lat,
            dev,
            cg,
            sw: Switches::default(),
            tr: Tracer::default(),
            next_id: 0,
            released: Vec::new(),
        }
    }

    fn cg(&self, path: &str) -> CgId {
        self.cg.find(path).unwrap()
    }

    fn with<R>(
        &mut self,
        now: Ns,
        f: impl FnOnce(&mut IoLatency, &mut Ctx, &mut Vec<BioId>) -> R,
    ) -> R {
        let mut ctx: Ctx = testutil::ctx(now, &self.dev, &self.cg, &self.sw, &mut self.tr);
        f(&mut self.lat, &mut ctx, &mut self.released)
    }

    /// A bio of `path` submitted at `now`.
    fn submit(&mut self, path: &str, now: Ns) -> (BioId, Bio, QosVerdict) {
        let cg = self.cg(path);
        let mut b = Bio::new(0, cg, Op::Read, 0, 4096, Origin::Kernel { tag: 0 });
        b.t_queue = now;
        let id = self.next_id;
        self.next_id += 1;
        let v = self.with(now, |l, c, _| l.throttle(c, id, &mut b));
        (id, b, v)
    }

    fn complete(&mut self, b: &Bio, now: Ns) {
        self.with(now, |l, c, r| l.done_bio(c, b, r));
    }

    /// `n` bios of `path` each taking `lat` from `t`.
    fn run(&mut self, path: &str, t: Ns, n: u32, lat: Ns) {
        for _ in 0..n {
            let (_, b, v) = self.submit(path, t);
            assert_eq!(v, QosVerdict::Proceed);
            self.complete(&b, t + lat);
        }
    }

    fn depth(&self, path: &str) -> u32 {
        self.lat.grp(self.cg(path)).unwrap().max_depth
    }
}

#[test]
fn cookie_arithmetic_at_qd_64() {
    let mut info = ChildLat::default();
    let mut seen = vec![];
    for _ in 0..7 {
        scale::scale_cookie_change(&mut info, 64, false);
        seen.push(DEFAULT_SCALE_COOKIE - info.scale_cookie);
    }
    // qd/4 = 16 per step while within qd of the default, then 1 at a time
    assert_eq!(seen, vec![16, 32, 48, 64, 80, 81, 82]);
    // never deeper than 2·qd below the default
    for _ in 0..100 {
        scale::scale_cookie_change(&mut info, 64, false);
    }
    assert_eq!(DEFAULT_SCALE_COOKIE - info.scale_cookie, 128);
    // up: by 1 while more than qd below, then qd/16 = 4, clamped at the default
    scale::scale_cookie_change(&mut info, 64, true);
    assert_eq!(DEFAULT_SCALE_COOKIE - info.scale_cookie, 127);
    info.scale_cookie = DEFAULT_SCALE_COOKIE - 6;
    scale::scale_cookie_change(&mut info, 64, true);
    assert_eq!(DEFAULT_SCALE_COOKIE - info.scale_cookie, 2);
    scale::scale_cookie_change(&mut info, 64, true);
    assert_eq!(info.scale_cookie, DEFAULT_SCALE_COOKIE);
}

#[test]
fn window_verdicts() {
    let r = Rig::new(1000, None);
    let g = r.lat.grp(r.cg("/a")).unwrap();
    // SSD: fine while fewer than a tenth (at least 1) missed
    assert!(g.sum_ok(&LatStat::Ps {
        missed: 0,
        total: 3
    }));
    assert!(!g.sum_ok(&LatStat::Ps {
        missed: 1,
        total: 19
    }));
    assert!(g.sum_ok(&LatStat::Ps {
        missed: 1,
        total: 20
    }));
    assert!(!g.sum_ok(&LatStat::Ps {
        missed: 2,
        total: 20
    }));
    // the window is 16 × target, at least 100 ms, at most 1 s
    assert_eq!(g.cur_win_ns, 100 * MS);
    let r = Rig::new(50_000, Some(200_000));
    assert_eq!(r.lat.grp(r.cg("/a")).unwrap().cur_win_ns, 800 * MS);
    assert_eq!(r.lat.grp(r.cg("/b")).unwrap().cur_win_ns, 1000 * MS);
}

/// Spec §4 (b): a protected group (1 ms on an SSD) missing its target
/// halves an untargeted sibling's depth once per ≥ 500 ms, down to 1, then
/// charges use_delay; when it is fine again the sibling grows back by qd/16.
#[test]
fn sibling_depth_halves_then_recovers() {
    let mut r = Rig::new(1000, None);
    let b = r.cg("/b");
    let mut depths = vec![];
    let mut t = 0;
    // 100 ms windows, /a's bios take 5 ms: every window misses
    for _ in 0..40 {
        t += 100 * MS;
        r.run("/b", t, 1, MS);
        r.run("/a", t, 10, 5 * MS);
        depths.push(r.depth("/b"));
    }
    depths.dedup();
    let shown: Vec<u32> = depths.iter().map(|&d| d.min(64)).collect();
    // unlimited (= qd 64) → 32 → … → 1; the 500 ms rule spaces the steps
    assert_eq!(shown, vec![64, 32, 16, 8, 4, 2, 1]);
    assert!(
        r.lat.grp(b).unwrap().delay.use_delay > 0,
        "use_delay after depth 1"
    );
    // io.stat shows it before the policy's fields, as blk-cgroup prints it
    let n = r.lat.grp(b).unwrap().delay.use_delay;
    assert_eq!(
        r.lat.io_stat(b),
        format!(" use_delay={n} delay_nsec=0 missed=0 total=0 depth=1")
    );
    // /a is fine again: at ≥ 500 ms intervals its parent's cookie goes up
    // by qd/16 and /b pays back use_delay, then grows 1 → 5 → 9 …
    let mut ups = vec![];
    for _ in 0..400 {
        t += 100 * MS;
        r.run("/b", t, 1, MS);
        r.run("/a", t, 10, MS / 10);
        ups.push(r.depth("/b"));
    }
    ups.dedup();
    assert_eq!(&ups[..4], &[1, 5, 9, 13]);
    assert_eq!(
        *ups.last().unwrap(),
        UNLIMITED,
        "back to unlimited: {ups:?}"
    );
    assert_eq!(r.lat.grp(b).unwrap().delay.use_delay, 0);
}

#[test]
fn stricter_or_equal_targets_are_spared() {
    // /b has a 500 µs target, stricter than /a's 1 ms: never scaled
    let mut r = Rig::new(1000, Some(500));
    let mut t = 0;
    for _ in 0..30 {
        t += 100 * MS;
        r.run("/b", t, 10, 100_000);
        r.run("/a", t, 10, 5 * MS);
    }
    assert_eq!(r.depth("/b"), UNLIMITED);
    assert!(
        r.depth("/a") == UNLIMITED,
        "the missing group itself is not scaled"
    );
    // /b with a looser 10 ms target that does as much I/O: scaled
    let mut r = Rig::new(1000, Some(10_000));
    let mut t = 0;
    for _ in 0..30 {
        t += 100 * MS;
        r.run("/b", t, 10, 100_000);
        r.run("/a", t, 10, 5 * MS);
    }
    assert!(r.depth("/b") < 64, "{}", r.depth("/b"));
}

#[test]
fn sleepers_wait_for_a_slot_and_go_on_in_order() {
    let mut r = Rig::new(1000, None);
    let b = r.cg("/b");
    r.lat.grps[b as usize].max_depth = 2;
    let (_, b0, v0) = r.submit("/b", 0);
    let (_, _b1, v1) = r.submit("/b", 0);
    let (i2, _, v2) = r.submit("/b", 0);
    let (i3, _, v3) = r.submit("/b", 0);
    assert_eq!(
        (v0, v1, v2, v3),
        (
            QosVerdict::Proceed,
            QosVerdict::Proceed,
            QosVerdict::Wait,
            QosVerdict::Wait
        )
    );
    // one completion, one sleeper (wake_up wakes one)
    r.complete(&b0, MS);
    assert_eq!(r.released, vec![i2]);
    assert_eq!(r.lat.grp(b).unwrap().rqw.waiters.len(), 1);
    assert_eq!(r.lat.grp(b).unwrap().rqw.waiters[0], i3);
}

#[test]
fn timer_raises_an_orphaned_cookie_and_forgets_the_scale_group() {
    let mut info = ChildLat {
        scale_cookie: DEFAULT_SCALE_COOKIE - 32,
        scale_grp: Some(3),
        last_scale_event: Some(1_000 * MS),
        ..ChildLat::default()
    };
    scale::timer_tick(&mut info, 2_000 * MS, 64);
    assert_eq!(info.scale_grp, Some(3));
    assert_eq!(info.scale_cookie, DEFAULT_SCALE_COOKIE - 32);
    scale::timer_tick(&mut info, 6_000 * MS, 64);
    assert_eq!(info.scale_grp, None);
    scale::timer_tick(&mut info, 7_000 * MS, 64);
    assert_eq!(info.scale_cookie, DEFAULT_SCALE_COOKIE - 28);
}

#[test]
fn rotational_stat_and_ewma() {
    let dev = DeviceInfo {
        rotational: true,
        ..testutil::device("sda", 8, 0)
    };
    let cg = testutil::tree_with(&[("/a", "io.latency", "8:0 target=10000")]);
    let mut lat = IoLatency::new(&dev, &cg, false).unwrap().unwrap();
    let a = cg.find("/a").unwrap();
    assert_eq!(lat.io_stat(a), " depth=max avg_lat=0 win=160");
    let mut s = crate::block::blk_stat::RqStat::default();
    s.add(20 * MS);
    let g = &mut lat.grps[a as usize];
    g.update_lat_avg(&LatStat::Rqs(s));
    // window 160 ms: factor 2045/2048 → 20 ms × 3/2048, rounded up
    assert_eq!(g.lat_avg_ns, (20 * MS * 3 + 2047) / 2048);
    assert!(!g.sum_ok(&LatStat::Rqs(s)));
}

#[test]
fn setup_errors() {
    let dev = testutil::device("nvme0n1", 259, 0);
    let root = testutil::tree_with(&[("/", "io.latency", "259:0 target=100")]);
    let (cg, e) = IoLatency::new(&dev, &root, false).err().unwrap();
    assert_eq!((cg, e.errno), (0, Errno::Enoent));
    let bad = testutil::tree_with(&[("/a", "io.latency", "259:0 target=soon")]);
    assert_eq!(
        IoLatency::new(&dev, &bad, false).err().unwrap().1.errno,
        Errno::Einval
    );
    // another device's line: no policy here
    let other = testutil::tree_with(&[("/a", "io.latency", "8:0 target=100")]);
    assert!(IoLatency::new(&dev, &other, false).unwrap().is_none());
    // target=max only: the policy exists but does nothing
    let max = testutil::tree_with(&[("/a", "io.latency", "259:0 target=max")]);
    let l = IoLatency::new(&dev, &max, false).unwrap().unwrap();
    assert!(!l.enabled());
}

/// The kernel's clock is time since boot and a group's window starts when
/// its policy data is made (the io.latency write, before the workload): the
/// first completion of a run closes a window, and a parent's first scale
/// event is not held back by the 500 ms rule (`last_scale_event` is 0, far
/// in the past). A miss on the very first bio, 1 ms into the run, halves
/// the sibling at once; the next halving waits 500 ms.
#[test]
fn the_first_window_closes_on_the_first_completion_of_the_run() {
    let mut r = Rig::new(1000, None);
    r.run("/b", 0, 1, MS / 10);
    assert_eq!(r.depth("/b"), UNLIMITED);
    // one bio of /a taking 2 ms against a 1 ms target: a missed window of one
    r.run("/a", 0, 1, 2 * MS);
    let info = &r.lat.grp(0).unwrap().child;
    assert_eq!(info.last_scale_event, Some(2 * MS));
    assert_eq!(info.scale_cookie, DEFAULT_SCALE_COOKIE - 16);
    r.run("/b", 3 * MS, 1, MS / 10);
    assert_eq!(
        r.depth("/b"),
        32,
        "halved from qd 64 at its next submission"
    );
    // misses in the next windows before 502 ms do not scale again
    let mut t = 2 * MS;
    while t < 400 * MS {
        t += 100 * MS;
        r.run("/a", t, 10, 2 * MS);
        r.run("/b", t + 3 * MS, 1, MS / 10);
    }
    assert_eq!(r.depth("/b"), 32);
    r.run("/a", 503 * MS, 10, 2 * MS);
    r.run("/b", 506 * MS, 1, MS / 10);
    assert_eq!(r.depth("/b"), 16);
}

/// A scale group with no scale event yet counts as long expired for the
/// timer (the kernel compares time since boot with 0).
#[test]
fn the_timer_forgets_a_scale_group_that_never_scaled() {
    let mut info = ChildLat {
        scale_cookie: DEFAULT_SCALE_COOKIE - 16,
        scale_grp: Some(2),
        ..ChildLat::default()
    };
    scale::timer_tick(&mut info, 1_000 * MS, 64);
    assert_eq!(info.scale_grp, None);
    scale::timer_tick(&mut info, 2_000 * MS, 64);
    assert_eq!(info.scale_cookie, DEFAULT_SCALE_COOKIE - 12);
}
