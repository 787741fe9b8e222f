//! Faults under load, against real processes: a game-room instance killed
//! with SIGKILL, Redis restarted empty, Postgres gone (every connection cut
//! and new ones refused) and back. Games keep going, no acknowledged move
//! is lost, and the services recover without a restart.
//!
//! Each test drives a few dozen games at once with a short think time, the
//! way players would: a socket that drops is reopened (on any instance),
//! `unavailable` is retried, and the state after a reconnect says whether
//! a move in flight was stored.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::cell::RefCell;
use std::process::{Child, Command, Stdio};
use std::rc::Rc;
use std::time::{Duration, Instant};

use mancala_platform::testing::{Proxy, TestStores, database_url, redis_url};
use mancala_platform::{ExposeSecret, SecretString};
use mancala_tests::driven::{
    Game, Started, check_records, drive_all, new_games, until_all_started,
};
use mancala_tests::harness::{
    Service, Ws, call, free_port, percentile, play_when_free, request, start,
};
use serde_json::{Value, json};

struct Shared {
    key: SecretString,
    internal_token: String,
}

fn environment(stores: &TestStores, shared: &Shared, redis: &str) -> Vec<(&'static str, String)> {
    vec![
        (
            "DATABASE_URL",
            database_url(&stores.database).expose_secret().to_owned(),
        ),
        ("REDIS_URL", redis.to_owned()),
        ("APP_REDIS_PREFIX", stores.prefix.clone()),
        ("APP_JWT_PRIVATE_KEY", shared.key.expose_secret().to_owned()),
        ("APP_INTERNAL_TOKEN", shared.internal_token.clone()),
        ("APP_LOG_FORMAT", "json".to_owned()),
        ("RUST_LOG", "error".to_owned()),
        ("APP_GAME_LEASE_SECS", "1".to_owned()),
        ("APP_WS_RATE", "200/100".to_owned()),
        // Every guest here comes from one address.
        ("APP_LIMIT_SIGNUPS_PER_IP", "10000/60".to_owned()),
        ("APP_LIMIT_REGISTRATIONS_PER_IP", "10000/60".to_owned()),
    ]
}

fn shared() -> Shared {
    Shared {
        key: mancala_platform::jwt::random_seed(),
        internal_token: uuid::Uuid::new_v4().to_string(),
    }
}

#[actix_rt::test]
async fn a_game_room_killed_under_load_loses_no_acknowledged_move() {
    let stores = TestStores::new().await.unwrap();
    let shared = shared();
    let env = environment(&stores, &shared, redis_url().expose_secret());
    let room = |port: u16, name: &str| {
        let mut env = env.clone();
        env.push(("APP_INSTANCE_ID", name.to_owned()));
        env.push(("APP_PUBLIC_URL", format!("http://127.0.0.1:{port}")));
        env
    };
    let (port_a, port_b) = (free_port(), free_port());
    let mut host = start("game-room", port_a, &room(port_a, "room-a")).await;
    let other = start("game-room", port_b, &room(port_b, "room-b")).await;
    let accounts = start("matchmaking", free_port(), &env).await;
    let games = new_games(&accounts.base, &host.base, &shared.internal_token, 24).await;
    let bases = Rc::new(RefCell::new(vec![host.base.clone()]));
    let started = Started::default();
    let count = games.len();
    let running = actix_rt::spawn({
        let (bases, started) = (bases.clone(), started.clone());
        async move { drive_all(games, &bases, 30, &started).await }
    });
    until_all_started(&started, count).await;
    host.kill();
    *bases.borrow_mut() = vec![other.base.clone()];
    let outcomes = running.await.unwrap();
    check_records(&other.base, &outcomes).await;
    let mut takeovers: Vec<Duration> = outcomes
        .iter()
        .flat_map(|outcome| outcome.reconnects.clone())
        .collect();
    assert!(
        takeovers.len() >= outcomes.len() / 2,
        "most games were in play when the host died: {} of {}",
        takeovers.len(),
        outcomes.len()
    );
    let moves: usize = outcomes.iter().map(|o| o.acknowledged.len()).sum();
    println!(
        "{} games, {moves} acknowledged moves, none lost; takeover p50 {:?} p99 {:?} max {:?}",
        outcomes.len(),
        percentile(&mut takeovers, 0.5),
        percentile(&mut takeovers, 0.99),
        percentile(&mut takeovers, 1.0),
    );
    drop((other, accounts));
    stores.cleanup().await.unwrap();
}

