//! fio's random map (`lib/axmap.c`): which blocks of a job's region the
//! current pass has covered.

use super::axmap_table::{BitTable, PlaceClaim, CHUNK_BITS};
use crate::sim::prefetch::read as prefetch_read;

/// One level of the random map, 64 bits per word. A level larger than
/// `FLAT_MAX` words is cut into chunks of `CHUNK_WORDS` words, each kept as a
/// table of its set bits (axmap_table.rs, 2 bytes a slot) until the table
/// would outgrow half the chunk's bitmap: a job that touched few blocks of a
/// large device pays for what it touched, one that covered its region pays
/// fio's one bit per block. The representation never changes an answer.
enum Words {
    Flat(Vec<u64>),
    Chunked(Vec<Chunk>, usize),
}

enum Chunk {
    Table(BitTable),
    Bits(Box<[u64]>),
}

/// Levels up to this many words (64 KiB) are plain vectors.
const FLAT_MAX: usize = 1 << 13;
/// 32 Ki bits per chunk, so that a bit's place in its chunk fits 15 bits.
const CHUNK_WORDS: usize = CHUNK_BITS as usize / 64;
/// A chunk's table turns into a bitmap rather than grow past this many slots
/// (2 KiB of 2-byte slots, half the chunk's 4 KiB bitmap).
const CHUNK_TABLE_MAX_SLOTS: usize = CHUNK_WORDS * size_of::<u64>() / 2 / size_of::<u16>();

/// Set the bits `x` of `word`; returns the word as it was.
fn or_word(word: &mut u64, x: u64) -> u64 {
    let old = *word;
    *word |= x;
    old
}

impl Words {
    fn new(len: usize, flat: bool) -> Words {
        if flat || len <= FLAT_MAX {
            Words::Flat(vec![0; len])
        } else {
            let chunks = len.div_ceil(CHUNK_WORDS);
            Words::Chunked(
                (0..chunks).map(|_| Chunk::Table(BitTable::new())).collect(),
                len,
            )
        }
    }

    fn len(&self) -> usize {
        match self {
            Words::Flat(v) => v.len(),
            Words::Chunked(_, len) => *len,
        }
    }

    fn get(&self, w: usize) -> u64 {
        match self {
            Words::Flat(v) => v[w],
            Words::Chunked(chunks, _) => match &chunks[w / CHUNK_WORDS] {
                Chunk::Bits(b) => b[w % CHUNK_WORDS],
                Chunk::Table(t) => t.word((w % CHUNK_WORDS) as u32 * 64),
            },
        }
    }

    /// Ask the CPU to start loading what `get(w)` will read (the word, or
    /// the slots of the chunk's table where `w`'s bits would be), without
    /// waiting for it. A hint only: nothing changes whatever `w` is.
    fn prefetch(&self, w: usize) {
        let p: *const u8 = match self {
            // the word itself is the table's entry
            Words::Flat(_) => return self.prefetch_entry(w),
            Words::Chunked(chunks, _) => match chunks.get(w / CHUNK_WORDS) {
                Some(Chunk::Bits(b)) => (&b[w % CHUNK_WORDS] as *const u64).cast(),
                Some(Chunk::Table(t)) => match t.word_slot((w % CHUNK_WORDS) as u32 * 64) {
                    Some(p) => p.cast(),
                    None => return,
                },
                None => return,
            },
        };
        prefetch_read(p);
    }

    /// The first stage of `prefetch`, one step earlier: start loading what
    /// `prefetch(w)` itself reads (a chunk's entry in the chunk table: its
    /// list's length and address), from the table's address alone, so that
    /// this does not wait for memory either. A hint only.
    fn prefetch_entry(&self, w: usize) {
        let p: *const u8 = match self {
            Words::Flat(v) => match v.get(w) {
                Some(x) => (x as *const u64).cast(),
                None => return,
            },
            Words::Chunked(chunks, _) => match chunks.get(w / CHUNK_WORDS) {
                Some(c) => (c as *const Chunk).cast(),
                None => return,
            },
        };
        prefetch_read(p);
    }

