//! Kalah (RULES.md, "Kalah"): two rows of pits, two stores, extra turns and
//! captures from an own empty pit.

use std::ops::RangeInclusive;

use crate::position::{Position, hash_bytes, status_code};
use crate::types::{EndReason, Pit, PitSet, Player};

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
/// The board is one ring of `2 * pits + 2` places: South's pits, South's
/// store, North's pits, North's store. Sowing walks the ring upwards, which is
/// counter-clockwise from both players' seats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Kalah {
    board: [u8; 14],
    turn: Player,
    /// 0 while the game goes on, else an [`EndReason`] code.
    status: u8,
    options: KalahOptions,
}

impl Kalah {
    /// The starting position: every pit holds `seeds` stones, South to move.
    pub fn new(options: KalahOptions) -> Kalah {
        let pits = usize::from(options.pits);
        let mut board = [0; 14];
        board[..pits].fill(options.seeds);
        board[pits + 1..2 * pits + 1].fill(options.seeds);
        Kalah {
            board,
            turn: Player::South,
            status: 0,
            options,
        }
    }

    /// The options this position is played under.
    pub fn options(&self) -> KalahOptions {
        self.options
    }

    /// Stones in a player's store.
    pub fn store(&self, player: Player) -> u8 {
        self.board[self.store_index(player)]
    }

    #[inline]
    fn pits(&self) -> usize {
        usize::from(self.options.pits)
    }

    #[inline]
    fn row_start(&self, player: Player) -> usize {
        player.index() * (self.pits() + 1)
    }

    #[inline]
    fn store_index(&self, player: Player) -> usize {
        self.row_start(player) + self.pits()
    }

    #[inline]
    fn row_slice(&self, player: Player) -> &[u8] {
        let start = self.row_start(player);
        &self.board[start..start + self.pits()]
    }

    #[inline]
    fn row_is_empty(&self, player: Player) -> bool {
        self.row_slice(player).iter().all(|&stones| stones == 0)
    }

    /// Sows the stones of `from`, skipping the opponent's store, and returns
    /// where the last stone fell.
    #[inline]
    fn sow(&mut self, from: usize) -> usize {
        let ring = 2 * self.pits() + 2;
        let skip = self.store_index(self.turn.opponent());
        let mut stones = usize::from(self.board[from]);
        self.board[from] = 0;
        let lap = ring - 1;
        if stones >= lap {
            // Whole laps drop the same count everywhere, the emptied start
            // pit included; the last stone of a whole lap lands on the start.
            let laps = (stones / lap) as u8;
            for (index, place) in self.board[..ring].iter_mut().enumerate() {
                if index != skip {
                    *place += laps;
                }
            }
            stones %= lap;
        }
        let mut at = from;
        while stones > 0 {
            at += 1;
            if at == ring {
                at = 0;
            }
            if at != skip {
                self.board[at] += 1;
                stones -= 1;
            }
        }
        at
    }

