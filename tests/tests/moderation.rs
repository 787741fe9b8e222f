//! Moderation against the real `arena` process (issue 43): a report, the
//! moderator's mark, the ratings it gives back; the role checked on every
//! moderators' route; sanctions reaching the player's sockets and queue
//! tickets; the audit log, once per action and not to be edited.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, Instant};

use common::{Arena, PASSWORD, WAIT, play_plies};
use mancala_tests::harness::{Guest, Ws, call};
use serde_json::{Value, json};

/// Everyone who played a rated game is on the leaderboard (the defaults
/// want ten games and a settled deviation).
const EVERYONE_ON_THE_BOARD: [(&str, &str); 2] = [
    ("APP_LEADERBOARD_MIN_GAMES", "1"),
    ("APP_LEADERBOARD_MAX_RD", "500"),
];

/// A moderators' call: status and body.
async fn moderate(
    arena: &Arena,
    who: &Guest,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    call(
        method,
        format!("{}{path}", arena.base()),
        body,
        Some(&who.token),
    )
    .await
}

async fn act(arena: &Arena, moderator: &Guest, player: &Guest, action: Value) -> Value {
    let (status, done) = moderate(
        arena,
        moderator,
        "POST",
        &format!("/v1/mod/players/{}/actions", player.id),
        Some(action),
    )
    .await;
    assert_eq!(status, 200, "{done}");
    done
}

