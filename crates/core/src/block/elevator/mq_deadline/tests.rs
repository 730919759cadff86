use super::*;
use crate::sim::kerr::kstrtoint;

impl MqDeadline {
    /// FIFO contents in list order (tests).
    fn fifo_order(&self, p: DdPrio, dir: usize) -> Vec<ReqId> {
        self.per_prio[p as usize].fifo[dir]
            .values()
            .copied()
            .collect()
    }
}

use crate::block::bio::{BioFlags, Origin};
use crate::block::blk_cgroup::{CgId, CgroupTree};
use crate::sim::kerr::Errno;
use crate::sim::switches::Switches;
use crate::sim::time::{Ns, NSEC_PER_MSEC};
use crate::sim::trace::Tracer;

const RT: Ioprio = Ioprio(1 << 13 | 4);
const BE: Ioprio = Ioprio(2 << 13 | 4);
const IDLE: Ioprio = Ioprio(3 << 13);

fn dev() -> DeviceInfo {
    crate::block::testutil::device("nullb0", 252, 0)
}

struct H {
    reqs: Slab<Request>,
    dev: DeviceInfo,
    cg: CgroupTree,
    sw: Switches,
    tr: Tracer,
    now: Ns,
    hz: Hz,
    dd: MqDeadline,
    next_bio: BioId,
}

macro_rules! ctx {
    ($h:expr) => {
        Ctx {
            now: $h.now,
            hz: $h.hz,
            dev: &$h.dev,
            cgroups: &$h.cg,
            switches: &$h.sw,
            trace: &mut $h.tr,
            timer_moved: true,
        }
    };
}

impl H {
    fn new() -> H {
        let d = dev();
        let dd = MqDeadline::new(&d);
        H {
            reqs: Slab::default(),
            dev: d,
            cg: CgroupTree::new(),
            sw: Switches::default(),
            tr: Tracer::default(),
            now: 0,
            hz: Hz(1000),
            dd,
            next_bio: 0,
        }
    }
    fn at_ms(&mut self, ms: u64) {
        self.now = ms * NSEC_PER_MSEC;
    }
    fn mkreq(&mut self, op: Op, sector: u64, sectors: u64, prio: Ioprio, cg: CgId) -> ReqId {
        let b = self.next_bio;
        self.next_bio += 1;
        self.reqs.insert(crate::block::testutil::request(
            op, cg, prio, sector, sectors, b, self.now,
        ))
    }
    fn ins(&mut self, op: Op, sector: u64, sectors: u64, prio: Ioprio) -> ReqId {
        let id = self.mkreq(op, sector, sectors, prio, 0);
        let mut c = ctx!(self);
        self.dd.insert(&mut c, &mut self.reqs, id);
        id
    }
    /// A queue run's dispatch (the run is made now, as kblockd's would).
    fn disp(&mut self) -> Option<ReqId> {
        self.dd.run_async();
        self.offer()
    }
    /// A dispatch offered without a run of its own (the simulator's blk-mq
    /// offers one after every completion).
    fn offer(&mut self) -> Option<ReqId> {
        let mut c = ctx!(self);
        self.dd.dispatch(&mut c, &mut self.reqs)
    }
    /// Dispatch and complete at once; returns (op, sector) of each.
    fn drain(&mut self) -> Vec<(Op, u64)> {
        let mut out = Vec::new();
        while let Some(r) = self.disp() {
            let rq = self.reqs.get(r);
            out.push((rq.op, rq.sector));
            self.done(r);
        }
        out
    }
    fn done(&mut self, r: ReqId) {
        self.reqs.remove(r);
        let mut c = ctx!(self);
        self.dd.completed(&mut c, &self.reqs, r);
    }
    fn bio(&mut self, op: Op, sector: u64, sectors: u64, prio: Ioprio, cg: CgId) -> (BioId, Bio) {
        let id = self.next_bio;
        self.next_bio += 1;
        let b = Bio {
            dev: 0,
            cg,
            op,
            flags: BioFlags::default(),
            sector,
            bytes: (sectors << 9) as u32,
            ioprio: prio,
            origin: Origin::Kernel { tag: 0 },
            t_submit: self.now,
            t_alloc: self.now,
            t_queue: self.now,
            t_issue: 0,
            t_done: 0,
            pending_frags: 0,
            qos_cost: 0,
            chain_next: crate::block::bio::NO_BIO,
            qos_pos: 0,
            wbt_acct: 0,
        };
        (id, b)
    }
    fn merge(&mut self, b: &(BioId, Bio)) -> Option<ReqId> {
        let mut c = ctx!(self);
        self.dd.bio_merge(&mut c, &mut self.reqs, b.0, &b.1)
    }
    fn mb(&mut self, op: Op, sector: u64, sectors: u64, prio: Ioprio, cg: CgId) -> Option<ReqId> {
        let b = self.bio(op, sector, sectors, prio, cg);
        self.merge(&b)
    }
    fn freed(&mut self) -> Vec<ReqId> {
        let mut v = Vec::new();
        self.dd.take_freed(&mut v);
        v
    }
}

