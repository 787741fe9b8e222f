//! A game: a position plus the history that the repetition rule needs, and
//! the record (variant and moves) that replays it.

use crate::position::Position;
use crate::types::{Outcome, Pit, PlayError};
use crate::variant::{AnyPosition, FromAny, Variant};

/// Every position of a game, the start first, each with the index where its
/// capture-free stretch begins.
///
/// Only positions inside one stretch can be equal: a capture changes the
/// tallies, which are part of the position. So the third-occurrence rule
/// scans the current stretch only.
#[derive(Clone, Debug)]
pub(crate) struct History<P> {
    entries: Vec<(P, usize)>,
}

impl<P: Position> History<P> {
    pub(crate) fn new(start: P) -> History<P> {
        History {
            entries: vec![(start, 0)],
        }
    }

    pub(crate) fn current(&self) -> &P {
        // Never empty: `new` pushes the start and `pop` keeps it.
        &self.entries[self.entries.len() - 1].0
    }

    /// Appends the position a move led to, ending the game when that
    /// position now occurs for the third time, and returns it.
    pub(crate) fn push(&mut self, next: P) -> P {
        let (previous, stretch) = self.entries[self.entries.len() - 1];
        let stretch = if next.score() == previous.score() {
            stretch
        } else {
            self.entries.len()
        };
        let mut next = next;
        if next.can_repeat() && !next.is_over() {
            let earlier = self.entries[stretch..]
                .iter()
                .filter(|(seen, _)| *seen == next)
                .count();
            if earlier >= 2 {
                next = next.end_by_repetition();
            }
        }
        self.entries.push((next, stretch));
        next
    }

    /// Drops the last position, never the start. Returns whether it did.
    pub(crate) fn pop(&mut self) -> bool {
        if self.entries.len() > 1 {
            self.entries.pop();
            true
        } else {
            false
        }
    }

    fn start(&self) -> &P {
        &self.entries[0].0
    }
}

/// A game in progress or finished: the authoritative way to apply moves,
/// because it applies every rule, the repetition rule included.
#[derive(Clone, Debug)]
pub struct Game<P: Position = AnyPosition> {
    history: History<P>,
    moves: Vec<Pit>,
}

impl<P: Position> Game<P> {
    /// A game from `start`.
    pub fn new(start: P) -> Game<P> {
        Game {
            history: History::new(start),
            moves: Vec::new(),
        }
    }

    /// The current position.
    pub fn position(&self) -> &P {
        self.history.current()
    }

    /// The position the game started from.
    pub fn start(&self) -> &P {
        self.history.start()
    }

    /// The moves played so far; an extra turn is a move of its own.
    pub fn moves(&self) -> &[Pit] {
        &self.moves
    }

    /// The number of moves played: the ply of the last move.
    pub fn ply(&self) -> usize {
        self.moves.len()
    }

    /// Plays a move. An illegal move changes nothing.
    pub fn play(&mut self, pit: Pit) -> Result<&P, PlayError> {
        let next = self.position().play(pit)?;
        self.moves.push(pit);
        self.history.push(next);
        Ok(self.position())
    }

    /// Takes back the last move, returning it; `None` at the start.
    pub fn undo(&mut self) -> Option<Pit> {
        if self.history.pop() {
            self.moves.pop()
        } else {
            None
        }
    }

    /// The result, once the game has ended.
    pub fn outcome(&self) -> Option<Outcome> {
        self.position().outcome()
    }

    pub(crate) fn history(&self) -> &History<P> {
        &self.history
    }
}

impl Game<AnyPosition> {
    /// A new game of `variant` from its starting position.
    pub fn from_variant(variant: Variant) -> Game {
        Game::new(variant.start())
    }

    /// The rule set.
    pub fn variant(&self) -> Variant {
        self.start().variant()
    }

    /// The same game over its variant's own position type, which skips the
    /// run-time dispatch in hot loops; `None` when the variant is not `P`.
    pub fn concrete<P: FromAny>(&self) -> Option<Game<P>> {
        let mut game = Game::new(P::from_any(self.start())?);
        for &pit in &self.moves {
            game.play(pit).ok()?;
        }
        Some(game)
    }

    /// The record that replays this game: its variant and its moves.
    pub fn record(&self) -> Record {
        Record {
            variant: self.variant(),
            moves: self.moves.clone(),
        }
    }
}