/// Waits for a ratings recompute to finish: its status.
async fn recomputed(arena: &Arena, moderator: &Guest, id: i64) -> Value {
    let deadline = Instant::now() + WAIT;
    loop {
        let (status, body) = moderate(
            arena,
            moderator,
            "GET",
            &format!("/v1/mod/recomputes/{id}"),
            None,
        )
        .await;
        assert_eq!(status, 200, "{body}");
        if body["done"] == true {
            return body;
        }
        assert!(
            Instant::now() < deadline,
            "recompute {id} never done: {body}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A rated Kalah game between `winner` and `loser`: both move three
/// times (past the quick-resign plies), then the loser resigns.
async fn rated_win(arena: &Arena, winner: &Guest, loser: &Guest) -> String {
    let code = arena.invite(winner, Arena::rated_invite()).await;
    let (status, accepted) = arena.accept(loser, &code).await;
    assert_eq!(status, 201, "{accepted}");
    let game = accepted["game_id"].as_str().unwrap().to_owned();
    let (winner_ws, state) = arena.play(&game, winner).await;
    let (loser_ws, _) = arena.play(&game, loser).await;
    let winner_first = state["seats"][0]["player"] == winner.id.as_str();
    let [mut first, mut second] = if winner_first {
        [winner_ws, loser_ws]
    } else {
        [loser_ws, winner_ws]
    };
    play_plies([&mut first, &mut second], &state, 6).await;
    let (loser_ws, winner_ws) = if winner_first {
        (&mut second, &mut first)
    } else {
        (&mut first, &mut second)
    };
    loser_ws.send(json!({"t": "resign"})).await;
    let over = winner_ws.until("over", WAIT).await;
    assert_eq!(over["reason"], "resign", "{over}");
    game
}

/// Waits until the rating service has nothing left to rate.
async fn all_rated(arena: &Arena) {
    let deadline = Instant::now() + WAIT;
    loop {
        let queued: i64 =
            sqlx::query_scalar("SELECT count(*) FROM rating_outbox WHERE processed_at IS NULL")
                .fetch_one(&arena.stores.postgres)
                .await
                .unwrap();
        if queued == 0 {
            return;
        }
        assert!(Instant::now() < deadline, "{queued} games never rated");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A player's Kalah rating, deviation and rated games (1500, 500, 0 for
/// one who never played one).
async fn kalah(arena: &Arena, who: &Guest) -> (f64, f64, i64) {
    sqlx::query_as(
        "SELECT rating, rd, games::bigint FROM ratings WHERE player_id = $1::uuid AND variant = 'kalah'",
    )
    .bind(&who.id)
    .fetch_optional(&arena.stores.postgres)
    .await
    .unwrap()
    .unwrap_or((1500.0, 500.0, 0))
}

async fn leaderboard_ids(arena: &Arena) -> Vec<String> {
    let (status, board) = call(
        "GET",
        format!("{}/v1/leaderboard/kalah?limit=100", arena.base()),
        None,
        None,
    )
    .await;
    assert_eq!(status, 200, "{board}");
    board["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| entry["player"].as_str().unwrap().to_owned())
        .collect()
}

/// The boosting case from end to end. A farmer wins rated games from two
/// accounts it controls; an honest player later beats one of them (so the
/// honest rating depends on the farm). A report, then a moderator marks
/// the farmer a booster: every farmed game counts for nobody, the farmer
/// and the sybils are as if those games never happened, and the honest
/// game is rated again between two fresh accounts: exactly (to the bit)
/// what a control pair who played only that game holds. The history says
/// which mark voided each game. Lifting the mark gives everything back;
/// closing the account takes it off the board, reopening puts it back.
#[actix_rt::test]
async fn a_marked_booster_loses_the_farmed_points_on_both_sides_and_the_history_says_why() {
    let arena = Arena::start(&EVERYONE_ON_THE_BOARD).await;
    let boss = arena.admin("boss").await;
    let farmer = arena.registered("farmer").await;
    let sybils = [
        arena.registered("sybil_a").await,
        arena.registered("sybil_b").await,
    ];
    let honest = arena.registered("honest").await;
    let (control_winner, control_loser) = (
        arena.registered("control_a").await,
        arena.registered("control_b").await,
    );
    let mut farmed = Vec::new();
    for sybil in &sybils {
        for _ in 0..3 {
            farmed.push(rated_win(&arena, &farmer, sybil).await);
        }
    }
    all_rated(&arena).await;
    rated_win(&arena, &honest, &sybils[0]).await;
    rated_win(&arena, &control_winner, &control_loser).await;
    all_rated(&arena).await;
    let farmer_before = kalah(&arena, &farmer).await;
    assert!(farmer_before.0 > 1500.0, "the farm paid: {farmer_before:?}");
    assert!(leaderboard_ids(&arena).await.contains(&farmer.id));
    let honest_before = kalah(&arena, &honest).await;
    assert_ne!(
        honest_before,
        kalah(&arena, &control_winner).await,
        "beating a farmed account is worth something else than beating a fresh one"
    );

    // An honest player reports the farmer, naming one of the games.
    let (status, filed) = call(
        "POST",
        format!("{}/v1/reports", arena.base()),
        Some(
            json!({"player": farmer.id, "game": farmed[0], "reason": "boosting",
                    "text": "wins only against new accounts"}),
        ),
        Some(&honest.token),
    )
    .await;
    assert_eq!(status, 201, "{filed}");
    let (_, queue) = moderate(&arena, &boss, "GET", "/v1/mod/reports", None).await;
    assert_eq!(
        queue["accounts"][0]["player"]["id"],
        farmer.id.as_str(),
        "{queue}"
    );
    let (_, file) = moderate(
        &arena,
        &boss,
        "GET",
        &format!("/v1/mod/players/{}", farmer.id),
        None,
    )
    .await;
    let opponents: Vec<&str> = file["opponents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["player"]["id"].as_str().unwrap())
        .collect();
    assert!(opponents.contains(&sybils[0].id.as_str()), "{file}");
    assert!(
        !file["linked"].as_array().unwrap().is_empty(),
        "one address: {file}"
    );

    let done = act(
        &arena,
        &boss,
        &farmer,
        json!({"action": "mark", "mark": "booster", "reason": "farmed two new accounts"}),
    )
    .await;
    let status = recomputed(&arena, &boss, done["recompute"].as_i64().unwrap()).await;
    assert!(status["ratings_changed"].as_u64().unwrap() >= 4, "{status}");

    // The farmed points are gone on both sides.
    assert_eq!(kalah(&arena, &farmer).await, (1500.0, 500.0, 0));
    assert_eq!(kalah(&arena, &sybils[1]).await, (1500.0, 500.0, 0));
    // The honest game is rated again as between two fresh accounts.
    assert_eq!(
        kalah(&arena, &honest).await,
        kalah(&arena, &control_winner).await
    );
    assert_eq!(
        kalah(&arena, &sybils[0]).await,
        kalah(&arena, &control_loser).await
    );
    let board = leaderboard_ids(&arena).await;
    assert!(
        !board.contains(&farmer.id),
        "a marked account leaves the leaderboard"
    );
    assert!(board.contains(&honest.id));
    // The history keeps the games and says why they count for nothing.
    let (_, history) = call(
        "GET",
        format!("{}/v1/players/{}/ratings/kalah", arena.base(), sybils[1].id),
        None,
        None,
    )
    .await;
    let points = history.as_array().unwrap();
    assert_eq!(points.len(), 3, "{history}");
    assert!(
        points.iter().all(|p| p["voided_by"] == "booster"),
        "{history}"
    );
    // The report is answered by the action, and the player is told.
    let (_, queue) = moderate(&arena, &boss, "GET", "/v1/mod/reports", None).await;
    assert_eq!(queue["accounts"], json!([]), "{queue}");

    // Lifted: the farm counts again, to the bit.
    let sanction = done["sanction"]["id"].as_i64().unwrap();
    let (status, lifted) = moderate(
        &arena,
        &boss,
        "POST",
        &format!("/v1/mod/sanctions/{sanction}/lift"),
        Some(json!({"reason": "appeal granted"})),
    )
    .await;
    assert_eq!(status, 200, "{lifted}");
    recomputed(&arena, &boss, lifted["recompute"].as_i64().unwrap()).await;
    assert_eq!(kalah(&arena, &farmer).await, farmer_before);
    assert_eq!(kalah(&arena, &honest).await, honest_before);
    assert!(leaderboard_ids(&arena).await.contains(&farmer.id));

    // A closed account leaves the board with its rating kept; reopened, it
    // is back.
    let closed = act(
        &arena,
        &boss,
        &farmer,
        json!({"action": "close", "reason": "sold"}),
    )
    .await;
    recomputed(&arena, &boss, closed["recompute"].as_i64().unwrap()).await;
    assert!(!leaderboard_ids(&arena).await.contains(&farmer.id));
    assert_eq!(kalah(&arena, &farmer).await, farmer_before);
    let reopened = act(
        &arena,
        &boss,
        &farmer,
        json!({"action": "reopen", "reason": "bought back"}),
    )
    .await;
    recomputed(&arena, &boss, reopened["recompute"].as_i64().unwrap()).await;
    assert!(leaderboard_ids(&arena).await.contains(&farmer.id));
    arena.stores.cleanup().await.unwrap();
}

/// Every path under `/v1/mod/` in the OpenAPI document the process serves,
/// each method, with made-up identifiers: 401 without a token, 403 for a
/// player, and the audit log 403 for a moderator who is not an admin.
#[actix_rt::test]
async fn every_moderators_route_refuses_a_player_route_by_route() {
    let arena = Arena::start(&[]).await;
    let player = arena.registered("plain").await;
    let boss = arena.admin("boss").await;
    let helper = arena.registered("helper").await;
    act(
        &arena,
        &boss,
        &helper,
        json!({"action": "set_role", "role": "moderator", "reason": "joins the team"}),
    )
    .await;
    let helper = arena.sign_in("helper").await;
    let (_, document) = call(
        "GET",
        format!("{}/v1/openapi.json", arena.base()),
        None,
        None,
    )
    .await;
    let mut checked = 0;
    for (path, item) in document["paths"].as_object().unwrap() {
        if !path.starts_with("/v1/mod/") {
            continue;
        }
        let concrete = path
            .replace("{id}", "0190d2d4-0000-7000-8000-000000000001")
            .replace(
                "/sanctions/0190d2d4-0000-7000-8000-000000000001",
                "/sanctions/1",
            )
            .replace(
                "/reports/0190d2d4-0000-7000-8000-000000000001",
                "/reports/1",
            )
            .replace(
                "/recomputes/0190d2d4-0000-7000-8000-000000000001",
                "/recomputes/1",
            );
        for method in item.as_object().unwrap().keys() {
            let method = method.to_uppercase();
            let body = (method == "POST").then(|| json!({}));
            let url = format!("{}{concrete}", arena.base());
            let (status, _) = call(&method, url.clone(), body.clone(), None).await;
            assert_eq!(status, 401, "{method} {path} without a token");
            let (status, error) =
                call(&method, url.clone(), body.clone(), Some(&player.token)).await;
            assert_eq!(
                (status, error["code"].as_str()),
                (403, Some("forbidden")),
                "{method} {path} as a player: {error}"
            );
            if path == "/v1/mod/log" {
                let (status, _) = call(&method, url, body, Some(&helper.token)).await;
                assert_eq!(status, 403, "the audit log is for admins");
            } else {
                let (status, _) = call(&method, url, body, Some(&helper.token)).await;
                assert_ne!(status, 403, "{method} {path} as a moderator");
            }
            checked += 1;
        }
    }
    assert!(checked >= 9, "only {checked} routes under /v1/mod/");
    // A role taken away is gone from the token at once: its sessions end.
    act(
        &arena,
        &boss,
        &helper,
        json!({"action": "set_role", "role": "player", "reason": "left the team"}),
    )
    .await;
    let (status, _) = moderate(&arena, &helper, "GET", "/v1/mod/reports", None).await;
    assert_eq!(status, 401, "the old token is revoked");
    let helper = arena.sign_in("helper").await;
    let (status, _) = moderate(&arena, &helper, "GET", "/v1/mod/reports", None).await;
    assert_eq!(status, 403);
    arena.stores.cleanup().await.unwrap();
}

fn queue_join() -> Value {
    json!({"t": "queue_join", "d": {"variant": "kalah",
           "time_control": {"initial_secs": 180, "increment_secs": 2}}})
}

/// Whether `who` holds a ticket in the Kalah 3+2 queue.
async fn ticket(arena: &Arena, who: &Guest) -> bool {
    let key = format!("{}queue:{{queues}}:kalah:3+2:tickets", arena.stores.prefix);
    redis::cmd("HEXISTS")
        .arg(&key)
        .arg(&who.id)
        .query_async(&mut arena.stores.redis.connection())
        .await
        .unwrap()
}

/// A ranked ban takes the player out of every queue at once and tells
/// their open lobby why and until when; a new join is refused. Closing
/// the account ends every socket it has (lobby and game) within a second,
/// and it can no longer sign in; reopened, it can.
#[actix_rt::test]
async fn a_ban_ends_queue_tickets_and_a_closed_account_loses_its_sockets() {
    let arena = Arena::start(&EVERYONE_ON_THE_BOARD).await;
    let boss = arena.admin("boss").await;
    let cheat = arena.registered("cheat").await;
    let friend = arena.registered("friend").await;
    let mut lobby = arena.lobby(&cheat).await;
    lobby.send(queue_join()).await;
    lobby.until("queue_status", WAIT).await;
    assert!(ticket(&arena, &cheat).await);

    act(
        &arena,
        &boss,
        &cheat,
        json!({"action": "ban_ranked", "hours": 24, "reason": "engine use in ranked"}),
    )
    .await;
    let told = lobby.until("fair_play", WAIT).await;
    let sanction = &told["sanctions"][0];
    assert_eq!(sanction["kind"], "ranked_ban", "{told}");
    assert_eq!(sanction["reason"], "engine use in ranked");
    let ends = sanction["ends_in_secs"].as_u64().unwrap();
    assert!((86_390..=86_400).contains(&ends), "{told}");
    assert!(!ticket(&arena, &cheat).await, "out of the queue at once");
    lobby.send(queue_join()).await;
    let refused = lobby.until("error", WAIT).await;
    assert_eq!(refused["code"], "ranked_banned", "{refused}");
    let (_, standing) = call(
        "GET",
        format!("{}/v1/me/fair-play", arena.base()),
        None,
        Some(&cheat.token),
    )
    .await;
    assert_eq!(standing["sanctions"][0]["kind"], "ranked_ban", "{standing}");

    // A casual game goes on meanwhile; closing the account ends it all.
    let game = arena.room(&cheat, &friend, false, None).await;
    let (mut play, _) = arena.play(&game, &cheat).await;
    act(
        &arena,
        &boss,
        &cheat,
        json!({"action": "close", "reason": "second account of a cheat"}),
    )
    .await;
    let closed_at = Instant::now();
    let mut play_closed = play_close(&mut play).await;
    let lobby_closed = lobby.close_code(Duration::from_secs(2)).await;
    assert!(play_closed.take().is_some(), "the game's socket closes");
    assert!(lobby_closed.is_some(), "the lobby closes");
    assert!(
        closed_at.elapsed() < Duration::from_secs(2),
        "{:?}",
        closed_at.elapsed()
    );
    let (status, error) = call(
        "POST",
        format!("{}/v1/auth/login", arena.base()),
        Some(json!({"username": "cheat", "password": PASSWORD})),
        None,
    )
    .await;
    assert_eq!(
        (status, error["code"].as_str()),
        (403, Some("account_closed")),
        "{error}"
    );
    assert!(!leaderboard_ids(&arena).await.contains(&cheat.id));
    // Its name stays taken.
    let taken = call(
        "POST",
        format!("{}/v1/auth/register", arena.base()),
        Some(json!({"username": "cheat", "password": PASSWORD})),
        Some(&arena.guest().await.token),
    )
    .await;
    assert_eq!(taken.0, 409, "{}", taken.1);
    act(
        &arena,
        &boss,
        &cheat,
        json!({"action": "reopen", "reason": "appeal granted"}),
    )
    .await;
    arena.sign_in("cheat").await;
    arena.stores.cleanup().await.unwrap();
}

/// The close code of a socket about to be closed by the server.
async fn play_close(ws: &mut Ws) -> Option<u16> {
    ws.close_code(Duration::from_secs(2)).await
}

/// Each action on the site and on the command line is one line of the
/// audit log, with its actor and reason; the database refuses to change or
/// remove a line, whoever asks.
#[actix_rt::test]
async fn every_action_is_in_the_audit_log_once_and_the_log_cannot_be_edited() {
    let arena = Arena::start(&[]).await;
    let boss = arena.admin("boss").await;
    let troll = arena.registered("troll").await;
    let reporter = arena.registered("reporter").await;
    let (status, filed) = call(
        "POST",
        format!("{}/v1/reports", arena.base()),
        Some(json!({"player": troll.id, "reason": "offensive_name"})),
        Some(&reporter.token),
    )
    .await;
    assert_eq!(status, 201, "{filed}");
    // Filing the same report again adds nothing.
    let again = call(
        "POST",
        format!("{}/v1/reports", arena.base()),
        Some(json!({"player": troll.id, "reason": "offensive_name"})),
        Some(&reporter.token),
    )
    .await;
    assert_eq!((again.0, &again.1["id"]), (200, &filed["id"]));
    let warn = act(
        &arena,
        &boss,
        &troll,
        json!({"action": "warn", "reason": "mind the name"}),
    )
    .await;
    act(
        &arena,
        &boss,
        &troll,
        json!({"action": "rename", "name": "Renamed1", "reason": "offensive"}),
    )
    .await;
    act(
        &arena,
        &boss,
        &troll,
        json!({"action": "ban_ranked", "hours": 2, "reason": "stalling"}),
    )
    .await;
    let (status, note) = moderate(
        &arena,
        &boss,
        "POST",
        &format!("/v1/mod/players/{}/notes", troll.id),
        Some(json!({"text": "talked to them"})),
    )
    .await;
    assert_eq!(status, 201, "{note}");
    let warning = warn["sanction"]["id"].as_i64().unwrap();
    moderate(
        &arena,
        &boss,
        "POST",
        &format!("/v1/mod/sanctions/{warning}/lift"),
        Some(json!({"reason": "heeded"})),
    )
    .await;
    // The same lift twice is refused, and not logged twice.
    let (status, _) = moderate(
        &arena,
        &boss,
        "POST",
        &format!("/v1/mod/sanctions/{warning}/lift"),
        Some(json!({"reason": "heeded"})),
    )
    .await;
    assert_eq!(status, 404);
    // An action without a reason is refused and not logged.
    let (status, _) = moderate(
        &arena,
        &boss,
        "POST",
        &format!("/v1/mod/players/{}/actions", troll.id),
        Some(json!({"action": "warn", "reason": "  "})),
    )
    .await;
    assert_eq!(status, 400);

    let (status, page) = moderate(&arena, &boss, "GET", "/v1/mod/log?limit=200", None).await;
    assert_eq!(status, 200, "{page}");
    let actions: Vec<(String, Option<String>, String)> = page["entries"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .map(|e| {
            (
                e["action"].as_str().unwrap().to_owned(),
                e["actor"]["name"].as_str().map(str::to_owned),
                e["reason"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let boss_name = Some("boss".to_owned());
    assert_eq!(
        actions,
        vec![
            ("set_role".to_owned(), None, "the site's owner".to_owned()),
            (
                "warn".to_owned(),
                boss_name.clone(),
                "mind the name".to_owned()
            ),
            (
                "rename".to_owned(),
                boss_name.clone(),
                "offensive".to_owned()
            ),
            (
                "ban_ranked".to_owned(),
                boss_name.clone(),
                "stalling".to_owned()
            ),
            (
                "note".to_owned(),
                boss_name.clone(),
                "talked to them".to_owned()
            ),
            ("lift".to_owned(), boss_name, "heeded".to_owned()),
        ],
        "{page}"
    );
    // The rename answered the report.
    let (_, queue) = moderate(&arena, &boss, "GET", "/v1/mod/reports", None).await;
    assert_eq!(queue["accounts"], json!([]), "{queue}");

    for statement in [
        "UPDATE moderation_log SET reason = 'nothing happened'",
        "DELETE FROM moderation_log",
        "TRUNCATE moderation_log",
    ] {
        let refused = sqlx::query(statement)
            .execute(&arena.stores.postgres)
            .await
            .expect_err(statement);
        assert!(
            refused.to_string().contains("append-only"),
            "{statement}: {refused}"
        );
    }
    let lines: i64 = sqlx::query_scalar("SELECT count(*) FROM moderation_log")
        .fetch_one(&arena.stores.postgres)
        .await
        .unwrap();
    assert_eq!(lines, 6);
    arena.stores.cleanup().await.unwrap();
}

/// A player closes their own account after taking their data: the data
/// holds every game with its moves and every rating; the account is
/// signed out everywhere (its refresh token refused too), its username
/// forgotten, and its games stay, under an anonymous name.
#[actix_rt::test]
async fn a_player_takes_their_data_and_closes_their_account() {
    let arena = Arena::start(&[]).await;
    let leaver = arena.registered("leaver").await;
    let friend = arena.registered("pal").await;
    let game = rated_win(&arena, &leaver, &friend).await;
    all_rated(&arena).await;
    let (status, data) = call(
        "GET",
        format!("{}/v1/me/data", arena.base()),
        None,
        Some(&leaver.token),
    )
    .await;
    assert_eq!(status, 200, "{data}");
    assert_eq!(data["username"], "leaver");
    assert_eq!(data["games"][0]["game"]["id"], game.as_str(), "{data}");
    assert!(
        data["games"][0]["moves"].as_array().unwrap().len() >= 6,
        "{data}"
    );
    assert_eq!(data["ratings"][0]["variant"], "kalah", "{data}");

    let wrong = call(
        "POST",
        format!("{}/v1/me/close", arena.base()),
        Some(json!({"password": "not the password"})),
        Some(&leaver.token),
    )
    .await;
    // The password is what is wrong, not the player's right to close.
    assert_eq!(
        (wrong.0, wrong.1["code"].as_str()),
        (401, Some("invalid_credentials")),
        "{}",
        wrong.1
    );
    let mut lobby = arena.lobby(&leaver).await;
    let (status, _) = call(
        "POST",
        format!("{}/v1/me/close", arena.base()),
        Some(json!({"password": PASSWORD})),
        Some(&leaver.token),
    )
    .await;
    assert_eq!(status, 204);
    assert!(
        lobby.close_code(Duration::from_secs(2)).await.is_some(),
        "signed out everywhere"
    );
    let (status, _) = call(
        "GET",
        format!("{}/v1/me", arena.base()),
        None,
        Some(&leaver.token),
    )
    .await;
    assert_eq!(status, 401);
    // Its username and password are forgotten: nothing signs in to it.
    let (status, error) = call(
        "POST",
        format!("{}/v1/auth/login", arena.base()),
        Some(json!({"username": "leaver", "password": PASSWORD})),
        None,
    )
    .await;
    assert_eq!(
        (status, error["code"].as_str()),
        (401, Some("invalid_credentials"))
    );
    let record = arena.record(&game).await;
    let names = [&record["seats"][0]["name"], &record["seats"][1]["name"]];
    assert!(
        names
            .iter()
            .any(|n| n.as_str().unwrap().starts_with("Closed account")),
        "{record}"
    );
    assert!(!names.iter().any(|n| *n == "leaver"), "{record}");
    arena.stores.cleanup().await.unwrap();
}
