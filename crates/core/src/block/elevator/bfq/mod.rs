//! BFQ, the Budget Fair Queueing I/O scheduler (block/bfq-iosched.c,
//! block/bfq-wf2q.c, block/bfq-cgroup.c; Documentation/block/bfq-iosched.rst).
//!
//! Every process has its own sync queue (fio job instances are processes);
//! async requests go to one queue per cgroup, class and level. Queues and
//! cgroups (groups) are scheduled by B-WF2Q+ ([`wf2q`]) in service slots:
//! the queue in service dispatches until its budget (in sectors) is used,
//! its budget timeout (`timeout_sync`) passes, or it runs out of requests.
//! When it runs out, BFQ may keep the device idle for it (`slice_idle`) if
//! idling is needed to keep its share — in an *asymmetric* scenario:
//! different weights, classes, or several groups with pending I/O ([`idle`]).
//! While idling it may inject other queues' requests ([`idle`]). At the end
//! of a slot the budget is fed back ([`budget`]); slow (e.g. seeky) and
//! timed-out queues are charged for the *time* they held the device.
//!
//! Per-request CPU cost: the kernel does all of the above under one
//! spinlock (`bfqd->lock`), about 1.9 µs per request on the documentation's
//! reference CPU. The model charges it as a serialized lock-hold time per
//! dispatched request (`sim_lock_hold_ns`, see [`tunables`]): a dispatch
//! waits for the lock to be free. On a host with CPUs a kblockd run keeps
//! its CPU through the holds (`run_resumes_at`); a dispatch made inside a
//! submit call is not charged to the submitter (docs/fidelity/bfq.md,
//! "Per-request CPU cost").

mod budget;
mod group;
mod idle;
mod limit;
mod peak_rate;
mod queue;
mod run;
#[cfg(test)]
mod tests;
mod tunables;
pub mod wf2q;
mod wr;

use std::collections::BTreeMap;

use super::queue_run::QueueRun;
use super::Elevator;
use crate::block::bio::Op;
use crate::block::blk_cgroup::CgId;
use crate::block::ctx::Ctx;
use crate::block::disk::DeviceInfo;
use crate::block::ioprio::Ioprio;
use crate::block::request::{ReqId, Request, Submitter};
use crate::sim::slab::Slab;
use crate::sim::time::{Hz, Ns};
pub use budget::Reason;
use group::Group;
use queue::{class_level, Queue, QueueKey};
pub use tunables::{kstrtoul10, Tunables, DEFAULT_LOCK_HOLD_NS, LOCK_HOLD_PARAM};
use wf2q::{GId, Wf2q};

/// `bfq_default_max_budget`, sectors.
pub const DEFAULT_MAX_BUDGET: u64 = 16 * 1024;
/// `bfq_async_charge_factor`
pub const ASYNC_CHARGE_FACTOR: u64 = 3;

/// Per-request scheduler data, indexed by ReqId.
#[derive(Clone, Copy, Debug, Default)]
struct BfqRq {
    queue: Option<u32>,
    /// The process whose `bfq_io_cq` the request counts in.
    submitter: Submitter,
    sort_key: (u64, u64),
    fifo_key: u64,
    sectors: u64,
}