    /// Set the bits `x` in word `w` and return the word as it was (bits
    /// are cleared only by `clear`): one look for the word in a chunk's
    /// table where a `get` and a set would take two.
    fn fetch_or(&mut self, w: usize, x: u64) -> u64 {
        match self {
            Words::Flat(v) => or_word(&mut v[w], x),
            Words::Chunked(chunks, _) => {
                let c = &mut chunks[w / CHUNK_WORDS];
                match c {
                    Chunk::Bits(b) => or_word(&mut b[w % CHUNK_WORDS], x),
                    Chunk::Table(t) => {
                        let lo = (w % CHUNK_WORDS) as u32 * 64;
                        let (old, slot) = t.word_and_slot(lo);
                        let mut add = x & !old;
                        // one new place, where the scan ended (a random
                        // job's I/O): no second probe
                        if let Some(slot) = slot.filter(|_| add.is_power_of_two() && !t.full()) {
                            t.insert_at(lo + add.trailing_zeros(), slot);
                            return old;
                        }
                        while add != 0 {
                            if t.full() {
                                if t.slots() >= CHUNK_TABLE_MAX_SLOTS {
                                    let mut b = vec![0u64; CHUNK_WORDS].into_boxed_slice();
                                    for v in t.places() {
                                        b[v as usize / 64] |= 1 << (v % 64);
                                    }
                                    b[w % CHUNK_WORDS] |= add;
                                    *c = Chunk::Bits(b);
                                    return old;
                                }
                                *t = t.grown();
                            }
                            t.insert(lo + add.trailing_zeros());
                            add &= add - 1;
                        }
                        old
                    }
                }
            }
        }
    }

    fn clear(&mut self) {
        match self {
            Words::Flat(v) => v.fill(0),
            Words::Chunked(chunks, _) => {
                for c in chunks {
                    match c {
                        Chunk::Table(t) => t.clear(),
                        Chunk::Bits(b) => b.fill(0),
                    }
                }
            }
        }
    }
}

/// fio's random map (`lib/axmap.c`, one per file, here one per job's region):
/// a bit per `rw_min_bs` block, set once an I/O of the current pass covered
/// the block, so that a random job reaches every block once per pass. Above
/// level 0, each level has a bit per word of the level below, set when that
/// word is full, up to a single word: finding a free block is a few word reads
/// however full the map. Bits past the last block ("tail bits" of the last
/// word of a level) stay clear, as in fio, and that matters to the searches.
pub(crate) struct RandomMap {
    nbits: u64,
    /// Level-0 bits set: the pass is over when it reaches `nbits`.
    used: u64,
    levels: Vec<Words>,
}

impl RandomMap {
    /// `axmap_new`: level sizes shrink by 64 until one word is left.
    pub(crate) fn new(nbits: u64) -> RandomMap {
        Self::build(nbits, false)
    }

    fn build(nbits: u64, dense: bool) -> RandomMap {
        let mut levels = Vec::new();
        let mut n = nbits.max(1);
        loop {
            let words = n.div_ceil(64);
            levels.push(Words::new(words as usize, dense));
            if words <= 1 {
                break;
            }
            n = words;
        }
        RandomMap {
            nbits,
            used: 0,
            levels,
        }
    }

    /// `axmap_reset` (from `fio_file_reset`): a new pass.
    pub(crate) fn reset(&mut self) {
        for l in &mut self.levels {
            l.clear();
        }
        self.used = 0;
    }

    /// `axmap_isset`, the negation of io_u.c's `random_map_free`.
    pub(crate) fn is_used(&self, b: u64) -> bool {
        b < self.nbits && self.levels[0].get((b >> 6) as usize) >> (b & 63) & 1 == 1
    }

    /// Prefetch what `is_used(b)` and `mark(b, _)` will read first (level 0
    /// and level 1 around `b`). Not in fio: the map of a large region misses
    /// the cache at nearly every I/O, and the job can tell its next blocks
    /// several I/Os ahead (map_ahead.rs), so the miss overlaps the
    /// simulation of the I/Os in between. No effect on any answer.
    pub(crate) fn prefetch(&self, b: u64) {
        self.hint_levels(b, Words::prefetch);
    }

    /// The first stage of [`prefetch`](Self::prefetch) for a block drawn
    /// some I/Os later: `prefetch(b)` reads the chunk tables of levels 0 and
    /// 1 to find the table where `b`'s bits are, and those reads miss the
    /// cache too on a large map; started earlier, they are in the cache when
    /// `prefetch(b)` runs. No effect on any answer.
    pub(crate) fn prefetch_entry(&self, b: u64) {
        self.hint_levels(b, Words::prefetch_entry);
    }

    /// `hint` at levels 0 and 1 for the words that hold block `b`'s bits.
    #[inline]
    fn hint_levels(&self, b: u64, hint: fn(&Words, usize)) {
        if b >= self.nbits {
            return;
        }
        hint(&self.levels[0], (b >> 6) as usize);
        if let Some(l1) = self.levels.get(1) {
            hint(l1, (b >> 12) as usize);
        }
    }

