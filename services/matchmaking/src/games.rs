//! Games made on request: against the AI (the human picks the side), and
//! hotseat games (two people on one device). Both are casual.

use actix_web::{HttpResponse, web};
use mancala_ai::{AnyAi, Level};
use mancala_platform::{ApiError, Authenticated};
use mancala_proto::VariantName;
use mancala_proto::game::Side;
use mancala_proto::game::{CreateGame, SeatRequest};
use mancala_proto::lobby::{
    AiGameRequest, HotseatRequest, LobbyStats, MyGame, NewGameAnswer, QueueInfo, SideChoice,
};
use mancala_proto::{ErrorBody, ErrorCode};
use mancala_rules::Variant;

use crate::context::Context;
use crate::limits;
use crate::queue::QueueSpec;
use crate::queue::store;

fn invalid(message: impl Into<String>) -> ApiError {
    ApiError::new(ErrorCode::InvalidInput, message)
}

fn playable(spec: mancala_proto::VariantSpec) -> Result<Variant, ApiError> {
    let variant = Variant::try_from(spec).map_err(|e| invalid(e.to_string()))?;
    if !variant.is_playable() {
        return Err(invalid("this board is for analysis only"));
    }
    Ok(variant)
}

/// Play the AI.
///
/// The seed's "start second against the intermediate AI" is
/// `{"side": "second", "level": "intermediate"}`.
#[utoipa::path(
    post,
    path = "/v1/ai-games",
    tag = "games",
    request_body = AiGameRequest,
    security(("bearer" = [])),
    responses(
        (status = 201, description = "The game", body = NewGameAnswer),
        (status = 400, description = "`invalid_input`: unknown level or variant", body = ErrorBody),
        (status = 401, description = "`unauthenticated`", body = ErrorBody),
        (status = 409, description = "`not_allowed`: the caller's rated game is on (no engine help until it ends)", body = ErrorBody),
        (status = 503, description = "`unavailable`: games cannot be made now; retry", body = ErrorBody),
        mancala_platform::api_errors::BodyTooLarge,
        (status = 429, description = "`rate_limited`, with `Retry-After`: too many games made lately, or too many going (or invites waiting)", body = ErrorBody),
    )
)]
#[tracing::instrument(skip_all)]
pub(crate) async fn ai_game(
    caller: Authenticated,
    deps: web::Data<Context>,
    body: web::Json<AiGameRequest>,
) -> Result<HttpResponse, ApiError> {
    deps.admission.admit("new_game")?;
    let body = body.into_inner();
    let variant = playable(body.variant)?;
    // The AI's replies are an engine's moves: none while the player's own
    // rated game is on (a position set up against it would be a second
    // brain).
    if let Some(game) = live_ranked_game(&deps.postgres, caller.player_id).await? {
        return Err(ApiError {
            game_id: Some(game),
            ..ApiError::new(
                ErrorCode::NotAllowed,
                "your rated game is on: no engine help until it ends (hints, analyses and AI games wait)",
            )
        });
    }
    limits::new_casual_game(&deps, caller.player_id).await?;
    let level: Level = body
        .level
        .parse()
        .map_err(|_| invalid("unknown AI level"))?;
    if AnyAi::new(variant, level, 0).is_err() {
        return Err(invalid(format!("no {level} AI for {variant}")));
    }
    let seat = match body.side {
        SideChoice::First => Side::South,
        SideChoice::Second => Side::North,
        SideChoice::Random if deps.clock.now_millis().is_multiple_of(2) => Side::South,
        SideChoice::Random => Side::North,
    };
    let human = SeatRequest::Player {
        id: caller.player_id,
        rating: None,
        rd: None,
    };
    let ai = SeatRequest::Ai {
        level: level.name().to_owned(),
    };
    let seats = match seat {
        Side::South => [human, ai],
        Side::North => [ai, human],
    };
    create(&deps, body.variant, seats, body.time_control, seat).await
}

