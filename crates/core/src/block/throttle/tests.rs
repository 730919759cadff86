//! Driving a Throttle with synthetic bios and a tiny event loop: fio-like
//! jobs with iodepth=1 (submit, wait for release, think, resubmit); the
//! device completes at once, so clat = time held by the throttle.

use super::*;
use crate::block::bio::{Bio, BioId, Op, Origin};
use crate::block::ctx::Ctx;
use crate::sim::kerr::Errno;
use crate::sim::time::{NSEC_PER_MSEC, NSEC_PER_SEC, NSEC_PER_USEC};
use crate::sim::trace::Tracer;

const MS: Ns = NSEC_PER_MSEC;
/// Every `throttle.wait` value.
const ALL_ERAS: [&str; 5] = [
    "current",
    "joint-fifo-min-wait",
    "joint-fifo",
    "slice-capped",
    "pre-2018",
];
const US: Ns = NSEC_PER_USEC;

fn dev(rotational: bool) -> DeviceInfo {
    DeviceInfo {
        rotational,
        capacity_bytes: 4 << 30,
        ..crate::block::testutil::device("nullb1", 253, 1)
    }
}

pub(super) struct H {
    dev: DeviceInfo,
    cgs: CgroupTree,
    sw: Switches,
    tr: Tracer,
    hz: Hz,
    pub(super) th: Throttle,
}

impl H {
    /// `files`: (cgroup path, io.max content).
    pub(super) fn new(
        hz: u32,
        wait: &str,
        slice: &str,
        rotational: bool,
        files: &[(&str, &str)],
    ) -> H {
        let mut cgs = CgroupTree::new();
        for (p, f) in files {
            let id = cgs.ensure(p).unwrap();
            if !f.is_empty() {
                cgs.write_file(id, "io.max", f);
            }
        }
        let mut sw = Switches::default();
        sw.set("throttle.wait", wait).unwrap();
        sw.set("throttle.slice", slice).unwrap();
        let dev = dev(rotational);
        let th = Throttle::new(&dev, &cgs, Hz(hz), &sw).unwrap();
        H {
            dev,
            cgs,
            sw,
            tr: Tracer::default(),
            hz: Hz(hz),
            th,
        }
    }
    pub(super) fn cg(&self, p: &str) -> CgId {
        self.cgs.find(p).unwrap()
    }
    /// blk-throttle and the context the block layer hands it at `now`.
    pub(super) fn parts(&mut self, now: Ns) -> (&mut Throttle, Ctx<'_>) {
        let H {
            dev,
            cgs,
            sw,
            tr,
            hz,
            th,
        } = self;
        let ctx = Ctx {
            now,
            hz: *hz,
            dev,
            cgroups: cgs,
            switches: sw,
            trace: tr,
            timer_moved: true,
        };
        (th, ctx)
    }
    pub(super) fn submit(&mut self, now: Ns, id: BioId, bio: &mut Bio) -> bool {
        let (th, mut ctx) = self.parts(now);
        th.submit(&mut ctx, id, bio)
    }
    pub(super) fn fire(&mut self, now: Ns, out: &mut Vec<BioId>) {
        let (th, mut ctx) = self.parts(now);
        th.timer(&mut ctx, out)
    }
    pub(super) fn write(&mut self, now: Ns, cg: CgId, line: &str) -> Result<(), KernelError> {
        let (th, mut ctx) = self.parts(now);
        th.write_io_max(&mut ctx, cg, line)
    }
}

pub(super) fn bio(cg: CgId, op: Op, bytes: u32) -> Bio {
    Bio::new(0, cg, op, 0, bytes, Origin::Kernel { tag: 0 })
}

/// An iodepth=1 job: each IO is submitted `think + overhead (+ hiccup)` after
/// the previous one was released.
pub(super) struct Job {
    cg: CgId,
    op: Op,
    pub(super) bytes: u32,
    think: Ns,
    overhead: Ns,
    first: Ns,
    /// Extra delay before IO number i (scheduling noise).
    hiccup: Box<dyn FnMut(usize) -> Ns>,
    /// (submit, release) of each IO.
    pub(super) done: Vec<(Ns, Ns)>,
}

impl Job {
    pub(super) fn new(cg: CgId, think: Ns, overhead: Ns, first: Ns) -> Job {
        Job {
            cg,
            op: Op::Read,
            bytes: 4096,
            think,
            overhead,
            first,
            hiccup: Box::new(|_| 0),
            done: Vec::new(),
        }
    }
}

