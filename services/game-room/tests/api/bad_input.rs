//! Hostile and careless clients: every refusal has its code, and nothing
//! changes.

use awc::ws::Message;
use mancala_proto::ErrorCode;
use mancala_proto::error::{CLOSE_POLICY, CLOSE_TOO_BIG};
use serde_json::json;

use crate::helpers::{World, seat};

#[actix_web::test]
async fn sockets_refuse_what_they_must() {
    let (world, instance) = World::with_instance().await;
    let ((south, south_token), (north, _)) = world.two_players().await;
    let (_, stranger_token) = world.player("Stranger").await;
    let game = instance.casual("kalah", [seat(south), seat(north)]).await;

    // Not the first message: auth.
    let mut ws = instance.connect(&game.play_path).await;
    ws.play_move(1, 1).await;
    assert_eq!(
        ws.closed().await,
        (Some(CLOSE_POLICY), Some(ErrorCode::Unauthenticated))
    );
    // A forged token.
    let mut ws = instance.connect(&game.play_path).await;
    ws.send(json!({"t": "auth", "d": {"token": format!("{south_token}x")}}))
        .await;
    assert_eq!(
        ws.closed().await,
        (Some(CLOSE_POLICY), Some(ErrorCode::TokenInvalid))
    );
    // A player without a seat.
    let mut ws = instance.connect(&game.play_path).await;
    ws.send(json!({"t": "auth", "d": {"token": stranger_token}}))
        .await;
    assert_eq!(
        ws.closed().await,
        (Some(CLOSE_POLICY), Some(ErrorCode::Forbidden))
    );
    // An unknown game.
    let mut ws = instance
        .connect(&format!("/v1/games/{}/play", uuid::Uuid::new_v4()))
        .await;
    ws.send(json!({"t": "auth", "d": {"token": south_token}}))
        .await;
    assert_eq!(
        ws.closed().await,
        (Some(CLOSE_POLICY), Some(ErrorCode::NotFound))
    );

    // Seated: bad messages get errors and change nothing.
    let (mut ws, _) = instance.play(&game, &south_token).await;
    ws.send_text("{not json".into()).await;
    ws.expect_error(ErrorCode::MalformedJson).await;
    ws.send(json!({"t": "move", "d": {"pit": 1, "ply": 1, "cheat": true}}))
        .await;
    ws.expect_error(ErrorCode::UnknownField).await;
    ws.send(json!({"t": "teleport"})).await;
    ws.expect_error(ErrorCode::MalformedJson).await;
    ws.send_raw(Message::Binary(vec![1, 2, 3].into())).await;
    ws.expect_error(ErrorCode::MalformedJson).await;
    ws.send(json!({"t": "auth", "d": {"token": south_token}}))
        .await;
    ws.expect_error(ErrorCode::InvalidInput).await;
    ws.send(json!({"t": "move", "d": {"pit": 0, "ply": 1}}))
        .await;
    ws.expect_error(ErrorCode::PitOutOfRange).await;
    let (_, record) = instance.get(&format!("/v1/games/{}", game.id)).await;
    assert_eq!(record["moves"], json!([]));
    // A frame over the limit closes with 1009.
    ws.send_text(format!(
        r#"{{"t":"sync","d":{{"since":{}}}}}"#,
        "1".repeat(5000)
    ))
    .await;
    assert_eq!(ws.closed().await.0, Some(CLOSE_TOO_BIG));

    // A flood closes with 1008: 20 messages at once, then no more.
    let strict = world
        .instance_with(
            &mancala_platform::testing::database_url(&world.stores.database),
            &[("APP_WS_RATE", "20/1")],
        )
        .await;
    let other = strict
        .create(
            json!({"variant": "kalah"}),
            [seat(south), seat(north)],
            false,
        )
        .await;
    let (mut ws, _) = strict.play(&other, &south_token).await;
    for _ in 0..21 {
        ws.send(json!({"t": "ping"})).await;
    }
    assert_eq!(
        ws.closed().await,
        (Some(CLOSE_POLICY), Some(ErrorCode::RateLimited))
    );
    world.cleanup().await;
}

#[actix_web::test]
async fn a_socket_that_never_authenticates_is_closed_by_the_clock() {
    let (world, instance) = World::with_instance().await;
    let ((south, _), (north, _)) = world.two_players().await;
    let game = instance.casual("kalah", [seat(south), seat(north)]).await;
    let mut ws = instance.connect(&game.play_path).await;
    world.clock.advance(5_000);
    assert_eq!(
        ws.closed().await,
        (Some(CLOSE_POLICY), Some(ErrorCode::Unauthenticated))
    );
    world.cleanup().await;
}

