//! Cheap floods (issue 59), against the real `arena` process with its
//! default limits, the way one address or one free account plays them:
//! anonymous sockets by the thousand, and one player accepting two rated
//! invites at the same instant.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, Instant};

use common::{Arena, WAIT};
use futures_util::future::join_all;
use mancala_tests::harness::{Guest, Ws, call};
use serde_json::{Value, json};

/// Signs up as many players as a test needs from the one test address.
const MANY_SIGNUPS: (&str, &str) = ("APP_LIMIT_SIGNUPS_PER_IP", "100000/3600");

async fn ai_game(arena: &Arena, who: &Guest) -> String {
    let (status, game) = call(
        "POST",
        format!("{}/v1/ai-games", arena.base()),
        Some(json!({"variant": "kalah", "level": "beginner", "side": "first"})),
        Some(&who.token),
    )
    .await;
    assert_eq!(status, 201, "{game}");
    game["game_id"].as_str().unwrap().to_owned()
}

/// A watch socket's first answer: `Some(state)` when it was let in, `None`
/// when it was turned away with `rate_limited`, a `retry_after` and 1013.
async fn watch(base: &str, game: &str) -> Option<Ws> {
    let mut ws = Ws::open(format!("{base}/v1/games/{game}/watch"))
        .await
        .unwrap();
    let first = ws.next(WAIT).await.expect("an answer");
    match first["t"].as_str() {
        Some("state") => Some(ws),
        Some("error") => {
            assert_eq!(first["d"]["code"], "rate_limited", "{first}");
            assert!(first["d"]["retry_after"].as_u64().unwrap() > 0, "{first}");
            assert_eq!(ws.close_code(WAIT).await, Some(1013));
            None
        }
        _ => panic!("unexpected {first}"),
    }
}

/// 1,500 anonymous watch sockets from one address: the arena holds its
/// share for that address (300 by default) and turns the rest away with a
/// clear code and when to retry; meanwhile a player elsewhere starts a
/// game against the AI and has its first reply at once, and the process
/// never runs out of descriptors.
#[actix_rt::test]
async fn a_flood_of_anonymous_watchers_keeps_to_its_share_and_players_play() {
    raise_own_open_files();
    let log = std::env::temp_dir().join(format!("floods-{}.log", uuid::Uuid::new_v4()));
    let arena = Arena::start_logged(&[], &log).await;
    let owner = arena.guest().await;
    let game = ai_game(&arena, &owner).await;
    let mut held = Vec::new();
    let mut refused = 0;
    for wave in 0..15 {
        let opened = join_all((0..100).map(|_| watch(arena.base(), &game))).await;
        for socket in opened {
            match socket {
                Some(ws) => held.push(ws),
                None => refused += 1,
            }
        }
        if wave == 10 {
            // A player on another network, in the middle of the flood.
            let player = arena.guest().await;
            let game = ai_game(&arena, &player).await;
            let started = Instant::now();
            let (mut ws, state) = arena.play(&game, &player).await;
            ws.send(json!({"t": "move", "d": {"pit": state["legal"][0], "ply": 1}}))
                .await;
            let replied = loop {
                let moved = ws.until("moved", WAIT).await;
                if moved["by"] == 1 {
                    break started.elapsed();
                }
            };
            println!("a player's first AI reply during the flood: {replied:?}");
            assert!(replied < Duration::from_secs(3), "{replied:?}");
        }
    }
    println!(
        "1,500 anonymous watchers from one address: {} held, {refused} turned away",
        held.len()
    );
    assert_eq!(held.len(), 300, "the address's share");
    assert_eq!(refused, 1200);
    let (_, metrics) = metrics_text(&arena).await;
    assert!(
        metrics.contains("sockets_refused_total{reason=\"address\"} 1200"),
        "{metrics}"
    );
    // A watcher who leaves gives the place back.
    drop(held.pop());
    let mut back = None;
    for _ in 0..50 {
        back = watch(arena.base(), &game).await;
        if back.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(back.is_some(), "a place given back is free again");
    let logged = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        !logged.contains("Too many open files"),
        "the process ran out of descriptors"
    );
    let _ = std::fs::remove_file(&log);
    arena.stores.cleanup().await.unwrap();
}

/// The test's own process opens the sockets of the flood too.
fn raise_own_open_files() {
    let _ = rlimit::increase_nofile_limit(u64::MAX);
}

