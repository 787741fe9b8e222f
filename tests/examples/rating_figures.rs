//! Rating figures, with game-room and the rating service in this process
//! on a scratch database (the real Postgres and Redis):
//! - rated games applied per second by the workers, from a backlog;
//! - the time from a ranked game's end (a resignation sent after each side
//!   moved once) until the other player's socket shows the rating change,
//!   p50/p99.
//!
//! `cargo run --release -p mancala-tests --example rating_figures [WORKERS]`

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use mancala_platform::binary::Service as _;
use mancala_platform::jwt::{TokenSigner, random_seed};
use mancala_platform::testing::{TestStores, database_url, redis_url};
use mancala_platform::{Clock, ExposeSecret, Settings};
use mancala_proto::ClientMessage;
use mancala_proto::game::ServerMessage;
use mancala_tests::client::Api;
use mancala_tests::report::{Latency, histogram};
use uuid::Uuid;

const BACKLOG: usize = 2_000;
const GAMES: usize = 100;

fn main() {
    let workers: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(4);
    actix_rt::System::new().block_on(run(workers));
}

async fn player(stores: &TestStores, name: String) -> Uuid {
    stores.player(&name).await.unwrap()
}

async fn run(workers: usize) {
    let stores = TestStores::new().await.unwrap();
    let seed = random_seed();
    let signer = TokenSigner::from_seed(&seed, "figures", "figures", 3600).unwrap();
    let vars: Vec<(String, String)> = [
        ("APP_BIND", "127.0.0.1:0".to_owned()),
        (
            "DATABASE_URL",
            database_url(&stores.database).expose_secret().to_owned(),
        ),
        ("REDIS_URL", redis_url().expose_secret().to_owned()),
        ("APP_REDIS_PREFIX", stores.prefix.clone()),
        ("APP_JWT_ISSUER", "figures".to_owned()),
        ("APP_JWT_AUDIENCE", "figures".to_owned()),
        ("APP_JWT_PRIVATE_KEY", seed.expose_secret().to_owned()),
        ("APP_INTERNAL_TOKEN", "figures-token".to_owned()),
        ("APP_RATING_WORKERS", workers.to_string()),
        // The backlog's pairs would otherwise be past their rated games of
        // the day, and the games below would end casual, never rated.
        ("APP_RATED_PAIR_LIMIT", "1000000".to_owned()),
        ("APP_LOG_FORMAT", "json".to_owned()),
    ]
    .into_iter()
    .map(|(n, v)| (n.to_owned(), v))
    .collect();
    let clock = Clock::system();

    // A backlog of finished rated games between 200 players, then the
    // rating service starts and works through it.
    let mut players = Vec::new();
    for index in 0..200 {
        players.push(player(&stores, format!("P{index}")).await);
    }
    for index in 0..BACKLOG {
        let (a, b) = (players[index % 200], players[(index * 7 + 1) % 200]);
        let b = if a == b {
            players[(index + 1) % 200]
        } else {
            b
        };
        let id = Uuid::now_v7();
        sqlx::query(
            "INSERT INTO games (id, variant, seat0_player, seat1_player, rated, status, result, reason,
                                score0, score1, created_at, ended_at)
             VALUES ($1, '{\"variant\":\"kalah\"}', $2, $3, true, 'over', 'p0', 'resign', 0, 0, now(), now());
             ",
        )
        .bind(id)
        .bind(a)
        .bind(b)
        .execute(&stores.postgres)
        .await
        .unwrap();
        sqlx::query("INSERT INTO rating_outbox (game_id, created_at) VALUES ($1, now())")
            .bind(id)
            .execute(&stores.postgres)
            .await
            .unwrap();
    }
    let started = Instant::now();
    let rating = mancala_rating::Application::build(
        Settings::from_vars(vars.clone()).unwrap(),
        mancala_rating::RatingSettings::from_vars(vars.clone()).unwrap(),
        clock.clone(),
    )
    .await
    .unwrap();
    actix_rt::spawn(rating.run_until_stopped());
    loop {
        let left: i64 =
            sqlx::query_scalar("SELECT count(*) FROM rating_outbox WHERE processed_at IS NULL")
                .fetch_one(&stores.postgres)
                .await
                .unwrap();
        if left == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "{workers} workers applied {BACKLOG} rated games in {seconds:.2} s: {:.0} games/s",
        BACKLOG as f64 / seconds
    );

    // Ranked games ended by resignation, watched to the rating change.
    let games = mancala_game_room::Application::build(
        Settings::from_vars(vars.clone()).unwrap(),
        mancala_game_room::GameRoomSettings::from_vars(vars.clone()).unwrap(),
        clock.clone(),
    )
    .await
    .unwrap();
    let base = format!("http://127.0.0.1:{}", games.port());
    actix_rt::spawn(games.run_until_stopped());
    let api = Api::new(&base, &base);
    let mut latency = histogram().unwrap();
    for index in 0..GAMES {
        let (a, b) = (players[index * 2 % 200], players[(index * 2 + 1) % 200]);
        let game = api
            .create_game("figures-token", "kalah", [a, b], true)
            .await
            .unwrap();
        let mut sockets = Vec::new();
        for player in [a, b] {
            let mut socket = api.socket(&game.play_path).await.unwrap();
            let token = signer.issue(&player.to_string(), clock.now_secs()).unwrap();
            socket.send(&ClientMessage::Auth { token }).await.unwrap();
            while !matches!(socket.receive().await.unwrap(), ServerMessage::State(_)) {}
            sockets.push(socket);
        }
        // Each side moves once (pit 1 from the start: no extra turn), so
        // the game counts; then seat 0 resigns.
        for (ply, mover) in [(1, 0), (2, 1)] {
            sockets[mover]
                .send(&ClientMessage::Move {
                    pit: 1,
                    ply,
                    hidden_ms: None,
                })
                .await
                .unwrap();
            for socket in &mut sockets {
                while !matches!(socket.receive().await.unwrap(), ServerMessage::Moved(_)) {}
            }
        }
        let sent = Instant::now();
        sockets[0].send(&ClientMessage::Resign).await.unwrap();
        loop {
            if let ServerMessage::RatingChange { .. } = sockets[1].receive().await.unwrap() {
                break;
            }
        }
        latency.record(sent.elapsed().as_micros() as u64).unwrap();
        for socket in sockets {
            socket.close().await;
        }
    }
    let latency = Latency::of(&latency);
    println!(
        "game end to rating change on the players' sockets, {GAMES} games: p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        latency.p50_ms, latency.p99_ms, latency.max_ms
    );
    stores.cleanup().await.unwrap();
}