pub struct Bfq {
    t: Tunables,
    hz: Hz,
    now: Ns,
    nonrot: bool,
    devno: (u32, u32),
    w: Wf2q,
    groups: Vec<Group>,
    group_of_cg: BTreeMap<CgId, GId>,
    queues: Vec<Queue>,
    queue_of: BTreeMap<QueueKey, u32>,
    rqs: Vec<BfqRq>,
    seq: u64,
    held: usize,
    in_service: Option<u32>,
    /// Busy queues per class (`busy_queues[]`).
    busy_queues: [u32; 3],
    wr_busy_queues: u32,
    /// `queue_weights_tree`: weight -> queues with pending requests.
    weights: BTreeMap<u32, u32>,
    /// Per group: its own queues with pending requests, and those of its
    /// whole subtree.
    group_direct_pending: Vec<u32>,
    group_subtree_pending: Vec<u32>,
    /// Groups (root included) whose own queues have pending requests.
    groups_direct_pending: u32,
    /// Non-root groups with pending requests in their subtree.
    groups_subtree_pending: u32,
    tot_rq_in_driver: u32,
    hw_tag: i32,
    max_rq_in_driver: u32,
    hw_tag_samples: u32,
    budgets_assigned: u32,
    /// `bfqd->bfq_max_budget`
    max_budget: u64,
    last_position: u64,
    /// The idle-slice hrtimer's expiry, if armed.
    idle_timer: Option<Ns>,
    last_idling_start: Ns,
    last_idling_start_jiffies: u64,
    last_budget_start: Ns,
    wait_dispatch: bool,
    waited_rq: Option<ReqId>,
    rqs_injected: bool,
    last_empty_occupied_ns: Ns,
    peak: peak_rate::PeakRate,
    /// When the scheduler lock is next free (per-request CPU cost model).
    lock_free_at: Ns,
    /// `bic->requests` per process: its requests inserted and not yet
    /// finished (`bfq_init_rq` counts one up, `bfq_finish_requeue_request`
    /// down).
    bic_requests: BTreeMap<Submitter, u32>,
    burst: wr::Burst,
    /// Dispatched-request size tracking for the 2021 request-size patch.
    same_size: budget::SameSize,
    /// Switch `bfq.idle_groups` = 2d29c9f89fcd (any group with pending I/O
    /// makes the scenario asymmetric).
    sw_groups_2018: bool,
    /// Switch `bfq.asym_request_size` = on.
    sw_req_size: bool,
    /// Switch `bfq.cgroup_request_limit` = 76f1df88bbc2 ([`limit`]).
    sw_cgroup_limit: bool,
    /// The hardware-queue run under way and the delayed re-run ([`run`],
    /// with the block layer's switches `blk_mq.insert_run` and
    /// `blk_mq.submit_bio_plug`).
    run: QueueRun,
}

impl Bfq {
    /// `bfq_init_queue`
    pub fn new(dev: &DeviceInfo) -> Bfq {
        let hz = Hz(1000);
        let mut b = Bfq {
            t: Tunables::default(),
            hz,
            now: 0,
            nonrot: !dev.rotational,
            devno: (dev.major, dev.minor),
            w: Wf2q::new(hz.msecs_to_jiffies(200)),
            groups: vec![Group::root()],
            group_of_cg: BTreeMap::new(),
            queues: Vec::new(),
            queue_of: BTreeMap::new(),
            rqs: Vec::new(),
            seq: 0,
            held: 0,
            in_service: None,
            busy_queues: [0; 3],
            wr_busy_queues: 0,
            weights: BTreeMap::new(),
            group_direct_pending: vec![0],
            group_subtree_pending: vec![0],
            groups_direct_pending: 0,
            groups_subtree_pending: 0,
            tot_rq_in_driver: 0,
            hw_tag: -1,
            max_rq_in_driver: 0,
            hw_tag_samples: 0,
            budgets_assigned: 0,
            max_budget: DEFAULT_MAX_BUDGET,
            last_position: 0,
            idle_timer: None,
            last_idling_start: 0,
            last_idling_start_jiffies: 0,
            last_budget_start: 0,
            wait_dispatch: false,
            waited_rq: None,
            rqs_injected: false,
            last_empty_occupied_ns: 0,
            peak: peak_rate::PeakRate::new(!dev.rotational),
            lock_free_at: 0,
            bic_requests: BTreeMap::new(),
            burst: wr::Burst::default(),
            same_size: budget::SameSize::default(),
            sw_groups_2018: false,
            sw_req_size: false,
            sw_cgroup_limit: true,
            run: QueueRun::default(),
        };
        b.group_of_cg.insert(crate::block::blk_cgroup::ROOT, 0);
        b
    }

    /// `bfqd->bfq_timeout` in jiffies.
    fn timeout_jiffies(&self) -> u64 {
        match self.t.timeout_ms {
            Some(ms) => self.hz.msecs_to_jiffies(ms),
            None => (self.hz.0 as u64 / 8).max(1),
        }
    }

    fn jiffies(&self) -> u64 {
        self.hz.jiffies(self.now)
    }

    fn tot_busy_queues(&self) -> u32 {
        self.busy_queues.iter().sum()
    }

