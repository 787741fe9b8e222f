//! Fair play against the real `arena` process (issue 40): each attack on
//! the ladder that needs no skill, replayed as the attacker would play it
//! from one address, and shown to fail. Every account here comes from
//! 127.0.0.1, the worst case for address-based rules: the fair-play
//! settings are the defaults; only the windows that would make a test wait
//! minutes (the first move, the pairing wave) are shortened where said.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, Instant};

use common::{Arena, WAIT, play_plies};
use mancala_tests::harness::{Guest, Ws, call, request};
use serde_json::{Value, json};

const KALAH_3_2: &str = "kalah:3+2";

fn queue_body(queue: &str) -> Value {
    let (variant, clock) = queue.split_once(':').unwrap();
    let (minutes, increment) = clock.split_once('+').unwrap();
    json!({"variant": variant, "time_control": {
        "initial_secs": minutes.parse::<u32>().unwrap() * 60,
        "increment_secs": increment.parse::<u32>().unwrap(),
    }})
}

/// Joins `queue`: the status it answers with, or the error that refused it
/// (the whole message). Statuses of the player's other queues are skipped.
async fn join(lobby: &mut Ws, queue: &str) -> Value {
    lobby
        .send(json!({"t": "queue_join", "d": queue_body(queue)}))
        .await;
    loop {
        let message = lobby.next(WAIT).await.expect("an answer to queue_join");
        let is_status = message["t"] == "queue_status" && message["d"]["queue"] == queue;
        if is_status || message["t"] == "error" {
            return message;
        }
    }
}

async fn standing(arena: &Arena, who: &Guest) -> Value {
    request(
        "GET",
        format!("{}/v1/me/fair-play", arena.base()),
        None,
        Some(&who.token),
    )
    .await
}

/// The offences recorded against `who`, oldest first.
async fn offences(arena: &Arena, who: &Guest) -> Vec<String> {
    sqlx::query_scalar(
        "SELECT kind FROM fair_play_offences WHERE player_id = $1::uuid ORDER BY at, game_id",
    )
    .bind(&who.id)
    .fetch_all(&arena.stores.postgres)
    .await
    .unwrap()
}

/// A rated Kalah 3+2 invite from `host`, accepted by `guest`: the game and
/// both play sockets with the first state, in seat order.
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

/// The sybil farm: a farmer and accounts it controls, all made from one
/// address, play rated games in which the sybil plays three moves a side
/// (past the quick-resign plies) and resigns. 30 games, 5 per sybil (the
/// pair limit). Returns the farmer's Kalah rating once every game is rated
/// (1500 if it never moved).
async fn farm(arena: &Arena, farmer: &Guest, sybils: &[Guest]) -> f64 {
    let mut games = 0;
    for sybil in sybils {
        for _ in 0..5 {
            let (game, [mut first, mut second], state) = rated_game(arena, farmer, sybil).await;
            play_plies([&mut first, &mut second], &state, 6).await;
            let farmer_first = state["seats"][0]["player"] == farmer.id.as_str();
            let (sybil_ws, farmer_ws) = if farmer_first {
                (&mut second, &mut first)
            } else {
                (&mut first, &mut second)
            };
            sybil_ws.send(json!({"t": "resign"})).await;
            let over = farmer_ws.until("over", WAIT).await;
            assert_eq!(over["reason"], "resign", "{over}");
            assert_ne!(over["result"], "aborted", "game {game}: {over}");
            games += 1;
        }
    }
    // Every game reaches the rating service: the sybils' ratings move.
    let deadline = Instant::now() + WAIT;
    loop {
        let rated: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM rating_history WHERE player_id = ANY($1::uuid[])",
        )
        .bind(sybils.iter().map(|s| s.id.clone()).collect::<Vec<_>>())
        .fetch_one(&arena.stores.postgres)
        .await
        .unwrap();
        let outbox: i64 =
            sqlx::query_scalar("SELECT count(*) FROM rating_outbox WHERE processed_at IS NULL")
                .fetch_one(&arena.stores.postgres)
                .await
                .unwrap();
        if rated == games && outbox == 0 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{rated} of {games} rated, {outbox} queued"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    sqlx::query_scalar(
        "SELECT rating FROM ratings WHERE player_id = $1::uuid AND variant = 'kalah'",
    )
    .bind(&farmer.id)
    .fetch_optional(&arena.stores.postgres)
    .await
    .unwrap()
    .unwrap_or(1500.0)
}

