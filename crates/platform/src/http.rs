//! HTTP plumbing shared by the services: the one API error type, the JSON
//! body rules, and the health endpoints.
//!
//! Handlers return `Result<_, ApiError>`; an error becomes
//! `{"code": "...", "message": "..."}` with the status its code names in
//! `mancala_proto::ErrorCode`. Internal errors are logged where they happen
//! and reach the client only as `internal`.

use std::fmt;

use actix_web::error::JsonPayloadError;
use actix_web::http::header::{HeaderValue, RETRY_AFTER};
use actix_web::http::{Method, StatusCode};
use actix_web::{HttpRequest, HttpResponse, ResponseError, web};
use mancala_proto::{ErrorBody, ErrorCode};
use sqlx::PgPool;

use crate::stores::Redis;

/// The address a limit counts against: the TCP peer, or the proxy's
/// `Forwarded`/`X-Forwarded-For` when the deployment trusts it.
pub fn client_address(request: &HttpRequest, trust_forwarded_for: bool) -> String {
    if trust_forwarded_for && let Some(address) = request.connection_info().realip_remote_addr() {
        return address.to_owned();
    }
    request
        .peer_addr()
        .map_or_else(|| "unknown".to_owned(), |peer| peer.ip().to_string())
}

/// Largest JSON body a REST endpoint accepts.
pub const MAX_JSON_BYTES: usize = 16 * 1024;

/// An error as the client sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiError {
    pub code: ErrorCode,
    pub message: String,
    /// Seconds to wait, sent as `Retry-After` (rate limits, a busy server).
    pub retry_after: Option<u64>,
    /// The game the error is about, for the client to go to.
    pub game_id: Option<uuid::Uuid>,
}

impl ApiError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> ApiError {
        ApiError {
            code,
            message: message.into(),
            retry_after: None,
            game_id: None,
        }
    }

    /// An error whose details must not reach the client.
    pub fn internal() -> ApiError {
        ApiError::new(ErrorCode::Internal, "internal error")
    }

    /// The body the client gets, as a response or on a socket.
    pub fn body(&self) -> ErrorBody {
        ErrorBody {
            retry_after: self.retry_after,
            game_id: self.game_id,
            ..ErrorBody::new(self.code, self.message.clone())
        }
    }

    /// Too many requests; retry after `seconds`.
    pub fn rate_limited(seconds: u64) -> ApiError {
        ApiError {
            retry_after: Some(seconds),
            ..ApiError::new(ErrorCode::RateLimited, "too many requests")
        }
    }
}

/// Whether a Postgres failure is the server being out of reach (down,
/// restarting, shutting down, its connection cut) rather than the query:
/// a killed server's orphaned backends say `57P01` ("unexpected postmaster
/// exit") and one starting up refuses connections with `57P03`, which the
/// client sees as a database error, not as a broken socket.
pub fn is_unreachable(error: &sqlx::Error) -> bool {
    match error {
        sqlx::Error::PoolTimedOut | sqlx::Error::Io(_) | sqlx::Error::PoolClosed => true,
        sqlx::Error::Database(database) => database.code().is_some_and(|code| {
            // Class 08: connection exception; 57P01-57P03: admin shutdown,
            // crash shutdown, cannot connect now; 53300: too many
            // connections (a restarting node briefly).
            code.starts_with("08") || code.starts_with("57P") || code == "53300"
        }),
        _ => false,
    }
}

/// Whether Postgres refused a value the client sent (a NUL byte in text,
/// a number past a column's range): the request's fault, not ours. Every
/// field is checked where it is parsed; this is the net under a field
/// that was missed, so that it is a 400 and not a 500.
pub fn is_bad_value(error: &sqlx::Error) -> bool {
    match error {
        sqlx::Error::Database(database) => database.code().is_some_and(|code| {
            // 22021: a byte sequence not in UTF-8 (a NUL); 22P05: a
            // character with no equivalent; 22003: a number out of range.
            matches!(code.as_ref(), "22021" | "22P05" | "22003")
        }),
        _ => false,
    }
}

