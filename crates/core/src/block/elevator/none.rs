//! No scheduler: requests go to the driver in the order they were inserted
//! (the hctx dispatch list of blk-mq without an elevator).

use std::collections::VecDeque;

use super::Elevator;
use crate::block::ctx::Ctx;
use crate::block::request::{ReqId, Request};
use crate::sim::slab::Slab;

#[derive(Default)]
pub struct NoneSched {
    fifo: VecDeque<ReqId>,
}

impl Elevator for NoneSched {
    fn name(&self) -> &'static str {
        "none"
    }
    /// No `bio_merge`: the model's none merges no bio (the kernel's
    /// `blk_bio_list_merge` into the software queues is not modelled).
    fn merges_bios(&self) -> bool {
        false
    }
    /// No `limit_depth` (blk-mq's default: the whole tag set).
    fn limits_depth(&self) -> bool {
        false
    }
    fn insert(&mut self, _ctx: &mut Ctx, _reqs: &mut Slab<Request>, rq: ReqId) {
        self.fifo.push_back(rq);
    }
    fn dispatch(&mut self, _ctx: &mut Ctx, _reqs: &mut Slab<Request>) -> Option<ReqId> {
        self.fifo.pop_front()
    }
    /// Nothing to do at a completion (the default `completed`).
    fn sees_completions(&self) -> bool {
        false
    }
    /// No request merges (the default `take_freed`).
    fn frees_merged(&self) -> bool {
        false
    }
    /// No delayed runs (the default `next_run`).
    fn arms_runs(&self) -> bool {
        false
    }
    fn has_work(&self) -> bool {
        !self.fifo.is_empty()
    }
    fn queued(&self) -> usize {
        self.fifo.len()
    }
}
