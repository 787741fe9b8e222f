//! What visitors and operators met (issue 57), against the real `arena`
//! process: a classroom behind one address, one shape for a variant,
//! text fields that refuse what hides text, reports that weigh by their
//! reporters and close by reason, the data a player takes away and what
//! closing erases, the featured game, an honest queue forecast, and a
//! resignation after one's own move.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::{Arena, WAIT, resign};
use futures_util::future::join_all;
use mancala_tests::harness::{Guest, Ws, call, request};
use serde_json::{Value, json};

async fn post(arena: &Arena, path: &str, body: Value, who: Option<&Guest>) -> (u16, Value) {
    call(
        "POST",
        format!("{}{path}", arena.base()),
        Some(body),
        who.map(|g| g.token.as_str()),
    )
    .await
}

async fn get(arena: &Arena, path: &str, who: Option<&Guest>) -> (u16, Value) {
    call(
        "GET",
        format!("{}{path}", arena.base()),
        None,
        who.map(|g| g.token.as_str()),
    )
    .await
}

fn code(answer: &(u16, Value)) -> (u16, Option<&str>) {
    (answer.0, answer.1["code"].as_str())
}

/// A new guest's first move against the AI: the game is on and the move
/// is acknowledged.
async fn first_move_against_the_ai(arena: &Arena, who: &Guest) {
    let (status, game) = post(
        arena,
        "/v1/ai-games",
        json!({"variant": {"variant": "kalah"}, "level": "beginner", "side": "first"}),
        Some(who),
    )
    .await;
    assert_eq!(status, 201, "{game}");
    let (mut ws, state) = arena.play(game["game_id"].as_str().unwrap(), who).await;
    ws.send(json!({"t": "move", "d": {"pit": state["legal"][0], "ply": 1}}))
        .await;
    let moved = ws.until("moved", WAIT).await;
    assert_eq!(moved["ply"], 1, "{moved}");
}

/// With the default settings, a classroom of 100 behind one address all
/// come in and play within the hour; a script minting 1,000 guests from
/// the same address is refused past the limit, each refusal saying when
/// to come back.
#[actix_rt::test]
async fn a_classroom_behind_one_address_plays_and_a_scripted_flood_is_refused() {
    let arena = Arena::start_default().await;
    for _ in 0..100 {
        let pupil = arena.guest().await;
        first_move_against_the_ai(&arena, &pupil).await;
    }
    let (mut minted, mut refused) = (0, 0);
    for _ in 0..1000 {
        let answer = post(&arena, "/v1/auth/guest", json!({}), None).await;
        match code(&answer) {
            (201, _) => minted += 1,
            (429, Some("rate_limited")) => refused += 1,
            other => panic!("a sign-up answered {other:?}"),
        }
    }
    assert!(
        100 + minted <= 150,
        "the script minted {minted} more guests"
    );
    assert_eq!(minted + refused, 1000);
    // The address may still sign in to an account made elsewhere.
    arena.stores.cleanup().await.unwrap();
}

/// A variant is written the same way everywhere a request takes one: its
/// name alone (the standard rules), or an object where options are given.
#[actix_rt::test]
async fn a_variant_is_a_name_or_an_object_everywhere() {
    let arena = Arena::start(&[]).await;
    let host = arena.registered("host").await;
    for variant in [json!("oware"), json!({"variant": "oware"})] {
        let (status, invite) = post(
            &arena,
            "/v1/invites",
            json!({"variant": variant, "rated": false}),
            Some(&host),
        )
        .await;
        assert_eq!(status, 201, "{variant}: {invite}");
        assert_eq!(invite["variant"], json!({"variant": "oware"}), "{invite}");
    }
    let (status, game) = post(
        &arena,
        "/v1/ai-games",
        json!({"variant": "mangala", "level": "beginner", "side": "first"}),
        Some(&host),
    )
    .await;
    assert_eq!(status, 201, "{game}");
    let (status, game) = post(
        &arena,
        "/v1/hotseat-games",
        json!({"variant": "kalah"}),
        Some(&host),
    )
    .await;
    assert_eq!(status, 201, "{game}");
    let (_, state) = arena.play(game["game_id"].as_str().unwrap(), &host).await;
    assert_eq!(state["variant"]["seeds"], 4, "the standard rules: {state}");
    // Options still come as an object, and a wrong name says what is right.
    let (status, game) = post(
        &arena,
        "/v1/hotseat-games",
        json!({"variant": {"variant": "kalah", "seeds": 5}}),
        Some(&host),
    )
    .await;
    assert_eq!(status, 201, "{game}");
    let refused = post(
        &arena,
        "/v1/invites",
        json!({"variant": "chess", "rated": false}),
        Some(&host),
    )
    .await;
    assert_eq!(refused.0, 400, "{}", refused.1);
    let message = refused.1["message"].as_str().unwrap();
    assert!(message.contains("kalah"), "{message}");
    arena.stores.cleanup().await.unwrap();
}

