//! The path of a bio through the block layer, in the kernel's order:
//!
//! `submit_bio` → blk-throttle (`blk_throtl_bio`, may hold the bio; the
//! submitter goes on) → Q (`submit_bio_noacct_nocheck`) → `blk_mq_submit_bio`:
//! split to the queue limits, try a merge (`rq_qos_merge`), else
//! `rq_qos_throttle` (may put the submitter to sleep), request allocation (a
//! tag; waiting here is rq_wait), `rq_qos_track`, insertion into the scheduler
//! → dispatch while the device has room (D, `rq_qos_issue`) → the device model
//! decides the completion instant → C: `rq_qos_done`, per bio
//! `rq_qos_done_bio` and `bio_endio` up to the submitter.
//!
//! The path is written once, for any [`BlkHost`]: the machine that owns the
//! block layer and routes its calls up to a bio's submitter.

use crate::block::bio::{BioId, DevId, Op, Origin, NO_BIO};
use crate::block::disk::{DeviceInfo, Lower};
use crate::block::layer::{BlkHost, BlockLayer};
use crate::block::request::{ReqId, Request, Submitter};
use crate::block::rq_qos::{QosHooks, QosVerdict};
use crate::sim::engine::Ev;
use crate::sim::probe::Probe;
use crate::sim::time::Ns;
use crate::sim::trace::Tracer;

pub(crate) mod stack;
pub(crate) mod tag;

pub(crate) trait BlkMq: BlkHost {
    /// `submit_bio`: the bio enters the block layer. The submitter learns that
    /// its submission is over through `bio_submitted` (at once, or later if it
    /// slept in the kernel).
    fn submit_bio(&mut self, id: BioId) {
        let now = self.now();
        let b = self.blk();
        b.peak_bios = b.peak_bios.max(b.bios.len());
        let bio = b.bios.get_mut(id);
        bio.t_submit = now;
        let (dev, throttled) = (bio.dev, bio.flags.throttled);
        if b.devs[dev as usize].st.throttle.is_active() && !throttled {
            let held = {
                let d = &mut b.devs[dev as usize];
                let mut ctx = dev_ctx!(b, now, d);
                d.st.throttle.submit(&mut ctx, id, b.bios.get_mut(id))
            };
            if held {
                // only a held bio arms timers: otherwise the request stands
                self.rearm_throttle(dev);
                // blk_throtl_bio queued it: the submitter does not wait for it,
                // the throttle's dispatch work submits it later.
                probe_throtl(self.blk(), now, id, false);
                let bio = self.blk().bios.get_mut(id);
                let waits = std::mem::replace(&mut bio.flags.submitter_waits, false);
                let (origin, dev, cg) = (bio.origin, bio.dev, bio.cg);
                if waits && !matches!(origin, Origin::Split { .. }) {
                    let origin = stack::submitter_origin(&self.blk().bios, origin);
                    self.bio_submitted(origin, dev, cg);
                }
                return;
            }
        }
        self.bio_queue(id);
    }

    /// blk-throttle's pending timer: dispatch what the limits now allow.
    fn throttle_timer(&mut self, dev: DevId) {
        let now = self.now();
        let b = self.blk();
        {
            let st = &mut b.devs[dev as usize].st;
            if st.throttle_armed.0 != Some(now) {
                return;
            }
            st.throttle_armed.0 = None;
        }
        let mut released = std::mem::take(&mut b.released);
        let work_queued = {
            let (mut ctx, st) = b.ctx_parts(now, dev);
            st.throttle.timer(&mut ctx, &mut released);
            st.throttle.take_work_queued()
        };
        self.rearm_throttle(dev);
        let ids: Vec<BioId> = released.drain(..).collect();
        self.blk().released = released;
        self.throttle_issue(ids);
        // a host with CPUs issues them from kthrotld (machine/kthrotld.rs)
        if work_queued {
            self.kthrotld_queue_work(dev);
        }
    }

