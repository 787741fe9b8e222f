//! Kalah (docs/RULES.md, "Kalah"): two rows of pits, two stores, extra turns and
//! captures from an own empty pit.

use std::ops::RangeInclusive;

use crate::position::{Position, hash_bytes, status_code};
use crate::types::{EndReason, Pit, PitSet, PositionError, Side};

/// When a Kalah game ends.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum KalahEnd {
    /// Right after a move that leaves either side with no stones (seeds 000
    /// and 001; the default).
    #[default]
    Immediate,
    /// When the player to move has no stones (seed 002's wording).
    OnTurn,
}

/// The options of a Kalah board.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(try_from = "RawKalahOptions"))]
pub struct KalahOptions {
    pits: u8,
    seeds: u8,
    empty_capture: bool,
    end: KalahEnd,
}

/// Kalah options that were out of range.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum KalahOptionsError {
    /// Pits per side outside 1..=6.
    #[error("pits must be 1..=6, got {0}")]
    Pits(u8),
    /// Stones per pit outside 1..=6.
    #[error("seeds must be 1..=6, got {0}")]
    Seeds(u8),
}

impl KalahOptions {
    /// Pits per side that analysis boards may have.
    pub const PITS: RangeInclusive<u8> = 1..=6;
    /// Stones per pit that analysis boards may have.
    pub const SEEDS: RangeInclusive<u8> = 1..=6;
    /// Stones per pit offered for play on the standard six-pit board.
    pub const PLAY_SEEDS: RangeInclusive<u8> = 3..=6;

    /// A board of `pits` pits a side with `seeds` stones each, default rules.
    pub const fn new(pits: u8, seeds: u8) -> Result<KalahOptions, KalahOptionsError> {
        if pits < 1 || pits > 6 {
            return Err(KalahOptionsError::Pits(pits));
        }
        if seeds < 1 || seeds > 6 {
            return Err(KalahOptionsError::Seeds(seeds));
        }
        Ok(KalahOptions {
            pits,
            seeds,
            empty_capture: false,
            end: KalahEnd::Immediate,
        })
    }

    /// With `empty_capture`, a last stone in an own empty pit opposite an
    /// empty pit still goes to the store (the "Solving Kalah" rule).
    #[must_use]
    pub const fn with_empty_capture(mut self, empty_capture: bool) -> KalahOptions {
        self.empty_capture = empty_capture;
        self
    }

    /// Chooses the end rule.
    #[must_use]
    pub const fn with_end(mut self, end: KalahEnd) -> KalahOptions {
        self.end = end;
        self
    }

    /// Pits per side.
    pub const fn pits(&self) -> u8 {
        self.pits
    }

    /// Stones per pit at the start.
    pub const fn seeds(&self) -> u8 {
        self.seeds
    }

    /// Whether a lone last stone is captured when the opposite pit is empty.
    pub const fn empty_capture(&self) -> bool {
        self.empty_capture
    }

    /// The end rule.
    pub const fn end(&self) -> KalahEnd {
        self.end
    }

    /// Whether these options are offered for play, not only for analysis:
    /// six pits a side and 3..=6 stones a pit.
    pub const fn is_playable(&self) -> bool {
        self.pits == 6 && self.seeds >= 3 && self.seeds <= 6
    }
}

impl Default for KalahOptions {
    fn default() -> Self {
        KalahOptions {
            pits: 6,
            seeds: 4,
            empty_capture: false,
            end: KalahEnd::Immediate,
        }
    }
}

#[cfg(feature = "serde")]
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RawKalahOptions {
    #[serde(default = "default_pits")]
    pits: u8,
    #[serde(default = "default_seeds")]
    seeds: u8,
    #[serde(default)]
    empty_capture: bool,
    #[serde(default)]
    end: KalahEnd,
}

#[cfg(feature = "serde")]
fn default_pits() -> u8 {
    6
}

#[cfg(feature = "serde")]
fn default_seeds() -> u8 {
    4
}

