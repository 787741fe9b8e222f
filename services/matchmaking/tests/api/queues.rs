//! Ranked queues over the lobby socket, pairing, the AI fallback, several
//! queues, and two instances over one queue.

use std::collections::HashMap;
use std::time::Duration;

use mancala_matchmaking::queue::pairing::Ticket;
use mancala_matchmaking::queue::store;
use mancala_proto::game::Side;
use serde_json::json;
use uuid::Uuid;

use crate::helpers::{TestApp, roomy_limits};
use crate::lobby_client::Socket;

async fn rated(app: &TestApp, player: Uuid, rating: f64, rd: f64) {
    sqlx::query(
        "INSERT INTO ratings (player_id, variant, rating, rd, volatility) VALUES ($1, 'kalah', $2, $3, 0.06)",
    )
    .bind(player)
    .bind(rating)
    .bind(rd)
    .execute(&app.stores.postgres)
    .await
    .unwrap();
}

#[actix_web::test]
async fn two_guests_are_paired_into_a_game_they_can_play() {
    let app = TestApp::spawn().await;
    let (a, b) = (app.guest().await, app.guest().await);
    let mut lobby_a = Socket::lobby(&app.base, &a.access_token).await;
    let mut lobby_b = Socket::lobby(&app.base, &b.access_token).await;
    lobby_a.join("kalah", 3, 2).await;
    let status = lobby_a.status().await;
    assert_eq!(
        (status.queue.as_str(), status.ai_fallback_in_ms),
        ("kalah:3+2", 20_000)
    );
    lobby_b.join("kalah", 3, 2).await;
    let (ma, mb) = (lobby_a.matched().await, lobby_b.matched().await);
    assert_eq!(ma.game_id, mb.game_id);
    assert_eq!(ma.seat.opponent(), mb.seat);
    assert_eq!(ma.opponent.player, Some(b.player.id));
    // The game exists, ranked, and they can play it.
    let (mover, token) = if ma.seat == Side::South {
        (&ma, &a.access_token)
    } else {
        (&mb, &b.access_token)
    };
    let mut play = Socket::open(&app.games, &mover.ws_path).await;
    play.send(json!({"t": "auth", "d": {"token": token}})).await;
    let state = play.find("state", Duration::from_secs(5)).await.unwrap();
    assert_eq!(state["d"]["rated"], true);
    assert_eq!(state["d"]["time_control"]["initial_secs"], 180);
    play.send(json!({"t": "move", "d": {"pit": 1, "ply": 1}}))
        .await;
    assert!(play.find("moved", Duration::from_secs(5)).await.is_some());
    app.cleanup().await;
}

#[actix_web::test]
async fn rating_windows_hold_then_widen_with_time() {
    let app = TestApp::spawn().await;
    let (a, b) = (app.guest().await, app.guest().await);
    rated(&app, a.player.id, 1500.0, 60.0).await;
    rated(&app, b.player.id, 1600.0, 60.0).await;
    let mut lobby_a = Socket::lobby(&app.base, &a.access_token).await;
    let mut lobby_b = Socket::lobby(&app.base, &b.access_token).await;
    lobby_a.join("kalah", 3, 2).await;
    assert_eq!(lobby_a.status().await.window, 50.0);
    lobby_b.join("kalah", 3, 2).await;
    lobby_b.status().await;
    // Many pairing ticks pass, but not on the clock: 100 apart, window 50.
    assert!(
        lobby_a
            .find("matched", Duration::from_millis(600))
            .await
            .is_none()
    );
    // Five waves on the clock: the window is 110.
    app.clock.advance(5 * 50);
    assert!(
        lobby_a
            .find("matched", Duration::from_secs(10))
            .await
            .is_some()
    );
    assert!(
        lobby_b
            .find("matched", Duration::from_secs(10))
            .await
            .is_some()
    );
    app.cleanup().await;
}

#[actix_web::test]
async fn the_ai_steps_in_on_time() {
    let app = TestApp::spawn().await;
    let a = app.guest().await;
    rated(&app, a.player.id, 1000.0, 60.0).await;
    let mut lobby = Socket::lobby(&app.base, &a.access_token).await;
    lobby.join("kalah", 10, 5).await;
    // Joined (the status says so) before the clock moves.
    assert_eq!(lobby.status().await.ai_fallback_in_ms, 20_000);
    app.clock.advance(19_000);
    assert!(
        lobby
            .find("matched", Duration::from_millis(500))
            .await
            .is_none()
    );
    app.clock.advance(1_000);
    let matched = lobby.matched().await;
    assert_eq!(matched.opponent.ai.as_deref(), Some("beginner"));
    assert_eq!(matched.queue, "kalah:10+5");
    app.cleanup().await;
}

