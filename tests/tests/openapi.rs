//! The REST API's description, all services together, committed as
//! `proto/schema/openapi.json`. Regenerate with
//! `UPDATE_SCHEMA=1 cargo test -p mancala-tests --test openapi`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use utoipa::OpenApi;

/// Every service's paths in one document.
fn merged() -> String {
    let mut document = mancala_matchmaking::openapi::ApiDoc::openapi();
    document.merge(mancala_game_room::openapi::ApiDoc::openapi());
    document.merge(mancala_rating::openapi::ApiDoc::openapi());
    let mut text = document.to_pretty_json().unwrap();
    text.push('\n');
    text
}

#[test]
fn the_committed_description_is_current() {
    let generated = merged();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../proto/schema/openapi.json");
    if std::env::var_os("UPDATE_SCHEMA").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "proto/schema/openapi.json is stale: rerun with UPDATE_SCHEMA=1"
    );
    let document: serde_json::Value = serde_json::from_str(&committed).unwrap();
    for path in [
        "/v1/auth/guest",
        "/v1/me",
        "/internal/v1/games",
        "/v1/games/{id}",
        "/v1/games/live",
    ] {
        assert!(document["paths"].get(path).is_some(), "{path}");
    }
}
