//! The stores against the real Postgres and Redis: a fresh database and a
//! fresh key prefix per test.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use mancala_platform::testing::{TestStores, redis_url};
use mancala_platform::{MIGRATOR, Redis, SecretString, connect_postgres};
use redis::AsyncCommands;

#[tokio::test]
async fn migrations_make_usernames_unique_without_regard_to_case() {
    let stores = TestStores::new().await.unwrap();
    let pool = stores.postgres.clone();
    let alice = stores.player("Alice").await.unwrap();
    let other = stores.player("Bob").await.unwrap();
    let credentials = |id: uuid::Uuid, username: &'static str| {
        sqlx::query(
            "INSERT INTO credentials (player_id, username, password_hash) VALUES ($1, $2, 'x')",
        )
        .bind(id)
        .bind(username)
        .execute(&pool)
    };
    credentials(alice, "Alice").await.unwrap();
    let error = credentials(other, "alice").await.unwrap_err();
    let code = error.as_database_error().and_then(|e| e.code()).unwrap();
    assert_eq!(code, "23505", "a unique violation");
    let error = credentials(other, "no spaces!").await.unwrap_err();
    assert_eq!(
        error.as_database_error().and_then(|e| e.code()).unwrap(),
        "23514",
        "a check violation"
    );
    // Running the migrations again changes nothing.
    MIGRATOR.run(&pool).await.unwrap();
    stores.cleanup().await.unwrap();
}

#[tokio::test]
async fn redis_keys_live_under_their_prefix() {
    let url = redis_url();
    let unique = uuid::Uuid::new_v4().simple().to_string();
    let first = Redis::connect(&url, &format!("test:{unique}:a:"))
        .await
        .unwrap();
    let second = Redis::connect(&url, &format!("test:{unique}:b:"))
        .await
        .unwrap();
    first.ping().await.unwrap();
    let mut connection = first.connection();
    let _: () = connection
        .set_ex(first.key("greeting"), "hello", 60)
        .await
        .unwrap();
    let seen: Option<String> = connection.get(first.key("greeting")).await.unwrap();
    assert_eq!(seen.as_deref(), Some("hello"));
    let elsewhere: Option<String> = second
        .connection()
        .get(second.key("greeting"))
        .await
        .unwrap();
    assert_eq!(elsewhere, None);
    let _: () = connection.del(first.key("greeting")).await.unwrap();
}

#[tokio::test]
async fn an_unreachable_store_is_an_error_not_a_hang() {
    let started = std::time::Instant::now();
    let nowhere = SecretString::from("postgres://postgres@127.0.0.1:1/postgres".to_owned());
    assert!(connect_postgres(&nowhere, 1).await.is_err());
    assert!(
        Redis::connect(&SecretString::from("redis://127.0.0.1:1".to_owned()), "x:")
            .await
            .is_err()
    );
    assert!(started.elapsed().as_secs() < 10);
}

#[actix_web::test]
async fn readiness_follows_the_stores() {
    use actix_web::{App, test};
    use mancala_platform::{Readiness, configure_health};

    let stores = TestStores::new().await.unwrap();
    let pool = stores.postgres.clone();
    let readiness = Readiness {
        postgres: pool.clone(),
        redis: stores.redis.clone(),
    };
    let app =
        test::init_service(App::new().configure(|config| configure_health(config, readiness)))
            .await;
    let status = |uri: &'static str| {
        let request = test::TestRequest::get().uri(uri).to_request();
        test::call_service(&app, request)
    };
    assert_eq!(status("/healthz").await.status().as_u16(), 200);
    assert_eq!(status("/readyz").await.status().as_u16(), 200);
    // With Postgres gone, the service is alive but not ready.
    pool.close().await;
    let response = status("/readyz").await;
    assert_eq!(response.status().as_u16(), 503);
    let body: mancala_proto::ErrorBody = test::read_body_json(response).await;
    assert_eq!(body.code, mancala_proto::ErrorCode::Unavailable);
    assert_eq!(status("/healthz").await.status().as_u16(), 200);
    stores.cleanup().await.unwrap();
}

