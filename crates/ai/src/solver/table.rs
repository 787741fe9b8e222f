//! The solver's transposition table: bounds on the gain of positions, one
//! table per process, shared by every solver of one rule set.
//!
//! An entry is one 64-bit word, so entries are written and read whole by
//! any number of threads without locks. A position's key is the exact rank
//! of its pits ([`crate::rank`]), scrambled by a bijection of its 47 bits:
//! the top bits choose the bucket and the rest are stored, so an entry
//! names its position exactly and a probe can never answer for another.
//! A bucket is eight words, one cache line: a probe is one miss to memory.
//! Every stored bound is true whoever wrote it, so a lost race loses only
//! what one thread knew.

use std::sync::atomic::{AtomicU64, Ordering};

use mancala_rules::{KalahEnd, KalahOptions};
use zerocopy::FromZeros;

use crate::rank::RANK_BITS;

/// Words a bucket holds: 64 bytes.
const WAYS: usize = 8;

/// An odd multiplier: multiplying by it permutes the ranks modulo
/// 2^[`RANK_BITS`], spreading neighbouring ranks over the buckets.
const SCRAMBLE: u64 = 0x9e37_79b9_7f4a_7c15;

const RANK_MASK: u64 = (1 << RANK_BITS) - 1;

/// Bits of a word below the stored key: lower and upper bound (a byte
/// each), the best move's pit (3 bits) and log2 of the work (5 bits).
const DATA_BITS: u32 = 24;

/// The fewest buckets: a tag of more than `64 - DATA_BITS` bits would not fit.
const MIN_BUCKET_BITS: u32 = RANK_BITS + 1 - (64 - DATA_BITS);

/// What the table knows of a position: `lower <= gain <= upper`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Bounds {
    pub(crate) lower: i32,
    pub(crate) upper: i32,
    /// The pit of the best move found, 0 when none.
    pub(crate) best: u8,
}

/// The rules a table's gains hold for. A gain depends on the pits alone,
/// so boards that differ only in their stones a pit share a table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Rules {
    pits: u8,
    empty_capture: bool,
    end: KalahEnd,
}

impl Rules {
    fn of(options: KalahOptions) -> Rules {
        Rules {
            pits: options.pits(),
            empty_capture: options.empty_capture(),
            end: options.end(),
        }
    }
}

/// A lock-free table of gain bounds for one rule set.
#[derive(Debug)]
pub struct SolverTable {
    rules: Rules,
    /// Zeroed memory, so that the system hands it out page by page as it is
    /// touched rather than all at the start.
    words: Box<[AtomicU64]>,
    /// The first word of the first bucket: buckets start on a cache line.
    first: usize,
    bucket_bits: u32,
    /// The scrambled rank's bits below the bucket's: `RANK_BITS -
    /// bucket_bits`, kept as a whole word. Computed on the fly it was a byte
    /// register merged into the one the last bucket load wrote, which made
    /// each touch wait for the one before and the misses queue up instead of
    /// overlapping.
    low_bits: u64,
}

impl SolverTable {
    /// The smallest table: 256 buckets, 16 KiB.
    pub const MIN_BYTES: usize = (1 << MIN_BUCKET_BITS) * WAYS * 8;

    /// A table for boards with `options`' rules taking about `bytes` bytes:
    /// the largest power of two of buckets that fits, and at least
    /// [`SolverTable::MIN_BYTES`], below which a word could not hold its tag.
    pub fn new(options: KalahOptions, bytes: usize) -> SolverTable {
        let wanted = (bytes / (WAYS * 8)).max(1);
        let bucket_bits = (usize::BITS - 1 - wanted.leading_zeros()).max(MIN_BUCKET_BITS);
        let buckets = 1usize << bucket_bits;
        // One bucket more than needed, to start the first on a cache line.
        let len = (buckets + 1) * WAYS;
        let words = <[AtomicU64]>::new_box_zeroed_with_elems(len)
            .unwrap_or_else(|_| std::alloc::handle_alloc_error(layout(len)));
        let misalignment = (words.as_ptr() as usize / 8) % WAYS;
        SolverTable {
            rules: Rules::of(options),
            words,
            first: (WAYS - misalignment) % WAYS,
            bucket_bits,
            low_bits: u64::from(RANK_BITS - bucket_bits),
        }
    }

    /// Whether the table holds gains for boards with `options`.
    pub fn covers(&self, options: KalahOptions) -> bool {
        Rules::of(options) == self.rules
    }

    /// Bytes of its buckets.
    pub fn bytes(&self) -> usize {
        (1 << self.bucket_bits) * WAYS * 8
    }

    /// Forgets everything.
    pub fn clear(&self) {
        for word in &self.words[..] {
            word.store(0, Ordering::Relaxed);
        }
    }

    /// The bucket of `rank` and the tag its words carry: the scrambled
    /// rank's bits below the bucket's, and a bit above them so that a used
    /// word is never zero.
    #[inline]
    fn locate(&self, rank: u64) -> (usize, u64) {
        let scrambled = rank.wrapping_mul(SCRAMBLE) & RANK_MASK;
        let low_bits = self.low_bits;
        let bucket = (scrambled >> low_bits) as usize;
        let tag = scrambled & ((1 << low_bits) - 1) | 1 << low_bits;
        (self.first + bucket * WAYS, tag)
    }

    /// Starts fetching the bucket of `rank` into the cache: the first of its
    /// words, to be folded into a value the caller keeps (so that the load
    /// is not optimised away). Touching every bucket a search is about to
    /// read first lets the misses overlap.
    #[inline]
    pub(crate) fn touch(&self, rank: u64) -> u64 {
        let (at, _) = self.locate(rank);
        self.words[at].load(Ordering::Relaxed)
    }

