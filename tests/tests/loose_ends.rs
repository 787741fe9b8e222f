//! What a player meets at the edges, against the real `arena` process
//! (issue 19): the lobby's lists after every tab closed, what is featured,
//! exact ranked queues, strict variant objects, a racing registration, the
//! WebSocket closing handshake, the game's own flags, untimed friend games
//! that take their time, and a ranked series that shows today's ratings.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, Instant};

use awc::ws::{CloseCode, CloseReason, Message};
use common::{Arena, WAIT, both_move, play_plies, resign};
use mancala_tests::harness::{Guest, Ws, call, request};
use serde_json::{Value, json};

/// Short windows: a game with no move for 1 s that nobody has open is
/// abandoned; hosts unload as soon as the last socket leaves.
const QUICK_ABANDON: &[(&str, &str)] = &[
    ("APP_ABANDONED_SECS", "1"),
    ("APP_GAME_IDLE_SECS", "0"),
    ("APP_ROOM_SWEEP_MS", "200"),
];

async fn hotseat(arena: &Arena, who: &Guest) -> String {
    let made = request(
        "POST",
        format!("{}/v1/hotseat-games", arena.base()),
        Some(json!({"variant": {"variant": "kalah"}})),
        Some(&who.token),
    )
    .await;
    made["game_id"].as_str().unwrap().to_owned()
}

async fn ai_game(arena: &Arena, who: &Guest) -> String {
    let made = request(
        "POST",
        format!("{}/v1/ai-games", arena.base()),
        Some(json!({"variant": {"variant": "kalah"}, "level": "beginner", "side": "first"})),
        Some(&who.token),
    )
    .await;
    made["game_id"].as_str().unwrap().to_owned()
}

async fn live_ids(arena: &Arena) -> Vec<String> {
    let page = request("GET", format!("{}/v1/games/live", arena.base()), None, None).await;
    page["games"]
        .as_array()
        .unwrap()
        .iter()
        .map(|game| game["id"].as_str().unwrap().to_owned())
        .collect()
}

async fn featured(arena: &Arena) -> Vec<Value> {
    let games = request(
        "GET",
        format!("{}/v1/games/featured", arena.base()),
        None,
        None,
    )
    .await;
    games.as_array().unwrap().clone()
}

#[actix_rt::test]
async fn games_everyone_left_leave_the_lists_and_the_counts_agree() {
    let arena = Arena::start(QUICK_ABANDON).await;
    let player = arena.guest().await;
    let (two, ai) = (
        hotseat(&arena, &player).await,
        ai_game(&arena, &player).await,
    );
    for game in [&two, &ai] {
        let (mut ws, state) = arena.play(game, &player).await;
        ws.send(json!({"t": "move", "d": {"pit": state["legal"][0], "ply": 1}}))
            .await;
        ws.until("moved", WAIT).await;
        assert!(live_ids(&arena).await.contains(game));
        drop(ws); // the tab closes
    }
    for game in [&two, &ai] {
        let record = arena.status(game, "aborted").await;
        assert_eq!(record["reason"], "abandoned", "{record}");
    }
    assert!(live_ids(&arena).await.is_empty());
    assert!(featured(&arena).await.is_empty());
    assert_eq!(lobby_stats(&arena).await["playing"], 0);
    arena.stores.cleanup().await.unwrap();
}

async fn lobby_stats(arena: &Arena) -> Value {
    request(
        "GET",
        format!("{}/v1/lobby/stats", arena.base()),
        None,
        None,
    )
    .await
}

/// What the lobby shows of games: the live list's ids, the featured ids
/// and the "playing" count.
async fn lobby_view(arena: &Arena) -> (Vec<String>, Vec<String>, u64) {
    let featured = featured(arena)
        .await
        .iter()
        .map(|game| game["id"].as_str().unwrap().to_owned())
        .collect();
    let playing = lobby_stats(arena).await["playing"].as_u64().unwrap();
    (live_ids(arena).await, featured, playing)
}