/// Run the jobs until `end`; timers fire at the start of their jiffy and
/// before submissions at the same instant.
pub(super) fn run(h: &mut H, jobs: &mut [Job], end: Ns) {
    let mut next: Vec<Option<Ns>> = jobs.iter().map(|j| Some(j.first)).collect();
    let mut inflight: Vec<Option<(BioId, Ns)>> = vec![None; jobs.len()];
    let mut owner: Vec<usize> = Vec::new();
    let mut rel = Vec::new();
    loop {
        let sub = next
            .iter()
            .enumerate()
            .filter_map(|(i, t)| t.map(|t| (t, i)))
            .min();
        let tim = h.th.next_timer();
        let t = match (sub, tim) {
            (Some((ts, _)), Some(tt)) => ts.min(tt),
            (Some((ts, _)), None) => ts,
            (None, Some(tt)) => tt,
            (None, None) => break,
        };
        if t > end {
            break;
        }
        if tim == Some(t) {
            rel.clear();
            h.fire(t, &mut rel);
            for &id in &rel {
                let j = owner[id as usize];
                let (bid, s) = inflight[j].take().unwrap();
                assert_eq!(bid, id);
                jobs[j].done.push((s, t));
                let n = jobs[j].done.len();
                next[j] = Some(t + jobs[j].think + jobs[j].overhead + (jobs[j].hiccup)(n));
            }
            continue;
        }
        let (_, j) = sub.unwrap();
        next[j] = None;
        let id = owner.len() as BioId;
        owner.push(j);
        let mut b = bio(jobs[j].cg, jobs[j].op, jobs[j].bytes);
        if h.submit(t, id, &mut b) {
            inflight[j] = Some((id, t));
        } else {
            jobs[j].done.push((t, t));
            let n = jobs[j].done.len();
            next[j] = Some(t + jobs[j].think + jobs[j].overhead + (jobs[j].hiccup)(n));
        }
    }
}

/// Release jiffies of `n` bios submitted back to back (think time 0).
pub(super) fn back_to_back(wait: &str, slice: &str, limit: &str, n: usize) -> Vec<u64> {
    let mut h = H::new(1000, wait, slice, false, &[("/cg1", limit)]);
    let cg = h.cg("/cg1");
    let mut jobs = [Job::new(cg, 0, 0, 0)];
    run(&mut h, &mut jobs, 100 * NSEC_PER_SEC);
    jobs[0].done.iter().take(n).map(|&(_, r)| r / MS).collect()
}

// ---- io.max through the Throttle ------------------------------------------------

#[test]
fn construction_and_read_back() {
    let h = H::new(
        1000,
        "current",
        "auto",
        false,
        &[
            ("/a", "253:1 riops=100\n8:0 rbps=5\n253:1 wbps=1048576"),
            ("/b", ""),
        ],
    );
    let a = h.cg("/a");
    assert!(h.th.is_active());
    assert_eq!(
        h.th.read_io_max(a),
        "253:1 rbps=max wbps=1048576 riops=100 wiops=max\n"
    );
    assert_eq!(h.th.read_io_max(h.cg("/b")), "");
    assert_eq!(h.th.slice_jiffies(), 100);
    let h = H::new(1000, "current", "auto", false, &[("/b", "8:0 riops=1")]);
    assert!(
        !h.th.is_active(),
        "limits of another device do not activate this one"
    );

    let mut cgs = CgroupTree::new();
    let a = cgs.ensure("/a").unwrap();
    cgs.write_file(a, "io.max", "253:1 riops=0");
    let e = Throttle::new(&dev(false), &cgs, Hz(1000), &Switches::default())
        .err()
        .unwrap();
    assert_eq!((e.0, e.1.errno), (a, Errno::Erange));
    let mut cgs = CgroupTree::new();
    cgs.write_file(ROOT, "io.max", "253:1 riops=5");
    assert_eq!(
        Throttle::new(&dev(false), &cgs, Hz(1000), &Switches::default())
            .err()
            .unwrap()
            .0,
        ROOT
    );
}