    fn sync_ctx(&mut self, ctx: &Ctx) {
        self.hz = ctx.hz;
        self.now = ctx.now;
        self.w.idle_class_timeout = ctx.hz.msecs_to_jiffies(200);
        self.sw_groups_2018 = ctx.switches.is("bfq.idle_groups", "2d29c9f89fcd");
        self.sw_req_size = ctx.switches.is("bfq.asym_request_size", "on");
        self.sw_cgroup_limit = ctx.switches.is("bfq.cgroup_request_limit", "76f1df88bbc2");
        self.run.sync(ctx);
    }

    #[inline]
    fn slot(&mut self, id: ReqId) -> &mut BfqRq {
        let i = id as usize;
        if i >= self.rqs.len() {
            self.rqs.resize(i + 1, BfqRq::default());
        }
        &mut self.rqs[i]
    }

    #[inline]
    fn rq(&self, id: ReqId) -> BfqRq {
        self.rqs.get(id as usize).copied().unwrap_or_default()
    }

    /// The queue in service (tests, reports).
    pub fn in_service_queue(&self) -> Option<u32> {
        self.in_service
    }

    /// `bfq_get_queue` / `bfq_get_bfqq_handle_split`: the queue for a
    /// request of group `g`, created on first use (`bfq_init_bfqq` with
    /// the weight of its ioprio, `bfq_ioprio_to_weight`).
    fn get_queue(&mut self, rq: &Request, g: GId) -> u32 {
        let (class, level) = class_level(rq.ioprio);
        let key = queue_key(rq.sync, rq.submitter, rq.ioprio, g);
        if let Some(&q) = self.queue_of.get(&key) {
            return q;
        }
        let qi = self.queues.len() as u32;
        let weight = queue::ioprio_to_weight(level);
        let ent = self.w.add_queue(qi, g, weight, class);
        let q = Queue::new(key, ent, g, class, level, self.bfq_max_budget());
        self.queues.push(q);
        self.queue_of.insert(key, qi);
        qi
    }

    /// The queue a request of `submitter` with `ioprio` in group `g` goes
    /// to, if it exists (`bic_to_bfqq`).
    fn find_queue(&self, sync: bool, submitter: Submitter, ioprio: Ioprio, g: GId) -> Option<u32> {
        self.queue_of
            .get(&queue_key(sync, submitter, ioprio, g))
            .copied()
    }

    /// `bfq_serv_to_charge`: sectors, times the async charge factor for
    /// an async, not weight-raised queue in a symmetric scenario.
    fn serv_to_charge(&self, sectors: u64, q: u32) -> u64 {
        let qq = &self.queues[q as usize];
        if qq.sync || qq.wr_coeff > 1 || self.asymmetric_scenario(Some(q)) {
            sectors
        } else {
            sectors * ASYNC_CHARGE_FACTOR
        }
    }

    /// `bfq_add_request`, `bfq_rq_enqueued` and the busy switch.
    fn add_request(&mut self, reqs: &Slab<Request>, id: ReqId, q: u32) {
        let r = reqs.get(id);
        let (sector, sectors, sync, who) = (r.sector, r.sectors(), r.sync, r.submitter);
        self.update_ttime_and_seek(q, sector, sectors);
        // Jan Kara's f950667356ce (v5.19): the block of `bfq_add_request`
        // that resets and samples the inject limit runs when this request
        // is its process's only one (`RQ_BIC(rq)->requests <= 1`), no
        // longer whenever the queue's sort list is empty: a process that
        // keeps several requests in flight does not start samples.
        if sync && self.bic_requests.get(&who).copied().unwrap_or(0) <= 1 {
            self.inject_sampling_on_arrival(q);
        }
        self.seq += 1;
        let seq = self.seq;
        let fifo_time = self.now
            + if sync {
                self.t.fifo_expire_sync_ns
            } else {
                self.t.fifo_expire_async_ns
            };
        {
            let s = self.slot(id);
            s.queue = Some(q);
            s.submitter = who;
            s.sort_key = (sector, seq);
            s.fifo_key = seq;
            s.sectors = sectors;
        }
        let last_position = self.last_position;
        let (back_max, back_penalty) = (self.t.back_max_kb * 2, self.t.back_penalty);
        let qq = &mut self.queues[q as usize];
        qq.sort.insert((sector, seq), id);
        qq.fifo.insert(seq, (id, fifo_time));
        let prev = qq.next_rq;
        qq.next_rq = Some(match prev {
            None => id,
            Some(p) => {
                let ps = reqs.get(p).sector;
                queue::choose_req((ps, p), (sector, id), last_position, back_max, back_penalty)
            }
        });
        self.held += 1;
        if !self.queues[q as usize].busy {
            self.handle_idle_busy_switch(reqs, q);
        } else if prev != self.queues[q as usize].next_rq {
            self.updated_next_req(reqs, q);
        }
        self.rq_enqueued(q, sector + sectors, sectors);
    }

