//! The rating service: Glicko-2 per variant, applied exactly once per rated
//! game from game-room's outbox; leaderboards (ranks in Redis, rebuilt from
//! Postgres); player profiles and rating history.

pub mod app;
pub mod config;
pub mod glicko;
pub mod leaderboard;
pub mod openapi;
pub mod routes;
pub mod worker;

pub use app::{Application, RatingService};
pub use config::RatingSettings;
