//! Hostile input against the real `arena` process: tokens that are old,
//! forged for another audience or replayed, sockets from foreign pages,
//! moves for the other seat or from a spectator, oversize, binary and
//! flooding frames on the lobby socket, SQL-looking names, huge and slow
//! handshakes. Each gets a clear refusal, changes nothing, and the server
//! keeps serving everyone else.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::time::{Duration, Instant};

use awc::ws::Message;
use mancala_platform::jwt::TokenSigner;
use mancala_platform::testing::{TestStores, database_url, redis_url};
use mancala_platform::{ExposeSecret, SecretString};
use mancala_proto::error::{CLOSE_POLICY, CLOSE_TOO_BIG};
use mancala_tests::harness::{Service, Ws, call, free_port, request, start};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(5);

struct Arena {
    service: Service,
    key: SecretString,
}

async fn arena(stores: &TestStores) -> Arena {
    let key = mancala_platform::jwt::random_seed();
    let env = vec![
        (
            "DATABASE_URL",
            database_url(&stores.database).expose_secret().to_owned(),
        ),
        ("REDIS_URL", redis_url().expose_secret().to_owned()),
        ("APP_REDIS_PREFIX", stores.prefix.clone()),
        ("APP_JWT_PRIVATE_KEY", key.expose_secret().to_owned()),
        ("APP_LOG_FORMAT", "json".to_owned()),
        ("RUST_LOG", "error".to_owned()),
    ];
    Arena {
        service: start("arena", free_port(), &env).await,
        key,
    }
}

