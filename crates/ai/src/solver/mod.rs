//! The exact Kalah solver: MTD(f) over the final stone difference, with a
//! transposition table keyed on the pits alone, futility bounds and move
//! ordering that tries extra turns first (after "Solving Kalah", Irving,
//! Donkers and Uiterwijk, 2000).
//!
//! A position's stores never change how it plays out, only the final score,
//! so the solver works with the *gain*: the final store difference minus the
//! current one, for the player to move. Positions that differ only in their
//! stores share one table entry, and the gain is bounded by the stones left
//! in the pits, which cuts off hopeless lines at once.

use std::sync::Arc;

use mancala_rules::{Game, Kalah, Pit, Position, Side};
use rand_xoshiro::Xoshiro256PlusPlus;
use rand_xoshiro::rand_core::Rng;

use crate::budget::Budget;
use crate::endgame::Endgame;
use crate::eval::SCALE;
use crate::player::Decision;
use crate::rank::Ranks;

mod board;
mod search;
mod table;

pub(crate) use board::{Board, Rules};
use search::Search;
pub use table::SolverTable;

/// A solved position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Solution {
    /// South's final store minus North's under perfect play.
    pub value: i32,
    /// Every move of the player to move that achieves `value`, lowest pit
    /// first. Empty when the game is over.
    pub best: Vec<Pit>,
    /// Nodes visited.
    pub nodes: u64,
}

/// What a proof that ran out of budget had shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Partial {
    /// A move of the player to move and the final store difference, for
    /// that player, that it was proved to reach at least.
    pub proven: Option<(Pit, i32)>,
    /// Nodes visited.
    pub nodes: u64,
}

/// Where a solve stands: `lower <= value <= upper` for the player to move's
/// gain, after `nodes` nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    pub lower: i32,
    pub upper: i32,
    pub nodes: u64,
}

/// An exact Kalah solver. Keep one for a whole game, or share one table
/// between every solver of a process ([`Solver::sharing`]): what one proof
/// learns makes the next one cheap.
#[derive(Clone, Debug)]
pub struct Solver {
    table: Option<Arc<SolverTable>>,
    /// Bytes of the table this solver makes when it has none (or none for
    /// the rules of the position it is asked about).
    table_bytes: usize,
    ranks: Option<Ranks>,
    /// Shared: one table serves every solver of a process.
    endgame: Option<Arc<Endgame>>,
}

impl Solver {
    /// Table memory of the `mancala solve` command unless told otherwise.
    pub const DEFAULT_TABLE_BYTES: usize = 1 << 30;

    /// A solver with a table of its own of about `table_bytes` bytes, made
    /// on its first proof (for that position's rules).
    pub fn new(table_bytes: usize) -> Solver {
        Solver {
            table: None,
            table_bytes,
            ranks: None,
            endgame: None,
        }
    }

    /// A solver that uses `table`, which other solvers may share, for
    /// positions of its rules (and a table of its own of the same size for
    /// any others).
    pub fn sharing(table: Arc<SolverTable>) -> Solver {
        Solver {
            table_bytes: table.bytes(),
            table: Some(table),
            ranks: None,
            endgame: None,
        }
    }

    /// Bytes held by the transposition table.
    pub fn table_bytes(&self) -> usize {
        self.table.as_ref().map_or(0, |table| table.bytes())
    }

    /// This solver, answering positions with few stones left from an
    /// endgame table instead of searching them.
    #[must_use]
    pub fn with_endgame(mut self, endgame: impl Into<Arc<Endgame>>) -> Solver {
        self.endgame = Some(endgame.into());
        self
    }

    /// Solves `position`, or returns `None` when the budget runs out first.
    pub fn solve(&mut self, position: &Kalah, budget: &Budget) -> Option<Solution> {
        self.solve_with_progress(position, budget, |_| {})
    }

    /// [`Solver::solve`], reporting after each narrowing of the bounds and
    /// every 2^24 nodes.
    pub fn solve_with_progress(
        &mut self,
        position: &Kalah,
        budget: &Budget,
        progress: impl FnMut(Progress),
    ) -> Option<Solution> {
        self.prove_with_progress(position, None, budget, progress)
            .ok()
    }

