//! Fair play, step two (issue 58), against the real `arena` process, the
//! way an attacker with many networks plays it: each sybil made and
//! registered from a network of its own (127.0.N.0/24, every address of
//! 127/8 being this machine's), so that no two accounts are linked. What
//! fresh accounts can give is bounded anyway, the sentinel reports the
//! ring by itself, a private arena of sybils is no title, and no engine
//! help reaches a player whose rated game is on.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::net::{IpAddr, Ipv4Addr};
use std::time::{Duration, Instant};

use common::{Arena, WAIT, play_plies};
use mancala_tests::harness::{Guest, Ws, call, registered_from};
use serde_json::{Value, json};

/// The defaults but for how many games one account may make a minute: the
/// climber makes 150 invites here in a couple of minutes where a real
/// climber takes five (the bound under test does not depend on the pace).
const MANY_GAMES: [(&str, &str); 1] = [("APP_LIMIT_GAMES_PER_PLAYER", "1000/60")];

/// A sybil made and registered from a network of its own.
async fn sybil(arena: &Arena, n: u8) -> Guest {
    let local = IpAddr::V4(Ipv4Addr::new(127, 0, n, 1));
    let (id, token) = registered_from(arena.base(), &format!("sybil{n}"), local).await;
    Guest { id, token }
}

/// A rated Kalah 3+2 invite from `host`, accepted by `guest`: the game and
/// its two play sockets in seat order, with the first state.
async fn rated_game(arena: &Arena, host: &Guest, guest: &Guest) -> (String, [Ws; 2], Value) {
    let code = arena.invite(host, Arena::rated_invite()).await;
    let (status, accepted) = arena.accept(guest, &code).await;
    assert_eq!(status, 201, "{accepted}");
    let game = accepted["game_id"].as_str().unwrap().to_owned();
    let (host_ws, state) = arena.play(&game, host).await;
    let (guest_ws, _) = arena.play(&game, guest).await;
    let host_first = state["seats"][0]["player"] == host.id.as_str();
    let seats = if host_first {
        [host_ws, guest_ws]
    } else {
        [guest_ws, host_ws]
    };
    (game, seats, state)
}

/// `climber` and `sybil` play a rated game of 8 plies; the sybil resigns.
async fn thrown_game(arena: &Arena, climber: &Guest, sybil: &Guest) -> String {
    let (game, [mut first, mut second], state) = rated_game(arena, climber, sybil).await;
    play_plies([&mut first, &mut second], &state, 8).await;
    let climber_first = state["seats"][0]["player"] == climber.id.as_str();
    let (sybil_ws, climber_ws) = if climber_first {
        (&mut second, &mut first)
    } else {
        (&mut first, &mut second)
    };
    sybil_ws.send(json!({"t": "resign"})).await;
    let over = climber_ws.until("over", WAIT).await;
    assert_eq!(over["reason"], "resign", "{over}");
    assert_ne!(over["result"], "aborted", "{game}: {over}");
    game
}

/// Waits until every rated game has been rated.
async fn all_rated(arena: &Arena) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let pending: i64 =
            sqlx::query_scalar("SELECT count(*) FROM rating_outbox WHERE processed_at IS NULL")
                .fetch_one(&arena.stores.postgres)
                .await
                .unwrap();
        if pending == 0 {
            return;
        }
        assert!(Instant::now() < deadline, "{pending} games still unrated");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn kalah_rating(arena: &Arena, who: &Guest) -> f64 {
    sqlx::query_scalar(
        "SELECT rating FROM ratings WHERE player_id = $1::uuid AND variant = 'kalah'",
    )
    .bind(&who.id)
    .fetch_optional(&arena.stores.postgres)
    .await
    .unwrap()
    .unwrap_or(1500.0)
}

