//! The solver's own board: a Kalah position's pits seen from the player to
//! move, with the number of pits a side fixed at compile time.
//!
//! The rules crate's `Kalah` serves every board size through one type, so
//! each move works out its shifts and masks at run time and keeps stores,
//! the turn and the options besides. The solver needs none of that (it
//! works with the gain still to come, never with the stores) and plays
//! billions of moves: with the size a constant, a move is a handful of
//! shifts and adds on one `u128`. The tests check it move for move against
//! the rules crate.

use mancala_rules::{Kalah, KalahEnd, KalahOptions};

/// The rules a board is played by, besides its size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Rules {
    empty_capture: bool,
    on_turn: bool,
}

impl Rules {
    pub(crate) fn of(options: KalahOptions) -> Rules {
        Rules {
            empty_capture: options.empty_capture(),
            on_turn: options.end() == KalahEnd::OnTurn,
        }
    }
}

/// The pits of the player to move in bytes `0..P`, an empty byte where
/// their store is, and the opponent's pits in bytes `P + 1..=2P`: the
/// order stones are sown in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct Board<const P: usize> {
    ring: u128,
}

/// What a move did.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Played<const P: usize> {
    /// The board after it, seen from whoever moves next; empty when the
    /// game is over.
    pub(crate) board: Board<P>,
    /// What it added to the mover's store difference, the final sweep
    /// included when it ended the game.
    pub(crate) step: i32,
    /// Whether the mover moves again.
    pub(crate) same: bool,
    /// Whether it ended the game.
    pub(crate) over: bool,
}

/// A 1 in each of the low `count` bytes.
const fn ones(count: usize) -> u128 {
    0x0101_0101_0101_0101_0101_0101_0101_0101 & low_bytes(count)
}

const fn low_bytes(count: usize) -> u128 {
    if count >= 16 {
        u128::MAX
    } else {
        (1 << (8 * count)) - 1
    }
}

/// The sum of a word's bytes (at most 255).
#[inline]
fn byte_sum(word: u128) -> i32 {
    (word.wrapping_mul(ones(16)) >> 120) as i32
}

impl<const P: usize> Board<P> {
    /// Places stones are sown into: both rows and the mover's store.
    const LAP: usize = 2 * P + 1;
    const ROW: u128 = low_bytes(P);

    /// The board of `position`, whose options must have `P` pits a side.
    #[inline]
    pub(crate) fn of(position: &Kalah) -> Board<P> {
        debug_assert_eq!(usize::from(position.options().pits()), P);
        // The pits key is mover-relative with both stores zeroed.
        Board {
            ring: position.pits_key() & low_bytes(Board::<P>::LAP),
        }
    }

    /// The board with these pits: the mover's `P`, then the opponent's.
    pub(crate) fn from_places(places: &[u8]) -> Board<P> {
        let ring = places
            .iter()
            .enumerate()
            .fold(0u128, |ring, (place, &stones)| {
                let byte = if place < P { place } else { place + 1 };
                ring | u128::from(stones) << (8 * byte)
            });
        Board { ring }
    }

    /// Whether the game is over: a side is empty (or, with the end on the
    /// turn, the mover's).
    #[inline]
    pub(crate) fn is_over(self, rules: Rules) -> bool {
        let front = self.ring & Board::<P>::ROW;
        let back = self.ring >> (8 * (P + 1));
        front == 0 || (back == 0 && !rules.on_turn)
    }

    /// The raw bytes: what [`crate::rank::Ranks::rank`] reads.
    #[inline]
    pub(crate) fn ring(self) -> u128 {
        self.ring
    }

    #[inline]
    fn byte(ring: u128, index: usize) -> u8 {
        (ring >> (8 * index)) as u8
    }

    /// Stones left in the pits.
    #[inline]
    pub(crate) fn stones(self) -> i32 {
        byte_sum(self.ring)
    }

    /// The mover's stones minus the opponent's.
    #[inline]
    pub(crate) fn material(self) -> i32 {
        byte_sum(self.ring & Board::<P>::ROW) - byte_sum(self.ring >> (8 * (P + 1)))
    }

    /// The pits the mover may play, as offsets `0..P`, a bit each.
    #[inline]
    pub(crate) fn moves(self) -> u8 {
        let mut bits = 0u8;
        for pit in 0..P {
            bits |= u8::from(Board::<P>::byte(self.ring, pit) != 0) << pit;
        }
        bits
    }