    /// The bios blk-throttle's dispatch work takes off the device level
    /// (`blk_throtl_dispatch_work_fn`) go on: `submit_bio_noacct_nocheck`.
    fn throttle_issue(&mut self, ids: Vec<BioId>) {
        let now = self.now();
        let b = self.blk();
        for &id in &ids {
            b.bios.get_mut(id).flags.throttled = true;
            probe_throtl(b, now, id, true);
        }
        for id in ids {
            self.bio_queue(id);
        }
    }

    fn rearm_throttle(&mut self, dev: DevId) {
        let (b, clk) = self.parts();
        let st = &mut b.devs[dev as usize].st;
        let want = st.throttle.next_timer().map(|t| t.max(clk.now));
        st.throttle_armed.set(&mut clk.q, want, Ev::Throttle(dev));
    }

    /// `submit_bio_noacct_nocheck`: the Q point (blktrace Q, iotrack's bi_issue).
    fn bio_queue(&mut self, id: BioId) {
        let now = self.now();
        let b = self.blk().bios.get_mut(id);
        b.t_queue = now;
        let dev = b.dev;
        if let Some(Lower::Linear { dev: lower, start }) = self.blk().devs[dev as usize].st.lower {
            return stack::dm_submit_bio(self, id, lower, start);
        }
        self.split_and_start(dev, id);
    }

    /// `__bio_split_to_limits`: cut a bio larger than max_sectors_kb into pieces.
    /// The kernel splits off the front and resubmits the remainder; the pieces
    /// are handled one after another by the submitting context, the original
    /// bio carries the last piece and completes when all pieces have.
    ///
    /// A bio within the limit goes on whole; the cutting is out of line
    /// (`split_bio`), so that this path, taken by every bio, does not set
    /// up its frame.
    fn split_and_start(&mut self, dev: DevId, id: BioId) {
        let b = self.blk();
        let max = b.devs[dev as usize].info.max_bytes();
        let bio = b.bios.get_mut(id);
        if max == 0 || bio.bytes <= max || !b.switches.is("blk.split", "on") {
            bio.pending_frags = 1;
            return self.start_piece(dev, id);
        }
        self.split_bio(dev, id, max);
    }

    /// The cutting of [`BlkMq::split_and_start`], for a bio over `max` bytes.
    #[inline(never)]
    fn split_bio(&mut self, dev: DevId, id: BioId, max: u32) {
        let now = self.now();
        let b = self.blk();
        let (bytes, sector) = {
            let bio = b.bios.get(id);
            (bio.bytes, bio.sector)
        };
        let pieces = bytes.div_ceil(max);
        let template = b.bios.get(id).clone();
        if b.devs[dev as usize].st.throttle.is_active() {
            let d = &mut b.devs[dev as usize];
            let mut ctx = dev_ctx!(b, now, d);
            d.st.throttle
                .bio_split(&mut ctx, template.cg, template.op, pieces - 1);
        }
        let mut first = NO_BIO;
        let mut prev = NO_BIO;
        let mut off = 0u32;
        for _ in 0..pieces - 1 {
            let mut f = template.clone();
            f.origin = Origin::Split { parent: id };
            f.sector = sector + (off as u64 >> 9);
            f.bytes = max;
            f.pending_frags = 1;
            f.chain_next = NO_BIO;
            f.flags.submitter_waits = false;
            let fid = b.bios.insert(f);
            if prev == NO_BIO {
                first = fid;
            } else {
                b.bios.get_mut(prev).chain_next = fid;
            }
            prev = fid;
            off += max;
        }
        {
            let bio = b.bios.get_mut(id);
            bio.sector = sector + (off as u64 >> 9);
            bio.bytes = bytes - off;
            bio.pending_frags = pieces as u16;
        }
        b.bios.get_mut(prev).chain_next = id;
        b.peak_bios = b.peak_bios.max(b.bios.len());
        self.start_piece(dev, first);
    }

