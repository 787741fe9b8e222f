//! Leaderboards and profiles.

use actix_web::http::Method;
use actix_web::web;
use mancala_platform::ApiRoutes;
use mancala_platform::{ApiError, Authenticated};
use mancala_proto::rating::{
    Eligibility, Leaderboard, MarkKind, MyRank, Profile, RatingPoint, VariantRating,
};
use mancala_proto::{ErrorBody, ErrorCode};
use serde::Deserialize;
use utoipa::IntoParams;
use uuid::Uuid;

use crate::context::Context;
use crate::leaderboard::{self, BoardError};
use mancala_proto::VariantName;

pub(crate) fn configure(config: &mut web::ServiceConfig) {
    config
        .api_route("/v1/leaderboard/{variant}/me", Method::GET, my_rank)
        .api_route("/v1/leaderboard/{variant}", Method::GET, board)
        .api_route("/v1/players/{id}/ratings/{variant}", Method::GET, history)
        .api_route("/v1/players/{id}", Method::GET, profile);
}

fn variant(name: &str) -> Result<VariantName, ApiError> {
    VariantName::parse(name)
        .ok_or_else(|| ApiError::new(ErrorCode::NotFound, format!("no variant {name:?}")))
}

fn store_error(error: BoardError) -> ApiError {
    tracing::warn!(%error, "leaderboard store");
    ApiError::new(
        ErrorCode::Unavailable,
        "the leaderboard is unavailable; retry",
    )
}

/// Deeper than any board gets; keeps the Redis range arithmetic in bounds.
const MAX_OFFSET: u64 = 1_000_000;

/// Paging of a leaderboard.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub(crate) struct PageQuery {
    /// 0 to 1,000,000; 0 by default.
    #[param(maximum = 1000000)]
    offset: Option<u64>,
    /// 1 to 100; 50 by default.
    #[param(minimum = 1, maximum = 100)]
    limit: Option<u64>,
}

/// A variant's leaderboard: registered players with a settled rating.
#[utoipa::path(
    get,
    path = "/v1/leaderboard/{variant}",
    tag = "ratings",
    params(("variant" = String, Path, description = "kalah, oware or mangala"), PageQuery),
    responses(
        (status = 200, description = "A page, best first", body = Leaderboard),
        (status = 400, description = "`invalid_input`: a limit or offset out of range, or an unknown query field", body = ErrorBody),
        (status = 404, description = "`not_found`: no such variant", body = ErrorBody),
    )
)]
#[tracing::instrument(skip_all)]
pub(crate) async fn board(
    name: web::Path<String>,
    query: web::Query<PageQuery>,
    rater: web::Data<Context>,
) -> Result<web::Json<Leaderboard>, ApiError> {
    let variant = variant(&name)?;
    let limit = query.limit.unwrap_or(50);
    if !(1..=100).contains(&limit) {
        return Err(ApiError::new(ErrorCode::InvalidInput, "limit is 1 to 100"));
    }
    let offset = query.offset.unwrap_or(0);
    if offset > MAX_OFFSET {
        return Err(ApiError::new(
            ErrorCode::InvalidInput,
            "offset is 0 to 1000000",
        ));
    }
    let entries = leaderboard::page(&rater, variant, offset, limit)
        .await
        .map_err(store_error)?;
    let rules = &rater.settings.eligibility;
    Ok(web::Json(Leaderboard {
        variant,
        entries,
        eligibility: Eligibility {
            min_games: rules.min_games,
            active_days: rules.active_days,
            max_rd: rules.max_rd,
        },
    }))
}

/// The caller's rank, or why they have none.
#[utoipa::path(
    get,
    path = "/v1/leaderboard/{variant}/me",
    tag = "ratings",
    params(("variant" = String, Path, description = "kalah, oware or mangala")),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The rank or the reason", body = MyRank),
        mancala_platform::api_errors::Unauthenticated,
        (status = 404, description = "`not_found`: no such variant", body = ErrorBody),
    )
)]
#[tracing::instrument(skip_all)]
pub(crate) async fn my_rank(
    caller: Authenticated,
    name: web::Path<String>,
    rater: web::Data<Context>,
) -> Result<web::Json<MyRank>, ApiError> {
    let variant = variant(&name)?;
    Ok(web::Json(
        leaderboard::my_rank(&rater, caller.player_id, variant)
            .await
            .map_err(store_error)?,
    ))
}

