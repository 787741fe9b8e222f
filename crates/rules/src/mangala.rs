//! Mangala II (docs/RULES.md, "Mangala II"): twelve holes, six stones each,
//! captures of 2, 4 or 6 in either row, forced passes.

use crate::position::{Position, hash_ring_of_twelve, ring_of_twelve, status_code};
use crate::types::{EndReason, Pit, PitSet, PositionError, Side};

const HOLES: usize = 12;
const ROW: usize = 6;
const STONES: u8 = 6;
const TOTAL: u32 = HOLES as u32 * STONES as u32;

/// A Mangala II position. Holes 0..6 are South's 1..6, holes 6..12 North's;
/// sowing walks the ring upwards.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Mangala {
    holes: [u8; HOLES],
    captured: [u8; 2],
    turn: Side,
    /// 0 while the game goes on, else an [`EndReason`] code.
    status: u8,
}

impl Default for Mangala {
    fn default() -> Self {
        Mangala::new()
    }
}

impl Mangala {
    /// The starting position: six stones a hole, South to move.
    pub const fn new() -> Mangala {
        Mangala {
            holes: [STONES; HOLES],
            captured: [0; 2],
            turn: Side::South,
            status: 0,
        }
    }

    /// A position from explicit rows (hole 1 first), tallies and player to
    /// move, for analysis and tests. The end and pass rules are applied as if
    /// a move had just led here.
    pub fn from_parts(
        rows: [[u8; ROW]; 2],
        captured: [u8; 2],
        turn: Side,
    ) -> Result<Mangala, PositionError> {
        let holes = ring_of_twelve(rows, captured, TOTAL)?;
        let mut position = Mangala {
            holes,
            captured,
            turn,
            status: 0,
        };
        position.settle(turn);
        Ok(position)
    }

    /// Stones a player has captured.
    pub fn captured(&self, player: Side) -> u8 {
        self.captured[player.index()]
    }

    #[inline]
    fn row_slice(&self, player: Side) -> &[u8] {
        let start = player.index() * ROW;
        &self.holes[start..start + ROW]
    }

    #[inline]
    fn row_is_empty(&self, player: Side) -> bool {
        self.row_slice(player).iter().all(|&stones| stones == 0)
    }

    /// Ends the game on an empty board; otherwise gives the turn to `next`,
    /// or back to the other player when `next` has no stones (a forced pass).
    #[inline]
    fn settle(&mut self, next: Side) {
        if self.holes.iter().all(|&stones| stones == 0) {
            self.turn = next;
            self.status = status_code(Some(EndReason::BoardEmpty));
        } else if self.row_is_empty(next) {
            self.turn = next.opponent();
        } else {
            self.turn = next;
        }
    }
}

impl Position for Mangala {
    #[inline]
    fn turn(&self) -> Side {
        self.turn
    }

    #[inline]
    fn legal_moves(&self) -> PitSet {
        if self.status != 0 {
            return PitSet::EMPTY;
        }
        let bits = self
            .row_slice(self.turn)
            .iter()
            .enumerate()
            .fold(0u8, |bits, (offset, &stones)| {
                bits | u8::from(stones != 0) << offset
            });
        PitSet::from_bits(bits)
    }

    #[inline]
    fn play_unchecked(&self, pit: Pit) -> Mangala {
        debug_assert!(
            self.legal_moves().contains(pit),
            "illegal move {pit} in {self:?}"
        );
        let mut next = *self;
        let mover = self.turn;
        let from = mover.index() * ROW + pit.offset();
        let stones = usize::from(next.holes[from]);
        next.holes[from] = 0;
        // Whole laps drop a stone everywhere, the emptied start included;
        // the rest go one by one from the next hole on.
        let laps = (stones / HOLES) as u8;
        if laps > 0 {
            for hole in &mut next.holes {
                *hole += laps;
            }
        }
        for step in 1..=stones % HOLES {
            next.holes[(from + step) % HOLES] += 1;
        }
        let mut at = (from + stones) % HOLES;
        // Each captured hole becomes empty, so the chain stops before it can
        // come round to its own start.
        while matches!(next.holes[at], 2 | 4 | 6) {
            next.captured[mover.index()] += next.holes[at];
            next.holes[at] = 0;
            at = (at + HOLES - 1) % HOLES;
        }
        next.settle(mover.opponent());
        next
    }

    #[inline]
    fn end_reason(&self) -> Option<EndReason> {
        EndReason::from_code(self.status)
    }

    #[inline]
    fn score(&self) -> [u8; 2] {
        self.captured
    }

    fn pits_per_side(&self) -> u8 {
        ROW as u8
    }