fn sectors(v: &[(Op, u64)]) -> Vec<u64> {
    v.iter().map(|x| x.1).collect()
}

#[test]
fn sorted_within_a_batch() {
    let mut h = H::new();
    for s in [800, 100, 500, 300] {
        h.ins(Op::Read, s, 8, BE);
    }
    assert_eq!(sectors(&h.drain()), vec![100, 300, 500, 800]);
}

/// A batch continues upward from the last position; a new batch starts
/// from the FIFO head only if it has expired.
#[test]
fn fifo_expiry_picks_the_next_batch_start() {
    // Not expired: sector order.
    let mut h = H::new();
    h.ins(Op::Read, 800, 8, BE);
    h.at_ms(100);
    h.ins(Op::Read, 100, 8, BE);
    h.at_ms(499);
    assert_eq!(sectors(&h.drain()), vec![100, 800]);
    // Expired (read_expire 500 ms): the oldest request first.
    let mut h = H::new();
    h.ins(Op::Read, 800, 8, BE);
    h.at_ms(100);
    h.ins(Op::Read, 100, 8, BE);
    h.at_ms(500);
    assert_eq!(sectors(&h.drain()), vec![800, 100]);
    // A running batch ignores expiry: soft deadlines.
    let mut h = H::new();
    h.dd.set_tunable("fifo_batch", "4").unwrap();
    h.ins(Op::Read, 10, 8, BE);
    h.ins(Op::Read, 20, 8, BE);
    h.at_ms(100);
    h.ins(Op::Read, 5, 8, BE); // oldest is sector 10; 5 comes later
    h.at_ms(1000);
    // Batch starts at the expired head (10), continues to 20, then 5.
    assert_eq!(sectors(&h.drain()), vec![10, 20, 5]);
}

/// Reads and writes in one priority: batches of fifo_batch (16) in
/// sector order; with writes waiting, the third direction choice goes to
/// writes.
#[test]
fn batches_and_writes_starved() {
    let mut h = H::new();
    for i in 0..40 {
        // Gaps between requests, or they would be insert-merged.
        h.ins(Op::Read, 10_000 + i * 16, 8, BE);
        h.ins(Op::Write, 50_000 + i * 16, 8, BE);
    }
    let got = h.drain();
    let ops: Vec<Op> = got.iter().map(|x| x.0).collect();
    // A fresh scheduler has last_dir = WRITE and batching = 0, so the very
    // first dispatch "continues" a write batch (a quirk of the code).
    // Then: two read batches, writes on the third choice, the last reads,
    // the last writes.
    let mut want = vec![Op::Write; 16];
    want.extend([Op::Read; 32]);
    want.extend([Op::Write; 16]);
    want.extend([Op::Read; 8]);
    want.extend([Op::Write; 8]);
    assert_eq!(ops, want);
    let r: Vec<u64> = got
        .iter()
        .filter(|x| x.0 == Op::Read)
        .map(|x| x.1)
        .collect();
    assert!(r.windows(2).all(|w| w[0] < w[1]));
}

