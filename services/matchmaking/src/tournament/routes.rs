//! The tournaments' API: private arenas made by registered players, the
//! listed arenas on now and next, one arena with a page of its standings,
//! and joining, pausing and withdrawing.

use actix_web::{HttpResponse, web};
use mancala_platform::api_errors::{BadBody, BadQuery, NotFound, RateLimited, Unauthenticated};
use mancala_platform::{ApiError, Authenticated, MaybeAuthenticated};
use mancala_proto::tournament::{
    JoinTournament, MAX_RATING_BAND, NewTournament, TOURNAMENT_NAME, Tournament, TournamentList,
    TournamentResult, TournamentResults, TournamentStatus, TournamentView,
};
use mancala_proto::{ErrorBody, ErrorCode};
use serde::Deserialize;
use utoipa::IntoParams;
use uuid::Uuid;

use super::board::{Board, summary};
use super::schedule::{MAX_MINUTES, Shape};
use super::standings::standings;
use super::store;
use crate::context::Context;

/// The letters of a private arena's code (no 0/O, 1/I to misread).
const CODE_LETTERS: &[u8] = b"ABCDEFGHJKLMNPQRSTUVWXYZ23456789";

fn invalid(message: &str) -> ApiError {
    ApiError::new(ErrorCode::InvalidInput, message)
}

fn make_code() -> String {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).unwrap_or_default();
    bytes
        .iter()
        .map(|b| CODE_LETTERS[usize::from(*b) % CODE_LETTERS.len()] as char)
        .collect()
}

/// Makes a private arena (registered players), joined with its code.
#[utoipa::path(
    post,
    path = "/v1/tournaments",
    tag = "tournaments",
    request_body = NewTournament,
    security(("bearer" = [])),
    responses(
        (status = 201, description = "Made; the answer carries its code", body = Tournament),
        BadBody,
        Unauthenticated,
        (status = 403, description = "`forbidden`: guests cannot make one", body = ErrorBody),
        RateLimited,
    )
)]
#[tracing::instrument(skip_all)]
pub(crate) async fn create(
    caller: Authenticated,
    request: actix_web::HttpRequest,
    deps: web::Data<Context>,
    accounts: web::Data<crate::accounts::Accounts>,
    body: web::Json<NewTournament>,
) -> Result<HttpResponse, ApiError> {
    let body = body.into_inner();
    let name = &TOURNAMENT_NAME.clean(&body.name)?;
    if !(5..=MAX_MINUTES).contains(&body.minutes) {
        return Err(invalid("`minutes` is 5 to 1,440"));
    }
    if body.starts_in_secs > 7 * 86_400 {
        return Err(invalid("`starts_in_secs` is at most a week"));
    }
    if !body.time_control.is_playable() {
        return Err(invalid(mancala_proto::game::TimeControl::LIMITS));
    }
    if body.max_players.is_some_and(|n| !(2..=10_000).contains(&n)) {
        return Err(invalid("`max_players` is 2 to 10,000"));
    }
    if [body.min_rating, body.max_rating]
        .into_iter()
        .flatten()
        .any(|band| band > MAX_RATING_BAND)
    {
        return Err(invalid("`min_rating` and `max_rating` are 0 to 5,000"));
    }
    if let (Some(low), Some(high)) = (body.min_rating, body.max_rating)
        && low > high
    {
        return Err(invalid("`min_rating` is above `max_rating`"));
    }
    if !store::registered(&deps.postgres, caller.player_id).await? {
        return Err(ApiError::new(
            ErrorCode::Forbidden,
            "register to make a tournament",
        ));
    }
    let address =
        mancala_platform::http::client_address(&request, accounts.settings().trust_forwarded_for);
    crate::limits::new_tournament(&deps, caller.player_id, &address).await?;
    let now = deps.clock.now_utc();
    let shape = Shape {
        variant: body.variant,
        time_control: body.time_control,
        minutes: body.minutes,
        rated: body.rated,
        min_rating: body.min_rating,
        max_rating: body.max_rating,
        max_players: body.max_players,
    };
    let id = Uuid::now_v7();
    let starts_at = now + time::Duration::seconds(i64::from(body.starts_in_secs));
    let cap = deps.settings.player_limits.live_tournaments;
    store::insert_private(
        &deps.postgres,
        id,
        name,
        &make_code(),
        caller.player_id,
        &shape,
        starts_at,
        now,
        cap,
    )
    .await?
    .ok_or_else(|| crate::limits::too_many_live_tournaments(cap))?;
    let row = store::get(&deps.postgres, id)
        .await?
        .ok_or_else(ApiError::internal)?;
    Ok(HttpResponse::Created().json(summary(&row, now, Some(caller.player_id))))
}