    fn row(&self, player: Side) -> [u8; 6] {
        let mut row = [0; 6];
        row.copy_from_slice(self.row_slice(player));
        row
    }

    #[inline]
    fn hash64(&self) -> u64 {
        hash_ring_of_twelve(
            &self.holes,
            self.captured,
            self.turn,
            self.status,
            0x4d41_4e47_0000_0000,
        )
    }

    fn can_repeat(&self) -> bool {
        true
    }

    fn end_by_repetition(&self) -> Mangala {
        let mut next = *self;
        for player in Side::BOTH {
            next.captured[player.index()] += self.row_slice(player).iter().sum::<u8>();
        }
        next.holes = [0; HOLES];
        next.status = status_code(Some(EndReason::Repetition));
        next
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pit(n: u8) -> Pit {
        Pit::new(n).unwrap()
    }

    #[test]
    fn sowing_starts_in_the_next_hole() {
        let next = Mangala::new().play(pit(1)).unwrap();
        assert_eq!(next.row(Side::South), [0, 7, 7, 7, 7, 7]);
        assert_eq!(next.row(Side::North), [7, 6, 6, 6, 6, 6]);
        // The last stone made North's hole 1 hold 7: no capture.
        assert_eq!(next.score(), [0, 0]);
        assert_eq!(next.turn(), Side::North);
    }

    #[test]
    fn last_stone_making_an_even_count_captures_in_the_own_row_too() {
        // South hole 3 with 2 stones: holes 4 and 5; hole 5 had 1 and now 2,
        // hole 4 had 3 and now 4: both captured (own row).
        let position =
            Mangala::from_parts([[6, 6, 2, 3, 1, 6], [6; 6]], [6, 6], Side::South).unwrap();
        let next = position.play(pit(3)).unwrap();
        assert_eq!(next.score(), [12, 6]);
        assert_eq!(next.row(Side::South), [6, 6, 0, 0, 0, 6]);
    }

    #[test]
    fn capture_chain_crosses_from_the_opponents_row_into_the_own() {
        // South hole 5 with 3 stones: hole 6, North 1, North 2. North 2 had 3
        // (now 4), North 1 had 5 (now 6), South 6 had 1 (now 2), South 5 is
        // the emptied start: chain 4 + 6 + 2.
        let position = Mangala::from_parts(
            [[6, 6, 6, 6, 3, 1], [5, 3, 6, 6, 6, 6]],
            [6, 6],
            Side::South,
        )
        .unwrap();
        let next = position.play(pit(5)).unwrap();
        assert_eq!(next.score(), [18, 6]);
        assert_eq!(next.row(Side::South), [6, 6, 6, 6, 0, 0]);
        assert_eq!(next.row(Side::North), [0, 0, 6, 6, 6, 6]);
    }

    #[test]
    fn twelve_stones_drop_one_back_into_the_start() {
        let position =
            Mangala::from_parts([[12, 0, 0, 0, 0, 0], [1; 6]], [27, 27], Side::South).unwrap();
        let next = position.play(pit(1)).unwrap();
        // Every hole gets one; the last falls in the start, which then holds
        // 1: no capture.
        assert_eq!(next.row(Side::South), [1, 1, 1, 1, 1, 1]);
        assert_eq!(next.row(Side::North), [2; 6]);
        assert_eq!(next.score(), [27, 27]);
    }

    #[test]
    fn a_player_without_stones_passes() {
        // South sows their last stone into North's row; the last stone makes
        // North's hole 1 hold 1, no capture. South now has nothing: after
        // North moves, South passes and North moves again.
        let position = Mangala::from_parts(
            [[0, 0, 0, 0, 0, 1], [0, 0, 0, 0, 0, 3]],
            [30, 38],
            Side::South,
        )
        .unwrap();
        let next = position.play(pit(6)).unwrap();
        assert_eq!(next.turn(), Side::North);
        let after_north = next.play(pit(1)).unwrap();
        assert_eq!(after_north.row(Side::South), [0; 6]);
        assert_eq!(after_north.row(Side::North), [0, 1, 0, 0, 0, 3]);
        assert_eq!(after_north.turn(), Side::North, "South passes");
    }

    #[test]
    fn the_game_ends_when_the_board_is_empty() {
        let position = Mangala::from_parts(
            [[0, 0, 0, 0, 0, 1], [1, 0, 0, 0, 0, 0]],
            [34, 36],
            Side::South,
        )
        .unwrap();
        let next = position.play(pit(6)).unwrap();
        assert_eq!(next.score(), [36, 36]);
        assert_eq!(next.end_reason(), Some(EndReason::BoardEmpty));
        assert_eq!(next.outcome().unwrap().result_str(), "draw");
    }
}