    /// The updates `__bfq_insert_request` makes before `bfq_add_request`
    /// (so that the inject-limit sampling there sees them: Paolo Valente's
    /// "block, bfq: bring forward seek&think time update", v5.3):
    /// `bfq_update_io_thinktime`, which samples only a queue with nothing
    /// queued or in the drive (Jan Kara's "bfq: Use only idle IO periods
    /// for think time calculations", 2021, in v6.1 and later); then
    /// `bfq_update_has_short_ttime`, which resets the inject limit when the
    /// think-time state flips before a base service time was sampled (to
    /// long at once, to short only 100 ms after the last decrease); then
    /// `bfq_update_io_seektime`.
    fn update_ttime_and_seek(&mut self, q: u32, sector: u64, sectors: u64) {
        let slice_idle = self.t.slice_idle_ns;
        let (now, nonrot, j) = (self.now, self.nonrot, self.jiffies());
        let ms100 = self.hz.msecs_to_jiffies(100);
        let qq = &mut self.queues[q as usize];
        if qq.sync {
            if qq.dispatched == 0 && !qq.busy {
                qq.update_thinktime(now, slice_idle);
            }
            let was_short = qq.has_short_ttime;
            qq.update_has_short_ttime(slice_idle);
            let changed = qq.has_short_ttime != was_short;
            let reset = changed
                && qq.last_serv_time_ns == 0
                && (j >= qq.decrease_time_jif + ms100 || !qq.has_short_ttime);
            if reset {
                self.reset_inject_limit(q);
            }
        }
        self.queues[q as usize].update_seektime(sector, sectors, nonrot);
    }

    /// `bfq_updated_next_req`: a queue not in service whose first request
    /// changed gets a budget large enough for it.
    fn updated_next_req(&mut self, reqs: &Slab<Request>, q: u32) {
        if self.in_service == Some(q) {
            return;
        }
        let Some(n) = self.queues[q as usize].next_rq else {
            return;
        };
        let charge = self.serv_to_charge(reqs.get(n).sectors(), q);
        let qq = &self.queues[q as usize];
        let e = &self.w.ents[qq.ent as usize];
        let nb = qq.max_budget.max(charge).max(e.service);
        self.w.set_budget(qq.ent, nb);
    }

    /// `bfq_bfqq_handle_idle_busy_switch`: the queue gets busy: IO-bound
    /// detection, weight raising, a fresh budget, activation, and maybe
    /// preemption of the queue in service.
    fn handle_idle_busy_switch(&mut self, reqs: &Slab<Request>, q: u32) {
        let now = self.now;
        let slice_idle = self.t.slice_idle_ns;
        {
            let qq = &mut self.queues[q as usize];
            let arrived_in_time = now <= qq.ttime.last_end_request + 3 * slice_idle;
            if !qq.io_bound {
                if arrived_in_time {
                    qq.requests_within_timer += 1;
                    if qq.requests_within_timer >= 120 {
                        qq.io_bound = true;
                    }
                } else {
                    qq.requests_within_timer = 0;
                }
            }
        }
        self.update_wr_on_activation(q);
        let n = self.queues[q as usize]
            .next_rq
            .expect("busy switch with a request");
        let charge = self.serv_to_charge(reqs.get(n).sectors(), q);
        let budget = self.queues[q as usize].max_budget.max(charge);
        self.add_busy(q, budget);
        if let Some(isq) = self.in_service {
            if isq != q && self.higher_class_or_weight(q, isq) && self.w.root_has_next() {
                self.expire(isq, false, Reason::Preempted);
            }
        }
    }

    /// `bfq_add_bfqq_busy` + `bfq_activate_bfqq`
    fn add_busy(&mut self, q: u32, budget: u64) {
        let qq = &mut self.queues[q as usize];
        qq.busy = true;
        let class = qq.class;
        self.busy_queues[class] += 1;
        if qq.wr_coeff > 1 {
            self.wr_busy_queues += 1;
        }
        self.pending_add(q);
        let ent = self.queues[q as usize].ent;
        self.w.activate(ent, budget);
    }

