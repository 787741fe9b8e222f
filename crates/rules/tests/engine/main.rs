//! The rules engine's integration tests: perft golden numbers and property
//! tests against a plain reference implementation.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub, dead_code)]

mod games;
mod perft;
mod properties;
mod reference;
mod support;