#[test]
fn writes_starved_counts_direction_choices() {
    let run = |ws: &str| {
        let mut h = H::new();
        h.dd.set_tunable("fifo_batch", "1").unwrap();
        h.dd.set_tunable("writes_starved", ws).unwrap();
        for i in 0..6 {
            h.ins(Op::Read, 1000 + i * 16, 8, BE);
            h.ins(Op::Write, 9000 + i * 16, 8, BE);
        }
        h.drain()
            .iter()
            .map(|x| if x.0 == Op::Read { 'R' } else { 'W' })
            .collect::<String>()
    };
    // The first W is the initial write "batch" (see above); then every
    // third direction choice goes to writes.
    assert_eq!(run("2"), "WRRWRRWRRWWW");
    assert_eq!(run("1"), "WRWRWRWRWRWR");
    assert_eq!(run("0"), "WWWWWWRRRRRR");
    // Negative values compare as huge unsigned numbers: writes wait for all reads.
    assert_eq!(run("-1"), "WRRRRRRWWWWW");
}

/// RT before BE before IDLE, and a priority with requests at the device
/// blocks the lower ones (dd_queued counts in-flight requests).
#[test]
fn strict_priority_counts_in_flight() {
    let mut h = H::new();
    let i = h.ins(Op::Read, 300, 8, IDLE);
    let b = h.ins(Op::Read, 200, 8, BE);
    let r = h.ins(Op::Read, 100, 8, RT);
    assert_eq!(h.disp(), Some(r));
    assert_eq!(h.dd.dd_queued(DdPrio::Rt), 1);
    assert_eq!(
        h.disp(),
        None,
        "BE waits while the RT request is at the device"
    );
    assert!(h.dd.has_work());
    h.done(r);
    assert_eq!(h.dd.dd_queued(DdPrio::Rt), 0);
    assert_eq!(h.disp(), Some(b));
    assert_eq!(h.disp(), None);
    h.done(b);
    assert_eq!(h.disp(), Some(i));
    let s = h.dd.stats(DdPrio::Idle);
    assert_eq!((s.inserted, s.dispatched, s.completed), (1, 1, 0));
    assert_eq!(h.dd.owned_by_driver(DdPrio::Idle), 1);
    // NONE-class requests are BE.
    assert_eq!(DdPrio::of(Ioprio(0)), DdPrio::Be);
    assert_eq!(DdPrio::of(Ioprio::new(IoprioClass::Rt, 7, 5)), DdPrio::Rt);
}

/// The BE request held behind the RT one goes out at the next run the
/// kernel makes, not at the RT request's completion: a completion does not
/// run the queue (`blk_mq_sched_restart` needs a run cut short), the empty
/// pass armed the `BLK_MQ_BUDGET_DELAY` re-run (3 ms at HZ 1000, run by the
/// timer wheel a tick later), and an insertion's run comes at once.
#[test]
fn a_held_request_waits_for_the_next_queue_run() {
    let mut h = H::new();
    let b = h.ins(Op::Read, 200, 8, BE);
    let r = h.ins(Op::Read, 100, 8, RT);
    assert_eq!(h.offer(), Some(r), "the insertion's run");
    assert_eq!(h.offer(), None, "BE held: the pass ends empty");
    assert_eq!(
        h.dd.next_run(),
        Some(4 * NSEC_PER_MSEC),
        "jiffy 3, run at tick 4"
    );
    h.at_ms(1);
    h.done(r);
    assert_eq!(h.offer(), None, "the completion alone makes no run");
    h.at_ms(4);
    assert!(h.dd.wants_run(h.now));
    assert_eq!(h.offer(), Some(b), "the delayed re-run");
    assert_eq!(h.offer(), None);
    assert_eq!(h.dd.next_run(), None, "nothing held: no re-run");
    // an insertion's run does not wait for the re-run
    let mut h = H::new();
    let b = h.ins(Op::Read, 200, 8, BE);
    let r = h.ins(Op::Read, 100, 8, RT);
    assert_eq!((h.offer(), h.offer()), (Some(r), None));
    h.done(r);
    let r2 = h.ins(Op::Read, 300, 8, RT);
    assert_eq!(h.offer(), Some(r2), "RT first");
    h.done(r2);
    let i = h.ins(Op::Read, 400, 8, IDLE);
    assert_eq!(h.offer(), Some(b), "the IDLE insertion's run finds RT idle");
    h.done(b);
    assert_eq!(h.offer(), Some(i));
}