    /// One piece of the bio (after splitting) in `blk_mq_submit_bio`.
    fn start_piece(&mut self, dev: DevId, id: BioId) {
        if self.try_merge(dev, id) {
            return self.piece_submitted(id);
        }
        self.blk().bios.get_mut(id).qos_pos = 0;
        self.qos_throttle(dev, id);
    }

    /// `blk_mq_attempt_bio_merge` → the scheduler's bio_merge, then `rq_qos_merge`.
    /// Without a scheduler that merges bios, the test alone, inlined.
    #[inline(always)]
    fn try_merge(&mut self, dev: DevId, id: BioId) -> bool {
        self.blk().devs[dev as usize].st.elv_hooks.merges && self.merge_bio(dev, id)
    }

    /// [`BlkMq::try_merge`] with a scheduler that merges bios.
    #[inline(never)]
    fn merge_bio(&mut self, dev: DevId, id: BioId) -> bool {
        let now = self.now();
        let b = self.blk();
        let merged = {
            let d = &mut b.devs[dev as usize];
            let mut ctx = dev_ctx!(b, now, d);
            d.st.elv
                .bio_merge(&mut ctx, &mut b.reqs, id, b.bios.get(id))
        };
        self.free_merged(dev);
        let Some(rq) = merged else { return false };
        let b = self.blk();
        let d = &mut b.devs[dev as usize];
        let mut ctx = dev_ctx!(b, now, d);
        let r = b.reqs.get(rq);
        let bio = b.bios.get_mut(id);
        d.st.diskstats.merged(bio.op);
        if d.st.qos_any.has(QosHooks::MERGE) {
            for q in d.st.qos_in(QosHooks::MERGE) {
                q.merge(&mut ctx, r, bio);
            }
        }
        true
    }

    /// `rq_qos_throttle`, resuming after the member that released the bio.
    fn qos_throttle(&mut self, dev: DevId, id: BioId) {
        let now = self.now();
        let st = &self.blk().devs[dev as usize].st;
        // a member without the hook would let the bio go, arming nothing
        // (and with none, where to resume is not looked up)
        let (start, n) = if st.qos_any.has(QosHooks::THROTTLE) {
            let n = st.qos.len();
            (self.blk().bios.get(id).qos_pos as usize, n)
        } else {
            (0, 0)
        };
        for i in start..n {
            if !self.blk().devs[dev as usize].st.qos_hooks[i].has(QosHooks::THROTTLE) {
                continue;
            }
            let (verdict, timer_moved) = {
                let b = self.blk();
                let d = &mut b.devs[dev as usize];
                let mut ctx = dev_ctx!(b, now, d);
                let bio = b.bios.get_mut(id);
                bio.qos_pos = i as u8 + 1;
                let verdict = d.st.qos[i].throttle(&mut ctx, id, bio);
                (verdict, ctx.timer_moved)
            };
            if timer_moved {
                self.rearm_qos_member(dev, i);
            }
            if verdict == QosVerdict::Wait {
                return;
            }
        }
        tag::get_request(self, dev, id);
    }

