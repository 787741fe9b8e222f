//! What the sentinel reads (the rating history the rating service writes,
//! the games and their moves) and the one thing it writes: an automatic
//! report, kept up to date while open.

use mancala_proto::moderation::{Evidence, ReportReason};
use sqlx::PgPool;
use sqlx::types::Json;
use time::OffsetDateTime;
use uuid::Uuid;

use super::signals::{OpponentRecord, Outcome, RatedGame};

/// The players whose rated games were rated after history line `after`,
/// and the last line seen (at most `limit` players a scan).
pub(crate) async fn touched_since(
    pool: &PgPool,
    after: i64,
    limit: i64,
) -> Result<(Vec<Uuid>, i64), sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT player_id, max(seq) AS "last!"
           FROM rating_history WHERE seq > $1
           GROUP BY player_id ORDER BY max(seq) LIMIT $2"#,
        after,
        limit,
    )
    .fetch_all(pool)
    .await?;
    let last = rows.iter().map(|row| row.last).max().unwrap_or(after);
    Ok((rows.into_iter().map(|row| row.player_id).collect(), last))
}

/// Where the history ended a few minutes ago: where a sentinel without a
/// cursor starts, so that a restart looks again at the latest games.
pub(crate) async fn recent_start(
    pool: &PgPool,
    before: OffsetDateTime,
) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar!(
        r#"SELECT COALESCE(max(seq), 0) AS "seq!" FROM rating_history WHERE rated_at < $1"#,
        before,
    )
    .fetch_one(pool)
    .await
}

/// The player's counted rated games since `since`, newest first, at most
/// `limit`.
pub(crate) async fn rated_games(
    pool: &PgPool,
    player: Uuid,
    since: OffsetDateTime,
    limit: i64,
) -> Result<Vec<RatedGame>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT h.game_id, h.result, h.opponent_thin, h.rating_before,
                  g.plies, g.reason, g.seat0_player, g.seat1_player,
                  o.player_id AS "opponent_line?", o.rating_before AS "opponent_rating?",
                  g.seat0_rating, g.seat1_rating
           FROM rating_history h
           JOIN games g ON g.id = h.game_id
           LEFT JOIN rating_history o ON o.game_id = h.game_id AND o.player_id <> h.player_id
           WHERE h.player_id = $1 AND h.rated_at > $2 AND NOT h.voided
           ORDER BY h.rated_at DESC
           LIMIT $3"#,
        player,
        since,
        limit,
    )
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .filter_map(|row| {
            let south = row.seat0_player == Some(player);
            let opponent = if south {
                row.seat1_player
            } else {
                row.seat0_player
            }?;
            let seat_rating = if south {
                row.seat1_rating
            } else {
                row.seat0_rating
            };
            let outcome = match row.result.as_str() {
                "win" => Outcome::Win,
                "loss" => Outcome::Loss,
                _ => Outcome::Draw,
            };
            Some(RatedGame {
                game: row.game_id,
                opponent,
                south,
                outcome,
                opponent_thin: row.opponent_thin,
                plies: row.plies.max(0) as u32,
                given_up: matches!(
                    row.reason.as_deref(),
                    Some("resign" | "timeout" | "abandoned")
                ),
                rating: row.rating_before,
                opponent_rating: row
                    .opponent_rating
                    .or(seat_rating)
                    .unwrap_or(row.rating_before),
            })
        })
        .collect())
}

/// Each of `opponents`' counted rated games since `since`, and how many
/// of them were against `player`.
pub(crate) async fn opponent_records(
    pool: &PgPool,
    player: Uuid,
    opponents: &[Uuid],
    since: OffsetDateTime,
) -> Result<Vec<OpponentRecord>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT h.player_id, count(*) AS "games!",
                  count(*) FILTER (WHERE g.seat0_player = $1 OR g.seat1_player = $1)
                      AS "against!"
           FROM rating_history h JOIN games g ON g.id = h.game_id
           WHERE h.player_id = ANY($2) AND h.rated_at > $3 AND NOT h.voided
           GROUP BY h.player_id"#,
        player,
        opponents,
        since,
    )
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|row| OpponentRecord {
            opponent: row.player_id,
            games: row.games as u32,
            against_player: row.against as u32,
        })
        .collect())
}

/// One of the player's moves: when it was played (Unix ms), by which
/// seat, and how long the page was hidden before it.
pub(crate) struct TimedMove {
    pub seat: i16,
    pub at_ms: i64,
    pub hidden_ms: Option<i32>,
}

/// A finished game's moves in order, with their times.
pub(crate) async fn timed_moves(pool: &PgPool, game: Uuid) -> Result<Vec<TimedMove>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT seat, (extract(epoch FROM played_at) * 1000)::bigint AS "at_ms!", hidden_ms
           FROM game_moves WHERE game_id = $1 AND pit > 0 ORDER BY ply"#,
        game,
    )
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|row| TimedMove {
            seat: row.seat,
            at_ms: row.at_ms,
            hidden_ms: row.hidden_ms,
        })
        .collect())
}

/// Files the signal as an automatic report about `player`, or brings the
/// open one of its reason up to date; a reason a moderator closed within
/// `quiet` is let be (their decision stands until new games say more).
/// Returns whether a report was filed or updated.
pub(crate) async fn file_signal(
    pool: &PgPool,
    player: Uuid,
    reason: ReportReason,
    text: &str,
    evidence: &Evidence,
    now: OffsetDateTime,
    quiet: time::Duration,
) -> Result<bool, sqlx::Error> {
    let filed = sqlx::query_scalar!(
        r#"INSERT INTO reports (reporter, player_id, reason, text, created_at, evidence)
           SELECT NULL, $1, $2, $3, $4, $5
           WHERE NOT EXISTS (SELECT 1 FROM reports
                             WHERE reporter IS NULL AND player_id = $1 AND reason = $2
                               AND closed_at > $6)
           ON CONFLICT (player_id, reason) WHERE reporter IS NULL AND closed_at IS NULL
           DO UPDATE SET evidence = EXCLUDED.evidence, text = EXCLUDED.text
           RETURNING id"#,
        player,
        reason.as_str(),
        text,
        now,
        Json(evidence) as _,
        now - quiet,
    )
    .fetch_optional(pool)
    .await?;
    Ok(filed.is_some())
}