/// A steady RT stream: BE gets nothing until its request is
/// prio_aging_expire (10 s) old, then the aging path serves it.
#[test]
fn prio_aging_rescues_starved_be() {
    let mut h = H::new();
    let b = h.ins(Op::Read, 5000, 8, BE);
    let mut rt_in_flight = None;
    let mut served_at = None;
    for ms in (0..=12_000u64).step_by(100) {
        h.at_ms(ms);
        if let Some(r) = rt_in_flight.take() {
            h.done(r);
        }
        h.ins(Op::Read, ms, 8, RT);
        let got = h.disp().unwrap();
        if got == b {
            served_at = Some(ms);
            break;
        }
        rt_in_flight = Some(got);
    }
    assert_eq!(served_at, Some(10_000));
    // The same with a shorter aging time, set in ms through sysfs.
    let mut h = H::new();
    h.dd.set_tunable("prio_aging_expire", "250").unwrap();
    h.ins(Op::Read, 5000, 8, BE);
    let r = h.ins(Op::Read, 0, 8, RT);
    assert_eq!(h.disp(), Some(r));
    h.at_ms(249);
    assert_eq!(h.disp(), None);
    h.at_ms(250);
    let d = h.disp().unwrap();
    assert_eq!(h.reqs.get(d).ioprio, BE);
}

/// IDLE is rescued by aging too, ahead of a waiting BE request that is
/// not yet old enough.
#[test]
fn prio_aging_idle() {
    let mut h = H::new();
    let i = h.ins(Op::Read, 9000, 8, IDLE);
    h.at_ms(5000);
    let b = h.ins(Op::Read, 8000, 8, BE);
    let r = h.ins(Op::Read, 100, 8, RT);
    assert_eq!(h.disp(), Some(r));
    h.at_ms(10_000);
    assert_eq!(h.disp(), Some(i), "IDLE is 10 s old, BE only 5 s");
    assert_eq!(h.disp(), None);
    h.at_ms(15_000);
    assert_eq!(h.disp(), Some(b));
}

#[test]
fn at_head_inserts_go_first() {
    let mut h = H::new();
    let r = h.ins(Op::Read, 0, 8, RT);
    assert_eq!(h.disp(), Some(r));
    let b = h.mkreq(Op::Write, 100, 8, IDLE, 0);
    let mut c = ctx!(h);
    h.dd.insert_at_head(&mut c, &mut h.reqs, b);
    // Served although an RT request is in flight and the request is IDLE.
    assert_eq!(h.disp(), Some(b));
    // A requeue (at-head insert of a dispatched request) is not counted twice.
    let mut c = ctx!(h);
    h.dd.insert_at_head(&mut c, &mut h.reqs, r);
    assert_eq!(h.dd.stats(DdPrio::Rt).inserted, 1);
    assert_eq!(h.disp(), Some(r));
    h.done(r);
    h.done(b);
    assert_eq!(h.dd.dd_queued(DdPrio::Rt), 0);
    assert_eq!(h.dd.dd_queued(DdPrio::Idle), 0);
    assert!(!h.dd.has_work());
}

