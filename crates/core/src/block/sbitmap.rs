//! The waiting side of a tag set (`struct sbitmap_queue`, lib/sbitmap.c) as
//! `blk_mq_get_tag` (block/blk-mq-tag.c) uses it: who sleeps for a request
//! tag, and whom a freed tag wakes.
//!
//! Tag waiters are not a FIFO. A submitter first tries for a free tag; only
//! when none is free does it sleep, at the tail of one of eight wait queues
//! taken in turn (`bt_wait_ptr`). Freed tags are counted while anyone
//! sleeps, and only every `wake_batch`-th one wakes anybody: up to
//! `wake_batch` sleepers of the next non-empty wait queue (`wake_up_nr`).
//! Until then the freed tags stay free, and a newcomer takes one at once,
//! ahead of every sleeper. A woken sleeper that finds no tag sleeps again,
//! at the tail of the next wait queue.
//!
//! `wake_batch` comes from the depth (`sbq_calc_wake_batch`): an eighth of
//! the depth, 1 to 8, where a scheduler that limits the depth per bitmap
//! word (mq-deadline and bfq set a minimum shallow depth of 1) counts one
//! tag per word, which makes it 1 for every usual depth.
//!
//! Simplified: one hardware queue per device (one `wait_index`); a woken
//! sleeper runs at once (the host's CPUs are free); the count is the single
//! per-bitmap one (`completion_cnt`/`wakeup_cnt`, 4f8126bb2308 in v6.2, in
//! Debian's 6.1.y too) — older kernels counted per wait queue, which wakes
//! the same numbers in the same rotation.

use std::collections::VecDeque;

/// `SBQ_WAIT_QUEUES`.
pub const SBQ_WAIT_QUEUES: usize = 8;
/// `SBQ_WAKE_BATCH`.
pub const SBQ_WAKE_BATCH: u32 = 8;

/// The minimum shallow depth of a tag set nobody limits (`UINT_MAX`).
pub const NO_SHALLOW_LIMIT: u32 = u32::MAX;

/// `sbitmap_calculate_shift`: log2 of the bits per bitmap word, lowered for
/// small depths so the bits spread over at least four words.
pub fn calculate_shift(depth: u32) -> u32 {
    let mut shift = 6; // ilog2(BITS_PER_LONG) on a 64-bit kernel
    if depth >= 4 {
        while (4u64 << shift) > depth as u64 {
            shift -= 1;
        }
    }
    shift
}

/// The bits of a `depth`-bit bitmap an allocation limited to `shallow`
/// bits per word can use (`sbitmap_get_shallow`): every full word gives
/// `shallow`, the partial last word up to its size.
pub fn shallow_capacity(depth: u32, shallow: u32) -> u32 {
    let shift = calculate_shift(depth);
    let shallow = (1u32 << shift).min(shallow);
    let mask = (1u32 << shift) - 1;
    (depth >> shift) * shallow + (depth & mask).min(shallow)
}

/// `sbq_calc_wake_batch`: the freed tags that make one wake-up, for a tag
/// set of `depth` tags whose words are limited to `min_shallow_depth` bits.
pub fn calc_wake_batch(depth: u32, min_shallow_depth: u32) -> u32 {
    let usable = shallow_capacity(depth, min_shallow_depth);
    (usable / SBQ_WAIT_QUEUES as u32).clamp(1, SBQ_WAKE_BATCH)
}

/// `find_next_zero_bit`: the first clear bit of `word` at or above `from`
/// and below `depth` (≤ 64), by masking rather than a scan: this runs on
/// every request allocation.
fn find_next_zero_bit(word: u64, depth: u32, from: u32) -> Option<u32> {
    if from >= depth {
        return None;
    }
    let below = (1u64 << from) - 1; // from < depth ≤ 64
    let above = if depth >= 64 { 0 } else { !0u64 << depth };
    let b = (!(word | below | above)).trailing_zeros();
    (b < depth).then_some(b)
}

/// The tag bits themselves (`struct sbitmap`): which tags are in use, and
/// the allocation hint. Which bits are taken matters only to a shallow
/// allocation (a scheduler's `limit_depth`), which may use just the low
/// bits of each word: tags held by unlimited allocations there block it.
///
/// Simplified: one CPU, so one `alloc_hint`, starting at 0 (the kernel
/// draws each CPU's at random); clears are immediate (the kernel defers
/// them to the word's next failed search, which finds the same bits).
#[derive(Clone, Debug)]
pub struct TagBitmap {
    words: Vec<u64>,
    shift: u32,
    depth: u32,
    alloc_hint: u32,
    /// Bits set. Not in the kernel (`sbitmap_weight` counts the words):
    /// with more submitters than tags every submitter's first try, and
    /// most woken sleepers' retry, meets a full bitmap, and this count
    /// ends that search before it walks the words.
    used: u32,
}