/// A Postgres failure: `unavailable` (retryable) when the database cannot
/// be reached, `invalid_input` for a value it cannot store, `internal`
/// otherwise. Logged here, never shown.
impl From<sqlx::Error> for ApiError {
    fn from(error: sqlx::Error) -> ApiError {
        match &error {
            error if is_unreachable(error) => {
                tracing::warn!(%error, "postgres unreachable");
                ApiError::new(
                    ErrorCode::Unavailable,
                    "the database is unreachable; retry shortly",
                )
            }
            error if is_bad_value(error) => {
                tracing::warn!(%error, "postgres refused a value a field let through");
                ApiError::new(
                    ErrorCode::InvalidInput,
                    "a value in the request cannot be stored (a NUL character, or a number out of range)",
                )
            }
            _ => {
                tracing::error!(%error, "postgres error");
                ApiError::internal()
            }
        }
    }
}

/// Free text refused by its field's rules.
impl From<mancala_proto::text::TextError> for ApiError {
    fn from(error: mancala_proto::text::TextError) -> ApiError {
        ApiError::new(ErrorCode::InvalidInput, error.to_string())
    }
}

/// A Redis failure: every one is treated as the store being unreachable.
impl From<redis::RedisError> for ApiError {
    fn from(error: redis::RedisError) -> ApiError {
        tracing::warn!(%error, "redis error");
        ApiError::new(
            ErrorCode::Unavailable,
            "a store is unreachable; retry shortly",
        )
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        StatusCode::from_u16(self.code.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
    }

    fn error_response(&self) -> HttpResponse {
        let mut response = HttpResponse::build(self.status_code());
        if let Some(seconds) = self.retry_after {
            response.insert_header((RETRY_AFTER, HeaderValue::from(seconds)));
        }
        response.json(self.body())
    }
}

/// Parsing rules for JSON bodies: a size limit, and errors that say which
/// rule the body broke (malformed, unknown field, too large) in the API's
/// own error shape.
pub fn json_config() -> web::JsonConfig {
    json_config_limited(MAX_JSON_BYTES)
}

/// [`json_config`] with another size limit (a service-to-service batch).
pub fn json_config_limited(limit: usize) -> web::JsonConfig {
    web::JsonConfig::default()
        .limit(limit)
        .error_handler(move |error, _: &HttpRequest| {
            let api = match &error {
                JsonPayloadError::Overflow { .. }
                | JsonPayloadError::OverflowKnownLength { .. } => ApiError::new(
                    ErrorCode::PayloadTooLarge,
                    format!("the body exceeds {limit} bytes"),
                ),
                JsonPayloadError::Deserialize(inner)
                    if inner.to_string().contains("unknown field") =>
                {
                    ApiError::new(ErrorCode::UnknownField, inner.to_string())
                }
                JsonPayloadError::Deserialize(inner) => {
                    ApiError::new(ErrorCode::MalformedJson, inner.to_string())
                }
                JsonPayloadError::Payload(payload) if is_body_timeout(payload) => {
                    ApiError::new(ErrorCode::RequestTimeout, "the body did not arrive in time")
                }
                JsonPayloadError::ContentType => ApiError::new(
                    ErrorCode::MalformedJson,
                    "the body must be application/json",
                ),
                _ => ApiError::new(
                    ErrorCode::MalformedJson,
                    "the body could not be read as JSON",
                ),
            };
            api.into()
        })
}

/// Path segments that do not parse (an id that is no id) answer in the
/// API's error shape, not actix's plain text.
pub fn path_config() -> web::PathConfig {
    web::PathConfig::default().error_handler(|error, _: &HttpRequest| {
        ApiError::new(ErrorCode::InvalidInput, format!("bad path: {error}")).into()
    })
}

/// Query strings that do not parse answer in the API's error shape.
pub fn query_config() -> web::QueryConfig {
    web::QueryConfig::default().error_handler(|error, _: &HttpRequest| {
        ApiError::new(ErrorCode::InvalidInput, format!("bad query: {error}")).into()
    })
}

/// Every address nothing serves.
pub async fn not_found() -> Result<HttpResponse, ApiError> {
    Err(ApiError::new(ErrorCode::NotFound, "nothing here"))
}

/// An API address asked with a method it does not serve: 405, with the
/// methods it does serve in `Allow` (RFC 9110).
fn method_not_allowed(allow: &'static str) -> impl Fn(HttpRequest) -> HttpResponse + Clone {
    move |request: HttpRequest| {
        let mut response = ApiError::new(
            ErrorCode::MethodNotAllowed,
            format!("{} is not served here", request.method()),
        )
        .error_response();
        response.headers_mut().insert(
            actix_web::http::header::ALLOW,
            HeaderValue::from_static(allow),
        );
        response
    }
}

/// Mounts `GET path` answering with `text`, a JSON document fixed at start
/// (a service's OpenAPI description).
pub fn mount_json_document(config: &mut web::ServiceConfig, path: &str, text: String) {
    config.api_route(path, Method::GET, move || {
        let text = text.clone();
        async move {
            HttpResponse::Ok()
                .content_type("application/json")
                .body(text)
        }
    });
}

/// Mounting an API address: its handler for one method, and for any
/// other a 405 in the API's shape (actix would otherwise fall through to
/// whatever comes next, such as the arena's static files).
pub trait ApiRoutes {
    fn api_route<F, Args>(&mut self, path: &str, method: Method, handler: F) -> &mut Self
    where
        F: actix_web::Handler<Args>,
        Args: actix_web::FromRequest + 'static,
        F::Output: actix_web::Responder + 'static;

