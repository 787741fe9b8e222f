//! The game-room REST API's OpenAPI description (the sockets are described
//! by the JSON Schemas in `proto/schema/`).

use actix_web::web;
use mancala_platform::http::mount_json_document;
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::{Modify, OpenApi};

use crate::{lists, routes};

#[derive(OpenApi)]
#[openapi(
    paths(
        routes::create_game,
        routes::create_games,
        routes::game_record,
        routes::game_analysis,
        routes::player_games,
        lists::live_games,
        lists::featured_games,
    ),
    modifiers(&ServiceAuth),
    tags((name = "games", description = "Game records, lists, and creation by other services. \
        Play and watch over WebSocket: /v1/games/{id}/play and /v1/games/{id}/watch."))
)]
pub struct ApiDoc;

struct ServiceAuth;

impl Modify for ServiceAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "service",
            SecurityScheme::Http(Http::new(HttpAuthScheme::Bearer)),
        );
    }
}

/// Mounts `GET /v1/openapi.json` for this service alone.
pub fn configure(config: &mut web::ServiceConfig) {
    mount_json_document(
        config,
        "/v1/openapi.json",
        ApiDoc::openapi().to_pretty_json().unwrap_or_default(),
    );
}
