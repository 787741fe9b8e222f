//! What every service has: health, readiness, metrics, request ids, and
//! the OpenAPI description.

use std::path::Path;

use crate::helpers::TestApp;

#[actix_web::test]
async fn health_readiness_metrics_and_request_ids() {
    let app = TestApp::spawn().await;
    assert_eq!(app.get("/healthz", None).await.status.as_u16(), 200);
    let ready = app.get("/readyz", None).await;
    assert_eq!(ready.status.as_u16(), 200, "{}", ready.body);
    app.guest().await;
    let metrics = app.get("/metrics", None).await;
    assert_eq!(metrics.status.as_u16(), 200);
    let text = metrics.body.as_str().unwrap();
    assert!(
        text.contains(r#"route="/v1/auth/guest",status="201""#),
        "{text}"
    );
    assert!(ready.headers.contains_key("x-request-id"));
    let missing = app.get("/v1/nothing-here", None).await;
    assert_eq!(missing.status.as_u16(), 404);
    app.cleanup().await;
}

/// The committed description, regenerated with
/// `UPDATE_SCHEMA=1 cargo test -p mancala-matchmaking --test api openapi`.
#[actix_web::test]
async fn the_openapi_description_is_served_and_committed() {
    let generated = mancala_matchmaking::openapi::document();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../proto/schema/openapi.json");
    if std::env::var_os("UPDATE_SCHEMA").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "proto/schema/openapi.json is stale: rerun with UPDATE_SCHEMA=1"
    );
    let app = TestApp::spawn().await;
    let served = app.get("/v1/openapi.json", None).await;
    assert_eq!(served.status.as_u16(), 200);
    let committed: serde_json::Value = serde_json::from_str(&committed).unwrap();
    assert_eq!(served.body, committed);
    for path in [
        "/v1/auth/guest",
        "/v1/auth/register",
        "/v1/auth/login",
        "/v1/auth/refresh",
        "/v1/auth/logout",
        "/v1/me",
    ] {
        assert!(committed["paths"].get(path).is_some(), "{path}");
    }
    app.cleanup().await;
}