/// Two people, one device.
#[utoipa::path(
    post,
    path = "/v1/hotseat-games",
    tag = "games",
    request_body = HotseatRequest,
    security(("bearer" = [])),
    responses(
        (status = 201, description = "The game (the caller holds both seats)", body = NewGameAnswer),
        (status = 401, description = "`unauthenticated`", body = ErrorBody),
        mancala_platform::api_errors::BadBody,
        (status = 503, description = "`unavailable`: games cannot be made now; retry", body = ErrorBody),
        mancala_platform::api_errors::BodyTooLarge,
        (status = 429, description = "`rate_limited`, with `Retry-After`: too many games made lately, or too many going (or invites waiting)", body = ErrorBody),
    )
)]
#[tracing::instrument(skip_all)]
pub(crate) async fn hotseat_game(
    caller: Authenticated,
    deps: web::Data<Context>,
    body: web::Json<HotseatRequest>,
) -> Result<HttpResponse, ApiError> {
    deps.admission.admit("new_game")?;
    let body = body.into_inner();
    playable(body.variant)?;
    limits::new_casual_game(&deps, caller.player_id).await?;
    let seat = || SeatRequest::Player {
        id: caller.player_id,
        rating: None,
        rd: None,
    };
    create(
        &deps,
        body.variant,
        [seat(), seat()],
        body.time_control,
        Side::South,
    )
    .await
}

/// Refused here, before a game is asked for.
pub(crate) fn check_time_control(
    time_control: Option<mancala_proto::game::TimeControl>,
) -> Result<(), ApiError> {
    match time_control {
        Some(tc) if !tc.is_playable() => Err(invalid(mancala_proto::game::TimeControl::LIMITS)),
        _ => Ok(()),
    }
}

async fn create(
    deps: &Context,
    variant: mancala_proto::VariantSpec,
    seats: [SeatRequest; 2],
    time_control: Option<mancala_proto::game::TimeControl>,
    seat: Side,
) -> Result<HttpResponse, ApiError> {
    check_time_control(time_control)?;
    let request = CreateGame {
        id: None,
        variant,
        seats,
        rated: false,
        time_control,
        room: false,
        tournament: None,
    };
    let created = deps.game_room.create(&request).await?;
    Ok(HttpResponse::Created().json(NewGameAnswer {
        game_id: created.id,
        seat,
        ws_path: created.play_path,
    }))
}

/// How busy the platform is: players online, waiting per queue, playing.
#[utoipa::path(
    get,
    path = "/v1/lobby/stats",
    tag = "lobby",
    responses((status = 200, description = "The figures", body = LobbyStats))
)]
#[tracing::instrument(skip_all)]
pub(crate) async fn lobby_stats(
    deps: web::Data<Context>,
) -> Result<web::Json<LobbyStats>, ApiError> {
    Ok(web::Json(crate::stats::read_stats(&deps).await?))
}

/// The ranked queues offered, in the order configured, with the players
/// waiting in each: what a client lists and what `queue_join` must name.
#[utoipa::path(
    get,
    path = "/v1/queues",
    tag = "lobby",
    responses((status = 200, description = "The queues", body = [QueueInfo]))
)]
#[tracing::instrument(skip_all)]
pub(crate) async fn queues(
    deps: web::Data<Context>,
) -> Result<web::Json<Vec<QueueInfo>>, ApiError> {
    let mut queues = Vec::new();
    for spec in deps
        .settings
        .queues
        .iter()
        .filter_map(|name| QueueSpec::parse(name))
    {
        let waiting = store::waiting(&deps.redis, &spec.name).await?;
        queues.push(QueueInfo {
            queue: spec.name,
            variant: spec.variant,
            time_control: spec.time_control,
            waiting,
        });
    }
    Ok(web::Json(queues))
}

/// Whether `game` is live.
pub(crate) async fn is_live(
    postgres: &sqlx::PgPool,
    game: uuid::Uuid,
) -> Result<bool, sqlx::Error> {
    let live = sqlx::query_scalar!(
        "SELECT status = 'live' AS \"live!\" FROM games WHERE id = $1",
        game
    )
    .fetch_optional(postgres)
    .await?;
    Ok(live.unwrap_or(false))
}

