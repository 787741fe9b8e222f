//! Friend invites: a one-time random code behind a URL. Accepting creates
//! the friend room and its first game: the creator moves first.

use std::time::Duration;

use actix_web::{HttpRequest, HttpResponse, web};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use mancala_platform::{ApiError, Authenticated};
use mancala_proto::game::{CreateGame, SeatRequest, Side, TimeControl};
use mancala_proto::lobby::{
    Invite, InviteAccepted, InviteCreator, InviteRequest, LobbyServerMessage, NewGameAnswer,
};
use mancala_proto::{ErrorBody, ErrorCode, VariantSpec};
use mancala_rules::Variant;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::context::Context;
use crate::pairer::player_channel;

/// How long an invite waits for its friend.
const INVITE_LIFE: Duration = Duration::from_secs(24 * 3600);

fn now(deps: &Context) -> OffsetDateTime {
    deps.clock.now_utc()
}

/// The invite's link as the asker reaches the site: the configured public
/// address, else the address the request came to (its `Host`, or what a
/// proxy forwarded). Only the asker sees the link made from their own
/// headers, so a forged `Host` misleads nobody else.
fn with_link(mut invite: Invite, deps: &Context, request: &HttpRequest) -> Invite {
    let site = match deps.settings.public_url() {
        "" => {
            let connection = request.connection_info();
            format!("{}://{}", connection.scheme(), connection.host())
        }
        configured => configured.to_owned(),
    };
    invite.url = format!("{site}{}", invite.url);
    invite
}

/// Invite a friend.
#[utoipa::path(
    post,
    path = "/v1/invites",
    tag = "invites",
    request_body = InviteRequest,
    security(("bearer" = [])),
    responses(
        (status = 201, description = "The invite, with the link to share", body = Invite),
        (status = 401, description = "`unauthenticated`", body = ErrorBody),
        mancala_platform::api_errors::BadBody,
        mancala_platform::api_errors::BodyTooLarge,
        (status = 429, description = "`rate_limited`, with `Retry-After`: too many games made lately, or too many going (or invites waiting)", body = ErrorBody),
    )
)]
#[tracing::instrument(skip_all)]
pub(crate) async fn create(
    caller: Authenticated,
    request: HttpRequest,
    deps: web::Data<Context>,
    body: web::Json<InviteRequest>,
) -> Result<HttpResponse, ApiError> {
    deps.admission.admit("new_game")?;
    let body = body.into_inner();
    crate::games::check_time_control(body.time_control)?;
    if body.rated {
        crate::fair_play::ranked_open(&deps, caller.player_id).await?;
    }
    if body.rated && body.time_control.is_none() {
        // Without a clock the side to move could stall a rated game for
        // ever while connected; the clock is what answers stalling.
        return Err(ApiError::new(
            ErrorCode::InvalidInput,
            "a rated game needs a time control: choose one, or make the game casual",
        ));
    }
    let variant = Variant::try_from(body.variant)
        .map_err(|e| ApiError::new(ErrorCode::InvalidInput, e.to_string()))?;
    if !variant.is_playable() {
        return Err(ApiError::new(
            ErrorCode::InvalidInput,
            "this board is for analysis only",
        ));
    }
    crate::limits::new_invite(&deps, caller.player_id).await?;
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|_| ApiError::internal())?;
    let code = URL_SAFE_NO_PAD.encode(bytes);
    let spec =
        serde_json::to_value(VariantSpec::from(variant)).map_err(|_| ApiError::internal())?;
    let now = now(&deps);
    sqlx::query!(
        "INSERT INTO invites (code, creator, variant, clock_initial_secs, clock_increment_secs, rated,
                              created_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        code,
        caller.player_id,
        spec,
        body.time_control.map(|tc| tc.initial_secs as i32),
        body.time_control.map(|tc| tc.increment_secs as i32),
        body.rated,
        now,
        now + INVITE_LIFE,
    )
    .execute(&deps.postgres)
    .await?;
    let invite = find(&deps, &code).await?;
    Ok(HttpResponse::Created().json(with_link(invite, &deps, &request)))
}

/// Whether `code` could be an invite's: 16 random bytes in unpadded
/// base64url. Anything else is not looked up (it could hold bytes
/// Postgres refuses).
fn well_formed(code: &str) -> bool {
    code.len() == 22
        && code
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_')
}

