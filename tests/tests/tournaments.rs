//! Arena tournaments against the real `arena` process (issue 44): a
//! private arena joined by its code pairs its present players, scores a
//! streak, and keeps exactly its standings across a `kill -9`; the
//! operator's schedule makes its arenas once.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, Instant};

use common::{Arena, WAIT, play_plies};
use mancala_tests::harness::{Guest, Ws, call};
use serde_json::{Value, json};

/// Pairing waves every 100 ms: a free player is paired at once.
const FAST: [(&str, &str); 1] = [("APP_TOURNAMENT_WAVE_MS", "100")];

async fn create(arena: &Arena, who: &Guest, body: Value) -> Value {
    let (status, made) = call(
        "POST",
        format!("{}/v1/tournaments", arena.base()),
        Some(body),
        Some(&who.token),
    )
    .await;
    assert_eq!(status, 201, "{made}");
    made
}

/// A private Kalah 3+2 arena of 30 minutes made by `host`, starting at
/// once: its id and code.
async fn private_arena(arena: &Arena, host: &Guest, name: &str) -> (String, String) {
    let made = create(
        arena,
        host,
        json!({"name": name, "variant": "kalah",
               "time_control": {"initial_secs": 180, "increment_secs": 2}, "minutes": 30}),
    )
    .await;
    (
        made["id"].as_str().unwrap().to_owned(),
        made["code"].as_str().unwrap().to_owned(),
    )
}

async fn join(arena: &Arena, who: &Guest, id: &str, code: Option<&str>) -> (u16, Value) {
    call(
        "POST",
        format!("{}/v1/tournaments/{id}/join", arena.base()),
        Some(json!({"code": code})),
        Some(&who.token),
    )
    .await
}

async fn view(arena: &Arena, id: &str, who: Option<&Guest>) -> Value {
    let (status, body) = call(
        "GET",
        format!("{}/v1/tournaments/{id}", arena.base()),
        None,
        who.map(|g| g.token.as_str()),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    body
}

/// The next tournament game `who`'s lobby hears of: its id. Two players
/// who just met wait the rematch wait (10 s) before meeting again.
async fn matched(lobby: &mut Ws, tournament: &str) -> String {
    let message = lobby.until("matched", Duration::from_secs(20)).await;
    assert_eq!(
        message["queue"],
        format!("tournament:{tournament}"),
        "{message}"
    );
    message["game_id"].as_str().unwrap().to_owned()
}

/// `winner` and `loser` play `game`: three moves each side where the turn
/// allows, then the loser resigns.
async fn play_and_resign(arena: &Arena, game: &str, winner: &Guest, loser: &Guest) {
    let (winner_ws, state) = arena.play(game, winner).await;
    let (loser_ws, _) = arena.play(game, loser).await;
    let winner_first = state["seats"][0]["player"] == winner.id.as_str();
    let [mut first, mut second] = if winner_first {
        [winner_ws, loser_ws]
    } else {
        [loser_ws, winner_ws]
    };
    play_plies([&mut first, &mut second], &state, 6).await;
    let loser_ws = if winner_first {
        &mut second
    } else {
        &mut first
    };
    loser_ws.send(json!({"t": "resign"})).await;
    loser_ws.until("over", WAIT).await;
}

fn row<'a>(view: &'a Value, who: &Guest) -> &'a Value {
    view["standings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row["player"] == who.id.as_str())
        .unwrap_or_else(|| panic!("{} not in {view}", who.id))
}