#[cfg(feature = "serde")]
impl TryFrom<RawKalahOptions> for KalahOptions {
    type Error = KalahOptionsError;
    fn try_from(raw: RawKalahOptions) -> Result<Self, Self::Error> {
        Ok(KalahOptions::new(raw.pits, raw.seeds)?
            .with_empty_capture(raw.empty_capture)
            .with_end(raw.end))
    }
}

/// A Kalah position.
///
/// The board is held as one ring of bytes seen from the player to move: their
/// pits 1..=M, their store, the opponent's pits 1..=M, the opponent's store.
/// Sowing walks the ring upwards (counter-clockwise from both seats) over the
/// first `2M + 1` places, so the opponent's store, the last place, is skipped
/// by never being part of the lap. Packing the ring in a `u128` turns a sowing
/// into a handful of additions of byte masks, and passing the turn into one
/// rotation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Kalah {
    ring: u128,
    turn: Side,
    /// 0 while the game goes on, else an [`EndReason`] code.
    status: u8,
    options: KalahOptions,
}

/// Bytes `0..count` set to 1.
#[inline]
const fn ones(count: usize) -> u128 {
    0x0101_0101_0101_0101_0101_0101_0101_0101 & low_bytes(count)
}

/// A mask of bytes `0..count`.
#[inline]
const fn low_bytes(count: usize) -> u128 {
    if count >= 16 {
        u128::MAX
    } else {
        (1 << (8 * count)) - 1
    }
}

/// The sum of the bytes of a row of at most 8 bytes, each small enough that
/// no partial sum passes 255 (72 stones in all at most).
#[inline]
const fn byte_sum(row: u64) -> u8 {
    (row.wrapping_mul(0x0101_0101_0101_0101) >> 56) as u8
}

/// Stones on a board whose bytes could overflow: ruled out by
/// [`Kalah::from_parts`].
const MAX_STONES: u32 = 2 * 6 * 6;

impl Kalah {
    /// The starting position: every pit holds `seeds` stones, South to move.
    pub fn new(options: KalahOptions) -> Kalah {
        let pits = usize::from(options.pits);
        let row = ones(pits) * u128::from(options.seeds);
        Kalah {
            ring: row | row << (8 * (pits + 1)),
            turn: Side::South,
            status: 0,
            options,
        }
    }

    /// A position from explicit rows (pit 1 first, entries past the board's
    /// pits ignored), stores and player to move, for analysis and tests. The
    /// end rule is applied as if a move had just led here.
    pub fn from_parts(
        options: KalahOptions,
        rows: [[u8; 6]; 2],
        stores: [u8; 2],
        turn: Side,
    ) -> Result<Kalah, PositionError> {
        let pits = usize::from(options.pits);
        let expected = 2 * u32::from(options.pits) * u32::from(options.seeds);
        let found: u32 = rows
            .iter()
            .flat_map(|row| &row[..pits])
            .map(|&s| u32::from(s))
            .sum::<u32>()
            + stores.iter().map(|&s| u32::from(s)).sum::<u32>();
        if found != expected || found > MAX_STONES {
            return Err(PositionError::StoneCount { found, expected });
        }
        let side = |player: Side| {
            let row = rows[player.index()][..pits]
                .iter()
                .rev()
                .fold(0u128, |ring, &stones| ring << 8 | u128::from(stones));
            row | u128::from(stores[player.index()]) << (8 * pits)
        };
        let ring = side(turn) | side(turn.opponent()) << (8 * (pits + 1));
        let mut position = Kalah {
            ring,
            turn,
            status: 0,
            options,
        };
        position.settle_end();
        Ok(position)
    }

    /// The options this position is played under.
    pub fn options(&self) -> KalahOptions {
        self.options
    }

    /// The pits and the player to move, without the stores. Positions with
    /// the same key play out alike, the stores only adding to the final
    /// score, so a solver can share work between them.
    pub fn pits_key(&self) -> u128 {
        let pits = self.pits();
        let stores = 0xff << (8 * pits) | 0xff << (8 * (2 * pits + 1));
        self.ring & !stores | u128::from(self.turn as u8) << 112
    }