impl TagBitmap {
    pub fn new(depth: u32) -> TagBitmap {
        let shift = calculate_shift(depth);
        let nr = (depth as usize).div_ceil(1usize << shift);
        TagBitmap {
            words: vec![0; nr],
            shift,
            depth,
            alloc_hint: 0,
            used: 0,
        }
    }

    /// `__map_depth`: the bits of word `i` (the last one may be partial).
    fn map_depth(&self, i: usize) -> u32 {
        let per = 1u32 << self.shift;
        if i + 1 == self.words.len() {
            self.depth - (i as u32) * per
        } else {
            per
        }
    }

    /// `__sbitmap_get_word`: the first clear bit below `depth` from `hint`,
    /// wrapping to 0 once when `wrap` and the hint is not already 0.
    fn get_word(&mut self, i: usize, depth: u32, mut hint: u32, wrap: bool) -> Option<u32> {
        let wrap = wrap && hint != 0;
        loop {
            match find_next_zero_bit(self.words[i], depth, hint) {
                Some(b) => {
                    self.words[i] |= 1u64 << b;
                    self.used += 1;
                    return Some(b);
                }
                None if wrap && hint != 0 => hint = 0,
                None => return None,
            }
        }
    }

    /// `sbitmap_get` (`shallow` None) or `sbitmap_get_shallow`: a free tag
    /// from the hint's word on, words in turn; a shallow search looks at
    /// the low `shallow` bits of each word only, from the hint's bit.
    pub fn get(&mut self, shallow: Option<u32>) -> Option<u32> {
        if self.depth == 0 {
            return None;
        }
        if self.used >= self.depth {
            // every word would be searched in vain: the outcome of the
            // walk below when it finds nothing
            self.alloc_hint = 0;
            return None;
        }
        let hint = self.alloc_hint;
        let mut index = (hint >> self.shift) as usize;
        let mut bit = match shallow {
            Some(_) => hint & ((1u32 << self.shift) - 1),
            None => 0, // not round-robin: each word from its start
        };
        let mut found = None;
        for _ in 0..self.words.len() {
            let depth = match shallow {
                Some(d) => self.map_depth(index).min(d),
                None => self.map_depth(index),
            };
            if let Some(b) = self.get_word(index, depth, bit, true) {
                found = Some(((index as u32) << self.shift) + b);
                break;
            }
            bit = 0;
            index = (index + 1) % self.words.len();
        }
        // `update_alloc_hint_after_get`
        match found {
            None => self.alloc_hint = 0,
            Some(nr) if nr == hint => {
                self.alloc_hint = if nr + 1 >= self.depth.saturating_sub(1) {
                    0
                } else {
                    nr + 1
                };
            }
            Some(_) => {}
        }
        found
    }

    /// `sbitmap_queue_clear`: the tag is free again, and the freeing CPU's
    /// hint points at it (`sbitmap_update_cpu_hint`).
    pub fn put(&mut self, tag: u32) {
        let (i, b) = (
            (tag >> self.shift) as usize,
            tag & ((1u32 << self.shift) - 1),
        );
        if let Some(w) = self.words.get_mut(i) {
            if *w & (1u64 << b) != 0 {
                self.used -= 1;
            }
            *w &= !(1u64 << b);
        }
        if tag < self.depth {
            self.alloc_hint = tag;
        }
    }

    /// Tags in use.
    pub fn weight(&self) -> u32 {
        debug_assert_eq!(
            self.used,
            self.words.iter().map(|w| w.count_ones()).sum::<u32>()
        );
        self.used
    }
}

/// A sleeper on a tag set's wait queues (blk-mq's allocation in
/// `blk_mq_get_tag`): the bio that waits, and the shallow depth its
/// allocation was given (0: the whole bitmap, as the kernel's
/// `data->shallow_depth`), which it keeps until it gets a tag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TagSleeper {
    pub bio: crate::block::bio::BioId,
    pub shallow_depth: u32,
}

/// The sleepers of one tag set and its wake-up counters.
#[derive(Clone, Debug)]
pub struct TagWaiters<T> {
    ws: [VecDeque<T>; SBQ_WAIT_QUEUES],
    /// `hctx->wait_index`: the wait queue the next sleeper joins.
    wait_index: usize,
    /// `sbq->wake_index`: where the next wake-up starts looking.
    wake_index: usize,
    /// `sbq->completion_cnt`, `sbq->wakeup_cnt`.
    completion_cnt: u64,
    wakeup_cnt: u64,
    wake_batch: u32,
    sleeping: usize,
}

