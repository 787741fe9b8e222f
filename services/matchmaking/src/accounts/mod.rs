//! Accounts: guests, registered players and their sessions.
//!
//! Parsing happens at the edge: a `Username` or a `Password` exists only if
//! it is valid, so the rest of the code never checks again.

pub mod credentials;
pub mod names;
pub mod refresh;