/// A game record: the variant with its options and the moves from the start.
/// Forced passes are not moves; replaying applies them.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct Record {
    /// The rule set and its options.
    pub variant: Variant,
    /// The moves, first to last.
    pub moves: Vec<Pit>,
}

/// A record that does not replay: the move at `ply` (1-based) is illegal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("move {ply} is illegal: {error}")]
pub struct ReplayError {
    /// The 1-based number of the offending move.
    pub ply: usize,
    /// Why it is illegal.
    pub error: PlayError,
}

impl Record {
    /// Replays the record from the variant's starting position.
    pub fn replay(&self) -> Result<Game, ReplayError> {
        let mut game = Game::from_variant(self.variant);
        for (index, &pit) in self.moves.iter().enumerate() {
            game.play(pit).map_err(|error| ReplayError {
                ply: index + 1,
                error,
            })?;
        }
        Ok(game)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{EndReason, Mangala, Oware, Side};

    fn pits(numbers: &[u8]) -> Vec<Pit> {
        numbers.iter().map(|&n| Pit::new(n).unwrap()).collect()
    }

    #[test]
    fn replaying_a_record_reproduces_the_game() {
        let mut game = Game::from_variant(Variant::Kalah(Default::default()));
        for pit in pits(&[3, 6, 1, 2]) {
            game.play(pit).unwrap();
        }
        let replayed = game.record().replay().unwrap();
        assert_eq!(replayed.position(), game.position());
        assert_eq!(replayed.moves(), game.moves());
    }

    #[test]
    fn an_illegal_move_names_its_ply_and_changes_nothing() {
        let record = Record {
            variant: Variant::Kalah(Default::default()),
            moves: pits(&[3, 3]),
        };
        assert_eq!(
            record.replay().unwrap_err(),
            ReplayError {
                ply: 2,
                error: PlayError::EmptyPit { pit: 3 }
            }
        );
        let mut game = Game::from_variant(Variant::Oware);
        let before = *game.position();
        game.play(Pit::new(1).unwrap()).unwrap();
        let after = *game.position();
        assert!(
            game.play(Pit::new(1).unwrap()).is_ok(),
            "North's pit 1 is full"
        );
        game.undo();
        assert_eq!(*game.position(), after);
        assert_eq!(game.undo(), Some(Pit::new(1).unwrap()));
        assert_eq!(*game.position(), before);
        assert_eq!(game.undo(), None);
    }

    #[test]
    fn mangala_ends_on_the_third_occurrence() {
        // A lone stone goes round the ring for ever, never making 2: each
        // side sows it along its own row, and the positions recur.
        let start =
            Mangala::from_parts([[1, 0, 0, 0, 0, 0], [0; 6]], [35, 36], Side::South).unwrap();
        let mut game = Game::new(start);
        let mut plies = 0;
        while game.outcome().is_none() {
            let pit = game.position().legal_moves().first().unwrap();
            game.play(pit).unwrap();
            plies += 1;
            assert!(plies < 200, "the repetition rule must end the game");
        }
        // Twelve positions make a cycle; the start recurs for the third
        // time after two cycles.
        assert_eq!(plies, 24);
        assert_eq!(game.position().end_by_repetition(), *game.position());
        let outcome = game.outcome().unwrap();
        assert_eq!(outcome.reason, EndReason::Repetition);
        assert_eq!(outcome.score.iter().map(|&s| u32::from(s)).sum::<u32>(), 72);
        // The final position is the third occurrence of one seen twice.
        let last_open = game.history().entries[game.history().entries.len() - 2].0;
        assert!(!last_open.is_over());
    }

    #[test]
    fn oware_ends_on_the_third_occurrence() {
        let start = Oware::from_parts(
            [[0, 0, 0, 0, 0, 1], [0, 0, 0, 0, 0, 1]],
            [23, 23],
            Side::South,
        )
        .unwrap();
        let mut game = Game::new(start);
        let mut positions = vec![*game.position()];
        while game.outcome().is_none() {
            let pit = game.position().legal_moves().first().unwrap();
            game.play(pit).unwrap();
            positions.push(*game.position());
            assert!(
                positions.len() < 500,
                "the repetition rule must end the game"
            );
        }
        assert_eq!(game.outcome().unwrap().reason, EndReason::Repetition);
        // Before the end, no position had been seen three times.
        let open = &positions[..positions.len() - 1];
        for position in open {
            assert!(open.iter().filter(|p| *p == position).count() <= 2);
        }
        assert_eq!(game.outcome().unwrap().score, [24, 24]);
    }
}