    /// Applies the end rule after a move, sweeping each row into its store.
    #[inline]
    fn settle_end(&mut self) {
        let ended = match self.options.end {
            KalahEnd::Immediate => (self.row_is_empty(Player::South)
                || self.row_is_empty(Player::North))
            .then_some(EndReason::SideEmpty),
            KalahEnd::OnTurn => self.row_is_empty(self.turn).then_some(EndReason::NoStones),
        };
        if let Some(reason) = ended {
            // The player to move has nothing left, so sweeping both rows is
            // the same as the opponent sweeping theirs under `on_turn`.
            for player in Player::BOTH {
                let start = self.row_start(player);
                let pits = self.pits();
                let swept: u8 = self.board[start..start + pits].iter().sum();
                self.board[start..start + pits].fill(0);
                self.board[start + pits] += swept;
            }
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
    fn turn(&self) -> Player {
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
    fn play_unchecked(&self, pit: Pit) -> Kalah {
        debug_assert!(
            self.legal_moves().contains(pit),
            "illegal move {pit} in {self:?}"
        );
        let mut next = *self;
        let mover = self.turn;
        let own_store = self.store_index(mover);
        let own_start = self.row_start(mover);
        let pits = self.pits();
        let last = next.sow(own_start + pit.offset());
        if last != own_store {
            let own_pit = (own_start..own_start + pits).contains(&last);
            if own_pit && next.board[last] == 1 {
                let opposite = 2 * pits - last;
                let taken = next.board[opposite];
                if taken > 0 || self.options.empty_capture {
                    next.board[own_store] += taken + 1;
                    next.board[opposite] = 0;
                    next.board[last] = 0;
                }
            }
            next.turn = mover.opponent();
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
        [self.store(Player::South), self.store(Player::North)]
    }

    fn pits_per_side(&self) -> u8 {
        self.options.pits
    }

    fn row(&self, player: Player) -> [u8; 6] {
        let mut row = [0; 6];
        row[..self.pits()].copy_from_slice(self.row_slice(player));
        row
    }

    #[inline]
    fn hash64(&self) -> u64 {
        let mut bytes = [0; 16];
        bytes[..14].copy_from_slice(&self.board);
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
    fn kalah(options: KalahOptions, rows: [&[u8]; 2], stores: [u8; 2], turn: Player) -> Kalah {
        let mut position = Kalah::new(options);
        let pits = options.pits() as usize;
        for player in Player::BOTH {
            let start = position.row_start(player);
            position.board[start..start + pits].copy_from_slice(rows[player.index()]);
            position.board[start + pits] = stores[player.index()];
        }
        position.turn = turn;
        position
    }

    #[test]
    fn pit_three_from_the_start_gives_an_extra_turn() {
        let next = Kalah::default().play(pit(3)).unwrap();
        assert_eq!(next.turn(), Player::South);
        assert_eq!(next.row(Player::South), [4, 4, 0, 5, 5, 5]);
        assert_eq!(next.score(), [1, 0]);
    }

    #[test]
    fn extra_turns_chain() {
        // Pit 3 lands in the store, then pit 6 (now 5 stones) does not, but
        // pit 6 with exactly one stone would: build that chain explicitly.
        let position = kalah(
            KalahOptions::default(),
            [&[0, 0, 0, 1, 2, 1], &[1; 6]],
            [0, 0],
            Player::South,
        );
        let after_six = position.play(pit(6)).unwrap();
        assert_eq!(after_six.turn(), Player::South, "first extra turn");
        let after_five = after_six.play(pit(5)).unwrap();
        assert_eq!(after_five.turn(), Player::South, "second extra turn");
        assert_eq!(after_five.score(), [2, 0]);
        let after_six_again = after_five.play(pit(6)).unwrap();
        assert_eq!(after_six_again.turn(), Player::South, "third extra turn");
        assert_eq!(after_six_again.score(), [3, 0]);
        assert_eq!(after_six_again.row(Player::South), [0, 0, 0, 1, 0, 0]);
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
                [0, 0],
                Player::South,
            );
            let next = position.play(pit(from)).unwrap();
            // Opposite pit had 2 and received one stone on the lap: 3 + the
            // last stone go to the store, on top of the one lap stone.
            assert_eq!(
                next.row(Player::South)[usize::from(from - 1)],
                0,
                "pit {from}"
            );
            assert_eq!(
                next.row(Player::North)[usize::from(6 - from)],
                0,
                "pit {from}"
            );
            assert_eq!(next.score(), [1 + 3 + 1, 0], "pit {from}");
            assert_eq!(next.turn(), Player::North);
            assert_eq!(next.total_stones(), position.total_stones());
        }
    }

    #[test]
    fn empty_opposite_pit_blocks_the_capture_unless_empty_capture() {
        let rows: [&[u8]; 2] = [&[1, 0, 3, 3, 3, 3], &[3, 3, 3, 3, 0, 3]];
        let plain = kalah(KalahOptions::default(), rows, [0, 0], Player::South);
        let next = plain.play(pit(1)).unwrap();
        assert_eq!(
            next.row(Player::South),
            [0, 1, 3, 3, 3, 3],
            "the stone stays"
        );
        assert_eq!(next.score(), [0, 0]);
        assert_eq!(next.turn(), Player::North);

        let options = KalahOptions::default().with_empty_capture(true);
        let next = kalah(options, rows, [0, 0], Player::South)
            .play(pit(1))
            .unwrap();
        assert_eq!(
            next.row(Player::South),
            [0, 0, 3, 3, 3, 3],
            "the lone stone is stored"
        );
        assert_eq!(next.score(), [1, 0]);
    }

    #[test]
    fn capture_takes_the_opposite_pit_and_the_last_stone() {
        let rows: [&[u8]; 2] = [&[1, 0, 3, 3, 3, 3], &[3, 3, 3, 3, 5, 3]];
        let next = kalah(KalahOptions::default(), rows, [0, 0], Player::South)
            .play(pit(1))
            .unwrap();
        assert_eq!(next.row(Player::South), [0, 0, 3, 3, 3, 3]);
        assert_eq!(next.row(Player::North), [3, 3, 3, 3, 0, 3]);
        assert_eq!(next.score(), [6, 0]);
    }

    #[test]
    fn sowing_skips_the_opponents_store() {
        // South's pit 6 with 8 stones: store, North 1..6, (skip North store),
        // South pit 1.
        let rows: [&[u8]; 2] = [&[1, 1, 1, 1, 1, 8], &[1; 6]];
        let next = kalah(KalahOptions::default(), rows, [0, 0], Player::South)
            .play(pit(6))
            .unwrap();
        assert_eq!(next.score(), [1, 0]);
        assert_eq!(next.row(Player::North), [2; 6]);
        assert_eq!(next.row(Player::South), [2, 1, 1, 1, 1, 0]);
    }

    #[test]
    fn immediate_end_sweeps_both_rows_when_either_empties() {
        let rows: [&[u8]; 2] = [&[0, 0, 0, 0, 0, 1], &[2, 0, 0, 0, 0, 3]];
        let next = kalah(KalahOptions::default(), rows, [20, 22], Player::South)
            .play(pit(6))
            .unwrap();
        // The last stone lands in the store (an extra turn), but South's row
        // is empty, so the game ends and North sweeps 5.
        assert_eq!(next.end_reason(), Some(EndReason::SideEmpty));
        assert_eq!(next.score(), [21, 27]);
        assert_eq!(next.row(Player::North), [0; 6]);
        assert_eq!(next.legal_moves(), PitSet::EMPTY);
    }

    #[test]
    fn on_turn_end_waits_for_the_player_to_move() {
        let options = KalahOptions::default().with_end(KalahEnd::OnTurn);
        // South empties their row but earns an extra turn: South is to move
        // with no stones, so the game ends and North sweeps.
        let rows: [&[u8]; 2] = [&[0, 0, 0, 0, 0, 1], &[2, 0, 0, 0, 0, 3]];
        let next = kalah(options, rows, [20, 22], Player::South)
            .play(pit(6))
            .unwrap();
        assert_eq!(next.end_reason(), Some(EndReason::NoStones));
        assert_eq!(next.score(), [21, 27]);

        // South empties their row and the turn passes: North still has
        // stones, so play goes on (under `immediate` it would end).
        let rows: [&[u8]; 2] = [&[0, 0, 0, 0, 0, 3], &[2, 0, 0, 0, 0, 3]];
        let start = kalah(options, rows, [20, 20], Player::South);
        let next = start.play(pit(6)).unwrap();
        assert_eq!(next.end_reason(), None);
        assert_eq!(next.turn(), Player::North);
        assert_eq!(next.row(Player::North), [3, 1, 0, 0, 0, 3]);
        let immediate = kalah(KalahOptions::default(), rows, [20, 20], Player::South);
        let ended = immediate.play(pit(6)).unwrap();
        assert_eq!(ended.end_reason(), Some(EndReason::SideEmpty));
        assert_eq!(ended.score(), [21, 27]);
    }

    #[test]
    fn small_boards_use_their_own_ring() {
        let options = KalahOptions::new(2, 1).unwrap();
        let start = Kalah::new(options);
        assert_eq!(start.row(Player::South), [1, 1, 0, 0, 0, 0]);
        assert_eq!(start.pits_per_side(), 2);
        // Pit 2 with one stone reaches the store: extra turn.
        let next = start.play(pit(2)).unwrap();
        assert_eq!(next.turn(), Player::South);
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
