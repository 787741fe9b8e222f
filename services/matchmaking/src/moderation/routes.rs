//! The moderators' API (`/v1/mod/*`, each route refusing anyone without
//! the role with 403) and the players' side of moderation (reports, their
//! own account closed, their data). Handlers parse and call the domain.

use std::collections::BTreeMap;

use actix_web::{HttpResponse, web};
use mancala_platform::api_errors::{BadBody, BadQuery, Forbidden, NotFound, Unauthenticated};
use mancala_platform::ratelimit::{self, Decision};
use mancala_platform::{ApiError, Authenticated, Moderator};
use mancala_proto::moderation::{
    self, AccountFile, ActionDone, CloseRequest, LogEntry, LogPage, ModAction, MyData, Note,
    NoteRequest, PlayerSearch, Reasoned, RecomputeStatus, ReportFiled, ReportQueue, ReportRequest,
    ReportedAccount,
};
use mancala_proto::{ErrorBody, ErrorCode};
use serde::Deserialize;
use serde_json::json;
use utoipa::IntoParams;
use uuid::Uuid;

use super::store::{self, LogLine};
use super::{actions, file, weigh};
use crate::accounts::Accounts;
use crate::context::Context;

/// Report a player (or one of their finished games).
#[utoipa::path(
    post,
    path = "/v1/reports",
    tag = "moderation",
    request_body = ReportRequest,
    security(("bearer" = [])),
    responses(
        (status = 201, description = "Filed", body = ReportFiled),
        (status = 200, description = "The same report is open already: nothing added", body = ReportFiled),
        BadBody,
        Unauthenticated,
        NotFound,
        (status = 429, description = "`rate_limited`: too many reports lately", body = ErrorBody),
    )
)]
#[tracing::instrument(skip_all)]
pub(crate) async fn report(
    caller: Authenticated,
    deps: web::Data<Context>,
    body: web::Json<ReportRequest>,
) -> Result<HttpResponse, ApiError> {
    let body = body.into_inner();
    if body.player == caller.player_id {
        return Err(ApiError::new(
            ErrorCode::InvalidInput,
            "you cannot report yourself",
        ));
    }
    let text = moderation::REPORT_TEXT.clean(&body.text)?;
    if !store::player_exists(&deps.postgres, body.player).await? {
        return Err(ApiError::new(ErrorCode::NotFound, "no such player"));
    }
    if let Some(game) = body.game
        && !store::played_in(&deps.postgres, body.player, game).await?
    {
        return Err(ApiError::new(
            ErrorCode::InvalidInput,
            "`game` must be a finished game the player played",
        ));
    }
    let limit = deps.settings.player_limits.reports;
    let now = deps.clock.now_secs();
    let subject = caller.player_id.to_string();
    // Counted before filing, so that reports sent at once meet one count;
    // taken back when nothing new was filed: asking again is free.
    if let Decision::Limited { retry_after } =
        ratelimit::hit(&deps.redis, "reports", &subject, limit, now).await?
    {
        return Err(ApiError::rate_limited(retry_after));
    }
    let (id, new) = store::file_report(
        &deps.postgres,
        caller.player_id,
        body.player,
        body.game,
        body.reason,
        &text,
        deps.clock.now_utc(),
    )
    .await?;
    if new {
        Ok(HttpResponse::Created().json(ReportFiled { id }))
    } else {
        ratelimit::refund(&deps.redis, "reports", &subject, limit, now).await?;
        Ok(HttpResponse::Ok().json(ReportFiled { id }))
    }
}

