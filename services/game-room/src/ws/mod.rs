//! The game sockets: `/v1/games/{id}/play` for the seated players and
//! `/v1/games/{id}/watch` for anyone.

pub(crate) mod play;
pub(crate) mod snapshots;
pub(crate) mod socket;
pub(crate) mod watch;
