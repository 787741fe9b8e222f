//! The moderation tables, one small function per statement. Times come
//! from the service's injected clock, never from the database's `now()`.

use mancala_proto::moderation::{
    Evidence, Note, PlayerRef, Report, ReportReason, ReporterStanding, Role, Sanction, SanctionKind,
};
use serde_json::Value;
use sqlx::types::Json;
use sqlx::{PgConnection, PgPool};
use time::OffsetDateTime;
use uuid::Uuid;

/// The audit log line of one action; returns its id.
pub(crate) struct LogLine<'a> {
    pub actor: Option<Uuid>,
    pub action: &'a str,
    pub player: Option<Uuid>,
    pub reason: &'a str,
    pub details: Value,
}

pub(crate) async fn log(
    connection: &mut PgConnection,
    line: LogLine<'_>,
    now: OffsetDateTime,
) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar!(
        "INSERT INTO moderation_log (at, actor, action, player_id, reason, details)
         VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
        now,
        line.actor,
        line.action,
        line.player,
        line.reason,
        line.details,
    )
    .fetch_one(connection)
    .await
}

/// The player's role and whether the account is closed, locked for the
/// rest of the transaction; `None` when there is no such player.
pub(crate) async fn lock_account(
    connection: &mut PgConnection,
    player: Uuid,
) -> Result<Option<(Role, bool)>, sqlx::Error> {
    let row = sqlx::query!(
        r#"SELECT role, closed_at IS NOT NULL AS "closed!" FROM players WHERE id = $1 FOR UPDATE"#,
        player,
    )
    .fetch_optional(connection)
    .await?;
    Ok(row.map(|row| (Role::parse(&row.role).unwrap_or_default(), row.closed)))
}

pub(crate) async fn set_role(
    connection: &mut PgConnection,
    player: Uuid,
    role: Role,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "UPDATE players SET role = $2 WHERE id = $1",
        player,
        role.as_str()
    )
    .execute(connection)
    .await?;
    Ok(())
}

/// Closes (`Some(now)`) or reopens (`None`) an account.
pub(crate) async fn set_closed(
    connection: &mut PgConnection,
    player: Uuid,
    closed_at: Option<OffsetDateTime>,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "UPDATE players SET closed_at = $2 WHERE id = $1",
        player,
        closed_at
    )
    .execute(connection)
    .await?;
    Ok(())
}

/// Renames a player; a unique violation when the name is taken.
pub(crate) async fn rename(
    connection: &mut PgConnection,
    player: Uuid,
    name: &str,
) -> Result<String, sqlx::Error> {
    sqlx::query_scalar!(
        "UPDATE players p SET display_name = $2 WHERE p.id = $1
         RETURNING (SELECT display_name FROM players WHERE id = $1)",
        player,
        name,
    )
    .fetch_one(connection)
    .await
    .map(|old| old.unwrap_or_default())
}

/// A new sanction; returns its id.
pub(crate) struct NewSanction<'a> {
    pub player: Uuid,
    pub kind: SanctionKind,
    pub reason: &'a str,
    pub by: Option<Uuid>,
    pub until: Option<OffsetDateTime>,
    pub covers_from: Option<OffsetDateTime>,
}

pub(crate) async fn insert_sanction(
    connection: &mut PgConnection,
    sanction: NewSanction<'_>,
    now: OffsetDateTime,
) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar!(
        "INSERT INTO sanctions (player_id, kind, reason, created_by, created_at, until, covers_from)
         VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
        sanction.player,
        sanction.kind.as_str(),
        sanction.reason,
        sanction.by,
        now,
        sanction.until,
        sanction.covers_from,
    )
    .fetch_one(connection)
    .await
}

/// Lifts a sanction that stands; returns its player and kind, or `None`
/// when there is no such sanction or it was lifted already.
pub(crate) async fn lift_sanction(
    connection: &mut PgConnection,
    id: i64,
    by: Option<Uuid>,
    now: OffsetDateTime,
) -> Result<Option<(Uuid, SanctionKind)>, sqlx::Error> {
    let row = sqlx::query!(
        "UPDATE sanctions SET lifted_at = $2, lifted_by = $3
         WHERE id = $1 AND lifted_at IS NULL
         RETURNING player_id, kind",
        id,
        now,
        by,
    )
    .fetch_optional(connection)
    .await?;
    Ok(row.and_then(|row| Some((row.player_id, SanctionKind::parse(&row.kind)?))))
}

