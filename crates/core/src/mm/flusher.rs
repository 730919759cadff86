//! The flusher kworker of each device (fs/fs-writeback.c `wb_workfn` →
//! `wb_do_writeback`, with `wb_check_background_flush` and
//! `wb_check_old_data_flush`): when it runs, what it writes back, and its
//! own wait in `submit_bio`. The pure writeback model is `writeback.rs`.

use super::pcsys::{MmHost, FLUSHER_BIO_NS};
use super::writeback::WorkKind;
use crate::block::bio::{DevId, Op};
use crate::block::blk_mq::BlkMq;
use crate::block::content_activity::Submitter;
use crate::sim::engine::Ev;
use crate::sim::time::Ns;

/// The flusher's paths, written once for any [`MmHost`].
pub(crate) trait Flusher: MmHost + BlkMq {
    /// The flusher's bio got a request (the kworker's submit_bio returned).
    fn pc_submit_done(&mut self, tag: u32) {
        let now = self.now();
        let Some(pc) = self.mm() else {
            return;
        };
        let io = *pc.ios.get(tag);
        if io.op == Op::Write {
            pc.flushers[io.dev as usize].in_submit = false;
            self.flusher_arm(io.dev, now + FLUSHER_BIO_NS);
        }
    }

    /// Queue the flusher's work to run at `t` (earliest request wins); with
    /// `t = MAX` only make sure the periodic wake-up is armed.
    fn flusher_arm(&mut self, dev: DevId, t: Ns) {
        let pc = self.pc();
        let fl = &mut pc.flushers[dev as usize];
        let t = if t == Ns::MAX { fl.next_periodic } else { t };
        if fl.armed.is_none_or(|a| t < a) {
            fl.armed = Some(t);
            self.clk().q.push(t, Ev::Flusher(dev));
        }
    }

    /// The flusher kworker runs (`wb_workfn` → `wb_do_writeback`).
    fn flusher_event(&mut self, dev: DevId) {
        let now = self.now();
        let Some(pc) = self.mm() else {
            return;
        };
        let fl = &mut pc.flushers[dev as usize];
        if fl.armed != Some(now) {
            return; // superseded
        }
        fl.armed = None;
        if fl.in_submit {
            return;
        }
        if now >= fl.next_periodic {
            // wb_check_old_data_flush
            fl.next_periodic = now + pc.cache.params.writeback_interval_ns();
            fl.kupdate = true;
        }
        let kinds: [Option<WorkKind>; 2] = [
            pc.cache.over_bg_thresh().then_some(WorkKind::Background),
            fl.kupdate.then_some(WorkKind::Kupdate),
        ];
        let mut batch = std::mem::take(&mut pc.batch);
        let mut got = None;
        for kind in kinds.into_iter().flatten() {
            let mut fl = std::mem::take(&mut pc.flushers[dev as usize]);
            let ok = pc.cache.next_writeback_run(&mut fl, kind, now, &mut batch);
            if !ok && kind == WorkKind::Kupdate {
                fl.kupdate = false;
            }
            pc.flushers[dev as usize] = fl;
            if ok {
                got = Some(kind);
                break;
            }
        }
        if got.is_none() {
            pc.batch = batch;
            let has_dirty = pc.cache.nr_dirty > 0;
            if has_dirty {
                self.flusher_arm(dev, Ns::MAX);
            }
            return;
        }
        for &p in &batch {
            pc.cache.start_writeback(p);
        }
        let file = pc.cache.page(batch[0]).file;
        let cg = pc.cache.files[file as usize].cg;
        pc.batch = batch;
        // The kworker's own priority: SCHED_NORMAL nice 0 → BE/4.
        let task = Submitter::default();
        let (pc, b) = self.mm_parts();
        let (id, rt) = pc.build_bio(&mut b.bios, &b.blk_ioprio, Op::Write, file, cg, task, false);
        pc.batch.clear();
        pc.write_bios += 1;
        pc.write_bios_rt += rt as u64;
        pc.flushers[dev as usize].in_submit = true;
        self.submit_bio(id);
    }
}

impl<T: MmHost> Flusher for T {}
