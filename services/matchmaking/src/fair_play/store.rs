//! The fair-play rows matchmaking reads: a player's offences (a guest's
//! with those of the guests of its network), the first-move balance of
//! the games that started, and whether the last ranked game was spoiled
//! by the other side.

use mancala_proto::fair_play::OffenceKind;
use mancala_proto::moderation::{SanctionKind, SanctionNotice};
use sqlx::PgPool;
use time::OffsetDateTime;
use uuid::Uuid;

/// An offence as the record keeps it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct OffenceRow {
    pub game: Uuid,
    pub kind: OffenceKind,
    pub at: OffsetDateTime,
    /// `at` in RFC 3339, as the wire shows it.
    pub at_text: String,
    /// Another guest's of the same network.
    pub on_network: bool,
}

/// The offences that count for `player` since `since`, newest first: their
/// own, not forgiven, and for a guest those of every guest made from the
/// same network (a fresh guest is one click away).
pub(crate) async fn offences(
    pool: &PgPool,
    player: Uuid,
    since: OffsetDateTime,
) -> Result<Vec<OffenceRow>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT o.game_id, o.kind AS "kind: OffenceKind", o.at,
                  to_char(o.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS "at_text!",
                  o.player_id <> $1 AS "on_network!"
           FROM fair_play_offences o
           WHERE o.forgiven_at IS NULL AND o.at > $2
             AND (o.player_id = $1
                  -- The row form is planned with this statement; the
                  -- scalar one would plan its body again on every call.
                  OR (o.guest_network IS NOT NULL
                      AND o.guest_network = (SELECT network FROM guest_network_row($1))))
           ORDER BY o.at DESC, o.game_id
           LIMIT 500"#,
        player,
        since,
    )
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|row| OffenceRow {
            game: row.game_id,
            kind: row.kind,
            at: row.at,
            at_text: row.at_text,
            on_network: row.on_network,
        })
        .collect())
}

/// Games `player` moved first in, less games they moved second in, over
/// their queue games since `since` that started (each side moved): an
/// aborted pairing is no game, so declining one by resigning at ply 0
/// gains no first move (and is an offence besides).
pub(crate) async fn first_balance(
    pool: &PgPool,
    player: Uuid,
    since: OffsetDateTime,
) -> Result<i32, sqlx::Error> {
    let balance = sqlx::query_scalar!(
        r#"SELECT (count(*) FILTER (WHERE seat0_player = $1)
                   - count(*) FILTER (WHERE seat1_player = $1))::int AS "balance!"
           FROM games
           WHERE (seat0_player = $1 OR seat1_player = $1) AND created_at > $2
             AND seat0_player <> seat1_player AND room_id IS NULL AND moved = 3"#,
        player,
        since,
    )
    .fetch_one(pool)
    .await?;
    Ok(balance)
}

/// Whether `player`'s last game between people (after `since`) was spoiled
/// by the other side's not starting it or aborting it: the player then
/// keeps their place in the queue, and waits no longer for it.
pub(crate) async fn spoiled_by_opponent(
    pool: &PgPool,
    player: Uuid,
    since: OffsetDateTime,
) -> Result<bool, sqlx::Error> {
    let spoiled = sqlx::query_scalar!(
        r#"SELECT EXISTS (
               SELECT 1 FROM fair_play_offences o
               JOIN games g ON g.id = o.game_id
               WHERE o.at > $2 AND o.player_id <> $1
                 AND o.kind IN ('no_start', 'early_abort')
                 AND (g.seat0_player = $1 OR g.seat1_player = $1)
                 AND g.created_at > $2 - interval '1 day'
           ) AS "spoiled!""#,
        player,
        since,
    )
    .fetch_one(pool)
    .await?;
    Ok(spoiled)
}

/// What stands on a player now, as they see it: warnings not yet seen,
/// bans not run out, marks; each with the seconds left, when it ends.
pub(crate) async fn notices(
    pool: &PgPool,
    player: Uuid,
    now: OffsetDateTime,
) -> Result<Vec<SanctionNotice>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT id, kind, reason, rfc3339(created_at) AS "at!", until
           FROM sanctions
           WHERE player_id = $1 AND lifted_at IS NULL AND (until IS NULL OR until > $2)
             AND (kind <> 'warning' OR seen_at IS NULL)
           ORDER BY id DESC"#,
        player,
        now,
    )
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .filter_map(|row| {
            Some(SanctionNotice {
                id: row.id,
                kind: SanctionKind::parse(&row.kind)?,
                reason: row.reason,
                at: row.at,
                ends_in_secs: row
                    .until
                    .map(|until| (until - now).whole_seconds().max(1) as u64),
            })
        })
        .collect())
}