/// A player's sanctions, newest first.
pub(crate) async fn sanctions(
    pool: &PgPool,
    player: Uuid,
    now: OffsetDateTime,
) -> Result<Vec<Sanction>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT s.id, s.kind, s.reason, s.created_by, b.display_name AS "by_name?",
                  rfc3339(s.created_at) AS "at!", rfc3339(s.until) AS until,
                  rfc3339(s.covers_from) AS covers_from, rfc3339(s.lifted_at) AS lifted_at,
                  (s.lifted_at IS NULL AND (s.until IS NULL OR s.until > $2)
                   AND (s.kind <> 'warning' OR s.seen_at IS NULL)) AS "active!"
           FROM sanctions s LEFT JOIN players b ON b.id = s.created_by
           WHERE s.player_id = $1
           ORDER BY s.id DESC"#,
        player,
        now,
    )
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .filter_map(|row| {
            Some(Sanction {
                id: row.id,
                kind: SanctionKind::parse(&row.kind)?,
                reason: row.reason,
                by: player_ref(row.created_by, row.by_name),
                at: row.at,
                until: row.until,
                covers_from: row.covers_from,
                lifted_at: row.lifted_at,
                active: row.active,
            })
        })
        .collect())
}

/// Marks a warning seen by its player; whether there was one to mark.
pub(crate) async fn see_warning(
    pool: &PgPool,
    player: Uuid,
    id: i64,
    now: OffsetDateTime,
) -> Result<bool, sqlx::Error> {
    let done = sqlx::query!(
        "UPDATE sanctions SET seen_at = $3
         WHERE id = $1 AND player_id = $2 AND kind = 'warning' AND seen_at IS NULL",
        id,
        player,
        now,
    )
    .execute(pool)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Asks the rating workers to follow a change of marks (or of the
/// account) of `player`; returns the request's id.
pub(crate) async fn request_recompute(
    connection: &mut PgConnection,
    player: Uuid,
    sanction: Option<i64>,
    now: OffsetDateTime,
) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar!(
        "INSERT INTO rating_recomputes (player_id, sanction_id, requested_at)
         VALUES ($1, $2, $3) RETURNING id",
        player,
        sanction,
        now,
    )
    .fetch_one(connection)
    .await
}

/// A report, unless the same reporter's report of the same player for the
/// same reason is open: then that one. Returns its id and whether it is new.
pub(crate) async fn file_report(
    pool: &PgPool,
    reporter: Uuid,
    player: Uuid,
    game: Option<Uuid>,
    reason: ReportReason,
    text: &str,
    now: OffsetDateTime,
) -> Result<(i64, bool), sqlx::Error> {
    let inserted = sqlx::query_scalar!(
        "INSERT INTO reports (reporter, player_id, game_id, reason, text, created_at)
         VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (reporter, player_id, reason) WHERE closed_at IS NULL DO NOTHING
         RETURNING id",
        reporter,
        player,
        game,
        reason.as_str(),
        text,
        now,
    )
    .fetch_optional(pool)
    .await?;
    if let Some(id) = inserted {
        return Ok((id, true));
    }
    let open = sqlx::query_scalar!(
        "SELECT id FROM reports
         WHERE reporter = $1 AND player_id = $2 AND reason = $3 AND closed_at IS NULL",
        reporter,
        player,
        reason.as_str(),
    )
    .fetch_one(pool)
    .await?;
    Ok((open, false))
}

/// Whether a player exists.
pub(crate) async fn player_exists(pool: &PgPool, player: Uuid) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar!(
        r#"SELECT EXISTS (SELECT 1 FROM players WHERE id = $1) AS "exists!""#,
        player
    )
    .fetch_one(pool)
    .await
}

/// Whether `player` played finished game `game`.
pub(crate) async fn played_in(
    pool: &PgPool,
    player: Uuid,
    game: Uuid,
) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar!(
        r#"SELECT EXISTS (SELECT 1 FROM games WHERE id = $2 AND status <> 'live'
                          AND (seat0_player = $1 OR seat1_player = $1)) AS "exists!""#,
        player,
        game,
    )
    .fetch_one(pool)
    .await
}

/// A report and the network its reporter signed up from (what the queue
/// weighs reporters by; not shown).
pub(crate) struct Filed {
    pub report: Report,
    pub reporter_network: Option<String>,
}