/// A registered player makes a private arena that starts at once; the
/// code is needed to join; the two players who keep a page open are
/// paired at once, again after each game (they are the only two, so
/// after the rematch wait); the one who wins three in a row scores
/// 2 + 2 + 4 and is on fire. The standings are the same numbers after the
/// process is killed and started again.
#[actix_rt::test]
async fn a_private_arena_by_code_pairs_scores_a_streak_and_survives_kill_9() {
    let mut arena = Arena::start(&FAST).await;
    let (ann, ben) = (arena.registered("ann").await, arena.registered("ben").await);
    let guest = arena.guest().await;
    let (status, refused) = call(
        "POST",
        format!("{}/v1/tournaments", arena.base()),
        Some(json!({"name": "Guests' night", "variant": "kalah",
                    "time_control": {"initial_secs": 180, "increment_secs": 2}, "minutes": 30})),
        Some(&guest.token),
    )
    .await;
    assert_eq!(
        (status, refused["code"].as_str()),
        (403, Some("forbidden")),
        "{refused}"
    );
    let made = create(
        &arena,
        &ann,
        json!({"name": "Friday club", "variant": "kalah",
               "time_control": {"initial_secs": 180, "increment_secs": 2},
               "minutes": 30, "starts_in_secs": 0}),
    )
    .await;
    let id = made["id"].as_str().unwrap().to_owned();
    let code = made["code"].as_str().unwrap().to_owned();
    assert!(made["private"].as_bool().unwrap());
    assert_eq!(made["status"], "running");
    // Not listed, and the code is the maker's to pass on.
    let (_, list) = call(
        "GET",
        format!("{}/v1/tournaments", arena.base()),
        None,
        None,
    )
    .await;
    assert_eq!(list["running"], json!([]), "{list}");
    assert!(view(&arena, &id, Some(&ben)).await["tournament"]["code"].is_null());

    let (status, _) = join(&arena, &ben, &id, Some("WRONG123")).await;
    assert_eq!(status, 403, "a wrong code");
    let mut ann_lobby = arena.lobby(&ann).await;
    let mut ben_lobby = arena.lobby(&ben).await;
    assert_eq!(join(&arena, &ann, &id, Some(&code)).await.0, 204);
    assert_eq!(join(&arena, &ben, &id, Some(&code)).await.0, 204);

    let started = Instant::now();
    for round in 0..3 {
        let game = matched(&mut ann_lobby, &id).await;
        assert_eq!(matched(&mut ben_lobby, &id).await, game);
        if round == 0 {
            assert!(
                started.elapsed() < Duration::from_secs(2),
                "paired within a wave or two"
            );
            let seen = view(&arena, &id, Some(&ann)).await;
            assert_eq!(seen["my_game"], game.as_str());
            assert_eq!(seen["top_game"], game.as_str());
        }
        play_and_resign(&arena, &game, &ann, &ben).await;
    }
    // The game is over when both sockets said so; the standings read it.
    let deadline = Instant::now() + WAIT;
    let standings = loop {
        let seen = view(&arena, &id, Some(&ann)).await;
        if row(&seen, &ann)["games"] == 3 {
            break seen;
        }
        assert!(Instant::now() < deadline, "{seen}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let first = row(&standings, &ann);
    assert_eq!(first["sheet"], json!([2, 2, 4]), "{standings}");
    assert_eq!(first["score"], 8);
    assert_eq!(first["on_fire"], true);
    assert_eq!(first["rank"], 1);
    assert_eq!(row(&standings, &ben)["sheet"], json!([0, 0, 0]));
    assert_eq!(standings["me"]["player"], ann.id.as_str());

    // kill -9 and start again: the same standings, from the same games.
    drop((ann_lobby, ben_lobby));
    let before = view(&arena, &id, None).await["standings"].clone();
    arena.kill_and_restart().await;
    let after = view(&arena, &id, None).await["standings"].clone();
    assert_eq!(after, before);

    // Over (its end brought forward, standing in for half an hour): the
    // profile shows the place.
    sqlx::query("UPDATE tournaments SET ends_at = now(), starts_at = now() - interval '1 minute' WHERE id = $1::uuid")
        .bind(&id)
        .execute(&arena.stores.postgres)
        .await
        .unwrap();
    let (_, results) = call(
        "GET",
        format!("{}/v1/players/{}/tournaments", arena.base(), ann.id),
        None,
        None,
    )
    .await;
    let first = &results["results"][0];
    assert_eq!(first["tournament"]["id"], id.as_str(), "{results}");
    assert_eq!(
        (first["rank"].as_u64(), first["score"].as_i64()),
        (Some(1), Some(8)),
        "{results}"
    );
    assert_eq!(first["tournament"]["status"], "finished");
    arena.stores.cleanup().await.unwrap();
}

/// The operator's schedule: every arena it wants now (the one running and
/// those announced) is made, once, and listed with its start on the
/// minute; the process started again plans the same moment and makes
/// nothing twice.
#[actix_rt::test]
async fn the_schedule_makes_its_arenas_once_and_lists_them() {
    let dir = std::env::temp_dir().join(format!("schedule-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("tournaments.toml");
    std::fs::write(
        &file,
        r#"
[[arena]]
name = "Minutely Kalah"
cron = "* * * * *"
variant = "kalah"
clock = "1+0"
minutes = 5
announce_minutes = 2

[[arena]]
name = "Hourly Oware"
cron = "0 * * * *"
variant = "oware"
clock = "3+2"
minutes = 30
rated = false
announce_minutes = 60
"#,
    )
    .unwrap();
    let path = file.to_str().unwrap().to_owned();
    let arena = Arena::start(&[("APP_TOURNAMENT_SCHEDULE", path.as_str())]).await;
    let deadline = Instant::now() + WAIT;
    let list = loop {
        let (_, list) = call(
            "GET",
            format!("{}/v1/tournaments", arena.base()),
            None,
            None,
        )
        .await;
        // The planner inserts one arena at a time, soonest first: wait for
        // its last (the hourly one announced) as well as the running ones.
        let complete = list["running"].as_array().is_some_and(|r| r.len() >= 5)
            && list["upcoming"].as_array().is_some_and(|u| {
                u.iter().any(|t| t["name"] == "Hourly Oware")
                    && u.iter().filter(|t| t["name"] == "Minutely Kalah").count() >= 2
            });
        if complete {
            break list;
        }
        assert!(Instant::now() < deadline, "{list}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let running = list["running"].as_array().unwrap();
    // The minutely arenas of the last five minutes run now, each started
    // on a minute; the next two are announced.
    let minutely = |list: &[Value]| {
        list.iter()
            .filter(|t| t["name"] == "Minutely Kalah")
            .count()
    };
    assert_eq!(minutely(running), 5, "{list}");
    assert!(
        running
            .iter()
            .all(|t| t["starts_at"].as_str().unwrap().ends_with(":00Z"))
    );
    let upcoming = list["upcoming"].as_array().unwrap();
    assert!((2..=3).contains(&minutely(upcoming)), "{list}");
    assert!(
        upcoming
            .iter()
            .any(|t| t["name"] == "Hourly Oware" && t["rated"] == false)
    );
    // A process started again plans the same moment again: nothing twice.
    let count = |arena: &Arena| {
        let pool = arena.stores.postgres.clone();
        async move {
            sqlx::query_as::<_, (i64, i64)>(
                "SELECT count(*), count(DISTINCT schedule_key) FROM tournaments",
            )
            .fetch_one(&pool)
            .await
            .unwrap()
        }
    };
    let (made, keys) = count(&arena).await;
    assert_eq!(made, keys);
    let mut arena = arena;
    arena.kill_and_restart().await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (again, _) = count(&arena).await;
    assert!(
        again <= made + 1,
        "a minute may have passed: {made} then {again}"
    );
    let (made, keys) = count(&arena).await;
    assert_eq!(made, keys);
    arena.stores.cleanup().await.unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A paired player who never makes the first move: the game is aborted
/// when the first-move window passes (2 s here), the idle one loses a
/// point and is paused (not paired again) until they join again; the
/// other is not charged and waits for someone else.
#[actix_rt::test]
async fn a_no_start_costs_a_point_and_pauses_until_joining_again() {
    let arena = Arena::start(&[
        ("APP_TOURNAMENT_WAVE_MS", "100"),
        ("APP_FIRST_MOVE_SECS", "2"),
    ])
    .await;
    let (ann, ben) = (arena.registered("ann").await, arena.registered("ben").await);
    let (id, code) = private_arena(&arena, &ann, "Idle test").await;
    let mut ann_lobby = arena.lobby(&ann).await;
    let mut ben_lobby = arena.lobby(&ben).await;
    join(&arena, &ann, &id, Some(&code)).await;
    join(&arena, &ben, &id, Some(&code)).await;
    let game = matched(&mut ann_lobby, &id).await;
    matched(&mut ben_lobby, &id).await;
    // Both are at the board; the side to move never starts.
    let (_ann_ws, _) = arena.play(&game, &ann).await;
    let (_ben_ws, _) = arena.play(&game, &ben).await;
    let record = arena.status(&game, "aborted").await;
    assert_eq!(record["reason"], "no_start", "{record}");
    let idle = if record["seats"][0]["player"] == ann.id.as_str() {
        &ann
    } else {
        &ben
    };
    let other = if idle.id == ann.id { &ben } else { &ann };
    let deadline = Instant::now() + WAIT;
    let seen = loop {
        let seen = view(&arena, &id, None).await;
        if row(&seen, idle)["paused"] == true {
            break seen;
        }
        assert!(Instant::now() < deadline, "{seen}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(row(&seen, idle)["sheet"], json!([-1]), "{seen}");
    assert_eq!(row(&seen, idle)["score"], -1);
    assert_eq!(
        row(&seen, other)["sheet"],
        json!([0]),
        "not the other's fault"
    );
    assert_eq!(row(&seen, other)["paused"], false);
    // Paused: no game for a while, though both are here.
    assert!(
        ann_lobby
            .until_or_none("matched", Duration::from_secs(1))
            .await
            .is_none(),
        "the idle player is not paired"
    );
    // Back: joining again unpauses, and they meet again (after the wait
    // of two who just met).
    assert_eq!(join(&arena, idle, &id, Some(&code)).await.0, 204);
    let again = matched(&mut ann_lobby, &id).await;
    assert_ne!(again, game);
    arena.stores.cleanup().await.unwrap();
}

/// Berserk: before her first move Ann halves her clock (3 min to 1.5, no
/// increment), both see it, and her win then scores 3, not 2.
#[actix_rt::test]
async fn a_berserk_win_scores_one_more() {
    let arena = Arena::start(&FAST).await;
    let (ann, ben) = (arena.registered("ann").await, arena.registered("ben").await);
    let (id, code) = private_arena(&arena, &ann, "Berserk night").await;
    let mut ann_lobby = arena.lobby(&ann).await;
    let _ben_lobby = arena.lobby(&ben).await;
    join(&arena, &ann, &id, Some(&code)).await;
    join(&arena, &ben, &id, Some(&code)).await;
    let game = matched(&mut ann_lobby, &id).await;
    let (mut ann_ws, state) = arena.play(&game, &ann).await;
    let (mut ben_ws, _) = arena.play(&game, &ben).await;
    assert_eq!(state["tournament"], id.as_str());
    ann_ws.send(json!({"t": "berserk"})).await;
    let told = ben_ws.until("berserked", WAIT).await;
    let ann_seat = if state["seats"][0]["player"] == ann.id.as_str() {
        0
    } else {
        1
    };
    assert_eq!(
        (told["seat"].as_u64(), told["clock_ms"].as_u64()),
        (Some(ann_seat), Some(90_000))
    );
    ann_ws.until("berserked", WAIT).await;
    let [mut first, mut second] = if ann_seat == 0 {
        [ann_ws, ben_ws]
    } else {
        [ben_ws, ann_ws]
    };
    // The last legal pit each time: a game that lasts (the first pit each
    // time ends it within a dozen plies, too soon for the berserk point).
    let (mut turn, mut legal, mut ply) = (
        state["turn"].as_u64(),
        state["legal"].clone(),
        state["ply"].as_u64().unwrap(),
    );
    while ply < 16 {
        let Some(side) = turn else { break };
        let pits = legal.as_array().unwrap();
        let pit = pits[pits.len() - 1].clone();
        let mover = if side == 0 { &mut first } else { &mut second };
        mover
            .send(json!({"t": "move", "d": {"pit": pit, "ply": ply + 1}}))
            .await;
        let moved = first.until("moved", WAIT).await;
        second.until("moved", WAIT).await;
        (turn, legal, ply) = (
            moved["turn"].as_u64(),
            moved["legal"].clone(),
            moved["ply"].as_u64().unwrap(),
        );
    }
    assert!(turn.is_some(), "still on at ply {ply}");
    let ben_ws = if ann_seat == 0 {
        &mut second
    } else {
        &mut first
    };
    ben_ws.send(json!({"t": "resign"})).await;
    ben_ws.until("over", WAIT).await;
    let deadline = Instant::now() + WAIT;
    let seen = loop {
        let seen = view(&arena, &id, None).await;
        if row(&seen, &ann)["games"] == 1 {
            break seen;
        }
        assert!(Instant::now() < deadline, "{seen}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(row(&seen, &ann)["sheet"], json!([3]), "{seen}");
    let berserk: (bool, bool) =
        sqlx::query_as("SELECT berserk0, berserk1 FROM games WHERE id = $1::uuid")
            .bind(&game)
            .fetch_one(&arena.stores.postgres)
            .await
            .unwrap();
    assert_eq!(berserk, (ann_seat == 0, ann_seat == 1), "on record");
    arena.stores.cleanup().await.unwrap();
}

/// The next push of the standings socket that `wanted` accepts.
async fn pushed_until(live: &mut Ws, wanted: impl Fn(&Value) -> bool, wait: Duration) -> Value {
    let deadline = Instant::now() + wait;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let push = live
            .until_or_none("standings", left)
            .await
            .unwrap_or_else(|| panic!("no such push within {wait:?}"));
        if wanted(&push["view"]) {
            return push;
        }
    }
}

fn score_of(view: &Value, who: &Guest) -> Option<i64> {
    view["standings"]
        .as_array()?
        .iter()
        .find(|row| row["player"] == who.id.as_str())?["score"]
        .as_i64()
}

/// The operator's hourly arena, with the process's clock set 15 s before
/// the hour (`APP_CLOCK_OFFSET_SECS`, the injected clock of a real
/// process): listed and joinable before, running on the hour, its first
/// pair made within a wave of it. Its standings socket pushes each step
/// to every watcher (the start, each game's points, the end), and at the
/// end, a minute later, the podium is the one the games made: Ann (a
/// win, performance 2000), Ben (a loss and a win, 1500), Cat.
#[actix_rt::test]
async fn a_scheduled_arena_starts_on_the_hour_pushes_its_standings_and_ends_with_the_podium() {
    const HOUR_MS: u64 = 3_600_000;
    // Start-up (a fresh database migrated) and the set-up below fit in it.
    const LEAD_MS: u64 = 15_000;
    let real_ms = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64
    };
    let now = real_ms();
    let starts_ms = (now + LEAD_MS).div_ceil(HOUR_MS) * HOUR_MS;
    let offset_secs = (starts_ms - LEAD_MS - now) / 1000;
    let app_ms = move || real_ms() + offset_secs * 1000;
    let dir = std::env::temp_dir().join(format!("hourly-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("tournaments.toml");
    std::fs::write(
        &file,
        "[[arena]]\nname = \"Hourly Kalah\"\ncron = \"0 * * * *\"\nvariant = \"kalah\"\n\
         clock = \"1+0\"\nminutes = 1\nrated = false\n",
    )
    .unwrap();
    let (path, offset) = (file.to_str().unwrap().to_owned(), offset_secs.to_string());
    let arena = Arena::start(&[
        ("APP_TOURNAMENT_SCHEDULE", path.as_str()),
        ("APP_CLOCK_OFFSET_SECS", offset.as_str()),
        ("APP_TOURNAMENT_WAVE_MS", "100"),
    ])
    .await;
    let starts_at = time::OffsetDateTime::from_unix_timestamp((starts_ms / 1000) as i64)
        .unwrap()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap();
    let deadline = Instant::now() + WAIT;
    let listed = loop {
        let (_, list) = call(
            "GET",
            format!("{}/v1/tournaments", arena.base()),
            None,
            None,
        )
        .await;
        let next = list["upcoming"]
            .as_array()
            .and_then(|up| up.iter().find(|t| t["starts_at"] == starts_at.as_str()))
            .cloned();
        if let Some(next) = next {
            break next;
        }
        assert!(Instant::now() < deadline, "{list}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let id = listed["id"].as_str().unwrap().to_owned();
    assert!(app_ms() < starts_ms, "the test reached the hour too late");

    // Watchers, signed out, from before the start, each reading (and so
    // answering pings, as a browser does) until the end.
    let mut watchers = Vec::new();
    for _ in 0..20 {
        let mut live = Ws::open(format!("{}/v1/tournaments/{id}/live", arena.base()))
            .await
            .unwrap();
        let first = live.until("standings", WAIT).await;
        assert_eq!(first["view"]["tournament"]["status"], "upcoming", "{first}");
        watchers.push(actix_rt::spawn(async move {
            let mut pushes = vec![first];
            while let Some(push) = live
                .until_or_none("standings", Duration::from_secs(90))
                .await
            {
                let over = push["view"]["tournament"]["status"] == "finished";
                pushes.push(push);
                if over {
                    break;
                }
            }
            pushes
        }));
    }
    let (ann, ben, cat) = (
        arena.guest().await,
        arena.guest().await,
        arena.guest().await,
    );
    let mut ann_lobby = arena.lobby(&ann).await;
    let mut ben_lobby = arena.lobby(&ben).await;
    assert_eq!(join(&arena, &ann, &id, None).await.0, 204, "joined early");
    assert_eq!(join(&arena, &ben, &id, None).await.0, 204);
    // Ann follows as herself: her pushes carry her row.
    let mut ann_live = Ws::open(format!("{}/v1/tournaments/{id}/live", arena.base()))
        .await
        .unwrap();
    ann_live
        .send(json!({"t": "auth", "d": {"token": ann.token}}))
        .await;
    pushed_until(
        &mut ann_live,
        |view| view["me"]["player"] == ann.id.as_str(),
        WAIT,
    )
    .await;

    let game = matched(&mut ann_lobby, &id).await;
    let paired_at = app_ms();
    assert!(
        (starts_ms..starts_ms + 1_500).contains(&paired_at),
        "paired {} ms after the hour",
        paired_at as i64 - starts_ms as i64
    );
    assert_eq!(matched(&mut ben_lobby, &id).await, game);

    play_and_resign(&arena, &game, &ann, &ben).await;
    // Ann pauses; Cat comes: Ben meets Cat and wins.
    let (status, _) = call(
        "POST",
        format!("{}/v1/tournaments/{id}/pause", arena.base()),
        None,
        Some(&ann.token),
    )
    .await;
    assert_eq!(status, 204);
    let mine = pushed_until(&mut ann_live, |view| view["me"]["paused"] == true, WAIT).await;
    assert_eq!(mine["view"]["me"]["score"], 2, "{mine}");
    let mut cat_lobby = arena.lobby(&cat).await;
    assert_eq!(join(&arena, &cat, &id, None).await.0, 204);
    let second = matched(&mut ben_lobby, &id).await;
    assert_eq!(matched(&mut cat_lobby, &id).await, second);
    play_and_resign(&arena, &second, &ben, &cat).await;
    assert!(
        ann_lobby
            .until_or_none("matched", Duration::from_millis(300))
            .await
            .is_none(),
        "Ann paused: not paired"
    );

    // Every watcher saw the start, the points move, then the end (a
    // minute after the hour) with the podium.
    for watcher in watchers {
        let pushes = watcher.await.unwrap();
        let running = pushes
            .iter()
            .find(|push| push["view"]["tournament"]["status"] == "running")
            .expect("the start pushed");
        assert!(running["changed_at_ms"].as_u64().unwrap() >= starts_ms);
        assert!(
            pushes
                .iter()
                .any(|push| score_of(&push["view"], &ben) == Some(2)),
            "Ben's win pushed"
        );
        let end = pushes.last().unwrap();
        assert_eq!(end["view"]["tournament"]["status"], "finished", "{end}");
        let podium: Vec<(&str, i64)> = end["view"]["standings"]
            .as_array()
            .unwrap()
            .iter()
            .take(3)
            .map(|row| {
                (
                    row["player"].as_str().unwrap(),
                    row["score"].as_i64().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            podium,
            [
                (ann.id.as_str(), 2),
                (ben.id.as_str(), 2),
                (cat.id.as_str(), 0)
            ],
            "{end}"
        );
        assert_eq!(end["view"]["standings"][0]["performance"], 2000.0);
        let versions: Vec<u64> = pushes
            .iter()
            .map(|p| p["version"].as_u64().unwrap())
            .collect();
        assert!(versions.is_sorted(), "{versions:?}");
    }
    assert!(app_ms() >= starts_ms + 60_000);
    arena.stores.cleanup().await.unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A band and a cap: a newcomer (1500) is refused from an arena for 1600
/// and up; a two-player arena refuses the third, and lets one who joined
/// come back after a pause.
#[actix_rt::test]
async fn a_rating_band_and_a_cap_refuse_who_is_outside() {
    let arena = Arena::start(&[]).await;
    let (ann, ben, cat) = (
        arena.registered("ann").await,
        arena.guest().await,
        arena.guest().await,
    );
    let clock = json!({"initial_secs": 180, "increment_secs": 2});
    let strong = create(
        &arena,
        &ann,
        json!({"name": "Strong", "variant": "kalah", "time_control": clock, "minutes": 30,
               "min_rating": 1600}),
    )
    .await;
    let (status, refused) = join(
        &arena,
        &ben,
        strong["id"].as_str().unwrap(),
        strong["code"].as_str(),
    )
    .await;
    assert_eq!(
        (status, refused["code"].as_str()),
        (403, Some("forbidden")),
        "{refused}"
    );
    let small = create(
        &arena,
        &ann,
        json!({"name": "Small", "variant": "kalah", "time_control": clock, "minutes": 30,
               "max_players": 2}),
    )
    .await;
    let (id, code) = (small["id"].as_str().unwrap(), small["code"].as_str());
    assert_eq!(join(&arena, &ann, id, code).await.0, 204);
    assert_eq!(join(&arena, &ben, id, code).await.0, 204);
    let (status, full) = join(&arena, &cat, id, code).await;
    assert_eq!(
        (status, full["code"].as_str()),
        (409, Some("not_allowed")),
        "{full}"
    );
    let (status, _) = call(
        "POST",
        format!("{}/v1/tournaments/{id}/pause", arena.base()),
        None,
        Some(&ben.token),
    )
    .await;
    assert_eq!(status, 204);
    assert_eq!(join(&arena, &ben, id, code).await.0, 204, "back, not new");
    arena.stores.cleanup().await.unwrap();
}

/// A bot of the race below: plays every game its lobby is matched into,
/// on whichever instance hosts it (following `elsewhere`), moving the
/// first legal pit and, from ply 6, resigning when its id is the lower of
/// the two; until `until`. Its games.
async fn race_bot(bases: [String; 2], lobby: usize, who: Guest, id: String, until: Instant) -> u32 {
    let mut socket = Ws::open(format!("{}/v1/lobby", bases[lobby]))
        .await
        .unwrap();
    socket
        .send(json!({"t": "auth", "d": {"token": who.token}}))
        .await;
    let mut played = 0;
    while let Some(matched) = socket
        .until_or_none("matched", until.saturating_duration_since(Instant::now()))
        .await
    {
        assert_eq!(matched["queue"], format!("tournament:{id}"));
        let game = matched["game_id"].as_str().unwrap();
        let mut url = format!("{}/v1/games/{game}/play", bases[0]);
        let (mut play, mut state) = loop {
            let mut play = Ws::open(url.clone()).await.unwrap();
            play.send(json!({"t": "auth", "d": {"token": who.token}}))
                .await;
            let first = play.next(WAIT).await.expect("an answer to auth");
            match first["t"].as_str() {
                Some("state") => break (play, first["d"].clone()),
                Some("elsewhere") => {
                    url = format!(
                        "{}/v1/games/{game}/play",
                        first["d"]["url"].as_str().unwrap()
                    );
                }
                _ => panic!("{first}"),
            }
        };
        let you = state["you"].as_u64();
        let opponent = state["seats"][1 - you.unwrap() as usize]["player"]
            .as_str()
            .unwrap()
            .to_owned();
        loop {
            if state["turn"].as_u64() == you {
                let ply = state["ply"].as_u64().unwrap();
                if ply >= 6 && who.id < opponent {
                    play.send(json!({"t": "resign"})).await;
                } else {
                    let pit = state["legal"][0].clone();
                    play.send(json!({"t": "move", "d": {"pit": pit, "ply": ply + 1}}))
                        .await;
                }
            }
            let Some(message) = play.next(Duration::from_secs(20)).await else {
                panic!("game {game} went silent");
            };
            match message["t"].as_str() {
                Some("moved") => state = message["d"].clone(),
                Some("over") => break,
                _ => {}
            }
        }
        played += 1;
    }
    played
}

/// Two instances of the arena on one database and Redis, both running
/// the tournament loop, each frozen in turn (SIGSTOP) for longer than the
/// pairing lease while eight bots play: the other takes the lease and
/// pairs while the frozen one may be in the middle of a wave it resumes
/// believing it still leads. Seating is fenced in Postgres (a seat names
/// its game until that game is over, and the game's insert checks both
/// seats), so however the waves interleave no player is ever in two
/// games at once, and the pairing goes on through every freeze.
#[actix_rt::test]
async fn two_instances_racing_for_an_arena_never_seat_a_player_twice() {
    let arena = Arena::start(&[("APP_TOURNAMENT_WAVE_MS", "100")]).await;
    let second = arena.beside().await;
    let bases = [arena.base().to_owned(), second.base.clone()];
    let host = arena.registered("host").await;
    let (id, code) = private_arena(&arena, &host, "Race").await;
    let until = Instant::now() + Duration::from_secs(24);
    let mut bots = Vec::new();
    for index in 0..8 {
        let who = arena.guest().await;
        assert_eq!(join(&arena, &who, &id, Some(&code)).await.0, 204);
        bots.push(actix_rt::spawn(race_bot(
            bases.clone(),
            index % 2,
            who,
            id.clone(),
            until,
        )));
    }
    // Each instance in turn stands still past the lease (a second).
    for round in 0..4 {
        tokio::time::sleep(Duration::from_secs(3)).await;
        let frozen = if round % 2 == 0 {
            &arena.service
        } else {
            &second
        };
        frozen.freeze();
        tokio::time::sleep(Duration::from_millis(1_500)).await;
        frozen.thaw();
    }
    let mut games = 0;
    for bot in bots {
        games += bot.await.unwrap();
    }
    assert!(games >= 16, "pairing went on: {games} games played");
    // Per player, in the order they were made: each game begins after the
    // one before it ended.
    let rows: Vec<(
        uuid::Uuid,
        uuid::Uuid,
        time::OffsetDateTime,
        Option<time::OffsetDateTime>,
    )> = sqlx::query_as(
        "SELECT p.player, g.id, g.created_at, g.ended_at FROM games g
             CROSS JOIN LATERAL (VALUES (g.seat0_player), (g.seat1_player)) AS p(player)
             WHERE g.tournament_id = $1::uuid ORDER BY p.player, g.created_at",
    )
    .bind(&id)
    .fetch_all(&arena.stores.postgres)
    .await
    .unwrap();
    for pair in rows.windows(2) {
        let ((player, before, _, ended), (next_player, after, created, _)) = (&pair[0], &pair[1]);
        if player != next_player {
            continue;
        }
        let ended = ended.unwrap_or_else(|| panic!("{before} still live when {after} was made"));
        assert!(
            *created >= ended,
            "{player} was seated in {after} before {before} ended"
        );
    }
    assert!(rows.len() >= 2 * 16 / 2, "{} seats", rows.len());
    drop(second);
    arena.stores.cleanup().await.unwrap();
}

/// The two steps of a race, in the order that used to break: instance A
/// seats Ann and Ben in a game it has not made yet; instance B, which
/// now believes it leads, pairs Ann again. The seat holds (Ann's game is
/// on its way) until its maker is presumed dead (30 s); then B may seat
/// her, and A's late game is refused by game-room, which checks both seats
/// in the transaction that inserts it.
#[actix_rt::test]
async fn a_seat_names_its_game_until_it_is_over_and_a_late_game_is_refused() {
    use mancala_matchmaking::tournament::store::seat_pair;
    let arena = Arena::start(&[("APP_INTERNAL_TOKEN", "race-token")]).await;
    let host = arena.registered("host").await;
    let (id, code) = private_arena(&arena, &host, "Fence").await;
    let (ann, ben, cat) = (
        arena.guest().await,
        arena.guest().await,
        arena.guest().await,
    );
    for who in [&ann, &ben, &cat] {
        assert_eq!(join(&arena, who, &id, Some(&code)).await.0, 204);
    }
    let uuid = |text: &str| uuid::Uuid::parse_str(text).unwrap();
    let (tournament, [a, b, c]) = (uuid(&id), [&ann, &ben, &cat].map(|g| uuid(&g.id)));
    let pool = &arena.stores.postgres;
    let now = time::OffsetDateTime::now_utc();
    let (first, second) = (uuid::Uuid::now_v7(), uuid::Uuid::now_v7());
    assert!(
        seat_pair(pool, tournament, [a, b], first, now)
            .await
            .unwrap()
    );
    assert!(
        !seat_pair(pool, tournament, [a, c], second, now)
            .await
            .unwrap(),
        "Ann's game is on its way: her seat is taken"
    );
    let later = now + time::Duration::seconds(31);
    assert!(
        seat_pair(pool, tournament, [a, c], second, later)
            .await
            .unwrap(),
        "its maker is presumed dead: the seat is free again"
    );
    let create = |game: uuid::Uuid, seats: [uuid::Uuid; 2]| {
        call(
            "POST",
            format!("{}/internal/v1/games", arena.base()),
            Some(json!({"id": game, "variant": {"variant": "kalah"},
                        "seats": [{"player": {"id": seats[0]}}, {"player": {"id": seats[1]}}],
                        "rated": false, "tournament": tournament,
                        "time_control": {"initial_secs": 180, "increment_secs": 2}})),
            Some("race-token"),
        )
    };
    let (status, refused) = create(first, [a, b]).await;
    assert_eq!(
        (status, refused["code"].as_str()),
        (409, Some("not_allowed")),
        "{refused}"
    );
    let (made,): (i64,) = sqlx::query_as("SELECT count(*) FROM games WHERE id = $1")
        .bind(first)
        .fetch_one(pool)
        .await
        .unwrap();
    assert_eq!(made, 0, "the late game was never written");
    let (status, body) = create(second, [a, c]).await;
    assert_eq!(status, 201, "{body}");
    arena.stores.cleanup().await.unwrap();
}

/// A player who leaves the page (every socket closed) is not paired and,
/// once the lobby's grace has passed (1 s here), is paused in the
/// standings; the one left waiting meets a newcomer; joining again (the
/// page's Resume) brings the leaver back.
#[actix_rt::test]
async fn a_player_who_leaves_the_page_is_paused_until_joining_again() {
    let arena = Arena::start(&[
        ("APP_TOURNAMENT_WAVE_MS", "100"),
        ("APP_LOBBY_GRACE_SECS", "1"),
    ])
    .await;
    let (ann, ben, cat) = (
        arena.registered("ann").await,
        arena.guest().await,
        arena.guest().await,
    );
    let (id, code) = private_arena(&arena, &ann, "Leavers").await;
    let mut ann_lobby = arena.lobby(&ann).await;
    let mut ben_lobby = arena.lobby(&ben).await;
    join(&arena, &ann, &id, Some(&code)).await;
    join(&arena, &ben, &id, Some(&code)).await;
    let game = matched(&mut ann_lobby, &id).await;
    assert_eq!(matched(&mut ben_lobby, &id).await, game);
    play_and_resign(&arena, &game, &ann, &ben).await;
    drop(ben_lobby);
    let deadline = Instant::now() + WAIT;
    let seen = loop {
        let seen = view(&arena, &id, None).await;
        if row(&seen, &ben)["paused"] == true {
            break seen;
        }
        assert!(Instant::now() < deadline, "{seen}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(row(&seen, &ann)["paused"], false, "{seen}");
    assert_eq!(
        row(&seen, &ben)["sheet"],
        json!([0]),
        "no point lost for leaving"
    );
    let mut cat_lobby = arena.lobby(&cat).await;
    join(&arena, &cat, &id, Some(&code)).await;
    let next = matched(&mut ann_lobby, &id).await;
    assert_eq!(matched(&mut cat_lobby, &id).await, next, "Ann meets Cat");
    // Back: a page open and joined again.
    let _ben_lobby = arena.lobby(&ben).await;
    assert_eq!(join(&arena, &ben, &id, Some(&code)).await.0, 204);
    assert_eq!(row(&view(&arena, &id, None).await, &ben)["paused"], false);
    arena.stores.cleanup().await.unwrap();
}

/// The rating an arena shows and pairs by is the player's rating now, not
/// the one they joined with: after a rated game elsewhere, the standings,
/// the game the arena makes (its record and the live list) carry the new
/// rating. The entry rating stays only as the last tie-break.
#[actix_rt::test]
async fn an_arena_shows_and_pairs_by_the_rating_players_have_now() {
    let arena = Arena::start(&FAST).await;
    let (ann, ben) = (arena.registered("ann").await, arena.registered("ben").await);
    let (id, code) = private_arena(&arena, &ann, "Current ratings").await;
    assert_eq!(join(&arena, &ann, &id, Some(&code)).await.0, 204);
    assert_eq!(join(&arena, &ben, &id, Some(&code)).await.0, 204);
    // Both joined at 1,500; since then their ratings moved (rated games
    // played elsewhere, written as the rating service writes them).
    for (who, rating) in [(&ann, 1734.0), (&ben, 1391.0)] {
        sqlx::query(
            "INSERT INTO ratings (player_id, variant, rating, rd, volatility, games)
             VALUES ($1::uuid, 'kalah', $2, 90, 0.06, 8)",
        )
        .bind(&who.id)
        .bind(rating)
        .execute(&arena.stores.postgres)
        .await
        .unwrap();
    }
    let seen = view(&arena, &id, None).await;
    assert_eq!(row(&seen, &ann)["rating"], 1734.0, "{seen}");
    assert_eq!(row(&seen, &ben)["rating"], 1391.0, "{seen}");
    let mut ann_lobby = arena.lobby(&ann).await;
    let _ben_lobby = arena.lobby(&ben).await;
    let game = matched(&mut ann_lobby, &id).await;
    let (_ann_ws, state) = arena.play(&game, &ann).await;
    let (_ben_ws, _) = arena.play(&game, &ben).await;
    let rating_of = |seats: &Value, who: &Guest| {
        seats
            .as_array()
            .unwrap()
            .iter()
            .find(|seat| seat["player"] == who.id.as_str())
            .unwrap()["rating"]
            .clone()
    };
    assert_eq!(rating_of(&state["seats"], &ann), 1734.0, "{state}");
    assert_eq!(rating_of(&state["seats"], &ben), 1391.0, "{state}");
    let (_, live) = call("GET", format!("{}/v1/games/live", arena.base()), None, None).await;
    let listed = live["games"]
        .as_array()
        .unwrap()
        .iter()
        .find(|listed| listed["id"] == game.as_str())
        .unwrap_or_else(|| panic!("{game} not in {live}"));
    assert_eq!(rating_of(&listed["seats"], &ann), 1734.0, "{listed}");
    arena.stores.cleanup().await.unwrap();
}