async fn metrics_text(arena: &Arena) -> (u16, String) {
    let mut response = mancala_tests::harness::client()
        .get(format!("{}/metrics", arena.base()))
        .send()
        .await
        .unwrap();
    let body = response.body().limit(8 << 20).await.unwrap();
    (
        response.status().as_u16(),
        String::from_utf8_lossy(&body).into_owned(),
    )
}

/// One player accepts two rated invites from two people at the same
/// instant, fifty times over (before: both rated games started in 7 of 8
/// trials). Both games are made, but never two rated ones: the one made
/// second is casual and says why.
#[actix_rt::test]
async fn two_rated_invites_accepted_at_once_never_make_two_rated_games() {
    let arena = Arena::start(&[MANY_SIGNUPS]).await;
    let mut both_made = 0;
    for _ in 0..50 {
        let (first_host, second_host, player) = (
            arena.guest().await,
            arena.guest().await,
            arena.guest().await,
        );
        let codes = [
            arena.invite(&first_host, Arena::rated_invite()).await,
            arena.invite(&second_host, Arena::rated_invite()).await,
        ];
        let answers: Vec<(u16, Value)> =
            join_all(codes.iter().map(|code| arena.accept(&player, code))).await;
        let made: Vec<&Value> = answers
            .iter()
            .filter(|(status, _)| *status == 201)
            .map(|(_, body)| body)
            .collect();
        if made.len() == 2 {
            both_made += 1;
        }
        let live_rated = arena
            .scalar(
                "SELECT count(*) FROM games WHERE status = 'live' AND rated
                 AND (seat0_player = $1::uuid OR seat1_player = $1::uuid)",
                &player.id,
            )
            .await;
        assert_eq!(live_rated, 1, "{answers:?}");
        for (status, body) in &answers {
            if *status != 201 {
                assert_eq!(status, &409, "{body}");
            }
        }
    }
    println!(
        "two rated invites accepted at once, 50 trials: {both_made} times both games made, never two rated"
    );
    arena.stores.cleanup().await.unwrap();
}

fn private_arena(name: &str) -> Value {
    json!({"name": name, "variant": "kalah", "rated": false, "minutes": 30,
           "time_control": {"initial_secs": 180, "increment_secs": 2}})
}

async fn make_arena(arena: &Arena, who: &Guest, name: &str) -> (u16, Value) {
    call(
        "POST",
        format!("{}/v1/tournaments", arena.base()),
        Some(private_arena(name)),
        Some(&who.token),
    )
    .await
}

/// One free account making private arenas as fast as it can (before:
/// 6,000 in 26 s) has five not yet over at most; the accounts of one
/// address together make 60 an hour at most; each refusal is a 429 that
/// says when to come back.
#[actix_rt::test]
async fn private_arenas_are_limited_per_account_and_per_address() {
    let arena = Arena::start(&[MANY_SIGNUPS]).await;
    let maker = arena.registered("maker").await;
    let names: Vec<String> = (0..40).map(|n| format!("club {n}")).collect();
    let answers = join_all(names.iter().map(|name| make_arena(&arena, &maker, name))).await;
    let made = answers.iter().filter(|(status, _)| *status == 201).count();
    println!("one account, 40 arenas asked at once: {made} made");
    assert_eq!(made, 5, "{answers:?}");
    for (status, body) in answers.iter().filter(|(status, _)| *status != 201) {
        assert_eq!(*status, 429, "{body}");
        assert_eq!(body["code"], "rate_limited", "{body}");
    }
    // Twelve more accounts from the same address, five arenas each: the
    // address's 60 an hour is spent.
    let mut refused_for_address = 0;
    for n in 0..12 {
        let other = arena.registered(&format!("maker{n}")).await;
        for m in 0..5 {
            let (status, body) = make_arena(&arena, &other, &format!("c{n}-{m}")).await;
            if status == 429 {
                assert!(
                    body["message"].as_str().unwrap().contains("address"),
                    "{body}"
                );
                refused_for_address += 1;
            }
        }
    }
    // The first account's burst spent 20 of them (its own rate let 20
    // through to the address's count; the five arenas it may have went
    // to the first five), so 40 more are made and 20 refused.
    assert_eq!(refused_for_address, 20, "60 from one address in the hour");
    arena.stores.cleanup().await.unwrap();
}