#[test]
fn back_and_front_merges_need_equal_priority() {
    let mut h = H::new();
    let a = h.ins(Op::Read, 100, 8, BE);
    let b = h.ins(Op::Read, 300, 8, BE);
    // Back merge into a.
    let bio = h.bio(Op::Read, 108, 8, BE, 0);
    assert_eq!(h.merge(&bio), Some(a));
    assert_eq!((h.reqs.get(a).sector, h.reqs.get(a).sectors()), (100, 16));
    assert_eq!(h.reqs.get(a).bios.last(), Some(&bio.0));
    // Same place, other priority / cgroup / op / FUA: no merge.
    let mut cg = CgroupTree::new();
    let other = cg.ensure("/x").unwrap();
    h.cg = cg;
    assert_eq!(h.mb(Op::Read, 116, 8, RT, 0), None);
    assert_eq!(
        h.mb(Op::Read, 116, 8, Ioprio(2 << 13 | 3), 0),
        None,
        "level differs"
    );
    assert_eq!(h.mb(Op::Read, 116, 8, BE, other), None);
    assert_eq!(h.mb(Op::Write, 116, 8, BE, 0), None);
    let mut fua = h.bio(Op::Read, 116, 8, BE, 0);
    fua.1.flags.fua = true;
    assert_eq!(h.merge(&fua), None);
    // Front merge into b (b is not the cached last_merge request).
    let fb = h.bio(Op::Read, 292, 8, BE, 0);
    assert_eq!(h.merge(&fb), Some(b));
    assert_eq!(h.reqs.get(b).sector, 292);
    assert_eq!(h.reqs.get(b).bios[0], fb.0);
    assert_eq!(h.mb(Op::Read, 284, 8, IDLE, 0), None);
    assert!(h.freed().is_empty());
}

#[test]
fn front_merges_tunable() {
    let mut h = H::new();
    let _a = h.ins(Op::Read, 100, 8, BE); // becomes the cached last_merge
    let b = h.ins(Op::Read, 300, 8, BE);
    h.dd.set_tunable("front_merges", "0").unwrap();
    assert_eq!(h.mb(Op::Read, 292, 8, BE, 0), None);
    // The one-hit cache still front-merges (blk_try_merge ignores front_merges).
    let m = h.bio(Op::Read, 92, 8, BE, 0);
    assert_eq!(h.merge(&m), Some(0));
    h.dd.set_tunable("front_merges", "1").unwrap();
    assert_eq!(h.mb(Op::Read, 292, 8, BE, 0), Some(b));
}

/// A front merge re-sorts the request: it is dispatched at its new position.
#[test]
fn front_merge_moves_request_in_sort_order() {
    let mut h = H::new();
    h.ins(Op::Read, 1000, 8, BE);
    h.ins(Op::Read, 1850, 8, BE);
    let b = h.ins(Op::Read, 2000, 8, BE);
    let bio = h.bio(Op::Read, 1808, 192, BE, 0);
    assert_eq!(h.merge(&bio), Some(b));
    assert_eq!(sectors(&h.drain()), vec![1000, 1808, 1850]);
}

