//! The matchmaking service: the front door. Today its accounts domain
//! (issue 4 in progress); its HTTP API lands on top of it.

pub mod accounts;