/// The open reports, grouped by account, the weightiest first (see
/// `ReportedAccount::weight`).
#[utoipa::path(
    get,
    path = "/v1/mod/reports",
    tag = "moderation",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The queue", body = ReportQueue),
        Unauthenticated,
        Forbidden,
    )
)]
#[tracing::instrument(skip_all)]
pub(crate) async fn report_queue(
    _moderator: Moderator,
    deps: web::Data<Context>,
) -> Result<web::Json<ReportQueue>, ApiError> {
    let now = deps.clock.now_utc();
    let open = store::reports(&deps.postgres, None, true, 1000, now).await?;
    let mut grouped: BTreeMap<Uuid, (ReportedAccount, Vec<weigh::Reporter>)> = BTreeMap::new();
    for filed in open {
        let report = filed.report;
        let (account, reporters) = grouped.entry(report.player.id).or_insert_with(|| {
            let account = ReportedAccount {
                player: report.player.clone(),
                reporters: 0,
                weight: 0.0,
                reports: Vec::new(),
            };
            (account, Vec::new())
        });
        reporters.push(weigh::Reporter {
            // The sentinel is one voice, whatever it reports.
            id: report.reporter.as_ref().map_or(Uuid::nil(), |r| r.id),
            network: filed.reporter_network,
            standing: report.reporter_standing,
        });
        account.reports.push(report);
    }
    let mut accounts: Vec<ReportedAccount> = grouped
        .into_values()
        .map(|(mut account, reporters)| {
            let mut distinct: Vec<Uuid> = reporters.iter().map(|r| r.id).collect();
            distinct.sort_unstable();
            distinct.dedup();
            account.reporters = distinct.len() as u32;
            account.weight = weigh::weight(&reporters);
            account
        })
        .collect();
    accounts.sort_by(|a, b| {
        b.weight
            .total_cmp(&a.weight)
            .then_with(|| b.reporters.cmp(&a.reporters))
            .then_with(|| b.reports[0].id.cmp(&a.reports[0].id))
    });
    Ok(web::Json(ReportQueue { accounts }))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
pub(crate) struct SearchQuery {
    /// The start of a display name or username (1 to 40 characters).
    name: String,
}

/// Accounts by the start of their name.
#[utoipa::path(
    get,
    path = "/v1/mod/players",
    tag = "moderation",
    params(SearchQuery),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "Up to 20 accounts", body = PlayerSearch),
        BadQuery,
        Unauthenticated,
        Forbidden,
    )
)]
#[tracing::instrument(skip_all)]
pub(crate) async fn search(
    _moderator: Moderator,
    deps: web::Data<Context>,
    query: web::Query<SearchQuery>,
) -> Result<web::Json<PlayerSearch>, ApiError> {
    let name = moderation::SEARCH_NAME.clean(&query.name)?;
    Ok(web::Json(PlayerSearch {
        players: store::search(&deps.postgres, &name).await?,
    }))
}

/// An account's file: sanctions, notes, reports, fair-play record, linked
/// accounts, frequent opponents, ratings with their history, recent games.
#[utoipa::path(
    get,
    path = "/v1/mod/players/{id}",
    tag = "moderation",
    params(("id" = Uuid, Path, description = "The player")),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The file", body = AccountFile),
        BadQuery,
        Unauthenticated,
        Forbidden,
        NotFound,
    )
)]
#[tracing::instrument(skip_all)]
pub(crate) async fn account(
    _moderator: Moderator,
    deps: web::Data<Context>,
    id: web::Path<Uuid>,
) -> Result<web::Json<AccountFile>, ApiError> {
    file::account_file(&deps.postgres, id.into_inner(), deps.clock.now_utc())
        .await?
        .map(web::Json)
        .ok_or_else(|| ApiError::new(ErrorCode::NotFound, "no such player"))
}