#[test]
fn slice_lengths_per_era() {
    assert_eq!(slice_jiffies(Hz(1000), Era::Current, "auto", false), 100);
    assert_eq!(slice_jiffies(Hz(1000), Era::Pre2018, "auto", false), 20);
    assert_eq!(slice_jiffies(Hz(1000), Era::SliceCapped, "auto", true), 100);
    assert_eq!(slice_jiffies(Hz(250), Era::SliceCapped, "auto", false), 5);
    assert_eq!(
        slice_jiffies(Hz(250), Era::Current, "20ms-nonrot", false),
        5
    );
    assert_eq!(slice_jiffies(Hz(1000), Era::Pre2018, "100ms", false), 100);
}

#[test]
fn unlimited_groups_pass_untouched() {
    let mut h = H::new(
        1000,
        "current",
        "auto",
        false,
        &[("/a", "253:1 riops=1"), ("/b", "")],
    );
    let b = h.cg("/b");
    for i in 0..100 {
        let mut x = bio(b, Op::Read, 4096);
        assert!(!h.submit(0, i, &mut x));
        assert!(
            !x.flags.throttled,
            "a bio with no rule on its path skips blk-throttle"
        );
    }
    assert_eq!(h.th.next_timer(), None);
}

// ---- pacing, HZ=1000, 20 ms slice (budget 2 IOs per window at riops=100) -------

/// 200 bios back to back at riops=100 under `wait`: the first two pass, then
/// two per 20-jiffy window, bio k (k >= 2) at jiffy 20·⌊k/2⌋ + `offset`.
fn assert_two_per_window(wait: &str, offset: u64) {
    let r = back_to_back(wait, "20ms-nonrot", "253:1 riops=100", 200);
    assert_eq!(&r[..2], &[0, 0], "{wait}");
    for (k, &j) in r.iter().enumerate().skip(2) {
        assert_eq!(j, 20 * (k as u64 / 2) + offset, "{wait}: bio {k}");
    }
}

#[test]
fn riops_back_to_back_current() {
    // the third bio waits for the window boundary (j20); the wheel runs the
    // timer one tick later (j21), where the next window's budget admits two
    assert_two_per_window("current", 1);
}

#[test]
fn riops_back_to_back_pre2018() {
    // the third IO waits for its exact-rate moment (31; the timer runs at
    // j32), then two per window
    assert_two_per_window("pre-2018", 12);
}

#[test]
fn riops_back_to_back_joint_fifo() {
    // 6.1 and 6.12: the third bio waits to the boundary (6.12's minimum
    // 1000/100 + 1 = 11 is shorter), the wheel runs it at j21
    assert_two_per_window("joint-fifo", 1);
    assert_two_per_window("joint-fifo-min-wait", 1);
}

#[test]
fn riops_back_to_back_slice_capped() {
    // the wait ends on the boundary (j20); the wheel runs the timer at j21,
    // where the next window admits it (no zero-wait spin is needed)
    assert_two_per_window("slice-capped", 1);
}

#[test]
fn riops_100ms_slice_and_timer_wheel() {
    // 100-jiffy waits are armed in the wheel's 8-jiffy level: 100 -> 104
    let r = back_to_back("current", "100ms", "253:1 riops=100", 21);
    assert!(r[..10].iter().all(|&j| j == 0));
    assert!(r[10..20].iter().all(|&j| j == 104), "{r:?}");
    assert_eq!(r[20], 208);
    // pre-2018: the 11th waits 111 jiffies (-> 112 in the wheel)
    let r = back_to_back("pre-2018", "100ms", "253:1 riops=100", 12);
    assert_eq!((r[9], r[10], r[11]), (0, 112, 112));
    // the long run keeps the rate: 10 s -> 1000 IOs plus the first burst
    let n = ios_in_10s("current", "100ms", "253:1 riops=100");
    assert!((1000..=1010).contains(&n), "{n}");
}