    /// `bfq_del_bfqq_busy`: off the busy set; with `expiration` it was the
    /// queue in service and its slot is over.
    fn del_busy(&mut self, q: u32, expiration: bool) {
        let qq = &mut self.queues[q as usize];
        qq.busy = false;
        let class = qq.class;
        let ent = qq.ent;
        let wr = qq.wr_coeff > 1;
        self.busy_queues[class] -= 1;
        if wr {
            self.wr_busy_queues -= 1;
        }
        if expiration {
            self.w.expire(ent, None);
        } else {
            self.w.deactivate(ent);
        }
        if self.queues[q as usize].dispatched == 0 {
            self.pending_remove(q);
        }
    }

    /// `bfq_weights_tree_add` and the groups-with-pending-requests
    /// counters: the queue has requests queued or in flight.
    fn pending_add(&mut self, q: u32) {
        if self.queues[q as usize].pending_counted {
            return;
        }
        self.queues[q as usize].pending_counted = true;
        let w = self.queues[q as usize].orig_weight;
        *self.weights.entry(w).or_insert(0) += 1;
        let g = self.queues[q as usize].group;
        self.group_direct_pending[g as usize] += 1;
        if self.group_direct_pending[g as usize] == 1 {
            self.groups_direct_pending += 1;
        }
        let ent = self.queues[q as usize].ent;
        let ancestors: Vec<GId> = self.w.parent_groups(ent).collect();
        for a in ancestors {
            self.group_subtree_pending[a as usize] += 1;
            if self.group_subtree_pending[a as usize] == 1 {
                self.groups_subtree_pending += 1;
            }
        }
    }

    /// `bfq_weights_tree_remove`: no request queued or in flight any more.
    fn pending_remove(&mut self, q: u32) {
        if !self.queues[q as usize].pending_counted {
            return;
        }
        self.queues[q as usize].pending_counted = false;
        let w = self.queues[q as usize].orig_weight;
        if let Some(c) = self.weights.get_mut(&w) {
            *c -= 1;
            if *c == 0 {
                self.weights.remove(&w);
            }
        }
        let g = self.queues[q as usize].group;
        self.group_direct_pending[g as usize] -= 1;
        if self.group_direct_pending[g as usize] == 0 {
            self.groups_direct_pending -= 1;
        }
        let ent = self.queues[q as usize].ent;
        let ancestors: Vec<GId> = self.w.parent_groups(ent).collect();
        for a in ancestors {
            self.group_subtree_pending[a as usize] -= 1;
            if self.group_subtree_pending[a as usize] == 0 {
                self.groups_subtree_pending -= 1;
            }
        }
    }

    /// `bfq_bfqq_higher_class_or_weight`: a higher class, or a larger
    /// weight — of the queues if siblings, else of their parent groups.
    fn higher_class_or_weight(&self, q: u32, isq: u32) -> bool {
        let (a, b) = (&self.queues[q as usize], &self.queues[isq as usize]);
        if a.class < b.class {
            return true;
        }
        let weight_of = |qq: &Queue| -> u32 {
            match self.w.group_entity(qq.group) {
                Some(ge) => self.w.ents[ge as usize].weight,
                None => self.w.ents[qq.ent as usize].weight,
            }
        };
        let (wa, wb) = if a.group == b.group {
            (
                self.w.ents[a.ent as usize].weight,
                self.w.ents[b.ent as usize].weight,
            )
        } else {
            (weight_of(a), weight_of(b))
        };
        wa > wb
    }

    /// `bfq_remove_request` of a request leaving its queue for dispatch.
    fn remove_request(&mut self, reqs: &Slab<Request>, id: ReqId) {
        let d = self.rq(id);
        let q = d.queue.expect("queued request has a queue");
        let now = self.now;
        let (back_max, back_penalty) = (self.t.back_max_kb * 2, self.t.back_penalty);
        let qq = &mut self.queues[q as usize];
        qq.sort.remove(&d.sort_key);
        qq.fifo.remove(&d.fifo_key);
        if qq.next_rq == Some(id) {
            qq.next_rq =
                qq.find_next_rq(reqs.get(id).sector, d.sort_key, now, back_max, back_penalty);
            self.updated_next_req(reqs, q);
        }
        self.held -= 1;
        let qq = &self.queues[q as usize];
        if qq.sort.is_empty() && qq.busy && self.in_service != Some(q) {
            self.del_busy(q, false);
        }
    }

