//! Around a game (issue 6), under the manual clock: clocks, no start, the
//! disconnect countdown, AI seats and undo, rematches, and hosted.

use mancala_proto::ErrorCode;
use mancala_proto::error::CLOSE_ROOM_CLOSED;
use mancala_proto::game::Side;
use mancala_proto::game::{EndReason, GameResult, GameStatus, Over, ServerMessage};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::helpers::{Instance, Seated, World, Ws, beginner, seat};

fn over(message: ServerMessage) -> Option<Over> {
    match message {
        ServerMessage::Over(over) => Some(over),
        _ => None,
    }
}

/// The clock moves `still_live` ms and the game is live; it moves
/// `then` ms more and the sweeper aborts it for `reason`.
async fn live_then_aborted(
    world: &World,
    instance: &Instance,
    game: Uuid,
    still_live: u64,
    then: u64,
    reason: &str,
) {
    world.clock.advance(still_live);
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(record(instance, game).await["status"], "live");
    world.clock.advance(then);
    let mut status = Value::Null;
    for _ in 0..100 {
        status = record(instance, game).await["status"].clone();
        if status == "aborted" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(status, "aborted");
    assert_eq!(record(instance, game).await["reason"], reason);
}

async fn record(instance: &Instance, game: Uuid) -> Value {
    instance.get(&format!("/v1/games/{game}")).await.1
}

#[actix_web::test]
async fn a_flag_falls_on_the_clock() {
    let (world, instance) = World::with_instance().await;
    let ((south, south_token), (north, north_token)) = world.two_players().await;
    let game = instance
        .create_with(json!({
            "variant": {"variant": "kalah"},
            "seats": [seat(south), seat(north)],
            "time_control": {"initial_secs": 10, "increment_secs": 2},
        }))
        .await;
    let (mut a, state) = instance.play(&game, &south_token).await;
    let clocks = state.clocks.unwrap();
    assert_eq!(
        (clocks.remaining_ms, clocks.running),
        ([10_000, 10_000], None)
    );
    let (mut b, _) = instance.play(&game, &north_token).await;
    // No clock runs until each side has moved (the first-move window
    // times those moves instead).
    world.clock.advance(3_000);
    a.play_move(1, 1).await;
    let moved = a.moved().await;
    b.moved().await;
    let clocks = moved.clocks.unwrap();
    assert_eq!(
        (clocks.remaining_ms, clocks.running),
        ([10_000, 10_000], None)
    );
    world.clock.advance(20_000);
    b.play_move(1, 2).await;
    let clocks = b.moved().await.clocks.unwrap();
    a.moved().await;
    assert_eq!(
        (clocks.remaining_ms, clocks.running),
        ([10_000, 10_000], Some(Side::South))
    );
    // South thinks 3 s (pit 3: no extra turn), and has the increment.
    world.clock.advance(3_000);
    a.play_move(3, 3).await;
    let clocks = a.moved().await.clocks.unwrap();
    b.moved().await;
    assert_eq!(
        (clocks.remaining_ms, clocks.running),
        ([9_000, 10_000], Some(Side::North))
    );
    // North thinks for ten seconds: the flag falls, South wins.
    world.clock.advance(10_000);
    for socket in [&mut a, &mut b] {
        let end = socket.until(over).await;
        assert_eq!(
            (end.result, end.reason),
            (GameResult::P0, EndReason::Timeout)
        );
    }
    b.play_move(2, 4).await;
    b.expect_error(ErrorCode::GameOver).await;
    world.cleanup().await;
}

#[actix_web::test]
async fn a_game_without_a_first_move_is_aborted() {
    let (world, instance) = World::with_instance().await;
    let ((south, south_token), (north, _)) = world.two_players().await;
    let game = instance.rated("oware", [seat(south), seat(north)]).await;
    let (mut a, _) = instance.play(&game, &south_token).await;
    world.clock.advance(60_000);
    let end = a.until(over).await;
    assert_eq!(
        (end.result, end.reason),
        (GameResult::Aborted, EndReason::NoStart)
    );
    let stored = record(&instance, game.id).await;
    assert_eq!(stored["status"], "aborted");
    let outbox: i64 = sqlx::query_scalar("SELECT count(*) FROM rating_outbox")
        .fetch_one(&world.stores.postgres)
        .await
        .unwrap();
    assert_eq!(outbox, 0, "an aborted game is not rated");
    let charged: Vec<(Uuid, String)> =
        sqlx::query_as("SELECT player_id, kind::text FROM fair_play_offences WHERE game_id = $1")
            .bind(game.id)
            .fetch_all(&world.stores.postgres)
            .await
            .unwrap();
    assert_eq!(
        charged,
        [(south, "no_start".to_owned())],
        "the side to move never did"
    );
    world.cleanup().await;
}

/// A ranked game both have played (South, North, South), where North drops
/// with North to move.
async fn north_drops(world: &World, instance: &Instance) -> (Ws, Uuid, String) {
    let ((south, south_token), (north, north_token)) = world.two_players().await;
    let seats = [
        json!({"player": {"id": south, "rating": 1500.0, "rd": 100.0}}),
        json!({"player": {"id": north, "rating": 1200.0, "rd": 100.0}}),
    ];
    let game = instance
        .create(json!({"variant": "kalah"}), seats, true)
        .await;
    let (mut a, _) = instance.play(&game, &south_token).await;
    let (mut b, _) = instance.play(&game, &north_token).await;
    for (ply, pit) in [(1, 1), (2, 1), (3, 3)] {
        let mover = if ply == 2 { &mut b } else { &mut a };
        mover.play_move(pit, ply).await;
        a.moved().await;
        b.moved().await;
    }
    drop(b);
    let countdown = a
        .until(|message| match message {
            ServerMessage::Presence {
                seat: Side::North,
                connected: false,
                countdown_ms,
            } => Some(countdown_ms),
            _ => None,
        })
        .await;
    assert_eq!(countdown, Some(120_000));
    (a, game.id, north_token)
}

#[actix_web::test]
async fn after_the_countdown_an_ai_takes_the_absent_seat() {
    let (world, instance) = World::with_instance().await;
    let (mut a, game, _) = north_drops(&world, &instance).await;
    a.send(json!({"t": "continue_vs_ai"})).await;
    a.expect_error(ErrorCode::CountdownRunning).await;
    world.clock.advance(120_000);
    a.send(json!({"t": "continue_vs_ai"})).await;
    let (seat, level) = a
        .until(|message| match message {
            ServerMessage::TakenOver { seat, level, .. } => Some((seat, level)),
            _ => None,
        })
        .await;
    // An AI near North's 1200.
    assert_eq!((seat, level.as_str()), (Side::North, "beginner"));
    // It is North's turn: the AI plays it.
    let moved = a.moved().await;
    assert_eq!(moved.by, Side::North);
    let stored = record(&instance, game).await;
    assert_eq!(stored["rated"], false);
    assert_eq!(stored["seats"][1]["ai"], "beginner");
    world.cleanup().await;
}

#[actix_web::test]
async fn after_the_countdown_the_win_can_be_claimed() {
    let (world, instance) = World::with_instance().await;
    let (mut a, game, _) = north_drops(&world, &instance).await;
    world.clock.advance(119_000);
    a.send(json!({"t": "claim_victory"})).await;
    a.expect_error(ErrorCode::CountdownRunning).await;
    world.clock.advance(1_000);
    a.send(json!({"t": "claim_victory"})).await;
    let end = a.until(over).await;
    assert_eq!(
        (end.result, end.reason),
        (GameResult::P0, EndReason::Abandoned)
    );
    // Still ranked: the rating service will hear of it.
    let outbox: i64 = sqlx::query_scalar("SELECT count(*) FROM rating_outbox WHERE game_id = $1")
        .bind(game)
        .fetch_one(&world.stores.postgres)
        .await
        .unwrap();
    assert_eq!(outbox, 1);
    world.cleanup().await;
}

#[actix_web::test]
async fn a_return_inside_the_countdown_clears_it() {
    let (world, instance) = World::with_instance().await;
    let (mut a, game, north_token) = north_drops(&world, &instance).await;
    world.clock.advance(60_000);
    let created = mancala_proto::game::CreatedGame {
        id: game,
        play_path: format!("/v1/games/{game}/play"),
        watch_path: String::new(),
        rated: false,
        casual_reason: None,
    };
    let (_b, state) = instance.play(&created, &north_token).await;
    assert_eq!(state.countdown_ms, [None, None]);
    a.until(|message| match message {
        ServerMessage::Presence {
            seat: Side::North,
            connected: true,
            countdown_ms: None,
        } => Some(()),
        _ => None,
    })
    .await;
    world.clock.advance(120_000);
    a.send(json!({"t": "claim_victory"})).await;
    a.expect_error(ErrorCode::NotAllowed).await;
    world.cleanup().await;
}

#[actix_web::test]
async fn against_the_ai_to_the_end_with_an_undo_on_the_way() {
    let (world, instance) = World::with_instance().await;
    let (human, token) = world.player("Human").await;
    // The human chose to move second.
    let game = instance.casual("kalah", [beginner(), seat(human)]).await;
    let (mut ws, _) = instance.play(&game, &token).await;
    // The AI opens (perhaps with an extra turn); then it is the human's move.
    let mut last = ws.moved().await;
    while last.turn == Some(Side::South) {
        last = ws.moved().await;
    }
    let before = last.clone();
    ws.play_move(last.legal[0], last.ply + 1).await;
    let mine = ws.moved().await;
    assert_eq!(mine.by, Side::North);
    // The AI answers; then undo takes back the human's move and the answer.
    let mut reply = ws.moved().await;
    while reply.turn == Some(Side::South) {
        reply = ws.moved().await;
    }
    ws.send(json!({"t": "undo"})).await;
    let undone = ws
        .until(|message| match message {
            ServerMessage::Undone(undone) => Some(undone),
            _ => None,
        })
        .await;
    assert_eq!((undone.ply, undone.turn), (before.ply, Some(Side::North)));
    assert_eq!(undone.board, before.board);
    // Then play it out: the AI answers every move, to the end.
    let (mut turn, mut legal, mut ply) = (undone.turn, undone.legal, undone.ply);
    let end = loop {
        if turn == Some(Side::North) {
            ws.play_move(legal[legal.len() - 1], ply + 1).await;
            turn = None;
        }
        match ws.message().await {
            ServerMessage::Over(end) => break end,
            ServerMessage::Moved(moved) => {
                (turn, legal, ply) = (moved.turn, moved.legal, moved.ply);
            }
            _ => {}
        }
    };
    assert_ne!(end.result, GameResult::Aborted);
    let stored = record(&instance, game.id).await;
    assert_eq!(stored["status"], "over");
    assert_eq!(stored["rated"], false);
    world.cleanup().await;
}

/// Plays the first legal move from `ws`'s point of view until `ws`'s
/// player has made one; the ply played.
async fn resign_game(a: &mut Ws, b: &mut Ws) {
    a.send(json!({"t": "resign"})).await;
    a.until(over).await;
    b.until(over).await;
}

#[actix_web::test]
async fn rematches_swap_sides() {
    let (world, instance) = World::with_instance().await;
    // Between two players: an offer, then the acceptance.
    let Seated {
        south: (south, south_token),
        north: (north, _),
        mut a,
        mut b,
        ..
    } = instance.casual_seated(&world, "mangala").await;
    a.send(json!({"t": "rematch"})).await;
    a.expect_error(ErrorCode::NotAllowed).await;
    resign_game(&mut a, &mut b).await;
    a.send(json!({"t": "rematch"})).await;
    for socket in [&mut a, &mut b] {
        let by = socket
            .until(|message| match message {
                ServerMessage::RematchOffer { by } => Some(by),
                _ => None,
            })
            .await;
        assert_eq!(by, Side::South);
    }
    b.send(json!({"t": "rematch"})).await;
    let mut next = None;
    for socket in [&mut a, &mut b] {
        let game_id = socket
            .until(|message| match message {
                ServerMessage::Rematch { game_id, .. } => Some(game_id),
                _ => None,
            })
            .await;
        assert!(next.is_none_or(|seen| seen == game_id));
        next = Some(game_id);
    }
    let next = next.unwrap();
    let stored = record(&instance, next).await;
    assert_eq!(stored["seats"][0]["player"], north.to_string());
    assert_eq!(stored["seats"][1]["player"], south.to_string());
    // Asking again points at the same game.
    a.send(json!({"t": "rematch"})).await;
    let again = a
        .until(|message| match message {
            ServerMessage::Rematch { game_id, .. } => Some(game_id),
            _ => None,
        })
        .await;
    assert_eq!(again, next);

    // Against the AI the next game starts at once, sides swapped.
    let game = instance.casual("kalah", [seat(south), beginner()]).await;
    let (mut c, _) = instance.play(&game, &south_token).await;
    c.send(json!({"t": "resign"})).await;
    c.until(over).await;
    c.send(json!({"t": "rematch"})).await;
    let next = c
        .until(|message| match message {
            ServerMessage::Rematch { game_id, .. } => Some(game_id),
            _ => None,
        })
        .await;
    let stored = record(&instance, next).await;
    assert_eq!(stored["seats"][0]["ai"], "beginner");
    assert_eq!(stored["seats"][1]["player"], south.to_string());
    world.cleanup().await;
}

#[actix_web::test]
async fn a_hotseat_game_undoes_one_move_at_a_time() {
    let (world, instance) = World::with_instance().await;
    let (both, token) = world.player("Both").await;
    let game = instance
        .create(json!({"variant": "oware"}), [seat(both), seat(both)], false)
        .await;
    let (mut ws, state) = instance.play(&game, &token).await;
    assert_eq!(state.you, Some(Side::South));
    ws.play_move(1, 1).await;
    assert_eq!(ws.moved().await.by, Side::South);
    ws.play_move(1, 2).await;
    assert_eq!(ws.moved().await.by, Side::North);
    ws.send(json!({"t": "undo"})).await;
    let undone = ws
        .until(|message| match message {
            ServerMessage::Undone(undone) => Some(undone),
            _ => None,
        })
        .await;
    assert_eq!((undone.ply, undone.turn), (1, Some(Side::North)));
    world.cleanup().await;
}

/// Seat 0's player of a stored game.
async fn game_seat_player(world: &World, game: Uuid) -> Uuid {
    sqlx::query_scalar("SELECT seat0_player FROM games WHERE id = $1")
        .bind(game)
        .fetch_one(&world.stores.postgres)
        .await
        .unwrap()
}

async fn room_game(
    world: &World,
    instance: &Instance,
) -> (mancala_proto::game::CreatedGame, String, String) {
    let ((south, south_token), (north, north_token)) = world.two_players().await;
    let game = instance
        .create_with(json!({
            "variant": {"variant": "kalah"},
            "seats": [seat(south), seat(north)],
            "room": true,
        }))
        .await;
    (game, south_token, north_token)
}

/// A room game both players joined, South having moved once.
async fn room_game_under_way(
    world: &World,
    instance: &Instance,
) -> (mancala_proto::game::CreatedGame, Ws, Ws) {
    let (game, south_token, north_token) = room_game(world, instance).await;
    let (mut a, _) = instance.play(&game, &south_token).await;
    let (mut b, _) = instance.play(&game, &north_token).await;
    a.play_move(1, 1).await;
    a.moved().await;
    b.moved().await;
    (game, a, b)
}

#[actix_web::test]
async fn a_room_nobody_is_in_closes_after_30_minutes() {
    let (world, instance) = World::with_instance().await;
    let (game, south_token, north_token) = room_game(&world, &instance).await;
    let (mut a, state) = instance.play(&game, &south_token).await;
    assert!(state.room.is_some());
    let (mut b, _) = instance.play(&game, &north_token).await;
    a.play_move(1, 1).await;
    a.moved().await;
    b.moved().await;
    b.play_move(1, 2).await;
    a.moved().await;
    drop(a);
    drop(b);
    // Once the server has seen both go (the room records when it emptied)...
    for _ in 0..100 {
        let idle: bool = sqlx::query_scalar("SELECT idle_since IS NOT NULL FROM rooms")
            .fetch_one(&world.stores.postgres)
            .await
            .unwrap();
        if idle {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    // ...not yet closed after 29 minutes, closed after 30.
    live_then_aborted(
        &world,
        &instance,
        game.id,
        29 * 60_000,
        60_000,
        "room_closed",
    )
    .await;
    world.cleanup().await;
}

#[actix_web::test]
async fn a_game_nobody_ever_opens_is_aborted_in_time() {
    let (world, instance) = World::with_instance().await;
    let ((south, _), (north, _)) = world.two_players().await;
    let rated = instance.rated("kalah", [seat(south), seat(north)]).await;
    let casual = instance.casual("kalah", [seat(south), seat(north)]).await;
    // Nobody hosts it, so no host aborts the rated one at the first-move
    // deadline; the sweeper does, once a host surely would have.
    live_then_aborted(&world, &instance, rated.id, 61_000, 30_000, "no_start").await;
    // An untimed casual game has no such deadline: it goes once abandoned.
    live_then_aborted(&world, &instance, casual.id, 0, 600_000, "abandoned").await;
    let charged: Vec<(Uuid, Uuid, String)> =
        sqlx::query_as("SELECT game_id, player_id, kind::text FROM fair_play_offences")
            .fetch_all(&world.stores.postgres)
            .await
            .unwrap();
    assert_eq!(
        charged,
        [(rated.id, south, "no_start".to_owned())],
        "the sweeper charges the side that never started, as its host would have"
    );
    world.cleanup().await;
}

#[actix_web::test]
async fn a_room_closes_24_hours_after_it_opened() {
    let (world, instance) = World::with_instance().await;
    let (game, mut a, mut b) = room_game_under_way(&world, &instance).await;
    world.clock.advance(24 * 3600 * 1000);
    for socket in [&mut a, &mut b] {
        let end = socket.until(over).await;
        assert_eq!(
            (end.result, end.reason),
            (GameResult::Aborted, EndReason::RoomClosed)
        );
        assert_eq!(socket.closed().await.0, Some(CLOSE_ROOM_CLOSED));
    }
    let stored = record(&instance, game.id).await;
    assert_eq!(
        stored["status"],
        serde_json::to_value(GameStatus::Aborted).unwrap()
    );
    world.cleanup().await;
}

#[actix_web::test]
async fn a_finished_room_game_is_closed_to_its_players_when_the_room_s_day_ends() {
    let (world, instance) = World::with_instance().await;
    let (game, mut a, mut b) = room_game_under_way(&world, &instance).await;
    resign_game(&mut a, &mut b).await;
    // Still open a moment before the day ends: a rematch would be made.
    world.clock.advance(24 * 3600 * 1000 - 60_000);
    let moment = std::time::Duration::from_millis(300);
    assert_eq!(a.closed_within(moment).await, None);
    assert_eq!(b.closed_within(moment).await, None);
    // Then its sockets close with the room-closed code: the finished game
    // offers nothing the server would refuse.
    world.clock.advance(60_000);
    for socket in [&mut a, &mut b] {
        assert_eq!(socket.closed().await.0, Some(CLOSE_ROOM_CLOSED));
    }
    // A player who comes back is told the same at once.
    let south = game_seat_player(&world, game.id).await;
    let (mut again, _) = instance.play(&game, &world.token(south)).await;
    assert_eq!(again.closed().await.0, Some(CLOSE_ROOM_CLOSED));
    world.cleanup().await;
}

#[actix_web::test]
async fn a_finished_game_whose_series_moved_on_unloads_when_its_sockets_close() {
    let (world, instance) = World::with_instance().await;
    let Seated { mut a, mut b, .. } = instance.casual_seated(&world, "kalah").await;
    resign_game(&mut a, &mut b).await;
    a.send(json!({"t": "rematch"})).await;
    b.send(json!({"t": "rematch"})).await;
    a.until(|message| match message {
        ServerMessage::Rematch { .. } => Some(()),
        _ => None,
    })
    .await;
    // The next game is hosted here from its creation, beside the old one.
    assert_eq!(instance.hosted.hosted(), 2);
    drop(a);
    drop(b);
    // No clock advance: the old game goes at once, the new one waits for
    // its players.
    for _ in 0..100 {
        if instance.hosted.hosted() == 1 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(instance.hosted.hosted(), 1, "the finished game unloaded");
    world.cleanup().await;
}