    /// An address served for several methods (`allow` names them): one
    /// resource, so that no method's 405 hides another's handler.
    fn api_resource(
        &mut self,
        path: &str,
        routes: Vec<actix_web::Route>,
        allow: &'static str,
    ) -> &mut Self;

    /// A POST whose JSON body may be up to `limit` bytes (not the API's
    /// usual limit): a batch between services.
    fn api_large_post<F, Args>(&mut self, path: &str, handler: F, limit: usize) -> &mut Self
    where
        F: actix_web::Handler<Args>,
        Args: actix_web::FromRequest + 'static,
        F::Output: actix_web::Responder + 'static;
}

impl ApiRoutes for web::ServiceConfig {
    fn api_route<F, Args>(&mut self, path: &str, method: Method, handler: F) -> &mut Self
    where
        F: actix_web::Handler<Args>,
        Args: actix_web::FromRequest + 'static,
        F::Output: actix_web::Responder + 'static,
    {
        let allow = if method == Method::POST {
            "POST"
        } else {
            "GET, HEAD"
        };
        self.api_resource(path, vec![web::method(method).to(handler)], allow)
    }

    fn api_resource(
        &mut self,
        path: &str,
        routes: Vec<actix_web::Route>,
        allow: &'static str,
    ) -> &mut Self {
        let resource = routes
            .into_iter()
            .fold(web::resource(path), |resource, route| resource.route(route));
        self.service(refusing_other_methods(resource, allow))
    }

    fn api_large_post<F, Args>(&mut self, path: &str, handler: F, limit: usize) -> &mut Self
    where
        F: actix_web::Handler<Args>,
        Args: actix_web::FromRequest + 'static,
        F::Output: actix_web::Responder + 'static,
    {
        let resource = web::resource(path)
            .app_data(json_config_limited(limit))
            .route(web::post().to(handler));
        self.service(refusing_other_methods(resource, "POST"))
    }
}

fn refusing_other_methods(
    resource: actix_web::Resource,
    allow: &'static str,
) -> actix_web::Resource {
    let refuse = method_not_allowed(allow);
    resource.default_service(web::to(move |request: HttpRequest| {
        let refuse = refuse.clone();
        async move { refuse(request) }
    }))
}

/// What `/readyz` checks.
#[derive(Clone, Debug)]
pub struct Readiness {
    pub postgres: PgPool,
    pub redis: Redis,
}

/// `GET /healthz` (the process is alive) and `GET /readyz` (Postgres and
/// Redis answer).
pub fn configure_health(config: &mut web::ServiceConfig, readiness: Readiness) {
    config
        .app_data(web::Data::new(readiness))
        .route("/healthz", web::get().to(healthz))
        .route("/readyz", web::get().to(readyz));
}

async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(serde_json::json!({"status": "ok"}))
}

async fn readyz(readiness: web::Data<Readiness>) -> Result<HttpResponse, ApiError> {
    let postgres = sqlx::query_scalar::<_, i32>("SELECT 1")
        .fetch_one(&readiness.postgres)
        .await
        .is_ok();
    let mut connection = readiness.redis.connection();
    let redis = redis::cmd("PING")
        .query_async::<String>(&mut connection)
        .await
        .is_ok();
    if postgres && redis {
        Ok(HttpResponse::Ok()
            .json(serde_json::json!({"status": "ready", "postgres": true, "redis": true})))
    } else {
        let down: Vec<&str> = [("postgres", postgres), ("redis", redis)]
            .into_iter()
            .filter(|(_, up)| !up)
            .map(|(name, _)| name)
            .collect();
        Err(ApiError::new(
            ErrorCode::Unavailable,
            format!("unreachable: {}", down.join(", ")),
        ))
    }
}

