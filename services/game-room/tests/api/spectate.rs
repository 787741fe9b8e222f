//! Watching from another instance, through Redis.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mancala_proto::game::ServerMessage;
use serde_json::json;

use crate::helpers::{World, seat};

#[actix_web::test]
async fn a_watcher_on_another_instance_sees_every_move_in_order() {
    let world = World::new().await;
    let host = world.instance().await;
    let other = world.instance().await;
    let ((south, south_token), (north, north_token)) = world.two_players().await;
    let game = host
        .create(
            json!({"variant": "kalah"}),
            [seat(south), seat(north)],
            false,
        )
        .await;
    let (mut a, state) = host.play(&game, &south_token).await;
    let (mut b, _) = host.play(&game, &north_token).await;
    a.play_move(state.legal[0], 1).await;
    let first = a.moved().await;
    b.moved().await;

    // The watcher joins mid-game on the other instance: a snapshot first.
    let mut watcher = other.connect(&game.watch_path).await;
    let snapshot = watcher.state().await;
    assert_eq!(
        (snapshot.version, snapshot.you, snapshot.connected),
        (1, None, [true, true])
    );
    // The players learn they are watched.
    loop {
        if let ServerMessage::Watchers { count: 1 } = a.message().await {
            break;
        }
    }
    // Then every move, in order, and the end.
    let (mut turn, mut legal, mut ply) = (first.turn, first.legal.clone(), 1);
    let mut sockets = [a, b];
    while let Some(mover) = turn {
        ply += 1;
        sockets[mover as usize]
            .play_move(legal[legal.len() / 2], ply)
            .await;
        let moved = sockets[mover as usize].moved().await;
        sockets[1 - mover as usize].moved().await;
        assert_eq!(watcher.moved().await, moved, "ply {ply}");
        turn = moved.turn;
        legal = moved.legal;
    }
    match watcher.event().await {
        ServerMessage::Over(over) => assert_eq!(over.version, u64::from(ply) + 1),
        other => panic!("{other:?}"),
    }
    // A watcher cannot play.
    watcher.play_move(1, ply + 1).await;
    watcher
        .expect_error(mancala_proto::ErrorCode::Forbidden)
        .await;
    // A late watcher syncing from an old version gets the game as it is.
    let mut late = other.connect(&game.watch_path).await;
    let state = late.state().await;
    assert_eq!(state.version, u64::from(ply) + 1);
    late.send(json!({"t": "sync", "d": {"since": u64::from(ply) - 1}}))
        .await;
    assert_eq!(late.state().await.version, state.version);
    world.cleanup().await;
}

/// The game's events as Redis carries them: a spy on the game's channel
/// counting what the host published there (events and notices; watcher
/// counts are not the host's).
async fn spy_on(world: &World, game: uuid::Uuid) -> Arc<AtomicUsize> {
    use futures_util::StreamExt;
    use mancala_proto::bus::{GameBus, Route, names};
    let mut pubsub = world.stores.redis.pubsub().await.unwrap().unwrap();
    pubsub
        .subscribe(world.stores.redis.key(&names::game_channel(game)))
        .await
        .unwrap();
    let published = Arc::new(AtomicUsize::new(0));
    let counted = published.clone();
    tokio::spawn(async move {
        let mut messages = pubsub.into_on_message();
        while let Some(message) = messages.next().await {
            let text: String = message.get_payload().unwrap_or_default();
            if matches!(
                GameBus::route(&text),
                Ok((Route::Event { .. } | Route::Notice, _))
            ) {
                counted.fetch_add(1, Ordering::SeqCst);
            }
        }
    });
    published
}

#[actix_web::test]
async fn a_game_watched_only_where_it_is_hosted_publishes_nothing_and_a_watcher_elsewhere_misses_nothing()
 {
    let world = World::new().await;
    let host = world.instance().await;
    let other = world.instance().await;
    let ((south, south_token), (north, north_token)) = world.two_players().await;
    let game = host
        .create(
            json!({"variant": "kalah"}),
            [seat(south), seat(north)],
            false,
        )
        .await;
    let published = spy_on(&world, game.id).await;
    let (a, state) = host.play(&game, &south_token).await;
    let (b, _) = host.play(&game, &north_token).await;
    // A watcher where the game is hosted.
    let mut here = host.connect(&game.watch_path).await;
    here.state().await;
    let mut sockets = [a, b];
    let (mut turn, mut legal, mut ply) = (Some(0usize), state.legal.clone(), 0);
    let mut play = async |sockets: &mut [crate::helpers::Ws; 2]| {
        let mover = turn.expect("the game goes on");
        ply += 1;
        sockets[mover].play_move(legal[legal.len() / 2], ply).await;
        let moved = sockets[mover].moved().await;
        sockets[1 - mover].moved().await;
        turn = moved.turn.map(|side| side as usize);
        legal = moved.legal.clone();
        moved
    };
    for _ in 0..4 {
        let moved = play(&mut sockets).await;
        assert_eq!(here.moved().await, moved);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        published.load(Ordering::SeqCst),
        0,
        "nobody elsewhere follows: Redis hears nothing"
    );

    // A watcher elsewhere reads its snapshot, and a move is made at once,
    // before the host can know of it: it still reaches the watcher.
    let mut elsewhere = other.connect(&game.watch_path).await;
    let snapshot = elsewhere.state().await;
    let moved = play(&mut sockets).await;
    assert_eq!(here.moved().await, moved);
    assert!(snapshot.version < moved.version);
    let caught_up = elsewhere
        .until(|message| match message {
            ServerMessage::Moved(seen) if seen.version == moved.version => Some(seen.version),
            ServerMessage::State(state) if state.version >= moved.version => Some(state.version),
            _ => None,
        })
        .await;
    assert_eq!(caught_up, moved.version);
    // From then on every move goes through Redis, to both watchers once.
    let before = published.load(Ordering::SeqCst);
    let moved = play(&mut sockets).await;
    assert_eq!(elsewhere.moved().await, moved);
    assert_eq!(here.moved().await, moved);
    assert!(published.load(Ordering::SeqCst) > before);
    world.cleanup().await;
}
