//! Failover: one host per game under a lease, fencing by epoch, takeover
//! by replay after the host dies, redirects, and the graceful drain.

use std::time::Duration;

use mancala_proto::error::{CLOSE_ELSEWHERE, CLOSE_RESTART};
use mancala_proto::game::{CreatedGame, GameState, ServerMessage};
use serde_json::json;

use crate::helpers::{Instance, World, Ws, seat};

/// Connects a player, retrying while another instance still holds the game
/// (its lease has not expired yet), for up to ten seconds.
async fn play_when_free(instance: &Instance, game: &CreatedGame, token: &str) -> (Ws, GameState) {
    for _ in 0..100 {
        let mut ws = instance.connect(&game.play_path).await;
        ws.send(json!({"t": "auth", "d": {"token": token}})).await;
        match ws.message().await {
            ServerMessage::State(state) => return (ws, *state),
            _ => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
    panic!("the game never became free");
}

/// Three moves on `host`.
async fn three_moves(world: &World, host: &Instance) -> (CreatedGame, String, String, Ws, Ws) {
    let ((south, south_token), (north, north_token)) = world.two_players().await;
    let game = host
        .create(
            json!({"variant": "oware"}),
            [seat(south), seat(north)],
            false,
        )
        .await;
    let (mut a, _) = host.play(&game, &south_token).await;
    let (mut b, _) = host.play(&game, &north_token).await;
    for (ply, pit) in [(1, 1), (2, 1), (3, 2)] {
        let mover = if ply % 2 == 1 { &mut a } else { &mut b };
        mover.play_move(pit, ply).await;
        a.moved().await;
        b.moved().await;
    }
    (game, south_token, north_token, a, b)
}

#[actix_web::test]
async fn a_dead_hosts_games_continue_elsewhere_with_every_move() {
    let world = World::new().await;
    let short_lease = [("APP_GAME_LEASE_SECS", "1")];
    let url = mancala_platform::testing::database_url(&world.stores.database);
    let host = world.instance_with(&url, &short_lease).await;
    let other = world.instance_with(&url, &short_lease).await;
    let (game, south_token, north_token, a, b) = three_moves(&world, &host).await;
    // The host dies: no drain, its lease left to expire.
    host.server.stop(false).await;
    drop((a, b));
    let started = std::time::Instant::now();
    let (mut a, state) = play_when_free(&other, &game, &south_token).await;
    let took = started.elapsed();
    println!("takeover with a 1 s lease: {took:?} from the host's death to the new state");
    assert_eq!(
        (state.ply, state.version),
        (3, 3),
        "every acknowledged move is there"
    );
    assert!(took < Duration::from_secs(5), "takeover took {took:?}");
    let (mut b, _) = other.play(&game, &north_token).await;
    // A client that saw version 3 has nothing to catch up on, and play goes on.
    b.send(json!({"t": "sync", "d": {"since": 3}})).await;
    b.play_move(state.legal[0], 4).await;
    assert_eq!(b.moved().await.ply, 4);
    assert_eq!(a.moved().await.ply, 4);
    world.cleanup().await;
}

#[actix_web::test]
async fn a_host_that_lost_the_game_cannot_write() {
    let world = World::new().await;
    let first = world.instance().await;
    let second = world.instance().await;
    let (game, _, north_token, mut a, _b) = three_moves(&world, &first).await;
    // The first host's lease is lost (as if it expired during a pause).
    let mut redis = world.stores.redis.connection();
    let _: () = redis::cmd("DEL")
        .arg(
            world
                .stores
                .redis
                .key(&mancala_proto::bus::names::game_lease(game.id)),
        )
        .query_async(&mut redis)
        .await
        .unwrap();
    // The second instance takes the game over, raising its epoch.
    let (_north, state) = second.play(&game, &north_token).await;
    assert_eq!(state.ply, 3);
    // South is still on the first host, which does not know: its write is
    // refused by Postgres, and the socket is sent on.
    a.play_move(state.legal[0], 4).await;
    let (close, _) = a.closed().await;
    assert_eq!(close, Some(CLOSE_ELSEWHERE));
    // The log holds the three moves, then the new host's placeholder:
    // the stale host's fourth met it.
    let log: Vec<(i32, i16, i32)> =
        sqlx::query_as("SELECT ply, pit, epoch FROM game_moves WHERE game_id = $1 ORDER BY ply")
            .bind(game.id)
            .fetch_all(&world.stores.postgres)
            .await
            .unwrap();
    let epoch: i64 = sqlx::query_scalar("SELECT epoch FROM games WHERE id = $1")
        .bind(game.id)
        .fetch_one(&world.stores.postgres)
        .await
        .unwrap();
    assert_eq!(log.len(), 4, "{log:?}");
    assert!(log[..3].iter().all(|(_, pit, _)| *pit > 0), "{log:?}");
    assert_eq!(log[3], (4, 0, epoch as i32), "{log:?}");
    world.cleanup().await;
}

#[actix_web::test]
async fn a_player_who_reaches_another_instance_is_told_where_to_go() {
    let world = World::new().await;
    let host = world.instance().await;
    let other = world.instance().await;
    let (game, south_token, _, _a, _b) = three_moves(&world, &host).await;
    let mut lost = other.connect(&game.play_path).await;
    lost.send(json!({"t": "auth", "d": {"token": south_token}}))
        .await;
    match lost.message().await {
        ServerMessage::Elsewhere { url } => assert_eq!(url.as_deref(), Some(host.base.as_str())),
        other => panic!("{other:?}"),
    }
    assert_eq!(lost.closed().await.0, Some(CLOSE_ELSEWHERE));
    world.cleanup().await;
}

#[actix_web::test]
async fn a_drained_instance_hands_its_games_over_at_once() {
    let world = World::new().await;
    let host = world.instance().await;
    let other = world.instance().await;
    let (game, south_token, _, mut a, _b) = three_moves(&world, &host).await;
    host.hosted.drain().await;
    assert_eq!(a.closed().await.0, Some(CLOSE_RESTART));
    // The lease is released: the other instance takes the game at once.
    let (_a, state) = other.play(&game, &south_token).await;
    assert_eq!(state.ply, 3);
    world.cleanup().await;
}