/// Origins browsers may open sockets from, besides the server's own
/// host: written comma-separated, a trailing `/` ignored.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AllowedOrigins(pub Vec<String>);

impl std::str::FromStr for AllowedOrigins {
    type Err = std::convert::Infallible;

    fn from_str(list: &str) -> Result<AllowedOrigins, Self::Err> {
        Ok(AllowedOrigins(
            list.split(',')
                .map(|origin| origin.trim().trim_end_matches('/').to_owned())
                .filter(|origin| !origin.is_empty())
                .collect(),
        ))
    }
}

/// Whether a browser on `Origin` may open a socket: no `Origin` (not a
/// browser: the token protects it), the server's own host, or an allowed
/// origin. Browsers always send `Origin` on a WebSocket handshake, so a
/// page elsewhere cannot borrow a player's session.
pub fn origin_allowed(request: &HttpRequest, allowed: &AllowedOrigins) -> bool {
    let Some(origin) = request.headers().get("origin") else {
        return true;
    };
    let Ok(origin) = origin.to_str() else {
        return false;
    };
    let origin = origin.trim_end_matches('/');
    let host = request.connection_info().host().to_owned();
    let own = origin
        .split_once("://")
        .is_some_and(|(_, authority)| authority.eq_ignore_ascii_case(&host));
    own || allowed.0.iter().any(|allowed| allowed == origin)
}

/// The error a late body ends with; `json_config` answers it with
/// `request_timeout`.
pub fn is_body_timeout(error: &actix_web::error::PayloadError) -> bool {
    matches!(error, actix_web::error::PayloadError::Io(io) if io.kind() == std::io::ErrorKind::TimedOut)
}

#[cfg(test)]
mod tests {
    use actix_web::{App, test};
    use serde::Deserialize;

    use super::*;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Login {
        username: String,
    }

    async fn echo(body: web::Json<Login>) -> HttpResponse {
        HttpResponse::Ok().body(body.username.clone())
    }

    async fn limited() -> Result<HttpResponse, ApiError> {
        Err(ApiError::rate_limited(7))
    }

    async fn call(body: &'static str) -> (u16, ErrorBody) {
        let app = test::init_service(
            App::new()
                .app_data(json_config())
                .route("/echo", web::post().to(echo)),
        )
        .await;
        let request = test::TestRequest::post()
            .uri("/echo")
            .insert_header(("content-type", "application/json"))
            .set_payload(body)
            .to_request();
        let response = test::call_service(&app, request).await;
        let status = response.status().as_u16();
        (status, test::read_body_json(response).await)
    }

    #[actix_web::test]
    async fn bad_bodies_get_their_own_codes() {
        let (status, body) = call("{not json").await;
        assert_eq!((status, body.code), (400, ErrorCode::MalformedJson));
        let (status, body) = call(r#"{"username":"a","admin":true}"#).await;
        assert_eq!((status, body.code), (400, ErrorCode::UnknownField));
        let (status, body) = call(r#"{"username":5}"#).await;
        assert_eq!((status, body.code), (400, ErrorCode::MalformedJson));
        let huge: &'static str = Box::leak(
            format!(r#"{{"username":"{}"}}"#, "x".repeat(MAX_JSON_BYTES)).into_boxed_str(),
        );
        let (status, body) = call(huge).await;
        assert_eq!((status, body.code), (413, ErrorCode::PayloadTooLarge));
    }

    #[actix_web::test]
    async fn rate_limits_say_when_to_retry() {
        let app = test::init_service(App::new().route("/limited", web::get().to(limited))).await;
        let response =
            test::call_service(&app, test::TestRequest::get().uri("/limited").to_request()).await;
        assert_eq!(response.status().as_u16(), 429);
        assert_eq!(response.headers().get(RETRY_AFTER).unwrap(), "7");
        let body: ErrorBody = test::read_body_json(response).await;
        assert_eq!(body.code, ErrorCode::RateLimited);
    }
}
