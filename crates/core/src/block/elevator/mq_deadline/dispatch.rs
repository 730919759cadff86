//! Insertion and dispatch: `dd_insert_request`, `__dd_dispatch_request`
//! with batches, write starvation and the FIFO deadlines, and
//! `dd_dispatch_prio_aged_requests`.

use super::*;
use crate::sim::time::time_after;

impl MqDeadline {
    pub(super) fn insert_request(
        &mut self,
        ctx: &mut Ctx,
        reqs: &mut Slab<Request>,
        id: ReqId,
        at_head: bool,
    ) {
        self.hz = ctx.hz;
        // the insertion's queue run (`blk_mq_run_hw_queue` in
        // `blk_mq_submit_bio`, or the requeue work's): merged or not
        self.run.sync(ctx);
        self.run.insertion();
        let now = ctx.jiffies();
        let (prio, dir, sector, mergeable) = {
            let rq = reqs.get(id);
            (
                DdPrio::of(rq.ioprio) as u8,
                data_dir(rq.op) as u8,
                rq.sector,
                rq.op != Op::Flush,
            )
        };
        debug_assert!(
            self.get(id).loc == Loc::Out,
            "mq-deadline: request {id} inserted twice"
        );
        {
            let counted = self.get(id).counted;
            if !counted {
                let s = &mut self.per_prio[prio as usize].stats;
                s.inserted = s.inserted.wrapping_add(1);
            }
            let s = self.slot(id);
            s.counted = true;
            s.prio = prio;
            s.dir = dir;
        }
        if self.try_insert_merge(reqs, id) {
            return;
        }
        if at_head {
            self.dispatch.push_front(id);
            let s = self.slot(id);
            s.loc = Loc::Dispatch;
            s.fifo_time = now;
        } else {
            self.sort_add(id, sector);
            if mergeable && !self.get(id).nomerge {
                self.hash_add(id, reqs);
                if self.last_merge.is_none() {
                    self.last_merge = Some(id);
                }
            }
            let ft = now.wrapping_add(self.fifo_expire(dir as usize));
            self.fifo_add_tail(id);
            let s = self.slot(id);
            s.loc = Loc::Queued;
            s.fifo_time = ft;
        }
        self.held += 1;
        let ft = self.get(id).fifo_time;
        reqs.get_mut(id).fifo_time = self.hz.jiffies_to_ns(ft);
    }

    // ----- dispatch --------------------------------------------------------

    /// `started_after`: the request's insertion time (fifo_time minus the
    /// *current* expiry of its direction) is after `latest_start`.
    pub(super) fn started_after(&self, id: ReqId, latest_start: u64) -> bool {
        let d = self.get(id);
        let start = d.fifo_time.wrapping_sub(self.fifo_expire(d.dir as usize));
        time_after(start, latest_start)
    }

    /// `dd_start_request`
    pub(super) fn start_request(&mut self, reqs: &Slab<Request>, id: ReqId, dir: usize) {
        let rq = reqs.get(id);
        let p = DdPrio::of(rq.ioprio) as usize;
        self.per_prio[p].latest_pos[dir] = rq.sector;
        self.per_prio[p].stats.dispatched = self.per_prio[p].stats.dispatched.wrapping_add(1);
    }

    /// `__dd_dispatch_request` for priority `p`, accepting only requests
    /// inserted at or before `latest_start` (jiffies).
    pub(super) fn dispatch_from(
        &mut self,
        reqs: &Slab<Request>,
        p: usize,
        now: u64,
        latest_start: u64,
    ) -> Option<ReqId> {
        let cont = self.from_pos(p, self.last_dir, self.per_prio[p].latest_pos[self.last_dir]);
        let rq = match cont {
            // Still entitled to batch: no deadline check.
            Some(r) if self.batching < self.t.fifo_batch as u32 => r,
            _ => {
                let pp = &self.per_prio[p];
                let dir = if !pp.fifo[READ].is_empty() {
                    if !pp.fifo[WRITE].is_empty() && {
                        let s = self.starved;
                        self.starved = s.wrapping_add(1);
                        s >= self.t.writes_starved as u32
                    } {
                        self.starved = 0;
                        WRITE
                    } else {
                        READ
                    }
                } else if !pp.fifo[WRITE].is_empty() {
                    self.starved = 0;
                    WRITE
                } else {
                    return None;
                };
                let next = self.from_pos(p, dir, self.per_prio[p].latest_pos[dir]);
                let head = self.fifo_head(p, dir).expect("non-empty FIFO");
                // deadline_check_fifo: the head expired (fifo_time <= jiffies).
                let expired = !time_after(self.get(head).fifo_time, now);
                let r = match next {
                    Some(n) if !expired => n,
                    _ => head,
                };
                self.last_dir = dir;
                self.batching = 0;
                r
            }
        };
        if self.started_after(rq, latest_start) {
            return None;
        }
        self.batching += 1;
        let dir = self.get(rq).dir as usize;
        self.remove_request(rq);
        self.start_request(reqs, rq, dir);
        Some(rq)
    }

    /// `dd_dispatch_prio_aged_requests`
    pub(super) fn dispatch_aged(&mut self, reqs: &Slab<Request>, now: u64) -> Option<ReqId> {
        let cnt = DdPrio::ALL
            .iter()
            .filter(|&&p| self.dd_queued(p) != 0)
            .count();
        if cnt < 2 {
            return None;
        }
        let latest = now.wrapping_sub(self.msecs_to_jiffies(self.t.prio_aging_expire_ms));
        for p in [DdPrio::Be as usize, DdPrio::Idle as usize] {
            if let Some(r) = self.dispatch_from(reqs, p, now, latest) {
                return Some(r);
            }
        }
        None
    }

    /// `dd_dispatch_request`'s choice: the dispatch list first; then an aged
    /// BE/IDLE request; then RT, BE, IDLE in order, where a priority with
    /// requests queued *or in flight* blocks the lower ones even when it has
    /// nothing to dispatch right now.
    pub(super) fn dispatch_request(&mut self, ctx: &Ctx, reqs: &Slab<Request>) -> Option<ReqId> {
        let now = ctx.jiffies();
        if let Some(rq) = self.dispatch.pop_front() {
            self.slot(rq).loc = Loc::Out;
            self.held -= 1;
            let dir = self.get(rq).dir as usize;
            self.start_request(reqs, rq, dir);
            return Some(rq);
        }
        if let Some(rq) = self.dispatch_aged(reqs, now) {
            return Some(rq);
        }
        for p in DdPrio::ALL {
            let rq = self.dispatch_from(reqs, p as usize, now, now);
            if rq.is_some() || self.dd_queued(p) != 0 {
                return rq;
            }
        }
        None
    }
}
