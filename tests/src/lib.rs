//! Shared pieces of the end-to-end checks and the load generator: a small
//! client of the platform's HTTP API and game sockets, and a harness that
//! runs the service binaries as processes.

pub mod abuse;
pub mod client;
pub mod cluster;
pub mod driven;
pub mod harness;
pub mod report;
pub mod server_stats;
