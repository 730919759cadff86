//! The blocks a job's next random-map draws will most likely give, for
//! cache hints. Not in fio: the simulator's own speed. On a large region
//! the map's words (their chunk's entry, then its table's slots) miss the
//! cache at nearly every I/O; the draws that pick them come from the job's
//! own stream, so they can be known several I/Os before they are made, and
//! the loads started then.
//!
//! A copy of the job's stream runs `AHEAD` draws ahead of it. An I/O over
//! the same range whose first draw is the block predicted for it keeps the
//! copy in step: one more draw on the copy predicts the I/O `AHEAD` later.
//! Otherwise (a draw that hit a used block and drew again, a size or a
//! direction drawn from the same stream, a new pass, another direction's
//! range) the copy is out of step and restarts from the job's stream. A job whose I/Os are never in step (a size drawn from
//! a range or a split takes draws of its own) restarts less and less often,
//! so that the copy's `AHEAD` draws cost next to nothing. A wrong
//! prediction only wastes a hint: nothing here changes a draw or an answer.
//!
//! With many jobs, a job's next I/Os are far apart (with 100 jobs, 8 of
//! its I/Os are 800 of the run's), the hinted lines leave the cache before
//! they are read, and this state is one more line out of the cache at each
//! I/O: there a job hints only its next draw, from a copy of its stream
//! made at each I/O (`near`), as before this look-ahead.

use super::axmap::RandomMap;
use crate::sim::rng::Rng;
use crate::workload::Workload;

/// The most jobs a run may have for its jobs to hint far ahead. Measured
/// (bench/README.md, tenth pass): faster with 1 and 2 jobs (cases a and
/// a-2cg), 10-40 % slower with 1000 (the scale case with the map), about
/// the same or faster with 10 and 100; the bound stays at what was shown
/// to pay.
const FAR_HINT_JOBS: usize = 2;

impl Workload {
    /// Choose the reach of the random map's hints from the number of jobs
    /// (once all are built).
    pub(crate) fn plan_map_hints(&mut self) {
        let far = self.jobs.len() <= FAR_HINT_JOBS;
        for job in &mut self.jobs {
            job.knobs.far_map_hints = far;
        }
    }
}

impl super::Job {
    /// Whether this job's map hints reach far ahead (the tests' view).
    #[cfg(test)]
    pub(crate) fn far_map_hints(&self) -> bool {
        self.knobs.far_map_hints
    }
}

/// The hints of a job that does not look far ahead: the block its next
/// draw will most likely give (from a copy of `stream`, the job's stream
/// after this I/O's draws) and the chunk entry of the one after.
#[inline]
pub(super) fn near(stream: &Rng, lastb: u64, map: &RandomMap) {
    let mut ahead = stream.clone();
    map.prefetch(ahead.below(lastb));
    map.prefetch_entry(ahead.below(lastb));
}

/// Draws predicted ahead (a power of two). The map's chunk entry is hinted
/// for the furthest of them and its table's slots `SLOTS_AHEAD` I/Os ahead,
/// so that the slot hint finds the entry loaded. (Case a of the bench: 2
/// and 1, or 4 and 2, were slower; 16 and 8 no faster; bench/README.md,
/// tenth pass.)
const AHEAD: usize = 8;
const SLOTS_AHEAD: usize = 4;
/// The least often a copy out of step restarts.
const RESTART_EVERY: u32 = 64;

pub(super) struct MapAhead {
    /// The job's stream, `AHEAD` draws further on (None until the first
    /// random I/O).
    rng: Option<Rng>,
    /// The range of those draws (`last_block`).
    lastb: u64,
    /// The predicted draws: the next I/O's at `head`, then in order.
    blocks: [u64; AHEAD],
    head: usize,
    /// I/Os out of step since the copy was last right `AHEAD` times in a
    /// row: the copy restarts at the first, second, fourth, ... of them,
    /// then at every `RESTART_EVERY`th; in between, only the next draw is
    /// hinted, from a copy made there. (A job that draws something else
    /// after each block is right once after each restart, never twice.)
    misses: u32,
    /// I/Os in step in a row.
    run: u32,
    /// Restarts so far (the tests' view of the back-off).
    #[cfg(test)]
    restarts: u32,
}

