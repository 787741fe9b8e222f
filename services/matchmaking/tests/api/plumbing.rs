//! What every service has: health, readiness, metrics, request ids, and
//! the OpenAPI description.

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

/// The service serves its own description (the committed, merged one is
/// checked in the tests crate).
#[actix_web::test]
async fn the_openapi_description_is_served() {
    let app = TestApp::spawn().await;
    let served = app.get("/v1/openapi.json", None).await;
    assert_eq!(served.status.as_u16(), 200);
    let expected: serde_json::Value =
        serde_json::from_str(&mancala_matchmaking::openapi::document()).unwrap();
    assert_eq!(served.body, expected);
    for path in [
        "/v1/auth/guest",
        "/v1/auth/register",
        "/v1/auth/login",
        "/v1/auth/refresh",
        "/v1/auth/logout",
        "/v1/me",
    ] {
        assert!(expected["paths"].get(path).is_some(), "{path}");
    }
    app.cleanup().await;
}
