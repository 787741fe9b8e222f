//! The accounts API end to end: the real server on a free port, over HTTP,
//! against the real Postgres and Redis, a fresh database and key prefix
//! per test, and a manual clock.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod helpers;
mod lobby_client;

mod accounts;
mod games;
mod limits;
mod plumbing;
mod queues;
mod tokens;
