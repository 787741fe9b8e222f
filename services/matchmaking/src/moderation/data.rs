//! A player's own data: everything the site keeps about them, to take
//! away, and what closing the account erases.
//!
//! Closing keeps what other people's records need and what moderation
//! must be able to account for, and erases the rest:
//!
//! - kept: the games and their moves (the opponents' games too), the
//!   ratings and their history (others' ratings were computed against
//!   them, and a recompute replays them), the reports filed and received,
//!   sanctions, moderators' notes and the audit log (what was done, and
//!   why, stays answerable), all under the anonymous name; and the network
//!   copied onto a guest's recorded offences, with the offence, since a
//!   guest's record follows its network and closing must not wipe a ban;
//! - erased: the username and password, the networks (the sign-up
//!   network and every network seen), the sessions, and the invites not
//!   yet accepted.

use mancala_proto::VariantName;
use mancala_proto::moderation::{
    DataInvite, DataNetwork, DataSession, DataTournament, FiledReport, MyData, PlayerRef,
    ReportReason,
};
use sqlx::{PgConnection, PgPool};
use time::OffsetDateTime;
use uuid::Uuid;

use super::file;

/// Everything kept about `player`, or `None` when there is no such player.
pub(crate) async fn my_data(
    pool: &PgPool,
    player: Uuid,
    now: OffsetDateTime,
) -> Result<Option<MyData>, sqlx::Error> {
    let Some(account) = sqlx::query!(
        r#"SELECT p.display_name, c.username AS "username?", rfc3339(p.created_at) AS "at!",
                  p.signup_network
           FROM players p LEFT JOIN credentials c ON c.player_id = p.id WHERE p.id = $1"#,
        player,
    )
    .fetch_optional(pool)
    .await?
    else {
        return Ok(None);
    };
    Ok(Some(MyData {
        player: PlayerRef {
            id: player,
            name: account.display_name,
        },
        username: account.username,
        created_at: account.at,
        signup_network: account.signup_network,
        networks: networks(pool, player).await?,
        sessions: sessions(pool, player).await?,
        ratings: file::ratings(pool, player).await?,
        games: file::all_games(pool, player).await?,
        fair_play: file::offences(pool, player, i64::MAX).await?,
        sanctions: crate::fair_play::store::notices(pool, player, now).await?,
        reports_filed: reports_filed(pool, player).await?,
        tournaments: tournaments(pool, player).await?,
        invites: invites(pool, player).await?,
    }))
}

async fn networks(pool: &PgPool, player: Uuid) -> Result<Vec<DataNetwork>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT network, rfc3339(first_seen) AS "first_seen!", rfc3339(last_seen) AS "last_seen!"
           FROM player_networks WHERE player_id = $1 ORDER BY last_seen DESC"#,
        player,
    )
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|row| DataNetwork {
            network: row.network,
            first_seen: row.first_seen,
            last_seen: row.last_seen,
        })
        .collect())
}

async fn sessions(pool: &PgPool, player: Uuid) -> Result<Vec<DataSession>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT rfc3339(created_at) AS "started!", rfc3339(expires_at) AS "expires!",
                  rfc3339(revoked_at) AS ended
           FROM refresh_families WHERE player_id = $1 ORDER BY created_at DESC"#,
        player,
    )
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|row| DataSession {
            started_at: row.started,
            expires_at: row.expires,
            ended_at: row.ended,
        })
        .collect())
}

async fn reports_filed(pool: &PgPool, player: Uuid) -> Result<Vec<FiledReport>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT r.id, r.player_id, p.display_name, r.game_id, r.reason, r.text,
                  rfc3339(r.created_at) AS "at!", rfc3339(r.closed_at) AS closed_at
           FROM reports r JOIN players p ON p.id = r.player_id
           WHERE r.reporter = $1 ORDER BY r.id"#,
        player,
    )
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .filter_map(|row| {
            Some(FiledReport {
                id: row.id,
                player: PlayerRef {
                    id: row.player_id,
                    name: row.display_name,
                },
                game: row.game_id,
                reason: ReportReason::parse(&row.reason)?,
                text: row.text,
                at: row.at,
                closed_at: row.closed_at,
            })
        })
        .collect())
}

async fn tournaments(pool: &PgPool, player: Uuid) -> Result<Vec<DataTournament>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT t.id, t.name, t.variant, rfc3339(e.joined_at) AS "joined!", e.rating,
                  e.withdrawn, t.created_by IS NOT DISTINCT FROM $1 AS "mine!"
           FROM tournament_players e JOIN tournaments t ON t.id = e.tournament_id
           WHERE e.player_id = $1 ORDER BY e.joined_at"#,
        player,
    )
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .filter_map(|row| {
            Some(DataTournament {
                id: row.id,
                name: row.name,
                variant: VariantName::parse(&row.variant)?,
                joined_at: row.joined,
                rating: row.rating,
                withdrawn: row.withdrawn,
                made_by_you: row.mine,
            })
        })
        .collect())
}

async fn invites(pool: &PgPool, player: Uuid) -> Result<Vec<DataInvite>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT code, rated, rfc3339(created_at) AS "at!", game_id
           FROM invites WHERE creator = $1 ORDER BY created_at"#,
        player,
    )
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|row| DataInvite {
            code: row.code,
            rated: row.rated,
            created_at: row.at,
            game: row.game_id,
        })
        .collect())
}

/// Erases, inside the closing's transaction, what a closed account no
/// longer needs (the module's doc lists it); returns the sessions it
/// erased, whose access tokens the caller refuses once committed (a
/// refresh token of an erased session matches nothing).
pub(crate) async fn erase_on_closing(
    connection: &mut PgConnection,
    player: Uuid,
) -> Result<Vec<Uuid>, sqlx::Error> {
    sqlx::query!(
        "UPDATE players SET signup_network = NULL WHERE id = $1",
        player
    )
    .execute(&mut *connection)
    .await?;
    sqlx::query!("DELETE FROM player_networks WHERE player_id = $1", player)
        .execute(&mut *connection)
        .await?;
    let sessions = sqlx::query_scalar!(
        "DELETE FROM refresh_families WHERE player_id = $1 RETURNING id",
        player
    )
    .fetch_all(&mut *connection)
    .await?;
    sqlx::query!(
        "DELETE FROM invites WHERE creator = $1 AND game_id IS NULL",
        player
    )
    .execute(&mut *connection)
    .await?;
    Ok(sessions)
}
