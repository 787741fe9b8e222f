//! Whole games over the socket, duplicates, reconnects, and Postgres going
//! away mid-game.

use mancala_platform::testing::database_url;
use mancala_proto::ErrorCode;
use mancala_proto::game::Side;
use mancala_proto::game::{GameResult, GameStatus, ServerMessage};
use serde_json::json;

use crate::helpers::{Instance, Seated, World, Ws, seat};
use mancala_platform::testing::Proxy;

/// Plays both sockets to the end, the side to move picking pseudo-random
/// legal pits; every move must reach both players in order.
async fn play_out(
    sockets: &mut [Ws; 2],
    mut turn: Option<Side>,
    mut legal: Vec<u8>,
    mut ply: u32,
) -> u32 {
    let mut seed = 0x9e37_79b9_u64;
    while let Some(mover) = turn {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let pit = legal[(seed >> 33) as usize % legal.len()];
        ply += 1;
        sockets[mover.index()].play_move(pit, ply).await;
        let mut seen = Vec::new();
        for socket in sockets.iter_mut() {
            let moved = socket.moved().await;
            assert_eq!(
                (moved.ply, moved.by, moved.pit, moved.version),
                (ply, mover, pit, u64::from(ply))
            );
            seen.push(moved);
        }
        assert_eq!(seen[0], seen[1]);
        turn = seen[0].turn;
        legal = seen[0].legal.clone();
    }
    ply
}

async fn full_game(instance: &Instance, world: &World, variant: serde_json::Value, rated: bool) {
    let (south, south_token) = world
        .player(&format!("South {}", uuid::Uuid::new_v4().simple()))
        .await;
    let (north, north_token) = world
        .player(&format!("North {}", uuid::Uuid::new_v4().simple()))
        .await;
    let seats = if rated {
        [
            json!({"player": {"id": south, "rating": 1500.0, "rd": 350.0}}),
            json!({"player": {"id": north, "rating": 1520.0, "rd": 350.0}}),
        ]
    } else {
        [seat(south), seat(north)]
    };
    let game = instance.create(variant, seats, rated).await;
    let (first, state) = instance.play(&game, &south_token).await;
    assert_eq!(
        (state.you, state.turn, state.ply, state.version),
        (Some(Side::South), Some(Side::South), 0, 0)
    );
    assert_eq!(state.status, GameStatus::Live);
    let (second, north_state) = instance.play(&game, &north_token).await;
    assert_eq!(north_state.you, Some(Side::North));
    let mut sockets = [first, second];
    let plies = play_out(&mut sockets, state.turn, state.legal.clone(), 0).await;
    let mut overs = Vec::new();
    for socket in sockets.iter_mut() {
        match socket.event().await {
            ServerMessage::Over(over) => overs.push(over),
            other => panic!("expected the end, got {other:?}"),
        }
    }
    assert_eq!(overs[0], overs[1]);
    assert_eq!(overs[0].version, u64::from(plies) + 1);
    // The record agrees with what was played.
    let (status, record) = instance.get(&format!("/v1/games/{}", game.id)).await;
    assert_eq!(status, 200);
    assert_eq!(record["moves"].as_array().unwrap().len(), plies as usize);
    assert_eq!(record["status"], "over");
    assert_eq!(
        record["result"],
        serde_json::to_value(overs[0].result).unwrap()
    );
    // A rated game leaves a row for the rating service, in the same commit.
    let outbox: i64 = sqlx::query_scalar("SELECT count(*) FROM rating_outbox WHERE game_id = $1")
        .bind(game.id)
        .fetch_one(&world.stores.postgres)
        .await
        .unwrap();
    assert_eq!(outbox, i64::from(rated));
    // Moving after the end is refused.
    sockets[0].play_move(1, plies + 1).await;
    sockets[0].expect_error(ErrorCode::GameOver).await;
}

#[actix_web::test]
async fn kalah_oware_and_mangala_play_to_the_end() {
    let (world, instance) = World::with_instance().await;
    full_game(&instance, &world, json!({"variant": "kalah"}), true).await;
    full_game(&instance, &world, json!({"variant": "oware"}), false).await;
    full_game(&instance, &world, json!({"variant": "mangala"}), false).await;
    world.cleanup().await;
}