/// A player's profile: ratings per variant, with W/D/L.
#[utoipa::path(
    get,
    path = "/v1/players/{id}",
    tag = "ratings",
    params(("id" = Uuid, Path, description = "The player")),
    responses(
        (status = 200, description = "The profile", body = Profile),
        mancala_platform::api_errors::NotFound,
        mancala_platform::api_errors::BadQuery,
    )
)]
#[tracing::instrument(skip_all)]
pub(crate) async fn profile(
    id: web::Path<Uuid>,
    rater: web::Data<Context>,
) -> Result<web::Json<Profile>, ApiError> {
    let id = id.into_inner();
    let player = sqlx::query!(
        r#"SELECT p.display_name, p.closed_at IS NOT NULL AS "closed!",
                  NOT EXISTS (SELECT 1 FROM credentials c WHERE c.player_id = p.id) AS "guest!"
           FROM players p WHERE p.id = $1"#,
        id,
    )
    .fetch_optional(&rater.reads)
    .await?
    .ok_or_else(|| ApiError::new(ErrorCode::NotFound, "no such player"))?;
    let now = rater.clock.now_utc();
    let rows = sqlx::query!(
        r#"SELECT r.variant, r.rating, r.rd, r.volatility, r.games,
                  r.last_rated_at AS last_rated,
                  count(h.*) FILTER (WHERE h.result = 'win') AS "wins!",
                  count(h.*) FILTER (WHERE h.result = 'draw') AS "draws!",
                  count(h.*) FILTER (WHERE h.result = 'loss') AS "losses!"
           FROM ratings r
           LEFT JOIN rating_history h
                  ON h.player_id = r.player_id AND h.variant = r.variant AND NOT h.voided
           WHERE r.player_id = $1
           GROUP BY r.variant, r.rating, r.rd, r.volatility, r.games, r.last_rated_at
           ORDER BY r.variant"#,
        id,
    )
    .fetch_all(&rater.reads)
    .await?;
    let rules = &rater.settings.rules;
    let ratings = rows
        .into_iter()
        .filter_map(|row| {
            let stored = crate::glicko::Rating {
                rating: row.rating,
                rd: row.rd,
                volatility: row.volatility,
            };
            let rd = row.last_rated.map_or(row.rd, |last| {
                rules.rd_after(stored, crate::glicko::days_between(last, now))
            });
            // A row of a variant this build does not know is not shown.
            Some(VariantRating {
                variant: VariantName::parse(&row.variant)?,
                rating: row.rating,
                rd,
                provisional: rules.provisional(rd),
                games: row.games.max(0) as u32,
                wins: row.wins as u32,
                draws: row.draws as u32,
                losses: row.losses as u32,
            })
        })
        .collect();
    Ok(web::Json(Profile {
        id,
        name: player.display_name,
        guest: player.guest && !player.closed,
        closed: player.closed,
        ratings,
    }))
}

/// A player's rating after each rated game of a variant, for a chart.
#[utoipa::path(
    get,
    path = "/v1/players/{id}/ratings/{variant}",
    tag = "ratings",
    params(
        ("id" = Uuid, Path, description = "The player"),
        ("variant" = String, Path, description = "kalah, oware or mangala"),
    ),
    responses(
        (status = 200, description = "Oldest first", body = [RatingPoint]),
        mancala_platform::api_errors::BadQuery,
        (status = 404, description = "`not_found`: no such variant", body = ErrorBody),
    )
)]
#[tracing::instrument(skip_all)]
pub(crate) async fn history(
    path: web::Path<(Uuid, String)>,
    rater: web::Data<Context>,
) -> Result<web::Json<Vec<RatingPoint>>, ApiError> {
    let (id, name) = path.into_inner();
    let variant = variant(&name)?;
    let rows = sqlx::query!(
        r#"SELECT game_id, rating_after,
                  to_char(rated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS "at!",
                  CASE WHEN voided THEN
                      (SELECT s.kind FROM games g
                       JOIN sanctions s ON s.player_id IN (g.seat0_player, g.seat1_player)
                        AND s.kind IN ('booster', 'engine') AND s.lifted_at IS NULL
                        AND s.covers_from <= g.created_at
                       WHERE g.id = rating_history.game_id
                       ORDER BY s.id LIMIT 1)
                  END AS voided_by
           FROM rating_history WHERE player_id = $1 AND variant = $2
           ORDER BY seq"#,
        id,
        variant.as_str(),
    )
    .fetch_all(&rater.reads)
    .await?;
    Ok(web::Json(
        rows.into_iter()
            .map(|row| RatingPoint {
                game_id: row.game_id,
                at: row.at,
                rating: row.rating_after,
                voided_by: row.voided_by.as_deref().and_then(MarkKind::parse),
            })
            .collect(),
    ))
}
