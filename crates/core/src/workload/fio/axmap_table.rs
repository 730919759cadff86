//! A sparse chunk of the random map (axmap.rs): the set bits of one chunk of
//! `CHUNK_BITS` bits kept as an open-addressing table of their places in the
//! chunk. Not in fio, whose `lib/axmap.c` holds one bit per block from the
//! start: a job that touched few blocks of a large device would pay for the
//! whole region (32 MiB per job on a 1 TiB device). The representation never
//! changes an answer.
//!
//! Why a table and not a sorted list: a random job's blocks land anywhere in
//! the chunk, so every mark of a sorted list shifts half of it (a `memmove`
//! of hundreds of bytes per I/O). Here a place's slot is its place scaled to
//! the table (`place >> shift`, monotone), and a place is stored in the first
//! free slot from there (linear probing). Marking an I/O moves nothing, and
//! the places of one 64-bit word of the map hash to one or two neighbouring
//! slots, so reading a word is a short scan of one cache line (four slots
//! at a time, as 16-bit lanes of a u64), which the job can prefetch ahead.
//! The price is room: a table doubles when it would pass seven eighths
//! full, so a place takes 2.3-4.6 bytes (3.2 on average) where a sorted
//! list growing by an eighth takes 2-2.25.

/// Bits per chunk: a place fits 15 bits, so `EMPTY` is never a place.
pub(super) const CHUNK_BITS: u32 = 1 << 15;
const EMPTY: u16 = u16::MAX;
/// Slots read at once by `word_and_slot` (16-bit lanes of a u64).
const LANES: usize = 4;
const LANE_LOW: u64 = 0x7fff_7fff_7fff_7fff;

/// `x` in each 16-bit lane.
fn lane_splat(x: u32) -> u64 {
    (x as u64 & 0xffff) * 0x0001_0001_0001_0001
}

/// The top bit of each 16-bit lane of `x` that is zero, nothing else.
fn zero_lanes(x: u64) -> u64 {
    !(((x & LANE_LOW) + LANE_LOW) | x | LANE_LOW)
}

/// Slots compared at once by `claim` (`stop_lanes`).
const WIDE: usize = 8;

/// Bit `2 i` set (and, on x86_64, bit `2 i + 1`) when `slots[i]` is
/// `place` or free (`slots` holds `WIDE` slots): eight 16-bit compares in
/// one SSE2 instruction on x86_64, whose byte mask has two bits a slot; a
/// loop elsewhere. The first such slot is `trailing_zeros / 2`.
#[inline]
fn stop_lanes(slots: &[u16], place: u32) -> u32 {
    let slots: &[u16; WIDE] = slots.try_into().expect("WIDE slots");
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE2 is part of the x86_64 baseline; the load reads the 16
    // bytes of `slots` (an unaligned load).
    unsafe {
        use std::arch::x86_64::*;
        let v = _mm_loadu_si128(slots.as_ptr().cast());
        let hit = _mm_or_si128(
            _mm_cmpeq_epi16(v, _mm_set1_epi16(place as u16 as i16)),
            _mm_cmpeq_epi16(v, _mm_set1_epi16(EMPTY as i16)),
        );
        _mm_movemask_epi8(hit) as u32
    }
    #[cfg(not(target_arch = "x86_64"))]
    slots
        .iter()
        .enumerate()
        .filter(|&(_, &v)| v == EMPTY || v as u32 == place)
        .fold(0, |m, (i, _)| m | 1 << (2 * i))
}

/// The smallest table, in slots.
const MIN_SLOTS: usize = 16;

/// What [`BitTable::claim`] did with a place.
#[derive(Debug, PartialEq)]
pub(super) enum PlaceClaim {
    /// The place was stored already: nothing changed.
    Present,
    /// Stored now. `crowded`: the probe passed 63 or more stored places,
    /// so the place's word may now be full (the caller reads it).
    Stored { crowded: bool },
    /// Nothing changed: the caller takes the general path.
    Declined,
}

/// The set bits of one chunk. Invariant (linear probing): every place sits
/// in its home slot or after it, with no free slot in between (cyclically).
pub(super) struct BitTable {
    slots: Box<[u16]>,
    len: usize,
    /// `home(place) = place >> shift`: a table with slots has
    /// `CHUNK_BITS >> shift` of them.
    shift: u32,
}

impl BitTable {
    /// No slots until the first place: an untouched chunk of a large
    /// region costs nothing but its entry in the chunk table.
    pub(super) fn new() -> BitTable {
        BitTable {
            slots: Box::new([]),
            len: 0,
            shift: CHUNK_BITS.trailing_zeros(),
        }
    }