#[actix_web::test]
async fn browsers_from_other_origins_are_refused() {
    let (world, instance) = World::with_instance().await;
    let ((south, _), (north, _)) = world.two_players().await;
    let game = instance.casual("kalah", [seat(south), seat(north)]).await;
    let url = format!("{}{}", instance.ws_base, game.watch_path);
    let refused = instance
        .client
        .ws(&url)
        .origin("https://evil.example")
        .connect()
        .await;
    assert!(refused.is_err(), "the upgrade is refused with 403");
    let allowed = instance
        .connect_with(&game.watch_path, Some("https://friends.example"))
        .await;
    drop(allowed);
    world.cleanup().await;
}

#[actix_web::test]
async fn only_services_create_games() {
    let (world, instance) = World::with_instance().await;
    let (south, _) = world.player("South").await;
    let body = json!({"variant": {"variant": "kalah"}, "seats": [seat(south), {"ai": {"level": "advanced"}}]});
    let (status, error) = instance
        .post("/internal/v1/games", body.clone(), None)
        .await;
    assert_eq!(
        (status, error["code"].as_str()),
        (401, Some("unauthenticated"))
    );
    let (status, error) = instance
        .post("/internal/v1/games", body.clone(), Some("guess"))
        .await;
    assert_eq!(
        (status, error["code"].as_str()),
        (401, Some("token_invalid"))
    );
    let (status, _) = instance
        .post(
            "/internal/v1/games",
            body,
            Some(crate::helpers::SERVICE_TOKEN),
        )
        .await;
    assert_eq!(status, 201);
    for (bad, why) in [
        (
            json!({"variant": {"variant": "kalah", "pits": 3}, "seats": [seat(south), seat(south)]}),
            "analysis board",
        ),
        (
            json!({"variant": {"variant": "oware"}, "seats": [seat(uuid::Uuid::new_v4()), seat(south)]}),
            "unknown player",
        ),
        (
            json!({"variant": {"variant": "oware"}, "seats": [seat(south), {"ai": {"level": "godlike"}}]}),
            "unknown level",
        ),
        (
            json!({"variant": {"variant": "oware"}, "seats": [seat(south), {"ai": {"level": "advanced"}}], "rated": true}),
            "rated vs AI",
        ),
    ] {
        let (status, error) = instance
            .post(
                "/internal/v1/games",
                bad,
                Some(crate::helpers::SERVICE_TOKEN),
            )
            .await;
        assert_eq!(
            (status, error["code"].as_str()),
            (400, Some("invalid_input")),
            "{why}"
        );
    }
    world.cleanup().await;
}

#[actix_web::test]
async fn silent_sockets_are_closed_by_the_clock() {
    let world = World::new().await;
    let database = mancala_platform::testing::database_url(&world.stores.database);
    let instance = world
        .instance_with(
            &database,
            &[
                ("APP_WS_TIMEOUT_SECS", "30"),
                ("APP_WS_PING_SECS", "10"),
                // The clock jumps minutes: the unplayed game must not be
                // aborted (and its sockets closed) on the first-move window
                // before the silence is seen.
                ("APP_FIRST_MOVE_SECS", "100000"),
            ],
        )
        .await;
    let ((south, south_token), (north, _)) = world.two_players().await;
    let game = instance.casual("kalah", [seat(south), seat(north)]).await;
    let (mut ws, _) = instance.play(&game, &south_token).await;
    // A socket that talks lives on, however the clock moves.
    for _ in 0..3 {
        world.clock.advance(20_000);
        ws.send(json!({"t": "ping"})).await;
        ws.until(|message| (message == mancala_proto::game::ServerMessage::Pong).then_some(()))
            .await;
    }
    // One that says nothing (not even pongs) is closed once 30 s of clock
    // pass without a word from it.
    let mut closed = None;
    for _ in 0..5 {
        world.clock.advance(30_000);
        if let Some(code) = ws
            .closed_within(std::time::Duration::from_millis(500))
            .await
        {
            closed = Some(code);
            break;
        }
    }
    assert_eq!(closed, Some(Some(CLOSE_POLICY)));
    world.cleanup().await;
}