/// Names, reasons, notes and report texts refuse control, invisible and
/// formatting characters with `invalid_input` (a NUL byte was a 500), and
/// a rating band past any rating is refused, not wrapped to a negative.
#[actix_rt::test]
async fn text_fields_refuse_what_hides_text_and_numbers_out_of_range() {
    let arena = Arena::start(&[]).await;
    let boss = arena.admin("boss").await;
    let target = arena.registered("target").await;
    let tournament = |name: &str, max_rating: Value| {
        json!({"name": name, "variant": "kalah", "minutes": 30, "max_rating": max_rating,
               "time_control": {"initial_secs": 180, "increment_secs": 2}})
    };
    for name in [
        "a\u{0}b",
        "gpj\u{202e}exe",
        "ad\u{200b}min",
        "\u{3164}",
        "two\nlines",
    ] {
        let answer = post(
            &arena,
            "/v1/tournaments",
            tournament(name, json!(null)),
            Some(&boss),
        )
        .await;
        assert_eq!(
            code(&answer),
            (400, Some("invalid_input")),
            "{name:?}: {}",
            answer.1
        );
    }
    for band in [json!(2_147_483_648_u64), json!(5001)] {
        let answer = post(
            &arena,
            "/v1/tournaments",
            tournament("Spring", band.clone()),
            Some(&boss),
        )
        .await;
        assert_eq!(answer.0, 400, "max_rating {band}: {}", answer.1);
    }
    let made = post(
        &arena,
        "/v1/tournaments",
        tournament("  Spring   Arena ", json!(1800)),
        Some(&boss),
    )
    .await;
    assert_eq!(made.0, 201, "{}", made.1);
    assert_eq!(made.1["name"], "Spring Arena", "spaces folded");
    let nul = "bad\u{0}text";
    let report = post(
        &arena,
        "/v1/reports",
        json!({"player": target.id, "reason": "engine", "text": nul}),
        Some(&boss),
    )
    .await;
    assert_eq!(code(&report), (400, Some("invalid_input")), "{}", report.1);
    let actions = format!("/v1/mod/players/{}/actions", target.id);
    for action in [
        json!({"action": "warn", "reason": nul}),
        json!({"action": "rename", "reason": "a rude name", "name": "nice\u{202e}name"}),
        json!({"action": "rename", "reason": "a rude name", "name": "nice\u{200d}name"}),
    ] {
        let answer = post(&arena, &actions, action.clone(), Some(&boss)).await;
        assert_eq!(
            code(&answer),
            (400, Some("invalid_input")),
            "{action}: {}",
            answer.1
        );
    }
    let note = post(
        &arena,
        &format!("/v1/mod/players/{}/notes", target.id),
        json!({"text": nul}),
        Some(&boss),
    )
    .await;
    assert_eq!(code(&note), (400, Some("invalid_input")), "{}", note.1);
    let search = get(&arena, "/v1/mod/players?name=a%00b", Some(&boss)).await;
    assert_eq!(code(&search), (400, Some("invalid_input")), "{}", search.1);
    // A NUL in a code looked up in Postgres is a bad request too.
    let lookup = get(&arena, "/v1/invites/ab%00cd", Some(&target)).await;
    assert!(lookup.0 == 400 || lookup.0 == 404, "{lookup:?}");
    // Nothing of it was stored: the account's name and file are clean.
    let (_, file) = get(
        &arena,
        &format!("/v1/mod/players/{}", target.id),
        Some(&boss),
    )
    .await;
    assert_eq!(file["player"]["name"], "target", "{file}");
    assert_eq!(file["notes"], json!([]), "{file}");
    arena.stores.cleanup().await.unwrap();
}