#[test]
fn rbps_one_big_bio_waits_999_jiffies_then_the_wheel() {
    // spec §8: 1 MiB against 1 MiB/s from a fresh slice waits 999 jiffies;
    // the timer is capped at 8 slices (800 -> wheel 832), re-evaluated, then
    // armed for 1000 (-> wheel 1008)
    for era in ALL_ERAS {
        let mut h = H::new(1000, era, "100ms", true, &[("/cg1", "253:1 rbps=1048576")]);
        let cg = h.cg("/cg1");
        let mut b = bio(cg, Op::Read, 1 << 20);
        assert!(h.submit(0, 7, &mut b));
        assert_eq!(h.th.next_timer(), Some(832 * MS), "{era}");
        let mut out = Vec::new();
        h.fire(832 * MS, &mut out);
        assert!(out.is_empty());
        assert_eq!(h.th.next_timer(), Some(1008 * MS), "{era}");
        h.fire(1008 * MS, &mut out);
        assert_eq!(out, vec![7], "{era}");
        assert_eq!(h.th.next_timer(), None);
        assert!(
            h.th.io_stat(cg).contains("throttled_rios=1 "),
            "{}",
            h.th.io_stat(cg)
        );
    }
}

#[test]
fn rbps_long_run_rate() {
    // 4 KiB reads back to back at 400 KiB/s: 100 bios per second
    for era in ALL_ERAS {
        let n = ios_in_10s(era, "20ms-nonrot", "253:1 rbps=409600");
        assert!((1000..=1003).contains(&n), "{era}: {n}");
    }
}

/// Bios one job of /cg1 completes back to back in 10 s under `limit`.
pub(super) fn ios_in_10s(wait: &str, slice: &str, limit: &str) -> usize {
    let mut h = H::new(1000, wait, slice, false, &[("/cg1", limit)]);
    let mut jobs = [Job::new(h.cg("/cg1"), 0, 0, 0)];
    run(&mut h, &mut jobs, 10 * NSEC_PER_SEC - 1);
    jobs[0].done.len()
}

// ---- the seed (spec §13.3): HZ=1000, S=20, riops=100, thinktime 4 ms --------------

/// The seed job: first IO at 0.3 ms, 0.1 ms of fio overhead per IO.
fn seed_run(
    wait: &str,
    slice: &str,
    end: Ns,
    hiccup: Box<dyn FnMut(usize) -> Ns>,
) -> Vec<(Ns, Ns)> {
    let mut h = H::new(
        1000,
        wait,
        slice,
        false,
        &[("/cg1", "253:1 riops=100 rbps=max")],
    );
    let mut job = Job::new(h.cg("/cg1"), 4 * MS, 100 * US, 300 * US);
    job.hiccup = hiccup;
    let mut jobs = [job];
    run(&mut h, &mut jobs, end);
    std::mem::take(&mut jobs[0].done)
}

/// The seed's first 80 ms under `wait`: the first seven IOs' submission
/// and release instants (in 0.1 ms), and the clat of IOs 2 and 4.
fn assert_seed_timeline(wait: &str, sub: [Ns; 7], rel: [Ns; 7], clat2: Ns, clat4: Ns) {
    let d = seed_run(wait, "auto", 80 * MS, Box::new(|_| 0));
    let tenths = |t: Ns| t / (100 * US);
    let got_sub: Vec<Ns> = d.iter().take(7).map(|x| tenths(x.0)).collect();
    let got_rel: Vec<Ns> = d.iter().take(7).map(|x| tenths(x.1)).collect();
    assert_eq!(got_sub, sub, "{wait}: submissions");
    assert_eq!(got_rel, rel, "{wait}: releases");
    assert_eq!(d[2].1 - d[2].0, clat2, "{wait}: clat of IO 2");
    assert_eq!(d[4].1 - d[4].0, clat4, "{wait}: clat of IO 4");
}

#[test]
fn seed_timeline_pre2018() {
    // clat of IO 2: wait 31 - 8 = 23 jiffies, run at the next tick (j32) ->
    // 23.5 ms; IO 4 arrives at el 20 (not 19: the late timer moved the
    // cycle), waits 31 - 20 = 11 -> j51, runs at j52 -> 11.8 ms
    assert_seed_timeline(
        "pre-2018",
        [3, 44, 85, 361, 402, 561, 602],
        [3, 44, 320, 361, 520, 561, 720],
        23_500 * US,
        11_800 * US,
    );
}

#[test]
fn seed_timeline_slice_capped() {
    // IO 2 waits 20 - 8 = 12 to j20; the timer runs at j21 and it goes
    assert_seed_timeline(
        "slice-capped",
        [3, 44, 85, 251, 292, 451, 492],
        [3, 44, 210, 251, 410, 451, 610],
        12_500 * US,
        11_800 * US,
    );
}