    /// `bfq_dispatch_rq_from_bfqq`
    fn dispatch_rq_from(&mut self, reqs: &Slab<Request>, q: u32) -> ReqId {
        let rq = self.queues[q as usize]
            .next_rq
            .expect("dispatching queue has a request");
        let sectors = self.rq(rq).sectors;
        let charge = self.serv_to_charge(sectors, q);
        let ent = self.queues[q as usize].ent;
        self.w.served(ent, charge);
        if self.in_service == Some(q) && self.wait_dispatch {
            self.wait_dispatch = false;
            self.waited_rq = Some(rq);
        }
        // bfq_dispatch_remove
        self.queues[q as usize].dispatched += 1;
        let (sector, rsectors) = {
            let r = reqs.get(rq);
            (r.sector, r.sectors())
        };
        self.update_peak_rate(sector, rsectors);
        self.same_size.dispatched(rsectors, self.now);
        self.remove_request(reqs, rq);
        if self.in_service != Some(q) {
            return rq;
        }
        self.update_wr_data(q);
        if self.tot_busy_queues() > 1 && self.queues[q as usize].class == 2 {
            self.expire(q, false, Reason::BudgetExhausted);
        }
        rq
    }

    /// `__bfq_dispatch_request`
    fn dispatch_one(&mut self, reqs: &Slab<Request>) -> Option<ReqId> {
        if self.tot_busy_queues() == 0 {
            return None;
        }
        if self.t.strict_guarantees && self.tot_rq_in_driver > 0 {
            return None;
        }
        let q = self.select_queue(reqs)?;
        let rq = self.dispatch_rq_from(reqs, q);
        self.tot_rq_in_driver += 1;
        Some(rq)
    }

    /// `bfq_finish_requeue_request` + `bfq_completed_request`
    fn complete(&mut self, id: ReqId) {
        let Some(q) = self.rq(id).queue else {
            return;
        };
        self.slot(id).queue = None;
        self.count_allocated(q, false);
        let who = self.rq(id).submitter;
        if let Some(n) = self.bic_requests.get_mut(&who) {
            *n -= 1;
            if *n == 0 {
                self.bic_requests.remove(&who);
            }
        }
        if self.waited_rq == Some(id) {
            self.update_inject_limit(q);
        }
        self.update_hw_tag();
        self.tot_rq_in_driver -= 1;
        let now = self.now;
        let qq = &mut self.queues[q as usize];
        qq.dispatched -= 1;
        qq.ttime.last_end_request = now;
        self.peak.last_completion = now;
        let qq = &self.queues[q as usize];
        if qq.dispatched == 0 && !qq.busy {
            self.pending_remove(q);
        }
        if self.in_service == Some(q) {
            let empty = self.queues[q as usize].queued() == 0;
            if self.must_idle(q) {
                if self.queues[q as usize].dispatched == 0 {
                    self.arm_slice_timer(q);
                }
                // idling: the kernel returns here, without a queue run
                return;
            } else if self.may_expire_for_budg_timeout(q) {
                self.expire(q, false, Reason::BudgetTimeout);
            } else if empty && (self.queues[q as usize].dispatched == 0 || !self.better_to_idle(q))
            {
                self.expire(q, false, Reason::NoMoreRequests);
            }
        }
        if self.tot_rq_in_driver == 0 {
            self.schedule_dispatch();
        }
    }

    /// Run the idle-slice timer if it is due (the simulation runs timers
    /// from the scheduler's entry points and `next_run`).
    fn run_timers(&mut self) {
        if let Some(t) = self.idle_timer {
            if self.now >= t {
                self.idle_timer = None;
                self.idle_slice_timer();
            }
        }
    }
}

