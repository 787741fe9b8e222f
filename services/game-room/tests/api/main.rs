//! Game-room end to end: the real server on a free port (two of them where
//! instances matter), real WebSocket clients, the real Postgres and Redis
//! with a fresh database and key prefix per test, and a manual clock.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod helpers;

mod analysis;
mod bad_input;
mod failover;
mod history;
mod life;
mod play;
mod ranked;
mod records;
mod spectate;