/// Acts on an account: warn, ban from ranked play, close or reopen,
/// rename, mark as booster or engine, or (admins) set its role.
#[utoipa::path(
    post,
    path = "/v1/mod/players/{id}/actions",
    tag = "moderation",
    params(("id" = Uuid, Path, description = "The player")),
    request_body = ModAction,
    security(("bearer" = [])),
    responses(
        (status = 200, description = "Done, and logged", body = ActionDone),
        BadBody,
        Unauthenticated,
        Forbidden,
        NotFound,
        (status = 409, description = "`not_allowed` (already so, or on yourself) or `username_taken` (a rename)", body = ErrorBody),
    )
)]
#[tracing::instrument(skip_all)]
pub(crate) async fn act(
    moderator: Moderator,
    deps: web::Data<Context>,
    accounts: web::Data<Accounts>,
    id: web::Path<Uuid>,
    body: web::Json<ModAction>,
) -> Result<web::Json<ActionDone>, ApiError> {
    let done = actions::act(
        &deps,
        &accounts,
        moderator,
        id.into_inner(),
        body.into_inner(),
    )
    .await?;
    Ok(web::Json(done))
}

/// Lifts a warning, a ban or a mark (a mark's games count again, and the
/// ratings are recomputed).
#[utoipa::path(
    post,
    path = "/v1/mod/sanctions/{id}/lift",
    tag = "moderation",
    params(("id" = i64, Path, description = "The sanction")),
    request_body = Reasoned,
    security(("bearer" = [])),
    responses(
        (status = 200, description = "Lifted, and logged", body = ActionDone),
        BadBody,
        Unauthenticated,
        Forbidden,
        (status = 404, description = "`not_found`: no such sanction standing", body = ErrorBody),
    )
)]
#[tracing::instrument(skip_all)]
pub(crate) async fn lift(
    moderator: Moderator,
    deps: web::Data<Context>,
    accounts: web::Data<Accounts>,
    id: web::Path<i64>,
    body: web::Json<Reasoned>,
) -> Result<web::Json<ActionDone>, ApiError> {
    let done = actions::lift(&deps, &accounts, moderator, id.into_inner(), &body.reason).await?;
    Ok(web::Json(done))
}

/// Adds a moderators' note to an account.
#[utoipa::path(
    post,
    path = "/v1/mod/players/{id}/notes",
    tag = "moderation",
    params(("id" = Uuid, Path, description = "The player")),
    request_body = NoteRequest,
    security(("bearer" = [])),
    responses(
        (status = 201, description = "The note", body = Note),
        BadBody,
        Unauthenticated,
        Forbidden,
        NotFound,
    )
)]
#[tracing::instrument(skip_all)]
pub(crate) async fn note(
    moderator: Moderator,
    deps: web::Data<Context>,
    id: web::Path<Uuid>,
    body: web::Json<NoteRequest>,
) -> Result<HttpResponse, ApiError> {
    let player = id.into_inner();
    let text = &moderation::NOTE_TEXT.clean(&body.text)?;
    let now = deps.clock.now_utc();
    let mut tx = deps.postgres.begin().await?;
    store::lock_account(&mut tx, player)
        .await?
        .ok_or_else(|| ApiError::new(ErrorCode::NotFound, "no such player"))?;
    let id = store::add_note(&mut tx, player, moderator.player_id, text, now).await?;
    let line = LogLine {
        actor: Some(moderator.player_id),
        action: "note",
        player: Some(player),
        reason: text,
        details: json!({ "note": id }),
    };
    store::log(&mut tx, line, now).await?;
    tx.commit().await?;
    let note = store::notes(&deps.postgres, player)
        .await?
        .into_iter()
        .find(|note| note.id == id)
        .ok_or_else(ApiError::internal)?;
    Ok(HttpResponse::Created().json(note))
}

