//! The REST side of game-room: the internal endpoint that creates games,
//! and the public records and lists.

use actix_web::http::Method;
use actix_web::{HttpRequest, HttpResponse, web};
use mancala_platform::ApiRoutes;
use mancala_platform::{ApiError, ExposeSecret, MaybeAuthenticated, SecretString};
use mancala_proto::game::{
    BatchCreated, CreateGame, CreateGames, CreatedGame, CreatedGames, GameAnalysis, GamePage,
    GameRecord, MAX_BATCH_GAMES,
};
use mancala_proto::{ErrorBody, ErrorCode};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use utoipa::IntoParams;
use uuid::Uuid;

use crate::analysis::Asker;
use crate::game::replay::ReplayError;
use crate::game::{HostedGames, creation};
use crate::lists::{self, limit, variant_filter};
use crate::store;
use crate::ws;

/// Mounts the routes. `/v1/games/live` and `/featured` come before
/// `/v1/games/{id}`, which would otherwise take them. A request is matched
/// against the routes in order, each with a parameter a regex run: the
/// sockets, which every player opens for every game, come first of those.
pub(crate) fn configure(config: &mut web::ServiceConfig) {
    config
        .api_route("/internal/v1/games", Method::POST, create_game)
        .api_large_post("/internal/v1/games/batch", create_games, MAX_BATCH_BYTES)
        .api_route("/v1/games/live", Method::GET, lists::live_games)
        .api_route("/v1/games/featured", Method::GET, lists::featured_games)
        .api_route("/v1/games/{id}/play", Method::GET, ws::play::play)
        .api_route("/v1/games/{id}/watch", Method::GET, ws::watch::watch)
        .api_route("/v1/games/{id}", Method::GET, game_record)
        .api_route("/v1/games/{id}/analysis", Method::GET, game_analysis)
        .api_route("/v1/players/{id}/games", Method::GET, player_games);
}

/// A batch of the most games, each about 300 bytes, with room to spare.
const MAX_BATCH_BYTES: usize = 1 << 20;

/// The token other services present on `/internal/v1/*`.
#[derive(Clone)]
pub(crate) struct InternalToken(pub SecretString);

/// A caller holding the service token. As an extractor ahead of the body,
/// it refuses strangers before their body is read, so they learn nothing
/// of what the endpoint would accept.
pub(crate) struct ServiceCaller;

impl actix_web::FromRequest for ServiceCaller {
    type Error = ApiError;
    type Future = std::future::Ready<Result<ServiceCaller, ApiError>>;

    fn from_request(request: &HttpRequest, _: &mut actix_web::dev::Payload) -> Self::Future {
        let checked = match request.app_data::<web::Data<InternalToken>>() {
            Some(token) => check_internal(request, token).map(|()| ServiceCaller),
            None => Err(ApiError::internal()),
        };
        std::future::ready(checked)
    }
}

fn check_internal(request: &HttpRequest, token: &InternalToken) -> Result<(), ApiError> {
    let presented = request
        .headers()
        .get("authorization")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .ok_or_else(|| ApiError::new(ErrorCode::Unauthenticated, "a service token is required"))?;
    // Comparing digests: equal-length inputs, so timing says nothing useful.
    let expected = Sha256::digest(token.0.expose_secret().as_bytes());
    if Sha256::digest(presented.trim().as_bytes()) != expected {
        return Err(ApiError::new(
            ErrorCode::TokenInvalid,
            "wrong service token",
        ));
    }
    Ok(())
}

fn invalid(message: impl Into<String>) -> ApiError {
    ApiError::new(ErrorCode::InvalidInput, message)
}

/// Create a game (service to service).
///
/// Matchmaking calls this once both players are known, with their rating
/// snapshots for ranked games. Ranked games need two players. A game asked
/// for as rated is made casual once the two players have had their rated
/// games of the day together (`rated` and `casual_reason` in the answer).
#[utoipa::path(
    post,
    path = "/internal/v1/games",
    tag = "games",
    request_body = CreateGame,
    security(("service" = [])),
    responses(
        (status = 201, description = "Created", body = CreatedGame),
        (status = 400, description = "`invalid_input`: unknown player or AI level, unplayable variant", body = ErrorBody),
        (status = 401, description = "`unauthenticated` or `token_invalid`", body = ErrorBody),
        mancala_platform::api_errors::BodyTooLarge,
    )
)]
#[tracing::instrument(skip_all)]
pub(crate) async fn create_game(
    _caller: ServiceCaller,
    hosted: web::Data<HostedGames>,
    body: web::Json<CreateGame>,
) -> Result<HttpResponse, ApiError> {
    let made = creation::make(hosted.deps(), vec![body.into_inner()]).await?;
    let created = made
        .into_iter()
        .next()
        .unwrap_or_else(|| Err(ApiError::internal()))?;
    Ok(HttpResponse::Created().json(created))
}

