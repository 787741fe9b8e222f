//! The game tables, one small function per statement: the game rows that
//! records and lists read (here), what a host writes (`writes`), friend
//! rooms and the sweeps (`rooms`), and the small lookups (`lookups`).
//! Times come from the service's injected clock, bound as `timestamptz`
//! (`mancala_platform::clock::timestamp`).

mod analyses;
mod group_commit;
mod lookups;
mod partitions;
mod rooms;
mod writes;

pub(crate) use analyses::{analysis, keep_analysis};
pub(crate) use group_commit::{Change, CommitError, GroupCommit};

pub(crate) use lookups::*;
pub(crate) use partitions::keep_partitions;
pub(crate) use rooms::*;
pub(crate) use writes::*;

use mancala_platform::clock::{millis_of, timestamp};
use mancala_proto::VariantSpec;
use mancala_proto::fair_play::OffenceKind;
use mancala_proto::game::{
    CasualReason, EndReason, GameResult, GameStatus, GameSummary, Over, PlayedMove, SeatInfo,
    TimeControl,
};
use mancala_rules::Side;
use sqlx::types::Json;
use sqlx::{PgConnection, PgPool};
use time::OffsetDateTime;
use uuid::Uuid;

/// A transaction for the statements that make a game (its insert, the
/// pair's count, the rematch link), planned once per connection like the
/// group commit's (see `group_commit::writer_connection`): Postgres would
/// otherwise plan each of them again on every game, over every partition
/// of the games. Only for statements that find their rows by key, whose
/// best plan does not depend on the values bound. The setting lasts until
/// the transaction ends, and costs no round trip: it goes with the BEGIN.
pub(crate) async fn begin_planned_once(
    pool: &PgPool,
) -> Result<sqlx::Transaction<'static, sqlx::Postgres>, sqlx::Error> {
    pool.begin_with("BEGIN; SET LOCAL plan_cache_mode = force_generic_plan")
        .await
}

/// A stored move, as the game replays it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StoredMove {
    pub played: PlayedMove,
    /// The mover's clock after the move, for timed games.
    pub clock_ms: Option<u64>,
    pub at_ms: u64,
    /// How long the page was hidden during the turn, as the client said.
    pub hidden_ms: Option<u32>,
}

/// A game row with its seats' names, as lists and records show it; the
/// stored text and JSON arrive as their types (a value this code never
/// writes fails the read).
#[derive(Clone, Debug)]
pub(crate) struct GameRow {
    pub id: Uuid,
    pub variant: Json<VariantSpec>,
    pub rated: bool,
    pub status: GameStatus,
    pub result: Option<GameResult>,
    pub reason: Option<EndReason>,
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
    pub created: OffsetDateTime,
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
    pub casual_reason: Option<CasualReason>,
    /// When the side to move began its turn, once a move was made.
    pub turn_started_at: Option<OffsetDateTime>,
    pub tournament_id: Option<Uuid>,
    pub berserk0: bool,
    pub berserk1: bool,
}

