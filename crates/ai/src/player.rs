//! Players: a level, a seed and a searcher that together choose moves.

use std::fmt;
use std::str::FromStr;

use mancala_rules::{Game, Pit, Position};
use rand_xoshiro::Xoshiro256PlusPlus;
use rand_xoshiro::rand_core::{Rng, SeedableRng};

use crate::budget::Budget;
use crate::eval::{Evaluate, SCALE};
use crate::search::Searcher;
use crate::solver::SolverCache;

/// Anything that chooses moves: the AI levels here, or a test's scripted
/// player.
pub trait Chooser<P: Position> {
    /// A move for the player to move in the game's position, within the
    /// budget; `None` when the game is over.
    fn choose(&mut self, game: &Game<P>, budget: &Budget) -> Option<Decision>;
}

/// A chosen move and what the search thought of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decision {
    /// The move.
    pub pit: Pit,
    /// Its value for the player to move in 1/[`SCALE`] stones: the final
    /// stone difference when `exact`, a heuristic estimate otherwise.
    pub value: i32,
    /// Plies searched.
    pub depth: u32,
    /// Nodes visited.
    pub nodes: u64,
    /// Whether the value is the game's value under perfect play.
    pub exact: bool,
}

impl Decision {
    /// The value in stones.
    pub fn stones(&self) -> f64 {
        f64::from(self.value) / f64::from(SCALE)
    }
}

/// How strongly an AI plays.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Level {
    /// Looks one exchange ahead and misjudges by up to three stones: takes
    /// the big captures and extra turns, misses quieter threats.
    Beginner,
    /// Looks five plies ahead and misjudges by up to a stone.
    Intermediate,
    /// Searches as deep as its budget allows, and exactly to the end when
    /// few stones remain.
    Advanced,
    /// Kalah only: solves the position exactly and plays a best move; falls
    /// back to `Advanced` when the budget runs out before the proof.
    Perfect,
}

impl Level {
    /// Every level, weakest first.
    pub const ALL: [Level; 4] = [
        Level::Beginner,
        Level::Intermediate,
        Level::Advanced,
        Level::Perfect,
    ];

    /// Nodes an `Advanced` move may search by default: about 0.08 s on one
    /// core of the reference machine, well under the 300 ms target.
    pub const ADVANCED_NODES: u64 = 600_000;

    /// Nodes a `Perfect` move may spend on its proof by default, after an
    /// `Advanced` search that it falls back on: at most about 1.5 s of one
    /// core with a warm shared table, usually far less (positions off the
    /// opening book but a few moves in prove in a fraction of it).
    pub const PERFECT_NODES: u64 = 3_000_000;