/// The player's ranked game in progress, if they have one: a player plays
/// one at a time (a griefer matched and gone cannot be matched again while
/// the first victim waits for the abort).
pub(crate) async fn live_ranked_game(
    postgres: &sqlx::PgPool,
    player: uuid::Uuid,
) -> Result<Option<uuid::Uuid>, sqlx::Error> {
    sqlx::query_scalar!(
        "SELECT id FROM games WHERE status = 'live' AND rated AND seat0_player = $1
         UNION ALL
         SELECT id FROM games WHERE status = 'live' AND rated AND seat1_player = $1
         LIMIT 1",
        player
    )
    .fetch_optional(postgres)
    .await
    .map(Option::flatten)
}

/// Which of `players` have a live game (of any kind).
pub(crate) async fn playing(
    postgres: &sqlx::PgPool,
    players: &[uuid::Uuid],
) -> Result<std::collections::HashSet<uuid::Uuid>, sqlx::Error> {
    if players.is_empty() {
        return Ok(Default::default());
    }
    let rows = sqlx::query!(
        r#"SELECT seat0_player AS "first", seat1_player AS "second" FROM games
           WHERE status = 'live' AND (seat0_player = ANY($1) OR seat1_player = ANY($1))"#,
        players,
    )
    .fetch_all(postgres)
    .await?;
    Ok(rows
        .into_iter()
        .flat_map(|row| [row.first, row.second])
        .flatten()
        .filter(|player| players.contains(player))
        .collect())
}

/// Refuses ranked play to a player whose ranked game is still on.
pub(crate) async fn one_ranked_game_at_a_time(
    postgres: &sqlx::PgPool,
    player: uuid::Uuid,
) -> Result<(), ApiError> {
    match live_ranked_game(postgres, player).await? {
        None => Ok(()),
        Some(game) => Err(ApiError {
            game_id: Some(game),
            ..ApiError::new(
                ErrorCode::InRankedGame,
                format!("your ranked game {game} is still on: finish it first"),
            )
        }),
    }
}

/// Your live games (ranked, against the AI, on one device, with friends),
/// newest first: where to go back to after a reload or a missed `matched`.
#[utoipa::path(
    get,
    path = "/v1/me/games",
    tag = "lobby",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "Your live games", body = [MyGame]),
        mancala_platform::api_errors::Unauthenticated,
    )
)]
#[tracing::instrument(skip_all)]
pub(crate) async fn my_games(
    caller: Authenticated,
    deps: web::Data<Context>,
) -> Result<web::Json<Vec<MyGame>>, ApiError> {
    let rows = sqlx::query!(
        r#"SELECT id, variant->>'variant' AS "variant!", rated, tournament_id,
                  seat0_player, seat1_player, seat0_ai IS NOT NULL OR seat1_ai IS NOT NULL AS "against_ai!"
           FROM games
           WHERE status = 'live' AND (seat0_player = $1 OR seat1_player = $1)
           ORDER BY created_at DESC LIMIT 50"#,
        caller.player_id,
    )
    .fetch_all(&deps.postgres)
    .await?;
    let games = rows
        .into_iter()
        .map(|row| {
            let hotseat = row.seat0_player.is_some() && row.seat0_player == row.seat1_player;
            MyGame {
                game_id: row.id,
                variant: VariantName::parse(&row.variant).unwrap_or(VariantName::Kalah),
                rated: row.rated,
                against_ai: row.against_ai,
                hotseat,
                // Seat 0 moves first; a hotseat player holds both.
                seat: if row.seat0_player == Some(caller.player_id) {
                    Side::South
                } else {
                    Side::North
                },
                ws_path: format!("/v1/games/{}/play", row.id),
                tournament: row.tournament_id,
            }
        })
        .collect();
    Ok(web::Json(games))
}