/// A Postgres that goes away under a connection (killed, failed over,
/// shut down) tells the orphaned backend's client `57P01` before the socket
/// closes: that is the server being unreachable, not a bad query, and the
/// client must get `unavailable` (retryable), never `internal`.
#[tokio::test]
async fn a_backend_terminated_under_a_query_is_unavailable_not_internal() {
    use mancala_platform::ApiError;
    use sqlx::Connection;

    let stores = TestStores::new().await.unwrap();
    let mut victim = stores.postgres.acquire().await.unwrap().detach();
    let pid: i32 = sqlx::query_scalar("SELECT pg_backend_pid()")
        .fetch_one(&mut victim)
        .await
        .unwrap();
    let terminated: bool = sqlx::query_scalar("SELECT pg_terminate_backend($1)")
        .bind(pid)
        .fetch_one(&stores.postgres)
        .await
        .unwrap();
    assert!(terminated);
    let error = sqlx::query("SELECT 1")
        .execute(&mut victim)
        .await
        .unwrap_err();
    assert!(
        mancala_platform::http::is_unreachable(&error),
        "a terminated backend is unreachable: {error:?}"
    );
    // Not a broken socket but the server's own word: what the old mapping
    // called `internal`.
    assert_eq!(
        error.as_database_error().and_then(|e| e.code()).as_deref(),
        Some("57P01"),
        "{error:?}"
    );
    let body = ApiError::from(error).body();
    assert_eq!(body.code, mancala_proto::ErrorCode::Unavailable);
    // A query's own fault stays internal.
    let mut healthy = stores.postgres.acquire().await.unwrap().detach();
    let error = sqlx::query("SELECT 1/0")
        .execute(&mut healthy)
        .await
        .unwrap_err();
    assert!(!mancala_platform::http::is_unreachable(&error));
    assert_eq!(
        ApiError::from(error).body().code,
        mancala_proto::ErrorCode::Internal
    );
    healthy.close().await.unwrap();
    stores.cleanup().await.unwrap();
}

