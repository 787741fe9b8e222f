//! The rating service against the real Postgres and Redis (a fresh
//! database and key prefix per test) under a manual clock.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod helpers;

mod leaderboards;
mod once;
mod replay;