    /// A tag is available: build the request, track it, insert it, run the queue.
    fn alloc_request(&mut self, dev: DevId, id: BioId, tag: u32) {
        let now = self.now();
        let b = self.blk();
        let bio = b.bios.get(id);
        let alloc_began = bio.t_alloc;
        let submitter = bio_submitter(&b.bios, id);
        let rq = Request {
            dev,
            op: bio.op,
            cg: bio.cg,
            submitter,
            ioprio: bio.ioprio,
            sector: bio.sector,
            bytes: bio.bytes,
            sync: bio.flags.sync || bio.op == Op::Read,
            bios: smallvec::smallvec![id],
            alloc_time: alloc_began,
            start_time: now,
            insert_time: now,
            issue_time: 0,
            fifo_time: 0,
            done_time: 0,
            wbt_acct: bio.wbt_acct,
            tag,
        };
        let op = rq.op;
        let rid = b.reqs.insert(rq);
        {
            let d = &mut b.devs[dev as usize];
            d.st.diskstats.start(now, op);
            let mut ctx = dev_ctx!(b, now, d);
            if d.st.qos_any.has(QosHooks::TRACK) {
                // looked up here: each look-up's stale-id check is a panic
                // the compiler may not move past the test
                let (r, bio) = (b.reqs.get(rid), b.bios.get(id));
                for q in d.st.qos_in(QosHooks::TRACK) {
                    q.track(&mut ctx, r, bio);
                }
            }
            d.st.elv.insert(&mut ctx, &mut b.reqs, rid);
        }
        self.free_merged(dev);
        self.piece_submitted(id);
        if self.blk().submit_bio_plug {
            self.flush_submit_plug(dev, submitter);
        } else {
            self.run_hw_queue_async(dev);
        }
    }

    /// `blk_finish_plug` of the plug `__submit_bio` opens around the bio
    /// (switch `blk_mq.submit_bio_plug = on`): the request just added to it
    /// goes to the scheduler and the queue is run synchronously, in the
    /// submitter's context (`blk_mq_flush_plug_list(plug, false)` →
    /// `blk_mq_dispatch_plug_list` → `blk_mq_run_hw_queue(hctx, false)`),
    /// never through kblockd; the scheduler was told at its insertion
    /// ([`crate::block::elevator::Elevator::insert`]) that this run does not replace a pending
    /// delayed re-run. Without a scheduler the plug is issued directly
    /// (`blk_mq_plug_issue_direct`), as an unplugged request is.
    ///
    /// Simplified: the plug holds this one request (each bio, and each
    /// split piece, has its own `__submit_bio`); a request allocated after
    /// a sleep for a tag is flushed at the wake-up, as its task's
    /// `blk_finish_plug` is.
    ///
    /// The run ends as `blk_mq_do_dispatch_sched` (block/blk-mq-sched.c,
    /// 6.1.176 and 6.12.117 alike) ends a pass that dispatched while
    /// `need_resched()` is set: it hands the rest to kblockd
    /// (`blk_mq_delay_run_hw_queue(hctx, 0)`). Here that is the submitter's
    /// CPU marked by a task its dispatch woke (the loop worker, under
    /// `wakeup_preempt`). Simplified: checked only in this synchronous
    /// run, in the submitter's context (kblockd's own runs and the
    /// free host never hand off).
    fn flush_submit_plug(&mut self, dev: DevId, submitter: Submitter) {
        let before = self.blk().devs[dev as usize].st.in_device;
        self.run_queue(dev);
        let dispatched = self.blk().devs[dev as usize].st.in_device > before;
        if dispatched && self.submitter_must_resched(submitter) {
            self.blk().devs[dev as usize].st.elv.run_async();
            self.run_hw_queue_async(dev);
        }
    }

    /// Free the requests the scheduler merged into others (`blk_mq_free_request`):
    /// the tag returns, rq_qos sees the request done, a tag waiter may go on.
    /// Called twice per request, nearly always with nothing to free: the
    /// check is inlined into the callers, and a scheduler that never frees
    /// (`ElvHooks::frees`) is not asked.
    #[inline(always)]
    fn free_merged(&mut self, dev: DevId) {
        if !self.blk().devs[dev as usize].st.elv_hooks.frees {
            return;
        }
        let mut freed = Vec::new();
        self.blk().devs[dev as usize].st.elv.take_freed(&mut freed);
        if !freed.is_empty() {
            self.free_requests(dev, freed);
        }
    }

