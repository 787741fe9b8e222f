//! Accounts: guests, registered players and their sessions.
//!
//! Parsing happens at the edge: a `Username` or a `Password` exists only if
//! it is valid, so the rest of the code never checks again. `routes` is
//! the HTTP edge, `service` the domain, `store` the SQL.

pub mod credentials;
pub mod names;
pub mod refresh;
pub mod routes;
pub mod service;
pub mod store;

pub use service::Accounts;