/// A join/withdraw loop on one arena (before: 1,666 requests in 30 s and
/// 198,917 standings pushes to 200 followers): past its rate the account
/// is refused, and a follower meanwhile gets at most one board a second.
#[actix_rt::test]
async fn a_join_withdraw_loop_is_refused_and_followers_get_one_board_a_second() {
    let arena = Arena::start(&[]).await;
    let maker = arena.registered("maker").await;
    let (status, made) = make_arena(&arena, &maker, "loop").await;
    assert_eq!(status, 201, "{made}");
    let (id, code) = (
        made["id"].as_str().unwrap().to_owned(),
        made["code"].as_str().unwrap().to_owned(),
    );
    let mut follower = Ws::open(format!("{}/v1/tournaments/{id}/live", arena.base()))
        .await
        .unwrap();
    follower.until("standings", WAIT).await;
    let looper = arena.registered("looper").await;
    let started = Instant::now();
    let requests = (0..200).map(|n| {
        let (action, body) = if n % 2 == 0 {
            ("join", Some(json!({"code": code})))
        } else {
            ("withdraw", None)
        };
        call(
            "POST",
            format!("{}/v1/tournaments/{id}/{action}", arena.base()),
            body,
            Some(&looper.token),
        )
    });
    let answers: Vec<(u16, Value)> = join_all(requests).await;
    let refused = answers.iter().filter(|(status, _)| *status == 429).count();
    let burst = started.elapsed();
    println!("200 join/withdraw requests at once: {refused} refused (429) in {burst:?}");
    assert!(refused >= 150, "{refused} refused");
    // The boards pushed while the burst's changes arrive, and a second after.
    let mut boards = 0;
    let window = burst + Duration::from_secs(2);
    while let Some(_board) = follower
        .until_or_none("standings", window.saturating_sub(started.elapsed()))
        .await
    {
        boards += 1;
    }
    let seconds = window.as_secs_f64().ceil() as usize;
    println!("boards pushed to a follower over {window:?}: {boards}");
    assert!(boards <= seconds + 1, "{boards} boards in {window:?}");
    arena.stores.cleanup().await.unwrap();
}

/// Arenas nobody plays in cost a wave nothing: with 6,000 empty private
/// arenas running beside a real one, each pass visits only the arenas
/// with someone to pair, and the real one's players are paired as before.
#[actix_rt::test]
async fn empty_arenas_cost_a_wave_nothing() {
    let arena = Arena::start(&[("APP_TOURNAMENT_WAVE_MS", "200")]).await;
    let maker = arena.registered("maker").await;
    sqlx::query(
        "INSERT INTO tournaments (id, name, code, variant, initial_secs, increment_secs,
                                  starts_at, ends_at, rated, created_at)
         SELECT gen_random_uuid(), 'empty ' || n, 'E' || n, 'kalah', 180, 2,
                now() - interval '1 minute', now() + interval '1 hour', false, now()
         FROM generate_series(1, 6000) AS n",
    )
    .execute(&arena.stores.postgres)
    .await
    .unwrap();
    let (status, made) = make_arena(&arena, &maker, "real").await;
    assert_eq!(status, 201, "{made}");
    let (id, code) = (
        made["id"].as_str().unwrap().to_owned(),
        made["code"].as_str().unwrap().to_owned(),
    );
    let players = [arena.guest().await, arena.guest().await];
    let mut lobbies = Vec::new();
    for player in &players {
        lobbies.push(arena.lobby(player).await);
        let (status, body) = call(
            "POST",
            format!("{}/v1/tournaments/{id}/join", arena.base()),
            Some(json!({"code": code})),
            Some(&player.token),
        )
        .await;
        assert_eq!(status, 204, "{body}");
    }
    // Waves run every 200 ms: the pair is matched within a few.
    let started = Instant::now();
    for lobby in &mut lobbies {
        lobby.until("matched", Duration::from_secs(10)).await;
    }
    println!(
        "beside 6,000 empty arenas, a real arena's pair matched in {:?}",
        started.elapsed()
    );
    let (_, metrics) = metrics_text(&arena).await;
    let visited = metrics
        .lines()
        .find_map(|line| line.strip_prefix("tournament_pass_arenas "))
        .map(|value| value.trim().parse::<f64>().unwrap());
    assert!(
        visited.is_some_and(|n| n <= 1.0),
        "a pass visits only the arenas with work: {visited:?}"
    );
    arena.stores.cleanup().await.unwrap();
}