/// Before: 150 rated wins took a farmer from 1500 to 2561. Now an account
/// gains at most the linked-gain budget (50 points a variant a month)
/// from opponents made recently from a network it uses, however many.
#[actix_rt::test]
async fn a_sybil_farm_of_registered_accounts_from_one_address_gains_less_than_100() {
    let arena = Arena::start(&[]).await;
    let farmer = arena.registered("farmer").await;
    let mut sybils = Vec::new();
    for n in 0..6 {
        sybils.push(arena.registered(&format!("sybil{n}")).await);
    }
    let rating = farm(&arena, &farmer, &sybils).await;
    println!("the farmer after 30 games against 6 registered sybils: {rating:.1}");
    assert!(
        rating - 1500.0 <= 50.0 + 1e-6,
        "the farmer reached {rating}"
    );
    assert!(
        rating > 1500.0,
        "a real win still counts, within the budget"
    );
    let linked: i64 = arena
        .scalar(
            "SELECT count(*) FROM rating_history WHERE player_id = $1::uuid AND linked",
            &farmer.id,
        )
        .await;
    assert_eq!(
        linked, 30,
        "each game is on record as against a linked account"
    );
    arena.stores.cleanup().await.unwrap();
}

/// A registered account gains nothing from guests, however many: the
/// guests' rated games move the guests' ratings only.
#[actix_rt::test]
async fn a_farm_of_guests_moves_a_registered_account_not_at_all() {
    let arena = Arena::start(&[]).await;
    let farmer = arena.registered("farmer").await;
    let mut sybils = Vec::new();
    for _ in 0..6 {
        sybils.push(arena.guest().await);
    }
    let rating = farm(&arena, &farmer, &sybils).await;
    assert_eq!(rating, 1500.0);
    let (_, history) = arena.rated(&farmer).await;
    assert_eq!(history, 0, "no rating change of the farmer's is on record");
    arena.stores.cleanup().await.unwrap();
}

