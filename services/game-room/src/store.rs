//! The game tables, one small function per statement. Times come from the
//! service's injected clock as Unix seconds (`to_timestamp`).

use mancala_proto::VariantSpec;
use mancala_proto::game::{EndReason, GameResult, GameStatus, GameSummary, PlayedMove, SeatInfo};
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

/// A seat as stored: a player or an AI level, and the rating snapshot.
#[derive(Clone, Debug, PartialEq)]
pub struct NewSeat {
    pub player: Option<Uuid>,
    pub ai: Option<String>,
    pub rating: Option<f64>,
    pub rd: Option<f64>,
}

/// A game row with its seats' names, as lists and records show it.
#[derive(Clone, Debug)]
pub struct GameRow {
    pub id: Uuid,
    pub variant: serde_json::Value,
    pub rated: bool,
    pub status: String,
    pub result: Option<String>,
    pub reason: Option<String>,
    pub score0: Option<i16>,
    pub score1: Option<i16>,
    pub plies: i32,
    pub seat0_player: Option<Uuid>,
    pub seat0_ai: Option<String>,
    pub seat0_name: String,
    pub seat0_rating: Option<f64>,
    pub seat1_player: Option<Uuid>,
    pub seat1_ai: Option<String>,
    pub seat1_name: String,
    pub seat1_rating: Option<f64>,
    pub created_at: String,
    pub created_micros: i64,
    pub ended_at: Option<String>,
}

/// A stored value that does not parse: the database holds something this
/// code never writes.
#[derive(Debug, thiserror::Error)]
#[error("game {id}: bad stored {field}")]
pub struct CorruptRow {
    pub id: Uuid,
    pub field: &'static str,
}

fn parse_text<T: serde::de::DeserializeOwned>(
    id: Uuid,
    field: &'static str,
    text: &str,
) -> Result<T, CorruptRow> {
    serde_json::from_value(serde_json::Value::String(text.to_owned()))
        .map_err(|_| CorruptRow { id, field })
}

impl GameRow {
    pub fn variant(&self) -> Result<VariantSpec, CorruptRow> {
        serde_json::from_value(self.variant.clone()).map_err(|_| CorruptRow {
            id: self.id,
            field: "variant",
        })
    }

    pub fn seats(&self) -> [SeatInfo; 2] {
        [
            SeatInfo {
                player: self.seat0_player,
                name: self.seat0_name.clone(),
                ai: self.seat0_ai.clone(),
                rating: self.seat0_rating,
            },
            SeatInfo {
                player: self.seat1_player,
                name: self.seat1_name.clone(),
                ai: self.seat1_ai.clone(),
                rating: self.seat1_rating,
            },
        ]
    }

    pub fn status(&self) -> GameStatus {
        if self.status == "over" {
            GameStatus::Over
        } else {
            GameStatus::Live
        }
    }

    pub fn result(&self) -> Result<Option<GameResult>, CorruptRow> {
        self.result
            .as_deref()
            .map(|text| parse_text(self.id, "result", text))
            .transpose()
    }

    pub fn reason(&self) -> Result<Option<EndReason>, CorruptRow> {
        self.reason
            .as_deref()
            .map(|text| parse_text(self.id, "reason", text))
            .transpose()
    }

    pub fn score(&self) -> Option<[u8; 2]> {
        Some([self.score0? as u8, self.score1? as u8])
    }

    pub fn summary(&self) -> Result<GameSummary, CorruptRow> {
        Ok(GameSummary {
            id: self.id,
            variant: self.variant()?,
            rated: self.rated,
            status: self.status(),
            seats: self.seats(),
            plies: self.plies as u32,
            result: self.result()?,
            reason: self.reason()?,
            created_at: self.created_at.clone(),
            ended_at: self.ended_at.clone(),
        })
    }

    /// The keyset cursor after this row, for history pages.
    pub fn cursor(&self) -> String {
        format!("{}_{}", self.created_micros, self.id)
    }
}

/// Parses a history cursor made by [`GameRow::cursor`].
pub fn parse_cursor(text: &str) -> Option<(i64, Uuid)> {
    let (micros, id) = text.split_once('_')?;
    Some((micros.parse().ok()?, Uuid::parse_str(id).ok()?))
}