#[actix_web::test]
async fn a_pairing_in_one_queue_takes_the_player_out_of_the_others() {
    let app = TestApp::spawn().await;
    let (a, b) = (app.guest().await, app.guest().await);
    let mut lobby_a = Socket::lobby(&app.base, &a.access_token).await;
    let mut lobby_b = Socket::lobby(&app.base, &b.access_token).await;
    lobby_a.join("kalah", 3, 2).await;
    lobby_a.join("oware", 3, 2).await;
    lobby_a.status().await;
    lobby_b.join("oware", 3, 2).await;
    let matched = lobby_a.matched().await;
    assert_eq!(matched.queue, "oware:3+2");
    lobby_b.matched().await;
    let (status, stats) = app.get("/v1/lobby/stats", None).await.into_parts();
    assert_eq!(status, 200);
    assert_eq!(stats["in_queue"]["kalah:3+2"], 0);
    assert_eq!(stats["online"], 2);
    app.cleanup().await;
}

#[actix_web::test]
async fn lobby_stats_add_up_across_instances() {
    let app = TestApp::spawn().await;
    let other = app.instance().await;
    let (a, b) = (app.guest().await, app.guest().await);
    let mut lobby_a = Socket::lobby(&app.base, &a.access_token).await;
    let mut lobby_b = Socket::lobby(&other, &b.access_token).await;
    lobby_a.join("mangala", 10, 5).await;
    lobby_a.status().await;
    lobby_b.send(json!({"t": "ping"})).await;
    lobby_b.find("pong", Duration::from_secs(5)).await.unwrap();
    for base in [&app.base, &other] {
        let (_, stats) = app.get_at(base, "/v1/lobby/stats").await.into_parts();
        assert_eq!(stats["online"], 2, "{base}");
        assert_eq!(stats["in_queue"]["mangala:10+5"], 1);
    }
    // Sockets gone, and their grace past: the figures fall back.
    drop((lobby_a, lobby_b));
    // A socket's last keep-alive may land after the clock moved, before the
    // server hears the close; it too runs out.
    let mut online = json!(null);
    for _ in 0..50 {
        app.clock.advance(2 * 3600 * 1000);
        let (_, stats) = app.get("/v1/lobby/stats", None).await.into_parts();
        online = stats["online"].clone();
        if online == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(online, 0);
    app.cleanup().await;
}

#[actix_web::test]
async fn two_instances_pair_a_thousand_tickets_exactly_once() {
    let app = TestApp::spawn_full(roomy_limits(), &[("APP_QUEUES", "kalah:3+2")]).await;
    let _second = app.instance().await;
    let redis = &app.stores.redis;
    let now = app.clock.now_millis();
    let mut players = Vec::new();
    for index in 0..1000 {
        let id = app.stores.player(&format!("Load {index}")).await.unwrap();
        players.push(id);
    }
    for (index, player) in players.iter().enumerate() {
        store::keep_alive(redis, *player, now + 3_600_000)
            .await
            .unwrap();
        let ticket = Ticket {
            player: *player,
            // A spread of ratings, all within reach of a neighbour.
            rating: 1000.0 + (index as f64) * 1.5,
            rd: 60.0,
            joined_ms: now,
            last_opponent: None,
            first_balance: 0,
        };
        store::join(redis, "kalah:3+2", &ticket).await.unwrap();
    }
    let mut left = u64::MAX;
    for _ in 0..1200 {
        left = store::waiting(redis, "kalah:3+2").await.unwrap();
        if left == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    if left != 0 {
        let remaining = store::tickets(redis, "kalah:3+2").await.unwrap();
        let mut games = Vec::new();
        for ticket in &remaining {
            let count: i64 = sqlx::query_scalar(
                "SELECT count(*) FROM games WHERE seat0_player = $1 OR seat1_player = $1",
            )
            .bind(ticket.player)
            .fetch_one(&app.stores.postgres)
            .await
            .unwrap();
            games.push(count);
        }
        let total: i64 = sqlx::query_scalar("SELECT count(*) FROM games")
            .fetch_one(&app.stores.postgres)
            .await
            .unwrap();
        let seated: Vec<(Uuid, Uuid)> =
            sqlx::query_as("SELECT seat0_player, seat1_player FROM games")
                .fetch_all(&app.stores.postgres)
                .await
                .unwrap();
        let mut count: HashMap<Uuid, u32> = HashMap::new();
        for (a, b) in &seated {
            *count.entry(*a).or_default() += 1;
            *count.entry(*b).or_default() += 1;
        }
        let twice: Vec<_> = count.iter().filter(|(_, n)| **n > 1).collect();
        let lost: Vec<usize> = players
            .iter()
            .enumerate()
            .filter(|(_, p)| !count.contains_key(p) && !remaining.iter().any(|t| t.player == **p))
            .map(|(index, _)| index)
            .collect();
        panic!(
            "{left} tickets left: {remaining:?}, in {games:?} games; {total} games in all; \
             in two games: {twice:?}; in no game nor queue: {lost:?}"
        );
    }
    // The last pairs were claimed; their games may still be on the way.
    let mut seats: Vec<(Uuid, Uuid)> = Vec::new();
    for _ in 0..600 {
        seats = sqlx::query_as("SELECT seat0_player, seat1_player FROM games")
            .fetch_all(&app.stores.postgres)
            .await
            .unwrap();
        if seats.len() >= 500 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let mut count: HashMap<Uuid, u32> = HashMap::new();
    for (a, b) in &seats {
        *count.entry(*a).or_default() += 1;
        *count.entry(*b).or_default() += 1;
    }
    assert_eq!(seats.len(), 500);
    assert!(
        players.iter().all(|p| count.get(p) == Some(&1)),
        "each player in exactly one game"
    );
    app.cleanup().await;
}

#[actix_web::test]
async fn a_pairer_that_lost_its_lease_claims_nothing() {
    // The service pairs another queue: this test plays both leaders itself.
    let app = TestApp::spawn_full(roomy_limits(), &[("APP_QUEUES", "mangala:3+2")]).await;
    let redis = &app.stores.redis;
    let (a, b) = (Uuid::now_v7(), Uuid::now_v7());
    for player in [a, b] {
        let ticket = Ticket {
            player,
            rating: 1500.0,
            rd: 60.0,
            joined_ms: 0,
            last_opponent: None,
            first_balance: 0,
        };
        store::join(redis, "oware:3+2", &ticket).await.unwrap();
    }
    // Whoever leads now, a new leader takes a newer token: the old one is
    // fenced off.
    let stale = 1;
    let _: () = redis::cmd("SET")
        .arg(redis.key("fence:{queues}:oware:3+2"))
        .arg(1_000_000)
        .query_async(&mut redis.connection())
        .await
        .unwrap();
    assert_eq!(
        store::claim(redis, "oware:3+2", stale, &[a, b])
            .await
            .unwrap(),
        store::Claim::Fenced
    );
    assert_eq!(store::waiting(redis, "oware:3+2").await.unwrap(), 2);
    assert_eq!(
        store::claim(redis, "oware:3+2", 1_000_000, &[a, b])
            .await
            .unwrap(),
        store::Claim::Claimed
    );
    assert_eq!(
        store::claim(redis, "oware:3+2", 1_000_000, &[a, b])
            .await
            .unwrap(),
        store::Claim::Gone,
        "a pair is claimed once"
    );
    app.cleanup().await;
}

#[actix_web::test]
async fn a_lobby_socket_that_stops_answering_is_closed_and_its_ticket_released() {
    let app = TestApp::spawn_full(
        roomy_limits(),
        &[
            ("APP_WS_PING_SECS", "1"),
            ("APP_WS_TIMEOUT_SECS", "3"),
            ("APP_LOBBY_GRACE_SECS", "1"),
        ],
    )
    .await;
    let player = app.guest().await;
    let mut lobby = Socket::lobby(&app.base, &player.access_token).await;
    lobby.join("kalah", 3, 2).await;
    lobby.status().await;
    let waiting = |stats: serde_json::Value| stats["in_queue"]["kalah:3+2"].clone();
    let (_, stats) = app.get("/v1/lobby/stats", None).await.into_parts();
    assert_eq!(waiting(stats), 1);
    // The client goes silent: it reads nothing, so it answers no ping. Two
    // seconds of silence are still within the timeout. The clock moves in
    // steps shorter than the grace, as real time does, so the socket's
    // ticks keep the ticket alive between them.
    for _ in 0..4 {
        app.clock.advance(500);
        tokio::time::sleep(Duration::from_millis(150)).await;
    }
    let (_, stats) = app.get("/v1/lobby/stats", None).await.into_parts();
    assert_eq!(waiting(stats), 1, "still within the heartbeat timeout");
    // Past it the server closes the socket; past the grace the ticket goes.
    app.clock.advance(1_500);
    tokio::time::sleep(Duration::from_millis(300)).await;
    app.clock.advance(1_500);
    let mut released = false;
    for _ in 0..100 {
        let (_, stats) = app.get("/v1/lobby/stats", None).await.into_parts();
        if waiting(stats) == 0 {
            released = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(released, "the silent socket's ticket was released");
    // What the socket got before the end: its messages, then the close.
    let mut closed = false;
    for _ in 0..50 {
        if lobby
            .next_within(Duration::from_millis(200))
            .await
            .is_none()
        {
            closed = true;
            break;
        }
    }
    assert!(closed, "the server closed the silent socket");
    app.cleanup().await;
}