impl<T: Copy> TagWaiters<T> {
    pub fn new(depth: u32, min_shallow_depth: u32) -> TagWaiters<T> {
        TagWaiters {
            ws: Default::default(),
            wait_index: 0,
            wake_index: 0,
            completion_cnt: 0,
            wakeup_cnt: 0,
            wake_batch: calc_wake_batch(depth, min_shallow_depth),
            sleeping: 0,
        }
    }

    pub fn wake_batch(&self) -> u32 {
        self.wake_batch
    }

    /// Sleepers (`ws_active`).
    pub fn len(&self) -> usize {
        self.sleeping
    }

    pub fn is_empty(&self) -> bool {
        self.sleeping == 0
    }

    /// `sbitmap_prepare_to_wait` on `bt_wait_ptr`'s queue: `w` found no tag
    /// and sleeps at the tail of the next wait queue in turn.
    pub fn sleep(&mut self, w: T) {
        self.ws[self.wait_index].push_back(w);
        self.wait_index = (self.wait_index + 1) % SBQ_WAIT_QUEUES;
        self.sleeping += 1;
    }

    /// `sbitmap_queue_wake_up(sbq, nr)`: `nr` tags were freed. Appends to
    /// `woken` the sleepers this wakes, in the order they wake; each must
    /// try for a tag again and `sleep` if it finds none. One call wakes at
    /// most one batch (blk-mq frees a tag per call, `sbitmap_queue_clear`).
    /// Inlined: on every completion, and nearly always with nobody asleep.
    #[inline]
    pub fn freed(&mut self, nr: u32, woken: &mut Vec<T>) {
        if self.sleeping == 0 {
            // nobody waits: the free is not counted
            return;
        }
        self.completion_cnt += nr as u64;
        if self.completion_cnt - self.wakeup_cnt >= self.wake_batch as u64 {
            self.wakeup_cnt += self.wake_batch as u64;
            self.wake_up(self.wake_batch as usize, woken);
        }
    }