/// Creates a live game.
pub async fn insert_game(
    pool: &PgPool,
    id: Uuid,
    variant: &serde_json::Value,
    seats: &[NewSeat; 2],
    rated: bool,
    now: f64,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "INSERT INTO games (id, variant, seat0_player, seat0_ai, seat0_rating, seat0_rd,
                            seat1_player, seat1_ai, seat1_rating, seat1_rd, rated, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, to_timestamp($12))",
        id,
        variant,
        seats[0].player,
        seats[0].ai,
        seats[0].rating,
        seats[0].rd,
        seats[1].player,
        seats[1].ai,
        seats[1].rating,
        seats[1].rd,
        rated,
        now,
    )
    .execute(pool)
    .await?;
    Ok(())
}

/// Whether every id is a player.
pub async fn players_exist(pool: &PgPool, ids: &[Uuid]) -> Result<bool, sqlx::Error> {
    let found = sqlx::query_scalar!(
        r#"SELECT count(*) AS "count!" FROM players WHERE id = ANY($1)"#,
        ids,
    )
    .fetch_one(pool)
    .await?;
    let mut distinct = ids.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    Ok(found == distinct.len() as i64)
}

/// A game row with its seats' names.
pub async fn game(pool: &PgPool, id: Uuid) -> Result<Option<GameRow>, sqlx::Error> {
    sqlx::query_as!(
        GameRow,
        r#"SELECT g.id, g.variant, g.rated, g.status, g.result, g.reason, g.score0, g.score1,
                  g.plies, g.seat0_player, g.seat0_ai,
                  COALESCE(p0.display_name, g.seat0_ai) AS "seat0_name!", g.seat0_rating,
                  g.seat1_player, g.seat1_ai,
                  COALESCE(p1.display_name, g.seat1_ai) AS "seat1_name!", g.seat1_rating,
                  to_char(g.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
                      AS "created_at!",
                  (extract(epoch FROM g.created_at) * 1000000)::bigint AS "created_micros!",
                  to_char(g.ended_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
                      AS ended_at
           FROM games g
           LEFT JOIN players p0 ON p0.id = g.seat0_player
           LEFT JOIN players p1 ON p1.id = g.seat1_player
           WHERE g.id = $1"#,
        id,
    )
    .fetch_optional(pool)
    .await
}

/// A game's moves in order.
pub async fn moves(pool: &PgPool, id: Uuid) -> Result<Vec<PlayedMove>, sqlx::Error> {
    let rows = sqlx::query!(
        "SELECT ply, seat, pit FROM game_moves WHERE game_id = $1 ORDER BY ply",
        id,
    )
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|row| PlayedMove {
            ply: row.ply as u32,
            seat: row.seat as u8,
            pit: row.pit as u8,
        })
        .collect())
}

/// Stores ply `ply`, only if it is the next of a live game: a second writer
/// for the same ply fails (on the count, or on the key). One statement, so
/// outside a transaction it commits (durably) by itself: one round trip.
pub async fn append_move(
    connection: &mut PgConnection,
    game: Uuid,
    played: PlayedMove,
    now: f64,
) -> Result<bool, sqlx::Error> {
    let stored = sqlx::query!(
        "WITH advanced AS (
             UPDATE games SET plies = $2
             WHERE id = $1 AND status = 'live' AND plies = $2 - 1
             RETURNING id
         )
         INSERT INTO game_moves (game_id, ply, seat, pit, played_at)
         SELECT id, $2, $3, $4, to_timestamp($5) FROM advanced",
        game,
        played.ply as i32,
        i16::from(played.seat),
        i16::from(played.pit),
        now,
    )
    .execute(connection)
    .await?;
    Ok(stored.rows_affected() == 1)
}

