//! What the rating service's parts share, built once at start-up
//! (`app.rs`) and handed down to the workers, the leaderboard and the
//! routes, which import it from here, below them.

use std::sync::Arc;

use mancala_platform::pubsub::PubSub;
use mancala_platform::{Clock, Redis};
use sqlx::PgPool;

use crate::config::RatingSettings;

/// The service's shared state; cheap to clone.
#[derive(Clone)]
pub struct Context {
    pub postgres: PgPool,
    /// Reads that may lag the primary (profiles, rating histories, the
    /// names on a leaderboard page): a replica's pool when one is
    /// configured, else `postgres`.
    pub reads: PgPool,
    pub redis: Redis,
    pub pubsub: PubSub,
    pub clock: Clock,
    pub settings: Arc<RatingSettings>,
}
