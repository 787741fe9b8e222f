//! The accounts tables, one small function per statement. Times come from
//! the service's injected clock (bound as `timestamptz`), never from the
//! database's `now()`, so that tests control expiry.

use mancala_proto::moderation::Role;
use sqlx::{PgConnection, PgPool};
use time::OffsetDateTime;
use uuid::Uuid;

/// Postgres's code for a unique violation.
const UNIQUE_VIOLATION: &str = "23505";

/// Whether `error` is a unique-constraint violation (a taken name).
pub(crate) fn is_unique_violation(error: &sqlx::Error) -> bool {
    error
        .as_database_error()
        .and_then(|database| database.code())
        .is_some_and(|code| code == UNIQUE_VIOLATION)
}

/// Whether `error` is the clash of a second credentials row for one player:
/// two registrations of one guest that raced (the loser's check ran on a
/// snapshot from before the winner's commit). Not a taken name.
pub(crate) fn is_second_registration(error: &sqlx::Error) -> bool {
    is_unique_violation(error)
        && error
            .as_database_error()
            .and_then(|database| database.constraint())
            == Some("credentials_pkey")
}

/// A player and whether they have registered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PlayerRow {
    pub id: Uuid,
    pub display_name: String,
    pub guest: bool,
    pub role: Role,
    /// Closed by a moderator or by the player: no sign-in, no session.
    pub closed: bool,
}

/// A registered player's stored password, for login.
#[derive(Clone, Debug)]
pub(crate) struct LoginRow {
    pub player: PlayerRow,
    pub password_hash: String,
}

/// Inserts a player unless the display name is taken (in any case);
/// returns whether it was inserted.
pub(crate) async fn insert_player(
    connection: &mut PgConnection,
    id: Uuid,
    display_name: &str,
    network: Option<&str>,
    now: OffsetDateTime,
) -> Result<bool, sqlx::Error> {
    let inserted = sqlx::query!(
        "INSERT INTO players (id, display_name, created_at, last_seen_at, signup_network)
         VALUES ($1, $2, $3, $3, $4)
         ON CONFLICT DO NOTHING",
        id,
        display_name,
        now,
        network,
    )
    .execute(connection)
    .await?;
    Ok(inserted.rows_affected() == 1)
}

/// Notes that `player` signed in (or refreshed a session) from `network`:
/// one row per player and network, its last time moved forward.
pub(crate) async fn note_network(
    connection: &mut PgConnection,
    player: Uuid,
    network: &str,
    now: OffsetDateTime,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "INSERT INTO player_networks (player_id, network, first_seen, last_seen)
         VALUES ($1, $2, $3, $3)
         ON CONFLICT (player_id, network) DO UPDATE
         SET last_seen = GREATEST(player_networks.last_seen, EXCLUDED.last_seen)",
        player,
        network,
        now,
    )
    .execute(connection)
    .await?;
    Ok(())
}

/// The player, locked for the rest of the transaction, with whether they
/// are a guest.
pub(crate) async fn lock_player(
    connection: &mut PgConnection,
    id: Uuid,
) -> Result<Option<PlayerRow>, sqlx::Error> {
    let row = sqlx::query!(
        r#"SELECT p.id, p.display_name, p.role, p.closed_at IS NOT NULL AS "closed!",
                  NOT EXISTS (SELECT 1 FROM credentials c WHERE c.player_id = p.id) AS "guest!"
           FROM players p WHERE p.id = $1 FOR UPDATE"#,
        id,
    )
    .fetch_optional(connection)
    .await?;
    Ok(row.map(|row| PlayerRow {
        id: row.id,
        display_name: row.display_name,
        guest: row.guest,
        role: Role::parse(&row.role).unwrap_or_default(),
        closed: row.closed,
    }))
}

/// Gives a player credentials. Fails with a unique violation when the
/// username is taken in any case.
pub(crate) async fn insert_credentials(
    connection: &mut PgConnection,
    player: Uuid,
    username: &str,
    password_hash: &str,
    now: OffsetDateTime,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "INSERT INTO credentials (player_id, username, password_hash, created_at)
         VALUES ($1, $2, $3, $4)",
        player,
        username,
        password_hash,
        now,
    )
    .execute(connection)
    .await?;
    Ok(())
}

