//! AI players for Kalah, Oware and Mangala II, and an exact Kalah solver.
//!
//! Pure like the rules crate: no IO, no clock, and randomness only from the
//! seed a caller gives. A search is bounded by a [`Budget`]: a node count
//! (reproducible) or a stop flag the caller trips at its own deadline.
//!
//! **Callers must not run a search on an async runtime's worker threads.**
//! A move takes up to a few hundred milliseconds of CPU; services run it on
//! the blocking pool (`tokio::task::spawn_blocking`) and trip the budget's
//! stop flag when their deadline passes.
//!
//! ```
//! use mancala_ai::{Ai, Chooser, Level};
//! use mancala_rules::{Game, Kalah, Position};
//!
//! let game = Game::new(Kalah::default());
//! let mut ai = Ai::<Kalah>::new(Level::Advanced, 7).unwrap();
//! let decision = ai.choose(&game, &Level::Advanced.default_budget()).unwrap();
//! assert!(game.position().legal_moves().contains(decision.pit));
//! ```

mod analysis;
mod any;
mod book;
mod budget;
mod calibration;
mod endgame;
mod eval;
mod player;
mod rank;
mod search;
mod solver;
mod table;

pub use analysis::{AnalysisPlan, MoveReview, Verdict, analyse};
pub use any::AnyAi;
pub use book::{Book, BookEntry, BookError, BookMove};
pub use budget::Budget;
pub use calibration::{level_near, rating};
pub use endgame::{Endgame, EndgameFileError, HEADER_BYTES, Inconsistency, PendingEndgame};
pub use eval::{Evaluate, SCALE};
pub use player::{Ai, Chooser, Decision, Level, LevelUnavailable, UnknownLevel};
pub use search::{SearchResult, Searcher};
pub use solver::{Partial, Progress, ProofTables, Solution, Solver, SolverCache, SolverTable};