    fn with_slots(n: usize) -> BitTable {
        debug_assert!(n.is_power_of_two() && n <= CHUNK_BITS as usize);
        BitTable {
            slots: vec![EMPTY; n].into_boxed_slice(),
            len: 0,
            shift: CHUNK_BITS.trailing_zeros() - n.trailing_zeros(),
        }
    }

    /// Places stored (the tests' check of the count).
    #[cfg(test)]
    fn len(&self) -> usize {
        self.len
    }

    /// Slots, each 2 bytes.
    pub(super) fn slots(&self) -> usize {
        self.slots.len()
    }

    fn home(&self, place: u32) -> usize {
        (place >> self.shift) as usize
    }

    /// The 64 bits of the chunk from place `lo` (a multiple of 64): bit `i`
    /// set when place `lo + i` is stored.
    pub(super) fn word(&self, lo: u32) -> u64 {
        self.word_and_slot(lo).0
    }

    /// `word(lo)`, and the slot where `insert` would put any place of the
    /// word, when the word has a single home (then its places all probe
    /// from there: the scan's last slot is the first free one). A place of
    /// the word sits at or after its home with only full slots in between,
    /// so the scan covers the word's homes and then runs on to the first
    /// free slot.
    pub(super) fn word_and_slot(&self, lo: u32) -> (u64, Option<usize>) {
        if self.slots.is_empty() {
            return (0, None);
        }
        let mask = self.slots.len() - 1;
        let first = self.home(lo);
        let homes = self.home(lo + 63) - first;
        let mut bits = 0;
        let mut step = 0;
        // four slots at a time while they do not wrap: lanes of 16 bits
        while first + step + LANES <= self.slots.len() {
            let at = first + step;
            let group = self.slots[at..at + LANES]
                .iter()
                .rev()
                .fold(0u64, |g, &v| g << 16 | v as u64);
            // free lanes past the word's homes end the scan
            let past_homes = match homes.saturating_sub(step) {
                0 => !0,
                n if n >= LANES => 0,
                n => !0u64 << (16 * n),
            };
            let free = zero_lanes(!group) & past_homes;
            let end = if free == 0 {
                LANES
            } else {
                free.trailing_zeros() as usize / 16
            };
            // the word's places: the lanes whose top 10 bits are lo's
            let mut hits = zero_lanes((group ^ lane_splat(lo)) & lane_splat(0xffc0))
                & (!0u64).checked_shl(16 * end as u32).map_or(!0, |m| !m);
            while hits != 0 {
                let lane = hits.trailing_zeros() / 16;
                bits |= 1 << ((group >> (16 * lane)) as u32 & 0x3f);
                hits &= hits - 1;
            }
            if end < LANES {
                return (bits, (homes == 0).then_some(at + end));
            }
            step += LANES;
        }
        loop {
            let at = (first + step) & mask;
            let v = self.slots[at];
            if v == EMPTY {
                if step >= homes {
                    return (bits, (homes == 0).then_some(at));
                }
            } else if (lo..lo + 64).contains(&(v as u32)) {
                bits |= 1 << (v as u32 - lo);
            }
            step += 1;
        }
    }

    /// Store `place` unless it is stored already: the one-block I/O's mark
    /// (axmap.rs `claim`) without building the place's whole word. The
    /// probe of a linear-probing look-up, from the place's own home to the
    /// place or the first free slot, eight slots at a time
    /// (`stop_lanes`: at seven eighths full the probe runs over several
    /// slots). Declined (nothing changed) when one
    /// more place would need a larger table, or when the table has more
    /// than one home per word (over 512 slots): then only the word's
    /// general scan can tell whether the place's word became full.
    #[inline]
    pub(super) fn claim(&mut self, place: u32) -> PlaceClaim {
        debug_assert!(place < CHUNK_BITS);
        let n = self.slots.len();
        if self.full() || n > CHUNK_BITS as usize / 64 {
            return PlaceClaim::Declined;
        }
        let start = self.home(place);
        let mut at = start;
        while at + WIDE <= n {
            // the place itself or a free slot, whichever comes first
            let stop = stop_lanes(&self.slots[at..at + WIDE], place);
            if stop != 0 {
                return self.claim_at(place, start, at + stop.trailing_zeros() as usize / 2);
            }
            at += WIDE;
        }
        // the last slots and the wrap-around, one by one
        let mask = n - 1;
        loop {
            let v = self.slots[at & mask];
            if v == EMPTY || v as u32 == place {
                return self.claim_at(place, start, at & mask);
            }
            at += 1;
        }
    }

