//! Access tokens that must be refused, and refresh-token rotation.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use mancala_platform::jwt::{TokenSigner, random_seed};
use mancala_proto::ErrorCode;

use crate::helpers::{ACCESS_TTL, AUDIENCE, ISSUER, LEEWAY, TestApp};

#[actix_web::test]
async fn forged_and_stale_access_tokens_are_refused() {
    let app = TestApp::spawn().await;
    let session = app.guest().await;
    let token = session.access_token.clone();
    let me = |token: String| {
        let app = &app;
        async move { app.get("/v1/me", Some(&token)).await }
    };
    assert_eq!(me(token.clone()).await.status.as_u16(), 200);

    // A tampered signature.
    let (head, signature) = token.rsplit_once('.').unwrap();
    let mut bytes = URL_SAFE_NO_PAD.decode(signature).unwrap();
    bytes[10] ^= 0x40;
    me(format!("{head}.{}", URL_SAFE_NO_PAD.encode(bytes)))
        .await
        .expect_error(401, ErrorCode::TokenInvalid);

    // A tampered payload: someone else's id under the original signature.
    let parts: Vec<&str> = token.split('.').collect();
    let mut claims: serde_json::Value =
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[1]).unwrap()).unwrap();
    claims["sub"] = serde_json::json!(uuid::Uuid::new_v4());
    let payload = URL_SAFE_NO_PAD.encode(claims.to_string());
    me(format!("{}.{payload}.{}", parts[0], parts[2]))
        .await
        .expect_error(401, ErrorCode::TokenInvalid);

    // `alg: none`, unsigned.
    let none = URL_SAFE_NO_PAD.encode(br#"{"alg":"none","typ":"JWT"}"#);
    me(format!("{none}.{}.", parts[1]))
        .await
        .expect_error(401, ErrorCode::TokenInvalid);

    // Signed with another key.
    let stranger = TokenSigner::from_seed(&random_seed(), ISSUER, AUDIENCE, ACCESS_TTL).unwrap();
    let now = app.clock.now_secs();
    me(stranger.issue(&session.player.id.to_string(), now).unwrap())
        .await
        .expect_error(401, ErrorCode::TokenInvalid);

    // The right key, the wrong audience or issuer.
    for signer in [
        app.signer(ISSUER, "elsewhere"),
        app.signer("impostor", AUDIENCE),
    ] {
        me(signer.issue(&session.player.id.to_string(), now).unwrap())
            .await
            .expect_error(401, ErrorCode::TokenInvalid);
    }

    // No token at all, and a header that is not a bearer token.
    app.get("/v1/me", None)
        .await
        .expect_error(401, ErrorCode::Unauthenticated);

    // Expired: good within the leeway, refused after it.
    app.clock.advance((ACCESS_TTL + LEEWAY - 1) * 1000);
    assert_eq!(me(token.clone()).await.status.as_u16(), 200);
    app.clock.advance(1000);
    me(token.clone())
        .await
        .expect_error(401, ErrorCode::TokenExpired);
    // A bad token on register is an error, not an anonymous sign-up.
    app.register("dave", "long enough", Some(&token))
        .await
        .expect_error(401, ErrorCode::TokenExpired);
    app.cleanup().await;
}

#[actix_web::test]
async fn refresh_tokens_rotate_and_reuse_revokes_the_family() {
    let app = TestApp::spawn().await;
    let first = app.guest().await;
    let reply = app.refresh(&first.refresh_token).await;
    assert_eq!(reply.status.as_u16(), 200, "{}", reply.body);
    let second = reply.session();
    assert_eq!(second.player, first.player);
    assert_ne!(second.refresh_token, first.refresh_token);
    assert_eq!(
        app.get("/v1/me", Some(&second.access_token))
            .await
            .status
            .as_u16(),
        200
    );
    let third = app.refresh(&second.refresh_token).await.session();

    // Someone replays the first token: refused, and the family is revoked,
    // so the newest token (perhaps the thief's) dies too.
    app.refresh(&first.refresh_token)
        .await
        .expect_error(401, ErrorCode::TokenInvalid);
    app.refresh(&third.refresh_token)
        .await
        .expect_error(401, ErrorCode::TokenInvalid);
    // Another sign-in is a family of its own, untouched.
    let other = app.guest().await;
    assert_eq!(app.refresh(&other.refresh_token).await.status.as_u16(), 200);
    // Garbage is not a token.
    app.refresh("not-a-token")
        .await
        .expect_error(401, ErrorCode::TokenInvalid);
    app.refresh(&URL_SAFE_NO_PAD.encode([7u8; 32]))
        .await
        .expect_error(401, ErrorCode::TokenInvalid);
    app.cleanup().await;
}

#[actix_web::test]
async fn refresh_families_expire_unless_used() {
    let app = TestApp::spawn().await;
    let idle = app.guest().await;
    let active = app.guest().await;
    let day = 86_400_000;
    // The active player refreshes every 20 days and stays signed in.
    app.clock.advance(20 * day);
    let active = app.refresh(&active.refresh_token).await.session();
    app.clock.advance(20 * day);
    assert_eq!(
        app.refresh(&active.refresh_token).await.status.as_u16(),
        200
    );
    // The idle one's 30 days have passed.
    app.refresh(&idle.refresh_token)
        .await
        .expect_error(401, ErrorCode::TokenExpired);
    app.cleanup().await;
}