    /// Solves `position`, starting from `guess` (the final store
    /// difference expected for the player to move, say a search's
    /// estimate); when the budget runs out first, says what it had proved.
    pub fn prove(
        &mut self,
        position: &Kalah,
        guess: Option<i32>,
        budget: &Budget,
    ) -> Result<Solution, Partial> {
        self.prove_with_progress(position, guess, budget, |_| {})
    }

    fn prove_with_progress(
        &mut self,
        position: &Kalah,
        guess: Option<i32>,
        budget: &Budget,
        progress: impl FnMut(Progress),
    ) -> Result<Solution, Partial> {
        let score = position.score();
        let me = position.turn();
        // The mover's store difference now: gains are what is still to come.
        let now = i32::from(score[me.index()]) - i32::from(score[me.opponent().index()]);
        let sign = if me == Side::South { 1 } else { -1 };
        if position.is_over() {
            return Ok(Solution {
                value: sign * now,
                best: vec![],
                nodes: 0,
            });
        }
        let guess = guess.map(|value| value - now);
        let proof = match position.options().pits() {
            1 => self.prove_board::<1>(position, guess, budget, progress),
            2 => self.prove_board::<2>(position, guess, budget, progress),
            3 => self.prove_board::<3>(position, guess, budget, progress),
            4 => self.prove_board::<4>(position, guess, budget, progress),
            5 => self.prove_board::<5>(position, guess, budget, progress),
            _ => self.prove_board::<6>(position, guess, budget, progress),
        };
        let pit = |offset: usize| Pit::new(offset as u8 + 1).ok();
        match proof {
            Ok((gain, best, nodes)) => Ok(Solution {
                value: sign * (now + gain),
                best: best.into_iter().filter_map(pit).collect(),
                nodes,
            }),
            Err((proven, nodes)) => Err(Partial {
                proven: proven.and_then(|(offset, gain)| Some((pit(offset)?, now + gain))),
                nodes,
            }),
        }
    }

    /// The gain of `position` (not over), its best moves as offsets and the
    /// nodes spent, on a board of `P` pits a side; or what it proved when
    /// the budget ran out (a move's offset and the gain it reaches at least)
    /// and the nodes spent.
    fn prove_board<const P: usize>(
        &mut self,
        position: &Kalah,
        guess: Option<i32>,
        budget: &Budget,
        progress: impl FnMut(Progress),
    ) -> BoardProof {
        let options = position.options();
        let table = match &self.table {
            Some(table) if table.covers(options) => table.clone(),
            _ => {
                let table = Arc::new(SolverTable::new(options, self.table_bytes));
                self.table = Some(table.clone());
                table
            }
        };
        let ranks = match self.ranks.take() {
            Some(ranks) if ranks.covers(options) => ranks,
            _ => Ranks::new(options.pits()),
        };
        let endgame = self
            .endgame
            .as_deref()
            .filter(|endgame| endgame.covers(options))
            .map_or(&[][..], Endgame::values);
        let mut search = Search::<_, P> {
            table: &table,
            ranks: &ranks,
            rules: Rules::of(options),
            endgame,
            budget,
            progress,
            nodes: 0,
            aborted: false,
        };
        let solved = search.solve(Board::of(position), guess);
        let nodes = search.nodes;
        self.ranks = Some(ranks);
        solved
            .map(|(gain, best)| (gain, best, nodes))
            .map_err(|proven| (proven, nodes))
    }
}

/// A proof on the solver's board: the gain, the best moves' offsets and the
/// nodes; or, when the budget ran out, a move's offset with the gain it
/// was proved to reach, and the nodes.
type BoardProof = Result<(i32, Vec<usize>, u64), (search::Proven, u64)>;