    /// `__sbitmap_queue_wake_up`: the first non-empty wait queue from
    /// `wake_index` on wakes up to `nr` sleepers; the index moves past it.
    fn wake_up(&mut self, nr: usize, woken: &mut Vec<T>) {
        for _ in 0..SBQ_WAIT_QUEUES {
            let i = self.wake_index;
            self.wake_index = (i + 1) % SBQ_WAIT_QUEUES;
            if !self.ws[i].is_empty() {
                let n = nr.min(self.ws[i].len());
                woken.extend(self.ws[i].drain(..n));
                self.sleeping -= n;
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wake_batch_follows_the_depth_and_the_shallow_limit() {
        // no shallow limit (no scheduler: the driver tags): depth / 8, 1..8
        assert_eq!(calc_wake_batch(128, NO_SHALLOW_LIMIT), 8);
        assert_eq!(calc_wake_batch(64, NO_SHALLOW_LIMIT), 8);
        assert_eq!(calc_wake_batch(32, NO_SHALLOW_LIMIT), 4);
        assert_eq!(calc_wake_batch(8, NO_SHALLOW_LIMIT), 1);
        assert_eq!(calc_wake_batch(1, NO_SHALLOW_LIMIT), 1);
        // mq-deadline and bfq: one tag per word
        assert_eq!(calculate_shift(256), 6);
        assert_eq!(calc_wake_batch(256, 1), 1); // 4 words
        assert_eq!(calculate_shift(64), 4);
        assert_eq!(calc_wake_batch(64, 1), 1);
        assert_eq!(calc_wake_batch(2048, 1), 4); // 32 words
                                                 // a partial word counts as one
        assert_eq!(calculate_shift(100), 4);
        assert_eq!(calc_wake_batch(100, NO_SHALLOW_LIMIT), 8);
        // shallow allocations: 256 tags in 4 words of 64
        assert_eq!(shallow_capacity(256, 48), 192);
        assert_eq!(shallow_capacity(256, 64), 256);
        assert_eq!(shallow_capacity(256, 1000), 256);
        // 100 tags: 6 words of 16 and one of 4
        assert_eq!(shallow_capacity(100, 8), 6 * 8 + 4);
    }

    #[test]
    fn next_zero_bit_masks_as_a_scan_would() {
        for word in [0u64, 1, 0b1011, !0, !0 >> 1, 0x8000_0000_0000_0000, 0xF0F0] {
            for depth in [1u32, 4, 16, 63, 64] {
                for from in 0..=depth {
                    let scan = (from..depth).find(|&b| word & (1u64 << b) == 0);
                    assert_eq!(
                        find_next_zero_bit(word, depth, from),
                        scan,
                        "{word:#x} {depth} {from}"
                    );
                }
            }
        }
    }

    #[test]
    fn shallow_allocations_use_the_low_bits_of_each_word() {
        // 64 tags: 4 words of 16
        let mut t = TagBitmap::new(64);
        // unlimited allocations fill each word from its start
        let all: Vec<u32> = (0..64).map(|_| t.get(None).unwrap()).collect();
        assert_eq!(all, (0..64).collect::<Vec<u32>>());
        assert_eq!(t.get(None), None);
        // free tag 20 (word 1, bit 4) and tag 3 (word 0, bit 3)
        t.put(20);
        t.put(3);
        // a shallow depth of 4 bits per word: bit 3 of word 0 is allowed
        assert_eq!(t.get(Some(4)), Some(3));
        // bit 4 of word 1 is above the shallow depth: no tag for it
        assert_eq!(t.get(Some(4)), None);
        assert_eq!(t.get(None), Some(20));
        assert_eq!(t.weight(), 64);
        // an empty map: a shallow allocation gets at most 4 per word
        let mut t = TagBitmap::new(64);
        let mut got = Vec::new();
        while let Some(n) = t.get(Some(4)) {
            got.push(n);
        }
        assert_eq!(got.len(), 16);
        assert!(got.iter().all(|n| n % 16 < 4), "{got:?}");
        assert_eq!(shallow_capacity(64, 4), 16);
    }

    /// The count of bits set follows every get and put (a put of a free
    /// tag too), and a full bitmap refuses at once, as the walk would:
    /// nothing found, the hint back at 0.
    #[test]
    fn the_used_count_matches_the_bits() {
        let mut t = TagBitmap::new(100); // 6 words of 16 and one of 4
        let mut x: u64 = 12345;
        for step in 0..20_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let r = (x >> 33) as u32;
            if r % 3 == 0 {
                t.put(r % 110); // sometimes free, sometimes out of range
            } else {
                let shallow = (r % 5 == 0).then_some(1 + r % 16);
                t.get(shallow);
            }
            let bits: u32 = t.words.iter().map(|w| w.count_ones()).sum();
            assert_eq!(t.used, bits, "step {step}");
        }
        while t.get(None).is_some() {}
        assert_eq!(t.used, 100);
        t.alloc_hint = 37;
        assert_eq!(t.get(Some(2)), None);
        assert_eq!(t.alloc_hint, 0);
    }

    #[test]
    fn every_wake_batch_frees_wake_one_queues_sleepers() {
        let mut t = TagWaiters::new(32, NO_SHALLOW_LIMIT);
        assert_eq!(t.wake_batch(), 4);
        // frees while nobody sleeps are not counted
        let mut woken = Vec::new();
        t.freed(3, &mut woken);
        assert!(woken.is_empty());
        // 16 sleepers over the 8 queues: queue 0 holds 0 and 8, queue 1 1 and 9 …
        for w in 0..16u32 {
            t.sleep(w);
        }
        t.freed(3, &mut woken);
        assert!(woken.is_empty(), "3 frees of a batch of 4 wake nobody");
        t.freed(1, &mut woken);
        assert_eq!(woken, vec![0, 8], "the first queue's sleepers, up to 4");
        woken.clear();
        t.freed(4, &mut woken);
        assert_eq!(woken, vec![1, 9], "then the next queue");
        woken.clear();
        // 8 frees in one call wake one batch; the next free wakes the next
        t.freed(8, &mut woken);
        assert_eq!(woken, vec![2, 10]);
        t.freed(1, &mut woken);
        assert_eq!(woken, vec![2, 10, 3, 11]);
        assert_eq!(t.len(), 8);
    }

    #[test]
    fn a_sleeper_that_wakes_without_a_tag_goes_to_the_back() {
        let mut t = TagWaiters::new(8, NO_SHALLOW_LIMIT);
        assert_eq!(t.wake_batch(), 1);
        for w in 0..3u32 {
            t.sleep(w); // queues 0, 1, 2
        }
        let mut woken = Vec::new();
        t.freed(1, &mut woken);
        assert_eq!(woken, vec![0]);
        // a newcomer took the tag first: 0 sleeps again, on queue 3
        t.sleep(0);
        woken.clear();
        for _ in 0..3 {
            t.freed(1, &mut woken);
        }
        assert_eq!(woken, vec![1, 2, 0]);
        assert!(t.is_empty());
        // empty queues are skipped; counting stops while nobody sleeps
        woken.clear();
        t.freed(5, &mut woken);
        assert!(woken.is_empty());
    }
}
