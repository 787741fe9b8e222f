//! The game tables, one small function per statement. Times come from the
//! service's injected clock as Unix seconds (`to_timestamp`).

use mancala_proto::VariantSpec;
use mancala_proto::game::{
    CasualReason, EndReason, GameResult, GameStatus, GameSummary, Over, PlayedMove, SeatInfo,
    TimeControl,
};
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

use crate::game::live::StoredMove;

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

/// A game to create.
#[derive(Clone, Debug)]
pub struct NewGame {
    pub id: Uuid,
    pub variant: serde_json::Value,
    pub seats: [NewSeat; 2],
    pub rated: bool,
    pub time_control: Option<TimeControl>,
    pub room: Option<Uuid>,
    /// Why a game asked for as rated is casual.
    pub casual_reason: Option<CasualReason>,
}

/// Creates a live game.
pub async fn insert_game(
    connection: &mut PgConnection,
    game: &NewGame,
    now: f64,
) -> Result<(), sqlx::Error> {
    let [seat0, seat1] = &game.seats;
    let initial = game.time_control.map(|tc| tc.initial_secs as i32 * 1000);
    let increment = game.time_control.map(|tc| tc.increment_secs as i32 * 1000);
    sqlx::query!(
        "INSERT INTO games (id, variant, seat0_player, seat0_ai, seat0_rating, seat0_rd,
                            seat1_player, seat1_ai, seat1_rating, seat1_rd, rated, created_at,
                            clock_initial_ms, clock_increment_ms, room_id, casual_reason)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, to_timestamp($12), $13, $14, $15,
                 $16)",
        game.id,
        game.variant,
        seat0.player,
        seat0.ai,
        seat0.rating,
        seat0.rd,
        seat1.player,
        seat1.ai,
        seat1.rating,
        seat1.rd,
        game.rated,
        now,
        initial,
        increment,
        game.room,
        game.casual_reason.map(CasualReason::as_str),
    )
    .execute(connection)
    .await?;
    Ok(())
}

/// How many games between two players, made since `since`, may still count
/// for rating: rated ones that were not aborted (live ones included).
pub async fn rated_games_between(
    connection: &mut PgConnection,
    a: Uuid,
    b: Uuid,
    since: f64,
) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar!(
        r#"SELECT count(*) AS "count!" FROM games
           WHERE rated AND status <> 'aborted' AND created_at >= to_timestamp($3)
             AND ((seat0_player = $1 AND seat1_player = $2)
                  OR (seat0_player = $2 AND seat1_player = $1))"#,
        a,
        b,
        since,
    )
    .fetch_one(connection)
    .await
}

/// Opens a friend room that closes at `expires_at` at the latest.
pub async fn insert_room(
    connection: &mut PgConnection,
    id: Uuid,
    now: f64,
    expires_at: f64,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "INSERT INTO rooms (id, created_at, expires_at) VALUES ($1, to_timestamp($2), to_timestamp($3))",
        id,
        now,
        expires_at,
    )
    .execute(connection)
    .await?;
    Ok(())
}

/// Marks a room as empty since `since`, or occupied (`None`).
pub async fn set_room_idle(
    pool: &PgPool,
    room: Uuid,
    since: Option<f64>,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "UPDATE rooms SET idle_since = to_timestamp($2) WHERE id = $1 AND closed_at IS NULL",
        room,
        since,
    )
    .execute(pool)
    .await?;
    Ok(())
}

/// Closes rooms past their 24 hours or empty for `idle_secs`, aborting
/// their unfinished games; returns those games.
pub async fn close_expired_rooms(
    pool: &PgPool,
    now: f64,
    idle_secs: f64,
) -> Result<Vec<Uuid>, sqlx::Error> {
    sqlx::query_scalar!(
        r#"WITH closing AS (
               UPDATE rooms SET closed_at = to_timestamp($1)
               WHERE closed_at IS NULL
                 AND (expires_at <= to_timestamp($1)
                      OR idle_since <= to_timestamp($1) - $2 * interval '1 second')
               RETURNING id
           )
           UPDATE games g SET status = 'aborted', result = 'aborted', reason = 'room_closed',
                              ended_at = to_timestamp($1), version = version + 1
           FROM closing c
           WHERE g.room_id = c.id AND g.status = 'live'
           RETURNING g.id"#,
        now,
        idle_secs,
    )
    .fetch_all(pool)
    .await
}