impl MapAhead {
    pub(super) fn new() -> MapAhead {
        MapAhead {
            rng: None,
            lastb: 0,
            blocks: [0; AHEAD],
            head: 0,
            misses: 0,
            run: 0,
            #[cfg(test)]
            restarts: 0,
        }
    }

    /// After an I/O whose first draw over `lastb` was `first`, the job's
    /// stream now at `stream`: keep the copy in step or restart it, and
    /// hint `map` for the I/Os ahead.
    #[inline]
    pub(super) fn advance(&mut self, stream: &Rng, lastb: u64, first: u64, map: &RandomMap) {
        let in_step = lastb == self.lastb && self.blocks[self.head] == first;
        if let Some(rng) = self.rng.as_mut().filter(|_| in_step) {
            let b = rng.below(lastb);
            self.blocks[self.head] = b;
            self.head = (self.head + 1) % AHEAD;
            self.run += 1;
            if self.run >= AHEAD as u32 {
                self.misses = 0;
            }
            map.prefetch_entry(b);
            map.prefetch(self.blocks[(self.head + SLOTS_AHEAD - 1) % AHEAD]);
            return;
        }
        self.run = 0;
        self.misses = self.misses.saturating_add(1);
        let mut rng = stream.clone();
        if !self.misses.is_power_of_two() && !self.misses.is_multiple_of(RESTART_EVERY) {
            map.prefetch(rng.below(lastb));
            return;
        }
        #[cfg(test)]
        {
            self.restarts += 1;
        }
        for b in &mut self.blocks {
            *b = rng.below(lastb);
            map.prefetch_entry(*b);
        }
        map.prefetch(self.blocks[0]);
        self.rng = Some(rng);
        self.lastb = lastb;
        self.head = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The block predicted for the next I/O (once the copy has started).
    fn predicted(a: &MapAhead) -> Option<u64> {
        a.rng.as_ref().map(|_| a.blocks[a.head])
    }

    /// Each I/O's draw is the block predicted for it, through extra draws
    /// (a draw that hit a used block) and a change of range (another
    /// direction's block size), after which the copy restarts. (A wrong
    /// prediction would change no result; this checks that the hints are
    /// worth their cost.)
    #[test]
    fn predictions_follow_the_stream_through_extra_draws() {
        let map = RandomMap::new(1 << 20);
        let mut stream = Rng::stream(3, "map-ahead-test");
        let mut ahead = MapAhead::new();
        let mut predicted_right = 0;
        let extra = |io: u32| io % 37 == 5;
        for io in 0..200u32 {
            let lastb = if io < 100 { 1 << 20 } else { 1 << 18 };
            let p = predicted(&ahead);
            let first = stream.below(lastb);
            if extra(io) {
                stream.below(lastb);
            }
            predicted_right += (p == Some(first)) as u32;
            ahead.advance(&stream, lastb, first, &map);
        }
        // all but the first I/O and the first over the new range; the
        // I/O after an extra draw is out of step and restarts the copy
        assert_eq!(
            predicted_right,
            198 - (0..200).filter(|&io| extra(io)).count() as u32
        );
        assert_eq!(
            ahead.restarts,
            2 + (0..200).filter(|&io| extra(io)).count() as u32
        );
    }

    /// A job that takes a draw of its own after each block (a size from a
    /// split) is right once after each restart, then out of step at every
    /// I/O: the copy restarts at out-of-step I/Os 1, 2, 4, ..., then at
    /// every 64th, not at every other I/O.
    #[test]
    fn a_copy_never_in_step_backs_off() {
        let map = RandomMap::new(1 << 20);
        let lastb = 1 << 20;
        let mut stream = Rng::stream(5, "map-ahead-test");
        let mut ahead = MapAhead::new();
        let ios = 2000;
        for _ in 0..ios {
            let first = stream.below(lastb);
            stream.below(100);
            ahead.advance(&stream, lastb, first, &map);
        }
        // at most: 1, 2, ..., 1024 (11) and every 64th of up to 2000
        assert!(
            (11..=11 + ios / 64).contains(&ahead.restarts),
            "{} restarts",
            ahead.restarts
        );
    }
}