    /// Stones left in the pits of both sides.
    pub fn stones_in_pits(&self) -> u8 {
        let pits = self.pits();
        let front = self.ring as u64 & low_bytes(pits) as u64;
        let back = (self.ring >> (8 * (pits + 1))) as u64 & low_bytes(pits) as u64;
        byte_sum(front) + byte_sum(back)
    }

    /// Stones in a player's store.
    pub fn store(&self, player: Side) -> u8 {
        self.byte(self.side_start(player) + self.pits())
    }

    #[inline]
    fn pits(&self) -> usize {
        usize::from(self.options.pits)
    }

    #[inline]
    fn byte(&self, index: usize) -> u8 {
        (self.ring >> (8 * index)) as u8
    }

    /// Where a player's pits begin in the mover-relative ring.
    #[inline]
    fn side_start(&self, player: Side) -> usize {
        if player == self.turn {
            0
        } else {
            self.pits() + 1
        }
    }

    /// A player's pits as the low bytes of a word.
    #[inline]
    fn row_word(&self, player: Side) -> u64 {
        ((self.ring >> (8 * self.side_start(player))) & low_bytes(self.pits())) as u64
    }

    /// Sows the stones of the mover's pit at `from` and returns where the
    /// last one fell.
    #[inline]
    fn sow(&mut self, from: usize) -> usize {
        let lap = 2 * self.pits() + 1;
        let mut stones = usize::from(self.byte(from));
        self.ring &= !(0xff << (8 * from));
        if stones >= lap {
            // Whole laps drop the same count everywhere, the emptied start
            // pit included. Rare, so the division stays off the common path.
            self.ring += ones(lap) * (stones / lap) as u128;
            stones %= lap;
        }
        let end = from + stones;
        if end < lap {
            self.ring += ones(stones) << (8 * (from + 1));
            end
        } else {
            self.ring += ones(lap - from - 1) << (8 * (from + 1));
            self.ring += ones(end - lap + 1);
            end - lap
        }
    }

    /// Passes the turn: the opponent's half of the ring becomes the front.
    #[inline]
    fn pass_turn(&mut self) {
        let half = 8 * (self.pits() + 1);
        self.ring = self.ring >> half | (self.ring & low_bytes(self.pits() + 1)) << half;
        self.turn = self.turn.opponent();
    }

    /// Applies the end rule after a move, sweeping each row into its store.
    #[inline]
    fn settle_end(&mut self) {
        let pits = self.pits();
        let front = self.ring as u64 & low_bytes(pits) as u64;
        let back = (self.ring >> (8 * (pits + 1))) as u64 & low_bytes(pits) as u64;
        let ended = match self.options.end {
            KalahEnd::Immediate => (front == 0 || back == 0).then_some(EndReason::SideEmpty),
            KalahEnd::OnTurn => (front == 0).then_some(EndReason::NoStones),
        };
        if let Some(reason) = ended {
            // The player to move has nothing left under `on_turn`, so
            // sweeping both rows is the opponent sweeping theirs.
            let rows = low_bytes(pits) | low_bytes(pits) << (8 * (pits + 1));
            self.ring &= !rows;
            self.ring += u128::from(byte_sum(front)) << (8 * pits);
            self.ring += u128::from(byte_sum(back)) << (8 * (2 * pits + 1));
            self.status = status_code(Some(reason));
        }
    }
}

impl Default for Kalah {
    fn default() -> Self {
        Kalah::new(KalahOptions::default())
    }
}

impl Position for Kalah {
    #[inline]
    fn turn(&self) -> Side {
        self.turn
    }

    #[inline]
    fn legal_moves(&self) -> PitSet {
        if self.status != 0 {
            return PitSet::EMPTY;
        }
        let row = self.ring as u64;
        let bits = (0..self.pits()).fold(0u8, |bits, offset| {
            bits | u8::from(row >> (8 * offset) & 0xff != 0) << offset
        });
        PitSet::from_bits(bits)
    }