/// Aborts games not yet played (a side has never moved) whose side to move
/// is long past its first-move window: a hosted game aborts itself on
/// time, but one that nobody hosts (an AI game whose tab closed at once, a
/// ranked game both players left after one move) has no host to do it, and
/// would sit in the live lists for ever.
pub async fn abort_unstarted(
    pool: &PgPool,
    now: f64,
    overdue_secs: f64,
) -> Result<Vec<Uuid>, sqlx::Error> {
    sqlx::query_scalar!(
        r#"UPDATE games g SET status = 'aborted', result = 'aborted', reason = 'no_start',
                              ended_at = to_timestamp($1), version = version + 1
           WHERE g.status = 'live' AND g.moved <> 3
             AND COALESCE(g.turn_started_at, g.created_at)
                 <= to_timestamp($1) - $2 * interval '1 second'
           RETURNING g.id"#,
        now,
        overdue_secs,
    )
    .fetch_all(pool)
    .await
}

/// A player leaves a friend room for good: it closes, and remembers who
/// left. False when it had closed already.
pub async fn leave_room(
    pool: &PgPool,
    room: Uuid,
    player: Uuid,
    now: f64,
) -> Result<bool, sqlx::Error> {
    let left = sqlx::query!(
        "UPDATE rooms SET closed_at = to_timestamp($3), left_by = $2
         WHERE id = $1 AND closed_at IS NULL",
        room,
        player,
        now,
    )
    .execute(pool)
    .await?;
    Ok(left.rows_affected() == 1)
}

/// What a player is to a stored game, before anything wakes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SeatCheck {
    /// They hold a seat they still play.
    Seated,
    /// An AI took over their seat: they may watch.
    Replaced,
    /// Not theirs.
    Stranger,
}

/// Whether `player` holds a seat in `game` (`None`: no such game). Read
/// before a play socket hosts the game, so that a stranger's socket takes
/// no lease, bumps no epoch and starts no clock or AI.
pub async fn seat_check(
    pool: &PgPool,
    game: Uuid,
    player: Uuid,
) -> Result<Option<SeatCheck>, sqlx::Error> {
    let row = sqlx::query!(
        "SELECT seat0_player, seat1_player, seat0_takeover, seat1_takeover
         FROM games WHERE id = $1",
        game,
    )
    .fetch_optional(pool)
    .await?;
    Ok(row.map(|row| {
        let seats = [
            (row.seat0_player, row.seat0_takeover),
            (row.seat1_player, row.seat1_takeover),
        ];
        let mine = seats.iter().filter(|(held, _)| *held == Some(player));
        let mut check = SeatCheck::Stranger;
        for (_, takeover) in mine {
            if takeover.is_none() {
                return SeatCheck::Seated;
            }
            check = SeatCheck::Replaced;
        }
        check
    }))
}

/// When a room closes (at the latest), and whether it has.
pub async fn room_deadline(pool: &PgPool, room: Uuid) -> Result<Option<(f64, bool)>, sqlx::Error> {
    let row = sqlx::query!(
        r#"SELECT extract(epoch FROM expires_at)::float8 AS "expires!", closed_at IS NOT NULL AS "closed!"
           FROM rooms WHERE id = $1"#,
        room,
    )
    .fetch_optional(pool)
    .await?;
    Ok(row.map(|row| (row.expires, row.closed)))
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

/// A game's moves in order, with their clocks and times.
pub async fn moves(pool: &PgPool, id: Uuid) -> Result<Vec<StoredMove>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT ply, seat, pit, clock_ms,
                  (extract(epoch FROM played_at) * 1000)::bigint AS "at_ms!"
           FROM game_moves WHERE game_id = $1 ORDER BY ply"#,
        id,
    )
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|row| StoredMove {
            played: PlayedMove {
                ply: row.ply as u32,
                seat: row.seat as u8,
                pit: row.pit as u8,
            },
            clock_ms: row.clock_ms.map(|ms| ms.max(0) as u64),
            at_ms: row.at_ms.max(0) as u64,
        })
        .collect())
}

/// Takes a game over as its new host: raises its epoch and returns it.
/// Every later write names this epoch, so the previous host's fail.
pub async fn claim_epoch(pool: &PgPool, id: Uuid) -> Result<Option<i64>, sqlx::Error> {
    sqlx::query_scalar!(
        "UPDATE games SET epoch = epoch + 1 WHERE id = $1 RETURNING epoch",
        id,
    )
    .fetch_optional(pool)
    .await
}