/// Reports, open ones only or all, about one player or everyone, newest
/// first, each with its reporter's standing at `now`.
pub(crate) async fn reports(
    pool: &PgPool,
    player: Option<Uuid>,
    open_only: bool,
    limit: i64,
    now: OffsetDateTime,
) -> Result<Vec<Filed>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT r.id, r.reporter, a.display_name AS "reporter_name?", r.player_id,
                  p.display_name AS player_name, r.game_id, r.reason, r.text,
                  rfc3339(r.created_at) AS "at!", rfc3339(r.closed_at) AS closed_at,
                  a.signup_network AS "reporter_network?", a.created_at AS "reporter_since?",
                  EXISTS (SELECT 1 FROM credentials c WHERE c.player_id = a.id) AS "registered!",
                  (SELECT COALESCE(sum(games), 0) FROM ratings g WHERE g.player_id = a.id)::bigint
                      AS "rated_games!",
                  r.evidence AS "evidence: Json<Evidence>"
           FROM reports r
           LEFT JOIN players a ON a.id = r.reporter
           JOIN players p ON p.id = r.player_id
           WHERE ($1::uuid IS NULL OR r.player_id = $1) AND (NOT $2 OR r.closed_at IS NULL)
           ORDER BY r.id DESC
           LIMIT $3"#,
        player,
        open_only,
        limit,
    )
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .filter_map(|row| {
            let reporter = match (row.reporter, row.reporter_name) {
                (Some(id), Some(name)) => Some(PlayerRef { id, name }),
                _ => None,
            };
            let reporter_standing = match (&reporter, row.reporter_since) {
                (Some(_), Some(since)) => {
                    super::weigh::standing(row.registered, since, row.rated_games, now)
                }
                _ => ReporterStanding::Automatic,
            };
            let report = Report {
                id: row.id,
                reporter,
                reporter_standing,
                evidence: row.evidence.map(|evidence| evidence.0),
                player: PlayerRef {
                    id: row.player_id,
                    name: row.player_name,
                },
                game: row.game_id,
                reason: ReportReason::parse(&row.reason)?,
                text: row.text,
                at: row.at,
                closed_at: row.closed_at,
            };
            Some(Filed {
                report,
                reporter_network: row.reporter_network,
            })
        })
        .collect())
}

/// Closes an open report; returns its player, or `None`.
pub(crate) async fn close_report(
    connection: &mut PgConnection,
    id: i64,
    by: Uuid,
    now: OffsetDateTime,
) -> Result<Option<Uuid>, sqlx::Error> {
    sqlx::query_scalar!(
        "UPDATE reports SET closed_at = $2, closed_by = $3
         WHERE id = $1 AND closed_at IS NULL RETURNING player_id",
        id,
        now,
        by,
    )
    .fetch_optional(connection)
    .await
}

/// Closes every open report about `player` (an action has answered them).
/// Closes the open reports about `player` of `reason` (of every reason
/// when `None`); returns how many.
pub(crate) async fn close_reports_about(
    connection: &mut PgConnection,
    player: Uuid,
    reason: Option<ReportReason>,
    by: Option<Uuid>,
    now: OffsetDateTime,
) -> Result<u64, sqlx::Error> {
    let done = sqlx::query!(
        "UPDATE reports SET closed_at = $2, closed_by = $3
         WHERE player_id = $1 AND closed_at IS NULL AND ($4::text IS NULL OR reason = $4)",
        player,
        now,
        by,
        reason.map(ReportReason::as_str),
    )
    .execute(connection)
    .await?;
    Ok(done.rows_affected())
}

pub(crate) async fn add_note(
    connection: &mut PgConnection,
    player: Uuid,
    author: Uuid,
    text: &str,
    now: OffsetDateTime,
) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar!(
        "INSERT INTO moderator_notes (player_id, author, text, created_at)
         VALUES ($1, $2, $3, $4) RETURNING id",
        player,
        author,
        text,
        now,
    )
    .fetch_one(connection)
    .await
}

pub(crate) async fn notes(pool: &PgPool, player: Uuid) -> Result<Vec<Note>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT n.id, n.author, a.display_name AS "author_name?", n.text,
                  rfc3339(n.created_at) AS "at!"
           FROM moderator_notes n LEFT JOIN players a ON a.id = n.author
           WHERE n.player_id = $1
           ORDER BY n.id DESC"#,
        player,
    )
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|row| Note {
            id: row.id,
            by: player_ref(row.author, row.author_name),
            text: row.text,
            at: row.at,
        })
        .collect())
}

/// A player named, when both halves are there.
pub(crate) fn player_ref(id: Option<Uuid>, name: Option<String>) -> Option<PlayerRef> {
    Some(PlayerRef {
        id: id?,
        name: name?,
    })
}

/// Accounts whose display name or username starts with `prefix`.
pub(crate) async fn search(pool: &PgPool, prefix: &str) -> Result<Vec<PlayerRef>, sqlx::Error> {
    let pattern = format!(
        "{}%",
        prefix
            .to_lowercase()
            .replace('\\', "\\\\")
            .replace('%', "\\%")
            .replace('_', "\\_")
    );
    let rows = sqlx::query!(
        "SELECT p.id, p.display_name FROM players p
         LEFT JOIN credentials c ON c.player_id = p.id
         WHERE lower(p.display_name) LIKE $1 OR lower(c.username) LIKE $1
         ORDER BY lower(p.display_name)
         LIMIT 20",
        pattern,
    )
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|row| PlayerRef {
            id: row.id,
            name: row.display_name,
        })
        .collect())
}