/// A griefer who takes pairings and never starts the games: each no-start
/// is charged to the side that did not move, the third in the window bans
/// ranked play (the fourth attempt is refused, with the time left), fresh
/// guests from the same network inherit the ban, and the victims keep
/// their place (a registered victim is never charged for it).
#[actix_rt::test]
async fn a_griefer_who_never_starts_is_refused_ranked_play_by_the_fourth_try() {
    let arena = Arena::start(&[("APP_FIRST_MOVE_SECS", "2")]).await;
    for round in 0..3 {
        // A fresh guest every time, as a griefer would.
        let griefer = arena.guest().await;
        let victim = arena.registered(&format!("victim{round}")).await;
        let (mut g, mut v) = (arena.lobby(&griefer).await, arena.lobby(&victim).await);
        let joined = join(&mut g, KALAH_3_2).await;
        assert_eq!(joined["t"], "queue_status", "round {round}: {joined}");
        join(&mut v, KALAH_3_2).await;
        let matched = v.until("matched", WAIT).await;
        let game = matched["game_id"].as_str().unwrap().to_owned();
        g.until("matched", WAIT).await;
        // Straight back into the queue: refused while the game is on.
        let again = join(&mut g, KALAH_3_2).await;
        assert_eq!(again["d"]["code"], "in_ranked_game", "{again}");
        let (mut play, state) = arena.play(&game, &victim).await;
        if matched["seat"] == 0 {
            play.send(json!({"t": "move", "d": {"pit": state["legal"][0], "ply": 1}}))
                .await;
        }
        let over = play.until("over", WAIT).await;
        assert_eq!(
            (over["result"].as_str(), over["reason"].as_str()),
            (Some("aborted"), Some("no_start"))
        );
        assert_eq!(offences(&arena, &griefer).await, ["no_start"]);
        assert_eq!(offences(&arena, &victim).await, Vec::<String>::new());
        if round == 1 {
            // One more and ranked play closes: the lobby says so.
            let mut next = arena.lobby(&arena.guest().await).await;
            let warning = next.until("fair_play", WAIT).await;
            assert_eq!(warning["warned"], true, "{warning}");
            assert_eq!(warning["banned_secs"], Value::Null, "{warning}");
        }
    }
    // The fourth griefer is refused, and told for how long.
    let griefer = arena.guest().await;
    let mut g = Ws::open(format!("{}/v1/lobby", arena.base()))
        .await
        .unwrap();
    g.send(json!({"t": "auth", "d": {"token": griefer.token}}))
        .await;
    let told = g.until("fair_play", WAIT).await;
    let banned = told["banned_secs"].as_u64().expect("banned");
    assert!(
        (590..=600).contains(&banned),
        "the first ban is 10 minutes: {told}"
    );
    assert_eq!(told["offences"].as_array().unwrap().len(), 3, "{told}");
    assert_eq!(told["offences"][0]["on_network"], true, "{told}");
    let refused = join(&mut g, KALAH_3_2).await;
    assert_eq!(refused["d"]["code"], "ranked_banned", "{refused}");
    assert!(refused["d"]["retry_after"].as_u64().is_some(), "{refused}");
    assert_eq!(
        standing(&arena, &griefer).await["banned_secs"],
        told["banned_secs"]
    );
    // Nor can it accept a rated invite; a casual one stays open to it.
    let host = arena.registered("host").await;
    let code = arena.invite(&host, Arena::rated_invite()).await;
    let (status, body) = arena.accept(&griefer, &code).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (403, Some("ranked_banned")),
        "{body}"
    );
    let casual = arena.room(&host, &griefer, false, None).await;
    assert!(!casual.is_empty());
    // A registered player on the same network is judged by their own record.
    let mut honest = arena.lobby(&arena.registered("honest").await).await;
    let joined = join(&mut honest, KALAH_3_2).await;
    assert_eq!(joined["t"], "queue_status", "{joined}");
    arena.stores.cleanup().await.unwrap();
}

/// With every setting at its default (a 60 s first-move window, a 2 s
/// pairing wave, a 20 s AI fallback): the victim of a griefer who never
/// opens the game is in a real game within 90 s of joining the queue,
/// since a spoiled pairing gives the victim their place back.
#[actix_rt::test]
async fn with_default_settings_a_griefers_victim_plays_within_90_seconds() {
    let arena = Arena::start_default().await;
    let griefer = arena.guest().await;
    let victim = arena.registered("victim").await;
    let started = Instant::now();
    let (mut g, mut v) = (arena.lobby(&griefer).await, arena.lobby(&victim).await);
    join(&mut g, KALAH_3_2).await;
    join(&mut v, KALAH_3_2).await;
    let matched = v.until("matched", WAIT).await;
    let game = matched["game_id"].as_str().unwrap().to_owned();
    let (mut play, state) = arena.play(&game, &victim).await;
    if matched["seat"] == 0 {
        play.send(json!({"t": "move", "d": {"pit": state["legal"][0], "ply": 1}}))
            .await;
    }
    // The lobby stays open meanwhile, answering its pings as a browser
    // tab does.
    let over = loop {
        if let Some(over) = play.until_or_none("over", Duration::from_secs(1)).await {
            break over;
        }
        v.next(Duration::from_millis(20)).await;
        assert!(started.elapsed() < Duration::from_secs(80), "no abort");
    };
    assert_eq!(over["reason"], "no_start", "{over}");
    // Back in the queue, as the client offers: at once the AI (nobody else
    // is waiting), not another 20 s.
    let joined = join(&mut v, KALAH_3_2).await;
    assert_eq!(joined["t"], "queue_status", "{joined}");
    let next = v.until("matched", Duration::from_secs(10)).await;
    let (_, state) = arena.play(next["game_id"].as_str().unwrap(), &victim).await;
    assert_eq!(state["status"], "live");
    let waited = started.elapsed();
    assert!(waited < Duration::from_secs(90), "{waited:?}");
    println!(
        "victim in a game {waited:?} after joining (opponent: {})",
        next["opponent"]
    );
    arena.stores.cleanup().await.unwrap();
}