/// A Redis of the test's own, so restarting it disturbs no other test.
struct PrivateRedis {
    port: u16,
    child: Child,
}

impl PrivateRedis {
    fn start(port: u16) -> PrivateRedis {
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .spawn()
            .expect("redis-server on the PATH");
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "redis-server never listened");
            std::thread::sleep(Duration::from_millis(20));
        }
        PrivateRedis { port, child }
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// Killed and started again, empty: everything Redis held is gone.
    fn restart(&mut self) {
        self.kill();
        *self = PrivateRedis::start(self.port);
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for PrivateRedis {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A guest session, retrying `unavailable` (a store coming back) as a
/// client would.
async fn guest_when_ready(base: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (status, body) = call(
            "POST",
            format!("{base}/v1/auth/guest"),
            Some(json!({})),
            None,
        )
        .await;
        if status == 201 {
            return body;
        }
        assert!(
            status == 503 && Instant::now() < deadline,
            "a guest after the restart: {status} {body}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Waits in `queue` like the web client: joins again when the queue
/// stops reporting on it (its ticket vanished), until matched.
async fn wait_for_a_game(mut lobby: Ws, queue: Value, patience: Duration) -> (Value, u32) {
    let deadline = Instant::now() + patience;
    let mut rejoined = 0;
    lobby
        .send(json!({"t": "queue_join", "d": queue.clone()}))
        .await;
    let mut heard = Instant::now();
    loop {
        assert!(Instant::now() < deadline, "never matched");
        match lobby.next(Duration::from_millis(500)).await {
            Some(message) if message["t"] == "matched" => return (message["d"].clone(), rejoined),
            Some(message) if message["t"] == "queue_status" => heard = Instant::now(),
            _ => {}
        }
        if heard.elapsed() > Duration::from_millis(2500) {
            lobby
                .send(json!({"t": "queue_join", "d": queue.clone()}))
                .await;
            rejoined += 1;
            heard = Instant::now();
        }
    }
}

#[actix_rt::test]
async fn redis_restarting_empty_under_load_stops_no_game_and_queues_recover() {
    let stores = TestStores::new().await.unwrap();
    let shared = shared();
    let mut redis = PrivateRedis::start(free_port());
    let mut env = environment(&stores, &shared, &redis.url());
    env.push(("APP_PAIRING_WAVE_MS", "200".to_owned()));
    env.push(("APP_LOBBY_TICK_MS", "200".to_owned()));
    env.push(("APP_AI_FALLBACK_SECS", "600".to_owned()));
    let arena = start("arena", free_port(), &env).await;
    let base = arena.base.clone();
    let games = new_games(&base, &base, &shared.internal_token, 16).await;
    let bases = Rc::new(RefCell::new(vec![base.clone()]));
    let started = Started::default();
    let count = games.len();
    let running = actix_rt::spawn({
        let (bases, started) = (bases.clone(), started.clone());
        async move { drive_all(games, &bases, 30, &started).await }
    });
    // One player already waits for a ranked game.
    let waiting = request(
        "POST",
        format!("{base}/v1/auth/guest"),
        Some(json!({})),
        None,
    )
    .await;
    let mut lobby = Ws::open(format!("{base}/v1/lobby")).await.unwrap();
    lobby
        .send(json!({"t": "auth", "d": {"token": waiting["access_token"]}}))
        .await;
    let queue =
        json!({"variant": "kalah", "time_control": {"initial_secs": 180, "increment_secs": 2}});
    let first = actix_rt::spawn(wait_for_a_game(
        lobby,
        queue.clone(),
        Duration::from_secs(60),
    ));
    until_all_started(&started, count).await;
    redis.restart();
    let restarted = Instant::now();
    // A second player queues after the restart; the first re-queued.
    let second_player = guest_when_ready(&base).await;
    let mut lobby = Ws::open(format!("{base}/v1/lobby")).await.unwrap();
    lobby
        .send(json!({"t": "auth", "d": {"token": second_player["access_token"]}}))
        .await;
    let (second, _) = wait_for_a_game(lobby, queue, Duration::from_secs(60)).await;
    let (first, rejoined) = first.await.unwrap();
    assert_eq!(
        first["game_id"], second["game_id"],
        "the two waiting players met"
    );
    let matched_after = restarted.elapsed();
    let outcomes = running.await.unwrap();
    check_records(&base, &outcomes).await;
    for outcome in &outcomes {
        assert!(
            outcome.over || outcome.acknowledged.len() == 30,
            "{} stalled at {} moves",
            outcome.id,
            outcome.acknowledged.len()
        );
    }
    let reconnects: usize = outcomes.iter().map(|o| o.reconnects.len()).sum();
    // The counters come back as sockets refresh them.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let stats = request("GET", format!("{base}/v1/lobby/stats"), None, None).await;
        if stats["online"].as_u64().unwrap_or(0) >= 2 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "lobby stats never recovered: {stats}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    println!(
        "Redis restarted empty under {} games: {} socket reconnects; the waiting player \
         re-queued {rejoined} time(s) and was matched {matched_after:?} after the restart",
        outcomes.len(),
        reconnects
    );
    drop(arena);
    stores.cleanup().await.unwrap();
}

#[actix_rt::test]
async fn postgres_going_away_under_load_refuses_moves_then_recovers() {
    let stores = TestStores::new().await.unwrap();
    let shared = shared();
    let proxy = Proxy::start("127.0.0.1:5432".parse().unwrap()).await;
    let mut env = environment(&stores, &shared, redis_url().expose_secret());
    let through_proxy = database_url(&stores.database)
        .expose_secret()
        .replace("127.0.0.1:5432", &format!("127.0.0.1:{}", proxy.port));
    env.retain(|(name, _)| *name != "DATABASE_URL");
    env.push(("DATABASE_URL", through_proxy));
    let arena = start("arena", free_port(), &env).await;
    let base = arena.base.clone();
    let games = new_games(&base, &base, &shared.internal_token, 16).await;
    let bases = Rc::new(RefCell::new(vec![base.clone()]));
    let started = Started::default();
    let count = games.len();
    let running = actix_rt::spawn({
        let (bases, started) = (bases.clone(), started.clone());
        async move { drive_all(games, &bases, 30, &started).await }
    });
    until_all_started(&started, count).await;
    proxy.cut().await;
    let (status, body) = call(
        "POST",
        format!("{base}/v1/auth/guest"),
        Some(json!({})),
        None,
    )
    .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (503, Some("unavailable")),
        "refused with a retryable error while Postgres is away"
    );
    tokio::time::sleep(Duration::from_secs(2)).await;
    proxy.restore();
    let outcomes = running.await.unwrap();
    check_records(&base, &outcomes).await;
    let refused: u64 = outcomes.iter().map(|o| o.unavailable).sum();
    assert!(
        refused > 0,
        "moves during the outage were refused, not lost"
    );
    for outcome in &outcomes {
        assert!(
            outcome.over || outcome.acknowledged.len() == 30,
            "{} did not finish",
            outcome.id
        );
    }
    let (status, _) = call("GET", format!("{base}/readyz"), None, None).await;
    assert_eq!(status, 200, "ready again without a restart");
    println!(
        "Postgres away 2 s under {} games: {refused} moves refused as unavailable and \
         retried, none lost",
        outcomes.len()
    );
    drop(arena);
    stores.cleanup().await.unwrap();
}

/// A request's status, `Retry-After` and time to answer.
/// A `Retry-After` given in the first seconds of a busy spell: 5 s, spread
/// by a quarter either way.
fn early_in_a_spell(retry_after: Option<u64>) -> bool {
    retry_after.is_some_and(|seconds| (4..=6).contains(&seconds))
}

async fn timed_call(
    method: &str,
    url: String,
    token: Option<&str>,
) -> (u16, Option<u64>, Duration, Value) {
    let client = mancala_tests::harness::client();
    let mut request = match method {
        "POST" => client.post(&url),
        _ => client.get(&url),
    };
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let asked = Instant::now();
    let mut response =
        match method {
            "POST" => request
                .send_json(
                    &json!({"variant": {"variant": "kalah"}, "level": "beginner", "side": "first"}),
                )
                .await,
            _ => request.send().await,
        }
        .unwrap();
    let retry = response
        .headers()
        .get("retry-after")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse().ok());
    let took = asked.elapsed();
    let status = response.status().as_u16();
    let body = response.json::<Value>().await.unwrap_or(Value::Null);
    (status, retry, took, body)
}

#[actix_rt::test]
async fn a_busy_instance_refuses_new_work_at_once_and_keeps_its_games_going() {
    let stores = TestStores::new().await.unwrap();
    let shared = shared();
    let mut redis = PrivateRedis::start(free_port());
    let env = environment(&stores, &shared, &redis.url());
    let arena = start("arena", free_port(), &env).await;
    let base = arena.base.clone();
    let games = new_games(&base, &base, &shared.internal_token, 8).await;
    let player = request(
        "POST",
        format!("{base}/v1/auth/guest"),
        Some(json!({})),
        None,
    )
    .await;
    let token = player["access_token"].as_str().unwrap().to_owned();
    let watched = games[0].id.clone();
    let bases = Rc::new(RefCell::new(vec![base.clone()]));
    let started = Started::default();
    let count = games.len();
    let running = actix_rt::spawn({
        let (bases, started) = (bases.clone(), started.clone());
        async move { drive_all(games, &bases, 40, &started).await }
    });
    until_all_started(&started, count).await;
    // Redis stops answering: past the instance's limit (a round trip
    // longer than 250 ms), so it is busy within a few samples.
    redis.kill();
    let deadline = Instant::now() + Duration::from_secs(20);
    let refused = loop {
        let answer = timed_call("POST", format!("{base}/v1/auth/guest"), None).await;
        if answer.0 == 503 && answer.1.is_some() {
            break answer;
        }
        assert!(Instant::now() < deadline, "never refused: {answer:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    // New work is refused at once, with a time to come back: a sign-in,
    // a new game, a new watcher.
    assert!(early_in_a_spell(refused.1), "{refused:?}");
    assert!(refused.2 < Duration::from_secs(1), "{:?}", refused.2);
    let game = timed_call("POST", format!("{base}/v1/ai-games"), Some(&token)).await;
    assert_eq!(game.0, 503);
    assert!(early_in_a_spell(game.1), "{game:?}");
    // (Each service of the process samples the signs itself: the games'
    // may see them a moment later.)
    let watch = loop {
        let watch = timed_call("GET", format!("{base}/v1/games/{watched}/watch"), None).await;
        if watch.0 == 503 || Instant::now() > deadline {
            break watch;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(watch.0, 503);
    assert!(early_in_a_spell(watch.1), "{watch:?}");
    tokio::time::sleep(Duration::from_secs(2)).await;
    // Redis is back: the instance opens again.
    redis = PrivateRedis::start(redis.port);
    guest_when_ready(&base).await;
    // The games went on throughout, and lost nothing.
    let outcomes = running.await.unwrap();
    check_records(&base, &outcomes).await;
    for outcome in &outcomes {
        assert!(
            outcome.over || outcome.acknowledged.len() == 40,
            "{} stalled at {} moves",
            outcome.id,
            outcome.acknowledged.len()
        );
    }
    drop(arena);
    drop(redis);
    stores.cleanup().await.unwrap();
}

/// Resigns `game` as its first player and waits for the end.
/// Resigns `game` for its first player; their socket, still open.
async fn resign(bases: &[String], game: &Game) -> Ws {
    let (mut ws, _) =
        play_when_free(bases, &game.id, &game.tokens[0], Duration::from_secs(30)).await;
    ws.send(json!({"t": "resign"})).await;
    while let Some(message) = ws.next(Duration::from_secs(5)).await {
        if message["t"] == "over" {
            return ws;
        }
    }
    panic!("{}: no end after resigning", game.id);
}

/// An arena on fresh stores that may hold `games` games in progress.
async fn arena_holding(games: u32) -> (TestStores, Shared, Service) {
    let stores = TestStores::new().await.unwrap();
    let shared = shared();
    let mut env = environment(&stores, &shared, redis_url().expose_secret());
    env.push(("APP_OVERLOAD_GAMES", games.to_string()));
    let arena = start("arena", free_port(), &env).await;
    (stores, shared, arena)
}

#[actix_rt::test]
async fn an_instance_at_its_capacity_refuses_new_work_and_plays_the_games_it_holds() {
    let (stores, shared, arena) = arena_holding(2).await;
    let base = arena.base.clone();
    let player = guest_when_ready(&base).await;
    let token = player["access_token"].as_str().unwrap().to_owned();
    let games = new_games(&base, &base, &shared.internal_token, 2).await;
    let bases = Rc::new(RefCell::new(vec![base.clone()]));
    let started = Started::default();
    let first = games[0].id.clone();
    let (first_tokens, second) = (games[0].tokens.clone(), games[1].id.clone());
    let running = actix_rt::spawn({
        let (bases, started) = (bases.clone(), started.clone());
        async move { drive_all(games, &bases, 12, &started).await }
    });
    until_all_started(&started, 2).await;
    // Two games in progress: the instance is full. New work is refused at
    // once, with a time to come back; no sign had to move first.
    for (method, path, token) in [
        ("POST", "/v1/auth/guest", None),
        ("POST", "/v1/ai-games", Some(token.as_str())),
        ("GET", &*format!("/v1/games/{second}/watch"), None),
    ] {
        let refused = timed_call(method, format!("{base}{path}"), token).await;
        assert_eq!(refused.0, 503, "{method} {path}");
        // The spell has just begun: about 5 s (spread by a quarter), and
        // the body repeats the header for clients that cannot read it.
        assert!(early_in_a_spell(refused.1), "{path}: {refused:?}");
        let wait = refused.1.unwrap_or_default();
        assert_eq!(refused.3["retry_after"], wait, "{path}: {:?}", refused.3);
        assert!(
            refused.2 < Duration::from_secs(1),
            "{path}: {:?}",
            refused.2
        );
    }
    // The lobby refuses a queue entry with the same wait, on the socket.
    let mut lobby = Ws::open(format!("{base}/v1/lobby")).await.unwrap();
    lobby
        .send(json!({"t": "auth", "d": {"token": token}}))
        .await;
    lobby
        .send(json!({"t": "queue_join", "d": {"variant": "kalah",
            "time_control": {"initial_secs": 180, "increment_secs": 2}}}))
        .await;
    let refusal = loop {
        let message = lobby.next(Duration::from_secs(5)).await.expect("an answer");
        if message["t"] == "error" {
            break message["d"].clone();
        }
    };
    assert_eq!(refusal["code"], "unavailable", "{refusal}");
    let wait = refusal["retry_after"].as_u64().expect("a wait");
    assert!((4..=40).contains(&wait), "{refusal}");
    drop(lobby);
    // The games it holds go on to the end of the drive, losing nothing.
    let outcomes = running.await.unwrap();
    check_records(&base, &outcomes).await;
    assert!(
        outcomes
            .iter()
            .all(|outcome| outcome.acknowledged.len() == 12)
    );
    // One ends. While its players are there, it keeps its place for their
    // rematch: a new game is still refused, and the rematch, taking the
    // place over, is made.
    let bases = bases.borrow().clone();
    let game = Game {
        id: first,
        tokens: first_tokens,
    };
    let mut resigner = resign(&bases, &game).await;
    let (mut other, _) =
        play_when_free(&bases, &game.id, &game.tokens[1], Duration::from_secs(30)).await;
    let held = timed_call("POST", format!("{base}/v1/ai-games"), Some(&token)).await;
    assert_eq!(held.0, 503, "the place is held for the rematch: {held:?}");
    resigner.send(json!({"t": "rematch"})).await;
    other.send(json!({"t": "rematch"})).await;
    let rematch = loop {
        let message = other.next(Duration::from_secs(5)).await.expect("a rematch");
        if message["t"] == "rematch" {
            break message["d"]["game_id"].as_str().unwrap().to_owned();
        }
        assert_ne!(message["t"], "error", "rematch refused: {message}");
    };
    drop((resigner, other));
    // The rematch ends and its players go: the place is free, room for one
    // new game, and the instance is full again.
    let rematch = Game {
        id: rematch,
        tokens: game.tokens.clone(),
    };
    drop(resign(&bases, &rematch).await);
    let deadline = Instant::now() + Duration::from_secs(10);
    let admitted = loop {
        let answer = call(
            "POST",
            format!("{base}/v1/ai-games"),
            Some(json!({"variant": {"variant": "kalah"}, "level": "beginner", "side": "first"})),
            Some(&token),
        )
        .await;
        if answer.0 != 503 || Instant::now() > deadline {
            break answer;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(admitted.0, 201, "its players went: {admitted:?}");
    let id = admitted.1["game_id"].as_str().unwrap().to_owned();
    let (_ws, _) = play_when_free(&bases, &id, &token, Duration::from_secs(30)).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let again = timed_call("POST", format!("{base}/v1/auth/guest"), None).await;
        if again.0 == 503 {
            break;
        }
        assert!(Instant::now() < deadline, "not full again: {again:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    drop(arena);
    stores.cleanup().await.unwrap();
}

/// A lobby socket of a fresh guest, signed in.
async fn lobby_of_a_guest(base: &str) -> Ws {
    let guest = guest_when_ready(base).await;
    let mut lobby = Ws::open(format!("{base}/v1/lobby")).await.unwrap();
    lobby
        .send(json!({"t": "auth", "d": {"token": guest["access_token"]}}))
        .await;
    lobby
}

/// Joins the Kalah queue; the first answer about it (a status or an error).
async fn join_kalah(lobby: &mut Ws) -> Value {
    lobby
        .send(json!({"t": "queue_join", "d": {"variant": "kalah",
            "time_control": {"initial_secs": 180, "increment_secs": 2}}}))
        .await;
    loop {
        let message = lobby.next(Duration::from_secs(5)).await.expect("an answer");
        if ["queue_status", "matched", "error"].contains(&message["t"].as_str().unwrap_or("")) {
            return message;
        }
    }
}

#[actix_rt::test]
async fn a_queue_admits_only_the_players_its_free_places_can_seat() {
    let (stores, _shared, arena) = arena_holding(2).await;
    let base = arena.base.clone();
    let mut lobbies = Vec::new();
    for _ in 0..5 {
        lobbies.push(lobby_of_a_guest(&base).await);
    }
    // Two places: four players fill them, whether or not a pairing wave
    // has made games of some of them in between.
    let mut answers = Vec::new();
    for lobby in &mut lobbies[..4] {
        let joined = join_kalah(lobby).await;
        assert_ne!(joined["t"], "error", "{joined}");
        answers.push(joined);
    }
    let refused = join_kalah(&mut lobbies[4]).await;
    assert_eq!(refused["t"], "error", "{refused}");
    assert_eq!(refused["d"]["code"], "unavailable", "{refused}");
    assert!(refused["d"]["retry_after"].as_u64().is_some(), "{refused}");
    // The four admitted are all seated, two games.
    let mut games = std::collections::BTreeSet::new();
    for (lobby, mut matched) in lobbies[..4].iter_mut().zip(answers) {
        while matched["t"] != "matched" {
            matched = lobby.next(Duration::from_secs(10)).await.expect("matched");
        }
        games.insert(matched["d"]["game_id"].as_str().unwrap().to_owned());
    }
    assert_eq!(games.len(), 2, "{games:?}");
    drop(arena);
    stores.cleanup().await.unwrap();
}