    /// The freeing part of `free_merged`.
    fn free_requests(&mut self, dev: DevId, freed: Vec<ReqId>) {
        let now = self.now();
        let b = self.blk();
        let mut released = std::mem::take(&mut b.released);
        let nr_freed = freed.len();
        for rid in freed {
            let rq = b.reqs.remove(rid);
            let d = &mut b.devs[dev as usize];
            d.st.tag_bits.put(rq.tag);
            d.st.diskstats.merged_request(now, rq.op);
            let mut ctx = dev_ctx!(b, now, d);
            if d.st.qos_any.has(QosHooks::DONE) {
                for q in d.st.qos_in(QosHooks::DONE) {
                    q.done(&mut ctx, &rq, &mut released);
                }
            }
        }
        for _ in 0..nr_freed {
            tag::wake_tag_waiters(self, dev);
        }
        self.continue_released(dev, &mut released);
        self.blk().released = released;
    }

    /// This piece has a request (or was merged): start the next piece, or tell
    /// the submitter its call returned.
    fn piece_submitted(&mut self, id: BioId) {
        let b = self.blk();
        let bio = b.bios.get(id);
        let next = bio.chain_next;
        if next != NO_BIO {
            let dev = bio.dev;
            b.bios.get_mut(id).chain_next = NO_BIO;
            return self.start_piece(dev, next);
        }
        // the page cache's flusher waits in submit_bio too
        if bio.flags.submitter_waits && !matches!(bio.origin, Origin::Split { .. }) {
            let (origin, dev, cg) = (bio.origin, bio.dev, bio.cg);
            let origin = stack::submitter_origin(&b.bios, origin);
            self.bio_submitted(origin, dev, cg);
        }
    }

    /// `blk_mq_run_hw_queue(hctx, true)`: an asynchronous run, a kblockd
    /// work item where the host runs it in a kernel thread
    /// ([`BlkHost::kblockd_run_work`], machine/kblockd.rs), else at once in
    /// the caller's context.
    fn run_hw_queue_async(&mut self, dev: DevId) {
        if self.runs_on_kblockd(dev) {
            self.kblockd_run_work(dev);
        } else {
            self.run_queue(dev);
        }
    }

    /// `blk_mq_run_hw_queue`: dispatch while the device has room. A run
    /// that would dispatch nothing and whose scheduler arms no timer of its
    /// own (`ElvHooks::timed`) ends here, before the dispatch loop's
    /// set-up: the completion of every request without a scheduler.
    #[inline]
    fn run_queue(&mut self, dev: DevId) {
        let d = &self.blk().devs[dev as usize];
        if !d.st.elv_hooks.timed && !d.can_dispatch() {
            return;
        }
        self.run_queue_dispatch(dev);
    }

    /// The dispatch loop of [`BlkMq::run_queue`].
    fn run_queue_dispatch(&mut self, dev: DevId) {
        let (b, clk) = self.parts();
        let now = clk.now;
        // the device is looked up once: the loop below runs on every
        // submission and every completion
        let d = &mut b.devs[dev as usize];
        let worker = d.st.loop_worker.is_some();
        let lower = match d.st.lower {
            Some(Lower::Loop { dev }) => Some(dev),
            _ => None,
        };
        let mut to_lower = Vec::new();
        // one context for the whole run (its borrows do not change)
        let mut ctx = dev_ctx!(b, now, d);
        while d.st.in_device < d.info.queue_depth && d.st.elv.has_work() {
            let Some(rid) = d.st.elv.dispatch(&mut ctx, &mut b.reqs) else {
                break;
            };
            let r = b.reqs.get_mut(rid);
            r.issue_time = now;
            for &bi in &r.bios {
                b.bios.get_mut(bi).t_issue = now;
            }
            let r = b.reqs.get(rid);
            if d.st.qos_any.has(QosHooks::ISSUE) {
                for q in d.st.qos_in(QosHooks::ISSUE) {
                    q.issue(&mut ctx, r);
                }
            }
            if ctx.trace.tasks_traced() {
                trace_rq_issue(ctx.trace, now, &d.info, r);
            }
            if d.st.in_device == 0 {
                idle_wake(&mut b.submit_cpu_ns, d.st.idle_wake_ns);
            }
            d.st.in_device += 1;
            probe_depth(ctx.trace, now, dev, d.st.in_device, d.info.queue_depth);
            if worker || lower.is_some() {
                // the driver passes it on below, once this queue is run
                to_lower.push(rid);
                continue;
            }
            let done = d.st.model.issue(now, r.op, r.sector, r.bytes).max(now);
            b.reqs.get_mut(rid).done_time = done;
            clk.q.push(done, Ev::Complete(dev, rid));
        }
        // a scheduler that arms no runs keeps the default `next_run` (None)
        if let Some(t) = d.st.elv_hooks.timed.then(|| d.st.elv.next_run()).flatten() {
            d.st.elv_armed.set(&mut clk.q, Some(t), Ev::Elevator(dev));
        }
        if to_lower.is_empty() {
            return;
        }
        if worker {
            for rid in to_lower {
                self.loop_queue_work(dev, rid);
            }
        } else if let Some(lower) = lower {
            for rid in to_lower {
                stack::loop_queue_rq(self, dev, rid, lower);
            }
        }
    }

