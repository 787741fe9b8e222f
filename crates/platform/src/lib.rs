//! Plumbing shared by the Mancala Arena services.
//!
//! Settings are read once in `main` and passed by value; nothing here is
//! global. Secrets stay wrapped ([`secrecy::SecretString`]) until the one
//! call that needs them, so they never reach a log line.

pub mod admission;
pub mod allocator;
pub mod api_errors;
pub mod auth;
pub mod background;
pub mod binary;
pub mod cli;
pub mod clock;
pub mod config;
pub mod guard;
pub mod http;
pub mod jwt;
pub mod kv;
pub mod open_sockets;
pub mod password;
pub mod process;
pub mod pubsub;
pub mod ratelimit;
pub mod revocation;
pub mod server;
pub mod socket;
pub mod socket_slots;
pub mod stores;
pub mod telemetry;
#[cfg(feature = "testing")]
pub mod testing;
pub mod values;

pub use admission::{Admission, GameInProgress};
pub use auth::{Authenticated, Authenticator, MaybeAuthenticated, Moderator, SocketIdentity};
pub use clock::Clock;
pub use config::Settings;
pub use http::{ApiError, ApiRoutes, Readiness, configure_health, json_config};
pub use kv::{Redis, RedisMode};
pub use process::{ProcessContext, Started, connect_stores, start_process};
pub use revocation::Revocations;
pub use secrecy::{ExposeSecret, SecretString};
pub use server::{Bound, StartError, serve, serve_on, token_verifier};
pub use stores::{MIGRATOR, connect_postgres, read_pool};
pub use telemetry::LogFormat;
pub use values::ConfigError;