/// The open automatic reports about `who`, as the moderators' queue shows
/// them.
async fn automatic_reports(arena: &Arena, moderator: &Guest, who: &Guest) -> Vec<Value> {
    let (status, queue) = call(
        "GET",
        format!("{}/v1/mod/reports", arena.base()),
        None,
        Some(&moderator.token),
    )
    .await;
    assert_eq!(status, 200, "{queue}");
    queue["accounts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|account| account["player"]["id"] == who.id.as_str())
        .flat_map(|account| account["reports"].as_array().unwrap().clone())
        .filter(|report| report["reporter"].is_null())
        .collect()
}

/// The attack of the issue: one registered climber, thirty registered
/// sybils each from its own network, five rated Kalah 3+2 games each, 8
/// plies then the sybil resigns. Before: 148 of 148 rated, 1500 → 2559.
/// Now the climber gains under 200 (thin opponents give 80 a month, net),
/// and the sentinel has reported the ring within a minute of the 20th
/// game, with the games as evidence.
#[actix_rt::test]
async fn a_ring_on_thirty_networks_gives_its_climber_under_200_and_is_reported_within_a_minute() {
    let arena = Arena::start(&MANY_GAMES).await;
    let boss = arena.admin("boss").await;
    let climber = arena.registered("climber").await;
    let mut sybils = Vec::new();
    for n in 1..=30 {
        sybils.push(sybil(&arena, n).await);
    }
    let mut played = 0;
    let mut reported_after = None;
    for sybil in &sybils {
        for _ in 0..5 {
            thrown_game(&arena, &climber, sybil).await;
            played += 1;
            if played == 20 {
                let twentieth = Instant::now();
                loop {
                    let reports = automatic_reports(&arena, &boss, &climber).await;
                    if let Some(ring) = reports
                        .iter()
                        .find(|report| report["evidence"]["signal"] == "ring")
                    {
                        assert_eq!(ring["reason"], "boosting", "{ring}");
                        assert_eq!(ring["reporter_standing"], "automatic", "{ring}");
                        let games = ring["evidence"]["games"].as_array().unwrap();
                        assert!(games.len() >= 10, "the games named: {ring}");
                        reported_after = Some(twentieth.elapsed());
                        break;
                    }
                    assert!(
                        twentieth.elapsed() < Duration::from_secs(60),
                        "no ring report within 60 s of the 20th game"
                    );
                    tokio::time::sleep(Duration::from_millis(250)).await;
                }
            }
        }
    }
    all_rated(&arena).await;
    let gained = kalah_rating(&arena, &climber).await - 1500.0;
    println!(
        "ring of 30 on 30 networks: {played} games, the climber gained {gained:.1}, reported {:?} after the 20th game",
        reported_after.unwrap()
    );
    assert!(gained < 200.0, "the climber gained {gained}");
    let rated: i64 = arena
        .scalar(
            "SELECT count(*) FROM rating_history WHERE player_id = $1 AND opponent_thin",
            &climber.id,
        )
        .await;
    assert_eq!(rated, 150, "every game rated, each against a thin opponent");
    arena.stores.cleanup().await.unwrap();
}

/// While a player's rated game is on, the site gives them no engine
/// output: a hint in a hotseat game (set up in the same position or not),
/// a new game against the AI, an analysis.
#[actix_rt::test]
async fn no_engine_help_reaches_a_player_whose_rated_game_is_on() {
    let arena = Arena::start(&[]).await;
    let (cheat, other) = (
        arena.registered("cheat").await,
        arena.registered("other").await,
    );
    // A finished game to ask an analysis of, before the rated one starts.
    let (status, made) = call(
        "POST",
        format!("{}/v1/hotseat-games", arena.base()),
        Some(json!({"variant": "kalah"})),
        Some(&cheat.token),
    )
    .await;
    assert_eq!(status, 201, "{made}");
    let side_game = made["game_id"].as_str().unwrap().to_owned();
    let (mut side, state) = arena.play(&side_game, &cheat).await;
    side.send(json!({"t": "move", "d": {"pit": state["legal"][0], "ply": 1}}))
        .await;
    side.until("moved", WAIT).await;
    // A hint before the rated game: the engine's move comes.
    side.send(json!({"t": "hint"})).await;
    side.until("hint", WAIT).await;

    let (rated, _sockets, _) = rated_game(&arena, &other, &cheat).await;
    side.send(json!({"t": "hint"})).await;
    let refused = side.until("error", WAIT).await;
    assert_eq!(refused["code"], "not_allowed", "{refused}");
    assert_eq!(refused["game_id"], rated.as_str(), "{refused}");
    let (status, refused) = call(
        "POST",
        format!("{}/v1/ai-games", arena.base()),
        Some(json!({"variant": "kalah", "level": "perfect", "side": "first"})),
        Some(&cheat.token),
    )
    .await;
    assert_eq!(
        (status, refused["code"].as_str()),
        (409, Some("not_allowed")),
        "{refused}"
    );
    side.send(json!({"t": "resign"})).await;
    side.until("over", WAIT).await;
    let (status, refused) = call(
        "GET",
        format!("{}/v1/games/{side_game}/analysis", arena.base()),
        None,
        Some(&cheat.token),
    )
    .await;
    assert_eq!(
        (status, refused["code"].as_str()),
        (409, Some("not_allowed")),
        "{refused}"
    );
    arena.stores.cleanup().await.unwrap();
}

/// Plays one rated game between `engine` (seat given by the state) and
/// `honest` to the end: the engine plays the Perfect AI's moves a steady
/// second apart, the honest player a legal move after a varied think.
async fn engine_game(
    arena: &Arena,
    engine: &Guest,
    honest: &Guest,
    ai: &mut mancala_ai::Ai<mancala_rules::Kalah>,
    seed: u64,
) -> String {
    use mancala_ai::Chooser;
    let (game, [mut first, mut second], state) = rated_game(arena, honest, engine).await;
    let engine_seat = if state["seats"][0]["player"] == engine.id.as_str() {
        0
    } else {
        1
    };
    let mut board = mancala_rules::Game::new(mancala_rules::Kalah::default());
    let (mut turn, mut legal, mut ply) = (
        state["turn"].as_u64(),
        state["legal"].clone(),
        state["ply"].as_u64().unwrap(),
    );
    let mut think = seed;
    while let Some(side) = turn {
        let pit = if side == engine_seat {
            // A program's pace: every move a second after the last, however
            // long the search took (rarely more than that).
            let started = Instant::now();
            let decision = ai
                .choose(&board, &mancala_ai::Level::Perfect.default_budget())
                .unwrap();
            let pace = Duration::from_millis(1000);
            tokio::time::sleep(pace.saturating_sub(started.elapsed())).await;
            u64::from(decision.pit.get())
        } else {
            // A person: from a moment to a couple of seconds, and not the
            // best move as a rule.
            think = think
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            tokio::time::sleep(Duration::from_millis(40 + (think >> 33) % 900)).await;
            let choices = legal.as_array().unwrap();
            choices[((think >> 20) as usize) % choices.len()]
                .as_u64()
                .unwrap()
        };
        let mover = if side == 0 { &mut first } else { &mut second };
        mover
            .send(json!({"t": "move", "d": {"pit": pit, "ply": ply + 1}}))
            .await;
        let moved = first.until("moved", WAIT).await;
        second.until("moved", WAIT).await;
        board
            .play(mancala_rules::Pit::new(pit as u8).unwrap())
            .unwrap();
        (turn, legal, ply) = (
            moved["turn"].as_u64(),
            moved["legal"].clone(),
            moved["ply"].as_u64().unwrap(),
        );
    }
    first.until("over", WAIT).await;
    game
}

/// An account that plays the Perfect engine's moves at a program's steady
/// pace against ten different honest opponents (each from a network of
/// its own) is reported by the sentinel as a program, with each game's
/// accuracy; none of the honest players is.
#[actix_rt::test]
async fn the_perfect_engine_at_a_steady_pace_is_reported_with_its_accuracy() {
    let arena = Arena::start(&MANY_GAMES).await;
    let boss = arena.admin("boss").await;
    let engine = arena.registered("engine").await;
    let mut ai =
        mancala_ai::Ai::<mancala_rules::Kalah>::new(mancala_ai::Level::Perfect, 7).unwrap();
    let mut honest = Vec::new();
    for n in 0..10u8 {
        let local = IpAddr::V4(Ipv4Addr::new(127, 0, 100 + n, 1));
        let (id, token) = registered_from(arena.base(), &format!("honest{n}"), local).await;
        let player = Guest { id, token };
        engine_game(&arena, &engine, &player, &mut ai, u64::from(n) + 1).await;
        honest.push(player);
    }
    let last = Instant::now();
    let report = loop {
        let reports = automatic_reports(&arena, &boss, &engine).await;
        if let Some(found) = reports
            .into_iter()
            .find(|report| report["reason"] == "engine")
        {
            break found;
        }
        assert!(
            last.elapsed() < Duration::from_secs(180),
            "no engine report within 3 minutes of the last game"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    println!(
        "engine report {:?} after the last game: {}",
        last.elapsed(),
        report["evidence"]
    );
    // A program: an engine's accuracy (the analysis proves what it can
    // and estimates the rest, so a perfect move it could not prove may
    // read as a small loss) at a steady pace.
    let evidence = &report["evidence"];
    assert_eq!(evidence["signal"], "program", "{report}");
    let figure = |name: &str| evidence["figures"][name].as_f64().unwrap();
    assert!(figure("best_move_share") >= 0.85, "{report}");
    assert!(figure("move_time_cv") <= 0.25, "{report}");
    let games = evidence["games"].as_array().unwrap();
    assert!(games.len() >= 5, "{report}");
    for game in games {
        assert!(game["figures"]["moves"].as_f64().unwrap() > 0.0, "{game}");
        assert!(
            game["figures"]["best_move_share"].as_f64().is_some(),
            "{game}"
        );
    }
    for player in &honest {
        assert_eq!(
            automatic_reports(&arena, &boss, player).await,
            Vec::<Value>::new()
        );
    }
    arena.stores.cleanup().await.unwrap();
}

/// Plays `who`'s side of a game on its own socket until it is over: a
/// legal move whenever it is their turn; with `resign_at`, they resign on
/// their first turn at that ply or later. Whether they won.
async fn play_side(base: String, game: String, who: Guest, resign_at: Option<u64>) -> bool {
    let mut ws = Ws::open(format!("{base}/v1/games/{game}/play"))
        .await
        .unwrap();
    ws.send(json!({"t": "auth", "d": {"token": who.token}}))
        .await;
    // A pairing can be answered after its game was already decided (the
    // arena ended, the other side gone): that game is simply not played.
    let state = loop {
        let message = ws.next(WAIT).await.expect("an answer to auth");
        match message["t"].as_str() {
            Some("state") => break message["d"].clone(),
            Some("error") => return false,
            _ => {}
        }
    };
    let seat = state["you"].as_u64().unwrap();
    let (mut turn, mut legal, mut ply) = (
        state["turn"].as_u64(),
        state["legal"].clone(),
        state["ply"].as_u64().unwrap(),
    );
    loop {
        if turn == Some(seat) {
            if resign_at.is_some_and(|at| ply >= at) {
                ws.send(json!({"t": "resign"})).await;
            } else {
                ws.send(json!({"t": "move", "d": {"pit": legal[0], "ply": ply + 1}}))
                    .await;
            }
        }
        let message = loop {
            let message = ws.next(WAIT).await.expect("the game goes on");
            if message["t"] == "moved" || message["t"] == "over" {
                break message;
            }
        };
        if message["t"] == "over" {
            let won = if seat == 0 { "p0" } else { "p1" };
            return message["d"]["result"] == won;
        }
        let moved = &message["d"];
        (turn, legal, ply) = (
            moved["turn"].as_u64(),
            moved["legal"].clone(),
            moved["ply"].as_u64().unwrap(),
        );
    }
}

/// The arena of the issue: the climber and six registered sybils (a
/// network each) in a private rated arena, the sybils resigning to the
/// climber after 8 plies (and to each other, so as not to score). Before:
/// the climber 1st with 159 points, +219.5 rating, "rank 1" on the
/// profile. Now the climber gains under 100, and the profile shows the
/// place as a private arena's, not as a title.
#[actix_rt::test]
async fn a_private_arena_of_six_sybils_gives_under_100_and_no_title() {
    let arena = Arena::start(&[
        ("APP_TOURNAMENT_WAVE_MS", "100"),
        ("APP_LIMIT_GAMES_PER_PLAYER", "1000/60"),
    ])
    .await;
    let climber = arena.registered("climber").await;
    let (status, made) = call(
        "POST",
        format!("{}/v1/tournaments", arena.base()),
        Some(
            json!({"name": "Friday club", "variant": "kalah", "rated": true, "minutes": 30,
                    "time_control": {"initial_secs": 180, "increment_secs": 2}}),
        ),
        Some(&climber.token),
    )
    .await;
    assert_eq!(status, 201, "{made}");
    let (id, code) = (
        made["id"].as_str().unwrap().to_owned(),
        made["code"].as_str().unwrap().to_owned(),
    );
    let mut everyone = vec![climber.clone()];
    for n in 1..=6 {
        everyone.push(sybil(&arena, 200 + n).await);
    }
    let mut lobbies = Vec::new();
    for who in &everyone {
        let (status, joined) = call(
            "POST",
            format!("{}/v1/tournaments/{id}/join", arena.base()),
            Some(json!({"code": code})),
            Some(&who.token),
        )
        .await;
        assert_eq!(status, 204, "{joined}");
        lobbies.push(arena.lobby(who).await);
    }
    // Each sybil answers its pairings on its own, for as long as the test
    // runs: against the climber it resigns at ply 8, against another
    // sybil the one moving first resigns at ply 8. The climber keeps the
    // lobby it joined with (a pairing made while it had none would be
    // missed).
    let mut climber_lobby = lobbies.remove(0);
    for (who, mut lobby) in everyone.iter().skip(1).cloned().zip(lobbies.drain(..)) {
        let (base, climber) = (arena.base().to_owned(), climber.id.clone());
        actix_rt::spawn(async move {
            while let Some(matched) = lobby
                .until_or_none("matched", Duration::from_secs(120))
                .await
            {
                let game = matched["game_id"].as_str().unwrap().to_owned();
                let resign_at =
                    if matched["opponent"]["player"] == climber.as_str() || matched["seat"] == 0 {
                        Some(8)
                    } else {
                        None
                    };
                play_side(base.clone(), game, who.clone(), resign_at).await;
            }
        });
    }
    let mut wins = 0;
    while wins < 8 {
        let matched = climber_lobby
            .until("matched", Duration::from_secs(30))
            .await;
        let game = matched["game_id"].as_str().unwrap().to_owned();
        if play_side(arena.base().to_owned(), game, climber.clone(), None).await {
            wins += 1;
        }
    }
    all_rated(&arena).await;
    let gained = kalah_rating(&arena, &climber).await - 1500.0;
    // The arena ends (its end brought forward): the result on the profile.
    sqlx::query(
        "UPDATE tournaments SET ends_at = now(), starts_at = now() - interval '1 minute' WHERE id = $1::uuid",
    )
    .bind(&id)
    .execute(&arena.stores.postgres)
    .await
    .unwrap();
    let (_, results) = call(
        "GET",
        format!("{}/v1/players/{}/tournaments", arena.base(), climber.id),
        None,
        None,
    )
    .await;
    let result = &results["results"][0];
    println!("private arena of 6 sybils: {wins} wins, the climber gained {gained:.1}, {result}");
    assert!(gained < 100.0, "the climber gained {gained}");
    assert_eq!(result["rank"], 1, "{results}");
    assert_eq!(result["tournament"]["private"], true, "{results}");
    assert_eq!(
        result["title"], false,
        "a private arena is no title: {results}"
    );
    arena.stores.cleanup().await.unwrap();
}