/// Filling the gap between two requests merges them; the survivor keeps
/// the earlier deadline and the FIFO position of the merged-away one.
#[test]
fn request_merge_keeps_earlier_deadline() {
    let mut h = H::new();
    let b = h.ins(Op::Read, 16, 8, BE); // t = 0: deadline 500
    h.at_ms(50);
    let c = h.ins(Op::Read, 5000, 8, BE); // deadline 550
    h.at_ms(100);
    let a = h.ins(Op::Read, 0, 8, BE); // deadline 600
    assert_eq!(h.dd.fifo_order(DdPrio::Be, READ), vec![b, c, a]);
    let gap = h.bio(Op::Read, 8, 8, BE, 0);
    assert_eq!(h.merge(&gap), Some(a));
    assert_eq!(h.freed(), vec![b]);
    let ra = h.reqs.get(a);
    assert_eq!((ra.sector, ra.sectors(), ra.bios.len()), (0, 24, 3));
    assert_eq!(ra.start_time, 0, "the earlier start_time_ns is kept");
    assert_eq!(ra.fifo_time, 500 * NSEC_PER_MSEC);
    assert!(h.reqs.get(b).bios.is_empty());
    assert_eq!(h.dd.fifo_order(DdPrio::Be, READ), vec![a, c]);
    let s = h.dd.stats(DdPrio::Be);
    assert_eq!((s.inserted, s.merged, s.completed), (3, 1, 1));
    assert_eq!(h.dd.dd_queued(DdPrio::Be), 2);
    assert_eq!(h.dd.queued(), 2);
    h.reqs.remove(b);
    // At 520 ms a's (inherited) deadline has passed, c's has not.
    h.at_ms(520);
    let mut c2 = ctx!(h);
    h.dd.set_tunable("fifo_batch", "1").unwrap();
    let first = h.dd.dispatch(&mut c2, &mut h.reqs);
    assert_eq!(first, Some(a));
    // Requests of different priority are never merged with each other.
    let mut h = H::new();
    h.ins(Op::Read, 0, 8, BE);
    h.ins(Op::Read, 16, 8, RT);
    assert_eq!(h.mb(Op::Read, 8, 8, BE, 0), Some(0));
    assert!(h.freed().is_empty());
    assert_eq!(h.dd.queued(), 2);
}

/// A bio merge that would exceed max_sectors fails and marks the request
/// REQ_NOMERGE: later small bios do not merge into it either.
#[test]
fn size_limit_sets_nomerge() {
    let mut h = H::new(); // max 128 KiB = 256 sectors
    let a = h.ins(Op::Write, 0, 252, BE);
    assert_eq!(h.mb(Op::Write, 252, 8, BE, 0), None);
    assert_eq!(h.mb(Op::Write, 252, 4, BE, 0), None);
    let b = h.ins(Op::Write, 1000, 248, BE);
    assert_eq!(h.mb(Op::Write, 1248, 8, BE, 0), Some(b));
    assert_eq!(h.reqs.get(b).sectors(), 256);
    assert_eq!(h.reqs.get(a).sectors(), 252);
}

/// elv_attempt_insert_merge: a request inserted right after a queued one
/// is merged into it at insert time.
#[test]
fn insert_merge() {
    let mut h = H::new();
    let a = h.ins(Op::Write, 0, 8, BE);
    let r = h.ins(Op::Write, 8, 8, BE);
    assert_eq!(h.freed(), vec![r]);
    assert_eq!(h.reqs.get(a).sectors(), 16);
    let s = h.dd.stats(DdPrio::Be);
    assert_eq!((s.inserted, s.merged, s.completed), (2, 1, 1));
    assert_eq!(h.dd.queued(), 1);
    // Different priority: kept apart.
    let x = h.ins(Op::Write, 16, 8, IDLE);
    assert!(h.freed().is_empty());
    assert_eq!(h.dd.queued(), 2);
    let _ = x;
}