    #[cfg(test)]
    fn probe(&self, rank: u64) -> Option<Bounds> {
        self.find(rank).0
    }

    /// Records `lower <= gain <= upper` for the position of `rank`, with
    /// its best pit (0: none) and log2 of the nodes it took.
    #[cfg(test)]
    pub(crate) fn store(&self, rank: u64, bounds: Bounds, work: u8) {
        let (_, place) = self.find(rank);
        self.put(place, bounds, work);
    }

    /// What is known of the position of `rank`, and the word its next
    /// bounds go to: its own, or the one that cost least work.
    #[inline(always)]
    pub(crate) fn find(&self, rank: u64) -> (Option<Bounds>, Place) {
        let (at, tag) = self.locate(rank);
        let mut victim = Place {
            word: at,
            tag,
            old: 0,
        };
        let mut cheapest = u8::MAX;
        for (index, word) in self.words[at..at + WAYS].iter().enumerate() {
            let old = word.load(Ordering::Relaxed);
            let place = Place {
                word: at + index,
                tag,
                old,
            };
            if old >> DATA_BITS == tag {
                return (Some(unpack(old)), place);
            }
            let cost = if old == 0 { 0 } else { work_of(old) };
            if cost < cheapest {
                (victim, cheapest) = (place, cost);
            }
        }
        (None, victim)
    }

    /// Records `bounds` for the position [`SolverTable::find`] gave `place`
    /// for, with log2 of the nodes it took. The word is written without
    /// being read again: a search's bucket has long left the cache when it
    /// ends. If the position was held, each bound keeps the narrower of the
    /// two; whatever another search wrote to the word since is lost.
    #[inline]
    pub(crate) fn put(&self, place: Place, bounds: Bounds, work: u8) {
        let word = if place.old >> DATA_BITS == place.tag {
            let known = unpack(place.old);
            let merged = Bounds {
                lower: known.lower.max(bounds.lower),
                upper: known.upper.min(bounds.upper),
                best: if bounds.best != 0 {
                    bounds.best
                } else {
                    known.best
                },
            };
            pack(place.tag, merged, work.max(work_of(place.old)))
        } else {
            pack(place.tag, bounds, work)
        };
        self.words[place.word].store(word, Ordering::Relaxed);
    }
}

/// Where a position's bounds are to be written, and what the word held.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Place {
    word: usize,
    tag: u64,
    old: u64,
}

fn layout(len: usize) -> std::alloc::Layout {
    std::alloc::Layout::array::<AtomicU64>(len).unwrap_or(std::alloc::Layout::new::<AtomicU64>())
}

#[inline]
fn pack(tag: u64, bounds: Bounds, work: u8) -> u64 {
    tag << DATA_BITS
        | u64::from(bounds.lower as i8 as u8)
        | u64::from(bounds.upper as i8 as u8) << 8
        | u64::from(bounds.best & 7) << 16
        | u64::from(work.min(31)) << 19
}

#[inline]
fn unpack(word: u64) -> Bounds {
    Bounds {
        lower: i32::from(word as u8 as i8),
        upper: i32::from((word >> 8) as u8 as i8),
        best: (word >> 16) as u8 & 7,
    }
}

#[inline]
fn work_of(word: u64) -> u8 {
    (word >> 19) as u8 & 31
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bounds(lower: i32, upper: i32, best: u8) -> Bounds {
        Bounds { lower, upper, best }
    }

    #[test]
    fn a_stored_position_is_found_and_narrowed_and_no_other_answers_for_it() {
        let table = SolverTable::new(KalahOptions::default(), 1 << 16);
        table.store(12_345, bounds(-3, 40, 2), 5);
        assert_eq!(table.probe(12_345), Some(bounds(-3, 40, 2)));
        table.store(12_345, bounds(-10, 7, 0), 3);
        assert_eq!(table.probe(12_345), Some(bounds(-3, 7, 2)));
        // Ranks that share the bucket but are other positions.
        for other in [0, 1, 12_344, 12_346, (1 << RANK_BITS) - 1] {
            assert_eq!(table.probe(other), None, "{other}");
        }
        table.clear();
        assert_eq!(table.probe(12_345), None);
    }

    #[test]
    fn a_full_bucket_gives_up_its_cheapest_word() {
        let table = SolverTable::new(KalahOptions::default(), 1);
        assert_eq!(table.bytes(), SolverTable::MIN_BYTES);
        // Nine positions of one bucket for its eight words: the one of least
        // work goes.
        let first = table.locate(0).0;
        let ranks: Vec<u64> = (0..)
            .filter(|&rank| table.locate(rank).0 == first)
            .take(9)
            .collect();
        for (index, &rank) in ranks.iter().enumerate() {
            let work = if index == 4 { 1 } else { 10 + index as u8 };
            table.store(rank, bounds(-(index as i32), index as i32, 1), work);
        }
        for (index, &rank) in ranks.iter().enumerate() {
            let expected = (index != 4).then(|| bounds(-(index as i32), index as i32, 1));
            assert_eq!(table.probe(rank), expected, "{index}");
        }
    }

    #[test]
    fn buckets_start_on_a_cache_line_and_rules_are_kept_apart() {
        let table = SolverTable::new(KalahOptions::default(), 1 << 20);
        assert_eq!(table.words[table.first..].as_ptr() as usize % 64, 0);
        assert!(table.covers(KalahOptions::new(6, 6).unwrap()));
        assert!(!table.covers(KalahOptions::default().with_empty_capture(true)));
        assert!(!table.covers(KalahOptions::new(4, 4).unwrap()));
    }
}