/// Issue 39: with every window at its default (the reconnect countdown,
/// the first move's, abandoned games, idle rooms all take minutes), the
/// games whose tabs all closed leave the live list, the featured game and
/// the "playing" count within 5 s, and come back when a player does.
#[actix_rt::test]
async fn with_default_settings_games_nobody_has_open_leave_the_lobby_within_seconds() {
    let arena = Arena::start_default().await;
    let (a, b) = (arena.guest().await, arena.guest().await);
    let ai = ai_game(&arena, &a).await;
    let friends = arena.room(&a, &b, false, None).await;
    let one_device = hotseat(&arena, &b).await;
    // Made but not opened: nobody is playing them yet.
    assert_eq!(lobby_view(&arena).await, (vec![], vec![], 0));
    let mut tabs = Vec::new();
    for (game, who) in [(&ai, &a), (&one_device, &b)] {
        tabs.push(arena.play(game, who).await.0);
    }
    // The friends' game is featured once both have moved (issue 57: a
    // game just made is not worth sending watchers to).
    let (mut first, state) = arena.play(&friends, &a).await;
    let (mut second, _) = arena.play(&friends, &b).await;
    play_plies([&mut first, &mut second], &state, 2).await;
    tabs.extend([first, second]);
    let everyone_here = Instant::now() + WAIT;
    loop {
        let (mut live, featured, playing) = lobby_view(&arena).await;
        live.sort();
        let mut all = vec![ai.clone(), friends.clone(), one_device.clone()];
        all.sort();
        if live == all && featured == [friends.clone()] && playing == 2 {
            break;
        }
        assert!(
            Instant::now() < everyone_here,
            "not all listed: {live:?} {featured:?} {playing}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    drop(tabs); // every tab closes
    let closed = Instant::now();
    loop {
        let view = lobby_view(&arena).await;
        if view == (vec![], vec![], 0) {
            break;
        }
        assert!(
            closed.elapsed() < Duration::from_secs(5),
            "still shown 5 s after everyone left: {view:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Not ended: the rules that end a game take their own time.
    for game in [&ai, &friends, &one_device] {
        assert_eq!(arena.record(game).await["status"], "live", "{game}");
    }
    // A player who comes back is playing it again, and it is listed.
    let (_back, _) = arena.play(&ai, &a).await;
    let back = Instant::now();
    loop {
        // (The lobby's figures are read at most once a second.)
        let view = lobby_view(&arena).await;
        if view == (vec![ai.clone()], vec![], 1) {
            break;
        }
        assert!(back.elapsed() < Duration::from_secs(5), "{view:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    arena.stores.cleanup().await.unwrap();
}

#[actix_rt::test]
async fn a_game_someone_has_open_is_not_abandoned() {
    let arena = Arena::start(QUICK_ABANDON).await;
    let player = arena.guest().await;
    let game = hotseat(&arena, &player).await;
    let (mut ws, _) = arena.play(&game, &player).await;
    // Thinking for three abandon periods, the tab open.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(arena.record(&game).await["status"], "live");
    ws.send(json!({"t": "move", "d": {"pit": 1, "ply": 1}}))
        .await;
    ws.until("moved", WAIT).await;
    arena.stores.cleanup().await.unwrap();
}

#[actix_rt::test]
async fn featured_games_are_between_people_and_carry_their_watchers() {
    let arena = Arena::start(&[]).await;
    let (a, b) = (arena.guest().await, arena.guest().await);
    let alone = hotseat(&arena, &a).await;
    let versus_ai = ai_game(&arena, &b).await;
    let friends = arena.room(&a, &b, false, None).await;
    // Listed while someone plays them: their players have them open.
    let mut tabs = Vec::new();
    for (game, who) in [(&alone, &a), (&versus_ai, &b)] {
        tabs.push(arena.play(game, who).await.0);
    }
    // Featured once both have moved.
    let (mut first, state) = arena.play(&friends, &a).await;
    let (mut second, _) = arena.play(&friends, &b).await;
    play_plies([&mut first, &mut second], &state, 2).await;
    drop(second);
    tabs.push(first);
    let _watcher = Ws::open(format!("{}/v1/games/{friends}/watch", arena.base()))
        .await
        .unwrap();
    let deadline = Instant::now() + WAIT;
    loop {
        let featured = featured(&arena).await;
        assert_eq!(
            featured.len(),
            1,
            "only the game between people: {featured:?}"
        );
        assert_eq!(featured[0]["id"], friends.as_str());
        if featured[0]["watchers"] == 1 {
            break;
        }
        assert!(Instant::now() < deadline, "the watcher never counted");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let page = request("GET", format!("{}/v1/games/live", arena.base()), None, None).await;
    let flags: Vec<(String, bool, bool)> = page["games"]
        .as_array()
        .unwrap()
        .iter()
        .map(|game| {
            (
                game["id"].as_str().unwrap().to_owned(),
                game["hotseat"].as_bool().unwrap(),
                game["against_ai"].as_bool().unwrap(),
            )
        })
        .collect();
    for (game, hotseat, against_ai) in [
        (&alone, true, false),
        (&versus_ai, false, true),
        (&friends, false, false),
    ] {
        assert!(
            flags.contains(&(game.clone(), hotseat, against_ai)),
            "{flags:?}"
        );
    }
    // The game's own state says so too.
    let (_ws, state) = arena.play(&alone, &a).await;
    assert_eq!(
        (state["hotseat"].as_bool(), state["against_ai"].as_bool()),
        (Some(true), Some(false))
    );
    let (_ws, state) = arena.play(&versus_ai, &b).await;
    assert_eq!(
        (state["hotseat"].as_bool(), state["against_ai"].as_bool()),
        (Some(false), Some(true))
    );
    arena.stores.cleanup().await.unwrap();
}

#[actix_rt::test]
async fn queues_are_listed_and_joined_exactly() {
    let arena = Arena::start(&[]).await;
    let queues = request("GET", format!("{}/v1/queues", arena.base()), None, None).await;
    let names: Vec<&str> = queues
        .as_array()
        .unwrap()
        .iter()
        .map(|queue| queue["queue"].as_str().unwrap())
        .collect();
    assert_eq!(names[0], "kalah:3+2", "{queues}");
    assert_eq!(
        queues[0]["time_control"],
        json!({"initial_secs": 180, "increment_secs": 2})
    );
    assert_eq!(queues[0]["waiting"], 0);
    let player = arena.guest().await;
    let mut lobby = Ws::open(format!("{}/v1/lobby", arena.base()))
        .await
        .unwrap();
    lobby
        .send(json!({"t": "auth", "d": {"token": player.token}}))
        .await;
    // Not rounded to the nearest minute: 1 s and 3:59 are no queue.
    for initial_secs in [1, 239] {
        lobby
            .send(json!({"t": "queue_join", "d": {"variant": "kalah",
                "time_control": {"initial_secs": initial_secs, "increment_secs": 2}}}))
            .await;
        let error = lobby.until_or_none("error", WAIT).await.expect("an error");
        assert_eq!(error["code"], "invalid_input");
        assert!(
            error["message"].as_str().unwrap().contains("kalah:3+2"),
            "{error}"
        );
    }
    lobby
        .send(json!({"t": "queue_join", "d": {"variant": "kalah",
            "time_control": {"initial_secs": 180, "increment_secs": 2}}}))
        .await;
    assert_eq!(
        lobby.until("queue_status", WAIT).await["queue"],
        "kalah:3+2"
    );
    let queues = request("GET", format!("{}/v1/queues", arena.base()), None, None).await;
    assert_eq!(queues[0]["waiting"], 1);
    arena.stores.cleanup().await.unwrap();
}

/// `POST /v1/{path}` (a hotseat game, an AI game or an invite) of
/// `variant`: the status and the answer.
async fn create_game(
    arena: &Arena,
    token: &str,
    path: &str,
    variant: serde_json::Value,
) -> (u16, serde_json::Value) {
    let mut body = json!({"variant": variant});
    if path == "ai-games" {
        body["level"] = json!("beginner");
        body["side"] = json!("first");
    }
    call(
        "POST",
        format!("{}/v1/{path}", arena.base()),
        Some(body),
        Some(token),
    )
    .await
}

#[actix_rt::test]
async fn unknown_fields_of_any_variant_are_refused() {
    let arena = Arena::start(&[]).await;
    let player = arena.guest().await;
    for (path, variant) in [
        ("hotseat-games", json!({"variant": "oware", "seeds": 9})),
        ("hotseat-games", json!({"variant": "mangala", "pits": 7})),
        ("ai-games", json!({"variant": "oware", "seeds": 9})),
    ] {
        let (status, error) = create_game(&arena, &player.token, path, variant).await;
        assert_eq!(
            (status, error["code"].as_str()),
            (400, Some("unknown_field")),
            "{error}"
        );
    }
    assert!(live_ids(&arena).await.is_empty());
    arena.stores.cleanup().await.unwrap();
}

#[actix_rt::test]
async fn racing_registrations_of_one_guest_are_already_registered_not_taken() {
    let arena = Arena::start(&[("APP_LIMIT_SIGNUPS_PER_IP", "1000/60")]).await;
    for round in 0..5 {
        let guest = arena.guest().await;
        let attempts = (0..4).map(|attempt| {
            let (base, token) = (arena.base().to_owned(), guest.token.clone());
            let tag = guest.id[..8].to_owned();
            async move {
                call(
                    "POST",
                    format!("{base}/v1/auth/register"),
                    Some(json!({"username": format!("racer_{round}_{attempt}_{tag}"),
                        "password": "a long enough password"})),
                    Some(&token),
                )
                .await
            }
        });
        let answers = futures_util::future::join_all(attempts).await;
        let won = answers.iter().filter(|(status, _)| *status == 201).count();
        assert_eq!(won, 1, "{answers:?}");
        for (status, body) in answers.iter().filter(|(status, _)| *status != 201) {
            assert_eq!(
                (*status, body["code"].as_str()),
                (409, Some("already_registered")),
                "{body}"
            );
        }
    }
    arena.stores.cleanup().await.unwrap();
}

#[actix_rt::test]
async fn a_close_from_the_client_is_answered_with_a_close() {
    let arena = Arena::start(&[]).await;
    let player = arena.guest().await;
    let game = hotseat(&arena, &player).await;
    for path in ["/v1/lobby".to_owned(), format!("/v1/games/{game}/watch")] {
        let mut ws = Ws::open(format!("{}{path}", arena.base())).await.unwrap();
        ws.send_raw(Message::Close(Some(CloseReason {
            code: CloseCode::Normal,
            description: None,
        })))
        .await;
        // Well before the server would drop the connection on its own.
        let started = Instant::now();
        assert_eq!(
            ws.close_code(Duration::from_millis(800)).await,
            Some(1000),
            "{path}"
        );
        assert!(started.elapsed() < Duration::from_millis(800));
    }
    arena.stores.cleanup().await.unwrap();
}

#[actix_rt::test]
async fn an_untimed_friend_game_may_take_its_time_to_start() {
    let arena = Arena::start(&[("APP_FIRST_MOVE_SECS", "1")]).await;
    let (a, b) = (arena.guest().await, arena.guest().await);
    let untimed = arena.room(&a, &b, false, None).await;
    let (mut first, _) = arena.play(&untimed, &a).await;
    let (mut second, _) = arena.play(&untimed, &b).await;
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(arena.record(&untimed).await["status"], "live");
    both_move(&mut first, &mut second).await;
    // A timed one keeps its first-move window.
    let (c, d) = (arena.guest().await, arena.guest().await);
    let timed = arena
        .room(
            &c,
            &d,
            false,
            Some(json!({"initial_secs": 300, "increment_secs": 0})),
        )
        .await;
    let (_c, _) = arena.play(&timed, &c).await;
    let (_d, _) = arena.play(&timed, &d).await;
    let record = arena.status(&timed, "aborted").await;
    assert_eq!(record["reason"], "no_start");
    arena.stores.cleanup().await.unwrap();
}

#[actix_rt::test]
async fn a_ranked_rematch_shows_the_ratings_of_now() {
    let arena = Arena::start(&[]).await;
    let (a, b) = (arena.guest().await, arena.guest().await);
    let game = arena.room(&a, &b, true, None).await;
    let (mut first, before) = arena.play(&game, &a).await;
    let (mut second, _) = arena.play(&game, &b).await;
    both_move(&mut first, &mut second).await;
    resign(&mut second, &mut first).await;
    arena.rated_games(&a, 1).await;
    let rating = |who: &Guest| {
        let player: uuid::Uuid = who.id.parse().unwrap();
        let pool = arena.stores.postgres.clone();
        async move {
            sqlx::query_scalar::<_, f64>(
                "SELECT rating FROM ratings WHERE player_id = $1 AND variant = 'kalah'",
            )
            .bind(player)
            .fetch_one(&pool)
            .await
            .unwrap()
        }
    };
    let (now_a, now_b) = (rating(&a).await, rating(&b).await);
    assert!(now_a > 1500.0 && now_b < 1500.0, "{now_a} {now_b}");
    first.send(json!({"t": "rematch"})).await;
    second.send(json!({"t": "rematch"})).await;
    let next = first.until("rematch", WAIT).await;
    let next = next["game_id"].as_str().unwrap();
    let (_ws, state) = arena.play(next, &a).await;
    // Sides swap: B is seat 0 of the rematch.
    let shown = |seat: usize| {
        state["seats"][seat]["rating"]
            .as_f64()
            .expect("a rating shown")
    };
    // As stored (to the float's last bits, through JSON).
    assert!(
        (shown(0) - now_b).abs() < 1e-6 && (shown(1) - now_a).abs() < 1e-6,
        "{state}"
    );
    assert_eq!(state["seats"][0]["name"], before["seats"][1]["name"]);
    assert_eq!(state["seats"][1]["name"], before["seats"][0]["name"]);
    // The first game's host hosts the rematch from its commit, so nobody
    // loaded it: a load would have claimed a second epoch.
    let epoch: i64 = sqlx::query_scalar("SELECT epoch FROM games WHERE id = $1::uuid")
        .bind(next)
        .fetch_one(&arena.stores.postgres)
        .await
        .unwrap();
    assert_eq!(epoch, 1);
    arena.stores.cleanup().await.unwrap();
}

/// A GET with an `Accept` header: the status, the content type and the body.
async fn fetch(url: String, accept: &str) -> (u16, String, String) {
    let mut response = mancala_tests::harness::client()
        .get(url)
        .insert_header(("Accept", accept))
        .send()
        .await
        .unwrap();
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let body = response.body().await.unwrap();
    (
        response.status().as_u16(),
        content_type,
        String::from_utf8_lossy(&body).into_owned(),
    )
}

#[actix_rt::test]
async fn unknown_addresses_reveal_nothing_and_pages_get_the_clients_not_found() {
    let arena = Arena::start(&[(
        "APP_WEB_DIR",
        concat!(env!("CARGO_MANIFEST_DIR"), "/../web"),
    )])
    .await;
    let base = arena.base();
    let (status, content_type, _) = fetch(format!("{base}/app.js"), "*/*").await;
    assert_eq!(status, 200);
    assert!(content_type.contains("javascript"), "{content_type}");
    // Folders, hidden files and escapes look like any missing address.
    for path in [
        "/.git/config",
        "/..%2fREADME.md",
        "/match",
        "/strings/",
        "/no-such-page",
    ] {
        let (status, content_type, body) = fetch(format!("{base}{path}"), "application/json").await;
        assert_eq!(
            (status, content_type.as_str()),
            (404, "application/json"),
            "{path}"
        );
        assert!(body.contains("\"not_found\""), "{path}: {body}");
        let (status, content_type, body) =
            fetch(format!("{base}{path}"), "text/html,application/xhtml+xml").await;
        assert_eq!(status, 404, "{path}");
        assert!(
            content_type.starts_with("text/html"),
            "{path}: {content_type}"
        );
        assert!(
            body.contains("<script type=\"module\""),
            "{path}: the client's page"
        );
    }
    // The API keeps its shape, whatever the browser accepts.
    let (status, content_type, _) = fetch(format!("{base}/v1/no-such"), "text/html").await;
    assert_eq!((status, content_type.as_str()), (404, "application/json"));
    arena.stores.cleanup().await.unwrap();
}

async fn invite(arena: &Arena, who: &Guest) -> String {
    arena
        .invite(
            who,
            json!({"variant": {"variant": "kalah"}, "rated": false}),
        )
        .await
}

async fn open_invites(arena: &Arena, who: &Guest) -> Vec<String> {
    let mine = request(
        "GET",
        format!("{}/v1/invites", arena.base()),
        None,
        Some(&who.token),
    )
    .await;
    mine.as_array()
        .unwrap()
        .iter()
        .map(|invite| invite["code"].as_str().unwrap().to_owned())
        .collect()
}

#[actix_rt::test]
async fn the_inviter_hears_of_the_acceptance_and_can_list_and_withdraw_invites() {
    let arena = Arena::start(&[]).await;
    let (a, b) = (arena.guest().await, arena.guest().await);
    let mut a_lobby = arena.lobby(&a).await;
    let (first, second) = (invite(&arena, &a).await, invite(&arena, &a).await);
    assert_eq!(
        open_invites(&arena, &a).await,
        [second.clone(), first.clone()]
    );
    let accepted = request(
        "POST",
        format!("{}/v1/invites/{first}/accept", arena.base()),
        None,
        Some(&b.token),
    )
    .await;
    // Pushed, not polled.
    let heard = a_lobby.until("invite_accepted", WAIT).await;
    assert_eq!(heard["code"], first.as_str());
    assert_eq!(heard["game_id"], accepted["game_id"]);
    assert_eq!(heard["friend"]["id"], b.id.as_str());
    assert_eq!(
        open_invites(&arena, &a).await,
        std::slice::from_ref(&second)
    );
    // Someone else's invite cannot be withdrawn (nor seen to exist).
    let url = format!("{}/v1/invites/{second}", arena.base());
    assert_eq!(
        call("DELETE", url.clone(), None, Some(&b.token)).await.0,
        404
    );
    assert_eq!(
        call("DELETE", url.clone(), None, Some(&a.token)).await.0,
        204
    );
    assert!(open_invites(&arena, &a).await.is_empty());
    let (status, error) = call("POST", format!("{url}/accept"), None, Some(&b.token)).await;
    assert_eq!(
        (status, error["code"].as_str()),
        (410, Some("invite_expired"))
    );
    // An accepted one stays accepted.
    let accepted_url = format!("{}/v1/invites/{first}", arena.base());
    let (status, error) = call("DELETE", accepted_url, None, Some(&a.token)).await;
    assert_eq!((status, error["code"].as_str()), (409, Some("invite_used")));
    arena.stores.cleanup().await.unwrap();
}

#[actix_rt::test]
async fn a_missed_match_is_told_again_and_my_games_lists_it() {
    let arena = Arena::start(&[]).await;
    let (a, b) = (arena.guest().await, arena.guest().await);
    let mut lobbies = Vec::new();
    for who in [&a, &b] {
        let mut lobby = arena.lobby(who).await;
        lobby
            .send(json!({"t": "queue_join", "d": {"variant": "kalah",
                "time_control": {"initial_secs": 180, "increment_secs": 2}}}))
            .await;
        lobbies.push(lobby);
    }
    let matched = lobbies[1].until("matched", WAIT).await;
    drop(lobbies); // both tabs reload before connecting to the game
    let mut again = Ws::open(format!("{}/v1/lobby", arena.base()))
        .await
        .unwrap();
    again
        .send(json!({"t": "auth", "d": {"token": b.token}}))
        .await;
    let told = again.until("matched", WAIT).await;
    assert_eq!(told["game_id"], matched["game_id"]);
    let mine = request(
        "GET",
        format!("{}/v1/me/games", arena.base()),
        None,
        Some(&b.token),
    )
    .await;
    let mine = mine.as_array().unwrap();
    assert_eq!(mine.len(), 1, "{mine:?}");
    assert_eq!(mine[0]["game_id"], matched["game_id"]);
    assert_eq!(
        (mine[0]["rated"].as_bool(), mine[0]["hotseat"].as_bool()),
        (Some(true), Some(false))
    );
    assert_eq!(mine[0]["seat"], matched["seat"]);
    arena.stores.cleanup().await.unwrap();
}

#[actix_rt::test]
async fn signing_out_ends_the_access_token_and_closes_the_sessions_sockets() {
    let arena = Arena::start(&[]).await;
    let session = request(
        "POST",
        format!("{}/v1/auth/guest", arena.base()),
        Some(json!({})),
        None,
    )
    .await;
    let who = Guest {
        id: session["player"]["id"].as_str().unwrap().to_owned(),
        token: session["access_token"].as_str().unwrap().to_owned(),
    };
    // A second session of the same player stays signed in.
    let other = arena.guest().await;
    let game = hotseat(&arena, &who).await;
    let (mut play, _) = arena.play(&game, &who).await;
    let mut lobby = arena.lobby(&who).await;
    let me = format!("{}/v1/me", arena.base());
    assert_eq!(call("GET", me.clone(), None, Some(&who.token)).await.0, 200);
    let (status, _) = call(
        "POST",
        format!("{}/v1/auth/logout", arena.base()),
        Some(json!({"refresh_token": session["refresh_token"]})),
        None,
    )
    .await;
    assert_eq!(status, 204);
    // Every service refuses it within a second (at once where it ended).
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let (status, error) = call("GET", me.clone(), None, Some(&who.token)).await;
        if status == 401 {
            assert_eq!(error["code"], "token_invalid", "{error}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the token still works: {status} {error}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(call("GET", me, None, Some(&other.token)).await.0, 200);
    // Both sockets opened with the session close (within the reload).
    for ws in [&mut play, &mut lobby] {
        let error = ws.until_or_none("error", WAIT).await.expect("told why");
        assert_eq!(error["code"], "token_invalid");
        assert_eq!(ws.close_code(WAIT).await, Some(1008));
    }
    // And the token opens no new one.
    let (_, first) = arena.open(&game, &who).await;
    assert_eq!(first["d"]["code"], "token_invalid", "{first}");
    arena.stores.cleanup().await.unwrap();
}

/// An invite's link, asked for with `headers`.
async fn invite_link(arena: &Arena, who: &Guest, headers: &[(&str, &str)]) -> (String, String) {
    let mut post = mancala_tests::harness::client()
        .post(format!("{}/v1/invites", arena.base()))
        .bearer_auth(&who.token);
    for (name, value) in headers {
        post = post.insert_header((*name, *value));
    }
    let mut response = post
        .send_json(&json!({"variant": {"variant": "kalah"}, "rated": false}))
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
    let invite: Value = response.json().await.unwrap();
    let code = invite["code"].as_str().unwrap().to_owned();
    (invite["url"].as_str().unwrap().to_owned(), code)
}

#[actix_rt::test]
async fn invite_links_name_the_address_players_reach() {
    // Listening on every address, the link names the one the player used,
    // never 0.0.0.0 (nor a port it does not listen on).
    let arena = Arena::start_on("0.0.0.0", &[]).await;
    let who = arena.guest().await;
    let (link, code) = invite_link(&arena, &who, &[]).await;
    assert_eq!(link, format!("{}/invite/{code}", arena.base()));
    // Behind a proxy, the address the proxy was reached at.
    let forwarded = [
        ("X-Forwarded-Host", "play.example.org"),
        ("X-Forwarded-Proto", "https"),
    ];
    let (link, code) = invite_link(&arena, &who, &forwarded).await;
    assert_eq!(link, format!("https://play.example.org/invite/{code}"));
    // The page a friend opens says the same.
    let shown = request(
        "GET",
        format!("{}/v1/invites/{code}", arena.base()),
        None,
        None,
    )
    .await;
    assert_eq!(shown["url"], format!("{}/invite/{code}", arena.base()));
    arena.stores.cleanup().await.unwrap();

    // A configured site address wins over whatever a request claims.
    let arena = Arena::start(&[("APP_PUBLIC_URL", "https://mancala.example/")]).await;
    let who = arena.guest().await;
    let (link, code) = invite_link(&arena, &who, &forwarded).await;
    assert_eq!(link, format!("https://mancala.example/invite/{code}"));
    arena.stores.cleanup().await.unwrap();
}

/// The lobby offers 3 to 6 stones a pit for Kalah; a client that asks for
/// other numbers (or another board) directly makes no game.
#[actix_rt::test]
async fn kalah_is_played_with_three_to_six_stones_a_pit_and_nothing_else() {
    let arena = Arena::start(&[]).await;
    let player = arena.guest().await;
    for seeds in [0, 1, 2, 7, 12, 255] {
        for path in ["hotseat-games", "ai-games", "invites"] {
            let variant = json!({"variant": "kalah", "seeds": seeds});
            let (status, error) = create_game(&arena, &player.token, path, variant).await;
            assert_eq!(status, 400, "{seeds} stones a pit by {path}: {error}");
        }
    }
    assert!(live_ids(&arena).await.is_empty());
    for seeds in 3..=6 {
        let variant = json!({"variant": "kalah", "seeds": seeds});
        let (status, game) = create_game(&arena, &player.token, "hotseat-games", variant).await;
        assert_eq!(status, 201, "{game}");
    }
    arena.stores.cleanup().await.unwrap();
}