/// Closes a report without acting on the account (it was unfounded, or
/// answered some other way).
#[utoipa::path(
    post,
    path = "/v1/mod/reports/{id}/close",
    tag = "moderation",
    params(("id" = i64, Path, description = "The report")),
    request_body = Reasoned,
    security(("bearer" = [])),
    responses(
        (status = 204, description = "Closed, and logged"),
        BadBody,
        Unauthenticated,
        Forbidden,
        (status = 404, description = "`not_found`: no such open report", body = ErrorBody),
    )
)]
#[tracing::instrument(skip_all)]
pub(crate) async fn close_report(
    moderator: Moderator,
    deps: web::Data<Context>,
    id: web::Path<i64>,
    body: web::Json<Reasoned>,
) -> Result<HttpResponse, ApiError> {
    let why = &actions::reason(&body.reason)?;
    let id = id.into_inner();
    let now = deps.clock.now_utc();
    let mut tx = deps.postgres.begin().await?;
    let player = store::close_report(&mut tx, id, moderator.player_id, now)
        .await?
        .ok_or_else(|| ApiError::new(ErrorCode::NotFound, "no such open report"))?;
    let line = LogLine {
        actor: Some(moderator.player_id),
        action: "close_report",
        player: Some(player),
        reason: why,
        details: json!({ "report": id }),
    };
    store::log(&mut tx, line, now).await?;
    tx.commit().await?;
    Ok(HttpResponse::NoContent().finish())
}

/// Where a ratings recompute stands.
#[utoipa::path(
    get,
    path = "/v1/mod/recomputes/{id}",
    tag = "moderation",
    params(("id" = i64, Path, description = "The recompute")),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "Done or pending, and what it changed", body = RecomputeStatus),
        BadQuery,
        Unauthenticated,
        Forbidden,
        NotFound,
    )
)]
#[tracing::instrument(skip_all)]
pub(crate) async fn recompute(
    _moderator: Moderator,
    deps: web::Data<Context>,
    id: web::Path<i64>,
) -> Result<web::Json<RecomputeStatus>, ApiError> {
    let id = id.into_inner();
    let row = sqlx::query!(
        r#"SELECT done_at IS NOT NULL AS "done!", rows_changed, ratings_changed, players, millis
           FROM rating_recomputes WHERE id = $1"#,
        id,
    )
    .fetch_optional(&deps.postgres)
    .await?
    .ok_or_else(|| ApiError::new(ErrorCode::NotFound, "no such recompute"))?;
    Ok(web::Json(RecomputeStatus {
        id,
        done: row.done,
        lines_changed: row.rows_changed.map(|n| n.max(0) as u32),
        ratings_changed: row.ratings_changed.map(|n| n.max(0) as u32),
        players: row
            .players
            .and_then(|players| serde_json::from_value(players).ok())
            .unwrap_or_default(),
        millis: row.millis.map(|n| n.max(0) as u32),
    }))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
pub(crate) struct LogQuery {
    /// Lines older than this one (the previous page's `next`).
    before: Option<i64>,
    /// Only the lines about this player.
    player: Option<Uuid>,
    /// 1 to 200; 50 by default.
    #[param(minimum = 1, maximum = 200)]
    limit: Option<i64>,
}

/// The audit log, newest first: admins only. Nobody can change it.
#[utoipa::path(
    get,
    path = "/v1/mod/log",
    tag = "moderation",
    params(LogQuery),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "A page of the log", body = LogPage),
        BadQuery,
        Unauthenticated,
        Forbidden,
    )
)]
#[tracing::instrument(skip_all)]
pub(crate) async fn log(
    moderator: Moderator,
    deps: web::Data<Context>,
    query: web::Query<LogQuery>,
) -> Result<web::Json<LogPage>, ApiError> {
    moderator.admin()?;
    let limit = query.limit.unwrap_or(50);
    if !(1..=200).contains(&limit) {
        return Err(ApiError::new(
            ErrorCode::InvalidInput,
            "`limit` must be 1 to 200",
        ));
    }
    let rows = sqlx::query!(
        r#"SELECT l.id, rfc3339(l.at) AS "at!", l.actor, a.display_name AS "actor_name?",
                  l.action, l.player_id, p.display_name AS "player_name?", l.reason, l.details
           FROM moderation_log l
           LEFT JOIN players a ON a.id = l.actor
           LEFT JOIN players p ON p.id = l.player_id
           WHERE ($1::bigint IS NULL OR l.id < $1) AND ($2::uuid IS NULL OR l.player_id = $2)
           ORDER BY l.id DESC
           LIMIT $3"#,
        query.before,
        query.player,
        limit + 1,
    )
    .fetch_all(&deps.postgres)
    .await?;
    let more = rows.len() as i64 > limit;
    let entries: Vec<LogEntry> = rows
        .into_iter()
        .take(limit as usize)
        .map(|row| LogEntry {
            id: row.id,
            at: row.at,
            actor: store::player_ref(row.actor, row.actor_name),
            action: row.action,
            player: store::player_ref(row.player_id, row.player_name),
            reason: row.reason,
            details: row.details,
        })
        .collect();
    let next = more.then(|| entries.last().map(|entry| entry.id)).flatten();
    Ok(web::Json(LogPage { entries, next }))
}

