//! Test stores: a fresh, migrated Postgres database and a fresh Redis key
//! prefix for each test, so tests run in parallel without seeing each
//! other. Enabled by the `testing` feature, for dev-dependencies only.
//!
//! Database names carry their creation time; each new test database drops
//! those over an hour old, so a test that panicked before cleaning up does
//! not leak its database for long.

use std::time::{SystemTime, UNIX_EPOCH};

use secrecy::SecretString;

pub use proxy::Proxy;

mod proxy;
use sqlx::{Executor, PgPool};

use crate::stores::{MIGRATOR, Redis, connect_postgres};

/// The server's address from `DATABASE_URL`, without a database.
fn server_url() -> String {
    let url = std::env::var("DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into());
    match url.rsplit_once('/') {
        Some((server, _)) => server.to_owned(),
        None => url,
    }
}

/// The `REDIS_URL`, or the local default.
pub fn redis_url() -> SecretString {
    SecretString::from(
        std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into()),
    )
}

/// The URL of database `name` on the test server.
pub fn database_url(name: &str) -> SecretString {
    SecretString::from(format!("{}/{name}", server_url()))
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs())
}

/// Runs statements on the server's maintenance database.
async fn admin(statements: &[String]) -> Result<(), sqlx::Error> {
    let admin = connect_postgres(&database_url("postgres"), 1).await?;
    for statement in statements {
        admin.execute(statement.as_str()).await?;
    }
    admin.close().await;
    Ok(())
}

/// A test's own stores.
#[derive(Debug)]
pub struct TestStores {
    pub postgres: PgPool,
    pub redis: Redis,
    /// The database's name, for a second pool or a second process.
    pub database: String,
    /// The Redis key prefix.
    pub prefix: String,
}

impl TestStores {
    /// A fresh migrated database and a fresh key prefix.
    pub async fn new() -> Result<TestStores, Box<dyn std::error::Error>> {
        TestStores::migrated_up_to(usize::MAX).await
    }

    /// A fresh database with only the first `count` migrations run, to test
    /// what a later one does to data made before it; `MIGRATOR.run` on its
    /// pool finishes the job.
    pub async fn migrated_up_to(count: usize) -> Result<TestStores, Box<dyn std::error::Error>> {
        let now = unix_now();
        let database = format!("test_{now}_{}", uuid::Uuid::new_v4().simple());
        let pool = connect_postgres(&database_url("postgres"), 1).await?;
        let stale: Vec<String> =
            sqlx::query_scalar("SELECT datname FROM pg_database WHERE datname LIKE 'test\\_%'")
                .fetch_all(&pool)
                .await?;
        pool.close().await;
        let mut statements: Vec<String> = stale
            .into_iter()
            .filter(|name| {
                name.split('_')
                    .nth(1)
                    .and_then(|born| born.parse::<u64>().ok())
                    .is_some_and(|born| born + 3600 < now)
            })
            .map(|name| format!(r#"DROP DATABASE IF EXISTS "{name}" WITH (FORCE)"#))
            .collect();
        statements.push(format!(r#"CREATE DATABASE "{database}""#));
        admin(&statements).await?;
        let postgres = connect_postgres(&database_url(&database), 8).await?;
        let first = &MIGRATOR.migrations[..count.min(MIGRATOR.migrations.len())];
        let migrator = sqlx::migrate::Migrator {
            migrations: std::borrow::Cow::Owned(first.to_vec()),
            ..sqlx::migrate::Migrator::DEFAULT
        };
        migrator.run(&postgres).await?;
        let prefix = format!("test:{}:", uuid::Uuid::new_v4().simple());
        let redis = Redis::connect(&redis_url(), &prefix).await?;
        Ok(TestStores {
            postgres,
            redis,
            database,
            prefix,
        })
    }

    /// A new player row (a guest: no credentials) named `name`.
    pub async fn player(&self, name: &str) -> Result<uuid::Uuid, sqlx::Error> {
        let id = uuid::Uuid::now_v7();
        sqlx::query("INSERT INTO players (id, display_name) VALUES ($1, $2)")
            .bind(id)
            .bind(name)
            .execute(&self.postgres)
            .await?;
        Ok(id)
    }

    /// Drops the database. Redis keys are left to expire or be flushed:
    /// they are few, and under a prefix nobody else uses.
    pub async fn cleanup(self) -> Result<(), sqlx::Error> {
        self.postgres.close().await;
        admin(&[format!(
            r#"DROP DATABASE IF EXISTS "{}" WITH (FORCE)"#,
            self.database
        )])
        .await
    }
}