/// Create many games at once (service to service).
///
/// A tournament's wave: every game is checked as `POST /internal/v1/games`
/// checks one, and refused on its own (its entry says why, nothing of it
/// is written); the others are made in one transaction. Up to 500 games.
#[utoipa::path(
    post,
    path = "/internal/v1/games/batch",
    tag = "games",
    request_body = CreateGames,
    security(("service" = [])),
    responses(
        (status = 200, description = "One entry per game asked for, in order", body = CreatedGames),
        (status = 400, description = "`invalid_input`: no games, or more than 500", body = ErrorBody),
        (status = 401, description = "`unauthenticated` or `token_invalid`", body = ErrorBody),
        mancala_platform::api_errors::BodyTooLarge,
    )
)]
#[tracing::instrument(skip_all)]
pub(crate) async fn create_games(
    _caller: ServiceCaller,
    hosted: web::Data<HostedGames>,
    body: web::Json<CreateGames>,
) -> Result<web::Json<CreatedGames>, ApiError> {
    let asked = body.into_inner().games;
    if asked.is_empty() || asked.len() > MAX_BATCH_GAMES {
        return Err(invalid(format!("a batch is 1 to {MAX_BATCH_GAMES} games")));
    }
    let made = creation::make(hosted.deps(), asked).await?;
    let games = made
        .into_iter()
        .map(|made| match made {
            Ok(created) => BatchCreated::Created(created),
            Err(refused) => BatchCreated::Refused(refused.body()),
        })
        .collect();
    Ok(web::Json(CreatedGames { games }))
}

/// A game's full record.
#[utoipa::path(
    get,
    path = "/v1/games/{id}",
    tag = "games",
    params(("id" = Uuid, Path, description = "The game")),
    responses(
        (status = 200, description = "The record", body = GameRecord),
        mancala_platform::api_errors::NotFound,
        mancala_platform::api_errors::BadQuery,
    )
)]
#[tracing::instrument(skip_all)]
pub(crate) async fn game_record(
    id: web::Path<Uuid>,
    hosted: web::Data<HostedGames>,
) -> Result<web::Json<GameRecord>, ApiError> {
    // A record may lag the game by the replica's delay; players and
    // watchers of a live game follow it on its socket.
    let postgres = &hosted.deps().reads;
    let id = id.into_inner();
    let row = store::game(postgres, id)
        .await?
        .ok_or_else(|| ApiError::new(ErrorCode::NotFound, "no such game"))?;
    let moves = store::moves(postgres, id).await?;
    Ok(web::Json(GameRecord {
        id,
        variant: row.variant(),
        rated: row.rated,
        time_control: row.time_control(),
        room: row.room_id,
        status: row.status,
        seats: row.seats(),
        moves: moves.iter().map(|stored| stored.played).collect(),
        result: row.result,
        reason: row.reason,
        score: row.score(),
        created_at: row.created_at.clone(),
        ended_at: row.ended_at.clone(),
    }))
}

/// Every move of a finished game, judged: exact values for Kalah where the
/// solver proves them, the Advanced engine's estimates elsewhere. Worked
/// out once (up to about ten seconds, one game at a time per instance; a
/// rated or watched game's at its end) and kept for every instance;
/// everyone asking while it runs gets that one result. The game's players
/// (with their bearer token) go first and are never told to come back;
/// others may be, when the instance is busy, and may have only so many
/// analyses worked out for them (per account, or per address signed out).
#[utoipa::path(
    get,
    path = "/v1/games/{id}/analysis",
    tag = "games",
    params(("id" = Uuid, Path, description = "The game")),
    responses(
        (status = 200, description = "The analysis", body = GameAnalysis),
        mancala_platform::api_errors::NotFound,
        (status = 409, description = "`not_allowed`: the game is not over, or the caller's own rated game is on (no engine help until it ends)", body = ErrorBody),
        (status = 503, description = "`unavailable`: another analysis is running; see `Retry-After` (never to the game's players)", body = ErrorBody),
        (status = 429, description = "`rate_limited`: this caller had enough analyses worked out for now; see `Retry-After` (never the game's players, nor an analysis already kept)", body = ErrorBody),
        (status = 401, description = "`token_invalid` or `token_expired`: a bearer token was sent and is not good", body = ErrorBody),
        (status = 400, description = "`invalid_input`: not an id", body = ErrorBody),
    )
)]
#[tracing::instrument(skip_all)]
pub(crate) async fn game_analysis(
    id: web::Path<Uuid>,
    caller: MaybeAuthenticated,
    hosted: web::Data<HostedGames>,
    request: HttpRequest,
) -> Result<web::Json<GameAnalysis>, ApiError> {
    let deps = hosted.deps();
    let id = id.into_inner();
    if let Some(caller) = &caller.0
        && let Some(game) = crate::ws::play::engine_barred(deps, caller.player_id, id).await
    {
        return Err(ApiError {
            game_id: Some(game),
            ..ApiError::new(ErrorCode::NotAllowed, crate::ws::play::ENGINE_BARRED)
        });
    }
    let analyses = deps.ai.analyses();
    if let Some(kept) = analyses.in_memory(id) {
        return Ok(web::Json((*kept).clone()));
    }
    if let Some(kept) = store::analysis(&deps.reads, id).await? {
        let kept = std::sync::Arc::new(kept);
        analyses.remember(kept.clone());
        return Ok(web::Json((*kept).clone()));
    }
    let stranger = match caller.0 {
        Some(caller) => caller.player_id.to_string(),
        None => format!(
            "address:{}",
            mancala_platform::http::client_address(&request, deps.settings.trust_forwarded_for)
        ),
    };
    if caller.0.is_none() {
        // Signed out, so not a player of the game: a stranger past the
        // limit is refused before the game is loaded and replayed.
        limit_analyses(deps, &stranger, Count::Peek).await?;
    }
    // The game as hosts load it: its row and moves in one snapshot,
    // replayed through the rules.
    let live = crate::game::replay::replay(&deps.postgres, id)
        .await
        .map_err(|error| match error {
            ReplayError::Postgres(error) => ApiError::from(error),
            ReplayError::Corrupt(error) => {
                tracing::error!(%error, %id, "a stored game does not replay");
                ApiError::internal()
            }
        })?
        .ok_or_else(|| ApiError::new(ErrorCode::NotFound, "no such game"))?;
    if !live.is_over() {
        // Analysis of a game in progress would be a player's second brain.
        return Err(ApiError::new(
            ErrorCode::NotAllowed,
            "a game is analysed once it is over",
        ));
    }
    let game = live.rules_game().clone();
    let player = caller.0.is_some_and(|caller| {
        live.info()
            .seats
            .iter()
            .any(|seat| seat.player == Some(caller.player_id))
    });
    let asker = if player { Asker::Player } else { Asker::Other };
    if asker == Asker::Other {
        limit_analyses(deps, &stranger, Count::Hit).await?;
    }
    match deps.ai.analyse(id, game, asker).await {
        Ok(analysis) => Ok(web::Json((*analysis).clone())),
        Err(_) => Err(ApiError {
            retry_after: Some(10),
            ..ApiError::new(
                ErrorCode::Unavailable,
                "another game is being analysed; retry shortly",
            )
        }),
    }
}