    /// The scheduler's own timer (e.g. mq-deadline's aging) fired.
    fn elevator_timer(&mut self, dev: DevId) {
        let now = self.now();
        let st = &mut self.blk().devs[dev as usize].st;
        if st.elv_armed.0 == Some(now) {
            st.elv_armed.0 = None;
            // the delayed re-run is `hctx->run_work` itself; bfq's idle
            // timer runs the queue asynchronously (`bfq_schedule_dispatch`)
            self.run_hw_queue_async(dev);
        }
    }

    /// The device completed request `rid` (`blk_mq_end_request`).
    fn complete_request(&mut self, dev: DevId, rid: ReqId) {
        let now = self.now();
        let b = self.blk();
        // only the done and done_bio hooks release bios here: without them
        // the list stays empty, and the shared one is not taken
        let hooks = b.devs[dev as usize].st.qos_any;
        let hooked = hooks.has(QosHooks::DONE) || hooks.has(QosHooks::DONE_BIO);
        let mut released = if hooked {
            std::mem::take(&mut b.released)
        } else {
            Vec::new()
        };
        let was_full = {
            let d = &b.devs[dev as usize];
            d.st.in_device >= d.info.queue_depth
        };
        // the request is read where it lies and dropped there at the end of
        // this block (nothing in it allocates a request)
        let bios = {
            let rq = b.reqs.get(rid);
            let d = &mut b.devs[dev as usize];
            d.st.in_device -= 1;
            probe_depth(&mut b.trace, now, dev, d.st.in_device, d.info.queue_depth);
            d.st.tag_bits.put(rq.tag);
            d.st.rqs_done += 1;
            d.st.diskstats.done(now, rq.op, rq.sectors(), rq.start_time);
            // the elevators do not look the finished request up
            if d.st.elv_hooks.completes {
                let mut ctx = dev_ctx!(b, now, d);
                d.st.elv.completed(&mut ctx, &b.reqs, rid);
            }
            if d.st.qos_any.has(QosHooks::DONE) {
                let mut ctx = dev_ctx!(b, now, d);
                for q in d.st.qos_in(QosHooks::DONE) {
                    q.done(&mut ctx, rq, &mut released);
                }
            }
            let bios = std::mem::take(&mut b.reqs.get_mut(rid).bios);
            b.reqs.free(rid);
            bios
        };
        // The tag is free and its sleepers woken (`blk_mq_free_request`)
        // in the same interrupt that ends the bios, before any task the
        // bios' completion wakes can run and ask for a tag.
        tag::wake_tag_waiters(self, dev);
        for &bi in &bios {
            self.bio_endio(dev, bi, &mut released);
        }
        if hooked {
            self.continue_released(dev, &mut released);
            self.blk().released = released;
        }
        // a released bio re-armed its members in `qos_throttle`
        if self.blk().devs[dev as usize]
            .st
            .qos_any
            .has(QosHooks::TIMER_ON_DONE)
        {
            self.rearm_qos_on_done(dev);
        }
        // `blk_mq_sched_restart` (a run that stopped on a full device) and
        // the scheduler's own request (`bfq_schedule_dispatch`) run it
        // asynchronously; through kblockd, only those runs are made
        if !self.runs_on_kblockd(dev) {
            self.run_queue(dev);
        } else if was_full || self.blk().devs[dev as usize].st.elv.wants_run(now) {
            self.kblockd_run_work(dev);
        }
    }