async fn find(deps: &Context, code: &str) -> Result<Invite, ApiError> {
    if !well_formed(code) {
        return Err(ApiError::new(ErrorCode::NotFound, "no such invite"));
    }
    let row = sqlx::query!(
        r#"SELECT i.code, i.creator, p.display_name, i.variant, i.clock_initial_secs,
                  i.clock_increment_secs, i.rated, i.game_id,
                  to_char(i.expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS "expires_at!",
                  i.expires_at <= $2 AS "expired!"
           FROM invites i JOIN players p ON p.id = i.creator
           WHERE i.code = $1"#,
        code,
        now(deps),
    )
    .fetch_optional(&deps.postgres)
    .await?
    .ok_or_else(|| ApiError::new(ErrorCode::NotFound, "no such invite"))?;
    let variant: VariantSpec =
        serde_json::from_value(row.variant).map_err(|_| ApiError::internal())?;
    let time_control =
        row.clock_initial_secs
            .zip(row.clock_increment_secs)
            .map(|(initial, increment)| TimeControl {
                initial_secs: initial as u32,
                increment_secs: increment as u32,
            });
    let status = if row.game_id.is_some() {
        "accepted"
    } else if row.expired {
        "expired"
    } else {
        "open"
    };
    Ok(Invite {
        // Made absolute by `with_link` where the link is shown.
        url: format!("/invite/{}", row.code),
        code: row.code,
        creator: InviteCreator {
            id: row.creator,
            name: row.display_name,
        },
        variant,
        time_control,
        rated: row.rated,
        expires_at: row.expires_at,
        status: status.to_owned(),
        game_id: row.game_id,
    })
}

/// Who invites, and to what.
#[utoipa::path(
    get,
    path = "/v1/invites/{code}",
    tag = "invites",
    params(("code" = String, Path, description = "The invite's code")),
    responses(
        (status = 200, description = "The invite", body = Invite),
        mancala_platform::api_errors::NotFound,
    )
)]
#[tracing::instrument(skip_all)]
pub(crate) async fn show(
    code: web::Path<String>,
    request: HttpRequest,
    deps: web::Data<Context>,
) -> Result<web::Json<Invite>, ApiError> {
    let invite = find(&deps, &code).await?;
    Ok(web::Json(with_link(invite, &deps, &request)))
}

/// Accept an invite: the room and its first game are made.
#[utoipa::path(
    post,
    path = "/v1/invites/{code}/accept",
    tag = "invites",
    params(("code" = String, Path, description = "The invite's code")),
    security(("bearer" = [])),
    responses(
        (status = 201, description = "The first game; the joiner moves second", body = NewGameAnswer),
        mancala_platform::api_errors::NotFound,
        (status = 409, description = "`not_allowed` (your own invite) or `invite_used`", body = ErrorBody),
        (status = 410, description = "`invite_expired`", body = ErrorBody),
        mancala_platform::api_errors::Unauthenticated,
        (status = 503, description = "`unavailable`: games cannot be made now; retry", body = ErrorBody),
    )
)]
#[tracing::instrument(skip_all)]
pub(crate) async fn accept(
    caller: Authenticated,
    code: web::Path<String>,
    deps: web::Data<Context>,
) -> Result<HttpResponse, ApiError> {
    deps.admission.admit("new_game")?;
    let invite = find(&deps, &code).await?;
    if invite.creator.id == caller.player_id {
        return Err(ApiError::new(
            ErrorCode::NotAllowed,
            "this is your own invite",
        ));
    }
    match invite.status.as_str() {
        "accepted" => {
            return Err(ApiError::new(
                ErrorCode::InviteUsed,
                "this invite was already accepted",
            ));
        }
        "expired" => {
            return Err(ApiError::new(
                ErrorCode::InviteExpired,
                "this invite has expired",
            ));
        }
        _ => {}
    }
    // A rated invite is ranked play: a fair-play ban closes it, and one
    // ranked game at a time, for both.
    if invite.rated {
        crate::fair_play::may_play_ranked(&deps, caller.player_id).await?;
        if crate::games::live_ranked_game(&deps.postgres, invite.creator.id)
            .await?
            .is_some()
        {
            return Err(ApiError::new(
                ErrorCode::NotAllowed,
                "the player who invited you is in a ranked game; try again when it ends",
            ));
        }
        if crate::fair_play::ranked_open(&deps, invite.creator.id)
            .await
            .is_err()
        {
            return Err(ApiError::new(
                ErrorCode::NotAllowed,
                "the player who invited you cannot play ranked games now; ask for a casual game",
            ));
        }
    }
    // Claim the code first, atomically: one acceptance only.
    let claimed = sqlx::query!(
        "UPDATE invites SET accepted_by = $2
         WHERE code = $1 AND accepted_by IS NULL AND expires_at > $3",
        invite.code,
        caller.player_id,
        now(&deps),
    )
    .execute(&deps.postgres)
    .await?;
    if claimed.rows_affected() != 1 {
        return Err(ApiError::new(
            ErrorCode::InviteUsed,
            "this invite was already accepted",
        ));
    }
    let seat = |id: Uuid| SeatRequest::Player {
        id,
        rating: None,
        rd: None,
    };
    let request = CreateGame {
        id: None,
        variant: invite.variant,
        seats: [seat(invite.creator.id), seat(caller.player_id)],
        rated: invite.rated,
        time_control: invite.time_control,
        room: true,
        tournament: None,
    };
    let created = match deps.game_room.create(&request).await {
        Ok(created) => created,
        Err(error) => {
            // Give the code back, so the friend can try again.
            sqlx::query!(
                "UPDATE invites SET accepted_by = NULL WHERE code = $1",
                invite.code
            )
            .execute(&deps.postgres)
            .await?;
            return Err(error);
        }
    };
    sqlx::query!(
        "UPDATE invites SET game_id = $2 WHERE code = $1",
        invite.code,
        created.id
    )
    .execute(&deps.postgres)
    .await?;
    // The inviter's lobby sockets hear of it at once (no polling).
    let friend = InviteCreator {
        id: caller.player_id,
        name: crate::ratings::name(&deps.postgres, caller.player_id)
            .await
            .ok()
            .flatten()
            .unwrap_or_default(),
    };
    let accepted = LobbyServerMessage::InviteAccepted(InviteAccepted {
        code: invite.code.clone(),
        game_id: created.id,
        friend,
        ws_path: created.play_path.clone(),
    });
    let text = serde_json::to_string(&accepted).unwrap_or_default();
    deps.pubsub
        .publish(&player_channel(invite.creator.id), text)
        .await;
    Ok(HttpResponse::Created().json(NewGameAnswer {
        game_id: created.id,
        // The invited friend moves second.
        seat: Side::North,
        ws_path: created.play_path,
    }))
}

