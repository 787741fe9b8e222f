//! The game-room service: live games over WebSocket. The server is the
//! authority: every move goes through the rules engine, into Postgres
//! (committed), and only then is acknowledged and broadcast. Any instance
//! can host any game (under a Redis lease) and anyone can watch from any
//! instance (events relayed through Redis pub/sub).

pub(crate) mod ai;
pub(crate) mod analysis;
pub mod app;
pub mod config;
pub mod context;
pub(crate) mod fair_share;
pub mod game;
pub(crate) mod hub;
pub mod lease;
pub(crate) mod lists;
pub mod openapi;
pub(crate) mod routes;
pub mod sentinel;
pub(crate) mod store;
pub(crate) mod ws;

pub use app::{Application, GameRoom};
pub use config::GameRoomSettings;

/// Every setting the `game-room` binary reads.
pub fn declaration() -> mancala_platform::cli::Declaration {
    mancala_platform::cli::Declaration::new("game-room", "Mancala Arena's game-room service")
        .with::<mancala_platform::Settings>()
        .with::<GameRoomSettings>()
}