/// The fair-play checks were rewritten to be planned with the statements
/// that read them (`20261212000001_inlined_fair_play_checks.sql`): over a
/// crowd of players made at different times on shared networks, each
/// ordered pair is linked (and each player's guest network is) exactly as
/// the definitions before the rewrite said.
#[tokio::test]
async fn the_inlined_fair_play_checks_answer_as_the_old_definitions_did() {
    let rewrite = mancala_platform::MIGRATOR
        .migrations
        .iter()
        .position(|migration| migration.version == 20261212000001)
        .expect("the rewrite's migration");
    let stores = TestStores::migrated_up_to(rewrite).await.unwrap();
    let pool = stores.postgres.clone();
    // Twelve players: made 1, 20 or 40 days ago on one of two networks,
    // seen (recently or long ago) on their own network or the other one,
    // a third of them registered.
    sqlx::query(
        "INSERT INTO players (id, display_name, created_at, signup_network)
         SELECT gen_random_uuid(), 'p' || i, now() - (ARRAY[1, 20, 40])[i % 3 + 1] * interval '1 day',
                'net' || (i % 2)
         FROM generate_series(1, 12) i",
    )
    .execute(&pool)
    .await
    .unwrap();
    sqlx::query(
        "INSERT INTO player_networks (player_id, network, first_seen, last_seen)
         SELECT id, 'net' || ((substr(display_name, 2)::int / 2) % 2), now(),
                now() - (substr(display_name, 2)::int % 4) * interval '12 days'
         FROM players",
    )
    .execute(&pool)
    .await
    .unwrap();
    sqlx::query(
        "INSERT INTO credentials (player_id, username, password_hash)
         SELECT id, display_name || 'x', 'x' FROM players WHERE substr(display_name, 2)::int % 3 = 0",
    )
    .execute(&pool)
    .await
    .unwrap();
    let answers = || async {
        let linked: Vec<(uuid::Uuid, uuid::Uuid, bool)> = sqlx::query_as(
            "SELECT a.id, b.id, accounts_linked(a.id, b.id, now(), make_interval(days => 30))
             FROM players a, players b WHERE a.id <> b.id ORDER BY 1, 2",
        )
        .fetch_all(&pool)
        .await
        .unwrap();
        let networks: Vec<(uuid::Uuid, Option<String>)> =
            sqlx::query_as("SELECT id, guest_network(id) FROM players ORDER BY 1")
                .fetch_all(&pool)
                .await
                .unwrap();
        (linked, networks)
    };
    let before = answers().await;
    mancala_platform::MIGRATOR.run(&pool).await.unwrap();
    let after = answers().await;
    let linked = before.0.iter().filter(|(_, _, linked)| *linked).count();
    assert!(
        linked > 0 && linked < before.0.len(),
        "the crowd has linked and unlinked pairs: {linked} of {}",
        before.0.len()
    );
    assert!(before.1.iter().any(|(_, network)| network.is_none()));
    assert_eq!(before, after);
    // The row forms the statements join are the same answers.
    let rows: Vec<(uuid::Uuid, uuid::Uuid, bool)> = sqlx::query_as(
        "SELECT a.id, b.id, l.linked FROM players a CROSS JOIN players b
         CROSS JOIN LATERAL accounts_linked_row(a.id, b.id, now(), make_interval(days => 30)) l
         WHERE a.id <> b.id ORDER BY 1, 2",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(rows, after.0);
    stores.cleanup().await.unwrap();
}

#[tokio::test]
async fn rate_limits_count_per_window_and_subject() {
    use mancala_platform::ratelimit::{Decision, Limit, hit, peek, reset};

    let redis = Redis::connect(
        &redis_url(),
        &format!("test:{}:", uuid::Uuid::new_v4().simple()),
    )
    .await
    .unwrap();
    let limit = Limit {
        max: 3,
        window_seconds: 60,
    };
    let now = 1_800_000_010; // 10 s into a window
    for remaining in [2, 1, 0] {
        assert_eq!(
            hit(&redis, "login", "10.0.0.1", limit, now).await.unwrap(),
            Decision::Allowed { remaining }
        );
    }
    // At the limit, a peek already says no, and counts nothing.
    for _ in 0..2 {
        assert_eq!(
            peek(&redis, "login", "10.0.0.1", limit, now + 5)
                .await
                .unwrap(),
            Decision::Limited { retry_after: 45 }
        );
    }
    assert_eq!(
        hit(&redis, "login", "10.0.0.1", limit, now + 5)
            .await
            .unwrap(),
        Decision::Limited { retry_after: 45 }
    );
    // Another subject, or another limit, has its own count.
    assert!(matches!(
        hit(&redis, "login", "10.0.0.2", limit, now).await.unwrap(),
        Decision::Allowed { .. }
    ));
    assert!(matches!(
        hit(&redis, "guest", "10.0.0.1", limit, now).await.unwrap(),
        Decision::Allowed { .. }
    ));
    // The next window starts afresh.
    assert_eq!(
        hit(&redis, "login", "10.0.0.1", limit, now + 50)
            .await
            .unwrap(),
        Decision::Allowed { remaining: 2 }
    );
    // A reset clears the current window.
    reset(&redis, "login", "10.0.0.1", limit, now + 50)
        .await
        .unwrap();
    assert_eq!(
        hit(&redis, "login", "10.0.0.1", limit, now + 51)
            .await
            .unwrap(),
        Decision::Allowed { remaining: 2 }
    );
}

#[tokio::test]
async fn a_revoked_session_reaches_another_process_and_is_forgotten_after_expiry() {
    use mancala_platform::revocation::Revocations;
    let stores = TestStores::new().await.unwrap();
    let (here, elsewhere) = (Revocations::default(), Revocations::default());
    here.revoke(&stores.redis, "family-1", 1_000, 100)
        .await
        .unwrap();
    assert!(here.is_revoked("family-1"));
    assert!(!elsewhere.is_revoked("family-1"));
    elsewhere.catch_up(&stores.redis, 900).await.unwrap();
    assert!(elsewhere.is_revoked("family-1"));
    assert!(!elsewhere.is_revoked("family-2"));
    // A later sign-out arrives by itself: only what is new is read.
    here.revoke(&stores.redis, "family-2", 1_100, 100)
        .await
        .unwrap();
    elsewhere.catch_up(&stores.redis, 900).await.unwrap();
    assert!(elsewhere.is_revoked("family-2"));
    assert_eq!(elsewhere.len(), 2);
    // Past the last token's expiry nobody needs to remember it.
    elsewhere.catch_up(&stores.redis, 1_000).await.unwrap();
    assert!(!elsewhere.is_revoked("family-1"));
    assert!(elsewhere.is_revoked("family-2"));
    // A process started later reads what is still listed, nothing more.
    let late = Revocations::default();
    late.catch_up(&stores.redis, 1_050).await.unwrap();
    assert_eq!(
        (late.is_revoked("family-1"), late.is_revoked("family-2")),
        (false, true)
    );
    stores.cleanup().await.unwrap();
}

#[tokio::test]
async fn the_revoked_list_is_trimmed_to_one_token_lifetime() {
    use mancala_platform::revocation::Revocations;
    let stores = TestStores::new().await.unwrap();
    let here = Revocations::default();
    // Listed for no time at all, each append trims what came before it
    // (approximately: Redis drops whole nodes of the stream, about a
    // hundred entries each, so the stream never grows with the appends).
    for n in 0..500 {
        here.revoke(&stores.redis, &format!("old-{n}"), 100, 100)
            .await
            .unwrap();
    }
    let mut connection = stores.redis.connection();
    let listed: u64 = redis::cmd("XLEN")
        .arg(stores.redis.key("sessions:revoked"))
        .query_async(&mut connection)
        .await
        .unwrap();
    assert!(
        (1..=200).contains(&listed),
        "{listed} of 500 entries listed"
    );
    stores.cleanup().await.unwrap();
}
