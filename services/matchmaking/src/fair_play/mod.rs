//! Fair play: the ranked play a player's record allows. Game-room writes
//! an offence row when a game between two people, asked for as rated,
//! ends because one of them did not play it (`fair_play_offences`); here
//! the rows become a standing (`policy`), which closes the ranked queues
//! and rated invites for a while, and which the player can read
//! (`GET /v1/me/fair-play`, the lobby's `fair_play` message).

pub(crate) mod policy;
pub(crate) mod store;

use actix_web::web;
use mancala_platform::clock::{millis_of, timestamp};
use mancala_platform::{ApiError, Authenticated};
use mancala_proto::ErrorCode;
use mancala_proto::fair_play::{FairPlayStanding, Offence};
use mancala_proto::moderation::SanctionNotice;
use uuid::Uuid;

use crate::context::Context;

/// How far back the first-move balance reads games.
const BALANCE_DAYS: i64 = 30;

/// How recent a spoiled game must be for its victim to keep their place.
const SPOILED_WITHIN: time::Duration = time::Duration::minutes(5);

/// The player's standing now, as the wire shows it.
pub(crate) async fn standing(
    deps: &Context,
    player: Uuid,
) -> Result<FairPlayStanding, sqlx::Error> {
    let policy = &deps.settings.fair_play;
    let now = deps.clock.now_millis();
    let since = timestamp(now.saturating_sub(policy::lookback(policy).as_millis() as u64));
    let rows = store::offences(&deps.postgres, player, since).await?;
    let times: Vec<u64> = rows.iter().map(|row| millis_of(row.at)).collect();
    let standing = policy::standing(policy, &times, now);
    let window = policy.window.as_millis() as u64;
    Ok(FairPlayStanding {
        offences: rows
            .into_iter()
            .filter(|row| millis_of(row.at) + window > now)
            .map(|row| Offence {
                game_id: row.game,
                kind: row.kind,
                at: row.at_text,
                on_network: row.on_network,
            })
            .collect(),
        window_secs: policy.window.as_secs(),
        ban_after: policy.ban_after,
        warned: standing.warned,
        banned_secs: standing
            .banned_until
            .map(|until| until.saturating_sub(now).div_ceil(1000)),
        sanctions: store::notices(&deps.postgres, player, timestamp(now)).await?,
    })
}

/// Refuses ranked play (a queue, a rated invite) to a player banned from
/// it, saying for how long; then to one whose ranked game is still on.
pub(crate) async fn may_play_ranked(deps: &Context, player: Uuid) -> Result<(), ApiError> {
    ranked_open(deps, player).await?;
    crate::games::one_ranked_game_at_a_time(&deps.postgres, player).await
}

/// Refuses a player whom a moderator or their record keeps from ranked
/// play, saying why and for how long.
pub(crate) async fn ranked_open(deps: &Context, player: Uuid) -> Result<(), ApiError> {
    let standing = standing(deps, player).await?;
    if let Some(closing) = standing
        .sanctions
        .iter()
        .find(|sanction| sanction.kind.closes_ranked())
    {
        return Err(closed_by_moderator(closing));
    }
    match standing.banned_secs {
        Some(seconds) => Err(banned(seconds)),
        None => Ok(()),
    }
}

/// Ranked play closed by a moderator's ban or mark: why, and until when.
fn closed_by_moderator(sanction: &SanctionNotice) -> ApiError {
    let until = match sanction.ends_in_secs {
        Some(seconds) => format!("for {} min", seconds.div_ceil(60)),
        None => "until a moderator lifts it".to_owned(),
    };
    ApiError {
        retry_after: sanction.ends_in_secs,
        ..ApiError::new(
            ErrorCode::RankedBanned,
            format!(
                "a moderator closed ranked play to you {until}: {}",
                sanction.reason
            ),
        )
    }
}

fn banned(seconds: u64) -> ApiError {
    let minutes = seconds.div_ceil(60);
    ApiError {
        retry_after: Some(seconds),
        ..ApiError::new(
            ErrorCode::RankedBanned,
            format!(
                "ranked play is closed to you for {minutes} min: games were not played \
                 (not started, aborted, left, the clock let run, resigned at once)"
            ),
        )
    }
}

/// The first-move balance of the player's queue games that started.
pub(crate) async fn first_balance(deps: &Context, player: Uuid) -> Result<i32, sqlx::Error> {
    let since = deps.clock.now_utc() - time::Duration::days(BALANCE_DAYS);
    store::first_balance(&deps.postgres, player, since).await
}

/// Whether the player's last game was spoiled by the other side in the
/// last minutes: they keep their place in the queue.
pub(crate) async fn owed_a_place(deps: &Context, player: Uuid) -> Result<bool, sqlx::Error> {
    let since = deps.clock.now_utc() - SPOILED_WITHIN;
    store::spoiled_by_opponent(&deps.postgres, player, since).await
}

/// Your fair-play record: what counted against you and what it brings.
#[utoipa::path(
    get,
    path = "/v1/me/fair-play",
    tag = "accounts",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "Your offences in the window, and any warning or ban", body = FairPlayStanding),
        mancala_platform::api_errors::Unauthenticated,
    )
)]
#[tracing::instrument(skip_all)]
pub(crate) async fn my_record(
    caller: Authenticated,
    deps: web::Data<Context>,
) -> Result<web::Json<FairPlayStanding>, ApiError> {
    Ok(web::Json(standing(&deps, caller.player_id).await?))
}