/// Your invites still waiting for a friend, newest first.
#[utoipa::path(
    get,
    path = "/v1/invites",
    tag = "invites",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "Your open invites", body = [Invite]),
        mancala_platform::api_errors::Unauthenticated,
    )
)]
#[tracing::instrument(skip_all)]
pub(crate) async fn mine(
    caller: Authenticated,
    request: HttpRequest,
    deps: web::Data<Context>,
) -> Result<web::Json<Vec<Invite>>, ApiError> {
    let codes = sqlx::query_scalar!(
        "SELECT code FROM invites
         WHERE creator = $1 AND accepted_by IS NULL AND expires_at > $2
         ORDER BY created_at DESC",
        caller.player_id,
        now(&deps),
    )
    .fetch_all(&deps.postgres)
    .await?;
    let mut invites = Vec::with_capacity(codes.len());
    for code in codes {
        invites.push(with_link(find(&deps, &code).await?, &deps, &request));
    }
    Ok(web::Json(invites))
}

/// Withdraw an invite of yours that nobody accepted yet: its link then
/// answers `invite_expired`.
#[utoipa::path(
    delete,
    path = "/v1/invites/{code}",
    tag = "invites",
    params(("code" = String, Path, description = "The invite's code")),
    security(("bearer" = [])),
    responses(
        (status = 204, description = "Withdrawn"),
        (status = 404, description = "`not_found`: no such invite of yours", body = ErrorBody),
        (status = 409, description = "`invite_used`: already accepted", body = ErrorBody),
        mancala_platform::api_errors::Unauthenticated,
    )
)]
#[tracing::instrument(skip_all)]
pub(crate) async fn cancel(
    caller: Authenticated,
    code: web::Path<String>,
    deps: web::Data<Context>,
) -> Result<HttpResponse, ApiError> {
    let invite = find(&deps, &code).await?;
    if invite.creator.id != caller.player_id {
        // Someone else's invite is none of the caller's business.
        return Err(ApiError::new(ErrorCode::NotFound, "no such invite"));
    }
    let now = now(&deps);
    let withdrawn = sqlx::query!(
        "UPDATE invites SET expires_at = $3
         WHERE code = $1 AND creator = $2 AND accepted_by IS NULL AND expires_at > $3",
        invite.code,
        caller.player_id,
        now,
    )
    .execute(&deps.postgres)
    .await?;
    if withdrawn.rows_affected() == 1 || invite.status == "expired" {
        return Ok(HttpResponse::NoContent().finish());
    }
    Err(ApiError::new(
        ErrorCode::InviteUsed,
        "this invite was already accepted",
    ))
}
