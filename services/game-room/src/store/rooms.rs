//! Friend rooms (their life, idleness and leaving) and the sweeps that end
//! what nobody hosts: rooms past their time, games never started.

use super::*;

/// Opens a friend room that closes at `expires_at` at the latest.
pub(crate) async fn insert_room(
    connection: &mut PgConnection,
    id: Uuid,
    now: OffsetDateTime,
    expires_at: OffsetDateTime,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "INSERT INTO rooms (id, created_at, expires_at) VALUES ($1, $2, $3)",
        id,
        now,
        expires_at,
    )
    .execute(connection)
    .await?;
    Ok(())
}

/// Marks a room as empty since `since`, or occupied (`None`).
pub(crate) async fn set_room_idle(
    pool: &PgPool,
    room: Uuid,
    since: Option<OffsetDateTime>,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "UPDATE rooms SET idle_since = $2 WHERE id = $1 AND closed_at IS NULL",
        room,
        since,
    )
    .execute(pool)
    .await?;
    Ok(())
}

/// Closes rooms past their 24 hours or empty since `idle_before`, aborting
/// their unfinished games; returns those games.
pub(crate) async fn close_expired_rooms(
    pool: &PgPool,
    now: OffsetDateTime,
    idle_before: OffsetDateTime,
) -> Result<Vec<Uuid>, sqlx::Error> {
    sqlx::query_scalar!(
        r#"WITH closing AS (
               UPDATE rooms SET closed_at = $1
               WHERE closed_at IS NULL AND (expires_at <= $1 OR idle_since <= $2)
               RETURNING id
           ),
           -- Ended from outside: the epoch raised and the log fenced, as
           -- a new host would (`writes::append_moves`).
           ended AS (
               UPDATE games g SET status = 'aborted', result = 'aborted', reason = 'room_closed',
                                  ended_at = $1, version = version + 1, epoch = g.epoch + 1,
                                  plies = COALESCE((SELECT m.ply FROM game_moves m
                                                WHERE m.game_id = g.id AND m.pit > 0
                                                ORDER BY m.ply DESC LIMIT 1), 0)
               FROM closing c
               WHERE g.room_id = c.id AND g.status = 'live'
               RETURNING g.id, g.epoch
           )
           SELECT id AS "id!" FROM ended WHERE fence_moves(id, epoch::int) > 0"#,
        now,
        idle_before,
    )
    .fetch_all(pool)
    .await
}

/// Aborts games not yet played (a side has never moved) whose side to move
/// began before `turn_before` (long past its first-move window, in the
/// games that have one: rated or timed): a hosted game aborts itself on
/// time, but one that nobody hosts (an AI game whose tab closed at once, a
/// ranked game both players left after one move) has no host to do it, and
/// would sit in the live lists for ever. Between two people in a game
/// asked for as rated, the side that never moved is charged a no-start,
/// as its host would have charged it.
pub(crate) async fn abort_unstarted(
    pool: &PgPool,
    now: OffsetDateTime,
    turn_before: OffsetDateTime,
) -> Result<Vec<Uuid>, sqlx::Error> {
    sqlx::query_scalar!(
        r#"WITH aborted AS (
               UPDATE games g SET status = 'aborted', result = 'aborted', reason = 'no_start',
                                  ended_at = $1, version = version + 1, epoch = g.epoch + 1
               WHERE g.status = 'live' AND g.moved <> 3
                 AND (g.rated OR g.casual_reason IS NOT NULL OR g.clock_initial_ms IS NOT NULL)
                 AND COALESCE(g.turn_started_at, g.created_at) <= $2
               RETURNING g.id, g.epoch, g.moved, g.seat0_player, g.seat1_player, g.rated, g.casual_reason,
                         g.seat0_takeover, g.seat1_takeover
           ),
           charged AS (
               INSERT INTO fair_play_offences (game_id, player_id, kind, guest_network, at)
               SELECT a.id, o.player, 'no_start', guest_network(o.player), $1
               FROM aborted a,
                    LATERAL (SELECT CASE WHEN a.moved & 1 = 0 THEN a.seat0_player
                                         ELSE a.seat1_player END AS player) o
               WHERE a.seat0_player IS NOT NULL AND a.seat1_player IS NOT NULL
                 AND a.seat0_player <> a.seat1_player
                 AND a.seat0_takeover IS NULL AND a.seat1_takeover IS NULL
                 AND (a.rated OR a.casual_reason IS NOT NULL)
               ON CONFLICT DO NOTHING
           )
           -- The log fenced, as for a new host (`writes::append_moves`).
           SELECT id AS "id!" FROM aborted WHERE fence_moves(id, epoch::int) > 0"#,
        now,
        turn_before,
    )
    .fetch_all(pool)
    .await
}

