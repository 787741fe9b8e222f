//! Small value types shared by every variant: players, pits, move sets,
//! errors and outcomes.

use std::fmt;

/// One of the two players. South moves first in every new game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(into = "u8", try_from = "u8"))]
pub enum Side {
    /// Side 0, who moves first.
    South = 0,
    /// Side 1.
    North = 1,
}

impl Side {
    /// Both players, South first.
    pub const BOTH: [Side; 2] = [Side::South, Side::North];

    /// 0 for South, 1 for North: the index into `[_; 2]` arrays.
    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The other player.
    #[inline]
    #[must_use]
    pub const fn opponent(self) -> Side {
        match self {
            Side::South => Side::North,
            Side::North => Side::South,
        }
    }
}

impl From<Side> for u8 {
    fn from(player: Side) -> u8 {
        player as u8
    }
}

impl TryFrom<u8> for Side {
    type Error = InvalidSide;
    fn try_from(value: u8) -> Result<Self, Self::Error> {
        match value {
            0 => Ok(Side::South),
            1 => Ok(Side::North),
            other => Err(InvalidSide(other)),
        }
    }
}

/// A player number other than 0 or 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("player must be 0 or 1, got {0}")]
pub struct InvalidSide(pub u8);

/// A pit number 1..=6, counted from the mover's own left.
///
/// A board with fewer pits (Kalah analysis boards) rejects the higher numbers
/// when the move is played, with [`PlayError::PitOutOfRange`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(into = "u8", try_from = "u8"))]
pub struct Pit(u8);

impl Pit {
    /// The largest pit number of any board.
    pub const MAX: u8 = 6;

    /// Pits 1 to 6, in order.
    pub const ALL: [Pit; 6] = [Pit(1), Pit(2), Pit(3), Pit(4), Pit(5), Pit(6)];

    /// Parses a pit number, rejecting anything outside 1..=6.
    pub const fn new(number: u8) -> Result<Pit, PlayError> {
        if number >= 1 && number <= Pit::MAX {
            Ok(Pit(number))
        } else {
            Err(PlayError::PitOutOfRange {
                pit: number,
                pits: Pit::MAX,
            })
        }
    }

    /// The pit number, 1..=6.
    #[inline]
    pub const fn get(self) -> u8 {
        self.0
    }

    /// The pit's offset within its owner's row, 0..=5.
    #[inline]
    pub(crate) const fn offset(self) -> usize {
        (self.0 - 1) as usize
    }

    #[inline]
    pub(crate) const fn from_offset(offset: usize) -> Pit {
        Pit(offset as u8 + 1)
    }
}

impl From<Pit> for u8 {
    fn from(pit: Pit) -> u8 {
        pit.0
    }
}

impl TryFrom<u8> for Pit {
    type Error = PlayError;
    fn try_from(value: u8) -> Result<Self, Self::Error> {
        Pit::new(value)
    }
}

impl fmt::Display for Pit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// The legal moves of a position: a set of pits held in one byte, so that
/// generating and counting moves never allocates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PitSet(u8);

impl PitSet {
    /// The empty set.
    pub const EMPTY: PitSet = PitSet(0);

    #[inline]
    pub(crate) const fn from_bits(bits: u8) -> PitSet {
        PitSet(bits)
    }

    /// Bit `k - 1` is set when pit `k` is in the set.
    #[inline]
    pub const fn bits(self) -> u8 {
        self.0
    }

    /// How many pits the set holds.
    #[inline]
    pub const fn len(self) -> usize {
        self.0.count_ones() as usize
    }

    /// Whether the set holds no pit.
    #[inline]
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Whether `pit` is in the set.
    #[inline]
    pub const fn contains(self, pit: Pit) -> bool {
        self.0 & (1 << pit.offset()) != 0
    }

    /// The lowest pit of the set, if any.
    #[inline]
    pub const fn first(self) -> Option<Pit> {
        if self.0 == 0 {
            None
        } else {
            Some(Pit::from_offset(self.0.trailing_zeros() as usize))
        }
    }
}

impl Iterator for PitSet {
    type Item = Pit;

    #[inline]
    fn next(&mut self) -> Option<Pit> {
        let pit = self.first()?;
        self.0 &= self.0 - 1;
        Some(pit)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        // Not `self.len()`: on `&Self` that resolves to
        // `ExactSizeIterator::len`, which calls back here.
        let len = self.0.count_ones() as usize;
        (len, Some(len))
    }
}

impl ExactSizeIterator for PitSet {}

impl FromIterator<Pit> for PitSet {
    fn from_iter<I: IntoIterator<Item = Pit>>(iter: I) -> Self {
        PitSet(
            iter.into_iter()
                .fold(0, |bits, pit| bits | 1 << pit.offset()),
        )
    }
}

