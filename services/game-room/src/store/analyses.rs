//! Finished games' analyses kept for every instance, bounded by bytes.

use mancala_proto::game::GameAnalysis;

use super::*;

/// The kept analysis of `game`, if any.
pub(crate) async fn analysis(
    pool: &PgPool,
    game: Uuid,
) -> Result<Option<GameAnalysis>, sqlx::Error> {
    let kept = sqlx::query_scalar!(
        r#"SELECT analysis AS "analysis: Json<GameAnalysis>" FROM game_analyses WHERE game_id = $1"#,
        game,
    )
    .fetch_optional(pool)
    .await?;
    Ok(kept.map(|kept| kept.0))
}

/// Keeps `analysis` (a second copy of the same game's, worked out by
/// another instance meanwhile, is dropped), then drops the oldest kept past
/// `budget` bytes in all.
pub(crate) async fn keep_analysis(
    pool: &PgPool,
    analysis: &GameAnalysis,
    budget: usize,
) -> Result<(), sqlx::Error> {
    let text =
        serde_json::to_string(analysis).map_err(|error| sqlx::Error::Encode(error.into()))?;
    let bytes = i32::try_from(text.len()).unwrap_or(i32::MAX);
    let mut transaction = pool.begin().await?;
    sqlx::query!(
        "INSERT INTO game_analyses (game_id, analysis, bytes) VALUES ($1, $2::text::jsonb, $3)
         ON CONFLICT (game_id) DO NOTHING",
        analysis.id,
        text,
        bytes,
    )
    .execute(&mut *transaction)
    .await?;
    sqlx::query!(
        "DELETE FROM game_analyses WHERE game_id IN (
             SELECT game_id FROM (
                 SELECT game_id,
                        sum(bytes) OVER (ORDER BY created_at DESC, game_id DESC) AS newer
                 FROM game_analyses) kept
             WHERE newer > $1)",
        i64::try_from(budget).unwrap_or(i64::MAX),
    )
    .execute(&mut *transaction)
    .await?;
    transaction.commit().await
}
