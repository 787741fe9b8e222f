//! Watching from another instance, through Redis.

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
