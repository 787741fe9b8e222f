//! Post-game analysis (only of a finished game, exact where the solver
//! proves it, and kept) and hints (only where no one else is hurt).

use mancala_ai::{Budget, Solver};
use mancala_proto::ErrorCode;
use mancala_proto::game::{GameAnalysis, ServerMessage};
use mancala_rules::{Game, Kalah, Pit, Side};
use serde_json::json;

use mancala_platform::ExposeSecret;
use mancala_platform::testing::database_url;

use crate::helpers::{World, beginner, seat};

#[actix_web::test]
async fn a_finished_kalah_game_is_analysed_with_values_a_solve_confirms() {
    let world = World::new().await;
    let instance = patient_instance(&world, &[]).await;
    let (human, token) = world.player("Human").await;
    let game = against_beginner(&instance, human).await;
    let playing = instance.play(&game, &token).await;
    let path = format!("/v1/games/{}/analysis", game.id);
    // A game in progress is not analysed: that would be a second brain.
    let (status, body) = instance.get(&path).await;
    assert_eq!((status, body["code"].as_str()), (409, Some("not_allowed")));
    play_to_the_end(playing).await;
    let (status, body) = instance
        .get_within(&path, std::time::Duration::from_secs(300))
        .await;
    assert_eq!(status, 200, "{body}");
    let analysis: GameAnalysis = serde_json::from_value(body.clone()).unwrap();
    let (_, record) = instance.get(&format!("/v1/games/{}", game.id)).await;
    let moves = record["moves"].as_array().unwrap();
    assert_eq!(analysis.moves.len(), moves.len());
    assert!(
        analysis.complete,
        "a short game is analysed within the deadline"
    );

    // Three proved positions, checked by a solve of their own.
    let mut replay = Game::new(Kalah::default());
    let mut confirmed = 0;
    for judged in &analysis.moves {
        if judged.exact && confirmed < 3 {
            let solved = Solver::new(1 << 20)
                .solve(replay.position(), &Budget::unlimited())
                .unwrap();
            assert_eq!(
                judged.before,
                Some(f64::from(solved.value)),
                "ply {}",
                judged.ply
            );
            let best: Vec<u8> = solved.best.iter().map(|pit| pit.get()).collect();
            assert_eq!(judged.best, best, "ply {}", judged.ply);
            assert_eq!(judged.loss == Some(0.0), best.contains(&judged.pit));
            confirmed += 1;
        }
        replay.play(Pit::new(judged.pit).unwrap()).unwrap();
    }
    assert_eq!(confirmed, 3);
    let score = &record["score"];
    let last = analysis.moves.last().unwrap();
    assert_eq!(
        last.after,
        Some(score[0].as_f64().unwrap() - score[1].as_f64().unwrap())
    );

    // Asked again, the same analysis, kept.
    let (status, again) = instance.get(&path).await;
    assert_eq!((status, &again), (200, &body));
    let (status, missing) = instance
        .get(&format!("/v1/games/{}/analysis", uuid::Uuid::now_v7()))
        .await;
    assert_eq!((status, missing["code"].as_str()), (404, Some("not_found")));

    // Kept in Postgres for every instance: another one, which would work
    // out nothing for a stranger (its limit is 0), serves it as it is.
    wait_until_kept(&world, game.id).await;
    let other = world
        .instance_with(
            &database_url(&world.stores.database),
            &[("APP_LIMIT_ANALYSES_PER_CALLER", "0/600")],
        )
        .await;
    let (status, from_store) = other.get(&path).await;
    assert_eq!((status, from_store), (200, body));
    world.cleanup().await;
}

/// An instance whose analyses have all the time they need (they run at the
/// lowest priority: on a machine busy with the other tests the test checks
/// what they work out, not how fast), with `more` settings.
async fn patient_instance(world: &World, more: &[(&str, &str)]) -> crate::helpers::Instance {
    // Normal priority: on a machine busy with the other tests, idle AI
    // workers may not run for many seconds.
    let mut settings = vec![
        ("APP_ANALYSIS_DEADLINE_MS", "300000"),
        ("APP_AI_PRIORITY", "normal"),
    ];
    settings.extend_from_slice(more);
    world
        .instance_with(&database_url(&world.stores.database), &settings)
        .await
}

/// A casual Kalah game of `human` against the Beginner AI.
async fn against_beginner(
    instance: &crate::helpers::Instance,
    human: uuid::Uuid,
) -> mancala_proto::game::CreatedGame {
    instance.casual("kalah", [seat(human), beginner()]).await
}

/// The human (south) plays its rightmost pit with stones until the game is
/// over.
async fn play_to_the_end((mut ws, state): (crate::helpers::Ws, mancala_proto::game::GameState)) {
    let (mut turn, mut legal, mut ply) = (state.turn, state.legal, state.ply);
    loop {
        if turn == Some(Side::South) {
            ws.play_move(legal[legal.len() - 1], ply + 1).await;
            turn = None;
        }
        match ws.message().await {
            ServerMessage::Over(_) => break,
            ServerMessage::Moved(moved) => {
                (turn, legal, ply) = (moved.turn, moved.legal, moved.ply)
            }
            _ => {}
        }
    }
}

