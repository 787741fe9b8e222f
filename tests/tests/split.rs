//! The services as an operator runs them: `matchmaking`, two `game-room`
//! instances and `rating`, each its own process, against the real Postgres
//! and Redis (a fresh database and key prefix). Two registered players
//! queue and are paired, play Kalah while a watcher follows on the other
//! game-room instance, the hosting instance is killed with SIGKILL in the
//! middle of the game, the game finishes on the other instance with every
//! acknowledged move in its record, and the rating, leaderboard and
//! profiles show the result.
//!
//! The binaries are the workspace's own (`deploy/test.sh` builds them with
//! `cargo build --workspace --bins` before the tests).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use mancala_platform::ExposeSecret;
use mancala_platform::testing::{TestStores, database_url, redis_url};
use mancala_tests::harness::{
    Ws, free_port, percentile, pits, play_when_free, queued_for_ranked_kalah, recorded_moves,
    registered_player, request, start,
};
use serde_json::json;

struct Player {
    id: String,
    token: String,
}

async fn registered(matchmaking: &str, name: &str) -> Player {
    let (id, token) = registered_player(matchmaking, name).await;
    Player { id, token }
}

/// A deterministic pick among the legal pits, so a failing run repeats.
fn pick(legal: &[u64], ply: u64) -> u64 {
    legal[(ply as usize * 7 + 3) % legal.len()]
}

