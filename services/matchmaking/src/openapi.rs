//! The REST API's OpenAPI description, generated from the handlers and
//! the `proto` types, committed as `proto/schema/openapi.json` (a test
//! fails when the file is stale) and served at `/v1/openapi.json`.

use actix_web::web;
use mancala_platform::http::mount_json_document;
use mancala_proto::ErrorCode;
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::{Modify, OpenApi};

use crate::accounts::routes;
use crate::{fair_play, games, invites, moderation, tournament};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Mancala Arena",
        description = "Ranked and casual mancala (Kalah, Oware, Mangala). Every error is \
                       `{\"code\", \"message\"}`; the codes are listed in the `ErrorCode` schema."
    ),
    paths(
        routes::guest,
        routes::register,
        routes::login,
        routes::refresh,
        routes::logout,
        routes::me,
        games::ai_game,
        games::hotseat_game,
        games::lobby_stats,
        games::queues,
        games::my_games,
        fair_play::my_record,
        invites::create,
        invites::show,
        invites::accept,
        invites::mine,
        invites::cancel,
        moderation::routes::report,
        moderation::routes::warning_seen,
        moderation::routes::close_mine,
        moderation::routes::my_data,
        moderation::routes::report_queue,
        moderation::routes::search,
        moderation::routes::account,
        moderation::routes::act,
        moderation::routes::lift,
        moderation::routes::note,
        moderation::routes::close_report,
        moderation::routes::recompute,
        moderation::routes::log,
        tournament::routes::create,
        tournament::routes::list,
        tournament::routes::show,
        tournament::routes::join,
        tournament::routes::pause,
        tournament::routes::withdraw,
        tournament::routes::results,
    ),
    components(schemas(ErrorCode)),
    modifiers(&BearerAuth),
    tags(
        (name = "accounts", description = "Guests, registration, sign-in and sessions"),
        (name = "lobby", description = "Ranked queues are joined over the lobby socket, \
            GET /v1/lobby (see proto/schema/lobby-*.json); the figures are here"),
        (name = "invites", description = "Friend invites by link"),
        (name = "moderation", description = "Reports (any player) and the moderators' \
            console (`/v1/mod/*`: a moderator's or an admin's token; anyone else gets 403)"),
        (name = "tournaments", description = "Arena tournaments: scheduled by the operator, \
            or private (made by a registered player, joined with a code)"),
    )
)]
pub struct ApiDoc;

/// Declares the `bearer` scheme the paths refer to.
struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        let mut scheme = Http::new(HttpAuthScheme::Bearer);
        scheme.bearer_format = Some("JWT".into());
        components.add_security_scheme("bearer", SecurityScheme::Http(scheme));
    }
}

/// The description as pretty JSON, newline-terminated, as committed.
pub fn document() -> String {
    let mut text = ApiDoc::openapi()
        .to_pretty_json()
        .unwrap_or_else(|_| "{}".to_owned());
    text.push('\n');
    text
}

/// Mounts `GET /v1/openapi.json`.
pub fn configure(config: &mut web::ServiceConfig) {
    mount_json_document(config, "/v1/openapi.json", document());
}