/// Waits until the analysis of `game` is in Postgres (its keeper writes it
/// just after answering).
async fn wait_until_kept(world: &World, game: uuid::Uuid) {
    let url = database_url(&world.stores.database);
    let postgres = sqlx::PgPool::connect(url.expose_secret()).await.unwrap();
    // An analysis takes seconds on a free core, many more on a machine
    // busy with other tests.
    for _ in 0..2_400 {
        let kept: i64 = sqlx::query_scalar("SELECT count(*) FROM game_analyses WHERE game_id = $1")
            .bind(game)
            .fetch_one(&postgres)
            .await
            .unwrap();
        if kept == 1 {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("the analysis of {game} was never kept");
}

#[actix_web::test]
async fn a_game_watched_as_it_ends_is_analysed_without_anyone_asking() {
    let world = World::new().await;
    let instance = patient_instance(&world, &[]).await;
    let (human, token) = world.player("Human").await;
    let game = against_beginner(&instance, human).await;
    let mut watcher = instance.connect(&game.watch_path).await;
    watcher.state().await;
    let (mut ws, state) = instance.play(&game, &token).await;
    // The host knows it is watched once the count has come round.
    ws.until(|message| match message {
        ServerMessage::Watchers { count } if count > 0 => Some(()),
        _ => None,
    })
    .await;
    play_to_the_end((ws, state)).await;
    // The players and watchers about to ask join this one analysis, which
    // queued ahead of strangers; nobody asked for it.
    wait_until_kept(&world, game.id).await;
    world.cleanup().await;
}

#[actix_web::test]
async fn strangers_have_so_many_analyses_worked_out_and_the_players_are_never_refused() {
    let world = World::new().await;
    let instance = patient_instance(&world, &[("APP_LIMIT_ANALYSES_PER_CALLER", "1/600")]).await;
    let (human, token) = world.player("Human").await;
    let mut paths = Vec::new();
    for _ in 0..2 {
        let game = against_beginner(&instance, human).await;
        play_to_the_end(instance.play(&game, &token).await).await;
        paths.push(format!("/v1/games/{}/analysis", game.id));
    }
    let wait = std::time::Duration::from_secs(300);
    // A signed-out stranger has one worked out, then is told when to come
    // back; a signed-in one counts on their own.
    let (status, first) = instance.get_within(&paths[0], wait).await;
    assert_eq!(status, 200, "{first}");
    let (status, refused) = instance.get_within(&paths[1], wait).await;
    assert_eq!(status, 429, "{refused}");
    assert_eq!(refused["code"], "rate_limited");
    assert!(refused["retry_after"].as_u64().is_some_and(|secs| secs > 0));
    // One already worked out is served to anyone, counted against nobody.
    let (status, again) = instance.get_within(&paths[0], wait).await;
    assert_eq!((status, again), (200, first));
    // The game's player, past any count.
    let (status, theirs) = instance.get_as(&paths[1], &token, wait).await;
    assert_eq!(status, 200, "{theirs}");
    let (_, stranger) = world.player("Stranger").await;
    let (status, _) = instance.get_as(&paths[1], &stranger, wait).await;
    assert_eq!(status, 200, "kept by now");
    world.cleanup().await;
}

#[actix_web::test]
async fn a_hint_comes_on_your_turn_against_the_ai_and_never_between_people() {
    let world = World::new().await;
    // Two hints a minute: each is a search on the workers every game's AI
    // shares.
    let instance = world
        .instance_with(
            &database_url(&world.stores.database),
            &[("APP_LIMIT_HINTS_PER_PLAYER", "2/60")],
        )
        .await;
    let (human, token) = world.player("Human").await;
    let game = instance
        .create(
            json!({"variant": "oware"}),
            [seat(human), json!({"ai": {"level": "advanced"}})],
            false,
        )
        .await;
    let (mut ws, state) = instance.play(&game, &token).await;
    ws.send(json!({"t": "hint"})).await;
    let (ply, pit) = ws
        .until(|message| match message {
            ServerMessage::Hint { ply, pit } => Some((ply, pit)),
            _ => None,
        })
        .await;
    assert_eq!(ply, state.ply + 1);
    assert!(state.legal.contains(&pit), "{pit} in {:?}", state.legal);
    // Asked again, a hint for the same ply; a third ask is one too many.
    ws.send(json!({"t": "hint"})).await;
    let again = ws
        .until(|message| match message {
            ServerMessage::Hint { ply, pit } => Some((ply, pit)),
            _ => None,
        })
        .await;
    assert_eq!(again.0, ply);
    assert!(state.legal.contains(&again.1));
    ws.send(json!({"t": "hint"})).await;
    ws.expect_error(ErrorCode::RateLimited).await;
    // The hint is a move like any other.
    ws.play_move(pit, ply).await;
    assert_eq!(ws.moved().await.ply, ply);

    // Between two people it would be a second brain: refused, rated or not.
    let (other, other_token) = world.player("Other").await;
    for rated in [false, true] {
        let game = instance
            .create(
                json!({"variant": "kalah"}),
                [seat(human), seat(other)],
                rated,
            )
            .await;
        let (mut a, _) = instance.play(&game, &token).await;
        let (_b, _) = instance.play(&game, &other_token).await;
        a.send(json!({"t": "hint"})).await;
        a.expect_error(ErrorCode::NotAllowed).await;
    }
    world.cleanup().await;
}
