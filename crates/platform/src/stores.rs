//! Postgres, the system of record, with the one migration set (Redis, for
//! what is shared and fast, is in [`crate::kv`]).

use std::time::Duration;

use secrecy::{ExposeSecret, SecretString};
use sqlx::PgPool;
use sqlx::migrate::Migrator;
use sqlx::postgres::PgPoolOptions;

/// The migrations in `migrations/` at the top of the repository, embedded at
/// compile time and run by every service at start-up (sqlx takes a lock, so
/// services starting together do not race).
pub static MIGRATOR: Migrator = sqlx::migrate!("../../migrations");

/// A Postgres pool that gives up on a connection after five seconds rather
/// than hanging a request.
pub async fn connect_postgres(
    url: &SecretString,
    max_connections: u32,
) -> Result<PgPool, sqlx::Error> {
    PgPoolOptions::new()
        .max_connections(max_connections)
        .acquire_timeout(Duration::from_secs(5))
        .connect(url.expose_secret())
        .await
}

/// The pool that reads which may lag go to: the replica of
/// `DATABASE_READ_URL` when set, else the primary's pool. The replica's pool
/// connects on first use, so a replica that is down fails those reads, not
/// the start.
pub fn read_pool(
    read_url: Option<&SecretString>,
    primary: &PgPool,
    max_connections: u32,
) -> PgPool {
    let Some(url) = read_url else {
        return primary.clone();
    };
    match PgPoolOptions::new()
        .max_connections(max_connections)
        .acquire_timeout(Duration::from_secs(5))
        .connect_lazy(url.expose_secret())
    {
        Ok(pool) => pool,
        Err(error) => {
            tracing::warn!(%error, "DATABASE_READ_URL does not parse: reading from the primary");
            primary.clone()
        }
    }
}

pub use crate::kv::Redis;
