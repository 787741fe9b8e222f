//! Flooding past the limits gets 429 with `Retry-After`.

use mancala_matchmaking::AccountSettings;
use mancala_platform::ratelimit::Limit;
use mancala_proto::ErrorCode;

use crate::helpers::{TestApp, roomy_limits};

fn limit(max: u64) -> Limit {
    Limit {
        max,
        window_seconds: 600,
    }
}

fn retry_after(reply: &crate::helpers::Reply) -> u64 {
    reply
        .headers
        .get("retry-after")
        .unwrap()
        .to_str()
        .unwrap()
        .parse()
        .unwrap()
}

#[actix_web::test]
async fn guest_creation_is_limited_per_address() {
    let app = TestApp::spawn_with(AccountSettings {
        signups_per_ip: limit(3),
        ..roomy_limits()
    })
    .await;
    for _ in 0..3 {
        app.guest().await;
    }
    let reply = app
        .post("/v1/auth/guest", serde_json::json!({}), None)
        .await;
    reply.expect_error(429, ErrorCode::RateLimited);
    assert!((1..=600).contains(&retry_after(&reply)));
    // Registering a new player (no guest behind it) counts against the
    // same allowance.
    app.register("erin", "long enough", None)
        .await
        .expect_error(429, ErrorCode::RateLimited);
    // The next window lets guests in again.
    app.clock.advance(600_000);
    app.guest().await;
    app.cleanup().await;
}

#[actix_web::test]
async fn registrations_are_limited_per_address_apart_from_new_guests() {
    let app = TestApp::spawn_with(AccountSettings {
        registrations_per_ip: limit(2),
        ..roomy_limits()
    })
    .await;
    for name in ["ann", "ben"] {
        let guest = app.guest().await;
        assert_eq!(
            app.register(name, "long enough", Some(&guest.access_token))
                .await
                .status
                .as_u16(),
            201
        );
    }
    // A third guest still comes in, but may not register in this window.
    let third = app.guest().await;
    let reply = app
        .register("cat", "long enough", Some(&third.access_token))
        .await;
    reply.expect_error(429, ErrorCode::RateLimited);
    assert!((1..=600).contains(&retry_after(&reply)));
    app.clock.advance(600_000);
    assert_eq!(
        app.register("cat", "long enough", Some(&third.access_token))
            .await
            .status
            .as_u16(),
        201
    );
    app.cleanup().await;
}

#[actix_web::test]
async fn failed_logins_are_limited_per_account() {
    let app = TestApp::spawn_with(AccountSettings {
        login_failures_per_account: limit(3),
        ..roomy_limits()
    })
    .await;
    app.register("frank", "right password", None).await;
    for _ in 0..3 {
        app.login("frank", "wrong password")
            .await
            .expect_error(401, ErrorCode::InvalidCredentials);
    }
    // Past the limit even the right password is refused, in any case.
    let reply = app.login("FRANK", "right password").await;
    reply.expect_error(429, ErrorCode::RateLimited);
    assert!(retry_after(&reply) >= 1);
    // Other accounts are not affected.
    app.register("grace", "right password", None).await;
    assert_eq!(
        app.login("grace", "right password").await.status.as_u16(),
        200
    );
    app.clock.advance(600_000);
    assert_eq!(
        app.login("frank", "right password").await.status.as_u16(),
        200
    );
    app.cleanup().await;
}

#[actix_web::test]
async fn a_strangers_guesses_do_not_lock_the_owner_out() {
    let app = TestApp::spawn_with(AccountSettings {
        login_failures_per_account: limit(3),
        login_failures_per_account_all: limit(8),
        trust_forwarded_for: true,
        ..roomy_limits()
    })
    .await;
    app.register("victor", "right password", None).await;
    for _ in 0..3 {
        app.login_from("203.0.113.9", "victor", "wrong password")
            .await
            .expect_error(401, ErrorCode::InvalidCredentials);
    }
    // The guesser's address is stopped, even with the right password...
    app.login_from("203.0.113.9", "victor", "right password")
        .await
        .expect_error(429, ErrorCode::RateLimited);
    // ...the owner, elsewhere, is not.
    assert_eq!(
        app.login_from("198.51.100.7", "victor", "right password")
            .await
            .status
            .as_u16(),
        200
    );
    // Guesses spread over many addresses meet the account's backstop.
    for address in 1..=5 {
        app.login_from(&format!("192.0.2.{address}"), "victor", "wrong password")
            .await
            .expect_error(401, ErrorCode::InvalidCredentials);
    }
    app.login_from("198.51.100.7", "victor", "right password")
        .await
        .expect_error(429, ErrorCode::RateLimited);
    app.cleanup().await;
}

#[actix_web::test]
async fn failed_logins_are_limited_per_address() {
    let app = TestApp::spawn_with(AccountSettings {
        login_failures_per_ip: limit(4),
        ..roomy_limits()
    })
    .await;
    app.register("heidi", "right password", None).await;
    // Spraying one password over many names.
    for name in ["ivan", "judy", "mallory", "oscar"] {
        app.login(name, "password1")
            .await
            .expect_error(401, ErrorCode::InvalidCredentials);
    }
    app.login("heidi", "right password")
        .await
        .expect_error(429, ErrorCode::RateLimited);
    app.cleanup().await;
}

#[actix_web::test]
async fn a_successful_login_clears_the_account_failures() {
    let app = TestApp::spawn_with(AccountSettings {
        login_failures_per_account: limit(3),
        ..roomy_limits()
    })
    .await;
    app.register("peggy", "right password", None).await;
    for _ in 0..2 {
        app.login("peggy", "wrong password").await;
    }
    assert_eq!(
        app.login("peggy", "right password").await.status.as_u16(),
        200
    );
    for _ in 0..2 {
        app.login("peggy", "wrong password")
            .await
            .expect_error(401, ErrorCode::InvalidCredentials);
    }
    assert_eq!(
        app.login("peggy", "right password").await.status.as_u16(),
        200
    );
    app.cleanup().await;
}
