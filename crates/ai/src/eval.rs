//! What the search optimises: the final stone difference, and, where it
//! cannot see the end, a heuristic per variant in the same units.

use mancala_rules::{AnyPosition, Game, Kalah, Mangala, Oware, Position, Side};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::budget::Budget;
use crate::player::Decision;
use crate::solver::{SolverCache, perfect_kalah_move};

/// Evaluation units per stone: heuristic terms are fractions of a stone.
pub const SCALE: i32 = 16;

/// A variant the search can play: a position plus a heuristic value.
pub trait Evaluate: Position {
    /// The value of a position that is not over, for the player to move, in
    /// 1/[`SCALE`] stones: the score difference so far plus what the
    /// position promises.
    fn evaluate(&self) -> i32;

    /// Whether the variant has an exact solver, so `Level::Perfect` exists.
    const SOLVABLE: bool = false;

    /// A best move by exact solving within the budget (starting from
    /// `estimate`, a search's value for the player to move), or, when the
    /// budget runs out first, a move the proof showed to reach at least
    /// its value (not exact); `None` when it showed none or the variant has
    /// no solver.
    fn solve_move(
        _game: &Game<Self>,
        _cache: &mut SolverCache,
        _budget: &Budget,
        _rng: &mut Xoshiro256PlusPlus,
        _estimate: i32,
    ) -> Option<Decision> {
        None
    }
}

/// The exact value of a finished position for its player to move.
#[inline]
pub(crate) fn final_value<P: Position>(position: &P) -> i32 {
    let score = position.score();
    let me = position.turn().index();
    (i32::from(score[me]) - i32::from(score[1 - me])) * SCALE
}

fn side(position: &impl Position, player: Side) -> i32 {
    position
        .row(player)
        .iter()
        .map(|&stones| i32::from(stones))
        .sum()
}

impl Evaluate for Kalah {
    #[inline]
    fn evaluate(&self) -> i32 {
        let me = self.turn();
        // Stones on a side end in that side's store when the game ends, and
        // meanwhile are the side's to sow: worth a quarter stone each.
        final_value(self) + (side(self, me) - side(self, me.opponent())) * SCALE / 4
    }

    const SOLVABLE: bool = true;

    fn solve_move(
        game: &Game<Self>,
        cache: &mut SolverCache,
        budget: &Budget,
        rng: &mut Xoshiro256PlusPlus,
        estimate: i32,
    ) -> Option<Decision> {
        perfect_kalah_move(game, cache, budget, rng, estimate)
    }
}

impl Evaluate for Oware {
    #[inline]
    fn evaluate(&self) -> i32 {
        let me = self.turn();
        let them = me.opponent();
        // Pits of 1 or 2 seeds are what captures feed on.
        let exposed = |player: Side| {
            self.row(player)
                .iter()
                .filter(|&&seeds| seeds == 1 || seeds == 2)
                .count() as i32
        };
        final_value(self)
            + (side(self, me) - side(self, them)) * SCALE / 8
            + (exposed(them) - exposed(me)) * SCALE / 4
    }
}

impl Evaluate for Mangala {
    #[inline]
    fn evaluate(&self) -> i32 {
        let me = self.turn();
        // The stones of one's own row are one's own if the game ends by
        // repetition, and the material of the next captures.
        final_value(self) + (side(self, me) - side(self, me.opponent())) * SCALE / 8
    }
}

impl Evaluate for AnyPosition {
    fn evaluate(&self) -> i32 {
        match self {
            AnyPosition::Kalah(position) => position.evaluate(),
            AnyPosition::Oware(position) => position.evaluate(),
            AnyPosition::Mangala(position) => position.evaluate(),
        }
    }
}
