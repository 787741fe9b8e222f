//! What one player may make or hold, so that one account cannot load the
//! platform for everyone: games made per minute (counted in Redis, across
//! instances), games against the AI or on one device going at once, and
//! invites waiting. Over a limit the answer is 429 `rate_limited` with
//! `Retry-After`.

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

/// Counts one game (or invite) made by `player` against the rate.
async fn count_made(deps: &Context, player: Uuid) -> Result<(), ApiError> {
    let limit = deps.settings.player_limits.games;
    let now = deps.clock.now_secs();
    match ratelimit::hit(&deps.redis, "games", &player.to_string(), limit, now).await? {
        Decision::Allowed { .. } => Ok(()),
        Decision::Limited { retry_after } => Err(ApiError {
            message: format!(
                "at most {} new games a {} s; retry later",
                limit.max, limit.window_seconds
            ),
            ..ApiError::rate_limited(retry_after)
        }),
    }
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