    /// The lower-case name: `beginner`, `intermediate`, `advanced`, `perfect`.
    pub const fn name(self) -> &'static str {
        match self {
            Level::Beginner => "beginner",
            Level::Intermediate => "intermediate",
            Level::Advanced => "advanced",
            Level::Perfect => "perfect",
        }
    }

    /// The budget a move gets unless the caller gives one.
    pub fn default_budget(self) -> Budget {
        match self {
            // Fixed-depth levels: the cap only guards against pathological
            // positions.
            Level::Beginner | Level::Intermediate => Budget::nodes(2_000_000),
            Level::Advanced => Budget::nodes(Level::ADVANCED_NODES),
            Level::Perfect => Budget::nodes(Level::PERFECT_NODES),
        }
    }

    /// Plies looked ahead and the largest misjudgement, in 1/[`SCALE`]
    /// stones, of the levels that err on purpose.
    const fn fallible(self) -> Option<(u32, i32)> {
        match self {
            Level::Beginner => Some((2, 3 * SCALE)),
            Level::Intermediate => Some((5, SCALE)),
            Level::Advanced | Level::Perfect => None,
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A level name that is not one.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown level {0:?}: use beginner, intermediate, advanced or perfect")]
pub struct UnknownLevel(pub String);

impl FromStr for Level {
    type Err = UnknownLevel;
    fn from_str(text: &str) -> Result<Level, UnknownLevel> {
        Level::ALL
            .into_iter()
            .find(|level| level.name() == text)
            .ok_or_else(|| UnknownLevel(text.to_owned()))
    }
}

/// A level that this variant does not offer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("level {0} is not available for this game (only Kalah is solved)")]
pub struct LevelUnavailable(pub Level);

/// An AI player of one variant.
///
/// It keeps its transposition table between moves, so one `Ai` should play
/// one game. Its random choices come from the seed alone: the same seed,
/// budget (as a node count) and moves give the same game.
#[derive(Debug)]
pub struct Ai<P: Evaluate> {
    level: Level,
    rng: Xoshiro256PlusPlus,
    searcher: Searcher<P>,
    solver: SolverCache,
}

impl<P: Evaluate> Ai<P> {
    /// Table size of a playing AI: 2^18 entries, 4 MiB.
    pub const TABLE_BITS: u32 = 18;

    /// An AI of `level`, its choices drawn from `seed`.
    pub fn new(level: Level, seed: u64) -> Result<Ai<P>, LevelUnavailable> {
        if level == Level::Perfect && !P::SOLVABLE {
            return Err(LevelUnavailable(level));
        }
        Ok(Ai {
            level,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            searcher: Searcher::new(Ai::<P>::TABLE_BITS),
            solver: SolverCache::default(),
        })
    }

    /// Proves with `tables`, shared with the process's other AIs (only a
    /// `Perfect` AI proves anything).
    pub fn share(&mut self, tables: &crate::ProofTables) {
        self.solver.share(tables);
    }

    /// The tables its proofs use.
    pub fn proof_tables(&self) -> &crate::ProofTables {
        self.solver.tables()
    }

    /// The level.
    pub fn level(&self) -> Level {
        self.level
    }

    /// Draws the next choices from `seed`, as if new: an AI reused for
    /// another game (its tables warm) chooses as that game's seed says.
    pub fn reseed(&mut self, seed: u64) {
        self.rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    }

    /// Bytes held by its tables (the solver's once it has been used).
    pub fn bytes(&self) -> usize {
        self.searcher.table_bytes() + self.solver.bytes()
    }

    fn fallible_choice(
        &mut self,
        game: &Game<P>,
        depth: u32,
        error: i32,
        budget: &Budget,
    ) -> Option<Decision> {
        let mut values = self.searcher.root_values(game, depth, budget);
        if values.is_empty() {
            return None;
        }
        let mut best: Option<(Pit, i32, i32)> = None;
        for (pit, value) in values.drain(..) {
            let span = (2 * error + 1) as u64;
            let misjudged = value + (self.rng.next_u64() % span) as i32 - error;
            if best.is_none_or(|(_, _, top)| misjudged > top) {
                best = Some((pit, value, misjudged));
            }
        }
        best.map(|(pit, value, _)| Decision {
            pit,
            value,
            depth,
            nodes: 0,
            exact: false,
        })
    }
}

impl<P: Evaluate> Chooser<P> for Ai<P> {
    fn choose(&mut self, game: &Game<P>, budget: &Budget) -> Option<Decision> {
        if game.position().is_over() {
            return None;
        }
        if let Some((depth, error)) = self.level.fallible() {
            return self.fallible_choice(game, depth, error, budget);
        }
        // Perfect searches like Advanced first, so that it has a good move
        // even when the proof does not finish within the budget.
        let search_budget = match (self.level, budget.node_limit()) {
            (Level::Perfect, Some(limit)) => {
                budget.clone().with_nodes(limit.min(Level::ADVANCED_NODES))
            }
            (Level::Perfect, None) => budget.clone().with_nodes(Level::ADVANCED_NODES),
            _ => budget.clone(),
        };
        let found = self
            .searcher
            .search(game, u32::MAX, &search_budget, &mut self.rng)?;
        let searched = Decision {
            pit: found.best,
            value: found.value,
            depth: found.depth,
            nodes: found.nodes,
            exact: found.exact,
        };
        if self.level == Level::Perfect
            && !searched.exact
            && let Some(proved) = P::solve_move(
                game,
                &mut self.solver,
                budget,
                &mut self.rng,
                searched.value,
            )
        {
            return Some(Decision {
                nodes: proved.nodes + searched.nodes,
                ..proved
            });
        }
        Some(searched)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mancala_rules::{Kalah, Oware};

    #[test]
    fn levels_parse_and_print() {
        for level in Level::ALL {
            assert_eq!(level.name().parse::<Level>(), Ok(level));
        }
        assert!("grandmaster".parse::<Level>().is_err());
    }

    #[test]
    fn a_reseeded_ai_chooses_as_a_fresh_one() {
        let start = Game::new(Kalah::default());
        let mut played = Game::new(Kalah::default());
        played.play(Pit::new(1).unwrap()).unwrap();
        for level in [Level::Beginner, Level::Intermediate] {
            let budget = level.default_budget();
            let mut used = Ai::<Kalah>::new(level, 1).unwrap();
            used.choose(&played, &budget);
            used.reseed(99);
            let mut fresh = Ai::<Kalah>::new(level, 99).unwrap();
            for _ in 0..5 {
                assert_eq!(
                    used.choose(&start, &budget).map(|d| d.pit),
                    fresh.choose(&start, &budget).map(|d| d.pit),
                    "{level}"
                );
            }
        }
        let ai = Ai::<Kalah>::new(Level::Advanced, 1).unwrap();
        assert_eq!(ai.bytes(), 4 << 20);
    }

    #[test]
    fn perfect_play_is_offered_only_where_a_solver_exists() {
        assert!(Ai::<Kalah>::new(Level::Perfect, 1).is_ok());
        assert_eq!(
            Ai::<Oware>::new(Level::Perfect, 1).err(),
            Some(LevelUnavailable(Level::Perfect))
        );
    }
}
