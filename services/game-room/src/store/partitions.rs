//! The monthly partitions of the game history: each instance makes the
//! coming months' at start and every hour, well before a game needs them
//! (migration `partitioned_history`, docs/SCALING.md "History").

use std::time::Duration;

use sqlx::PgPool;

/// Months of partitions kept ready beyond the current one.
const MONTHS_AHEAD: i32 = 3;

/// How often an instance checks that they are there.
const EVERY: Duration = Duration::from_secs(3600);

/// Makes the partitions of the current month and the next few where
/// missing; returns how many were made.
async fn ensure_partitions(pool: &PgPool) -> Result<i32, sqlx::Error> {
    let made = sqlx::query_scalar!(
        r#"SELECT ensure_history_partitions($1) AS "made!""#,
        MONTHS_AHEAD
    )
    .fetch_one(pool)
    .await?;
    Ok(made)
}

/// Keeps the partitions ready for as long as the process runs.
pub(crate) fn keep_partitions(pool: PgPool) {
    tokio::spawn(async move {
        loop {
            match ensure_partitions(&pool).await {
                Ok(0) => {}
                Ok(made) => tracing::info!(made, "made partitions of the game history"),
                Err(error) => {
                    tracing::warn!(%error, "making partitions of the game history")
                }
            }
            tokio::time::sleep(EVERY).await;
        }
    });
}