    /// The end of `claim`'s probe from `start`: `slot` holds the place or
    /// is the first free slot.
    #[inline]
    fn claim_at(&mut self, place: u32, start: usize, slot: usize) -> PlaceClaim {
        if self.slots[slot] != EMPTY {
            return PlaceClaim::Present;
        }
        self.insert_at(place, slot);
        // With one home per word, the word's places are the stored slots
        // that run on from that home, all of which the probe passed: fewer
        // than 63 of them, and the word cannot be full now.
        let passed = slot.wrapping_sub(start) & (self.slots.len() - 1);
        PlaceClaim::Stored {
            crowded: passed >= 63,
        }
    }

    /// Where the scan of `word(lo)` starts (for a cache hint).
    pub(super) fn word_slot(&self, lo: u32) -> Option<*const u16> {
        self.slots.get(self.home(lo)).map(|s| s as *const u16)
    }

    /// Store `place` (not yet stored). The caller keeps the load at or below
    /// seven eighths (`full`), so a free slot is always found.
    pub(super) fn insert(&mut self, place: u32) {
        debug_assert!(place < CHUNK_BITS && self.len < self.slots.len());
        let mask = self.slots.len() - 1;
        let mut i = self.home(place);
        while self.slots[i] != EMPTY {
            i = (i + 1) & mask;
        }
        self.insert_at(place, i);
    }

    /// Store `place` (not yet stored) in `slot`, the one `insert` would
    /// take (as `word_and_slot` found it, with no insertion since): the
    /// probe is not walked twice.
    pub(super) fn insert_at(&mut self, place: u32, slot: usize) {
        debug_assert!(place < CHUNK_BITS && self.len < self.slots.len());
        debug_assert_eq!(self.slots[slot], EMPTY);
        self.slots[slot] = place as u16;
        self.len += 1;
    }

    /// Whether one more place would take the load past seven eighths (or
    /// the table has no slots yet).
    pub(super) fn full(&self) -> bool {
        (self.len + 1) * 8 > self.slots.len() * 7
    }

    /// The same places in a table twice as large, or the smallest table
    /// when there are no slots yet. Reinserted in slot order, so the same
    /// places inserted in the same order always give the same table.
    pub(super) fn grown(&self) -> BitTable {
        let mut t = Self::with_slots((self.slots.len() * 2).max(MIN_SLOTS));
        for &v in self.slots.iter().filter(|&&v| v != EMPTY) {
            t.insert(v as u32);
        }
        t
    }