/// Dismisses a warning once read.
#[utoipa::path(
    post,
    path = "/v1/me/warnings/{id}/seen",
    tag = "accounts",
    params(("id" = i64, Path, description = "The warning")),
    security(("bearer" = [])),
    responses(
        (status = 204, description = "Dismissed"),
        Unauthenticated,
        (status = 404, description = "`not_found`: no such warning of yours to dismiss", body = ErrorBody),
    )
)]
#[tracing::instrument(skip_all)]
pub(crate) async fn warning_seen(
    caller: Authenticated,
    deps: web::Data<Context>,
    id: web::Path<i64>,
) -> Result<HttpResponse, ApiError> {
    let now = deps.clock.now_utc();
    if store::see_warning(&deps.postgres, caller.player_id, id.into_inner(), now).await? {
        Ok(HttpResponse::NoContent().finish())
    } else {
        Err(ApiError::new(
            ErrorCode::NotFound,
            "no such warning of yours to dismiss",
        ))
    }
}

/// Closes your own account: you are signed out everywhere, your name
/// becomes "Closed account …", your games stay under it, you leave the
/// leaderboards. A registered player confirms with their password.
#[utoipa::path(
    post,
    path = "/v1/me/close",
    tag = "accounts",
    request_body = CloseRequest,
    security(("bearer" = [])),
    responses(
        (status = 204, description = "Closed"),
        BadBody,
        Unauthenticated,
        (status = 401, description = "`invalid_credentials`: the password is wrong", body = ErrorBody),
    )
)]
#[tracing::instrument(skip_all)]
pub(crate) async fn close_mine(
    caller: Authenticated,
    deps: web::Data<Context>,
    accounts: web::Data<Accounts>,
    body: web::Json<CloseRequest>,
) -> Result<HttpResponse, ApiError> {
    super::close_own_account(
        &deps,
        &accounts,
        caller.player_id,
        body.into_inner().password,
    )
    .await?;
    Ok(HttpResponse::NoContent().finish())
}

/// Everything the site keeps about you, as JSON: your account, the
/// networks and sessions it was used from, ratings with their history,
/// every game with its moves, the fair-play record, sanctions, the
/// reports you filed, the arenas you joined and the invites you made.
#[utoipa::path(
    get,
    path = "/v1/me/data",
    tag = "accounts",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "Your data", body = MyData),
        Unauthenticated,
    )
)]
#[tracing::instrument(skip_all)]
pub(crate) async fn my_data(
    caller: Authenticated,
    deps: web::Data<Context>,
) -> Result<HttpResponse, ApiError> {
    let data = super::data::my_data(&deps.postgres, caller.player_id, deps.clock.now_utc())
        .await?
        .ok_or_else(|| {
            ApiError::new(ErrorCode::TokenInvalid, "the access token's player is gone")
        })?;
    Ok(HttpResponse::Ok()
        .insert_header((
            actix_web::http::header::CONTENT_DISPOSITION,
            "attachment; filename=\"mancala-arena-data.json\"",
        ))
        .json(data))
}