/// Every read of game rows (one by id, a player's history, the live list)
/// is this one SELECT with the caller's conditions appended; sqlx checks
/// each whole query at compile time.
macro_rules! select_game_rows {
    ($conditions:tt $(, $arg:expr)* $(,)?) => {
        sqlx::query_as!(
            GameRow,
            r#"SELECT g.id, g.variant AS "variant: Json<VariantSpec>", g.rated,
                  g.status AS "status: GameStatus", g.result AS "result: GameResult",
                  g.reason AS "reason: EndReason", g.score0, g.score1,
                  game_plies(g.id, g.status, g.plies) AS "plies!",
                  g.seat0_player, g.seat0_ai,
                  COALESCE(p0.display_name, g.seat0_ai) AS "seat0_name!", g.seat0_rating,
                  g.seat1_player, g.seat1_ai,
                  COALESCE(p1.display_name, g.seat1_ai) AS "seat1_name!", g.seat1_rating,
                  to_char(g.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
                      AS "created_at!",
                  g.created_at AS created,
                  to_char(g.ended_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
                      AS ended_at,
                  g.seat0_takeover, g.seat1_takeover, g.clock_initial_ms, g.clock_increment_ms,
                  g.room_id, g.rematch_id, g.version, g.moved,
                  g.casual_reason AS "casual_reason: CasualReason",
                  g.turn_started_at, g.tournament_id, g.berserk0, g.berserk1
           FROM games g
           LEFT JOIN players p0 ON p0.id = g.seat0_player
           LEFT JOIN players p1 ON p1.id = g.seat1_player
           "# + $conditions
            $(, $arg)*
        )
    };
}

impl GameRow {
    pub(crate) fn variant(&self) -> VariantSpec {
        self.variant.0
    }

    pub(crate) fn seats(&self) -> [SeatInfo; 2] {
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

    pub(crate) fn time_control(&self) -> Option<TimeControl> {
        Some(TimeControl {
            initial_secs: (self.clock_initial_ms? / 1000) as u32,
            increment_secs: (self.clock_increment_ms? / 1000) as u32,
        })
    }

    /// Created against the AI (not an AI that took over later).
    pub(crate) fn against_ai(&self) -> bool {
        self.seat0_ai.is_some() || self.seat1_ai.is_some()
    }

    /// Which seats ever moved.
    pub(crate) fn moved(&self) -> [bool; 2] {
        [self.moved & 1 != 0, self.moved & 2 != 0]
    }

    pub(crate) fn score(&self) -> Option<[u8; 2]> {
        Some([self.score0? as u8, self.score1? as u8])
    }

    pub(crate) fn summary(&self) -> GameSummary {
        GameSummary {
            id: self.id,
            variant: self.variant(),
            rated: self.rated,
            status: self.status,
            seats: self.seats(),
            plies: self.plies as u32,
            result: self.result,
            reason: self.reason,
            created_at: self.created_at.clone(),
            ended_at: self.ended_at.clone(),
            against_ai: self.against_ai(),
            hotseat: self.hotseat(),
            watchers: 0,
        }
    }

    /// One player in both seats.
    pub(crate) fn hotseat(&self) -> bool {
        self.seat0_player.is_some() && self.seat0_player == self.seat1_player
    }

    /// The keyset cursor after this row, for history pages.
    pub(crate) fn cursor(&self) -> String {
        let micros = self.created.unix_timestamp_nanos() / 1000;
        format!("{micros}_{}", self.id)
    }
}

/// The latest time a cursor may name (µs since 1970: the end of year
/// 9999); Postgres's timestamps end not far beyond, and a cursor past them
/// would fail in SQL.
const LAST_CURSOR_MICROS: i64 = 253_402_300_799_999_999;

/// Parses a history cursor made by [`GameRow::cursor`]; `None` for one no
/// game could have made.
pub(crate) fn parse_cursor(text: &str) -> Option<(OffsetDateTime, Uuid)> {
    let (micros, id) = text.split_once('_')?;
    let micros: i64 = micros.parse().ok()?;
    if !(0..=LAST_CURSOR_MICROS).contains(&micros) {
        return None;
    }
    let at = OffsetDateTime::from_unix_timestamp_nanos(i128::from(micros) * 1000).ok()?;
    Some((at, Uuid::parse_str(id).ok()?))
}

/// A game row with its seats' names.
pub(crate) async fn game<'e>(
    executor: impl sqlx::PgExecutor<'e>,
    id: Uuid,
) -> Result<Option<GameRow>, sqlx::Error> {
    select_game_rows!("WHERE g.id = $1", id)
        .fetch_optional(executor)
        .await
}

/// A player's games, newest first, before a cursor.
///
/// Newest first is by id: game ids are UUIDv7, in the order the games were
/// made, and the history is partitioned by them. Each seat's index read in
/// id order goes through the partitions newest first and stops once it
/// has a page, so a page of recent games reads the newest partitions only.
pub(crate) async fn history(
    pool: &PgPool,
    player: Uuid,
    variant: Option<&str>,
    before: Option<Uuid>,
    limit: i64,
) -> Result<Vec<GameRow>, sqlx::Error> {
    select_game_rows!(
        r#"WHERE g.id IN (
               (SELECT id FROM games
                 WHERE seat0_player = $1
                   AND ($2::text IS NULL OR variant->>'variant' = $2)
                   AND ($3::uuid IS NULL OR id < $3)
                 ORDER BY id DESC LIMIT $4)
               UNION ALL
               (SELECT id FROM games
                 WHERE seat1_player = $1 AND seat0_player IS DISTINCT FROM $1
                   AND ($2::text IS NULL OR variant->>'variant' = $2)
                   AND ($3::uuid IS NULL OR id < $3)
                 ORDER BY id DESC LIMIT $4))
           ORDER BY g.id DESC
           LIMIT $4"#,
        player,
        variant,
        before,
        limit,
    )
    .fetch_all(pool)
    .await
}

/// Live games, highest rated first (casual games count as unrated, 0).
/// The live games worth featuring in `variant`: between two people (no
/// AI seat, not one device) who have both moved (a game just made, or one
/// that may still be aborted, is not worth sending watchers to), rated
/// first, then by rating; at most `limit`
/// (the caller orders these by their watchers too).
pub(crate) async fn featurable(
    pool: &PgPool,
    variant: &str,
    limit: i64,
    offset: i64,
) -> Result<Vec<GameRow>, sqlx::Error> {
    select_game_rows!(
        r#"WHERE g.status = 'live' AND g.variant->>'variant' = $1
             AND g.seat0_ai IS NULL AND g.seat1_ai IS NULL
             AND g.seat0_player IS DISTINCT FROM g.seat1_player
             AND g.moved = 3
           ORDER BY g.rated DESC,
                    COALESCE(g.seat0_rating, 0) + COALESCE(g.seat1_rating, 0) DESC,
                    g.created_at DESC, g.id
           LIMIT $2 OFFSET $3"#,
        variant,
        limit,
        offset,
    )
    .fetch_all(pool)
    .await
}

pub(crate) async fn live(
    pool: &PgPool,
    variant: Option<&str>,
    limit: i64,
    offset: i64,
) -> Result<Vec<GameRow>, sqlx::Error> {
    select_game_rows!(
        r#"WHERE g.status = 'live' AND ($1::text IS NULL OR g.variant->>'variant' = $1)
           ORDER BY COALESCE(g.seat0_rating, 0) + COALESCE(g.seat1_rating, 0) DESC,
                    g.created_at DESC, g.id
           LIMIT $2 OFFSET $3"#,
        variant,
        limit,
        offset,
    )
    .fetch_all(pool)
    .await
}