/// Declining a pairing by resigning at ply 0 when seated second: each is
/// an early abort (the third bans), and the first-move balance reads only
/// games that started, so the declined pairings never bring the first
/// move back.
#[actix_rt::test]
async fn resigning_at_once_when_seated_second_picks_no_side_and_is_sanctioned() {
    let arena = Arena::start(&[]).await;
    let picker = arena.registered("picker").await;
    let mut lobby = arena.lobby(&picker).await;
    let (mut declined, mut seats) = (0, Vec::new());
    for round in 0.. {
        let opponent = arena.registered(&format!("opponent{round}")).await;
        let joined = join(&mut lobby, KALAH_3_2).await;
        if joined["t"] == "error" {
            assert_eq!(joined["d"]["code"], "ranked_banned", "{joined}");
            break;
        }
        assert!(round < 10, "never banned: seats {seats:?}");
        let mut other = arena.lobby(&opponent).await;
        join(&mut other, KALAH_3_2).await;
        let matched = lobby.until("matched", WAIT).await;
        other.until("matched", WAIT).await;
        let game = matched["game_id"].as_str().unwrap().to_owned();
        let seat = matched["seat"].as_u64().unwrap();
        seats.push(seat);
        let (mut mine, state) = arena.play(&game, &picker).await;
        let (mut theirs, _) = arena.play(&game, &opponent).await;
        if seat == 1 {
            mine.send(json!({"t": "resign"})).await;
            let over = mine.until("over", WAIT).await;
            assert_eq!(over["result"], "aborted", "{over}");
            declined += 1;
        } else {
            play_plies([&mut mine, &mut theirs], &state, 6).await;
            theirs.send(json!({"t": "resign"})).await;
            mine.until("over", WAIT).await;
        }
    }
    assert_eq!(declined, 3, "the third early abort bans: seats {seats:?}");
    assert_eq!(offences(&arena, &picker).await, ["early_abort"; 3]);
    // Once the picker has had a first move in a game that started, every
    // later pairing with a newcomer seats it second: the declined ones
    // never counted.
    if let Some(first) = seats.iter().position(|&seat| seat == 0) {
        assert!(
            seats[first + 1..].iter().all(|&seat| seat == 1),
            "seats {seats:?}"
        );
    }
    arena.stores.cleanup().await.unwrap();
}

/// Registering a guest ends the guest's session at once: its access token
/// is refused by the process that registered it, and its sockets close.
#[actix_rt::test]
async fn registering_ends_the_guests_old_token_at_once() {
    let arena = Arena::start(&[]).await;
    let guest = arena.guest().await;
    let mut lobby = arena.lobby(&guest).await;
    let me = format!("{}/v1/me", arena.base());
    assert_eq!(
        call("GET", me.clone(), None, Some(&guest.token)).await.0,
        200
    );
    let session = request(
        "POST",
        format!("{}/v1/auth/register", arena.base()),
        Some(json!({"username": "newcomer", "password": "correct horse battery"})),
        Some(&guest.token),
    )
    .await;
    let (status, error) = call("GET", me.clone(), None, Some(&guest.token)).await;
    assert_eq!(
        (status, error["code"].as_str()),
        (401, Some("token_invalid")),
        "{error}"
    );
    let fresh = session["access_token"].as_str().unwrap();
    assert_eq!(call("GET", me, None, Some(fresh)).await.0, 200);
    let told = lobby.until_or_none("error", WAIT).await.expect("told why");
    assert_eq!(told["code"], "token_invalid");
    assert_eq!(lobby.close_code(WAIT).await, Some(1008));
    arena.stores.cleanup().await.unwrap();
}

