//! The game sockets: `/v1/games/{id}/play` for the seated players and
//! `/v1/games/{id}/watch` for anyone.

pub mod play;
pub mod snapshots;
pub mod socket;
pub mod watch;
