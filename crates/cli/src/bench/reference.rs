//! The reference the issue measures blklab against: the smallest
//! single-threaded discrete-event loop that simulates case a's timeline.
//! One `BinaryHeap` of (time, sequence, event), two events per I/O (the
//! submission, which draws a random 4 KiB block of the device from the same
//! kind of generator the core uses, and the completion 10 µs later), a
//! fixed queue depth, the same number of I/Os. It models nothing else (no
//! block layer, no random map, no statistics): the ratio of blklab's rate to
//! this loop's is what the simulator's fidelity costs over the bare event
//! traffic of the same timeline.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Instant;

use blklab_core::sim::rng::Rng;

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum RefEv {
    /// A slot of the queue depth submits its next I/O.
    Submit(u32),
    /// The device completes the I/O of a slot (at this block).
    Complete(u32, u64),
}

/// What the reference loop did.
pub struct RefResult {
    pub ios: u64,
    pub events: u64,
    pub sim_end_ns: u64,
    pub wall_seconds: f64,
    /// XOR of the completed blocks, printed so the work cannot be optimised away.
    pub checksum: u64,
}

/// Run `ios` I/Os at `iodepth` on a device that completes each after
/// `completion_ns`, drawing blocks uniformly in `[0, blocks)`.
pub fn run(ios: u64, iodepth: u32, completion_ns: u64, blocks: u64, seed: u64) -> RefResult {
    let t0 = Instant::now();
    let mut rng = Rng::stream(seed, "job/0");
    let mut heap: BinaryHeap<Reverse<(u64, u64, RefEv)>> = BinaryHeap::new();
    let mut seq = 0u64;
    for slot in 0..iodepth {
        seq += 1;
        heap.push(Reverse((0, seq, RefEv::Submit(slot))));
    }
    let (mut submitted, mut done, mut events, mut checksum, mut now) = (0u64, 0u64, 0u64, 0u64, 0);
    while let Some(Reverse((t, _, ev))) = heap.pop() {
        events += 1;
        now = t;
        match ev {
            RefEv::Submit(slot) => {
                if submitted == ios {
                    continue;
                }
                submitted += 1;
                let block = rng.below(blocks);
                seq += 1;
                heap.push(Reverse((
                    t + completion_ns,
                    seq,
                    RefEv::Complete(slot, block),
                )));
            }
            RefEv::Complete(slot, block) => {
                done += 1;
                checksum ^= block;
                seq += 1;
                heap.push(Reverse((t, seq, RefEv::Submit(slot))));
            }
        }
    }
    RefResult {
        ios: done,
        events,
        sim_end_ns: now,
        wall_seconds: t0.elapsed().as_secs_f64(),
        checksum: std::hint::black_box(checksum),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// QD4 at 10 µs: 100 I/Os end at 25 rounds of 10 µs, two events per
    /// I/O (plus the idle slots' last submit events).
    #[test]
    fn timeline_of_the_reference() {
        let r = run(100, 4, 10_000, 1 << 28, 1);
        assert_eq!(r.ios, 100);
        assert_eq!(r.sim_end_ns, 250_000);
        assert_eq!(r.events, 2 * 100 + 4);
    }
}