/// Sign-in and sign-out in a loop: successful sign-ins are limited per
/// account (and per address), and the revoked list holds one entry per
/// sign-out that happened, never more.
#[actix_rt::test]
async fn a_sign_in_sign_out_loop_is_refused_past_the_limit() {
    let arena = Arena::start(&[]).await;
    arena.registered("looper").await;
    let revoked_list = || async {
        let listed: u64 = redis::cmd("XLEN")
            .arg(format!("{}sessions:revoked", arena.stores.prefix))
            .query_async(&mut arena.stores.redis.connection())
            .await
            .unwrap();
        listed
    };
    // Registering a guest ended the guest's session: listed already.
    let before = revoked_list().await;
    let (mut signed_in, mut refused) = (0, None);
    for attempt in 0..30 {
        let (status, body) = call(
            "POST",
            format!("{}/v1/auth/login", arena.base()),
            Some(json!({"username": "looper", "password": "correct horse battery"})),
            None,
        )
        .await;
        if status != 200 {
            refused = Some((attempt, status, body));
            break;
        }
        signed_in += 1;
        let (status, _) = call(
            "POST",
            format!("{}/v1/auth/logout", arena.base()),
            Some(json!({"refresh_token": body["refresh_token"]})),
            None,
        )
        .await;
        assert_eq!(status, 204);
    }
    let (attempt, status, body) = refused.expect("the loop is refused");
    assert_eq!(attempt, 20, "20 sign-ins an hour to one account");
    assert_eq!(
        (status, body["code"].as_str()),
        (429, Some("rate_limited")),
        "{body}"
    );
    assert!(body["retry_after"].as_u64().is_some(), "{body}");
    let listed = revoked_list().await - before;
    assert!(
        listed <= signed_in,
        "{listed} listed for {signed_in} sign-outs"
    );
    arena.stores.cleanup().await.unwrap();
}

/// Admission (`promised`): a player waiting in several queues counts once
/// toward the players who will take the free places, and one with a live
/// game not at all. Two places, one held by an AI game: two waiting
/// players may be admitted.
#[actix_rt::test]
async fn a_player_in_many_queues_counts_once_and_a_playing_one_not_at_all() {
    let arena = Arena::start(&[
        ("APP_OVERLOAD_GAMES", "2"),
        // No pairing while the test fills the queues.
        ("APP_PAIRING_WAVE_MS", "600000"),
    ])
    .await;
    let (many, playing, third, fourth) = (
        arena.guest().await,
        arena.guest().await,
        arena.guest().await,
        arena.guest().await,
    );
    let game = request(
        "POST",
        format!("{}/v1/ai-games", arena.base()),
        Some(json!({"variant": {"variant": "kalah"}, "level": "beginner", "side": "first"})),
        Some(&playing.token),
    )
    .await;
    let (mut play, state) = arena
        .play(game["game_id"].as_str().unwrap(), &playing)
        .await;
    play.send(json!({"t": "move", "d": {"pit": state["legal"][0], "ply": 1}}))
        .await;
    play.until("moved", WAIT).await;
    let mut lobby = arena.lobby(&many).await;
    for queue in [
        "kalah:10+5",
        "oware:3+2",
        "oware:10+5",
        "mangala:3+2",
        "mangala:10+5",
    ] {
        let joined = join(&mut lobby, queue).await;
        assert_eq!(joined["t"], "queue_status", "{queue}: {joined}");
    }
    for (who, admitted) in [(&playing, true), (&third, true), (&fourth, false)] {
        let mut lobby = arena.lobby(who).await;
        let joined = join(&mut lobby, KALAH_3_2).await;
        let code = joined["d"]["code"].as_str().unwrap_or("admitted");
        assert_eq!(code == "admitted", admitted, "{joined}");
        if !admitted {
            assert_eq!(code, "unavailable", "{joined}");
        }
    }
    arena.stores.cleanup().await.unwrap();
}