/// The listed arenas running now and starting next.
#[utoipa::path(
    get,
    path = "/v1/tournaments",
    tag = "tournaments",
    responses((status = 200, description = "On now and next", body = TournamentList))
)]
#[tracing::instrument(skip_all)]
pub(crate) async fn list(deps: web::Data<Context>) -> Result<web::Json<TournamentList>, ApiError> {
    let now = deps.clock.now_utc();
    let rows = store::listed(&deps.postgres, now).await?;
    let (running, upcoming): (Vec<Tournament>, Vec<Tournament>) = rows
        .iter()
        .map(|row| summary(row, now, None))
        .partition(|t| t.status == TournamentStatus::Running);
    Ok(web::Json(TournamentList { running, upcoming }))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
pub(crate) struct PageQuery {
    /// The page of the standings, from 1 (10 rows a page).
    #[param(minimum = 1)]
    page: Option<u32>,
}

/// One arena: what it is, a page of its standings, my row and game, and
/// the top game.
#[utoipa::path(
    get,
    path = "/v1/tournaments/{id}",
    tag = "tournaments",
    params(("id" = Uuid, Path, description = "The tournament"), PageQuery),
    responses(
        (status = 200, description = "The tournament and its standings", body = TournamentView),
        BadQuery,
        NotFound,
    )
)]
#[tracing::instrument(skip_all)]
pub(crate) async fn show(
    caller: MaybeAuthenticated,
    deps: web::Data<Context>,
    id: web::Path<Uuid>,
    query: web::Query<PageQuery>,
) -> Result<web::Json<TournamentView>, ApiError> {
    let id = id.into_inner();
    let viewer = caller.0.map(|c| c.player_id);
    let board = Board::load(&deps.postgres, id)
        .await?
        .ok_or_else(|| ApiError::new(ErrorCode::NotFound, "no such tournament"))?;
    let now = deps.clock.now_utc();
    Ok(web::Json(board.view(now, viewer, query.page.unwrap_or(1))))
}

/// Joins an arena (or comes back to it, unpausing): paired from its start
/// for as long as a page of the site is open.
#[utoipa::path(
    post,
    path = "/v1/tournaments/{id}/join",
    tag = "tournaments",
    params(("id" = Uuid, Path, description = "The tournament")),
    request_body = JoinTournament,
    security(("bearer" = [])),
    responses(
        (status = 204, description = "Joined"),
        BadBody,
        Unauthenticated,
        (status = 403, description = "`forbidden` (a wrong code, outside the rating band) or `ranked_banned`", body = ErrorBody),
        NotFound,
        (status = 409, description = "`not_allowed`: over, or full", body = ErrorBody),
        RateLimited,
    )
)]
#[tracing::instrument(skip_all)]
pub(crate) async fn join(
    caller: Authenticated,
    deps: web::Data<Context>,
    id: web::Path<Uuid>,
    body: web::Json<JoinTournament>,
) -> Result<HttpResponse, ApiError> {
    let id = id.into_inner();
    let player = caller.player_id;
    crate::limits::tournament_action(&deps, player).await?;
    let row = store::get(&deps.postgres, id)
        .await?
        .ok_or_else(|| ApiError::new(ErrorCode::NotFound, "no such tournament"))?;
    let now = deps.clock.now_utc();
    if now >= row.ends_at {
        return Err(ApiError::new(
            ErrorCode::NotAllowed,
            "the tournament is over",
        ));
    }
    if let Some(code) = &row.code
        && body.code.as_deref().map(str::trim) != Some(code.as_str())
    {
        return Err(ApiError::new(
            ErrorCode::Forbidden,
            "a private tournament: its code is wrong",
        ));
    }
    // Fair-play sanctions apply as to any ranked game.
    if row.shape.rated {
        crate::fair_play::ranked_open(&deps, player).await?;
    }
    let rating = crate::ratings::rating(&deps.postgres, player, row.shape.variant.as_str())
        .await?
        .rating;
    let outside = row
        .shape
        .min_rating
        .is_some_and(|low| rating < f64::from(low))
        || row
            .shape
            .max_rating
            .is_some_and(|high| rating > f64::from(high));
    let mut tx = deps.postgres.begin().await?;
    store::lock(&mut tx, id).await?;
    let again = store::joined(&mut tx, id, player).await?;
    if !again && outside {
        return Err(ApiError::new(
            ErrorCode::Forbidden,
            format!(
                "your {} rating {rating:.0} is outside the band",
                row.shape.variant
            ),
        ));
    }
    if !again
        && row
            .shape
            .max_players
            .is_some_and(|cap| row.players >= i64::from(cap))
    {
        return Err(ApiError::new(
            ErrorCode::NotAllowed,
            "the tournament is full",
        ));
    }
    store::join(&mut tx, id, player, rating, now).await?;
    tx.commit().await?;
    super::live::changed(&deps, id).await;
    Ok(HttpResponse::NoContent().finish())
}