    /// Plays the pit at offset `pit` (0 is pit 1, the farthest from the mover's store), which
    /// must hold stones: the rules crate's move, pits only.
    #[inline]
    pub(crate) fn play(self, pit: usize, rules: Rules) -> Played<P> {
        let lap = Board::<P>::LAP;
        let mut ring = self.ring;
        let mut stones = usize::from(Board::<P>::byte(ring, pit));
        ring &= !(0xff << (8 * pit));
        if stones >= lap {
            // Whole laps: a stone in every place, the emptied pit included.
            ring += ones(lap) * (stones / lap) as u128;
            stones %= lap;
        }
        let end = pit + stones;
        let last = if end < lap {
            ring += ones(stones) << (8 * (pit + 1));
            end
        } else {
            ring += ones(lap - pit - 1) << (8 * (pit + 1));
            ring += ones(end - lap + 1);
            end - lap
        };
        let same = last == P;
        if last < P && Board::<P>::byte(ring, last) == 1 {
            let opposite = 2 * P - last;
            let taken = Board::<P>::byte(ring, opposite);
            if taken > 0 || rules.empty_capture {
                ring &= !(0xff << (8 * last) | 0xff << (8 * opposite));
                ring += u128::from(taken + 1) << (8 * P);
            }
        }
        let mut step = i32::from(Board::<P>::byte(ring, P));
        ring &= !(0xff << (8 * P));
        if !same {
            ring = ring >> (8 * (P + 1)) | (ring & Board::<P>::ROW) << (8 * (P + 1));
        }
        let front = ring & Board::<P>::ROW;
        let back = ring >> (8 * (P + 1));
        let over = front == 0 || (back == 0 && !rules.on_turn);
        if over {
            // Each side's stones go to its own store.
            let sweep = byte_sum(front) - byte_sum(back);
            step += if same { sweep } else { -sweep };
            ring = 0;
        }
        Played {
            board: Board { ring },
            step,
            same,
            over,
        }
    }
}

#[cfg(test)]
mod tests {
    use mancala_rules::{Pit, Position, Side};
    use rand_xoshiro::Xoshiro256PlusPlus;
    use rand_xoshiro::rand_core::{Rng, SeedableRng};

    use super::*;

    fn difference(position: &Kalah, me: Side) -> i32 {
        i32::from(position.store(me)) - i32::from(position.store(me.opponent()))
    }

    fn agrees<const P: usize>(options: KalahOptions, games: u64) -> usize {
        let rules = Rules::of(options);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(u64::from(options.pits()) * 1000 + games);
        let mut moves = 0;
        for _ in 0..games {
            let mut position = Kalah::new(options);
            while !position.is_over() {
                let board = Board::<P>::of(&position);
                let legal: Vec<Pit> = position.legal_moves().into_iter().collect();
                let mask = legal
                    .iter()
                    .fold(0u8, |bits, pit| bits | 1 << (pit.get() - 1));
                assert_eq!(board.moves(), mask, "{position:?}");
                let me = position.turn();
                let in_pits = i32::from(position.stones_in_pits());
                assert_eq!(board.stones(), in_pits);
                for &pit in &legal {
                    let child = position.play_unchecked(pit);
                    let played = board.play(usize::from(pit.get() - 1), rules);
                    assert_eq!(played.over, child.is_over(), "{position:?} {pit}");
                    assert_eq!(
                        played.step,
                        difference(&child, me) - difference(&position, me)
                    );
                    if !played.over {
                        assert_eq!(played.same, child.turn() == me);
                        assert_eq!(played.board, Board::<P>::of(&child), "{position:?} {pit}");
                    }
                    moves += 1;
                }
                position = position.play_unchecked(legal[rng.next_u64() as usize % legal.len()]);
            }
        }
        moves
    }

    #[test]
    fn moves_agree_with_the_rules_crate_on_every_board_and_rule() {
        let mut moves = 0;
        for seeds in [1, 4, 6] {
            for empty_capture in [false, true] {
                for end in [KalahEnd::Immediate, KalahEnd::OnTurn] {
                    let options = |pits| {
                        KalahOptions::new(pits, seeds)
                            .unwrap()
                            .with_empty_capture(empty_capture)
                            .with_end(end)
                    };
                    moves += agrees::<1>(options(1), 20);
                    moves += agrees::<2>(options(2), 20);
                    moves += agrees::<3>(options(3), 20);
                    moves += agrees::<4>(options(4), 20);
                    moves += agrees::<5>(options(5), 20);
                    moves += agrees::<6>(options(6), 40);
                }
            }
        }
        assert!(moves > 50_000, "only {moves} moves compared");
    }

    #[test]
    fn a_board_is_built_from_its_places() {
        let position = Kalah::default().play_unchecked(Pit::new(6).unwrap());
        let places: Vec<u8> = position
            .row(Side::North)
            .into_iter()
            .chain(position.row(Side::South))
            .collect();
        assert_eq!(Board::<6>::from_places(&places), Board::<6>::of(&position));
        // North moves: five, five, five and three fours against five fours.
        assert_eq!(Board::<6>::of(&position).material(), 27 - 20);
    }
}