#[test]
fn tunables_units_and_validation() {
    let mut h = H::new();
    let t: Vec<(String, String)> = h.dd.tunables();
    let want = [
        ("async_depth", "64"),
        ("fifo_batch", "16"),
        ("front_merges", "1"),
        ("prio_aging_expire", "10000"),
        ("read_expire", "500"),
        ("write_expire", "5000"),
        ("writes_starved", "2"),
    ];
    assert_eq!(
        t,
        want.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect::<Vec<_>>()
    );
    let get = |dd: &MqDeadline, n: &str| dd.tunables().into_iter().find(|x| x.0 == n).unwrap().1;
    h.dd.set_tunable("read_expire", "100\n").unwrap();
    assert_eq!(get(&h.dd, "read_expire"), "100");
    h.dd.set_tunable("write_expire", "0x20").unwrap();
    assert_eq!(get(&h.dd, "write_expire"), "32");
    h.dd.set_tunable("read_expire", "-5").unwrap();
    assert_eq!(get(&h.dd, "read_expire"), "0");
    h.dd.set_tunable("front_merges", "7").unwrap();
    assert_eq!(get(&h.dd, "front_merges"), "1");
    h.dd.set_tunable("async_depth", "0").unwrap();
    assert_eq!(get(&h.dd, "async_depth"), "1");
    h.dd.set_tunable("fifo_batch", "-3").unwrap();
    assert_eq!(get(&h.dd, "fifo_batch"), "0");
    assert!(h
        .dd
        .set_tunable("read_expire", "fast")
        .unwrap_err()
        .contains("EINVAL"));
    assert!(h
        .dd
        .set_tunable("read_expire", "99999999999")
        .unwrap_err()
        .contains("ERANGE"));
    assert!(h.dd.set_tunable("quantum", "4").is_err());
    // At HZ=250 a jiffy is 4 ms: 1 ms is stored as one jiffy and reads back as 4.
    h.hz = Hz(250);
    h.ins(Op::Read, 0, 8, BE);
    h.dd.set_tunable("read_expire", "1").unwrap();
    assert_eq!(get(&h.dd, "read_expire"), "4");
    assert_eq!(h.dd.limit_depth(Op::Read, true), None);
    assert_eq!(h.dd.limit_depth(Op::Write, true), Some(1));
    h.dd.depth_updated(32);
    assert_eq!(h.dd.limit_depth(Op::Read, false), Some(32));
}

/// read_expire is converted with the run's HZ: 500 ms at HZ=250 is 125 jiffies.
#[test]
fn expiry_in_jiffies() {
    for (ms, first) in [(11, 100), (12, 800)] {
        let mut h = H::new();
        h.hz = Hz(250);
        h.dd.set_tunable("read_expire", "10").unwrap(); // 3 jiffies = 12 ms
        h.ins(Op::Read, 800, 8, BE);
        h.ins(Op::Read, 100, 8, BE);
        h.at_ms(ms); // 11 ms = jiffy 2 (not expired), 12 ms = jiffy 3 (expired)
        let d = h.disp().unwrap();
        assert_eq!(h.reqs.get(d).sector, first, "at {ms} ms");
    }
}

#[test]
fn kstrtoint_like_the_kernel() {
    assert_eq!(kstrtoint("42").unwrap(), 42);
    assert_eq!(kstrtoint("42\n").unwrap(), 42);
    assert_eq!(kstrtoint("+7").unwrap(), 7);
    assert_eq!(kstrtoint("-0x10").unwrap(), -16);
    assert_eq!(kstrtoint("010").unwrap(), 8);
    assert_eq!(kstrtoint("0").unwrap(), 0);
    assert_eq!(kstrtoint("-2147483648").unwrap(), i32::MIN);
    for bad in [
        "", "\n", "08", "0x", "1 ", " 1", "1\n\n", "+-1", "1.5", "ten",
    ] {
        assert_eq!(kstrtoint(bad).unwrap_err().errno, Errno::Einval, "{bad:?}");
    }
    for big in ["2147483648", "-2147483649", "99999999999999999999999"] {
        assert_eq!(kstrtoint(big).unwrap_err().errno, Errno::Erange, "{big:?}");
    }
}

#[test]
fn registered_in_build() {
    let e = crate::block::elevator::build("mq-deadline", &dev()).unwrap();
    assert_eq!(e.name(), "mq-deadline");
    assert!(crate::block::elevator::build("deadline", &dev()).is_ok());
}