/// One late IO (a 3 ms scheduling hiccup before IO 8): in the old kernel it
/// passes at once, restarts the window, and the IO two later waits > 20 ms;
/// with the fix nothing exceeds one slice.
#[test]
fn seed_hiccup_converts_to_a_long_wait_only_before_the_fix() {
    let hic =
        || Box::new(|i: usize| if i == 8 { 3 * MS } else { 0 }) as Box<dyn FnMut(usize) -> Ns>;
    let pre = seed_run("pre-2018", "auto", 200 * MS, hic());
    let clat: Vec<Ns> = pre.iter().map(|x| (x.1 - x.0) / (100 * US)).collect();
    assert_eq!(clat[8], 0, "the late IO passes immediately: {clat:?}");
    assert_eq!(clat[9], 0, "so does the next one: {clat:?}");
    assert_eq!(clat[10], 206, "then 31 - 10 = 21 jiffies: {clat:?}");
    let post = seed_run("slice-capped", "auto", 200 * MS, hic());
    assert!(post.iter().all(|x| x.1 - x.0 <= 12_500 * US), "{post:?}");
}

/// 60 s with deterministic noise (about 7 % of IOs delayed 0.5–6 ms): the
/// measured shapes of the seed — pre-fix tail at ~20–23 ms, post-fix all at
/// ≤ ~13 ms, 100 IOPS and a mean near 5.9 ms for both.
#[test]
fn seed_sixty_seconds_with_noise() {
    let noise = || {
        let mut x: u64 = 0x9e3779b97f4a7c15;
        Box::new(move |_i: usize| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let r = x >> 33;
            if r % 100 < 7 {
                500 * US + (r / 100) % (5500 * US)
            } else {
                0
            }
        }) as Box<dyn FnMut(usize) -> Ns>
    };
    let stats = |d: &[(Ns, Ns)]| {
        let mut c: Vec<Ns> = d.iter().map(|x| x.1 - x.0).collect();
        let mean = c.iter().sum::<Ns>() / c.len() as u64;
        c.sort();
        let p = |q: usize| c[c.len() * q / 100];
        (d.len(), mean, p(50), p(90), p(99), *c.last().unwrap())
    };
    let (n, mean, _p50, _p90, p99, max) =
        stats(&seed_run("pre-2018", "auto", 60 * NSEC_PER_SEC, noise()));
    assert!((5900..=6010).contains(&n), "pre: {n} IOs");
    assert!((5 * MS..=6 * MS).contains(&mean), "pre mean {mean}");
    assert!(p99 >= 19 * MS && max <= 24 * MS, "pre p99 {p99} max {max}");
    let (n, mean, _p50, _p90, p99, max) = stats(&seed_run(
        "slice-capped",
        "auto",
        60 * NSEC_PER_SEC,
        noise(),
    ));
    assert!((5900..=6010).contains(&n), "post: {n} IOs");
    assert!((5 * MS..=6 * MS).contains(&mean), "post mean {mean}");
    assert!(
        p99 <= 12_500 * US && max <= 13 * MS,
        "post p99 {p99} max {max}"
    );
    // spec §13.4: a 100 ms slice (today's kernel) gives ~90 % at 0 and ~10 % near 57–59 ms
    let d = seed_run("current", "auto", 60 * NSEC_PER_SEC, noise());
    let (n, _mean, p50, _p90, _p99, max) = stats(&d);
    let long = d.iter().filter(|x| x.1 - x.0 > 40 * MS).count();
    assert!((5900..=6020).contains(&n), "current: {n}");
    assert!(
        p50 == 0 && (n / 12..=n / 8).contains(&long) && max <= 64 * MS,
        "current: long {long} of {n}, max {max}"
    );
}

// ---- hierarchy ----------------------------------------------------------------

#[test]
fn parent_limit_binds_the_childrens_sum() {
    let mut h = H::new(
        1000,
        "current",
        "20ms-nonrot",
        false,
        &[("/p", "253:1 riops=100"), ("/p/a", ""), ("/p/b", "")],
    );
    let (a, b) = (h.cg("/p/a"), h.cg("/p/b"));
    let mut jobs = [Job::new(a, 0, 0, 0), Job::new(b, 0, 0, 0)];
    run(&mut h, &mut jobs, 10 * NSEC_PER_SEC - 1);
    let (na, nb) = (jobs[0].done.len(), jobs[1].done.len());
    assert!((1000..=1002).contains(&(na + nb)), "{na} + {nb}");
    assert!(
        na.abs_diff(nb) <= 2,
        "round-robin between sources: {na} vs {nb}"
    );
    assert!(h.th.io_stat(h.cg("/p")).contains("rios="));
    // the device is the caller's to print, once (Sim::io_stat)
    assert!(h.th.io_stat(h.cg("/p")).starts_with("throttled_rios="));
}