/// Renames a player. Fails with a unique violation when the name is taken.
pub(crate) async fn rename_player(
    connection: &mut PgConnection,
    player: Uuid,
    display_name: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "UPDATE players SET display_name = $2 WHERE id = $1",
        player,
        display_name,
    )
    .execute(connection)
    .await?;
    Ok(())
}

/// A registered player by username, in any case.
pub(crate) async fn find_login(
    pool: &PgPool,
    username: &str,
) -> Result<Option<LoginRow>, sqlx::Error> {
    let row = sqlx::query!(
        r#"SELECT p.id, p.display_name, p.role, p.closed_at IS NOT NULL AS "closed!",
                  c.password_hash
           FROM credentials c JOIN players p ON p.id = c.player_id
           WHERE lower(c.username) = lower($1)"#,
        username,
    )
    .fetch_optional(pool)
    .await?;
    Ok(row.map(|row| LoginRow {
        player: PlayerRow {
            id: row.id,
            display_name: row.display_name,
            guest: false,
            role: Role::parse(&row.role).unwrap_or_default(),
            closed: row.closed,
        },
        password_hash: row.password_hash,
    }))
}

/// A registered player's stored password (none for a guest).
pub(crate) async fn password_hash(
    connection: &mut PgConnection,
    player: Uuid,
) -> Result<Option<String>, sqlx::Error> {
    sqlx::query_scalar!(
        "SELECT password_hash FROM credentials WHERE player_id = $1",
        player
    )
    .fetch_optional(connection)
    .await
}

/// Forgets a player's credentials: the username is free again.
pub(crate) async fn delete_credentials(
    connection: &mut PgConnection,
    player: Uuid,
) -> Result<(), sqlx::Error> {
    sqlx::query!("DELETE FROM credentials WHERE player_id = $1", player)
        .execute(connection)
        .await?;
    Ok(())
}

/// A player by id.
pub(crate) async fn find_player(pool: &PgPool, id: Uuid) -> Result<Option<PlayerRow>, sqlx::Error> {
    let row = sqlx::query!(
        r#"SELECT p.id, p.display_name, p.role, p.closed_at IS NOT NULL AS "closed!",
                  NOT EXISTS (SELECT 1 FROM credentials c WHERE c.player_id = p.id) AS "guest!"
           FROM players p WHERE p.id = $1"#,
        id,
    )
    .fetch_optional(pool)
    .await?;
    Ok(row.map(|row| PlayerRow {
        id: row.id,
        display_name: row.display_name,
        guest: row.guest,
        role: Role::parse(&row.role).unwrap_or_default(),
        closed: row.closed,
    }))
}

/// Records that the player was just here.
pub(crate) async fn touch_player(
    connection: &mut PgConnection,
    player: Uuid,
    now: OffsetDateTime,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "UPDATE players SET last_seen_at = $2 WHERE id = $1",
        player,
        now,
    )
    .execute(connection)
    .await?;
    Ok(())
}

/// Starts a token family (a sign-in) with its first token.
pub(crate) async fn start_family(
    connection: &mut PgConnection,
    family: Uuid,
    player: Uuid,
    token_hash: &[u8],
    now: OffsetDateTime,
    expires_at: OffsetDateTime,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "INSERT INTO refresh_families (id, player_id, created_at, expires_at)
         VALUES ($1, $2, $3, $4)",
        family,
        player,
        now,
        expires_at,
    )
    .execute(&mut *connection)
    .await?;
    add_token(connection, family, token_hash, now).await
}

/// Adds a fresh token to a family.
pub(crate) async fn add_token(
    connection: &mut PgConnection,
    family: Uuid,
    token_hash: &[u8],
    now: OffsetDateTime,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "INSERT INTO refresh_tokens (token_hash, family_id, issued_at)
         VALUES ($1, $2, $3)",
        token_hash,
        family,
        now,
    )
    .execute(connection)
    .await?;
    Ok(())
}

