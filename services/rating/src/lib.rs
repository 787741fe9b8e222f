//! The rating service: Glicko-2 per variant, applied exactly once per rated
//! game from game-room's outbox; leaderboards (ranks in Redis, rebuilt from
//! Postgres); player profiles and rating history.

pub mod app;
pub mod boosting;
pub mod config;
pub mod context;
pub mod glicko;
pub mod leaderboard;
pub mod ledger;
pub mod openapi;
pub mod recompute;
pub mod replay;
pub(crate) mod routes;
pub mod worker;

pub use app::{Application, RatingService};
pub use config::RatingSettings;

/// Every setting the `rating` binary reads.
pub fn declaration() -> mancala_platform::cli::Declaration {
    mancala_platform::cli::Declaration::new("rating", "Mancala Arena's rating service")
        .with::<mancala_platform::Settings>()
        .with::<RatingSettings>()
}
