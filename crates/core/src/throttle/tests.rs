//! Driving a Throttle with synthetic bios and a tiny event loop: fio-like
//! jobs with iodepth=1 (submit, wait for release, think, resubmit); the
//! device completes at once, so clat = time held by the throttle.

use super::*;
use crate::bio::{Bio, BioFlags, BioId, Op, Origin};
use crate::ctx::Ctx;
use crate::ioprio::Ioprio;
use crate::kerr::Errno;
use crate::time::{NSEC_PER_MSEC, NSEC_PER_SEC, NSEC_PER_USEC};
use crate::trace::Tracer;

const MS: Ns = NSEC_PER_MSEC;
const US: Ns = NSEC_PER_USEC;

fn dev(rotational: bool) -> DeviceInfo {
    DeviceInfo {
        name: "nullb1".into(),
        major: 253,
        minor: 1,
        rotational,
        nr_requests: 64,
        queue_depth: 64,
        nr_hw_queues: 1,
        max_sectors_kb: 128,
        logical_block_size: 512,
        capacity_bytes: 4 << 30,
    }
}

struct H {
    dev: DeviceInfo,
    cgs: CgroupTree,
    sw: Switches,
    tr: Tracer,
    hz: Hz,
    th: Throttle,
}

impl H {
    /// `files`: (cgroup path, io.max content).
    fn new(hz: u32, wait: &str, slice: &str, rotational: bool, files: &[(&str, &str)]) -> H {
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
    fn cg(&self, p: &str) -> CgId {
        self.cgs.find(p).unwrap()
    }
    fn submit(&mut self, now: Ns, id: BioId, bio: &mut Bio) -> bool {
        let H {
            dev,
            cgs,
            sw,
            tr,
            hz,
            th,
        } = self;
        let mut ctx = Ctx {
            now,
            hz: *hz,
            dev,
            cgroups: cgs,
            switches: sw,
            trace: tr,
        };
        th.submit(&mut ctx, id, bio)
    }
    fn fire(&mut self, now: Ns, out: &mut Vec<BioId>) {
        let H {
            dev,
            cgs,
            sw,
            tr,
            hz,
            th,
        } = self;
        let mut ctx = Ctx {
            now,
            hz: *hz,
            dev,
            cgroups: cgs,
            switches: sw,
            trace: tr,
        };
        th.timer(&mut ctx, out)
    }
    fn write(&mut self, now: Ns, cg: CgId, line: &str) -> Result<(), KernelError> {
        let H {
            dev,
            cgs,
            sw,
            tr,
            hz,
            th,
        } = self;
        let mut ctx = Ctx {
            now,
            hz: *hz,
            dev,
            cgroups: cgs,
            switches: sw,
            trace: tr,
        };
        th.write_io_max(&mut ctx, cg, line)
    }
}

fn bio(cg: CgId, op: Op, bytes: u32) -> Bio {
    Bio {
        dev: 0,
        cg,
        op,
        flags: BioFlags::default(),
        sector: 0,
        bytes,
        ioprio: Ioprio::default(),
        origin: Origin::Kernel { tag: 0 },
        t_submit: 0,
        t_queue: 0,
        t_issue: 0,
        t_done: 0,
        pending_frags: 0,
        qos_cost: 0,
    }
}

/// An iodepth=1 job: each IO is submitted `think + overhead (+ hiccup)` after
/// the previous one was released.
struct Job {
    cg: CgId,
    op: Op,
    bytes: u32,
    think: Ns,
    overhead: Ns,
    first: Ns,
    /// Extra delay before IO number i (scheduling noise).
    hiccup: Box<dyn FnMut(usize) -> Ns>,
    /// (submit, release) of each IO.
    done: Vec<(Ns, Ns)>,
}

impl Job {
    fn new(cg: CgId, think: Ns, overhead: Ns, first: Ns) -> Job {
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
    fn clats(&self) -> Vec<Ns> {
        self.done.iter().map(|&(s, r)| r - s).collect()
    }
}

/// Run the jobs until `end`; timers fire at the start of their jiffy and
/// before submissions at the same instant.
fn run(h: &mut H, jobs: &mut [Job], end: Ns) {
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
fn back_to_back(wait: &str, slice: &str, limit: &str, n: usize) -> Vec<u64> {
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

#[test]
fn riops_back_to_back_current() {
    let r = back_to_back("current", "20ms-nonrot", "253:1 riops=100", 200);
    for (k, &j) in r.iter().enumerate() {
        assert_eq!(j, 20 * (k as u64 / 2), "bio {k}");
    }
}

#[test]
fn riops_back_to_back_pre2018() {
    // the third IO waits for its exact-rate moment (31), then two per window
    let r = back_to_back("pre-2018", "20ms-nonrot", "253:1 riops=100", 200);
    assert_eq!(&r[..8], &[0, 0, 31, 31, 51, 51, 71, 71]);
    for (k, &j) in r.iter().enumerate().skip(2) {
        assert_eq!(j, 20 * (k as u64 / 2) + 11, "bio {k}");
    }
}

#[test]
fn riops_back_to_back_slice_capped() {
    // the wait ends exactly on the boundary, computes 0, spins, passes one jiffy later
    let r = back_to_back("slice-capped", "20ms-nonrot", "253:1 riops=100", 200);
    assert_eq!(&r[..8], &[0, 0, 21, 21, 41, 41, 61, 61]);
    for (k, &j) in r.iter().enumerate().skip(2) {
        assert_eq!(j, 20 * (k as u64 / 2) + 1, "bio {k}");
    }
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
    let mut h = H::new(
        1000,
        "current",
        "100ms",
        false,
        &[("/cg1", "253:1 riops=100")],
    );
    let mut jobs = [Job::new(h.cg("/cg1"), 0, 0, 0)];
    run(&mut h, &mut jobs, 10 * NSEC_PER_SEC - 1);
    let n = jobs[0].done.len();
    assert!((1000..=1010).contains(&n), "{n}");
}

#[test]
fn rbps_one_big_bio_waits_999_jiffies_then_the_wheel() {
    // spec §8: 1 MiB against 1 MiB/s from a fresh slice waits 999 jiffies;
    // the timer is capped at 8 slices (800 -> wheel 832), re-evaluated, then
    // armed for 1000 (-> wheel 1008)
    for era in ["current", "pre-2018", "slice-capped"] {
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
    for era in ["current", "pre-2018", "slice-capped"] {
        let mut h = H::new(
            1000,
            era,
            "20ms-nonrot",
            false,
            &[("/cg1", "253:1 rbps=409600")],
        );
        let mut jobs = [Job::new(h.cg("/cg1"), 0, 0, 0)];
        run(&mut h, &mut jobs, 10 * NSEC_PER_SEC - 1);
        let n = jobs[0].done.len();
        assert!((1000..=1003).contains(&n), "{era}: {n}");
    }
}
