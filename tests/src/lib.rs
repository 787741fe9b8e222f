//! Shared pieces of the end-to-end checks and the load generator: a small
//! client of the platform's HTTP API and game sockets.

pub mod client;
pub mod report;
