//! Request allocation (block/blk-mq-tag.c, `blk_mq_get_tag`): a bio that
//! passed rq_qos takes one of the queue's `nr_requests` tags, or sleeps on
//! the tag set's wait queues until a freed tag wakes it.
//!
//! Two parts of the kernel's loop shape who gets the device when tags run
//! short (6.1.176 and 6.12.117 alike):
//!
//! * The shallow depth is fixed for the whole allocation:
//!   `__blk_mq_alloc_requests` asks the scheduler (`limit_depth`) once,
//!   before `blk_mq_get_tag`, and every retry uses that
//!   `data->shallow_depth`. A bfq process found over its cgroup's share
//!   (`bfqq_request_over_limit`) keeps searching one bit per word until it
//!   gets one, even after its own requests have completed.
//! * Before each sleep, and again after each wake-up, the allocating task
//!   runs the hardware queue in its own context (`blk_mq_run_hw_queue(hctx,
//!   false)`), so that what is pending goes to the device first. A
//!   scheduler that holds the device for a queue whose process is the one
//!   asleep here (bfq idling for the queue in service) is entered at each
//!   such run, so it may inject other queues' requests; their completions
//!   free tags and wake the sleepers again.
//!
//! On a host with CPUs a woken fio task goes on with the loop when the
//! scheduler runs it, behind the tasks the same completion woke before it
//! (its own reap, say, on another job). Simplified: on the free host, and
//! for the kernel's own bios (a loop worker's, the flusher's), the woken
//! sleeper retries at the instant of the free that woke it, in that
//! context.

use super::{bio_submitter, BlkMq};
use crate::block::bio::{BioId, DevId, Op};
use crate::block::sbitmap::TagSleeper;

/// `__blk_mq_alloc_requests` → `blk_mq_get_tag`: take a free tag, even
/// ahead of sleepers; else run the hardware queue, try again, and sleep on
/// the tag set's wait queues.
pub(super) fn get_request<H: BlkMq + ?Sized>(h: &mut H, dev: DevId, id: BioId) {
    let now = h.now();
    h.blk().bios.get_mut(id).t_alloc = now;
    let shallow_depth = limit_depth(h, dev, id);
    if let Some(tag) = try_tag(h, dev, shallow_depth) {
        return h.alloc_request(dev, id, tag);
    }
    let s = TagSleeper {
        bio: id,
        shallow_depth,
    };
    let d = &mut h.blk().devs[dev as usize];
    if !d.can_dispatch() {
        // the loop's queue run is skipped (below), so its retry would meet
        // the bitmap this failed try left and fail the same way: the
        // submitter sleeps without making it (with more submitters than
        // tags, nearly every one)
        return d.st.tag_waiters.sleep(s);
    }
    retry_or_sleep(h, dev, s);
}

/// One tag was freed (`sbitmap_queue_clear` → `sbitmap_queue_wake_up`):
/// every `wake_batch`-th free wakes a batch of sleepers; each runs the
/// hardware queue, tries for a tag again (`blk_mq_get_tag`'s loop) and
/// sleeps anew without one. Nobody asleep (every free while the tags
/// suffice) is the test alone, inlined into the callers.
#[inline(always)]
pub(super) fn wake_tag_waiters<H: BlkMq + ?Sized>(h: &mut H, dev: DevId) {
    if !h.blk().devs[dev as usize].st.tag_waiters.is_empty() {
        wake_sleepers(h, dev);
    }
}

/// The wake-ups of [`wake_tag_waiters`], someone being asleep.
fn wake_sleepers<H: BlkMq + ?Sized>(h: &mut H, dev: DevId) {
    let st = &mut h.blk().devs[dev as usize].st;
    // the device's buffer, taken so that the retries below may reach
    // here again (they then use a fresh one)
    let mut woken = std::mem::take(&mut st.tag_woken);
    st.tag_waiters.freed(1, &mut woken);
    for &w in &woken {
        if !h.defer_tag_retry(dev, w) {
            retry_or_sleep(h, dev, w);
        }
    }
    woken.clear();
    h.blk().devs[dev as usize].st.tag_woken = woken;
}

/// The body of `blk_mq_get_tag`'s loop: run the hardware queue, try for a
/// tag with the allocation's shallow depth, else sleep. Also what a woken
/// sleeper's task runs when the host deferred it to the task's context
/// ([`crate::block::layer::BlkHost::defer_tag_retry`]).
pub(crate) fn retry_or_sleep<H: BlkMq + ?Sized>(h: &mut H, dev: DevId, s: TagSleeper) {
    // a run that would dispatch nothing is skipped: nearly every sleeper
    // on a saturated device would make that call in vain
    if h.blk().devs[dev as usize].can_dispatch() {
        h.run_queue(dev);
    }
    match try_tag(h, dev, s.shallow_depth) {
        Some(tag) => h.alloc_request(dev, s.bio, tag),
        None => h.blk().devs[dev as usize].st.tag_waiters.sleep(s),
    }
}

/// The scheduler's `limit_depth` for bio `id`'s allocation (e.g.
/// mq-deadline's `async_depth` for writes, bfq's per-cgroup limit): the
/// bits per word it may use, 0 for all.
fn limit_depth<H: BlkMq + ?Sized>(h: &mut H, dev: DevId, id: BioId) -> u32 {
    let b = h.blk();
    let d = &b.devs[dev as usize];
    if !d.st.elv_hooks.limits {
        return 0;
    }
    let bio = b.bios.get(id);
    let a = crate::block::elevator::Alloc {
        op: bio.op,
        sync: bio.flags.sync || bio.op == Op::Read,
        cg: bio.cg,
        submitter: bio_submitter(&b.bios, id),
        ioprio: bio.ioprio,
    };
    d.st.elv.limit_depth(&a, d.info.nr_requests).unwrap_or(0)
}

/// `__blk_mq_get_tag`: one of the `nr_requests` tags, within
/// `shallow_depth` bits of each word if it is not 0.
fn try_tag<H: BlkMq + ?Sized>(h: &mut H, dev: DevId, shallow_depth: u32) -> Option<u32> {
    let shallow = (shallow_depth > 0).then_some(shallow_depth);
    h.blk().devs[dev as usize].st.tag_bits.get(shallow)
}