    #[inline]
    fn play_unchecked(&self, pit: Pit) -> Kalah {
        debug_assert!(
            self.legal_moves().contains(pit),
            "illegal move {pit} in {self:?}"
        );
        let mut next = *self;
        let pits = self.pits();
        let last = next.sow(pit.offset());
        if last != pits {
            if last < pits && next.byte(last) == 1 {
                let opposite = 2 * pits - last;
                let taken = next.byte(opposite);
                if taken > 0 || self.options.empty_capture {
                    next.ring &= !(0xff << (8 * last) | 0xff << (8 * opposite));
                    next.ring += u128::from(taken + 1) << (8 * pits);
                }
            }
            next.pass_turn();
        }
        next.settle_end();
        next
    }

    #[inline]
    fn end_reason(&self) -> Option<EndReason> {
        EndReason::from_code(self.status)
    }

    #[inline]
    fn score(&self) -> [u8; 2] {
        [self.store(Side::South), self.store(Side::North)]
    }

    fn pits_per_side(&self) -> u8 {
        self.options.pits
    }

    fn row(&self, player: Side) -> [u8; 6] {
        let word = self.row_word(player).to_le_bytes();
        let mut row = [0; 6];
        row.copy_from_slice(&word[..6]);
        row
    }

    #[inline]
    fn hash64(&self) -> u64 {
        // The ring uses 14 bytes at most; the turn makes it absolute.
        let mut bytes = self.ring.to_le_bytes();
        bytes[14] = self.turn as u8;
        bytes[15] = self.status;
        let options = u64::from(self.options.pits)
            | u64::from(self.options.empty_capture) << 8
            | (self.options.end as u64) << 9;
        hash_bytes(bytes, 0x4b41_4c41_0000_0000 | options)
    }

    fn can_repeat(&self) -> bool {
        false
    }

