//! The AI crate's integration tests.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

mod perfect;
mod players;
mod solver;