    /// `axmap_next_free`: where a random draw that hit a used block goes.
    ///
    /// fio does not return the first free block after `b`. Going up from
    /// level 0, it takes the first word containing `b` (at that level) with a
    /// clear bit at or above position `(b + 1) % 64` — the same position at
    /// every level, `b`'s own position in its level-0 word (so a `b` at the
    /// top of its word accepts any clear bit) — and returns the first free
    /// block under that word, which can lie before `b`. Tail bits count as
    /// clear: a search that ends in them, or a walk that finds no such word,
    /// falls back to the map's first free block, i.e. wraps to the region's
    /// start. None only when every block is used.
    pub(crate) fn next_free(&self, b: u64) -> Option<u64> {
        if self.used >= self.nbits {
            return None;
        }
        let above = !0u64 << ((b + 1) & 63);
        for (l, words) in self.levels.iter().enumerate() {
            let w = (b >> (6 * (l as u64 + 1))) as usize;
            if !words.get(w) & above != 0 {
                return self.first_free_under(l, w).or_else(|| self.first_free());
            }
        }
        self.first_free()
    }

    /// `axmap_first_free`: the lowest free block (the top level is one word).
    fn first_free(&self) -> Option<u64> {
        if self.used >= self.nbits {
            return None;
        }
        self.first_free_under(self.levels.len() - 1, 0)
    }

    /// `axmap_find_first_free`: from word `w` of `level`, follow the first
    /// clear bit down to level 0. A level whose words from the index on are
    /// all full leaves the index as it was (fio's rule; unreachable while the
    /// summary bits are consistent and the map not full). None when the walk
    /// ends in tail bits.
    fn first_free_under(&self, level: usize, w: usize) -> Option<u64> {
        let mut idx = w;
        let mut found = None;
        for words in self.levels[..=level].iter().rev() {
            if idx >= words.len() {
                return None;
            }
            if let Some(j) = (idx..words.len()).find(|&j| words.get(j) != !0) {
                idx = j * 64 + (!words.get(j)).trailing_zeros() as usize;
                found = Some(idx as u64);
            }
        }
        found.filter(|&f| f < self.nbits)
    }

    /// `mark(b, 1)` if block `b` is free (then true), else nothing
    /// (false): fio's `random_map_free` test and the mark of a one-block
    /// I/O, with one look at `b`'s word.
    ///
    /// A block of a chunk kept as a table is looked up and stored by its
    /// own probe (`BitTable::claim`), without the word's scan: the common
    /// case of a random job on a large region.
    #[inline]
    pub(crate) fn claim(&mut self, b: u64) -> bool {
        if b >= self.nbits {
            return false;
        }
        let w = (b >> 6) as usize;
        if let Words::Chunked(chunks, _) = &mut self.levels[0] {
            if let Chunk::Table(t) = &mut chunks[w / CHUNK_WORDS] {
                let lo = (w % CHUNK_WORDS) as u32 * 64;
                match t.claim(lo + (b & 63) as u32) {
                    PlaceClaim::Present => return false,
                    PlaceClaim::Stored { crowded } => {
                        self.used += 1;
                        if crowded && t.word(lo) == !0 {
                            self.mark_full_above(w);
                        }
                        return true;
                    }
                    PlaceClaim::Declined => {}
                }
            }
        }
        self.set_in_word(b, 1) == 1
    }

    /// `axmap_set_nr` as `mark_random_map` calls it for an I/O of `n` blocks
    /// from block `b` (which is free): returns how many blocks fio counts as
    /// marked, which bounds the I/O's length.
    ///
    /// Per level-0 word, fio sets every free bit of the I/O's range in that
    /// word, skipping used ones (so the marked blocks need not be contiguous),
    /// and counts them; it goes on to the next word only if the whole range in
    /// this word was free. One more rule of `__axmap_set`: when the count is
    /// short of the range but equals 64 minus the range's length (a range of
    /// more than 32 blocks), fio retries the range's rest, finds it all set,
    /// and adds the same count again.
    pub(crate) fn mark(&mut self, b: u64, n: u64) -> u64 {
        let (mut bit, mut left) = (b, n);
        let mut total = 0;
        while left > 0 && bit < self.nbits {
            let chunk = left.min(64 - (bit & 63)).min(self.nbits - bit);
            let set = self.set_in_word(bit, chunk);
            let counted = if set > 0 && set < chunk && set == 64 - chunk {
                2 * set
            } else {
                set
            };
            total += counted;
            if counted != chunk {
                break;
            }
            bit += chunk;
            left -= chunk;
        }
        total
    }

