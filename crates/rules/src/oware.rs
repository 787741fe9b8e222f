//! Oware / Abapa (docs/RULES.md, "Oware"): a ring of twelve pits, captures of 2
//! or 3 on the opponent's side, the grand slam rule and feeding.

use crate::position::{Position, hash_ring_of_twelve, ring_of_twelve, status_code};
use crate::types::{EndReason, Pit, PitSet, PositionError, Side};

const PITS: usize = 12;
const ROW: usize = 6;
const SEEDS: u8 = 4;
const TOTAL: u32 = PITS as u32 * SEEDS as u32;
/// More than half of the 48 seeds decides the game at once (rule 5(a)).
const MAJORITY: u8 = 25;

/// An Oware position. Pits 0..6 are South's pits 1..6, pits 6..12 North's;
/// sowing walks the ring upwards.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Oware {
    pits: [u8; PITS],
    captured: [u8; 2],
    turn: Side,
    /// 0 while the game goes on, else an [`EndReason`] code.
    status: u8,
}

impl Default for Oware {
    fn default() -> Self {
        Oware::new()
    }
}

impl Oware {
    /// The starting position: four seeds a pit, South to move.
    pub const fn new() -> Oware {
        Oware {
            pits: [SEEDS; PITS],
            captured: [0; 2],
            turn: Side::South,
            status: 0,
        }
    }

    /// A position from explicit rows (pit 1 first), tallies and player to
    /// move, for analysis and tests. The end rules are applied as if a move
    /// had just led here, so a finished position reports its end.
    pub fn from_parts(
        rows: [[u8; ROW]; 2],
        captured: [u8; 2],
        turn: Side,
    ) -> Result<Oware, PositionError> {
        let pits = ring_of_twelve(rows, captured, TOTAL)?;
        let mut position = Oware {
            pits,
            captured,
            turn,
            status: 0,
        };
        position.settle_end();
        Ok(position)
    }

    /// Seeds a player has captured.
    pub fn captured(&self, player: Side) -> u8 {
        self.captured[player.index()]
    }

    #[inline]
    fn row_slice(&self, player: Side) -> &[u8] {
        let start = player.index() * ROW;
        &self.pits[start..start + ROW]
    }

    #[inline]
    fn row_sum(&self, player: Side) -> u8 {
        self.row_slice(player).iter().sum()
    }

    /// Moves of `player` that put at least one seed on the other side: pit
    /// k (offset k - 1) needs 6 - offset seeds to get there.
    #[inline]
    fn feeding_moves(&self, player: Side) -> u8 {
        self.row_slice(player)
            .iter()
            .enumerate()
            .fold(0, |bits, (offset, &seeds)| {
                bits | u8::from(usize::from(seeds) >= ROW - offset) << offset
            })
    }

    #[inline]
    fn non_empty(&self, player: Side) -> u8 {
        self.row_slice(player)
            .iter()
            .enumerate()
            .fold(0, |bits, (offset, &seeds)| {
                bits | u8::from(seeds != 0) << offset
            })
    }

    /// Sows the seeds of `from`, always skipping `from`, and returns where the
    /// last seed fell.
    #[inline]
    fn sow(&mut self, from: usize) -> usize {
        let mut seeds = usize::from(self.pits[from]);
        self.pits[from] = 0;
        let lap = PITS - 1;
        let mut at = from;
        if seeds >= lap {
            let laps = (seeds / lap) as u8;
            for (index, pit) in self.pits.iter_mut().enumerate() {
                if index != from {
                    *pit += laps;
                }
            }
            seeds %= lap;
            // A whole lap ends on the pit just before the start.
            at = (from + lap) % PITS;
            if seeds > 0 {
                at = from;
            }
        }
        while seeds > 0 {
            at = (at + 1) % PITS;
            if at != from {
                self.pits[at] += 1;
                seeds -= 1;
            }
        }
        at
    }

    /// Rule 2 and 3: captures 2s and 3s backwards from `last` on the
    /// opponent's side, unless that would take all the opponent's seeds.
    #[inline]
    fn capture(&mut self, last: usize, mover: Side) {
        let victim = mover.opponent();
        let victim_start = victim.index() * ROW;
        let mut taken = 0;
        let mut first = last + 1;
        while first > victim_start && matches!(self.pits[first - 1], 2 | 3) {
            first -= 1;
            taken += self.pits[first];
        }
        if taken > 0 && taken < self.row_sum(victim) {
            self.pits[first..=last].fill(0);
            self.captured[mover.index()] += taken;
        }
    }