/// A live family whose token was just exchanged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Rotated {
    pub family: Uuid,
    pub player: Uuid,
}

/// Marks a token used, if it is unused and its family is live; one
/// statement, so two concurrent refreshes with the same token cannot both
/// succeed.
pub(crate) async fn rotate_token(
    connection: &mut PgConnection,
    token_hash: &[u8],
    now: OffsetDateTime,
) -> Result<Option<Rotated>, sqlx::Error> {
    let row = sqlx::query!(
        "UPDATE refresh_tokens t SET rotated_at = $2
         FROM refresh_families f
         WHERE t.token_hash = $1 AND t.rotated_at IS NULL
           AND f.id = t.family_id AND f.revoked_at IS NULL
           AND f.expires_at > $2
         RETURNING f.id, f.player_id",
        token_hash,
        now,
    )
    .fetch_optional(connection)
    .await?;
    Ok(row.map(|row| Rotated {
        family: row.id,
        player: row.player_id,
    }))
}

/// Why a token could not be rotated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TokenState {
    pub family: Uuid,
    pub rotated: bool,
    pub revoked: bool,
    pub expired: bool,
}

/// What is known of a token, whatever its state.
pub(crate) async fn token_state(
    connection: &mut PgConnection,
    token_hash: &[u8],
    now: OffsetDateTime,
) -> Result<Option<TokenState>, sqlx::Error> {
    let row = sqlx::query!(
        r#"SELECT f.id,
                  t.rotated_at IS NOT NULL AS "rotated!",
                  f.revoked_at IS NOT NULL AS "revoked!",
                  f.expires_at <= $2 AS "expired!"
           FROM refresh_tokens t JOIN refresh_families f ON f.id = t.family_id
           WHERE t.token_hash = $1"#,
        token_hash,
        now,
    )
    .fetch_optional(connection)
    .await?;
    Ok(row.map(|row| TokenState {
        family: row.id,
        rotated: row.rotated,
        revoked: row.revoked,
        expired: row.expired,
    }))
}

/// Moves a family's expiry: each refresh keeps an active player signed in.
pub(crate) async fn extend_family(
    connection: &mut PgConnection,
    family: Uuid,
    expires_at: OffsetDateTime,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "UPDATE refresh_families SET expires_at = $2 WHERE id = $1",
        family,
        expires_at,
    )
    .execute(connection)
    .await?;
    Ok(())
}

/// Revokes a family, unless it already is.
pub(crate) async fn revoke_family(
    connection: &mut PgConnection,
    family: Uuid,
    now: OffsetDateTime,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "UPDATE refresh_families SET revoked_at = $2
         WHERE id = $1 AND revoked_at IS NULL",
        family,
        now,
    )
    .execute(connection)
    .await?;
    Ok(())
}

/// Revokes every family of a player: a guest's sessions end when they
/// register, since the account is now behind a password. Returns the
/// families revoked, whose access tokens must stop working too.
pub(crate) async fn revoke_player_families(
    connection: &mut PgConnection,
    player: Uuid,
    now: OffsetDateTime,
) -> Result<Vec<Uuid>, sqlx::Error> {
    sqlx::query_scalar!(
        "UPDATE refresh_families SET revoked_at = $2
         WHERE player_id = $1 AND revoked_at IS NULL
         RETURNING id",
        player,
        now,
    )
    .fetch_all(connection)
    .await
}

/// Deletes families that expired or were revoked over a day ago, with
/// their tokens; returns how many. A day's grace keeps reuse detection
/// working for a token replayed just after its family ended.
pub(crate) async fn purge_families(pool: &PgPool, now: OffsetDateTime) -> Result<u64, sqlx::Error> {
    let deleted = sqlx::query!(
        "DELETE FROM refresh_families
         WHERE expires_at < $1::timestamptz - interval '1 day'
            OR revoked_at < $1::timestamptz - interval '1 day'",
        now,
    )
    .execute(pool)
    .await?;
    Ok(deleted.rows_affected())
}
