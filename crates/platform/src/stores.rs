//! The two stores: Postgres, the system of record, with the one migration
//! set; and Redis, for what is shared and fast, behind a key prefix.

use std::sync::Arc;
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
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

/// The client's default of 500 ms per response turns a burst on a busy
/// machine (thousands of players signing in at once) into errors; a Redis
/// that is really gone fails the connection instead.
fn manager_config() -> ConnectionManagerConfig {
    ConnectionManagerConfig::new()
        .set_number_of_retries(2)
        .set_connection_timeout(Some(Duration::from_secs(2)))
        .set_response_timeout(Some(Duration::from_secs(3)))
}

/// Redis through a reconnecting connection manager, with every key under a
/// prefix so that deployments and tests can share one server.
#[derive(Clone)]
pub struct Redis {
    manager: ConnectionManager,
    /// For pub/sub, which needs a connection of its own.
    client: redis::Client,
    prefix: Arc<str>,
}

impl std::fmt::Debug for Redis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redis")
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

impl Redis {
    /// Connects, failing within seconds when the server does not answer
    /// (later drops reconnect in the background).
    pub async fn connect(url: &SecretString, prefix: &str) -> Result<Redis, redis::RedisError> {
        let client = redis::Client::open(url.expose_secret())?;
        let manager = ConnectionManager::new_with_config(client.clone(), manager_config()).await?;
        Ok(Redis {
            manager,
            client,
            prefix: Arc::from(prefix),
        })
    }

    /// The same Redis over a connection of its own, for traffic that must
    /// not queue behind everything else on the shared one (a game host's
    /// lease renewals).
    pub async fn dedicated(&self) -> Result<Redis, redis::RedisError> {
        let manager =
            ConnectionManager::new_with_config(self.client.clone(), manager_config()).await?;
        Ok(Redis {
            manager,
            client: self.client.clone(),
            prefix: self.prefix.clone(),
        })
    }

    /// The full key for `name`.
    pub fn key(&self, name: &str) -> String {
        format!("{}{name}", self.prefix)
    }

    /// A handle for commands; cheap to clone, shares one connection.
    pub fn connection(&self) -> ConnectionManager {
        self.manager.clone()
    }

    /// A new pub/sub connection (subscriptions need their own).
    pub async fn pubsub(&self) -> Result<redis::aio::PubSub, redis::RedisError> {
        self.client.get_async_pubsub().await
    }

    /// Whether the server answers.
    pub async fn ping(&self) -> Result<(), redis::RedisError> {
        let mut connection = self.connection();
        redis::cmd("PING")
            .query_async::<String>(&mut connection)
            .await
            .map(|_| ())
    }
}
