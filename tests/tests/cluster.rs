//! The split deployment on a Redis Cluster: three primaries started here
//! from the installed `redis-server`, `matchmaking`, two `game-room`
//! instances and `rating` as their own processes with `APP_REDIS_MODE=
//! cluster`. Two registered players queue and are paired, play while a
//! watcher follows on the other game-room instance, and the primary that
//! holds the game's keys is killed mid-game: the game goes on (its moves
//! live in Postgres), the watcher catches up once the primary is back,
//! every acknowledged move is in the record, and the game is rated.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use mancala_platform::ExposeSecret;
use mancala_platform::testing::{TestStores, database_url};
use mancala_tests::cluster::RedisCluster;
use mancala_tests::harness::{
    Ws, free_port, pits, play_when_free, queued_for_ranked_kalah, recorded_moves,
    registered_player, request, start,
};
use serde_json::{Value, json};

#[actix_rt::test]
async fn the_split_services_play_watch_and_rate_on_a_redis_cluster_that_loses_a_primary() {
    let mut cluster = RedisCluster::start(3);
    let stores = TestStores::new().await.unwrap();
    let prefix = stores.prefix.clone();
    let jwt_key = mancala_platform::jwt::random_seed();
    let common = vec![
        (
            "DATABASE_URL",
            database_url(&stores.database).expose_secret().to_owned(),
        ),
        ("REDIS_URL", cluster.url()),
        ("APP_REDIS_MODE", "cluster".to_owned()),
        ("APP_REDIS_PREFIX", prefix.clone()),
        ("APP_JWT_PRIVATE_KEY", jwt_key.expose_secret().to_owned()),
        ("APP_INTERNAL_TOKEN", uuid::Uuid::new_v4().to_string()),
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
            ("APP_WS_RATE", "200/100".to_owned()),
        ])
    };
    let room_a = start("game-room", port_a, &room(port_a, "room-a")).await;
    let env_b = room(port_b, "room-b");
    let env_matchmaking = with(&[
        ("APP_GAME_ROOM_URL", room_a.base.clone()),
        ("APP_PAIRING_WAVE_MS", "200".to_owned()),
        ("APP_LOBBY_TICK_MS", "100".to_owned()),
    ]);
    let env_rating = with(&[("APP_RATING_POLL_MS", "200".to_owned())]);
    let (room_b, matchmaking, rating) = tokio::join!(
        start("game-room", port_b, &env_b),
        start("matchmaking", free_port(), &env_matchmaking),
        start("rating", free_port(), &env_rating),
    );

    // Paired through the queue, whose tickets share one slot.
    let suffix = &uuid::Uuid::new_v4().simple().to_string()[..8];
    let players = [
        registered_player(&matchmaking.base, &format!("south_{suffix}")).await,
        registered_player(&matchmaking.base, &format!("north_{suffix}")).await,
    ];
    let mut lobbies = Vec::new();
    for (_, token) in &players {
        lobbies.push(queued_for_ranked_kalah(&matchmaking.base, token).await);
    }
    let mut matches = Vec::new();
    for lobby in &mut lobbies {
        matches.push(lobby.until("matched", Duration::from_secs(20)).await);
    }
    let game = matches[0]["game_id"].as_str().unwrap().to_owned();
    assert_eq!(matches[1]["game_id"], game.as_str(), "paired together");
    let mut by_seat = [&players[0], &players[1]];
    if matches[0]["seat"] == 1 {
        by_seat.swap(0, 1);
    }

    let patience = Duration::from_secs(15);
    let base_a = std::slice::from_ref(&room_a.base);
    let (south, state) = play_when_free(base_a, &game, &by_seat[0].1, patience).await;
    let (north, _) = play_when_free(base_a, &game, &by_seat[1].1, patience).await;
    let mut sockets = [south, north];
    let mut watcher = Ws::open(format!("{}/v1/games/{game}/watch", room_b.base))
        .await
        .unwrap();
    assert_eq!(watcher.until("state", patience).await["ply"], 0);

    // Everything of one game shares its hash tag, so one primary holds it.
    let slot = mancala_platform::kv::slot(format!("{prefix}game:{{g:{game}}}").as_bytes());
    let holder = cluster.owner(slot);
    // The watcher's instance listens to the game on that shard alone.
    let channel = format!("{prefix}game:{{g:{game}}}");
    let deadline = Instant::now() + Duration::from_secs(5);
    while !cluster.shard_channels(holder).contains(&channel) {
        assert!(
            Instant::now() < deadline,
            "no sharded subscription to {channel}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for other in (0..3).filter(|&node| node != holder) {
        assert!(!cluster.shard_channels(other).contains(&channel));
    }
    // The host's marks name keys of two slots (the lobby's and the game's
    // presence): each reaches its shard.
    let presence = format!("{prefix}presence:{{g:{game}}}");
    let occupied = format!("{prefix}lobby:{{lobby}}:occupied");
    let ask = |args: &[&str]| {
        let node = cluster.owner(mancala_platform::kv::slot(args[1].as_bytes()));
        cluster.ask(node, args)
    };
    assert_ne!(
        mancala_platform::kv::slot(presence.as_bytes()),
        mancala_platform::kv::slot(occupied.as_bytes())
    );
    let deadline = Instant::now() + Duration::from_secs(5);
    while ask(&["get", &presence]) != "11" || ask(&["zscore", &occupied, &game]).is_empty() {
        assert!(
            Instant::now() < deadline,
            "presence {:?}, occupied {:?}",
            ask(&["get", &presence]),
            ask(&["zscore", &occupied, &game])
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    let mut acknowledged: Vec<(u64, u64, u64)> = Vec::new();
    let mut watched: Vec<u64> = Vec::new();
    // Notes what the watcher heard; true once it heard the end.
    let note = |message: Value, watched: &mut Vec<u64>| match message["t"].as_str() {
        Some("moved") => {
            watched.push(message["d"]["ply"].as_u64().unwrap());
            false
        }
        Some("state") => {
            // A snapshot stands for every ply up to it, and for the end
            // when the game is over: a watcher that catches up after the
            // end (its instance's subscriptions moved shards meanwhile)
            // reads it there rather than as an event.
            let ply = message["d"]["ply"].as_u64().unwrap();
            let last = watched.last().copied().unwrap_or(0);
            assert!(ply >= last, "a snapshot went back");
            watched.extend(last + 1..=ply);
            message["d"]["status"] != "live"
        }
        Some("over") => true,
        _ => false,
    };
    let mut watcher_saw_end = false;
    let (mut turn, mut legal) = (
        state["turn"].as_u64().unwrap() as usize,
        pits(&state["legal"]),
    );
    let mut outage = None;
    let mut over = None;
    while over.is_none() {
        let ply = acknowledged.len() as u64 + 1;
        if ply == 9 {
            cluster.kill(holder);
            outage = Some(Instant::now());
        }
        if ply == 17 {
            cluster.restart(holder);
            println!(
                "the game's primary was down for {:?}",
                outage.unwrap().elapsed()
            );
        }
        let pit = legal[(ply as usize * 7 + 3) % legal.len()];
        sockets[turn]
            .send(json!({"t": "move", "d": {"pit": pit, "ply": ply}}))
            .await;
        let moved = sockets[turn].until("moved", patience).await;
        assert_eq!(
            moved["ply"], ply,
            "a move while the game's primary was down"
        );
        acknowledged.push((ply, turn as u64, pit));
        assert_eq!(sockets[1 - turn].until("moved", patience).await["ply"], ply);
        turn = moved["turn"].as_u64().unwrap_or(0) as usize;
        legal = pits(&moved["legal"]);
        if legal.is_empty() {
            over = Some(sockets[0].until("over", patience).await);
        }
        while let Some(message) = watcher.next(Duration::from_millis(1)).await {
            watcher_saw_end |= note(message, &mut watched);
        }
    }
    let over = over.unwrap();

    // The watcher on the other instance hears the end, having caught up on
    // what it missed while the shard was down.
    let deadline = Instant::now() + Duration::from_secs(30);
    while !watcher_saw_end {
        assert!(
            Instant::now() < deadline,
            "the watcher never heard the end: {watched:?}"
        );
        let message = watcher
            .next(Duration::from_secs(30))
            .await
            .expect("the watcher hears the end");
        watcher_saw_end = note(message, &mut watched);
    }
    watched.dedup();
    let all: Vec<u64> = (1..=acknowledged.len() as u64).collect();
    assert_eq!(watched, all, "the watcher saw every move, in order");

    let record = request(
        "GET",
        format!("{}/v1/games/{game}", room_b.base),
        None,
        None,
    )
    .await;
    assert_eq!(
        recorded_moves(&room_b.base, &game).await,
        acknowledged,
        "every acknowledged move, nothing else"
    );
    assert_eq!(record["result"], over["result"]);

    // Rated, on whichever shard the rating service's keys are.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let profile = request(
            "GET",
            format!("{}/v1/players/{}", rating.base, by_seat[0].0),
            None,
            None,
        )
        .await;
        if profile["ratings"][0]["games"] == 1 {
            break;
        }
        assert!(Instant::now() < deadline, "never rated: {profile}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    drop((
        sockets,
        watcher,
        lobbies,
        room_a,
        room_b,
        matchmaking,
        rating,
    ));
    stores.cleanup().await.unwrap();
}