/// Ends a live game with its result and, when rated, its outbox row for the
/// rating service, in the caller's transaction. False if it was not live.
pub async fn finish_game(
    connection: &mut PgConnection,
    game: Uuid,
    result: GameResult,
    reason: EndReason,
    score: [u8; 2],
    now: f64,
) -> Result<bool, sqlx::Error> {
    let reason_text = serde_json::to_value(reason)
        .ok()
        .and_then(|value| value.as_str().map(str::to_owned))
        .unwrap_or_default();
    let rated = sqlx::query_scalar!(
        "UPDATE games SET status = 'over', result = $2, reason = $3, score0 = $4, score1 = $5,
                          ended_at = to_timestamp($6)
         WHERE id = $1 AND status = 'live'
         RETURNING rated",
        game,
        result.as_str(),
        reason_text,
        i16::from(score[0]),
        i16::from(score[1]),
        now,
    )
    .fetch_optional(&mut *connection)
    .await?;
    let Some(rated) = rated else {
        return Ok(false);
    };
    if rated {
        sqlx::query!(
            "INSERT INTO rating_outbox (game_id, created_at) VALUES ($1, to_timestamp($2))",
            game,
            now,
        )
        .execute(connection)
        .await?;
    }
    Ok(true)
}

/// A player's games, newest first, before a cursor.
pub async fn history(
    pool: &PgPool,
    player: Uuid,
    variant: Option<&str>,
    before: Option<(i64, Uuid)>,
    limit: i64,
) -> Result<Vec<GameRow>, sqlx::Error> {
    let (before_micros, before_id) = before.map_or((None, None), |(m, id)| (Some(m), Some(id)));
    sqlx::query_as!(
        GameRow,
        r#"SELECT g.id, g.variant, g.rated, g.status, g.result, g.reason, g.score0, g.score1,
                  g.plies, g.seat0_player, g.seat0_ai,
                  COALESCE(p0.display_name, g.seat0_ai) AS "seat0_name!", g.seat0_rating,
                  g.seat1_player, g.seat1_ai,
                  COALESCE(p1.display_name, g.seat1_ai) AS "seat1_name!", g.seat1_rating,
                  to_char(g.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
                      AS "created_at!",
                  (extract(epoch FROM g.created_at) * 1000000)::bigint AS "created_micros!",
                  to_char(g.ended_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
                      AS ended_at
           FROM games g
           LEFT JOIN players p0 ON p0.id = g.seat0_player
           LEFT JOIN players p1 ON p1.id = g.seat1_player
           WHERE (g.seat0_player = $1 OR g.seat1_player = $1)
             AND ($2::text IS NULL OR g.variant->>'variant' = $2)
             AND ($3::bigint IS NULL
                  OR (g.created_at, g.id)
                     < ('epoch'::timestamptz + $3 * interval '1 microsecond', $4::uuid))
           ORDER BY g.created_at DESC, g.id DESC
           LIMIT $5"#,
        player,
        variant,
        before_micros,
        before_id,
        limit,
    )
    .fetch_all(pool)
    .await
}

/// Live games, highest rated first (casual games count as unrated, 0).
pub async fn live(
    pool: &PgPool,
    variant: Option<&str>,
    limit: i64,
) -> Result<Vec<GameRow>, sqlx::Error> {
    sqlx::query_as!(
        GameRow,
        r#"SELECT g.id, g.variant, g.rated, g.status, g.result, g.reason, g.score0, g.score1,
                  g.plies, g.seat0_player, g.seat0_ai,
                  COALESCE(p0.display_name, g.seat0_ai) AS "seat0_name!", g.seat0_rating,
                  g.seat1_player, g.seat1_ai,
                  COALESCE(p1.display_name, g.seat1_ai) AS "seat1_name!", g.seat1_rating,
                  to_char(g.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
                      AS "created_at!",
                  (extract(epoch FROM g.created_at) * 1000000)::bigint AS "created_micros!",
                  to_char(g.ended_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
                      AS ended_at
           FROM games g
           LEFT JOIN players p0 ON p0.id = g.seat0_player
           LEFT JOIN players p1 ON p1.id = g.seat1_player
           WHERE g.status = 'live' AND ($1::text IS NULL OR g.variant->>'variant' = $1)
           ORDER BY COALESCE(g.seat0_rating, 0) + COALESCE(g.seat1_rating, 0) DESC,
                    g.created_at DESC
           LIMIT $2"#,
        variant,
        limit,
    )
    .fetch_all(pool)
    .await
}
