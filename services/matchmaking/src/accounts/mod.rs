//! Accounts: guests, registered players and their sessions.
//!
//! Parsing happens at the edge: a `Username` or a `Password` exists only if
//! it is valid, so the rest of the code never checks again. `routes` is
//! the HTTP edge, `service` the domain, `store` the SQL.

pub(crate) mod credentials;
pub(crate) mod names;
pub(crate) mod network;
pub(crate) mod refresh;
pub(crate) mod routes;
pub(crate) mod service;
pub(crate) mod store;

pub(crate) use service::{Accounts, TokenLifetimes};
