//! The game tables, one small function per statement: the game rows that
//! records and lists read (here), what a host writes (`writes`), friend
//! rooms and the sweeps (`rooms`), and the small lookups (`lookups`).
//! Times come from the service's injected clock as Unix seconds
//! (`to_timestamp`).

mod lookups;
mod rooms;
mod writes;

pub use lookups::*;
pub use rooms::*;
pub use writes::*;

use mancala_proto::VariantSpec;
use mancala_proto::game::{
    CasualReason, EndReason, GameResult, GameStatus, GameSummary, Over, PlayedMove, SeatInfo,
    TimeControl,
};
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

use crate::game::live::StoredMove;

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
    pub seat0_takeover: Option<String>,
    pub seat1_takeover: Option<String>,
    pub clock_initial_ms: Option<i32>,
    pub clock_increment_ms: Option<i32>,
    pub room_id: Option<Uuid>,
    pub rematch_id: Option<Uuid>,
    pub version: i64,
    /// Which seats ever moved (bit 0: seat 0, bit 1: seat 1).
    pub moved: i16,
    pub casual_reason: Option<String>,
    /// When the side to move began its turn (ms), once a move was made.
    pub turn_started_ms: Option<i64>,
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
                ai: self
                    .seat0_ai
                    .clone()
                    .or_else(|| self.seat0_takeover.clone()),
                rating: self.seat0_rating,
            },
            SeatInfo {
                player: self.seat1_player,
                name: self.seat1_name.clone(),
                ai: self
                    .seat1_ai
                    .clone()
                    .or_else(|| self.seat1_takeover.clone()),
                rating: self.seat1_rating,
            },
        ]
    }

    pub fn status(&self) -> GameStatus {
        match self.status.as_str() {
            "over" => GameStatus::Over,
            "aborted" => GameStatus::Aborted,
            _ => GameStatus::Live,
        }
    }

    pub fn time_control(&self) -> Option<TimeControl> {
        Some(TimeControl {
            initial_secs: (self.clock_initial_ms? / 1000) as u32,
            increment_secs: (self.clock_increment_ms? / 1000) as u32,
        })
    }

    /// Created against the AI (not an AI that took over later).
    pub fn against_ai(&self) -> bool {
        self.seat0_ai.is_some() || self.seat1_ai.is_some()
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

    /// Which seats ever moved.
    pub fn moved(&self) -> [bool; 2] {
        [self.moved & 1 != 0, self.moved & 2 != 0]
    }

    pub fn casual_reason(&self) -> Option<CasualReason> {
        self.casual_reason.as_deref().and_then(CasualReason::parse)
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

/// The latest time a cursor may name (µs since 1970: the end of year
/// 9999); Postgres's timestamps end not far beyond, and a cursor past them
/// would fail in SQL.
const LAST_CURSOR_MICROS: i64 = 253_402_300_799_999_999;

/// Parses a history cursor made by [`GameRow::cursor`]; `None` for one no
/// game could have made.
pub fn parse_cursor(text: &str) -> Option<(i64, Uuid)> {
    let (micros, id) = text.split_once('_')?;
    let micros: i64 = micros.parse().ok()?;
    (0..=LAST_CURSOR_MICROS)
        .contains(&micros)
        .then_some((micros, Uuid::parse_str(id).ok()?))
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
                      AS ended_at,
                  g.seat0_takeover, g.seat1_takeover, g.clock_initial_ms, g.clock_increment_ms,
                  g.room_id, g.rematch_id, g.version, g.moved, g.casual_reason,
                  (extract(epoch FROM g.turn_started_at) * 1000)::bigint AS turn_started_ms
           FROM games g
           LEFT JOIN players p0 ON p0.id = g.seat0_player
           LEFT JOIN players p1 ON p1.id = g.seat1_player
           WHERE g.id = $1"#,
        id,
    )
    .fetch_optional(pool)
    .await
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
                      AS ended_at,
                  g.seat0_takeover, g.seat1_takeover, g.clock_initial_ms, g.clock_increment_ms,
                  g.room_id, g.rematch_id, g.version, g.moved, g.casual_reason,
                  (extract(epoch FROM g.turn_started_at) * 1000)::bigint AS turn_started_ms
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
                      AS ended_at,
                  g.seat0_takeover, g.seat1_takeover, g.clock_initial_ms, g.clock_increment_ms,
                  g.room_id, g.rematch_id, g.version, g.moved, g.casual_reason,
                  (extract(epoch FROM g.turn_started_at) * 1000)::bigint AS turn_started_ms
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