/// Live games outside friend rooms with no move since `quiet_before`: the
/// candidates for ending as abandoned (the caller skips those a host holds,
/// which someone has had open lately).
pub(crate) async fn quiet_games(
    pool: &PgPool,
    quiet_before: OffsetDateTime,
) -> Result<Vec<(Uuid, i64)>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT id, epoch FROM games
           WHERE status = 'live' AND room_id IS NULL
             AND COALESCE(turn_started_at, created_at) <= $1
           ORDER BY created_at LIMIT 500"#,
        quiet_before,
    )
    .fetch_all(pool)
    .await?;
    Ok(rows.into_iter().map(|row| (row.id, row.epoch)).collect())
}

/// Ends a quiet game as abandoned, if it is still live under `epoch` (no
/// host took it meanwhile): aborted, never rated. False if it was not.
pub(crate) async fn abandon(
    pool: &PgPool,
    game: Uuid,
    epoch: i64,
    now: OffsetDateTime,
) -> Result<bool, sqlx::Error> {
    // Ended from outside: the epoch raised and the log fenced, as a new
    // host would (`writes::append_moves`).
    let ended = sqlx::query_scalar!(
        r#"WITH ended AS (
               UPDATE games g SET status = 'aborted', result = 'aborted', reason = 'abandoned',
                                  ended_at = $3, version = version + 1, epoch = g.epoch + 1,
                                  plies = COALESCE((SELECT m.ply FROM game_moves m
                                          WHERE m.game_id = g.id AND m.pit > 0
                                          ORDER BY m.ply DESC LIMIT 1), 0)
               WHERE g.id = $1 AND g.epoch = $2 AND g.status = 'live'
               RETURNING g.id, g.epoch
           )
           SELECT fence_moves(id, epoch::int) FROM ended"#,
        game,
        epoch,
        now,
    )
    .fetch_optional(pool)
    .await?;
    Ok(ended.is_some())
}

/// A player leaves a friend room for good: it closes, and remembers who
/// left. False when it had closed already.
pub(crate) async fn leave_room(
    pool: &PgPool,
    room: Uuid,
    player: Uuid,
    now: OffsetDateTime,
) -> Result<bool, sqlx::Error> {
    let left = sqlx::query!(
        "UPDATE rooms SET closed_at = $3, left_by = $2
         WHERE id = $1 AND closed_at IS NULL",
        room,
        player,
        now,
    )
    .execute(pool)
    .await?;
    Ok(left.rows_affected() == 1)
}

/// When a room closes (at the latest), and whether it has.
pub(crate) async fn room_deadline(
    pool: &PgPool,
    room: Uuid,
) -> Result<Option<(OffsetDateTime, bool)>, sqlx::Error> {
    let row = sqlx::query!(
        r#"SELECT expires_at AS expires, closed_at IS NOT NULL AS "closed!"
           FROM rooms WHERE id = $1"#,
        room,
    )
    .fetch_optional(pool)
    .await?;
    Ok(row.map(|row| (row.expires, row.closed)))
}
