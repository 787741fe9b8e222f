//! The live lists: the live games, highest rated first, and the featured
//! game of each variant. A game is listed only while someone is playing
//! it (a player at the board, or the player of an AI game), as its host
//! marks it in Redis; a game everyone has left is gone from the lists at
//! once, while the rules that end it (the reconnect countdown, the first
//! move's window, the idle room) take their time.

use std::time::Duration;

use actix_web::web;
use mancala_platform::ApiError;
use mancala_proto::bus::names;
use mancala_proto::game::{GamePage, GameSummary};
use mancala_proto::{ErrorCode, VariantName};
use serde::Deserialize;
use utoipa::IntoParams;
use uuid::Uuid;

use crate::context::Context;
use crate::game::HostedGames;
use crate::store::{self, GameRow};

/// Rows read from Postgres per round while looking for occupied games.
const PAGE: i64 = 100;
/// Rounds before giving up: a list is a view, not a census, and the
/// games nobody is at (left, waiting for their end) are seldom more than
/// a page.
const PAGES: i64 = 5;
/// How long the list waits for Redis to say which games are occupied.
const REDIS_WAIT: Duration = Duration::from_millis(500);
/// Occupied live games a featured game is chosen from, per variant.
const FEATURE_CANDIDATES: usize = 20;

/// Filters of the live list: highest rated first, one page.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub(crate) struct LiveQuery {
    /// `kalah`, `oware` or `mangala`.
    #[param(pattern = "^(kalah|oware|mangala)$")]
    variant: Option<String>,
    /// 1 to 100; 20 by default.
    #[param(minimum = 1, maximum = 100)]
    limit: Option<u32>,
}

/// Live games someone is playing, highest rated first.
#[utoipa::path(
    get,
    path = "/v1/games/live",
    tag = "games",
    params(LiveQuery),
    responses(
        (status = 200, description = "Live games with a player at the board", body = GamePage),
        mancala_platform::api_errors::BadQuery,
    )
)]
#[tracing::instrument(skip_all)]
pub(crate) async fn live_games(
    query: web::Query<LiveQuery>,
    hosted: web::Data<HostedGames>,
) -> Result<web::Json<GamePage>, ApiError> {
    let variant = variant_filter(&query.variant)?;
    let wanted = limit(query.limit)? as usize;
    let deps = hosted.deps();
    let rows = occupied(deps, wanted, |offset| {
        store::live(&deps.reads, variant, PAGE, offset)
    })
    .await?;
    let games = watched(deps, &rows).await;
    Ok(web::Json(GamePage { games, next: None }))
}

/// The live game most worth watching in each variant (like lichess TV):
/// between two people who have both moved, someone at the board, rated
/// before casual, then the most watched, then the highest rated. Never an
/// AI or a hotseat game.
#[utoipa::path(
    get,
    path = "/v1/games/featured",
    tag = "games",
    responses((status = 200, description = "At most one game per variant", body = [GameSummary]))
)]
#[tracing::instrument(skip_all)]
pub(crate) async fn featured_games(
    hosted: web::Data<HostedGames>,
) -> Result<web::Json<Vec<GameSummary>>, ApiError> {
    let deps = hosted.deps();
    let mut featured = Vec::new();
    for variant in VariantName::ALL {
        let rows = occupied(deps, FEATURE_CANDIDATES, |offset| {
            store::featurable(&deps.reads, variant.as_str(), PAGE, offset)
        })
        .await?;
        // The rows come rated first, then by rating: a stable sort by
        // watchers within "rated" keeps that order among equals.
        let mut candidates = watched(deps, &rows).await;
        candidates.sort_by_key(|game| {
            (
                std::cmp::Reverse(game.rated),
                std::cmp::Reverse(game.watchers),
            )
        });
        featured.extend(candidates.into_iter().next());
    }
    Ok(web::Json(featured))
}

/// Up to `wanted` rows, in the order `page` reads them, of games marked
/// occupied now.
async fn occupied<F, Fut>(deps: &Context, wanted: usize, page: F) -> Result<Vec<GameRow>, ApiError>
where
    F: Fn(i64) -> Fut,
    Fut: Future<Output = Result<Vec<GameRow>, sqlx::Error>>,
{
    let now = deps.clock.now_millis() as f64;
    let mut found = Vec::new();
    for round in 0..PAGES {
        let rows = page(round * PAGE).await?;
        let last = (rows.len() as i64) < PAGE;
        let marks = occupied_until(deps, &rows).await?;
        found.extend(
            rows.into_iter()
                .zip(marks)
                .filter(|(_, until)| until.is_some_and(|until| until >= now))
                .map(|(row, _)| row),
        );
        if found.len() >= wanted || last {
            break;
        }
    }
    found.truncate(wanted);
    Ok(found)
}

/// Until when each game counts as occupied (clock ms), if it does: one
/// round trip for a page.
async fn occupied_until(deps: &Context, rows: &[GameRow]) -> Result<Vec<Option<f64>>, ApiError> {
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<String> = rows.iter().map(|row| row.id.to_string()).collect();
    let mut connection = deps.redis.connection();
    let mut command = redis::cmd("ZMSCORE");
    command.arg(deps.redis.key(names::OCCUPIED)).arg(&ids);
    let read = command.query_async::<Vec<Option<f64>>>(&mut connection);
    // A list that cannot say who is playing says so, rather than show
    // every game nobody has left yet.
    match tokio::time::timeout(REDIS_WAIT, read).await {
        Ok(marks) => Ok(marks?),
        Err(_) => Err(ApiError::new(
            ErrorCode::Unavailable,
            "a store is slow to answer; retry shortly",
        )),
    }
}

/// Summaries of live games, each with its watchers now (one Redis round
/// trip for them all: the lobby asks for these lists every few seconds).
async fn watched(deps: &Context, rows: &[GameRow]) -> Vec<GameSummary> {
    let ids: Vec<Uuid> = rows.iter().map(|row| row.id).collect();
    let watchers = deps.hub.watchers_of(&ids).await;
    rows.iter()
        .zip(watchers)
        .map(|(row, watchers)| GameSummary {
            watchers,
            ..row.summary()
        })
        .collect()
}

/// The variant a list is filtered on, checked.
pub(crate) fn variant_filter(variant: &Option<String>) -> Result<Option<&'static str>, ApiError> {
    match variant.as_deref() {
        None => Ok(None),
        Some(text) => VariantName::parse(text)
            .map(|name| Some(name.as_str()))
            .ok_or_else(|| ApiError::new(ErrorCode::InvalidInput, format!("no variant {text:?}"))),
    }
}

/// A page's size, checked.
pub(crate) fn limit(requested: Option<u32>) -> Result<i64, ApiError> {
    match requested.unwrap_or(20) {
        limit @ 1..=100 => Ok(i64::from(limit)),
        _ => Err(ApiError::new(ErrorCode::InvalidInput, "limit is 1 to 100")),
    }
}