/// Why a move cannot be played. The position it was tried on is unchanged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlayError {
    /// The pit number is not one of the mover's pits (1..=`pits`).
    #[error("pit {pit} is out of range: pits are numbered 1..={pits}")]
    PitOutOfRange { pit: u8, pits: u8 },
    /// The pit holds no stones.
    #[error("pit {pit} is empty")]
    EmptyPit { pit: u8 },
    /// Oware: the opponent has no seeds and this move gives them none, while
    /// another move would.
    #[error("pit {pit} does not feed the opponent, and another move would")]
    MustFeed { pit: u8 },
    /// The game has ended.
    #[error("the game is over")]
    GameOver,
}

impl PlayError {
    /// A stable snake_case name for the error, for wire protocols and logs.
    pub const fn code(&self) -> &'static str {
        match self {
            PlayError::PitOutOfRange { .. } => "pit_out_of_range",
            PlayError::EmptyPit { .. } => "empty_pit",
            PlayError::MustFeed { .. } => "must_feed",
            PlayError::GameOver => "game_over",
        }
    }
}

/// A set-up position that no game of its variant could reach.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PositionError {
    /// Stones are not conserved: the board, stores and tallies must hold
    /// exactly the variant's stones.
    #[error("the position holds {found} stones; the variant has {expected}")]
    StoneCount { found: u32, expected: u32 },
}

/// Why a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
#[repr(u8)]
pub enum EndReason {
    /// Kalah (`end = immediate`): all pits of one side are empty after a move.
    SideEmpty = 1,
    /// Kalah (`end = on_turn`) and Oware rule (b): the player to move has no
    /// stones in their pits.
    NoStones = 2,
    /// Oware rule (a): a player has captured 25 or more.
    Majority = 3,
    /// Oware rule (c): the player to move must feed an empty opponent and no
    /// move can.
    CannotFeed = 4,
    /// Oware rule (d) and Mangala: a position occurred for the third time.
    Repetition = 5,
    /// Mangala: every hole is empty.
    BoardEmpty = 6,
}

impl EndReason {
    pub(crate) const fn from_code(code: u8) -> Option<EndReason> {
        match code {
            1 => Some(EndReason::SideEmpty),
            2 => Some(EndReason::NoStones),
            3 => Some(EndReason::Majority),
            4 => Some(EndReason::CannotFeed),
            5 => Some(EndReason::Repetition),
            6 => Some(EndReason::BoardEmpty),
            _ => None,
        }
    }

    /// A stable snake_case name, for wire protocols and records.
    pub const fn as_str(self) -> &'static str {
        match self {
            EndReason::SideEmpty => "side_empty",
            EndReason::NoStones => "no_stones",
            EndReason::Majority => "majority",
            EndReason::CannotFeed => "cannot_feed",
            EndReason::Repetition => "repetition",
            EndReason::BoardEmpty => "board_empty",
        }
    }
}

/// Who won a finished game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Winner {
    /// One player has more stones.
    Player(Side),
    /// Equal scores.
    Draw,
}

/// The end of a game: who won, the final score and why it ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Outcome {
    /// The winner, or a draw.
    pub winner: Winner,
    /// Final stones in each store (Kalah) or captured (Oware, Mangala),
    /// indexed by [`Side::index`].
    pub score: [u8; 2],
    /// Which rule ended the game.
    pub reason: EndReason,
}

impl Outcome {
    pub(crate) fn from_score(score: [u8; 2], reason: EndReason) -> Outcome {
        let winner = match score[0].cmp(&score[1]) {
            std::cmp::Ordering::Greater => Winner::Player(Side::South),
            std::cmp::Ordering::Less => Winner::Player(Side::North),
            std::cmp::Ordering::Equal => Winner::Draw,
        };
        Outcome {
            winner,
            score,
            reason,
        }
    }

    /// `"p0"`, `"p1"` or `"draw"`, as the CLI and the wire protocol print it.
    pub const fn result_str(&self) -> &'static str {
        match self.winner {
            Winner::Player(Side::South) => "p0",
            Winner::Player(Side::North) => "p1",
            Winner::Draw => "draw",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pit_parsing_accepts_exactly_one_to_six() {
        assert!(Pit::new(0).is_err());
        assert!(Pit::new(7).is_err());
        assert_eq!((1..=6).filter_map(|n| Pit::new(n).ok()).count(), 6);
    }

    #[test]
    fn pit_set_iterates_in_pit_order() {
        let set: PitSet = [5, 1, 3]
            .into_iter()
            .filter_map(|n| Pit::new(n).ok())
            .collect();
        let pits: Vec<u8> = set.map(Pit::get).collect();
        assert_eq!(pits, [1, 3, 5]);
        assert_eq!(set.len(), 3);
        assert!(set.contains(Pit::new(3).unwrap()));
        assert!(!set.contains(Pit::new(2).unwrap()));
    }

    #[test]
    fn end_reason_codes_round_trip() {
        for code in 1..=6 {
            let reason = EndReason::from_code(code).unwrap();
            assert_eq!(reason as u8, code);
        }
        assert_eq!(EndReason::from_code(0), None);
        assert_eq!(EndReason::from_code(7), None);
    }
}