#[actix_web::test]
async fn duplicates_are_answered_and_stale_plies_resynchronised() {
    let (world, instance) = World::with_instance().await;
    let Seated {
        game, mut a, mut b, ..
    } = instance.casual_seated(&world, "kalah").await;
    a.play_move(1, 1).await;
    let first = a.moved().await;
    assert_eq!(b.moved().await, first);
    // The same move again (a retry after a lost ack): the same answer,
    // nothing applied twice.
    a.play_move(1, 1).await;
    assert_eq!(a.moved().await, first);
    let stored: i64 =
        sqlx::query_scalar("SELECT count(*) FROM game_moves WHERE game_id = $1 AND pit > 0")
            .bind(game.id)
            .fetch_one(&world.stores.postgres)
            .await
            .unwrap();
    assert_eq!(stored, 1);
    // Out of turn, with the right ply.
    a.play_move(2, 2).await;
    a.expect_error(ErrorCode::NotYourTurn).await;
    // A stale ply: an error, then the state to start again from.
    b.play_move(1, 7).await;
    b.expect_error(ErrorCode::StalePly).await;
    let state = b.state().await;
    assert_eq!(
        (state.ply, state.turn, state.you),
        (1, Some(Side::North), Some(Side::North))
    );
    // Illegal: out of range, then (after North plays pit 1) an empty pit.
    b.play_move(9, 2).await;
    b.expect_error(ErrorCode::PitOutOfRange).await;
    b.play_move(1, 2).await;
    b.moved().await;
    a.moved().await;
    a.play_move(1, 3).await;
    a.expect_error(ErrorCode::EmptyPit).await;
    // Resigning ends it for the other side.
    a.send(json!({"t": "resign"})).await;
    for socket in [&mut a, &mut b] {
        match socket.event().await {
            ServerMessage::Over(over) => assert_eq!(over.result, GameResult::P1),
            other => panic!("{other:?}"),
        }
    }
    world.cleanup().await;
}

#[actix_web::test]
async fn a_reconnecting_player_syncs_exactly_what_they_missed() {
    let (world, instance) = World::with_instance().await;
    let Seated {
        game,
        north: (_, north_token),
        mut a,
        mut b,
        ..
    } = instance.casual_seated(&world, "oware").await;
    a.play_move(1, 1).await;
    a.moved().await;
    b.moved().await;
    // North drops; South's view shows it.
    drop(b);
    loop {
        if let ServerMessage::Presence {
            seat: Side::North,
            connected: false,
            ..
        } = a.message().await
        {
            break;
        }
    }
    // North comes back on a second socket (and a third: two tabs).
    let (mut b, state) = instance.play(&game, &north_token).await;
    assert_eq!(state.version, 1);
    let (mut tab, _) = instance.play(&game, &north_token).await;
    b.play_move(1, 2).await;
    let second = b.moved().await;
    assert_eq!(tab.moved().await, second);
    a.moved().await;
    a.play_move(2, 3).await;
    let third = a.moved().await;
    b.moved().await;
    tab.moved().await;
    // A client that last saw version 1 asks for the rest.
    let (mut late, _) = instance.play(&game, &north_token).await;
    late.send(json!({"t": "sync", "d": {"since": 1}})).await;
    assert_eq!(late.moved().await, second);
    assert_eq!(late.moved().await, third);
    late.send(json!({"t": "sync", "d": {"since": 3}})).await;
    late.send(json!({"t": "ping"})).await;
    assert_eq!(
        late.event().await,
        ServerMessage::Pong,
        "nothing missed since 3"
    );
    world.cleanup().await;
}

