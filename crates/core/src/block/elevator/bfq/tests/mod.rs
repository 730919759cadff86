//! Unit tests of the bfq model: a harness that inserts, dispatches and
//! completes requests by hand, at times the test chooses.

mod inject;
mod limit;
mod sched;
mod service;
mod wf2q_order;

use super::*;
use crate::block::blk_cgroup::CgroupTree;
use crate::block::ioprio::Ioprio;
use crate::block::request::Submitter;
use crate::sim::switches::Switches;
use crate::sim::time::NSEC_PER_USEC;
use crate::sim::trace::Tracer;

pub(super) const BE4: Ioprio = Ioprio(2 << 13 | 4);

pub(super) struct H {
    pub reqs: Slab<Request>,
    pub dev: DeviceInfo,
    pub cg: CgroupTree,
    pub sw: Switches,
    pub tr: Tracer,
    pub now: Ns,
    /// The kernel's HZ (1000 unless a test sets another).
    pub hz: Hz,
    pub bfq: Bfq,
    next_bio: u32,
    /// Next sector per submitter (random-looking, far apart).
    pos: u64,
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
    pub fn new(cg: CgroupTree) -> H {
        let dev = crate::block::testutil::device("nvme0n1", 259, 0);
        H {
            bfq: Bfq::new(&dev),
            reqs: Slab::default(),
            dev,
            cg,
            sw: Switches::default(),
            tr: Tracer::default(),
            now: 0,
            hz: Hz(1000),
            next_bio: 0,
            pos: 0,
        }
    }
    /// Seed 004's groups, /test1 and /test2 weighted 800:100, with
    /// low_latency off and no lock time; returns their cgroups.
    pub fn seed004_groups() -> (H, CgId, CgId) {
        let t = crate::block::testutil::tree_with(&[
            ("/test1", "io.bfq.weight", "default 800"),
            ("/test2", "io.bfq.weight", "default 100"),
        ]);
        let (a, b) = (t.find("/test1").unwrap(), t.find("/test2").unwrap());
        let mut h = H::new(t);
        h.tune("low_latency", "0");
        h.tune(LOCK_HOLD_PARAM, "0");
        (h, a, b)
    }
    pub fn tune(&mut self, name: &str, v: &str) {
        self.bfq.set_tunable(name, v).unwrap();
    }
    pub fn advance_us(&mut self, us: u64) {
        self.now += us * NSEC_PER_USEC;
    }
    /// Insert a 4 KiB sync read of job `job` in cgroup `cg`.
    pub fn read(&mut self, job: u32, cg: CgId) -> ReqId {
        self.req(Submitter::Job(job), cg, Op::Read, 8, BE4)
    }
    pub fn req(&mut self, who: Submitter, cg: CgId, op: Op, sectors: u64, prio: Ioprio) -> ReqId {
        self.next_bio += 1;
        // far apart, never sequential
        self.pos = (self.pos + 1_000_003) % (1 << 30);
        let mut rq = crate::block::testutil::request(
            op,
            cg,
            prio,
            self.pos,
            sectors,
            self.next_bio,
            self.now,
        );
        rq.submitter = who;
        let id = self.reqs.insert(rq);
        let mut c = ctx!(self);
        self.bfq.insert(&mut c, &mut self.reqs, id);
        id
    }
    pub fn disp(&mut self) -> Option<ReqId> {
        let mut c = ctx!(self);
        self.bfq.dispatch(&mut c, &mut self.reqs)
    }
    pub fn done(&mut self, r: ReqId) {
        self.reqs.remove(r);
        let mut c = ctx!(self);
        self.bfq.completed(&mut c, &self.reqs, r);
    }
    pub fn cg_of(&self, r: ReqId) -> CgId {
        self.reqs.get(r).cg
    }
    pub fn submitter_of(&self, r: ReqId) -> Submitter {
        self.reqs.get(r).submitter
    }
    /// Run a closed loop: every job keeps `depth` reads queued or in
    /// flight; each dispatched request completes `service_us` later and is
    /// replaced at once. Returns the completions per cgroup.
    pub fn closed_loop(
        &mut self,
        jobs: &[(u32, CgId)],
        depth: u32,
        service_us: u64,
        rounds: usize,
    ) -> std::collections::BTreeMap<CgId, u64> {
        let mut done = std::collections::BTreeMap::new();
        for &(j, cg) in jobs {
            for _ in 0..depth {
                self.read(j, cg);
            }
        }
        let mut inflight: std::collections::VecDeque<(Ns, ReqId)> = Default::default();
        for _ in 0..rounds {
            while let Some(r) = self.disp() {
                inflight.push_back((self.now + service_us * NSEC_PER_USEC, r));
            }
            let next_done = inflight.front().map(|x| x.0);
            let next_run = self.bfq.next_run();
            let t = match (next_done, next_run) {
                (Some(a), Some(b)) => a.min(b),
                (a, b) => a.or(b).expect("something to wait for"),
            };
            self.now = t;
            while inflight.front().is_some_and(|x| x.0 <= self.now) {
                let (_, r) = inflight.pop_front().unwrap();
                let (cg, who) = (self.cg_of(r), self.submitter_of(r));
                self.done(r);
                *done.entry(cg).or_insert(0) += 1;
                self.req(who, cg, Op::Read, 8, BE4);
            }
        }
        done
    }
}