/// Whether a limit check counts an event or only looks.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Count {
    Peek,
    Hit,
}

/// Counts (or, peeking, checks) an analysis worked out for someone other
/// than the game's players; refused past `APP_LIMIT_ANALYSES_PER_CALLER`.
/// A Redis outage lets it through (the shared place still bounds the work).
async fn limit_analyses(
    deps: &crate::context::Context,
    subject: &str,
    count: Count,
) -> Result<(), ApiError> {
    use mancala_platform::ratelimit;
    let limit = deps.settings.analyses_per_caller;
    let now = deps.clock.now_secs();
    let decision = match count {
        Count::Peek => ratelimit::peek(&deps.redis, "analyses", subject, limit, now).await,
        Count::Hit => ratelimit::hit(&deps.redis, "analyses", subject, limit, now).await,
    };
    match decision {
        Ok(mancala_platform::ratelimit::Decision::Limited { retry_after }) => Err(ApiError {
            retry_after: Some(retry_after),
            ..ApiError::new(
                ErrorCode::RateLimited,
                format!("enough analyses worked out for you for now; retry in {retry_after} s"),
            )
        }),
        Ok(mancala_platform::ratelimit::Decision::Allowed { .. }) => Ok(()),
        Err(error) => {
            tracing::warn!(%error, "counting analyses");
            Ok(())
        }
    }
}

/// Filters of the game lists.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListQuery {
    /// `kalah`, `oware` or `mangala`.
    #[param(pattern = "^(kalah|oware|mangala)$")]
    variant: Option<String>,
    /// The `next` of the previous page.
    #[param(
        pattern = "^[0-9]+_[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
    )]
    before: Option<String>,
    /// 1 to 100; 20 by default.
    #[param(minimum = 1, maximum = 100)]
    limit: Option<u32>,
}

/// A player's games, newest first.
#[utoipa::path(
    get,
    path = "/v1/players/{id}/games",
    tag = "games",
    params(("id" = Uuid, Path, description = "The player"), ListQuery),
    responses(
        (status = 200, description = "A page of games", body = GamePage),
        (status = 400, description = "`invalid_input`", body = ErrorBody),
    )
)]
#[tracing::instrument(skip_all)]
pub(crate) async fn player_games(
    id: web::Path<Uuid>,
    query: web::Query<ListQuery>,
    hosted: web::Data<HostedGames>,
) -> Result<web::Json<GamePage>, ApiError> {
    let variant = variant_filter(&query.variant)?;
    let limit = limit(query.limit)?;
    let before = match query.before.as_deref() {
        None => None,
        Some(text) => Some(
            store::parse_cursor(text)
                .ok_or_else(|| invalid("bad cursor"))?
                .1,
        ),
    };
    let rows = store::history(
        &hosted.deps().postgres,
        id.into_inner(),
        variant,
        before,
        limit,
    )
    .await?;
    let next = (rows.len() as i64 == limit)
        .then(|| rows.last().map(store::GameRow::cursor))
        .flatten();
    let games = rows.iter().map(store::GameRow::summary).collect();
    Ok(web::Json(GamePage { games, next }))
}