    /// The end rules (a)-(c), checked in order with the turn already passed
    /// to the next player.
    fn settle_end(&mut self) {
        let to_move = self.turn;
        let other = to_move.opponent();
        let reason = if self.captured.iter().any(|&c| c >= MAJORITY) {
            EndReason::Majority
        } else if self.row_sum(to_move) == 0 {
            self.sweep_to(other);
            EndReason::NoStones
        } else if self.row_sum(other) == 0 && self.feeding_moves(to_move) == 0 {
            self.sweep_to(to_move);
            EndReason::CannotFeed
        } else {
            return;
        };
        self.status = status_code(Some(reason));
    }

    fn sweep_to(&mut self, player: Side) {
        let left: u8 = self.pits.iter().sum();
        self.pits = [0; PITS];
        self.captured[player.index()] += left;
    }
}

impl Position for Oware {
    #[inline]
    fn turn(&self) -> Side {
        self.turn
    }

    #[inline]
    fn legal_moves(&self) -> PitSet {
        if self.status != 0 {
            return PitSet::EMPTY;
        }
        let bits = if self.row_sum(self.turn.opponent()) == 0 {
            self.feeding_moves(self.turn)
        } else {
            self.non_empty(self.turn)
        };
        PitSet::from_bits(bits)
    }

