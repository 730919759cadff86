//! A small closed-loop simulation around one IoCost: open or closed
//! loads per cgroup, a fixed-latency device, the period timer.

use std::cell::RefCell;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::rc::Rc;

use super::*;

#[derive(Clone, Default)]
pub(super) struct Shared(pub(super) Rc<RefCell<Vec<String>>>);
impl TraceSink for Shared {
    fn event(&mut self, t: Ns, name: &str, payload: &str) {
        self.0
            .borrow_mut()
            .push(crate::sim::trace::format_line(t, name, payload));
    }
}

pub(super) enum Load {
    /// `qd` IOs always outstanding (fio iodepth) from `from` until `until`.
    Closed { qd: u32, until: Ns },
    /// One IO every `gap` ns, at most one outstanding, until `until`.
    Open { gap: Ns, until: Ns },
}

pub(super) struct Sim {
    pub(super) tree: CgroupTree,
    pub(super) dev: DeviceInfo,
    pub(super) sw: Switches,
    pub(super) tracer: Tracer,
    pub(super) ioc: IoCost,
    pub(super) now: Ns,
    pub(super) bios: Vec<Option<Bio>>,
    /// device completions (time, seq, bio id)
    pub(super) events: BinaryHeap<Reverse<(Ns, u64, BioId)>>,
    /// open-loop submissions (time, seq, cg)
    pub(super) arrivals: BinaryHeap<Reverse<(Ns, u64, CgId)>>,
    pub(super) seq: u64,
    pub(super) dev_lat: Ns,
    pub(super) bytes: u32,
    pub(super) loads: BTreeMap<CgId, Load>,
    pub(super) done: BTreeMap<CgId, u64>,
    pub(super) next_sector: u64,
    /// completions per cgroup with completion time inside [win.0, win.1)
    pub(super) win: (Ns, Ns),
}

impl Sim {
    /// The controller and the context the block layer would hand it now.
    pub(super) fn parts(&mut self) -> (&mut IoCost, Ctx<'_>) {
        let ctx = crate::block::testutil::ctx(
            self.now,
            &self.dev,
            &self.tree,
            &self.sw,
            &mut self.tracer,
        );
        (&mut self.ioc, ctx)
    }

    pub(super) fn new(files: &[(&str, &str, &str)], dev_lat: Ns, bytes: u32, trace: bool) -> Sim {
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

    pub(super) fn submit(&mut self, cg: CgId) {
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
        let (ioc, mut ctx) = self.parts();
        let v = ioc.throttle(&mut ctx, id, &mut bio);
        self.bios[id as usize] = Some(bio);
        if v == QosVerdict::Proceed {
            self.issue(id);
        }
    }

    pub(super) fn issue(&mut self, id: BioId) {
        let b = self.bios[id as usize].as_mut().unwrap();
        b.t_issue = self.now;
        self.seq += 1;
        self.events
            .push(Reverse((self.now + self.dev_lat, self.seq, id)));
    }

    pub(super) fn complete(&mut self, id: BioId) {
        let bio = self.bios[id as usize].take().unwrap();
        let rq = Request {
            dev: 0,
            op: bio.op,
            cg: bio.cg,
            submitter: Default::default(),
            ioprio: bio.ioprio,
            sector: bio.sector,
            bytes: bio.bytes,
            sync: true,
            bios: smallvec::smallvec![id],
            start_time: bio.t_issue,
            alloc_time: bio.t_issue,
            insert_time: bio.t_issue,
            issue_time: bio.t_issue,
            fifo_time: 0,
            done_time: self.now,
            wbt_acct: 0,
            tag: 0,
        };
        let mut rel = Vec::new();
        let (ioc, mut ctx) = self.parts();
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

    pub(super) fn start(&mut self) {
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

    pub(super) fn run_until(&mut self, end: Ns) {
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
                let (ioc, mut ctx) = self.parts();
                ioc.timer(&mut ctx, &mut rel);
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

    pub(super) fn count(&self, cg: CgId) -> u64 {
        self.done.get(&cg).copied().unwrap_or(0)
    }
}

/// The model below: 4 KiB random reads cost exactly 1 ms at 100 % (1000 IOPS).
pub(super) const MODEL_1K: &str = "8:0 ctrl=user model=linear rbps=4096000000 rseqiops=1000 rrandiops=1000 wbps=4096000000 wseqiops=1000 wrandiops=1000";
/// vrate fixed at 100 %.
pub(super) const QOS_FIXED: &str =
    "8:0 enable=1 ctrl=user rpct=0 rlat=5000 wpct=0 wlat=5000 min=100 max=100";

impl Sim {
    /// [`MODEL_1K`] at a fixed vrate, `io.weight` per cgroup path as given,
    /// a 100 µs device and 4 KiB reads.
    pub(super) fn fixed_vrate(weights: &[(&str, &str)], trace: bool) -> Sim {
        let mut files = vec![
            ("/", "io.cost.model", MODEL_1K),
            ("/", "io.cost.qos", QOS_FIXED),
        ];
        files.extend(weights.iter().map(|&(p, w)| (p, "io.weight", w)));
        Sim::new(&files, 100_000, 4096, trace)
    }

    /// Cgroup `cg` keeps `qd` I/Os outstanding until `until`.
    pub(super) fn closed(&mut self, cg: CgId, qd: u32, until: Ns) {
        self.loads.insert(cg, Load::Closed { qd, until });
    }

    /// Cgroup `cg` submits one I/O every `gap` until `until`.
    pub(super) fn open(&mut self, cg: CgId, gap: Ns, until: Ns) {
        self.loads.insert(cg, Load::Open { gap, until });
    }
}