    /// `bio_endio`: C for this bio; `rq_qos_done_bio`; then up to its parent or submitter.
    fn bio_endio(&mut self, dev: DevId, id: BioId, released: &mut Vec<BioId>) {
        let now = self.now();
        let b = self.blk();
        let bio = b.bios.get_mut(id);
        bio.pending_frags -= 1;
        if bio.pending_frags > 0 {
            return;
        }
        bio.t_done = now;
        // the done_bio hooks read the bio, never change it
        let origin = bio.origin;
        {
            let d = &mut b.devs[dev as usize];
            d.st.bios_done += 1;
            if d.st.qos_any.has(QosHooks::DONE_BIO) {
                let mut ctx = dev_ctx!(b, now, d);
                let bio = b.bios.get(id);
                for q in d.st.qos_in(QosHooks::DONE_BIO) {
                    q.done_bio(&mut ctx, bio, released);
                }
            }
        }
        b.bios.free(id);
        match origin {
            Origin::Split { parent } => self.bio_endio(dev, parent, released),
            origin => self.end_origin(origin),
        }
    }

    /// A whole bio ended: up to whoever waits for it, a stacked device's
    /// request or bio below the machine's submitters.
    fn end_origin(&mut self, origin: Origin) {
        match origin {
            Origin::Stacked { dev, rq } => stack::loop_rw_aio_complete(self, dev, rq),
            Origin::Clone { parent } => stack::dm_clone_endio(self, parent),
            origin => self.bio_end_io(origin),
        }
    }

    /// Bios a controller let go continue down the path from where they stopped.
    fn continue_released(&mut self, dev: DevId, released: &mut Vec<BioId>) {
        // Released bios may release more (none do today); drain in order.
        let mut i = 0;
        while i < released.len() {
            let id = released[i];
            i += 1;
            self.qos_throttle(dev, id);
        }
        released.clear();
    }

    /// A controller's timer fired.
    fn qos_timer(&mut self, dev: DevId, i: usize) {
        let now = self.now();
        let b = self.blk();
        {
            let st = &mut b.devs[dev as usize].st;
            if st.qos_armed[i].0 != Some(now) {
                return; // superseded
            }
            st.qos_armed[i].0 = None;
        }
        let mut released = std::mem::take(&mut b.released);
        {
            let (mut ctx, st) = b.ctx_parts(now, dev);
            st.qos[i].timer(&mut ctx, &mut released);
        }
        self.continue_released(dev, &mut released);
        self.blk().released = released;
        self.rearm_qos(dev);
    }

    fn rearm_qos(&mut self, dev: DevId) {
        for i in 0..self.blk().devs[dev as usize].st.qos.len() {
            self.rearm_qos_member(dev, i);
        }
    }

    /// After a completion: the members whose timers `merge`, `done`,
    /// `done_bio` or `return_delay` may have moved (`TIMER_ON_DONE`).
    fn rearm_qos_on_done(&mut self, dev: DevId) {
        for i in 0..self.blk().devs[dev as usize].st.qos.len() {
            if self.blk().devs[dev as usize].st.qos_hooks[i].has(QosHooks::TIMER_ON_DONE) {
                self.rearm_qos_member(dev, i);
            }
        }
    }