#[test]
fn child_and_parent_limits_both_hold() {
    for era in ["current", "pre-2018", "slice-capped"] {
        let mut h = H::new(
            1000,
            era,
            "100ms",
            false,
            &[
                ("/p", "253:1 riops=100"),
                ("/p/a", "253:1 riops=30"),
                ("/p/b", ""),
            ],
        );
        let (a, b) = (h.cg("/p/a"), h.cg("/p/b"));
        let mut jobs = [Job::new(a, 0, 0, 0), Job::new(b, 0, 0, 0)];
        run(&mut h, &mut jobs, 10 * NSEC_PER_SEC - 1);
        let (na, nb) = (jobs[0].done.len(), jobs[1].done.len());
        // a's iodepth-1 loop also waits at /p, behind b: with the pre-fix
        // overlong waits at /p it cannot use all of its own 30 iops
        let lo = if era == "pre-2018" { 240 } else { 295 };
        assert!((lo..=305).contains(&na), "{era}: a {na}");
        assert!((1000..=1010).contains(&(na + nb)), "{era}: {na} + {nb}");
    }
    // today's rules with a 20 ms slice under-deliver a low limit (the reason
    // for the late-2025 slice fix): 30 iops = 0.6 IO per window, each IO
    // waits for the next boundary but at least HZ/30 + 1 = 34 jiffies
    let mut h = H::new(
        1000,
        "current",
        "20ms-nonrot",
        false,
        &[("/a", "253:1 riops=30")],
    );
    let mut jobs = [Job::new(h.cg("/a"), 0, 0, 0)];
    run(&mut h, &mut jobs, 10 * NSEC_PER_SEC - 1);
    assert!(
        (200..=215).contains(&jobs[0].done.len()),
        "{}",
        jobs[0].done.len()
    ); // ~21 iops, not 30
       // the 2018 trim forgets whole slices even when they round to 0 IOs
       // (30 * 20 / 1000 = 0) because the wrapped unlimited-bps product is not 0
    let mut h = H::new(
        1000,
        "pre-2018",
        "20ms-nonrot",
        false,
        &[("/a", "253:1 riops=30")],
    );
    let mut jobs = [Job::new(h.cg("/a"), 0, 0, 0)];
    run(&mut h, &mut jobs, 10 * NSEC_PER_SEC - 1);
    assert!(
        (160..=175).contains(&jobs[0].done.len()),
        "{}",
        jobs[0].done.len()
    );
}

// ---- limit change mid-run ---------------------------------------------------------

#[test]
fn raising_the_limit_releases_waiting_bios() {
    for era in ALL_ERAS {
        let mut h = H::new(1000, era, "20ms-nonrot", false, &[("/c", "253:1 riops=50")]);
        let c = h.cg("/c");
        let mut b0 = bio(c, Op::Read, 4096);
        assert!(!h.submit(0, 0, &mut b0));
        let mut b1 = bio(c, Op::Read, 4096);
        assert!(h.submit(0, 1, &mut b1));
        let first = h.th.next_timer().unwrap();
        assert!(first >= 20 * MS, "{era}: {first}");
        h.write(10 * MS + 5 * US, c, "253:1 riops=1000").unwrap();
        assert_eq!(
            h.th.read_io_max(c),
            "253:1 rbps=max wbps=max riops=1000 wiops=max\n"
        );
        // re-evaluated at once; the forced timer fires at the next tick
        assert_eq!(h.th.next_timer(), Some(11 * MS), "{era}");
        let mut out = Vec::new();
        h.fire(11 * MS, &mut out);
        assert_eq!(out, vec![1], "{era}");
        // a bad write is refused and changes nothing
        assert_eq!(
            h.write(12 * MS, c, "253:1 riops=0").unwrap_err().errno,
            Errno::Erange
        );
        assert_eq!(
            h.write(12 * MS, c, "8:0 riops=5").unwrap_err().errno,
            Errno::Enodev
        );
        assert_eq!(h.th.limits(c).iops[0], 1000);
    }
}