#[actix_rt::test]
async fn split_services_pair_play_survive_a_killed_host_and_rate() {
    let stores = TestStores::new().await.unwrap();
    let internal_token = uuid::Uuid::new_v4().to_string();
    let jwt_key = mancala_platform::jwt::random_seed();
    let common = vec![
        (
            "DATABASE_URL",
            database_url(&stores.database).expose_secret().to_owned(),
        ),
        ("REDIS_URL", redis_url().expose_secret().to_owned()),
        ("APP_REDIS_PREFIX", stores.prefix.clone()),
        ("APP_JWT_PRIVATE_KEY", jwt_key.expose_secret().to_owned()),
        ("APP_INTERNAL_TOKEN", internal_token),
        ("APP_LOG_FORMAT", "json".to_owned()),
        ("RUST_LOG", "error".to_owned()),
    ];
    let with = |extra: &[(&'static str, String)]| {
        let mut env = common.clone();
        env.extend_from_slice(extra);
        env
    };
    let (port_a, port_b) = (free_port(), free_port());
    let room = |port: u16, name: &str| {
        with(&[
            ("APP_INSTANCE_ID", name.to_owned()),
            ("APP_PUBLIC_URL", format!("http://127.0.0.1:{port}")),
            ("APP_GAME_LEASE_SECS", "1".to_owned()),
            // The players here move far faster than people can.
            ("APP_WS_RATE", "200/100".to_owned()),
        ])
    };
    // The first process migrates the fresh database; the rest find it done.
    let mut room_a = start("game-room", port_a, &room(port_a, "room-a")).await;
    let started = Instant::now();
    let env_b = room(port_b, "room-b");
    let env_matchmaking = with(&[
        ("APP_GAME_ROOM_URL", room_a.base.clone()),
        ("APP_PAIRING_WAVE_MS", "200".to_owned()),
        ("APP_LOBBY_TICK_MS", "100".to_owned()),
    ]);
    let env_rating = with(&[
        ("APP_RATING_POLL_MS", "200".to_owned()),
        ("APP_LEADERBOARD_MIN_GAMES", "1".to_owned()),
        ("APP_LEADERBOARD_MAX_RD", "500".to_owned()),
    ]);
    let (room_b, matchmaking, rating) = tokio::join!(
        start("game-room", port_b, &env_b),
        start("matchmaking", free_port(), &env_matchmaking),
        start("rating", free_port(), &env_rating),
    );
    println!("three more services ready in {:?}", started.elapsed());

    // Two registered players queue for ranked Kalah and are paired.
    let suffix = &uuid::Uuid::new_v4().simple().to_string()[..8];
    let players = [
        registered(&matchmaking.base, &format!("south_{suffix}")).await,
        registered(&matchmaking.base, &format!("north_{suffix}")).await,
    ];
    let queued = Instant::now();
    let mut matches = Vec::new();
    let mut lobbies = Vec::new();
    for player in &players {
        lobbies.push(queued_for_ranked_kalah(&matchmaking.base, &player.token).await);
    }
    for lobby in &mut lobbies {
        matches.push(lobby.until("matched", Duration::from_secs(20)).await);
    }
    let time_to_match = queued.elapsed();
    let game = matches[0]["game_id"].as_str().unwrap().to_owned();
    assert_eq!(
        matches[1]["game_id"],
        game.as_str(),
        "paired with each other"
    );
    let seat_of = |index: usize| matches[index]["seat"].as_u64().unwrap() as usize;
    assert_ne!(seat_of(0), seat_of(1));
    // sockets[seat] is that seat's player.
    let mut by_seat: Vec<&Player> = vec![&players[0], &players[1]];
    if seat_of(0) == 1 {
        by_seat.swap(0, 1);
    }

    // Both play on instance A; a watcher follows on instance B.
    let patience = Duration::from_secs(10);
    let (south, state) = play_when_free(
        std::slice::from_ref(&room_a.base),
        &game,
        &by_seat[0].token,
        patience,
    )
    .await;
    let (north, _) = play_when_free(
        std::slice::from_ref(&room_a.base),
        &game,
        &by_seat[1].token,
        patience,
    )
    .await;
    let mut sockets = [south, north];
    let mut watcher = Ws::open(format!("{}/v1/games/{game}/watch", room_b.base))
        .await
        .unwrap();
    let watched = watcher.until("state", patience).await;
    assert_eq!(watched["ply"], 0);
    assert!(state["rated"].as_bool().unwrap(), "a ranked game is rated");

    let mut acknowledged: Vec<(u64, u64, u64)> = Vec::new();
    let mut round_trips = Vec::new();
    let (mut turn, mut legal) = (
        state["turn"].as_u64().unwrap() as usize,
        pits(&state["legal"]),
    );
    let mut takeover = None;
    let mut result = None;
    while result.is_none() {
        let ply = acknowledged.len() as u64 + 1;
        if ply == 9 && takeover.is_none() {
            // The host dies mid-game.
            room_a.kill();
            let killed = Instant::now();
            let (south, state) = play_when_free(
                std::slice::from_ref(&room_b.base),
                &game,
                &by_seat[0].token,
                patience,
            )
            .await;
            let (north, _) = play_when_free(
                std::slice::from_ref(&room_b.base),
                &game,
                &by_seat[1].token,
                patience,
            )
            .await;
            takeover = Some(killed.elapsed());
            sockets = [south, north];
            assert_eq!(
                state["ply"].as_u64().unwrap(),
                acknowledged.len() as u64,
                "every acknowledged move survived the host"
            );
            turn = state["turn"].as_u64().unwrap() as usize;
            legal = pits(&state["legal"]);
        }
        let pit = pick(&legal, ply);
        let sent = Instant::now();
        sockets[turn]
            .send(json!({"t": "move", "d": {"pit": pit, "ply": ply}}))
            .await;
        let moved = sockets[turn].until("moved", patience).await;
        round_trips.push(sent.elapsed());
        assert_eq!(moved["ply"], ply);
        acknowledged.push((ply, turn as u64, pit));
        let other = 1 - turn;
        let seen = sockets[other].until("moved", patience).await;
        assert_eq!(seen["ply"], ply);
        turn = moved["turn"].as_u64().unwrap_or(0) as usize;
        legal = pits(&moved["legal"]);
        if legal.is_empty() {
            result = Some(sockets[0].until("over", patience).await);
        }
    }
    let over = result.unwrap();
    let ended = Instant::now();
    println!(
        "game over after {} plies: {} ({})",
        acknowledged.len(),
        over["result"],
        over["reason"]
    );

    // The watcher on B saw every move, in order, and the end. An event it
    // missed (a publish the killed host never sent, or one dropped when
    // Redis was slow under load) is made good by a fresh snapshot, never
    // older than what it had: the snapshot stands for the plies up to it.
    let mut watched_plies: Vec<u64> = Vec::new();
    let mut resyncs = 0;
    loop {
        let message = watcher
            .next(patience)
            .await
            .expect("the watcher hears the end");
        match message["t"].as_str().unwrap() {
            "moved" => watched_plies.push(message["d"]["ply"].as_u64().unwrap()),
            "over" => break,
            "state" => {
                let ply = message["d"]["ply"].as_u64().unwrap();
                let last = watched_plies.last().copied().unwrap_or(0);
                assert!(ply >= last, "a snapshot went back: ply {ply} after {last}");
                watched_plies.extend(last + 1..=ply);
                resyncs += 1;
            }
            _ => {}
        }
    }
    println!("the watcher caught up from a snapshot {resyncs} time(s)");
    let all: Vec<u64> = (1..=acknowledged.len() as u64).collect();
    assert_eq!(
        watched_plies, all,
        "the watcher saw every move once, in order"
    );

    // The record holds every acknowledged move, and nothing else.
    assert_eq!(recorded_moves(&room_b.base, &game).await, acknowledged);
    let record = request(
        "GET",
        format!("{}/v1/games/{game}", room_b.base),
        None,
        None,
    )
    .await;
    assert_eq!(record["result"], over["result"]);

    // The rating service rates it; the leaderboard and profiles show it.
    let rated_after = loop {
        let profile = request(
            "GET",
            format!("{}/v1/players/{}", rating.base, by_seat[0].id),
            None,
            None,
        )
        .await;
        let kalah = profile["ratings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|rating| rating["variant"] == "kalah")
            .cloned();
        if kalah.as_ref().is_some_and(|k| k["games"] == 1) {
            break ended.elapsed();
        }
        assert!(ended.elapsed() < Duration::from_secs(20), "never rated");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    for player in &by_seat {
        let profile = request(
            "GET",
            format!("{}/v1/players/{}", rating.base, player.id),
            None,
            None,
        )
        .await;
        let kalah = &profile["ratings"][0];
        assert_eq!(kalah["games"], 1, "{profile}");
        let history = request(
            "GET",
            format!("{}/v1/players/{}/ratings/kalah", rating.base, player.id),
            None,
            None,
        )
        .await;
        let points = history.as_array().unwrap();
        assert_eq!(points.len(), 1, "{history}");
        assert_eq!(points[0]["game_id"], game.as_str());
        assert_eq!(points[0]["rating"], kalah["rating"]);
        if over["result"] != "draw" {
            assert_ne!(kalah["rating"], 1500.0, "a decisive game moves the rating");
        }
    }
    let board = request(
        "GET",
        format!("{}/v1/leaderboard/kalah", rating.base),
        None,
        None,
    )
    .await;
    let ranked: Vec<&str> = board["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| entry["player"].as_str().unwrap())
        .collect();
    assert_eq!(ranked.len(), 2, "{board}");
    for player in &by_seat {
        assert!(ranked.contains(&player.id.as_str()), "{board}");
    }

    let mut before_kill = round_trips[..8].to_vec();
    let mut after_kill = round_trips[8..].to_vec();
    println!(
        "figures: time to match {time_to_match:?}; move round trip p50 {:?} max {:?} on A, \
         p50 {:?} max {:?} on B; takeover (kill to both players back) {:?}; \
         game end to rating shown {rated_after:?}",
        percentile(&mut before_kill, 0.5),
        percentile(&mut before_kill, 1.0),
        percentile(&mut after_kill, 0.5),
        percentile(&mut after_kill, 1.0),
        takeover.unwrap(),
    );
    drop((sockets, watcher, lobbies, room_b, matchmaking, rating));
    stores.cleanup().await.unwrap();
}