/// A token signed with the server's own key, so only its claims are wrong.
fn token(key: &SecretString, audience: &str, subject: &str, issued_at: u64) -> String {
    TokenSigner::from_seed(key, "mancala-arena", audience, 900)
        .unwrap()
        .issue(subject, issued_at)
        .unwrap()
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// The first message after `auth`: the error code a bad token earns.
async fn auth_error(url: String, token: &str) -> (String, Option<u16>) {
    let mut ws = Ws::open(url).await.unwrap();
    ws.send(json!({"t": "auth", "d": {"token": token}})).await;
    let message = ws.next(WAIT).await.expect("an answer");
    assert_eq!(message["t"], "error", "{message}");
    let code = message["d"]["code"].as_str().unwrap().to_owned();
    (code, ws.close_code(WAIT).await)
}

/// A WebSocket handshake from a page on `origin`: the status line.
fn handshake(base: &str, path: &str, origin: &str) -> String {
    let address = base.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    stream.set_read_timeout(Some(WAIT)).unwrap();
    let head = format!(
        "GET {path} HTTP/1.1\r\nHost: {address}\r\nOrigin: {origin}\r\n\
         Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).unwrap();
    let mut answer = [0u8; 64];
    let read = stream.read(&mut answer).unwrap();
    String::from_utf8_lossy(&answer[..read]).into_owned()
}

async fn guest(base: &str) -> (String, String) {
    let guest = mancala_tests::harness::guest(base).await;
    (guest.id, guest.token)
}

#[actix_rt::test]
async fn hostile_input_is_refused_and_changes_nothing() {
    let stores = TestStores::new().await.unwrap();
    let arena = arena(&stores).await;
    let base = arena.service.base.clone();
    let (player, player_token) = guest(&base).await;

    // Tokens: signed with the right key but old, or for another service.
    let old = token(&arena.key, "mancala-arena", &player, unix_now() - 7200);
    let elsewhere = token(&arena.key, "another-service", &player, unix_now());
    for (bad, code) in [(&old, "token_expired"), (&elsewhere, "token_invalid")] {
        let (status, body) = call("GET", format!("{base}/v1/me"), None, Some(bad)).await;
        assert_eq!((status, body["code"].as_str()), (401, Some(code)));
        let (error, close) = auth_error(format!("{base}/v1/lobby"), bad).await;
        assert_eq!((error.as_str(), close), (code, Some(CLOSE_POLICY)));
    }

    // A game between two guests; the spectator and the player out of turn
    // try to move, and nothing is stored.
    let game = request(
        "POST",
        format!("{base}/v1/hotseat-games"),
        Some(json!({"variant": {"variant": "kalah"}})),
        Some(&player_token),
    )
    .await;
    let game_id = game["game_id"].as_str().unwrap().to_owned();
    let (error, close) = auth_error(format!("{base}/v1/games/{game_id}/play"), &old).await;
    assert_eq!(
        (error.as_str(), close),
        ("token_expired", Some(CLOSE_POLICY))
    );
    let (_, stranger_token) = guest(&base).await;
    let (error, _) = auth_error(format!("{base}/v1/games/{game_id}/play"), &stranger_token).await;
    assert_eq!(error, "forbidden", "a player without a seat cannot play");
    let mut watcher = Ws::open(format!("{base}/v1/games/{game_id}/watch"))
        .await
        .unwrap();
    watcher.until("state", WAIT).await;
    watcher
        .send(json!({"t": "move", "d": {"pit": 3, "ply": 1}}))
        .await;
    let refused = watcher.until("error", WAIT).await;
    assert_eq!(refused["code"], "forbidden");
    let record = request("GET", format!("{base}/v1/games/{game_id}"), None, None).await;
    assert_eq!(record["moves"], json!([]));

    // A ranked-style game between two people: the second seat moves first.
    let (friend, friend_token) = guest(&base).await;
    let invite = request(
        "POST",
        format!("{base}/v1/invites"),
        Some(json!({"variant": {"variant": "kalah"}, "rated": false})),
        Some(&player_token),
    )
    .await;
    let code = invite["code"].as_str().unwrap();
    let accepted = request(
        "POST",
        format!("{base}/v1/invites/{code}/accept"),
        Some(json!({})),
        Some(&friend_token),
    )
    .await;
    let duel = accepted["game_id"].as_str().unwrap().to_owned();
    let mut second = Ws::open(format!("{base}/v1/games/{duel}/play"))
        .await
        .unwrap();
    second
        .send(json!({"t": "auth", "d": {"token": friend_token}}))
        .await;
    let state = second.until("state", WAIT).await;
    assert_eq!(state["you"], 1);
    assert_eq!(state["turn"], 0);
    second
        .send(json!({"t": "move", "d": {"pit": 3, "ply": 1}}))
        .await;
    assert_eq!(second.until("error", WAIT).await["code"], "not_your_turn");
    let record = request("GET", format!("{base}/v1/games/{duel}"), None, None).await;
    assert_eq!(
        record["moves"],
        json!([]),
        "{friend} moved for the other seat"
    );

    // Sockets from a foreign page are refused at the handshake.
    for path in [
        "/v1/lobby".to_owned(),
        format!("/v1/games/{duel}/play"),
        format!("/v1/games/{duel}/watch"),
    ] {
        let status = handshake(&base, &path, "https://evil.example");
        assert!(status.starts_with("HTTP/1.1 403"), "{path}: {status}");
        let own = base.clone();
        let status = handshake(&base, &path, &own);
        assert!(status.starts_with("HTTP/1.1 101"), "{path}: {status}");
    }

    // The lobby socket: a binary frame, an oversize frame and a flood.
    let lobby = |token: String| {
        let base = base.clone();
        async move {
            let mut ws = Ws::open(format!("{base}/v1/lobby")).await.unwrap();
            ws.send(json!({"t": "auth", "d": {"token": token}})).await;
            ws
        }
    };
    let mut ws = lobby(player_token.clone()).await;
    ws.send_raw(Message::Binary(vec![0u8; 16].into())).await;
    assert_eq!(ws.until("error", WAIT).await["code"], "malformed_json");
    ws.send_raw(Message::Text("x".repeat(64 * 1024).into()))
        .await;
    assert_eq!(ws.close_code(WAIT).await, Some(CLOSE_TOO_BIG));
    let mut ws = lobby(player_token.clone()).await;
    for _ in 0..100 {
        ws.send(json!({"t": "ping"})).await;
    }
    assert_eq!(ws.close_code(WAIT).await, Some(CLOSE_POLICY));

    // SQL-looking names and ids are data, never statements.
    let sql = "x'; DROP TABLE players; --";
    let (status, body) = call(
        "POST",
        format!("{base}/v1/auth/register"),
        Some(json!({"username": sql, "password": "correct horse battery"})),
        Some(&player_token),
    )
    .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (400, Some("invalid_input"))
    );
    let (status, body) = call(
        "POST",
        format!("{base}/v1/auth/login"),
        Some(json!({"username": sql, "password": "' OR '1'='1"})),
        None,
    )
    .await;
    assert!(
        matches!(status, 400 | 401),
        "login with a SQL-looking name: {status} {body}"
    );
    for path in [
        "/v1/players/1%27%20OR%20%271%27=%271",
        "/v1/games/1;DROP%20TABLE%20games",
        "/v1/leaderboard/kalah%27;--",
        "/v1/invites/%27%20OR%201=1--",
    ] {
        let (status, body) = call("GET", format!("{base}{path}"), None, None).await;
        assert!(matches!(status, 400 | 404), "{path}: {status} {body}");
        assert!(body["code"].is_string(), "{path}: {body}");
    }

    // Out-of-range numbers are the caller's to fix: 400 at once, no retry
    // behind the scenes, nothing made.
    let bad_clock = json!({"initial_secs": 0, "increment_secs": 0});
    for (path, body) in [
        (
            "/v1/hotseat-games",
            json!({"variant": {"variant": "kalah"}, "time_control": bad_clock}),
        ),
        (
            "/v1/invites",
            json!({"variant": {"variant": "kalah"}, "rated": false,
                "time_control": {"initial_secs": 2_147_483_648u64, "increment_secs": 0}}),
        ),
    ] {
        let asked = Instant::now();
        let (status, body) = call(
            "POST",
            format!("{base}{path}"),
            Some(body),
            Some(&player_token),
        )
        .await;
        assert_eq!(
            (status, body["code"].as_str()),
            (400, Some("invalid_input")),
            "{path}: {body}"
        );
        assert!(
            asked.elapsed() < Duration::from_millis(500),
            "{path} was retried"
        );
    }
    let (status, body) = call(
        "GET",
        format!("{base}/v1/leaderboard/kalah?offset=18446744073709551615"),
        None,
        None,
    )
    .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (400, Some("invalid_input"))
    );
    // Strangers to the internal endpoint learn nothing of its body.
    let (status, body) = call(
        "POST",
        format!("{base}/internal/v1/games"),
        Some(json!({"variant": {"variant": "kalah"}, "seats": []})),
        None,
    )
    .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (401, Some("unauthenticated"))
    );
    // A known address, the wrong method.
    let (status, body) = call("GET", format!("{base}/v1/ai-games"), None, None).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (405, Some("method_not_allowed"))
    );

    // A huge handshake header is refused; a slow one is cut off; neither
    // keeps others waiting.
    let address = base.trim_start_matches("http://").to_owned();
    let huge = format!(
        "GET /v1/lobby HTTP/1.1\r\nHost: {address}\r\nX-Padding: {}\r\n\r\n",
        "a".repeat(256 * 1024)
    );
    let mut stream = std::net::TcpStream::connect(&address).unwrap();
    stream.set_read_timeout(Some(WAIT)).unwrap();
    let _ = stream.write_all(huge.as_bytes());
    let mut answer = [0u8; 64];
    let read = stream.read(&mut answer).unwrap_or(0);
    let answer = String::from_utf8_lossy(&answer[..read]);
    assert!(
        read == 0 || answer.starts_with("HTTP/1.1 431") || answer.starts_with("HTTP/1.1 400"),
        "a 256 KiB header: {answer}"
    );
    let slow: Vec<std::net::TcpStream> = (0..50)
        .map(|_| {
            let mut stream = std::net::TcpStream::connect(&address).unwrap();
            stream
                .write_all(b"GET /v1/lobby HTTP/1.1\r\nHost: ")
                .unwrap();
            stream
        })
        .collect();
    let started = Instant::now();
    let me: Value = request("GET", format!("{base}/v1/me"), None, Some(&player_token)).await;
    assert_eq!(me["id"], player.as_str());
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "slow handshakes held others up for {:?}",
        started.elapsed()
    );
    for mut stream in slow {
        // The server closes a request whose head never completes.
        stream
            .set_read_timeout(Some(Duration::from_secs(15)))
            .unwrap();
        let mut buffer = [0u8; 256];
        let closed = stream.read(&mut buffer).is_ok();
        assert!(closed, "a slow handshake was never cut off");
    }

    // Still serving, with nothing of the above stored.
    let (status, _) = call("GET", format!("{base}/readyz"), None, None).await;
    assert_eq!(status, 200);
    let (status, body) = call(
        "POST",
        format!("{base}/v1/auth/login"),
        Some(json!({"username": "nobody_here", "password": "correct horse battery"})),
        None,
    )
    .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (401, Some("invalid_credentials"))
    );
    drop(arena);
    stores.cleanup().await.unwrap();
}
