//! What one player may make or hold, so that one account cannot load the
//! platform for everyone: games made per minute (counted in Redis, across
//! instances), games against the AI or on one device going at once,
//! invites waiting, private arenas made (per account and per address) and
//! joins, pauses and withdrawals. Over a limit the answer is 429
//! `rate_limited` with `Retry-After`.

use mancala_platform::ApiError;
use mancala_platform::ratelimit::{self, Decision};
use uuid::Uuid;

use crate::context::Context;

/// A casual game with no move for this long no longer counts as going: a
/// tab closed mid-game does not hold its player's place.
const ACTIVE: std::time::Duration = std::time::Duration::from_secs(600);

/// The answer when a count (not a rate) is full: retry once a game ends.
const FULL_RETRY_SECS: u64 = 60;

fn full(message: String) -> ApiError {
    ApiError {
        message,
        ..ApiError::rate_limited(FULL_RETRY_SECS)
    }
}

/// Counts one event of `subject` against `limit` (under `name`); over it,
/// 429 with `what` and when to retry.
async fn count(
    deps: &Context,
    name: &str,
    subject: &str,
    limit: ratelimit::Limit,
    what: &str,
) -> Result<(), ApiError> {
    let now = deps.clock.now_secs();
    match ratelimit::hit(&deps.redis, name, subject, limit, now).await? {
        Decision::Allowed { .. } => Ok(()),
        Decision::Limited { retry_after } => Err(ApiError {
            message: format!(
                "at most {} {what} a {} s; retry later",
                limit.max, limit.window_seconds
            ),
            ..ApiError::rate_limited(retry_after)
        }),
    }
}

/// Before a private arena is made by `player` from `address`: the rates
/// per account and per address (the arenas not yet over are counted where
/// the arena is made, [`too_many_live_tournaments`]).
pub(crate) async fn new_tournament(
    deps: &Context,
    player: Uuid,
    address: &str,
) -> Result<(), ApiError> {
    let limits = deps.settings.player_limits;
    count(
        deps,
        "tournaments",
        &player.to_string(),
        limits.tournaments,
        "new arenas",
    )
    .await?;
    count(
        deps,
        "tournaments_ip",
        address,
        limits.tournaments_per_ip,
        "new arenas from one address",
    )
    .await
}

/// The answer when an account has all the arenas it may have not yet over.
pub(crate) fn too_many_live_tournaments(cap: u32) -> ApiError {
    full(format!(
        "you have {cap} arenas not yet over; let one end first"
    ))
}

/// Before a join, a pause or a withdrawal by `player`.
pub(crate) async fn tournament_action(deps: &Context, player: Uuid) -> Result<(), ApiError> {
    count(
        deps,
        "tournament_actions",
        &player.to_string(),
        deps.settings.player_limits.tournament_actions,
        "joins, pauses and withdrawals",
    )
    .await
}

/// Counts one game (or invite) made by `player` against the rate.
async fn count_made(deps: &Context, player: Uuid) -> Result<(), ApiError> {
    let limit = deps.settings.player_limits.games;
    count(deps, "games", &player.to_string(), limit, "new games").await
}

/// Before a game against the AI or on one device.
pub(crate) async fn new_casual_game(deps: &Context, player: Uuid) -> Result<(), ApiError> {
    let limit = deps.settings.player_limits.active_casual_games;
    let since = deps.clock.now_utc() - ACTIVE;
    let going = sqlx::query_scalar!(
        r#"SELECT count(*) AS "count!" FROM games
           WHERE status = 'live' AND room_id IS NULL
             AND (seat0_player = $1 OR seat1_player = $1)
             AND (seat0_ai IS NOT NULL OR seat1_ai IS NOT NULL OR seat0_player = seat1_player)
             AND COALESCE(turn_started_at, created_at) > $2"#,
        player,
        since,
    )
    .fetch_one(&deps.postgres)
    .await?;
    if going >= i64::from(limit) {
        return Err(full(format!(
            "you have {going} games going; finish or resign one first"
        )));
    }
    count_made(deps, player).await
}

/// Before an invite.
pub(crate) async fn new_invite(deps: &Context, player: Uuid) -> Result<(), ApiError> {
    let limit = deps.settings.player_limits.open_invites;
    let now = deps.clock.now_utc();
    let waiting = sqlx::query_scalar!(
        r#"SELECT count(*) AS "count!" FROM invites
           WHERE creator = $1 AND accepted_by IS NULL AND expires_at > $2"#,
        player,
        now,
    )
    .fetch_one(&deps.postgres)
    .await?;
    if waiting >= i64::from(limit) {
        return Err(full(format!(
            "you have {waiting} invites waiting; let one be used or expire first"
        )));
    }
    count_made(deps, player).await
}