/// The Kalah tables a process's proofs share: the solver's transposition
/// table and the endgame table. Cloning shares them.
#[derive(Clone, Debug, Default)]
pub struct ProofTables {
    /// Bounds every proof adds to and reads.
    pub table: Option<Arc<SolverTable>>,
    /// Exact gains of positions with few stones left.
    pub endgame: Option<Arc<Endgame>>,
}

impl ProofTables {
    /// A solver proving with these tables (a table of its own of `bytes`
    /// when none is shared).
    pub fn solver(&self, bytes: usize) -> Solver {
        let solver = match &self.table {
            Some(table) => Solver::sharing(table.clone()),
            None => Solver::new(bytes),
        };
        match &self.endgame {
            Some(endgame) => solver.with_endgame(endgame.clone()),
            None => solver,
        }
    }

    fn same(&self, other: &ProofTables) -> bool {
        fn same<T>(a: &Option<Arc<T>>, b: &Option<Arc<T>>) -> bool {
            match (a, b) {
                (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                (None, None) => true,
                _ => false,
            }
        }
        same(&self.table, &other.table) && same(&self.endgame, &other.endgame)
    }
}

/// The solver of a `Perfect` AI, made on its first proof: only Kalah ever
/// has one.
#[derive(Debug, Default)]
pub struct SolverCache {
    solver: Option<Solver>,
    tables: ProofTables,
}

impl SolverCache {
    /// Table memory of a playing `Perfect` AI that shares no table.
    pub const TABLE_BYTES: usize = 24 << 20;

    /// Bytes held of its own: nothing until the first proof, and nothing
    /// while it shares the process's table.
    pub fn bytes(&self) -> usize {
        match (&self.solver, &self.tables.table) {
            (Some(solver), None) => solver.table_bytes(),
            _ => 0,
        }
    }

    /// Proves with `tables` (shared with the process's other AIs) from the
    /// next proof on.
    pub fn share(&mut self, tables: &ProofTables) {
        if !self.tables.same(tables) {
            self.tables = tables.clone();
            self.solver = None;
        }
    }

    /// The tables it proves with.
    pub fn tables(&self) -> &ProofTables {
        &self.tables
    }

    pub(crate) fn solver(&mut self) -> &mut Solver {
        let tables = &self.tables;
        self.solver
            .get_or_insert_with(|| tables.solver(SolverCache::TABLE_BYTES))
    }
}

/// A perfect move for a Kalah game: the opening book's when it has the
/// position, else a proof's (started from `estimate`, a search's value of
/// the position for the player to move, in 1/[`SCALE`] stones), chosen at
/// random among the best. When the budget runs out before the proof: the
/// move the proof had shown to reach the most (not exact), or `None` when
/// it had shown none.
pub(crate) fn perfect_kalah_move(
    game: &Game<Kalah>,
    cache: &mut SolverCache,
    budget: &Budget,
    rng: &mut Xoshiro256PlusPlus,
    estimate: i32,
) -> Option<Decision> {
    let position = game.position();
    let sign = if position.turn() == Side::South {
        1
    } else {
        -1
    };
    if let Some(known) = crate::book::Book::standard().lookup(position) {
        // The book follows one line of its own moves: play that one, or
        // the next position would be off the book.
        return Some(Decision {
            pit: known.played,
            value: sign * known.value * SCALE,
            depth: 0,
            nodes: 0,
            exact: true,
        });
    }
    // Just under the estimate, so that the proof climbs (see `Search::gain`).
    let guess = estimate.div_euclid(SCALE) - 1;
    match cache.solver().prove(position, Some(guess), budget) {
        Ok(solution) => {
            if solution.best.is_empty() {
                return None;
            }
            let pit = solution.best[(rng.next_u64() % solution.best.len() as u64) as usize];
            Some(Decision {
                pit,
                value: sign * solution.value * SCALE,
                depth: 0,
                nodes: solution.nodes,
                exact: true,
            })
        }
        Err(partial) => partial.proven.map(|(pit, at_least)| Decision {
            pit,
            value: at_least * SCALE,
            depth: 0,
            nodes: partial.nodes,
            exact: false,
        }),
    }
}
