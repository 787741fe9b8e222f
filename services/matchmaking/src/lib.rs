//! The matchmaking service: the front door. Today: accounts and sessions
//! (guests, registration, login, refresh tokens). Ranked queues, invites
//! and lobby stats join it with their issue.

pub mod accounts;
pub mod app;
pub mod config;
pub mod openapi;

pub use app::{Application, Matchmaking};
pub use config::AccountSettings;