/// A registered player `name`, a week old with ten rated games, signed up
/// from `network`: an established reporter.
async fn established(arena: &Arena, name: &str, network: &str) -> Guest {
    let who = arena.registered(name).await;
    sqlx::query(
        "UPDATE players SET created_at = created_at - interval '30 days', signup_network = $2
         WHERE id = $1::uuid",
    )
    .bind(&who.id)
    .bind(network)
    .execute(&arena.stores.postgres)
    .await
    .unwrap();
    sqlx::query(
        "INSERT INTO ratings (player_id, variant, rating, rd, volatility, games)
         VALUES ($1::uuid, 'kalah', 1500, 80, 0.06, 12)",
    )
    .bind(&who.id)
    .execute(&arena.stores.postgres)
    .await
    .unwrap();
    who
}

async fn report(arena: &Arena, by: &Guest, player: &Guest, reason: &str) -> (u16, Value) {
    post(
        arena,
        "/v1/reports",
        json!({"player": player.id, "reason": reason}),
        Some(by),
    )
    .await
}

/// Thirty fresh guests from one network reporting an honest player weigh
/// as one guest; two established players from two networks reporting a
/// cheat put the cheat first. A warning closes the reports of its reason
/// only.
#[actix_rt::test]
async fn reports_weigh_by_their_reporters_and_a_warning_answers_its_own_reason() {
    let arena = Arena::start(&[("APP_LIMIT_SIGNUPS_PER_IP", "1000/60")]).await;
    let boss = arena.admin("boss").await;
    let honest = arena.registered("honest").await;
    let cheat = arena.registered("cheat").await;
    for _ in 0..30 {
        let guest = arena.guest().await;
        assert_eq!(report(&arena, &guest, &honest, "engine").await.0, 201);
    }
    let amy = established(&arena, "amy", "198.51.100.0/24").await;
    let bob = established(&arena, "bob", "203.0.113.0/24").await;
    for (reporter, reason) in [
        (&amy, "engine"),
        (&bob, "offensive_name"),
        (&bob, "stalling"),
    ] {
        assert_eq!(report(&arena, reporter, &cheat, reason).await.0, 201);
    }
    let (status, queue) = get(&arena, "/v1/mod/reports", Some(&boss)).await;
    assert_eq!(status, 200, "{queue}");
    let accounts = queue["accounts"].as_array().unwrap();
    assert_eq!(accounts[0]["player"]["id"], cheat.id.as_str(), "{queue}");
    assert_eq!(accounts[0]["weight"], 2.0, "{queue}");
    assert_eq!(accounts[1]["player"]["id"], honest.id.as_str(), "{queue}");
    assert_eq!(accounts[1]["reporters"], 30, "{queue}");
    assert_eq!(
        accounts[1]["weight"], 0.2,
        "thirty guests of one network: {queue}"
    );
    assert_eq!(accounts[1]["reports"][0]["reporter_standing"], "guest");
    assert_eq!(
        accounts[0]["reports"][0]["reporter_standing"],
        "established"
    );

    // A warning about the name answers the name's report, not the others.
    let warned = post(
        &arena,
        &format!("/v1/mod/players/{}/actions", cheat.id),
        json!({"action": "warn", "reason": "pick a polite name", "about": "offensive_name"}),
        Some(&boss),
    )
    .await;
    assert_eq!(warned.0, 200, "{}", warned.1);
    let (_, queue) = get(&arena, "/v1/mod/reports", Some(&boss)).await;
    let open: Vec<&str> = queue["accounts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|account| account["player"]["id"] == cheat.id.as_str())
        .unwrap()["reports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|report| report["reason"].as_str().unwrap())
        .collect();
    assert_eq!(open.len(), 2, "{queue}");
    assert!(
        open.contains(&"engine") && open.contains(&"stalling"),
        "{open:?}"
    );
    // A warning about nothing in particular closes none.
    let plain = post(
        &arena,
        &format!("/v1/mod/players/{}/actions", cheat.id),
        json!({"action": "warn", "reason": "mind the rules"}),
        Some(&boss),
    )
    .await;
    assert_eq!(plain.0, 200, "{}", plain.1);
    let (_, file) = get(
        &arena,
        &format!("/v1/mod/players/{}", cheat.id),
        Some(&boss),
    )
    .await;
    let still_open = file["reports"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|report| report["closed_at"].is_null())
        .count();
    assert_eq!(still_open, 2, "{file}");
    arena.stores.cleanup().await.unwrap();
}

/// Forty reports sent at once by one account, each about someone else:
/// the day's limit (10) holds, where peeking before filing let 37 in.
#[actix_rt::test]
async fn a_burst_of_reports_meets_the_limit_once() {
    let arena = Arena::start(&[("APP_LIMIT_SIGNUPS_PER_IP", "1000/60")]).await;
    let reporter = arena.registered("reporter").await;
    let mut targets = Vec::new();
    for _ in 0..40 {
        targets.push(arena.guest().await);
    }
    let answers = join_all(
        targets
            .iter()
            .map(|target| report(&arena, &reporter, target, "stalling")),
    )
    .await;
    let filed = answers.iter().filter(|answer| answer.0 == 201).count();
    let refused = answers
        .iter()
        .filter(|answer| code(answer) == (429, Some("rate_limited")))
        .count();
    assert_eq!((filed, refused), (10, 30), "{answers:?}");
    // Asking again about a report already open adds nothing and is free.
    let filed_one = answers.iter().position(|answer| answer.0 == 201).unwrap();
    let again = report(&arena, &reporter, &targets[filed_one], "stalling").await;
    assert!(again.0 == 200 || again.0 == 429, "{again:?}");
    arena.stores.cleanup().await.unwrap();
}

/// The data download holds everything kept about the player (networks,
/// sessions, the fair-play record, reports filed, arenas, invites); closing
/// erases the networks, the sessions and the open invites, and keeps the
/// games under an anonymous name; the profile then says closed, not guest.
#[actix_rt::test]
async fn the_data_download_is_whole_and_closing_erases_what_is_not_needed() {
    let arena = Arena::start(&[]).await;
    let leaver = arena.registered("leaver").await;
    let other = arena.registered("other").await;
    // An early abort on the record: seated, then resigned before moving.
    let code = arena.invite(&other, Arena::rated_invite()).await;
    let (status, accepted) = arena.accept(&leaver, &code).await;
    assert_eq!(status, 201, "{accepted}");
    let game = accepted["game_id"].as_str().unwrap().to_owned();
    let (mut mine, _) = arena.play(&game, &leaver).await;
    mine.send(json!({"t": "resign"})).await;
    mine.until("over", WAIT).await;
    assert_eq!(report(&arena, &leaver, &other, "stalling").await.0, 201);
    let made = post(
        &arena,
        "/v1/tournaments",
        json!({"name": "Mine", "variant": "kalah", "minutes": 30,
               "time_control": {"initial_secs": 180, "increment_secs": 2}}),
        Some(&leaver),
    )
    .await;
    assert_eq!(made.0, 201, "{}", made.1);
    let id = made.1["id"].as_str().unwrap();
    let joined = post(
        &arena,
        &format!("/v1/tournaments/{id}/join"),
        json!({"code": made.1["code"]}),
        Some(&leaver),
    )
    .await;
    assert_eq!(joined.0, 204, "{}", joined.1);
    let open_invite = arena
        .invite(&leaver, json!({"variant": {"variant": "kalah"}}))
        .await;

    let (status, data) = get(&arena, "/v1/me/data", Some(&leaver)).await;
    assert_eq!(status, 200, "{data}");
    assert_eq!(data["signup_network"], "127.0.0.0/24", "{data}");
    assert_eq!(data["networks"][0]["network"], "127.0.0.0/24", "{data}");
    assert!(!data["sessions"].as_array().unwrap().is_empty(), "{data}");
    assert_eq!(data["fair_play"][0]["kind"], "early_abort", "{data}");
    assert_eq!(data["reports_filed"][0]["player"]["id"], other.id.as_str());
    assert_eq!(data["tournaments"][0]["id"], id, "{data}");
    assert_eq!(data["tournaments"][0]["made_by_you"], true, "{data}");
    assert_eq!(data["invites"][0]["code"], open_invite.as_str(), "{data}");

    let (status, _) = post(
        &arena,
        "/v1/me/close",
        json!({"password": common::PASSWORD}),
        Some(&leaver),
    )
    .await;
    assert_eq!(status, 204);
    let kept = |sql: &'static str| arena.scalar(sql, &leaver.id);
    assert_eq!(
        kept("SELECT count(*) FROM player_networks WHERE player_id = $1::uuid").await,
        0
    );
    assert_eq!(
        kept("SELECT count(*) FROM players WHERE id = $1::uuid AND signup_network IS NOT NULL")
            .await,
        0
    );
    assert_eq!(
        kept("SELECT count(*) FROM refresh_families WHERE player_id = $1::uuid").await,
        0
    );
    assert_eq!(
        kept("SELECT count(*) FROM invites WHERE creator = $1::uuid AND game_id IS NULL").await,
        0
    );
    // What others' records need stays: the game, the report, the offence.
    assert_eq!(
        kept("SELECT count(*) FROM games WHERE seat0_player = $1::uuid OR seat1_player = $1::uuid")
            .await,
        1
    );
    assert_eq!(
        kept("SELECT count(*) FROM reports WHERE reporter = $1::uuid").await,
        1
    );
    let (status, profile) = get(&arena, &format!("/v1/players/{}", leaver.id), None).await;
    assert_eq!(status, 200, "{profile}");
    assert_eq!(
        (profile["closed"].as_bool(), profile["guest"].as_bool()),
        (Some(true), Some(false)),
        "{profile}"
    );
    assert!(
        profile["name"]
            .as_str()
            .unwrap()
            .starts_with("Closed account"),
        "{profile}"
    );
    arena.stores.cleanup().await.unwrap();
}

async fn featured_ids(arena: &Arena) -> Vec<String> {
    let featured = request(
        "GET",
        format!("{}/v1/games/featured", arena.base()),
        None,
        None,
    )
    .await;
    featured
        .as_array()
        .unwrap()
        .iter()
        .map(|game| game["id"].as_str().unwrap().to_owned())
        .collect()
}

/// A game just made is not featured with "0 moves"; once both players
/// have moved, it is.
#[actix_rt::test]
async fn the_featured_game_is_one_both_players_have_started() {
    let arena = Arena::start(&[]).await;
    let (ann, ben) = (arena.guest().await, arena.guest().await);
    let code = arena
        .invite(&ann, json!({"variant": {"variant": "kalah"}}))
        .await;
    let (status, accepted) = arena.accept(&ben, &code).await;
    assert_eq!(status, 201, "{accepted}");
    let game = accepted["game_id"].as_str().unwrap().to_owned();
    let (mut first, state) = arena.play(&game, &ann).await;
    let (mut second, _) = arena.play(&game, &ben).await;
    // Occupied and live, yet nobody has moved.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!featured_ids(&arena).await.contains(&game));
    common::play_plies([&mut first, &mut second], &state, 4).await;
    let deadline = std::time::Instant::now() + WAIT;
    while !featured_ids(&arena).await.contains(&game) {
        assert!(std::time::Instant::now() < deadline, "never featured");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let featured = request(
        "GET",
        format!("{}/v1/games/featured", arena.base()),
        None,
        None,
    )
    .await;
    assert!(featured[0]["plies"].as_u64().unwrap() >= 2, "{featured}");
    arena.stores.cleanup().await.unwrap();
}

fn kalah_3_2() -> Value {
    json!({"t": "queue_join", "d": {"variant": "kalah",
           "time_control": {"initial_secs": 180, "increment_secs": 2}}})
}

async fn queue_status(lobby: &mut Ws) -> Value {
    lobby.until("queue_status", WAIT).await
}

/// Alone in a queue, the wait shown is the AI fallback's and says so; two
/// players who just played each other see that the other waiting is
/// their last opponent, not someone they will meet now.
#[actix_rt::test]
async fn the_queue_forecast_says_what_it_rests_on() {
    let arena = Arena::start(&[("APP_AI_FALLBACK_SECS", "60")]).await;
    let (ann, ben) = (arena.guest().await, arena.guest().await);
    let mut ann_lobby = arena.lobby(&ann).await;
    ann_lobby.send(kalah_3_2()).await;
    let alone = queue_status(&mut ann_lobby).await;
    assert_eq!(alone["by_ai_fallback"], true, "{alone}");
    assert_eq!(
        alone["estimated_wait_ms"], alone["ai_fallback_in_ms"],
        "{alone}"
    );
    // Ben comes: they are paired, play, and Ben resigns.
    let mut ben_lobby = arena.lobby(&ben).await;
    ben_lobby.send(kalah_3_2()).await;
    let matched = ann_lobby.until("matched", WAIT).await;
    ben_lobby.until("matched", WAIT).await;
    let game = matched["game_id"].as_str().unwrap().to_owned();
    let (mut ann_ws, state) = arena.play(&game, &ann).await;
    let (mut ben_ws, _) = arena.play(&game, &ben).await;
    let ann_first = state["seats"][0]["player"] == ann.id.as_str();
    {
        let (first, second) = if ann_first {
            (&mut ann_ws, &mut ben_ws)
        } else {
            (&mut ben_ws, &mut ann_ws)
        };
        common::play_plies([first, second], &state, 6).await;
    }
    resign(&mut ben_ws, &mut ann_ws).await;
    // Both queue again: each is told the other waiting is their last
    // opponent, and the wait is the fallback's.
    ann_lobby.send(kalah_3_2()).await;
    queue_status(&mut ann_lobby).await;
    ben_lobby.send(kalah_3_2()).await;
    let status = loop {
        let status = queue_status(&mut ben_lobby).await;
        if status["waiting"] == 2 {
            break status;
        }
    };
    assert_eq!(status["last_opponents_waiting"], 1, "{status}");
    assert_eq!(status["by_ai_fallback"], true, "{status}");
    arena.stores.cleanup().await.unwrap();
}

/// Resigning a rated game after one's own first move, before the opponent
/// made theirs, aborts it and charges nobody: the offence `early_abort` is
/// resigning before one's own first move, as the docs define it.
#[actix_rt::test]
async fn resigning_after_ones_own_move_is_no_early_abort() {
    // Hosts let a game nobody has open go at once, so the resignation
    // meets a host that loaded the game again from its log.
    let arena = Arena::start(&[("APP_GAME_IDLE_SECS", "0")]).await;
    let (host, guest) = (
        arena.registered("host").await,
        arena.registered("guest").await,
    );
    let code = arena.invite(&host, Arena::rated_invite()).await;
    let (status, accepted) = arena.accept(&guest, &code).await;
    assert_eq!(status, 201, "{accepted}");
    let game = accepted["game_id"].as_str().unwrap().to_owned();
    let (host_ws, state) = arena.play(&game, &host).await;
    let (guest_ws, _) = arena.play(&game, &guest).await;
    let (mut first, mut second, first_player, second_player) =
        if state["seats"][0]["player"] == host.id.as_str() {
            (host_ws, guest_ws, &host, &guest)
        } else {
            (guest_ws, host_ws, &guest, &host)
        };
    // The first player moves until the turn passes (extra turns included).
    let mut state = state;
    loop {
        first
            .send(json!({"t": "move", "d": {"pit": state["legal"][0], "ply": state["ply"].as_u64().unwrap() + 1}}))
            .await;
        let moved = first.until("moved", WAIT).await;
        second.until("moved", WAIT).await;
        if moved["turn"] != 0 {
            break;
        }
        state["legal"] = moved["legal"].clone();
        state["ply"] = moved["ply"].clone();
    }
    // The resigner comes back to the game later (a reload: the host may
    // have let it go and loads it again from the log).
    drop(first);
    drop(second);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let (mut first, _) = arena.play(&game, first_player).await;
    first.send(json!({"t": "resign"})).await;
    let over = first.until("over", WAIT).await;
    assert_eq!(over["result"], "aborted", "{over}");
    let charged = "SELECT count(*) FROM fair_play_offences WHERE player_id = $1::uuid";
    assert_eq!(
        arena.scalar(charged, &first_player.id).await,
        0,
        "the resigner had moved"
    );
    assert_eq!(
        arena.scalar(charged, &second_player.id).await,
        0,
        "the other did nothing wrong"
    );
    arena.stores.cleanup().await.unwrap();
}