    #[inline]
    fn play_unchecked(&self, pit: Pit) -> Oware {
        debug_assert!(
            self.legal_moves().contains(pit),
            "illegal move {pit} in {self:?}"
        );
        let mut next = *self;
        let mover = self.turn;
        let from = mover.index() * ROW + pit.offset();
        let last = next.sow(from);
        if last / ROW != mover.index() {
            next.capture(last, mover);
        }
        next.turn = mover.opponent();
        next.settle_end();
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
            &self.pits,
            self.captured,
            self.turn,
            self.status,
            0x4f57_4152_4500_0000,
        )
    }

    fn can_repeat(&self) -> bool {
        true
    }

    fn end_by_repetition(&self) -> Oware {
        let mut next = *self;
        for player in Side::BOTH {
            next.captured[player.index()] += self.row_sum(player);
        }
        next.pits = [0; PITS];
        next.status = status_code(Some(EndReason::Repetition));
        next
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PlayError;

    fn pit(n: u8) -> Pit {
        Pit::new(n).unwrap()
    }

    #[test]
    fn sowing_from_the_start() {
        let next = Oware::new().play(pit(6)).unwrap();
        assert_eq!(next.row(Side::South), [4, 4, 4, 4, 4, 0]);
        assert_eq!(next.row(Side::North), [5, 5, 5, 5, 4, 4]);
        assert_eq!(next.turn(), Side::North);
    }

    #[test]
    fn twelve_or_more_seeds_skip_the_starting_pit() {
        // South pit 1 with 12 seeds: 11 go round, the 12th lands in pit 2
        // after skipping pit 1.
        let position =
            Oware::from_parts([[12, 0, 0, 0, 0, 1], [1; 6]], [6, 23], Side::South).unwrap();
        let next = position.play(pit(1)).unwrap();
        assert_eq!(next.row(Side::South), [0, 2, 1, 1, 1, 2]);
        assert_eq!(next.row(Side::North), [2; 6]);
        // Exactly 11 seeds: the last one lands just before the start.
        let position =
            Oware::from_parts([[0, 11, 0, 0, 0, 0], [1; 6]], [7, 24], Side::South).unwrap();
        let next = position.play(pit(2)).unwrap();
        assert_eq!(next.row(Side::South), [1, 0, 1, 1, 1, 1]);
        assert_eq!(next.row(Side::North), [2; 6]);
        assert_eq!(
            next.score(),
            [7, 24],
            "the last seed fell on South's own pit 1"
        );
    }

    #[test]
    fn captures_chain_backwards_over_twos_and_threes() {
        // South pit 6 with 3 seeds lands on North pit 3; North pits 1..3 hold
        // 1, 2, 1 before: they become 2, 3, 2 and all are captured.
        let position = Oware::from_parts(
            [[4, 4, 4, 4, 4, 3], [1, 2, 1, 4, 4, 4]],
            [4, 5],
            Side::South,
        )
        .unwrap();
        let next = position.play(pit(6)).unwrap();
        assert_eq!(next.score(), [11, 5]);
        assert_eq!(next.row(Side::North), [0, 0, 0, 4, 4, 4]);
    }

    #[test]
    fn chain_stops_at_a_pit_that_is_not_two_or_three() {
        let position = Oware::from_parts(
            [[4, 4, 4, 4, 4, 3], [1, 0, 1, 4, 4, 4]],
            [5, 6],
            Side::South,
        )
        .unwrap();
        let next = position.play(pit(6)).unwrap();
        // North pit 2 becomes 1: only pit 3 (2 seeds) is captured.
        assert_eq!(next.score(), [7, 6]);
        assert_eq!(next.row(Side::North), [2, 1, 0, 4, 4, 4]);
    }

    #[test]
    fn grand_slam_captures_nothing() {
        let position = Oware::from_parts(
            [[4, 4, 4, 4, 4, 2], [1, 2, 0, 0, 0, 0]],
            [11, 12],
            Side::South,
        )
        .unwrap();
        let next = position.play(pit(6)).unwrap();
        // Both North pits would be captured: that is all North has, so none is.
        assert_eq!(next.score(), [11, 12]);
        assert_eq!(next.row(Side::North), [2, 3, 0, 0, 0, 0]);
        assert_eq!(next.end_reason(), None);
    }

    #[test]
    fn the_mover_must_feed_an_empty_opponent() {
        let position =
            Oware::from_parts([[5, 1, 0, 0, 0, 1], [0; 6]], [20, 21], Side::South).unwrap();
        let legal: Vec<u8> = position.legal_moves().map(Pit::get).collect();
        assert_eq!(legal, [6], "only pit 6 reaches North");
        assert_eq!(position.play(pit(1)), Err(PlayError::MustFeed { pit: 1 }));
        assert_eq!(position.play(pit(3)), Err(PlayError::EmptyPit { pit: 3 }));
        assert!(position.play(pit(6)).is_ok());
    }

    #[test]
    fn twenty_five_ends_the_game_at_once() {
        let position = Oware::from_parts(
            [[0, 0, 0, 0, 0, 1], [2, 4, 4, 4, 4, 5]],
            [24, 0],
            Side::South,
        )
        .unwrap();
        let next = position.play(pit(6)).unwrap();
        assert_eq!(next.score(), [27, 0]);
        assert_eq!(next.end_reason(), Some(EndReason::Majority));
        assert_eq!(next.outcome().unwrap().result_str(), "p0");
        assert_eq!(next.legal_moves(), PitSet::EMPTY);
        assert_eq!(next.play(pit(1)), Err(PlayError::GameOver));
    }

    #[test]
    fn twenty_four_all_is_a_draw() {
        // South's last seed leaves South empty and North cannot feed: North
        // takes what is left (rule c) and the tallies are 24-24.
        let position = Oware::from_parts(
            [[0, 0, 0, 0, 0, 1], [0, 0, 0, 0, 1, 0]],
            [24, 22],
            Side::South,
        )
        .unwrap();
        let next = position.play(pit(6)).unwrap();
        assert_eq!(next.end_reason(), Some(EndReason::CannotFeed));
        assert_eq!(next.score(), [24, 24]);
        assert_eq!(next.outcome().unwrap().result_str(), "draw");
    }

    #[test]
    fn a_player_with_no_seeds_to_move_loses_the_rest() {
        // Rule (b) cannot arise from the start position under feeding and
        // grand slam, but a set-up position shows it.
        let position =
            Oware::from_parts([[0; 6], [1, 1, 0, 0, 0, 0]], [21, 25], Side::South).unwrap();
        assert_eq!(
            position.end_reason(),
            Some(EndReason::Majority),
            "(a) comes before (b)"
        );
        let position =
            Oware::from_parts([[0; 6], [1, 1, 0, 0, 0, 0]], [23, 23], Side::South).unwrap();
        assert_eq!(position.end_reason(), Some(EndReason::NoStones));
        assert_eq!(position.score(), [23, 25]);
    }

    #[test]
    fn repetition_end_gives_each_side_its_own_seeds() {
        let position = Oware::from_parts(
            [[1, 0, 0, 0, 0, 2], [0, 0, 3, 0, 0, 0]],
            [20, 22],
            Side::South,
        )
        .unwrap();
        let ended = position.end_by_repetition();
        assert_eq!(ended.score(), [23, 25]);
        assert_eq!(ended.end_reason(), Some(EndReason::Repetition));
    }
}