/// Stops being paired (joining again resumes); or, `withdraw`, leaves it
/// (the points stay in the standings).
async fn step_out(
    caller: Authenticated,
    deps: web::Data<Context>,
    id: Uuid,
    withdraw: bool,
) -> Result<HttpResponse, ApiError> {
    crate::limits::tournament_action(&deps, caller.player_id).await?;
    if store::step_out(&deps.postgres, id, caller.player_id, withdraw).await? {
        super::live::changed(&deps, id).await;
        Ok(HttpResponse::NoContent().finish())
    } else {
        Err(ApiError::new(
            ErrorCode::NotFound,
            "you are not in this tournament",
        ))
    }
}

/// Pauses: not paired until joining again.
#[utoipa::path(
    post,
    path = "/v1/tournaments/{id}/pause",
    tag = "tournaments",
    params(("id" = Uuid, Path, description = "The tournament")),
    security(("bearer" = [])),
    responses((status = 204, description = "Paused"), Unauthenticated, NotFound, RateLimited)
)]
#[tracing::instrument(skip_all)]
pub(crate) async fn pause(
    caller: Authenticated,
    deps: web::Data<Context>,
    id: web::Path<Uuid>,
) -> Result<HttpResponse, ApiError> {
    step_out(caller, deps, id.into_inner(), false).await
}

/// Withdraws: never paired again (the points stay).
#[utoipa::path(
    post,
    path = "/v1/tournaments/{id}/withdraw",
    tag = "tournaments",
    params(("id" = Uuid, Path, description = "The tournament")),
    security(("bearer" = [])),
    responses((status = 204, description = "Withdrawn"), Unauthenticated, NotFound, RateLimited)
)]
#[tracing::instrument(skip_all)]
pub(crate) async fn withdraw(
    caller: Authenticated,
    deps: web::Data<Context>,
    id: web::Path<Uuid>,
) -> Result<HttpResponse, ApiError> {
    step_out(caller, deps, id.into_inner(), true).await
}

/// A player's finished arenas with their place, for the profile.
#[utoipa::path(
    get,
    path = "/v1/players/{id}/tournaments",
    tag = "tournaments",
    params(("id" = Uuid, Path, description = "The player")),
    responses((status = 200, description = "Newest first, at most 20", body = TournamentResults))
)]
#[tracing::instrument(skip_all)]
pub(crate) async fn results(
    deps: web::Data<Context>,
    id: web::Path<Uuid>,
) -> Result<web::Json<TournamentResults>, ApiError> {
    let player = id.into_inner();
    let now = deps.clock.now_utc();
    let mut results = Vec::new();
    for row in store::finished_of(&deps.postgres, player, now).await? {
        let entrants = store::entrants(&deps.postgres, row.id).await?;
        let finished = store::finished_games(&deps.postgres, row.id, row.ends_at).await?;
        let ranked = standings(&entrants, &finished);
        if let Some((place, (entry, _))) = ranked
            .iter()
            .enumerate()
            .find(|(_, (entry, _))| entry.player == player)
        {
            let tournament = summary(&row, now, None);
            let rank = place as u32 + 1;
            results.push(TournamentResult {
                title: !tournament.private && rank <= 3,
                tournament,
                rank,
                score: entry.tally.score,
                games: entry.tally.sheet.len() as u32,
            });
        }
    }
    Ok(web::Json(TournamentResults { results }))
}