#[actix_web::test]
async fn a_move_is_not_acknowledged_while_postgres_is_away() {
    let world = World::new().await;
    let proxy = Proxy::start("127.0.0.1:5432".parse().unwrap()).await;
    let url = database_url(&world.stores.database);
    let through = mancala_platform::SecretString::from(
        mancala_platform::ExposeSecret::expose_secret(&url)
            .replace("127.0.0.1:5432", &format!("127.0.0.1:{}", proxy.port)),
    );
    let instance = world.instance_with(&through, &[]).await;
    let Seated {
        game, mut a, mut b, ..
    } = instance.casual_seated(&world, "kalah").await;
    a.play_move(1, 1).await;
    a.moved().await;
    b.moved().await;

    proxy.cut().await;
    b.play_move(1, 2).await;
    b.expect_error(ErrorCode::Unavailable).await;
    proxy.restore();
    // Nothing advanced: the same move, as the same ply, now goes through.
    b.play_move(1, 2).await;
    let moved = b.moved().await;
    assert_eq!((moved.ply, moved.by), (2, Side::North));
    assert_eq!(a.moved().await, moved);
    let stored: i64 =
        sqlx::query_scalar("SELECT count(*) FROM game_moves WHERE game_id = $1 AND pit > 0")
            .bind(game.id)
            .fetch_one(&world.stores.postgres)
            .await
            .unwrap();
    assert_eq!(stored, 2);
    world.cleanup().await;
}

/// Every command Redis runs under this test's key prefix, as `MONITOR`
/// shows it (a script's own commands left out: they are one `EVALSHA`),
/// until one of them starts with `until` (lower case).
async fn commands_until(
    monitor: &mut tokio::io::BufReader<tokio::net::TcpStream>,
    prefix: &str,
    until: &str,
) -> Vec<String> {
    use tokio::io::AsyncBufReadExt;
    let mut seen = Vec::new();
    let mut line = String::new();
    loop {
        line.clear();
        let read = tokio::time::timeout(
            std::time::Duration::from_secs(10),
            monitor.read_line(&mut line),
        )
        .await;
        assert!(
            matches!(read, Ok(Ok(1..))),
            "Redis went quiet after {seen:?}"
        );
        if !line.contains(prefix) || line.contains(" lua] ") {
            continue;
        }
        // +<time> [<db> <client>] "COMMAND" "key" ...
        let command = line
            .split_once("] ")
            .map_or("", |(_, rest)| rest.trim())
            .to_lowercase();
        let done = command.starts_with(until);
        seen.push(command);
        if done {
            return seen;
        }
    }
}

#[actix_web::test]
async fn a_socket_to_a_hosted_game_costs_two_redis_round_trips_and_reads_nothing() {
    use mancala_platform::ExposeSecret;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let world = World::new().await;
    let host = world.instance().await;
    let ((south, south_token), (north, north_token)) = world.two_players().await;
    let game = host
        .create(
            json!({"variant": "kalah"}),
            [seat(south), seat(north)],
            false,
        )
        .await;
    let url = mancala_platform::testing::redis_url();
    let address = url
        .expose_secret()
        .trim_start_matches("redis://")
        .trim_end_matches('/')
        .to_owned();
    let stream = tokio::net::TcpStream::connect(&address).await.unwrap();
    let mut monitor = tokio::io::BufReader::new(stream);
    monitor.get_mut().write_all(b"MONITOR\r\n").await.unwrap();
    let mut ok = String::new();
    monitor.read_line(&mut ok).await.unwrap();
    assert_eq!(ok.trim(), "+OK");
    let prefix = world.stores.prefix.clone();
    // The first socket wakes the game: its lease, its watchers, then the
    // same marks as any socket.
    let (_first, _) = host.play(&game, &south_token).await;
    commands_until(&mut monitor, &prefix, "\"setex\"").await;

    let (_second, _) = host.play(&game, &north_token).await;
    // The host writes who is connected last, with the lobby's marks.
    let commands = commands_until(&mut monitor, &prefix, "\"setex\"").await;
    let names: Vec<&str> = commands
        .iter()
        .map(|command| command.split('"').nth(1).unwrap_or(""))
        .collect();
    // The socket's slot among its player's sockets (one script), then the
    // host's one batch: online, playing, occupied, and presence.
    assert_eq!(
        names,
        ["evalsha", "zadd", "zadd", "zadd", "setex"],
        "{commands:#?}"
    );
    world.cleanup().await;
}
