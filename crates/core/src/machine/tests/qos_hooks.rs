//! The hooks an rq_qos member names ([`RqQos::hooks`]) and what its
//! `throttle` says of its timers (`Ctx::timer_moved`) only save calls: a
//! run whose chain members are called in every hook and re-armed after
//! every `throttle` and every completion gives the same output byte for
//! byte.

use std::any::Any;

use blklab_fio::options::RwPattern;

use crate::block::bio::{Bio, BioId};
use crate::block::blk_cgroup::CgId;
use crate::block::ctx::Ctx;
use crate::block::request::Request;
use crate::block::rq_qos::{QosHooks, QosVerdict, RqQos};
use crate::machine::{Sim, TimedWrite};
use crate::sim::kerr::KernelError;
use crate::sim::time::{Ns, NSEC_PER_SEC};
use crate::sim::trace::Tracer;

use super::{iocost_lo_hi, job, nullb_dev};

/// A member that passes every call on, names every hook and says that its
/// timers may have moved after every `throttle`.
struct EveryHook(Box<dyn RqQos>);

impl RqQos for EveryHook {
    fn name(&self) -> &'static str {
        self.0.name()
    }
    fn throttle(&mut self, ctx: &mut Ctx, id: BioId, bio: &mut Bio) -> QosVerdict {
        let verdict = self.0.throttle(ctx, id, bio);
        ctx.timer_moved = true;
        verdict
    }
    fn merge(&mut self, ctx: &mut Ctx, rq: &Request, bio: &mut Bio) {
        self.0.merge(ctx, rq, bio)
    }
    fn track(&mut self, ctx: &mut Ctx, rq: &Request, bio: &Bio) {
        self.0.track(ctx, rq, bio)
    }
    fn issue(&mut self, ctx: &mut Ctx, rq: &Request) {
        self.0.issue(ctx, rq)
    }
    fn done(&mut self, ctx: &mut Ctx, rq: &Request, released: &mut Vec<BioId>) {
        self.0.done(ctx, rq, released)
    }
    fn done_bio(&mut self, ctx: &mut Ctx, bio: &Bio, released: &mut Vec<BioId>) {
        self.0.done_bio(ctx, bio, released)
    }
    fn timer(&mut self, ctx: &mut Ctx, released: &mut Vec<BioId>) {
        self.0.timer(ctx, released)
    }
    fn next_timer(&self) -> Option<Ns> {
        self.0.next_timer()
    }
    fn return_delay(&mut self, ctx: &mut Ctx, cg: CgId) -> Ns {
        self.0.return_delay(ctx, cg)
    }
    fn io_stat(&self, cg: CgId) -> String {
        self.0.io_stat(cg)
    }
    fn write_file(
        &mut self,
        ctx: &mut Ctx,
        cg: CgId,
        file: &str,
        value: &str,
    ) -> Option<Result<(), KernelError>> {
        self.0.write_file(ctx, cg, file, value)
    }
    fn hooks(&self) -> QosHooks {
        QosHooks::ALL
    }
    fn as_any(&self) -> &dyn Any {
        self.0.as_any()
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self.0.as_any_mut()
    }
}

/// blk-iocost (with blk-iotrack counting, and not) on a device slower than
/// its cost model's 100 %: two weighted cgroups of mixed reads and writes
/// wait on their waitqs, vrate moves with the latency targets, and a
/// weight written mid-run shifts the split. Every case's output is the
/// same whether the chain names its hooks or every member takes all.
#[test]
fn naming_the_hooks_changes_no_output() {
    let mk = |every: bool, counting: bool| {
        let mut dev = nullb_dev(60_000, 32);
        dev.info.major = 8;
        dev.info.minor = 0;
        dev.scheduler = "mq-deadline".into();
        let mut cfg = iocost_lo_hi(
            dev,
            [
                job("lo", RwPattern::RandRw, 4096, 16, 1),
                job("hi", RwPattern::Write, 16384, 8, 1),
            ],
            "rbps=200000000 rseqiops=20000 rrandiops=20000 wbps=200000000 wseqiops=20000 wrandiops=20000",
            "rpct=90 rlat=2000 wpct=90 wlat=5000 min=50 max=150",
            [100, 400],
        );
        let lo = cfg.cgroups.find("/lo").unwrap();
        cfg.writes.push(TimedWrite {
            at: NSEC_PER_SEC / 2,
            cgroup: lo,
            file: "io.weight".into(),
            value: "default 800".into(),
        });
        let mut sim = Sim::new(cfg, Tracer::default()).unwrap();
        sim.set_iotrack_counting(counting);
        if every {
            let st = &mut sim.k.blk.devs[0].st;
            let members = std::mem::take(&mut st.qos);
            st.qos = members
                .into_iter()
                .map(|q| Box::new(EveryHook(q)) as Box<dyn RqQos>)
                .collect();
            st.note_qos_members();
            assert_eq!(st.qos_any, QosHooks::ALL);
        } else {
            // blk-iocost names neither track, issue nor timer moves on done
            let st = &sim.k.blk.devs[0].st;
            assert!(!st.qos_any.has(QosHooks::TRACK));
            assert!(!st.qos_any.has(QosHooks::TIMER_ON_DONE));
        }
        let r = sim.run();
        let io_stat: Vec<String> = (0..3).map(|cg| sim.io_stat(cg)).collect();
        let waited = r.jobs[0].stats.dirs[0].slat.stat.mean;
        (format!("{:?} {:?}", r, io_stat), waited)
    };
    for counting in [false, true] {
        let (named, slat_ns) = mk(false, counting);
        let (every, _) = mk(true, counting);
        assert_eq!(named, every, "iotrack counting {counting}");
        // the submitters did wait on iocost (well over the 2 µs submit cost)
        assert!(slat_ns > 20_000.0, "slat {slat_ns}");
    }
}
