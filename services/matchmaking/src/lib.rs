//! The matchmaking service: the front door. Accounts and sessions (guests,
//! registration, login, refresh tokens), the lobby socket with ranked
//! queues and the AI fallback, games against the AI and on one device,
//! friend invites, and lobby stats.

pub(crate) mod accounts;
pub mod app;
pub mod config;
pub mod context;
pub(crate) mod fair_play;
pub(crate) mod game_room_client;
pub(crate) mod games;
pub(crate) mod invites;
pub(crate) mod limits;
pub(crate) mod lobby;
pub mod moderation;
pub mod openapi;
pub(crate) mod pairer;
pub mod queue;
pub(crate) mod ratings;
pub(crate) mod stats;
pub mod tournament;

pub use app::{Application, Matchmaking};
pub use config::{AccountSettings, MatchSettings};

/// Every setting the `matchmaking` binary reads.
pub fn declaration() -> mancala_platform::cli::Declaration {
    mancala_platform::cli::Declaration::new("matchmaking", "Mancala Arena's matchmaking service")
        .with::<mancala_platform::Settings>()
        .with::<AccountSettings>()
        .with::<MatchSettings>()
}

pub use moderation::{GrantError, grant_role, staff};
