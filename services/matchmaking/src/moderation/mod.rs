//! Moderation: players report players; moderators read an account's file,
//! warn, ban from ranked play, close, rename, mark boosters and engines
//! (whose rated games then count for nobody, every rating they moved
//! recomputed by the rating service) and lift any of it; every action goes
//! into an append-only audit log in the transaction that does it. Roles
//! travel in access tokens; changing one ends the account's sessions.
//! Players see what stands on them in their fair-play standing, close
//! their own account and take their data.

pub(crate) mod actions;
pub(crate) mod data;
pub(crate) mod file;
pub(crate) mod routes;
pub(crate) mod store;
pub(crate) mod weigh;

use mancala_platform::ApiError;
use mancala_proto::ErrorCode;
use mancala_proto::moderation::Role;
use serde_json::json;
use uuid::Uuid;

use crate::accounts::Accounts;
use crate::context::Context;
use store::LogLine;

/// Closes `player`'s own account, confirmed by their password when they
/// have one: the name becomes "Closed account …" (the old one is free
/// again), the username is forgotten, the games stay under the new name,
/// every session ends, what is not needed is erased (see [`data`]) and the
/// account leaves the leaderboards.
pub(crate) async fn close_own_account(
    deps: &Context,
    accounts: &Accounts,
    player: Uuid,
    password: Option<String>,
) -> Result<(), ApiError> {
    let now = deps.clock.now_utc();
    let mut tx = deps.postgres.begin().await?;
    let (role, closed) = store::lock_account(&mut tx, player).await?.ok_or_else(|| {
        ApiError::new(ErrorCode::TokenInvalid, "the access token's player is gone")
    })?;
    if closed {
        return Ok(());
    }
    if !accounts.password_matches(&mut tx, player, password).await? {
        // The player is signed in; what failed is the password they typed.
        return Err(ApiError::new(
            ErrorCode::InvalidCredentials,
            "the password is wrong",
        ));
    }
    let simple = player.simple().to_string();
    let anonymous = format!("Closed account {}", &simple[simple.len() - 12..]);
    store::rename(&mut tx, player, &anonymous).await?;
    crate::accounts::store::delete_credentials(&mut tx, player).await?;
    store::set_closed(&mut tx, player, Some(now)).await?;
    if role != Role::Player {
        store::set_role(&mut tx, player, Role::Player).await?;
    }
    store::request_recompute(&mut tx, player, None, now).await?;
    let sessions = data::erase_on_closing(&mut tx, player).await?;
    let line = LogLine {
        actor: Some(player),
        action: "self_close",
        player: Some(player),
        reason: "closed by its player",
        details: json!({ "name": anonymous }),
    };
    store::log(&mut tx, line, now).await?;
    tx.commit().await?;
    accounts.end_sessions(&sessions).await;
    actions::after_closing(deps, accounts, player).await;
    Ok(())
}

/// Why a grant from the command line failed.
#[derive(Debug, thiserror::Error)]
pub enum GrantError {
    #[error("no registered account is named {0:?}")]
    NoSuchAccount(String),
    #[error("the database: {0}")]
    Postgres(#[from] sqlx::Error),
}

/// Gives the registered account `username` `role`, logged with no actor
/// (the command line), and ends its sessions in Postgres; returns them so
/// the caller refuses their access tokens too.
pub async fn grant_role(
    pool: &sqlx::PgPool,
    username: &str,
    role: Role,
    reason: &str,
    now: time::OffsetDateTime,
) -> Result<Vec<Uuid>, GrantError> {
    let mut tx = pool.begin().await?;
    let player = sqlx::query_scalar!(
        "SELECT player_id FROM credentials WHERE lower(username) = lower($1)",
        username
    )
    .fetch_optional(&mut *tx)
    .await?
    .ok_or_else(|| GrantError::NoSuchAccount(username.to_owned()))?;
    let (from, _) = store::lock_account(&mut tx, player)
        .await?
        .ok_or_else(|| GrantError::NoSuchAccount(username.to_owned()))?;
    store::set_role(&mut tx, player, role).await?;
    let line = LogLine {
        actor: None,
        action: "set_role",
        player: Some(player),
        reason,
        details: json!({ "from": from, "to": role }),
    };
    store::log(&mut tx, line, now).await?;
    let sessions = crate::accounts::store::revoke_player_families(&mut tx, player, now).await?;
    tx.commit().await?;
    Ok(sessions)
}

/// Every moderator and admin: name and role.
pub async fn staff(pool: &sqlx::PgPool) -> Result<Vec<(String, Role)>, sqlx::Error> {
    let rows = sqlx::query!(
        "SELECT display_name, role FROM players WHERE role <> 'player' ORDER BY role, display_name"
    )
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .filter_map(|row| Some((row.display_name, Role::parse(&row.role)?)))
        .collect())
}
