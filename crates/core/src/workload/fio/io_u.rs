//! fio's choice of each I/O's size and offset (io_u.c `get_next_buflen`,
//! `get_next_offset`, and the random map's `get_next_rand_block`).

use blklab_fio::BsSpec;

use super::axmap::RandomMap;
use super::map_ahead;
use super::Job;

impl Job {
    /// fio's block size choice for a direction (`get_next_buflen`).
    fn next_buflen(&mut self, d: usize) -> u32 {
        // a fixed size without reading the spec (knobs.rs)
        if let Some(&b) = self.knobs.fixed_bs.get(d).filter(|&&b| b > 0) {
            return b;
        }
        match &self.cfg.spec.bs[d] {
            BsSpec::Fixed(b) => *b,
            BsSpec::Range { lo, hi } => {
                let steps = (hi - lo) / lo;
                lo + lo * self.rng.below(steps as u64 + 1) as u32
            }
            BsSpec::Split(v) => {
                let r = self.rng.below(100) as u32;
                let mut acc = 0;
                for &(bs, pct) in v {
                    acc += pct;
                    if r < acc {
                        return bs;
                    }
                }
                v.last().map(|x| x.0).unwrap_or(4096)
            }
        }
    }

    /// The next I/O's length and offset (fio's `get_next_offset`, then
    /// `get_next_buflen`). Random offsets go through fio's random map unless
    /// `norandommap` is set; then they are uniform over the region with
    /// replacement, aligned to the minimum block size. None when the random
    /// map has no block left for a job that is not time based: fio's
    /// `get_io_u` fails and the job's loop ends.
    ///
    /// Not inlined: the compiler then inlines the draws (`gen_range`)
    /// here, and did not when this went into `job_issue` (54 instructions
    /// per I/O more, measured in the scale case).
    #[inline(never)]
    pub(super) fn next_io(&mut self, d: usize) -> Option<(u32, u64)> {
        let s = &self.knobs;
        let random = s.rw.is_random() && {
            if s.rw_seq_nr > 1 {
                if self.seq_left == 0 {
                    self.seq_left = s.rw_seq_nr - 1;
                    true
                } else {
                    self.seq_left -= 1;
                    false
                }
            } else {
                true
            }
        };
        if random && !s.norandommap {
            return self.next_mapped_io(d);
        }
        let bytes = self.next_buflen(d);
        let align = self.min_bs[d] as u64;
        let end = self.region_start + self.region_len;
        let off = if random {
            let blocks = (self.region_len - bytes as u64) / align + 1;
            self.region_start + self.rng.below(blocks) * align
        } else {
            let mut p = self.seq_pos[d];
            if p + bytes as u64 > end {
                p = self.region_start;
            }
            p
        };
        self.seq_pos[d] = off + bytes as u64;
        Some((bytes, off))
    }

    /// fio's `rw_min_bs`: the map's block is the smallest minimum block size
    /// of any direction, whatever directions the job uses.
    fn rw_min_bs(&self) -> u64 {
        self.cfg
            .spec
            .bs
            .iter()
            .map(|b| b.min())
            .min()
            .unwrap_or(512) as u64
    }

    /// A random I/O under fio's random map. The block comes from
    /// `get_next_rand_block` / `__get_next_rand_offset` (a uniform draw over
    /// `last_block`, moved to `axmap_next_free` when already done this pass),
    /// the length from `get_next_buflen` (which must fit before the region's
    /// end), and `mark_random_map` marks the blocks and may shorten the I/O to
    /// what it could mark. Block numbers count this direction's minimum block
    /// size, as fio's do, while the map is sized in `rw_min_bs` blocks: when
    /// the two differ (per-direction `bs`), a direction can be handed a block
    /// whose I/O would start past the region's end. fio then fails the io_u
    /// and ends the job's loop (a time-based job starts a new loop with a
    /// fresh map); this model treats it as the end of the pass without that
    /// loop's drain.
    fn next_mapped_io(&mut self, d: usize) -> Option<(u32, u64)> {
        let align = self.min_bs[d] as u64;
        // last_block(): the blocks a minimum-size I/O can start at
        let lastb = self.last_block[d];
        if self.map.is_none() {
            self.map = Some(RandomMap::new(self.region_len / self.rw_min_bs()));
        }
        // A fixed size is one block of its direction (`align` is that
        // size), which `mark` would mark if free: claiming it at once is
        // the same test and the same mark, with one look at the map.
        let one_block = self.knobs.fixed_bs[d] > 0;
        let mut was_reset = false;
        let mut first = None;
        let (b, claimed) = loop {
            let drawn = self.rng.below(lastb);
            first.get_or_insert(drawn);
            let map = self.map.as_mut().expect("built above");
            if one_block && map.claim(drawn) {
                break (drawn, true);
            }
            let b = if map.is_used(drawn) {
                map.next_free(drawn)
            } else {
                Some(drawn)
            };
            match b {
                Some(b) if b < lastb => break (b, false),
                // get_next_rand_block: a time-based job starts a new pass
                // (fio_file_reset clears the map and rewinds the sequential
                // position) and draws once more
                _ if self.cfg.spec.time_based && !was_reset => {
                    map.reset();
                    self.seq_pos = [self.region_start; 2];
                    was_reset = true;
                }
                _ => return None,
            }
        };
        let want = self.buflen_within(d, self.region_len - b * align);
        let blocks = (want as u64).div_ceil(align);
        let map = self.map.as_mut().expect("built above");
        let marked = if claimed { 1 } else { map.mark(b, blocks) };
        // hints for the blocks the next I/Os will most likely draw
        if self.knobs.far_map_hints {
            let first = first.expect("drawn above");
            self.map_ahead.advance(&self.rng, lastb, first, map);
        } else {
            map_ahead::near(&self.rng, lastb, map);
        }
        let bytes = (want as u64).min(marked * align) as u32;
        let off = self.region_start + b * align;
        self.seq_pos[d] = off + bytes as u64;
        Some((bytes, off))
    }

    /// `get_next_buflen` at a random block: fio draws again until the length
    /// fits in the `room` left before the region's end (`io_u_fits`), and a
    /// bssplit draw whose size does not fit moves on to the next listed size
    /// that does.
    fn buflen_within(&mut self, d: usize, room: u64) -> u32 {
        if self.knobs.fixed_bs[d] > 0 {
            // fixed (the copy in `knobs`, without reading the spec): fio
            // does not check the fit
            return self.min_bs[d];
        }
        if matches!(self.cfg.spec.bs[d], BsSpec::Range { .. }) {
            // the minimum always fits (the block starts before last_block)
            loop {
                let b = self.next_buflen(d);
                if b as u64 <= room {
                    return b;
                }
            }
        }
        let BsSpec::Split(v) = &self.cfg.spec.bs[d] else {
            return self.min_bs[d]; // fixed: fio does not check the fit
        };
        if !v.iter().any(|&(bs, pct)| pct > 0 && bs as u64 <= room) {
            // no size with a share fits (the smallest has 0 %): fio would
            // draw again and again; take the minimum
            return self.min_bs[d];
        }
        loop {
            let r = self.rng.below(100) as u32;
            let mut acc = 0;
            let mut last = None;
            for &(bs, pct) in v {
                if pct == 0 {
                    continue;
                }
                acc += pct;
                last = Some(bs);
                if r < acc && bs as u64 <= room {
                    return bs;
                }
            }
            if let Some(bs) = last.filter(|&bs| bs as u64 <= room) {
                return bs;
            }
        }
    }
}