impl Elevator for Bfq {
    fn name(&self) -> &'static str {
        "bfq"
    }

    /// `bfq_depth_updated`: 1 on the scheduler tags.
    fn min_shallow_depth(&self) -> u32 {
        1
    }

    /// `bfq_limit_depth` ([`limit`]).
    fn limit_depth(&self, a: &super::Alloc, nr_requests: u32) -> Option<u32> {
        self.limit_depth_of(a, nr_requests)
    }

    /// `bfq_insert_request` (requests are not merged: see the fidelity
    /// notes).
    fn insert(&mut self, ctx: &mut Ctx, reqs: &mut Slab<Request>, rq: ReqId) {
        self.sync_ctx(ctx);
        self.run_timers();
        let (cg, op) = {
            let r = reqs.get(rq);
            (r.cg, r.op)
        };
        let g = self.group_for(ctx, cg);
        let r = reqs.get(rq).clone();
        let q = self.get_queue(&r, g);
        // bfq_init_rq
        *self.bic_requests.entry(r.submitter).or_insert(0) += 1;
        self.count_allocated(q, true);
        self.add_request(reqs, rq, q);
        self.run_hw_queue();
        debug_assert!(op != Op::Flush || self.held > 0);
    }

    /// `bfq_dispatch_request`, behind the per-request lock time.
    fn dispatch(&mut self, ctx: &mut Ctx, reqs: &mut Slab<Request>) -> Option<ReqId> {
        self.sync_ctx(ctx);
        self.run_timers();
        if !self.may_run() {
            return None;
        }
        if self.now < self.lock_free_at {
            return None;
        }
        let Some(rq) = self.dispatch_one(reqs) else {
            self.run_ended_empty();
            return None;
        };
        self.run_dispatched();
        self.lock_free_at = self.now + self.t.lock_hold_ns;
        Some(rq)
    }

    /// `bfq_has_work`: busy queues, even an idling one without requests.
    fn has_work(&self) -> bool {
        self.tot_busy_queues() > 0
    }

    fn completed(&mut self, ctx: &mut Ctx, _reqs: &Slab<Request>, rq: ReqId) {
        self.sync_ctx(ctx);
        self.run_timers();
        self.complete(rq);
    }

    fn queued(&self) -> usize {
        self.held
    }

    /// BFQ merges no request into another (the default `take_freed`).
    fn frees_merged(&self) -> bool {
        false
    }

    /// The idle-slice timer, the delayed queue re-run, and the moment the
    /// lock frees if requests wait (and a run is under way).
    fn next_run(&self) -> Option<Ns> {
        [self.run_resumes_at(), self.idle_timer, self.run.delayed()]
            .into_iter()
            .flatten()
            .filter(|&t| t > self.now)
            .min()
    }

    /// A run is under way, or the delayed re-run is due ([`run`]).
    fn wants_run(&self, now: Ns) -> bool {
        self.run.wants_run(now)
    }

    /// `mod_delayed_work(.., 0)` of `hctx->run_work`: replaces the pending
    /// re-run ([`run`]).
    fn run_async(&mut self) {
        self.run.async_run();
    }

    /// The moment the lock frees if requests wait and a run is under way.
    fn run_resumes_at(&self) -> Option<Ns> {
        (self.held > 0 && self.run.pending && self.lock_free_at > self.now)
            .then_some(self.lock_free_at)
    }

    fn set_tunable(&mut self, name: &str, value: &str) -> Result<(), String> {
        if !tunables::TUNABLES.contains(&name) && name != LOCK_HOLD_PARAM {
            return Err(format!(
                "bfq has no tunable '{name}' (it has: {}; and the model parameter {LOCK_HOLD_PARAM})",
                tunables::TUNABLES.join(", ")
            ));
        }
        self.store(name, value).map_err(|e| e.to_string())
    }

    /// As sysfs lists them (`bfq_attrs` order sorted by name).
    fn tunables(&self) -> Vec<(String, String)> {
        let mut v: Vec<(String, String)> = tunables::TUNABLES
            .iter()
            .map(|&n| (n.to_string(), self.show(n)))
            .collect();
        v.sort();
        v
    }
}

/// The key of the queue a request goes to (`bic_to_bfqq` for a sync
/// request, `bfq_async_queue_prio` for an async one): a sync queue per
/// process and group, an async one per group and priority.
fn queue_key(sync: bool, submitter: Submitter, ioprio: Ioprio, g: GId) -> QueueKey {
    let (class, level) = class_level(ioprio);
    if sync {
        QueueKey::Sync(submitter, g)
    } else if class == 2 {
        // async_idle_bfqq: one per group for the idle class
        QueueKey::Async(g, 2, 0)
    } else {
        QueueKey::Async(g, class as u8, level)
    }
}
