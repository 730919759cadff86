//! What the rq_qos policies share from block/blk-rq-qos.c: the in-flight
//! counter with its FIFO of sleeping submitters (`struct rq_wait`,
//! `rq_qos_wait`) and the depth-scaling arithmetic (`struct rq_depth`,
//! `rq_depth_calc_max_depth`, `rq_depth_scale_up`, `rq_depth_scale_down`)
//! that blk-wbt uses.

use std::collections::VecDeque;

/// `struct rq_wait`: how many of the policy's I/Os are in flight, and the
/// submitters sleeping for a slot, first come first served (the kernel's
/// exclusive wait queue). `T` is what the policy needs to resume a sleeper.
#[derive(Clone, Debug)]
pub struct RqWait<T> {
    pub inflight: u32,
    pub waiters: VecDeque<T>,
}

impl<T> Default for RqWait<T> {
    fn default() -> Self {
        RqWait {
            inflight: 0,
            waiters: VecDeque::new(),
        }
    }
}

impl<T> RqWait<T> {
    /// Mirrors `rq_wait_inc_below`: take a slot if fewer than `limit` are in flight.
    pub fn inc_below(&mut self, limit: u32) -> bool {
        if self.inflight < limit {
            self.inflight += 1;
            true
        } else {
            false
        }
    }

    /// The fast path of `rq_qos_wait`: a submitter takes a slot without
    /// sleeping only when nobody sleeps before it (`wq_has_sleeper`) and
    /// there is room; otherwise it joins the queue's tail.
    pub fn try_enter(&mut self, limit: u32) -> bool {
        self.waiters.is_empty() && self.inc_below(limit)
    }

    /// A slot was given back (the policy's `done`).
    pub fn dec(&mut self) {
        self.inflight = self.inflight.saturating_sub(1);
    }

    /// The wake-up side of `rq_qos_wait` (`rq_qos_wake_function`): sleepers
    /// are woken in order; each takes a slot if its limit allows, and the
    /// first one that cannot stays asleep, with everyone behind it. At most
    /// `max` are woken (1 for `wake_up`, all for `wake_up_all`).
    /// `limit` gives a sleeper's limit now; woken sleepers go to `out`.
    pub fn wake(&mut self, max: usize, mut limit: impl FnMut(&T) -> u32, out: &mut impl FnMut(T)) {
        let mut woken = 0;
        while let Some(w) = self.waiters.front() {
            if woken == max {
                break;
            }
            let l = limit(w);
            if !self.inc_below(l) {
                break;
            }
            let w = self.waiters.pop_front().expect("front exists");
            woken += 1;
            out(w);
        }
    }
}

/// `struct rq_depth`: a depth limit that halves per positive scale step and
/// doubles per negative one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RqDepth {
    pub max_depth: u32,
    pub scale_step: i32,
    /// The last scale-up reached the ceiling (3/4 of the queue depth).
    pub scaled_max: bool,
    pub queue_depth: u32,
    pub default_depth: u32,
}

impl RqDepth {
    pub fn new(queue_depth: u32, default_depth: u32) -> RqDepth {
        let mut d = RqDepth {
            max_depth: 0,
            scale_step: 0,
            scaled_max: false,
            queue_depth,
            default_depth,
        };
        d.calc_max_depth();
        d
    }

    /// Mirrors `rq_depth_calc_max_depth`: the depth for the current step.
    /// Returns true when a negative step hit the 3/4-of-queue-depth ceiling
    /// (or a single-slot queue is at its top depth of 2).
    pub fn calc_max_depth(&mut self) -> bool {
        if self.queue_depth <= 1 {
            // A device that takes one request at a time gets 1 when scaled
            // down, 2 otherwise (one in the device, one ready behind it).
            if self.scale_step > 0 {
                self.max_depth = 1;
                return false;
            }
            self.max_depth = 2;
            return true;
        }
        let mut depth = self.default_depth.min(self.queue_depth);
        let mut hit_ceiling = false;
        if self.scale_step > 0 {
            depth = 1 + ((depth - 1) >> self.scale_step.min(31));
        } else if self.scale_step < 0 {
            let ceiling = 3 * self.queue_depth / 4;
            let shift = (-self.scale_step).min(31) as u32;
            depth = 1u64
                .saturating_add(((depth - 1) as u64) << shift)
                .min(u32::MAX as u64) as u32;
            if depth > ceiling {
                depth = ceiling;
                hit_ceiling = true;
            }
        }
        self.max_depth = depth;
        hit_ceiling
    }

    /// Mirrors `rq_depth_scale_up`: one step more depth, unless the last
    /// step already reached the ceiling. False if nothing changed.
    pub fn scale_up(&mut self) -> bool {
        if self.scaled_max {
            return false;
        }
        self.scale_step -= 1;
        self.scaled_max = self.calc_max_depth();
        true
    }

    /// Mirrors `rq_depth_scale_down`: one step less depth (a hard throttle
    /// from a negative step jumps straight back to step 0). False once the
    /// depth is down to 1.
    pub fn scale_down(&mut self, hard_throttle: bool) -> bool {
        if self.max_depth == 1 {
            return false;
        }
        if self.scale_step < 0 && hard_throttle {
            self.scale_step = 0;
        } else {
            self.scale_step += 1;
        }
        self.scaled_max = false;
        self.calc_max_depth();
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_table_at_queue_depth_64() {
        let mut d = RqDepth::new(64, 16);
        assert_eq!(d.max_depth, 16);
        let mut downs = vec![];
        while d.scale_down(true) {
            downs.push(d.max_depth);
        }
        // 1 + (15 >> step)
        assert_eq!(downs, vec![8, 4, 2, 1]);
        assert_eq!(d.scale_step, 4);
        let mut ups = vec![];
        while d.scale_up() {
            ups.push(d.max_depth);
        }
        // back through 0 and on: 1 + (15 << -step), capped at 3/4 * 64 = 48
        assert_eq!(ups, vec![2, 4, 8, 16, 31, 48]);
        assert!(d.scaled_max);
        assert_eq!(d.scale_step, -2);
        // a hard throttle from a negative step goes straight to step 0
        assert!(d.scale_down(true));
        assert_eq!((d.scale_step, d.max_depth), (0, 16));
        // a soft one walks
        d.scale_up();
        d.scale_up();
        assert_eq!(d.scale_step, -2);
        d.scale_down(false);
        assert_eq!((d.scale_step, d.max_depth), (-1, 31));
    }

    #[test]
    fn depth_of_small_queues() {
        let mut one = RqDepth::new(1, 16);
        assert_eq!(one.max_depth, 2);
        assert!(one.scale_down(true));
        assert_eq!(one.max_depth, 1);
        assert!(!one.scale_down(true));
        let eight = RqDepth::new(8, 16);
        // min(16, 8)
        assert_eq!(eight.max_depth, 8);
    }

    #[test]
    fn wait_is_fifo_and_stops_at_first_refusal() {
        let mut w: RqWait<u32> = RqWait::default();
        assert!(w.try_enter(2));
        assert!(w.try_enter(2));
        assert!(!w.try_enter(2));
        w.waiters.extend([10, 11, 12]);
        w.dec();
        // room for one: 10 goes, 11 keeps waiting and 12 stays behind it
        // even though its own limit (5) would let it in
        let mut got = vec![];
        w.wake(usize::MAX, |&x| if x == 12 { 5 } else { 2 }, &mut |x| {
            got.push(x)
        });
        assert_eq!(got, vec![10]);
        assert_eq!(w.waiters, [11, 12]);
        // while someone sleeps, a newcomer queues even with room
        assert!(!w.try_enter(9));
    }
}
