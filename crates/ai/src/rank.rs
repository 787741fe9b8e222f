//! Dense ranks of Kalah pit configurations.
//!
//! The configurations of a board's pits, seen from the player to move, are
//! numbered densely: those with fewer stones first, then in stars-and-bars
//! order within a stone count. The rank is exact (no two configurations
//! share one) and small, under 2^47 even with 72 stones on twelve pits, so
//! it is both the index of an endgame table (every configuration with at
//! most `k` stones has a rank below [`Ranks::count`]`(k)`) and the key of
//! the solver's transposition table, which keeps only a few bits of it per
//! entry.
//!
//! A configuration of `s` stones in `n` places is a row of `s` stars and
//! `n - 1` bars; its rank within its stone count is the sum, over the bars,
//! of C(stars before the bar + bars before it, bars up to it). The stars
//! before each bar are the running sums of the pits, which one multiply
//! gives for all pits at once.

use mancala_rules::Kalah;

use crate::solver::Board;

/// Places on the largest board: twelve pits.
const MAX_PLACES: usize = 12;
/// Stones on the largest board: twelve pits of six.
const MAX_STONES: usize = 72;

/// Bits a rank needs on any board: C(72 + 12, 12) < 2^47.
pub(crate) const RANK_BITS: u32 = 47;

/// The tables that rank the configurations of one board size.
#[derive(Clone, Debug)]
pub(crate) struct Ranks {
    pits: usize,
    /// `bars[place][s]`: what the bar after place `place` adds when `s`
    /// stars come before it, C(s + place, place + 1).
    bars: Box<[[u64; MAX_STONES + 1]]>,
    /// `below[s]`: the configurations of fewer than `s` stones,
    /// C(s - 1 + places, places).
    below: Box<[u64]>,
}

/// C(n, k) for the small numbers here (exact in a u64: at most C(84, 12)).
fn binomial(n: usize, k: usize) -> u64 {
    if k > n {
        return 0;
    }
    (0..k).fold(1u64, |c, i| c * (n - i) as u64 / (i + 1) as u64)
}

impl Ranks {
    /// The ranks of a board with `pits` pits a side (1..=6).
    pub(crate) fn new(pits: u8) -> Ranks {
        let pits = usize::from(pits).clamp(1, MAX_PLACES / 2);
        let places = 2 * pits;
        let bars = (0..MAX_PLACES)
            .map(|place| std::array::from_fn(|s| binomial(s + place, place + 1)))
            .collect();
        let below = (0..=MAX_STONES + 1)
            .map(|s| {
                if s == 0 {
                    0
                } else {
                    binomial(s - 1 + places, places)
                }
            })
            .collect();
        Ranks { pits, bars, below }
    }

    /// Whether these are the ranks of boards with `options`' pits.
    pub(crate) fn covers(&self, options: mancala_rules::KalahOptions) -> bool {
        usize::from(options.pits()) == self.pits
    }

    /// How many configurations hold at most `stones` stones: C(stones + p, p)
    /// for `p` places.
    pub(crate) fn count(&self, stones: u8) -> u64 {
        self.below[usize::from(stones).min(MAX_STONES) + 1]
    }

    /// The rank of a board's pits.
    #[inline]
    pub(crate) fn rank<const P: usize>(&self, board: Board<P>) -> u64 {
        debug_assert_eq!(P, self.pits);
        // Byte k of the product is the sum of bytes 0..=k: at most 72 stones
        // in all, so no byte carries into the next.
        let running = board
            .ring()
            .wrapping_mul(0x0101_0101_0101_0101_0101_0101_0101_0101);
        let stars = |byte: usize| usize::from((running >> (8 * byte)) as u8);
        let mut rank = self.below[stars(2 * P)];
        for place in 0..2 * P - 1 {
            // The opponent's pits sit one byte further on, past the store.
            let byte = if place < P { place } else { place + 1 };
            rank += self.bars[place][stars(byte)];
        }
        rank
    }

    /// The rank of a position's pits, seen from its player to move.
    pub(crate) fn rank_position(&self, position: &Kalah) -> u64 {
        match self.pits {
            1 => self.rank(Board::<1>::of(position)),
            2 => self.rank(Board::<2>::of(position)),
            3 => self.rank(Board::<3>::of(position)),
            4 => self.rank(Board::<4>::of(position)),
            5 => self.rank(Board::<5>::of(position)),
            _ => self.rank(Board::<6>::of(position)),
        }
    }
}

#[cfg(test)]
mod tests {
    use mancala_rules::{KalahOptions, Side};

    use super::*;

    fn position(pits: u8, rows: [[u8; 6]; 2], board: u8) -> Kalah {
        let options = KalahOptions::new(pits, board).unwrap();
        let in_pits: u8 = rows.iter().flatten().sum();
        let total = 2 * pits * board;
        Kalah::from_parts(options, rows, [total - in_pits, 0], Side::South).unwrap()
    }

    #[test]
    fn ranks_are_dense_and_ordered_by_stones() {
        // Every configuration of up to 4 stones on a two-pit board, each
        // ranked once, the ranks exactly 0..count.
        let ranks = Ranks::new(2);
        let mut seen = Vec::new();
        for a in 0..=4u8 {
            for b in 0..=4 - a {
                for c in 0..=4 - a - b {
                    for d in 0..=4 - a - b - c {
                        let board = Board::<2>::from_places(&[a, b, c, d]);
                        seen.push((a + b + c + d, ranks.rank(board)));
                    }
                }
            }
        }
        let mut sorted = seen.clone();
        sorted.sort_by_key(|&(_, rank)| rank);
        let ranks_only: Vec<u64> = sorted.iter().map(|&(_, rank)| rank).collect();
        assert_eq!(ranks_only, (0..ranks.count(4)).collect::<Vec<_>>());
        // Fewer stones rank lower.
        assert!(sorted.windows(2).all(|w| w[0].0 <= w[1].0));
        assert_eq!(ranks.count(4), 70);
    }

    #[test]
    fn the_largest_board_fits_the_rank_bits() {
        let ranks = Ranks::new(6);
        assert!(ranks.count(72) < 1 << RANK_BITS);
        assert_eq!(ranks.count(16), 30_421_755);
        let full = position(6, [[6; 6], [6; 6]], 6);
        assert!(ranks.rank_position(&full) < ranks.count(72));
        assert!(ranks.rank_position(&full) >= ranks.count(71));
    }
}
