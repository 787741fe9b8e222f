//! The accounts endpoints: parse, call [`Accounts`], answer.

use actix_web::http::Method;
use actix_web::{HttpRequest, HttpResponse, web};
use mancala_platform::ApiRoutes;
use mancala_platform::{ApiError, Authenticated, MaybeAuthenticated};
use mancala_proto::{Credentials, ErrorBody, Player, RefreshRequest, Session};

use super::names::NameLanguage;
use super::service::Accounts;
use crate::context::Context;

/// Mounts `/v1/auth/*` and `/v1/me`.
pub(crate) fn configure(config: &mut web::ServiceConfig) {
    config
        .api_route("/v1/auth/guest", Method::POST, guest)
        .api_route("/v1/auth/register", Method::POST, register)
        .api_route("/v1/auth/login", Method::POST, login)
        .api_route("/v1/auth/refresh", Method::POST, refresh)
        .api_route("/v1/auth/logout", Method::POST, logout)
        .api_route("/v1/me", Method::GET, me);
}

/// The address rate limits count against: the TCP peer, or the proxy's
/// `Forwarded`/`X-Forwarded-For` when the deployment says it is behind one.
fn client_ip(request: &HttpRequest, accounts: &Accounts) -> String {
    mancala_platform::http::client_address(request, accounts.settings().trust_forwarded_for)
}

/// Start playing as a guest.
///
/// Creates a player with a generated name such as "Swift Otter 42" and
/// signs them in. Limited per client address.
#[utoipa::path(
    post,
    path = "/v1/auth/guest",
    tag = "accounts",
    responses(
        (status = 201, description = "A new guest, signed in", body = Session),
        mancala_platform::api_errors::RateLimited,
        (status = 503, description = "`unavailable`: a store is down; retry", body = ErrorBody),
    )
)]
#[tracing::instrument(skip_all)]
pub(crate) async fn guest(
    request: HttpRequest,
    accounts: web::Data<Accounts>,
    queues: web::Data<Context>,
) -> Result<HttpResponse, ApiError> {
    queues.admission.admit("sign_in")?;
    // Korean visitors get Korean names: the client names its interface
    // language first.
    let language = request
        .headers()
        .get(actix_web::http::header::ACCEPT_LANGUAGE)
        .and_then(|value| value.to_str().ok());
    let language = NameLanguage::from_accept_language(language);
    let session = accounts
        .guest(&client_ip(&request, &accounts), language)
        .await?;
    Ok(HttpResponse::Created().json(session))
}

/// Register a username and password.
///
/// With a guest's access token, the guest becomes registered and keeps
/// their id, games and ratings; their other sessions end. Without one, a
/// new player is created. Either way the answer is a fresh session.
#[utoipa::path(
    post,
    path = "/v1/auth/register",
    tag = "accounts",
    request_body = Credentials,
    security((), ("bearer" = [])),
    responses(
        (status = 201, description = "Registered and signed in", body = Session),
        mancala_platform::api_errors::BadBody,
        (status = 401, description = "`token_invalid` or `token_expired`: a bad token was sent", body = ErrorBody),
        (status = 409, description = "`username_taken` or `already_registered`", body = ErrorBody),
        mancala_platform::api_errors::RateLimited,
        mancala_platform::api_errors::BodyTooLarge,
    )
)]
#[tracing::instrument(skip_all)]
pub(crate) async fn register(
    request: HttpRequest,
    caller: MaybeAuthenticated,
    accounts: web::Data<Accounts>,
    queues: web::Data<Context>,
    body: web::Json<Credentials>,
) -> Result<HttpResponse, ApiError> {
    queues.admission.admit("sign_in")?;
    let caller = caller.0.map(|caller| caller.player_id);
    let ip = client_ip(&request, &accounts);
    let session = accounts.register(caller, body.into_inner(), &ip).await?;
    Ok(HttpResponse::Created().json(session))
}

/// Log in with a username (any letter case) and password.
///
/// Failed attempts are limited per username and per client address; past
/// either limit even the right password is refused until `Retry-After`.
/// Successful sign-ins are limited too, per account and per address.
#[utoipa::path(
    post,
    path = "/v1/auth/login",
    tag = "accounts",
    request_body = Credentials,
    responses(
        (status = 200, description = "Signed in", body = Session),
        (status = 400, description = "`malformed_json` or `unknown_field`", body = ErrorBody),
        (status = 401, description = "`invalid_credentials`", body = ErrorBody),
        mancala_platform::api_errors::RateLimited,
        mancala_platform::api_errors::BodyTooLarge,
    )
)]
#[tracing::instrument(skip_all)]
pub(crate) async fn login(
    request: HttpRequest,
    accounts: web::Data<Accounts>,
    queues: web::Data<Context>,
    body: web::Json<Credentials>,
) -> Result<web::Json<Session>, ApiError> {
    queues.admission.admit("sign_in")?;
    let ip = client_ip(&request, &accounts);
    Ok(web::Json(accounts.login(body.into_inner(), &ip).await?))
}

/// Exchange a refresh token for a new session.
///
/// Each refresh token works once. Presenting one that was already used
/// revokes its whole family (every token from that sign-in): someone else
/// holds a copy.
#[utoipa::path(
    post,
    path = "/v1/auth/refresh",
    tag = "accounts",
    request_body = RefreshRequest,
    responses(
        (status = 200, description = "A new access token and refresh token", body = Session),
        (status = 401, description = "`token_invalid` (unknown, used or revoked) or `token_expired`", body = ErrorBody),
        mancala_platform::api_errors::BadBody,
        mancala_platform::api_errors::BodyTooLarge,
    )
)]
#[tracing::instrument(skip_all)]
pub(crate) async fn refresh(
    request: HttpRequest,
    accounts: web::Data<Accounts>,
    body: web::Json<RefreshRequest>,
) -> Result<web::Json<Session>, ApiError> {
    let ip = client_ip(&request, &accounts);
    Ok(web::Json(accounts.refresh(&body.refresh_token, &ip).await?))
}

/// Log out: revoke the refresh token's family.
///
/// The session's access tokens stop working at once on this instance and
/// within a second everywhere; sockets opened with them close.
#[utoipa::path(
    post,
    path = "/v1/auth/logout",
    tag = "accounts",
    request_body = RefreshRequest,
    responses(
        (status = 204, description = "Logged out (also when already logged out)"),
        (status = 401, description = "`token_invalid`: not a refresh token of ours", body = ErrorBody),
        mancala_platform::api_errors::BadBody,
        mancala_platform::api_errors::BodyTooLarge,
    )
)]
#[tracing::instrument(skip_all)]
pub(crate) async fn logout(
    accounts: web::Data<Accounts>,
    body: web::Json<RefreshRequest>,
) -> Result<HttpResponse, ApiError> {
    accounts.logout(&body.refresh_token).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// The signed-in player.
#[utoipa::path(
    get,
    path = "/v1/me",
    tag = "accounts",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The caller", body = Player),
        mancala_platform::api_errors::Unauthenticated,
    )
)]
#[tracing::instrument(skip_all)]
pub(crate) async fn me(
    caller: Authenticated,
    accounts: web::Data<Accounts>,
) -> Result<web::Json<Player>, ApiError> {
    Ok(web::Json(accounts.me(caller.player_id).await?))
}