    fn end_by_repetition(&self) -> Kalah {
        // Kalah positions never recur; ending one this way is a caller bug
        // that leaves the position as it is.
        *self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pit(n: u8) -> Pit {
        Pit::new(n).unwrap()
    }

    /// A position from explicit rows (pit 1 first) and stores.
    fn kalah(options: KalahOptions, rows: [&[u8]; 2], stores: [u8; 2], turn: Side) -> Kalah {
        let mut full = [[0; 6]; 2];
        for player in 0..2 {
            full[player][..rows[player].len()].copy_from_slice(rows[player]);
        }
        Kalah::from_parts(options, full, stores, turn).unwrap()
    }

    #[test]
    fn pit_three_from_the_start_gives_an_extra_turn() {
        let next = Kalah::default().play(pit(3)).unwrap();
        assert_eq!(next.turn(), Side::South);
        assert_eq!(next.row(Side::South), [4, 4, 0, 5, 5, 5]);
        assert_eq!(next.score(), [1, 0]);
    }

    #[test]
    fn extra_turns_chain() {
        let rows: [&[u8]; 2] = [&[0, 0, 0, 1, 2, 1], &[1; 6]];
        let position = kalah(KalahOptions::default(), rows, [20, 18], Side::South);
        let after_six = position.play(pit(6)).unwrap();
        assert_eq!(after_six.turn(), Side::South, "first extra turn");
        let after_five = after_six.play(pit(5)).unwrap();
        assert_eq!(after_five.turn(), Side::South, "second extra turn");
        assert_eq!(after_five.score(), [22, 18]);
        let after_six_again = after_five.play(pit(6)).unwrap();
        assert_eq!(after_six_again.turn(), Side::South, "third extra turn");
        assert_eq!(after_six_again.score(), [23, 18]);
        assert_eq!(after_six_again.row(Side::South), [0, 0, 0, 1, 0, 0]);
        assert_eq!(after_six_again.end_reason(), None);
    }

    #[test]
    fn thirteen_stones_always_capture_through_the_start_pit() {
        for from in 1..=6u8 {
            let mut rows = [[1u8; 6], [2u8; 6]];
            rows[0][usize::from(from - 1)] = 13;
            let position = kalah(
                KalahOptions::default(),
                [&rows[0], &rows[1]],
                [9, 9],
                Side::South,
            );
            let next = position.play(pit(from)).unwrap();
            // The opposite pit had 2 and got one stone on the lap: those 3
            // and the last stone go to the store, after the lap's own stone.
            assert_eq!(
                next.row(Side::South)[usize::from(from - 1)],
                0,
                "pit {from}"
            );
            assert_eq!(
                next.row(Side::North)[usize::from(6 - from)],
                0,
                "pit {from}"
            );
            assert_eq!(next.score(), [9 + 1 + 3 + 1, 9], "pit {from}");
            assert_eq!(next.turn(), Side::North);
            assert_eq!(next.total_stones(), 48);
        }
    }

    #[test]
    fn empty_opposite_pit_blocks_the_capture_unless_empty_capture() {
        let rows: [&[u8]; 2] = [&[1, 0, 3, 3, 3, 3], &[3, 3, 3, 3, 0, 3]];
        let plain = kalah(KalahOptions::default(), rows, [10, 10], Side::South);
        let next = plain.play(pit(1)).unwrap();
        assert_eq!(next.row(Side::South), [0, 1, 3, 3, 3, 3], "the stone stays");
        assert_eq!(next.score(), [10, 10]);
        assert_eq!(next.turn(), Side::North);

        let options = KalahOptions::default().with_empty_capture(true);
        let next = kalah(options, rows, [10, 10], Side::South)
            .play(pit(1))
            .unwrap();
        assert_eq!(
            next.row(Side::South),
            [0, 0, 3, 3, 3, 3],
            "the lone stone is stored"
        );
        assert_eq!(next.score(), [11, 10]);
        assert_eq!(next.turn(), Side::North);
    }

    #[test]
    fn capture_takes_the_opposite_pit_and_the_last_stone() {
        let rows: [&[u8]; 2] = [&[1, 0, 3, 3, 3, 3], &[3, 3, 3, 3, 5, 3]];
        let position = kalah(KalahOptions::default(), rows, [7, 8], Side::South);
        let next = position.play(pit(1)).unwrap();
        assert_eq!(next.row(Side::South), [0, 0, 3, 3, 3, 3]);
        assert_eq!(next.row(Side::North), [3, 3, 3, 3, 0, 3]);
        assert_eq!(next.score(), [13, 8]);
    }

    #[test]
    fn sowing_skips_the_opponents_store() {
        // South's pit 6 with 8 stones: store, North 1..6, (skip North's
        // store), South pit 1.
        let rows: [&[u8]; 2] = [&[1, 1, 1, 1, 1, 8], &[1; 6]];
        let position = kalah(KalahOptions::default(), rows, [14, 15], Side::South);
        let next = position.play(pit(6)).unwrap();
        assert_eq!(next.score(), [15, 15]);
        assert_eq!(next.row(Side::North), [2; 6]);
        assert_eq!(next.row(Side::South), [2, 1, 1, 1, 1, 0]);
    }

    #[test]
    fn immediate_end_sweeps_both_rows_when_either_empties() {
        let rows: [&[u8]; 2] = [&[0, 0, 0, 0, 0, 1], &[2, 0, 0, 0, 0, 3]];
        let position = kalah(KalahOptions::default(), rows, [20, 22], Side::South);
        let next = position.play(pit(6)).unwrap();
        // The last stone lands in the store (an extra turn), but South's row
        // is empty, so the game ends and North sweeps 5.
        assert_eq!(next.end_reason(), Some(EndReason::SideEmpty));
        assert_eq!(next.score(), [21, 27]);
        assert_eq!(next.row(Side::North), [0; 6]);
        assert_eq!(next.legal_moves(), PitSet::EMPTY);
        assert_eq!(next.outcome().unwrap().result_str(), "p1");
    }

    #[test]
    fn on_turn_end_waits_for_the_player_to_move() {
        let options = KalahOptions::default().with_end(KalahEnd::OnTurn);
        // South empties their row but earns an extra turn: South is to move
        // with no stones, so the game ends and North sweeps.
        let rows: [&[u8]; 2] = [&[0, 0, 0, 0, 0, 1], &[2, 0, 0, 0, 0, 3]];
        let next = kalah(options, rows, [20, 22], Side::South)
            .play(pit(6))
            .unwrap();
        assert_eq!(next.end_reason(), Some(EndReason::NoStones));
        assert_eq!(next.score(), [21, 27]);

        // South empties their row and the turn passes: North still has
        // stones, so play goes on (under `immediate` it would end).
        let rows: [&[u8]; 2] = [&[0, 0, 0, 0, 0, 3], &[2, 0, 0, 0, 0, 3]];
        let next = kalah(options, rows, [20, 20], Side::South)
            .play(pit(6))
            .unwrap();
        assert_eq!(next.end_reason(), None);
        assert_eq!(next.turn(), Side::North);
        assert_eq!(next.row(Side::North), [3, 1, 0, 0, 0, 3]);
        let immediate = kalah(KalahOptions::default(), rows, [20, 20], Side::South);
        let ended = immediate.play(pit(6)).unwrap();
        assert_eq!(ended.end_reason(), Some(EndReason::SideEmpty));
        assert_eq!(ended.score(), [21, 27]);
    }

    #[test]
    fn small_boards_use_their_own_ring() {
        let options = KalahOptions::new(2, 1).unwrap();
        let start = Kalah::new(options);
        assert_eq!(start.row(Side::South), [1, 1, 0, 0, 0, 0]);
        assert_eq!(start.pits_per_side(), 2);
        // Pit 2 with one stone reaches the store: extra turn.
        let next = start.play(pit(2)).unwrap();
        assert_eq!(next.turn(), Side::South);
        assert_eq!(next.score(), [1, 0]);
        assert_eq!(
            start.play(pit(3)),
            Err(crate::PlayError::PitOutOfRange { pit: 3, pits: 2 })
        );
    }

    #[test]
    fn illegal_moves_name_the_reason() {
        let start = Kalah::default();
        let next = start.play(pit(3)).unwrap();
        assert_eq!(
            next.play(pit(3)),
            Err(crate::PlayError::EmptyPit { pit: 3 })
        );
    }

    #[test]
    fn set_up_positions_must_conserve_stones() {
        let options = KalahOptions::default();
        assert_eq!(
            Kalah::from_parts(options, [[4; 6], [4; 6]], [1, 0], Side::South),
            Err(PositionError::StoneCount {
                found: 49,
                expected: 48
            })
        );
        let rows = [[4; 6], [5, 4, 4, 4, 4, 3]];
        let north_to_move = Kalah::from_parts(options, rows, [0, 0], Side::North).unwrap();
        assert_eq!(north_to_move.row(Side::North), [5, 4, 4, 4, 4, 3]);
        assert_eq!(north_to_move.row(Side::South), [4; 6]);
        let next = north_to_move.play(pit(6)).unwrap();
        assert_eq!(next.turn(), Side::South);
        assert_eq!(next.score(), [0, 1]);
        assert_eq!(next.row(Side::South), [5, 5, 4, 4, 4, 4]);
    }

    #[test]
    fn options_are_validated() {
        assert_eq!(KalahOptions::new(0, 4), Err(KalahOptionsError::Pits(0)));
        assert_eq!(KalahOptions::new(7, 4), Err(KalahOptionsError::Pits(7)));
        assert_eq!(KalahOptions::new(6, 0), Err(KalahOptionsError::Seeds(0)));
        assert_eq!(KalahOptions::new(6, 7), Err(KalahOptionsError::Seeds(7)));
        assert!(KalahOptions::new(6, 3).unwrap().is_playable());
        assert!(!KalahOptions::new(6, 2).unwrap().is_playable());
        assert!(!KalahOptions::new(4, 4).unwrap().is_playable());
    }
}