    /// Every stored place, in slot order.
    pub(super) fn places(&self) -> impl Iterator<Item = u32> + '_ {
        self.slots
            .iter()
            .filter(|&&v| v != EMPTY)
            .map(|&v| v as u32)
    }

    /// No place stored (the table keeps its size: a new pass refills it).
    pub(super) fn clear(&mut self) {
        self.slots.fill(EMPTY);
        self.len = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The probing invariant: from its home to where it sits, a place
    /// passes only full slots.
    fn invariant_holds(t: &BitTable) -> bool {
        let mask = t.slots.len() - 1;
        t.slots.iter().enumerate().all(|(at, &v)| {
            v == EMPTY || {
                let mut i = t.home(v as u32);
                while i != at && t.slots[i] != EMPTY {
                    i = (i + 1) & mask;
                }
                i == at
            }
        })
    }

    /// Exactly the zero lanes are flagged, whatever the other lanes hold
    /// (no borrow from one lane into the next).
    #[test]
    fn zero_lanes_flags_exactly_the_zero_lanes() {
        for lanes in [
            [0u16, 0xffff, 0x8000, 1],
            [0x7fff, 0, 0, 0x8001],
            [1, 0x8000, 0xffff, 0],
            [0, 0, 0, 0],
        ] {
            let x = lanes.iter().rev().fold(0u64, |g, &v| g << 16 | v as u64);
            let want = lanes
                .iter()
                .enumerate()
                .filter(|&(_, &v)| v == 0)
                .fold(0u64, |m, (i, _)| m | 0x8000 << (16 * i));
            assert_eq!(zero_lanes(x), want, "{lanes:x?}");
        }
        assert_eq!(lane_splat(0xffc0), 0xffc0_ffc0_ffc0_ffc0);
    }

    /// `claim` finds a stored place, stores a new one where `insert`
    /// would, flags a probe over 63 stored places, and declines a table
    /// that must grow or has more than one home per word.
    #[test]
    fn claim_probes_from_the_places_home() {
        let mut t = BitTable::new();
        assert_eq!(t.claim(5), PlaceClaim::Declined);
        t = t.grown();
        // 16 slots, 2048 places per home: the probe runs on from the home
        assert_eq!(t.claim(5), PlaceClaim::Stored { crowded: false });
        assert_eq!(t.claim(5), PlaceClaim::Present);
        assert_eq!(t.claim(7), PlaceClaim::Stored { crowded: false });
        // a place homed in the last slot wraps to slot 0's neighbours
        assert_eq!(
            t.claim(CHUNK_BITS - 1),
            PlaceClaim::Stored { crowded: false }
        );
        assert_eq!(
            t.claim(CHUNK_BITS - 2),
            PlaceClaim::Stored { crowded: false }
        );
        assert_eq!(t.claim(CHUNK_BITS - 1), PlaceClaim::Present);
        assert_eq!(t.word(0), 1 << 5 | 1 << 7);
        assert_eq!(t.word(CHUNK_BITS - 64), 3 << 62);
        assert!(invariant_holds(&t));
        // one word's 64 places in a 128-slot table (one home): the 64th
        // probe passes 63 stored places
        let mut t = BitTable::with_slots(128);
        for p in 0..63 {
            assert_eq!(t.claim(p), PlaceClaim::Stored { crowded: false });
        }
        assert_eq!(t.claim(63), PlaceClaim::Stored { crowded: true });
        assert_eq!(t.word(0), !0);
        assert!(invariant_holds(&t));
        let mut wide = BitTable::with_slots(1024);
        assert_eq!(wide.claim(9), PlaceClaim::Declined);
    }

    /// `stop_lanes` flags exactly the slots that hold the place or are
    /// free, at bit `2 i`, whatever the other slots hold.
    #[test]
    fn stop_lanes_flags_the_place_and_the_free_slots() {
        let place = 0x1234;
        for slots in [
            [0u16, 0x1234, 0xffff, 0x9234, 0x1235, 0x0234, 0x1234, 7],
            [0xffff; WIDE],
            [1, 2, 3, 4, 5, 6, 7, 0x7fff],
            [
                0x7fff,
                0x1234 ^ 0x8000,
                0xfffe,
                0x12,
                0x34,
                0x3412,
                0,
                0xffff,
            ],
        ] {
            let got = stop_lanes(&slots, place);
            for (i, &v) in slots.iter().enumerate() {
                let want = v == EMPTY || v as u32 == place;
                assert_eq!(got >> (2 * i) & 1 == 1, want, "slot {i} of {slots:x?}");
            }
            let first = slots.iter().position(|&v| v == EMPTY || v as u32 == place);
            assert_eq!(
                (got != 0).then(|| got.trailing_zeros() as usize / 2),
                first,
                "{slots:x?}"
            );
        }
    }

    #[test]
    fn words_read_back_what_was_stored_through_growth_and_wrap_around() {
        let mut t = BitTable::new();
        let mut set = vec![false; CHUNK_BITS as usize];
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        // clusters at the table's end wrap to its start: places near the
        // top of the chunk, runs of neighbours, and random places
        let mut places: Vec<u32> = (CHUNK_BITS - 40..CHUNK_BITS).collect();
        places.extend(1000..1100);
        for _ in 0..600 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            places.push((x % CHUNK_BITS as u64) as u32);
        }
        for (n, &p) in places.iter().enumerate() {
            if set[p as usize] {
                continue;
            }
            if t.full() {
                t = t.grown();
            }
            // every other place through the slot the word's scan found
            match t.word_and_slot(p / 64 * 64) {
                (_, Some(slot)) if n % 2 == 0 => t.insert_at(p, slot),
                _ => t.insert(p),
            }
            set[p as usize] = true;
            if n % 97 == 0 || n + 1 == places.len() {
                assert!(invariant_holds(&t), "after {n} places");
                for lo in (0..CHUNK_BITS).step_by(64) {
                    let want = (0..64)
                        .filter(|&i| set[(lo + i) as usize])
                        .fold(0u64, |w, i| w | 1 << i);
                    assert_eq!(t.word(lo), want, "word at {lo} after {n} places");
                }
            }
        }
        assert_eq!(t.len(), set.iter().filter(|&&s| s).count());
        assert!(t.len() * 8 <= t.slots() * 7);
        t.clear();
        assert_eq!((t.len(), t.word(CHUNK_BITS - 64)), (0, 0));
    }
}