#[test]
fn carryover_on_limit_change() {
    // riops=50, S=20 (one IO per window); b0 passes at j0, b1 and b2 wait;
    // at j30 the limit becomes 60. Every timer runs one tick after its
    // expiry (the timer wheel's rounding).
    // current: b1 waits the v6.11 minimum 21 jiffies and goes at j22; b2
    //   still waits at j30, so the old slice is settled: 50 * 30 / 1000 = 1 IO
    //   earned, 2 used -> a debt of 1 carried into the new slice [30, 50] ->
    //   b2 waits to j50 (1 IO per window) and goes at j51.
    // slice-capped: b1 waits to the boundary j20 and goes at j21; the write
    //   restarts a cleared slice, b2 goes at the next tick, j31.
    // pre-2018: b1 was due at j41 (exact-rate target); the cleared slice lets
    //   it go at j31; b2 then waits for its exact-rate target under the new
    //   limit, 2 * 1000 / 60 + 1 = 34, from el 1: 33 jiffies -> j64 -> j65.
    // joint-fifo (6.1): b1 waits to the boundary and goes at j21; the trim
    //   there leaves 1 IO in [20, ..]; at j30 the carryover is 50 * 10 / 1000
    //   = 0 earned - 1 used = -1 (kept in its own field, counters cleared);
    //   the new window to j50 earns 60 * 20 / 1000 = 1, 1 - 1 = 0: wait 20,
    //   j51, where the window to 70 earns 2 - 1 = 1: b2 goes at j51.
    // joint-fifo-min-wait (6.12): b1 waits the minimum 21 (j22), then the
    //   same carryover and the same j51 (its minimum 1000/60 + 1 = 17 < 20).
    for (era, want) in [
        ("current", [22, 51]),
        ("joint-fifo-min-wait", [22, 51]),
        ("joint-fifo", [21, 51]),
        ("slice-capped", [21, 31]),
        ("pre-2018", [31, 65]),
    ] {
        let mut h = H::new(1000, era, "20ms-nonrot", false, &[("/c", "253:1 riops=50")]);
        let c = h.cg("/c");
        for id in 0..3 {
            let mut b = bio(c, Op::Read, 4096);
            assert_eq!(h.submit(0, id, &mut b), id > 0, "{era}");
        }
        let mut when = [0u64; 3];
        let mut written = false;
        let mut out = Vec::new();
        while let Some(t) = h.th.next_timer() {
            if !written && t > 30 * MS {
                h.write(30 * MS, c, "253:1 riops=60").unwrap();
                written = true;
                continue;
            }
            out.clear();
            h.fire(t, &mut out);
            for &id in &out {
                when[id as usize] = t / MS;
            }
        }
        assert_eq!(&when[1..], &want, "{era}");
    }
}

#[test]
fn split_pieces_count_as_ios_only_today() {
    for (era, queued) in [
        ("current", true),
        ("joint-fifo-min-wait", true),
        ("joint-fifo", true),
        ("pre-2018", false),
    ] {
        let mut h = H::new(
            1000,
            era,
            "20ms-nonrot",
            false,
            &[("/c", "253:1 riops=100")],
        );
        let c = h.cg("/c");
        let mut b = bio(c, Op::Read, 4096);
        assert!(!h.submit(0, 0, &mut b));
        assert!(b.flags.throttled);
        // the bio became 2 requests: one more IO charged (current), none (2018)
        {
            let H {
                dev,
                cgs,
                sw,
                tr,
                hz,
                th,
            } = &mut h;
            let mut ctx = Ctx {
                now: 0,
                hz: *hz,
                dev,
                cgroups: cgs,
                switches: sw,
                trace: tr,
                timer_moved: true,
            };
            th.bio_split(&mut ctx, c, Op::Read, 1);
        }
        let mut b = bio(c, Op::Read, 4096);
        assert_eq!(
            h.submit(0, 1, &mut b),
            queued,
            "{era}: budget of 2 per window used by the split piece"
        );
        // a remainder resubmitted with BPS_THROTTLED is checked for iops only (current)
        let mut r = bio(c, Op::Read, 4096);
        r.flags.throttled = true;
        assert_eq!(h.submit(0, 2, &mut r), queued, "{era}");
    }
}
