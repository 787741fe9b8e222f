//! Every accounts endpoint on its happy path, and the input failures.

use mancala_proto::ErrorCode;
use serde_json::json;

use crate::helpers::TestApp;

#[actix_web::test]
async fn a_guest_gets_a_friendly_unique_name_and_a_session() {
    let app = TestApp::spawn().await;
    let first = app.guest().await;
    let second = app.guest().await;
    assert!(first.player.guest);
    assert_ne!(first.player.id, second.player.id);
    assert_ne!(first.player.display_name, second.player.display_name);
    assert_eq!(first.player.display_name.split(' ').count(), 3);
    assert_eq!(first.token_type, "Bearer");
    assert_eq!(first.expires_in, crate::helpers::ACCESS_TTL);

    let me = app.get("/v1/me", Some(&first.access_token)).await;
    assert_eq!(me.status.as_u16(), 200);
    assert_eq!(
        me.body,
        json!({"id": first.player.id, "display_name": first.player.display_name, "guest": true})
    );
    app.cleanup().await;
}

#[actix_web::test]
async fn a_guest_who_registers_keeps_their_id() {
    let app = TestApp::spawn().await;
    let guest = app.guest().await;
    let reply = app
        .register("Otter_Fan", "correct horse", Some(&guest.access_token))
        .await;
    assert_eq!(reply.status.as_u16(), 201, "{}", reply.body);
    let registered = reply.session();
    assert_eq!(registered.player.id, guest.player.id);
    assert!(!registered.player.guest);
    assert_eq!(registered.player.display_name, "Otter_Fan");

    // The guest's old session ended with the upgrade.
    app.refresh(&guest.refresh_token)
        .await
        .expect_error(401, ErrorCode::TokenInvalid);
    // Logging in, in any case, finds the same player.
    let login = app.login("otter_fan", "correct horse").await;
    assert_eq!(login.status.as_u16(), 200, "{}", login.body);
    assert_eq!(login.session().player.id, guest.player.id);
    let me = app.get("/v1/me", Some(&login.session().access_token)).await;
    assert_eq!(me.body["guest"], json!(false));
    // Registering twice is refused.
    app.register(
        "Another",
        "correct horse",
        Some(&login.session().access_token),
    )
    .await
    .expect_error(409, ErrorCode::AlreadyRegistered);
    app.cleanup().await;
}

#[actix_web::test]
async fn registering_without_a_token_creates_an_account() {
    let app = TestApp::spawn().await;
    let reply = app.register("alice", "wonderland", None).await;
    assert_eq!(reply.status.as_u16(), 201, "{}", reply.body);
    let alice = reply.session();
    assert!(!alice.player.guest);
    assert_eq!(
        app.login("ALICE", "wonderland").await.session().player.id,
        alice.player.id
    );
    // Logging out ends that session only.
    let second = app.login("alice", "wonderland").await.session();
    let reply = app
        .post(
            "/v1/auth/logout",
            json!({"refresh_token": alice.refresh_token}),
            None,
        )
        .await;
    assert_eq!(reply.status.as_u16(), 204);
    let again = app
        .post(
            "/v1/auth/logout",
            json!({"refresh_token": alice.refresh_token}),
            None,
        )
        .await;
    assert_eq!(again.status.as_u16(), 204, "logging out twice is fine");
    app.refresh(&alice.refresh_token)
        .await
        .expect_error(401, ErrorCode::TokenInvalid);
    assert_eq!(
        app.refresh(&second.refresh_token).await.status.as_u16(),
        200
    );
    app.cleanup().await;
}

#[actix_web::test]
async fn registration_input_is_checked() {
    let app = TestApp::spawn().await;
    assert_eq!(
        app.register("Alice", "wonderland", None)
            .await
            .status
            .as_u16(),
        201
    );
    app.register("aLiCe", "wonderland", None)
        .await
        .expect_error(409, ErrorCode::UsernameTaken);
    let guest = app.guest().await;
    app.register("ALICE", "wonderland", Some(&guest.access_token))
        .await
        .expect_error(409, ErrorCode::UsernameTaken);
    app.register("bob", "short", None)
        .await
        .expect_error(400, ErrorCode::InvalidInput);
    app.register("bob", &"x".repeat(129), None)
        .await
        .expect_error(400, ErrorCode::InvalidInput);
    app.register("b", "long enough", None)
        .await
        .expect_error(400, ErrorCode::InvalidInput);
    app.register("bob smith", "long enough", None)
        .await
        .expect_error(400, ErrorCode::InvalidInput);
    // The guest is still a guest after the failures.
    let me = app.get("/v1/me", Some(&guest.access_token)).await;
    assert_eq!(me.body["guest"], json!(true));
    app.cleanup().await;
}

#[actix_web::test]
async fn bad_bodies_are_refused_with_their_codes() {
    let app = TestApp::spawn().await;
    app.post_raw("/v1/auth/login", "{\"username\": \"alice\"", None)
        .await
        .expect_error(400, ErrorCode::MalformedJson);
    app.post_raw("/v1/auth/login", "{\"username\": \"alice\"}", None)
        .await
        .expect_error(400, ErrorCode::MalformedJson);
    app.post(
        "/v1/auth/register",
        json!({"username": "alice", "password": "wonderland", "admin": true}),
        None,
    )
    .await
    .expect_error(400, ErrorCode::UnknownField);
    let huge = json!({"username": "alice", "password": "x".repeat(20_000)});
    app.post("/v1/auth/login", huge, None)
        .await
        .expect_error(413, ErrorCode::PayloadTooLarge);
    // Nothing was created by any of them.
    app.login("alice", "wonderland")
        .await
        .expect_error(401, ErrorCode::InvalidCredentials);
    app.cleanup().await;
}

#[actix_web::test]
async fn wrong_passwords_and_unknown_users_look_the_same() {
    let app = TestApp::spawn().await;
    app.register("carol", "right password", None).await;
    let wrong = app.login("carol", "wrong password").await;
    wrong.expect_error(401, ErrorCode::InvalidCredentials);
    let unknown = app.login("nobody", "wrong password").await;
    unknown.expect_error(401, ErrorCode::InvalidCredentials);
    assert_eq!(wrong.body, unknown.body);
    app.cleanup().await;
}