    fn rearm_qos_member(&mut self, dev: DevId, i: usize) {
        let (b, clk) = self.parts();
        let st = &mut b.devs[dev as usize].st;
        let want = st.qos[i].next_timer().map(|t| t.max(clk.now));
        st.qos_armed[i].set(&mut clk.q, want, Ev::Qos(dev, i as u8));
    }
}

impl<T: BlkHost> BlkMq for T {}

/// A request reached a device with nothing in flight: a threaded driver's
/// worker is asleep, and the submit call that dispatched the request pays
/// for waking it. Mirrors `loop_queue_rq` → `loop_queue_work` → `queue_work`
/// → `__queue_work` → `kick_pool` → `wake_up_process` → `try_to_wake_up`
/// (drivers/block/loop.c, kernel/workqueue.c, kernel/sched/core.c): with the
/// worker running, `queue_work` finds its work item pending or the pool busy
/// and wakes no one; idle, the submitter wakes it (an IPI to another CPU, or
/// on its own CPU a worker that may preempt it before the call returns).
/// A loop worker is taken to be busy exactly while requests are in the
/// device (true when it completes each one itself, as over tmpfs; with
/// direct I/O to a file it goes idle while the backing device works).
fn idle_wake(submit_cpu_ns: &mut Option<Ns>, idle_wake_ns: Ns) {
    if let Some(c) = submit_cpu_ns.as_mut() {
        *c += idle_wake_ns;
    }
}

/// The `block_rq_issue` tracepoint (include/trace/events/block.h: `DEV
/// RWBS BYTES () SECTOR + SECTORS [COMM]`), in the context of the task
/// holding the CPU, on a host with CPUs (sim::sched_tracepoints). Simplified:
/// `rwbs` is the direction alone (`R`, `W`; flush `F`, discard `D`).
fn trace_rq_issue(trace: &mut Tracer, now: Ns, info: &DeviceInfo, r: &Request) {
    trace.emit_in_task(now, "block:block_rq_issue", |comm| {
        let rwbs = match r.op {
            Op::Read => "R",
            Op::Write => "W",
            Op::Flush => "F",
            Op::Discard => "D",
        };
        format!(
            "{},{} {rwbs} {} () {} + {} [{comm}]",
            info.major,
            info.minor,
            r.bytes,
            r.sector,
            r.bytes / 512
        )
    });
}

/// The device's request count changed: a probe sample (time series only).
fn probe_depth(trace: &mut Tracer, now: Ns, dev: DevId, in_device: u32, queue_depth: u32) {
    if trace.probing() {
        let p = Probe::DeviceDepth {
            dev,
            in_device,
            queue_depth,
        };
        trace.probe(now, &p);
    }
}

/// blk-throttle held bio `id` (`dispatched` false) or let it go: a probe
/// sample (time series only).
fn probe_throtl(b: &mut BlockLayer, now: Ns, id: BioId, dispatched: bool) {
    if !b.trace.probing() {
        return;
    }
    let bio = b.bios.get(id);
    let (dev, cg, write) = (bio.dev, bio.cg, bio.op.is_write());
    let p = if dispatched {
        Probe::ThrotlDispatch {
            dev,
            cg,
            write,
            wait_ns: now - bio.t_submit,
        }
    } else {
        Probe::ThrotlQueue { dev, cg, write }
    };
    b.trace.probe(now, &p);
}

/// The task that submitted bio `id`, as the request built for it records
/// it: a split piece was submitted by its parent's task, a clone by its
/// parent's.
#[inline]
pub(crate) fn bio_submitter(
    bios: &crate::sim::slab::Slab<crate::block::bio::Bio>,
    id: BioId,
) -> Submitter {
    let origin = match bios.get(id).origin {
        Origin::Split { parent } => bios.get(parent).origin,
        o => o,
    };
    match stack::submitter_origin(bios, origin) {
        Origin::Job { job, .. } => Submitter::Job(job),
        _ => Submitter::Kernel,
    }
}