/// Stores a move, only if it is the next ply of a live game held under
/// `epoch`: a second writer for the same ply, or a host that lost the game,
/// fails (on the count or the epoch, or on the key). One statement, so
/// outside a transaction it commits (durably) by itself: one round trip.
pub async fn append_move(
    connection: &mut PgConnection,
    game: Uuid,
    epoch: i64,
    stored: StoredMove,
    version: u64,
) -> Result<bool, sqlx::Error> {
    let written = sqlx::query!(
        "WITH advanced AS (
             UPDATE games SET plies = $2, version = $3, moved = moved | $9::smallint,
                              turn_started_at = to_timestamp($8::float8 / 1000)
             WHERE id = $1 AND epoch = $4 AND status = 'live' AND plies = $2 - 1
             RETURNING id
         )
         INSERT INTO game_moves (game_id, ply, seat, pit, clock_ms, played_at)
         SELECT id, $2, $5, $6, $7, to_timestamp($8::float8 / 1000) FROM advanced",
        game,
        stored.played.ply as i32,
        version as i64,
        epoch,
        i16::from(stored.played.seat),
        i16::from(stored.played.pit),
        stored.clock_ms.map(|ms| ms.min(i32::MAX as u64) as i32),
        stored.at_ms as f64,
        1i16 << (stored.played.seat % 2),
    )
    .execute(connection)
    .await?;
    Ok(written.rows_affected() == 1)
}

fn reason_text(reason: EndReason) -> String {
    serde_json::to_value(reason)
        .ok()
        .and_then(|value| value.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// Ends a live game held under `epoch` with its result and, when rated,
/// its outbox row for the rating service, in the caller's transaction.
/// False if it was not live or not held.
pub async fn finish_game(
    connection: &mut PgConnection,
    game: Uuid,
    epoch: i64,
    over: &Over,
    now: f64,
) -> Result<bool, sqlx::Error> {
    let status = if over.result == GameResult::Aborted {
        "aborted"
    } else {
        "over"
    };
    let rated = sqlx::query_scalar!(
        "UPDATE games SET status = $3, result = $4, reason = $5, score0 = $6, score1 = $7,
                          ended_at = to_timestamp($8), version = $9
         WHERE id = $1 AND epoch = $2 AND status = 'live'
         RETURNING rated",
        game,
        epoch,
        status,
        over.result.as_str(),
        reason_text(over.reason),
        i16::from(over.score[0]),
        i16::from(over.score[1]),
        now,
        over.version as i64,
    )
    .fetch_optional(&mut *connection)
    .await?;
    let Some(rated) = rated else {
        return Ok(false);
    };
    if rated && over.result != GameResult::Aborted {
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

/// Takes moves back to `ply` at `now_ms` (the side to move starts its
/// turn then), in the caller's transaction.
pub async fn undo(
    connection: &mut PgConnection,
    game: Uuid,
    epoch: i64,
    ply: u32,
    version: u64,
    now_ms: u64,
) -> Result<bool, sqlx::Error> {
    let held = sqlx::query!(
        "UPDATE games SET plies = $3, version = $4, turn_started_at = to_timestamp($5::float8 / 1000)
         WHERE id = $1 AND epoch = $2 AND status = 'live'",
        game,
        epoch,
        ply as i32,
        version as i64,
        now_ms as f64,
    )
    .execute(&mut *connection)
    .await?;
    if held.rows_affected() != 1 {
        return Ok(false);
    }
    sqlx::query!(
        "DELETE FROM game_moves WHERE game_id = $1 AND ply > $2",
        game,
        ply as i32,
    )
    .execute(connection)
    .await?;
    Ok(true)
}

/// An AI takes an absent player's seat; the game becomes casual.
pub async fn take_over(
    connection: &mut PgConnection,
    game: Uuid,
    epoch: i64,
    seat: u8,
    level: &str,
    version: u64,
) -> Result<bool, sqlx::Error> {
    let done = sqlx::query!(
        "UPDATE games SET rated = false, version = $5,
                          seat0_takeover = CASE WHEN $3 = 0 THEN $4 ELSE seat0_takeover END,
                          seat1_takeover = CASE WHEN $3 = 1 THEN $4 ELSE seat1_takeover END
         WHERE id = $1 AND epoch = $2 AND status = 'live'",
        game,
        epoch,
        i32::from(seat),
        level,
        version as i64,
    )
    .execute(connection)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Links a finished game to its rematch, once: the id already linked if
/// another request won.
pub async fn link_rematch(
    connection: &mut PgConnection,
    game: Uuid,
    next: Uuid,
) -> Result<Option<Uuid>, sqlx::Error> {
    let linked = sqlx::query_scalar!(
        "UPDATE games SET rematch_id = $2 WHERE id = $1 AND rematch_id IS NULL RETURNING rematch_id",
        game,
        next,
    )
    .fetch_optional(&mut *connection)
    .await?;
    if linked.is_some() {
        return Ok(Some(next));
    }
    sqlx::query_scalar!("SELECT rematch_id FROM games WHERE id = $1", game)
        .fetch_one(connection)
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