    /// `axmap_set_fn` at level 0 and up: set the free bits of `chunk` bits
    /// from `bit` (within one word); a word that becomes full sets its bit one
    /// level up, and so on. Returns how many bits it set.
    fn set_in_word(&mut self, bit: u64, chunk: u64) -> u64 {
        let w = (bit >> 6) as usize;
        let mask = if chunk >= 64 {
            !0
        } else {
            ((1u64 << chunk) - 1) << (bit & 63)
        };
        // setting bits already set changes nothing: the free ones are
        // those the old word did not have
        let old = self.levels[0].fetch_or(w, mask);
        let free = mask & !old;
        if free == 0 {
            return 0;
        }
        self.used += free.count_ones() as u64;
        if old | free == !0 {
            self.mark_full_above(w);
        }
        free.count_ones() as u64
    }

    /// Level-0 word `w` has just become full: set its bit one level up,
    /// and so on while a word up there becomes full too.
    fn mark_full_above(&mut self, w: usize) {
        let mut idx = w;
        for words in self.levels[1..].iter_mut() {
            let (pw, pb) = (idx >> 6, idx & 63);
            if words.fetch_or(pw, 1 << pb) | 1 << pb != !0 {
                break;
            }
            idx = pw;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two maps of the same size hold the same bits at levels 0 and 1.
    fn same_bits(a: &RandomMap, b: &RandomMap) {
        assert_eq!(a.used, b.used);
        for level in 0..2 {
            for w in 0..a.levels[level].len() {
                let (x, y) = (a.levels[level].get(w), b.levels[level].get(w));
                assert_eq!(x, y, "level {level} word {w}");
            }
        }
    }

    #[test]
    fn next_free_takes_the_first_free_block_of_a_group() {
        let mut m = RandomMap::new(1000);
        // word 0 used except blocks 2 and 10
        m.mark(0, 2);
        m.mark(3, 7);
        m.mark(11, 53);
        assert!(!m.is_used(2) && !m.is_used(10) && m.is_used(5));
        // a free block after 5 in its word: fio answers the word's first free
        assert_eq!(m.next_free(5), Some(2));
        // none after 12 in its word: the first free block of the 64 words
        // around it, here still in word 0
        assert_eq!(m.next_free(12), Some(2));
        m.mark(2, 1);
        assert_eq!(m.next_free(5), Some(10));
        m.mark(10, 1);
        assert_eq!(m.next_free(12), Some(64));
        // block 63 is at the top of its word: any free bit of the word counts
        m.mark(64, 1);
        assert_eq!(m.next_free(63), Some(65));
    }

    #[test]
    fn next_free_tests_every_level_at_the_blocks_own_position() {
        // 8192 blocks: two groups of 64 words. Group 1 is used except its
        // word 67 (blocks 4288..4352); group 0 is free.
        let mut m = RandomMap::new(8192);
        for w in (64..128).filter(|&w| w != 67) {
            m.mark(w * 64, 64);
        }
        // 4097 is at position 1 of word 64: word 67 (position 3 in the
        // level-1 word) is at or above 2, so group 1 answers
        assert_eq!(m.next_free(4097), Some(4288));
        // 4101 is at position 5: position 3 is below 6, so fio goes up a
        // level and answers the first free block of the whole map
        assert_eq!(m.next_free(4101), Some(0));
    }

    #[test]
    fn next_free_wraps_to_the_first_free_block() {
        let mut m = RandomMap::new(100);
        m.mark(0, 3);
        m.mark(4, 60);
        m.mark(64, 36);
        // only block 3 is free; from block 90 the search ends in the last
        // word's tail bits and falls back to the map's first free block
        assert_eq!(m.next_free(90), Some(3));
        m.mark(3, 1);
        assert_eq!(m.next_free(90), None);
        m.reset();
        assert!(!m.is_used(90));
        assert_eq!(m.next_free(90), Some(64));
    }

    #[test]
    fn mark_skips_used_blocks_and_counts_like_fio() {
        let mut m = RandomMap::new(256);
        m.mark(6, 1);
        // a 3-block I/O at 5 with 6 used: 5 and 7 are marked, 2 counted
        assert_eq!(m.mark(5, 3), 2);
        assert!(m.is_used(7));
        // across words: all of word 1's part free, then a word 2 part with a
        // used block stops the count there
        m.mark(130, 1);
        assert_eq!(m.mark(120, 12), 8 + 2 + 1);
        // __axmap_set's recount: 48 blocks from 16 with only 16..32 free
        // (so 16 = 64 - 48) count twice
        let mut m = RandomMap::new(256);
        assert_eq!(m.mark(32, 32), 32);
        assert_eq!(m.mark(16, 48), 32);
        assert_eq!(m.used, 48);
    }

    #[test]
    fn sparse_and_dense_maps_agree_until_full() {
        // 1 Mi blocks: 32 chunks of level-0 words start as tables of set
        // bits, then become bitmaps
        let n = 1 << 20;
        let mut sparse = RandomMap::new(n);
        let mut dense = RandomMap::build(n, true);
        let tables = |m: &RandomMap| match &m.levels[0] {
            Words::Chunked(c, _) => c.iter().filter(|c| matches!(c, Chunk::Table(_))).count(),
            Words::Flat(_) => 0,
        };
        assert_eq!(tables(&sparse), 32);
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for i in 0..n {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let r = (x >> 33) % n;
            let pick = |m: &RandomMap| {
                if m.is_used(r) {
                    m.next_free(r)
                } else {
                    Some(r)
                }
            };
            let b = pick(&sparse).unwrap_or_else(|| panic!("no free block at {i}"));
            assert_eq!(pick(&dense), Some(b));
            assert!(!sparse.is_used(b));
            assert_eq!(sparse.mark(b, 1), 1);
            assert_eq!(dense.mark(b, 1), 1);
        }
        assert_eq!(tables(&sparse), 0);
        assert_eq!(sparse.next_free(12345), None);
        assert!((0..n).all(|b| sparse.is_used(b)));
    }

    #[test]
    fn sparse_and_dense_maps_agree_on_multi_block_marks() {
        // marks of 1 to 80 blocks, so that one mark sets several bits of a
        // word's table at once, across words, over blocks partly used
        let n = 1 << 20;
        let mut sparse = RandomMap::new(n);
        let mut dense = RandomMap::build(n, true);
        // the marks go through tables (then through bitmaps as chunks fill)
        let tables = |m: &RandomMap| {
            let Words::Chunked(chunks, _) = &m.levels[0] else {
                panic!("a 1 Mi-block map is chunked");
            };
            chunks
                .iter()
                .filter(|c| matches!(c, Chunk::Table(_)))
                .count()
        };
        let mut x: u64 = 0x853c_49e6_748f_ea9b;
        for i in 0..40_000 {
            if i == 500 {
                assert!(tables(&sparse) > 0, "no chunk is a table");
            }
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let b = (x >> 33) % n;
            let len = 1 + (x >> 20) % 80;
            assert_eq!(sparse.mark(b, len), dense.mark(b, len), "mark({b}, {len})");
        }
        same_bits(&sparse, &dense);
    }

    /// The tables' own claim (one place's probe) against a dense map:
    /// random blocks and again, runs of neighbours that fill words (the
    /// crowded case, whose full word sets its bit one level up), through
    /// tables' growth past one home per word and into bitmaps.
    #[test]
    fn table_claims_agree_with_a_dense_map() {
        let n = 1 << 20;
        let mut sparse = RandomMap::new(n);
        let mut dense = RandomMap::build(n, true);
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        for i in 0..120_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // every fifth claim continues a run from block 64 * 5000
            let b = if i % 5 == 0 { 320_000 + i / 5 } else { x % n };
            assert_eq!(sparse.claim(b), dense.claim(b), "claim {i} of block {b}");
            if i % 7 == 3 {
                assert_eq!(sparse.claim(b), false, "a claimed block again");
            }
        }
        assert!(!sparse.claim(n));
        same_bits(&sparse, &dense);
        // the run filled words and set their bits one level up
        assert_eq!(sparse.levels[1].get(5000 / 64) >> (5000 % 64) & 1, 1);
    }

    #[test]
    fn claim_is_the_free_test_and_a_one_block_mark() {
        // flat and chunked (sparse) maps, the last block, one past it
        for n in [1000u64, 1 << 20] {
            let mut a = RandomMap::new(n);
            let mut b = RandomMap::new(n);
            for blk in [5u64, 5, 6, 64, 63, n - 1, n - 1, n] {
                let free = blk < n && !a.is_used(blk);
                let marked = if free { a.mark(blk, 1) } else { 0 };
                assert_eq!(b.claim(blk), free, "claim({blk}) in {n}");
                assert_eq!(marked, free as u64);
                assert_eq!(a.used, b.used);
            }
            // a claim that fills a word sets its bit one level up
            let mut c = RandomMap::new(n);
            c.mark(0, 63);
            assert!(c.claim(63));
            assert_eq!(c.levels[1].get(0) & 1, 1);
        }
    }
}
