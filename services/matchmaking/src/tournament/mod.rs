//! Arena tournaments (lichess's most played format): for a fixed time,
//! every present player who is not in a game is paired again at once with
//! a waiting player of near score; a win scores 2, a draw 1, wins in a row
//! count double after two, a berserk win one more. Scores are a fold over
//! the committed games (`scoring`), so the standings after a crash are the
//! same numbers read again. Scheduled arenas come from the operator's
//! file (`schedule`); registered players make private ones, joined by code.

pub(crate) mod board;
pub(crate) mod director;
pub(crate) mod live;
pub mod pairing;
pub(crate) mod routes;
pub mod schedule;
pub mod scoring;
pub mod standings;
pub mod store;
