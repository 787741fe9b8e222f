//! One hostile guest against the real `arena` process (issue 16): each
//! attack gets its refusal or stays within its bound, no input produces a
//! 5xx or an ERROR log line, and the server's memory stays bounded. What
//! the attacks cost a second player is measured by `deploy/bench.sh abuse`,
//! not here.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::time::{Duration, Instant};

use mancala_platform::ExposeSecret;
use mancala_platform::testing::{TestStores, database_url, redis_url};
use mancala_tests::abuse::{self, Tally};
use mancala_tests::harness::{Service, call, free_port, guest, start_logged};
use mancala_tests::server_stats;
use serde_json::{Value, json};

struct Arena {
    service: Service,
    stores: TestStores,
    log: PathBuf,
}

impl Arena {
    async fn start(extra: &[(&str, &str)]) -> Arena {
        let stores = TestStores::new().await.unwrap();
        let log =
            std::env::temp_dir().join(format!("abuse-{}.log", stores.prefix.trim_end_matches(':')));
        let mut env = vec![
            (
                "DATABASE_URL",
                database_url(&stores.database).expose_secret().to_owned(),
            ),
            ("REDIS_URL", redis_url().expose_secret().to_owned()),
            ("APP_REDIS_PREFIX", stores.prefix.clone()),
            ("APP_LOG_FORMAT", "json".to_owned()),
            ("RUST_LOG", "warn".to_owned()),
            ("APP_LIMIT_SIGNUPS_PER_IP", "1000/60".to_owned()),
            ("APP_LIMIT_REGISTRATIONS_PER_IP", "1000/60".to_owned()),
        ];
        for (name, value) in extra {
            env.push((name, (*value).to_owned()));
        }
        Arena {
            service: start_logged("arena", free_port(), &env, &log).await,
            stores,
            log,
        }
    }

    fn base(&self) -> &str {
        &self.service.base
    }

    fn rss_mb(&self) -> f64 {
        server_stats::read(&[self.service.pid()]).rss_bytes as f64 / (1 << 20) as f64
    }

    /// The server's log lines at ERROR.
    fn errors(&self) -> Vec<String> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter(|line| line.contains(r#""level":"ERROR""#))
            .map(str::to_owned)
            .collect()
    }

    /// A counter from `/metrics`.
    async fn metric(&self, name: &str) -> f64 {
        let mut response = mancala_tests::harness::client()
            .get(format!("{}/metrics", self.base()))
            .send()
            .await
            .unwrap();
        let text =
            String::from_utf8_lossy(&response.body().limit(1 << 22).await.unwrap()).into_owned();
        text.lines()
            .filter(|line| line.starts_with(name))
            .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
            .sum()
    }

    async fn done(self) {
        let errors = self.errors();
        assert!(errors.is_empty(), "ERROR log lines: {errors:#?}");
        let _ = std::fs::remove_file(&self.log);
        self.stores.cleanup().await.unwrap();
    }
}

#[actix_rt::test]
async fn a_flood_of_games_is_refused_past_the_players_limits() {
    let arena = Arena::start(&[]).await;
    let base = arena.base().to_owned();
    let flooder = guest(&base).await;
    // 200 Perfect games in a burst: ten are made (the games one player may
    // have going), the rest refused with 429 and Retry-After.
    let (tally, made) = abuse::ai_games(&base, &flooder, "perfect", 200).await;
    assert_eq!((tally.of(201), tally.of(429)), (10, 190), "{tally}");
    let body = json!({"variant": {"variant": "kalah"}, "level": "perfect", "side": "second"});
    let (status, answer, retry) =
        abuse::post(format!("{base}/v1/ai-games"), body, Some(&flooder.token)).await;
    assert_eq!(
        (status, answer["code"].as_str()),
        (429, Some("rate_limited"))
    );
    assert!(retry.is_some_and(|seconds| seconds.parse::<u64>().is_ok_and(|s| s >= 1)));
    assert_eq!(made.len(), 10);
    // Hotseat games count with them; invites have their own limit.
    let (status, _, _) = abuse::post(
        format!("{base}/v1/hotseat-games"),
        json!({"variant": {"variant": "oware"}}),
        Some(&flooder.token),
    )
    .await;
    assert_eq!(status, 429);
    let mut invites = Tally::default();
    for _ in 0..12 {
        let body = json!({"variant": {"variant": "kalah"}});
        invites.add(
            abuse::post(format!("{base}/v1/invites"), body, Some(&flooder.token))
                .await
                .0,
        );
    }
    assert_eq!((invites.of(201), invites.of(429)), (10, 2), "{invites}");
    // Another player is untouched.
    let other = guest(&base).await;
    let (tally, _) = abuse::ai_games(&base, &other, "beginner", 1).await;
    assert_eq!(tally.of(201), 1);
    arena.done().await;
}

#[actix_rt::test]
async fn perfect_games_share_a_bounded_ai() {
    let arena = Arena::start(&[
        ("APP_LIMIT_ACTIVE_CASUAL_GAMES", "1000"),
        ("APP_LIMIT_GAMES_PER_PLAYER", "1000/60"),
        ("APP_LIMIT_SOCKETS_PER_PLAYER", "1000"),
        ("APP_HTTP_REQUESTS_PER_ADDRESS", "0"),
    ])
    .await;
    let base = arena.base().to_owned();
    let flooder = guest(&base).await;
    let before = arena.rss_mb();
    // 200 Perfect games, each with the AI's first move and one answer:
    // 400 Perfect searches, through one pool.
    let (tally, made) = abuse::ai_games(&base, &flooder, "perfect", 200).await;
    assert_eq!(tally.of(201), 200, "{tally}");
    let until = Instant::now() + Duration::from_secs(60);
    let moves = abuse::play_against_ai(
        &base,
        &flooder,
        &made,
        until.min(Instant::now() + Duration::from_secs(20)),
    )
    .await;
    assert!(moves >= 200, "the AI answered: {moves} moves");
    let grown = arena.rss_mb() - before;
    println!("RSS {before:.0} MB before, +{grown:.0} MB after 200 Perfect games");
    // The idle budget (96 MiB) plus one engine per worker, and the games.
    assert!(grown < 300.0, "the server grew by {grown:.0} MB");
    arena.done().await;
}

#[actix_rt::test]
async fn undos_are_limited_and_sockets_counted_per_player() {
    // Limits count in fixed windows (aligned to their length), so a run
    // that straddles a boundary may see two windows' worth: an hour's
    // window makes that a one-in-a-thousand chance, not one in fifteen.
    let arena = Arena::start(&[("APP_LIMIT_UNDOS_PER_PLAYER", "5/3600")]).await;
    let base = arena.base().to_owned();
    let looper = guest(&base).await;
    let (_, made) = abuse::ai_games(&base, &looper, "advanced", 1).await;
    // Loop until the limit bites (a busy machine makes the AI slow to
    // reply, and an undo needs a move of the player's to take back).
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut undos = abuse::Undos::default();
    while undos.refused == 0 && Instant::now() < deadline {
        let until = Instant::now() + Duration::from_secs(2);
        let more = abuse::undo_loop(&base, &looper, &made, Duration::from_millis(200), until).await;
        undos.sent += more.sent;
        undos.done += more.done;
        undos.refused += more.refused;
    }
    assert!(undos.done <= 5 && undos.refused >= 1, "{undos:?}");

    // Sockets: 20 per player over the lobby and the games.
    let hoarder = guest(&base).await;
    let hoard = abuse::hoard(&base, &hoarder, 8).await;
    assert_eq!(hoard.held.len(), 20, "sockets held");
    assert_eq!(hoard.lobby_sockets_refused + hoard.play_sockets_refused, 28);
    assert_eq!(hoard.ai_games.of(201) + hoard.hotseat_games.of(201), 10);
    assert_eq!(hoard.invites.of(201), 10);
    drop(hoard);
    arena.done().await;
}

#[actix_rt::test]
async fn watchers_syncing_share_one_load_a_second() {
    let arena = Arena::start(&[]).await;
    let base = arena.base().to_owned();
    let player = guest(&base).await;
    let game = abuse::post(
        format!("{base}/v1/hotseat-games"),
        json!({"variant": {"variant": "kalah"}}),
        Some(&player.token),
    )
    .await
    .1["game_id"]
        .as_str()
        .unwrap()
        .to_owned();
    // Two moves, so that a sync from 0 asks for something.
    let (mut ws, _) = abuse::open_play(&base, &game, &player).await.unwrap();
    for ply in 1..=2 {
        ws.send(json!({"t": "move", "d": {"pit": 1, "ply": ply}}))
            .await;
        ws.until("moved", Duration::from_secs(5)).await;
    }
    let started = Instant::now();
    let syncs = abuse::sync_flood(&base, &game, 50, started + Duration::from_secs(3)).await;
    let loads = arena.metric("watch_snapshot_loads_total").await;
    let seconds = started.elapsed().as_secs_f64();
    println!("{syncs} syncs, {loads} loads in {seconds:.1} s");
    assert!(syncs >= 500, "{syncs} syncs sent");
    assert!(loads <= seconds.ceil() + 2.0, "{loads} loads from Postgres");
    arena.done().await;
}

#[actix_rt::test]
async fn slow_bodies_time_out_and_one_address_holds_few_requests() {
    let arena = Arena::start(&[
        ("APP_HTTP_BODY_TIMEOUT_SECS", "1"),
        ("APP_HTTP_REQUESTS_PER_ADDRESS", "8"),
    ])
    .await;
    let base = arena.base().to_owned();
    // A byte every 300 ms: the body is not in by the deadline.
    let (ended, tally) =
        abuse::slow_bodies(&base, 6, Duration::from_millis(300), Duration::from_secs(8));
    assert_eq!(ended, 6, "every slow request was ended: {tally}");
    assert_eq!(tally.of(408), 6, "{tally}");
    // Twelve at once from one address: those past eight are refused.
    let base_for_threads = base.clone();
    let slow = std::thread::spawn(move || {
        abuse::slow_bodies(
            &base_for_threads,
            12,
            Duration::from_millis(300),
            Duration::from_secs(8),
        )
    });
    let (_, tally) = slow.join().unwrap();
    assert_eq!(tally.of(408) + tally.of(429), 12, "{tally}");
    assert!(tally.of(429) >= 4, "{tally}");
    // The server serves the next request at once.
    let (status, _) = call("GET", format!("{base}/v1/lobby/stats"), None, None).await;
    assert_eq!(status, 200);
    arena.done().await;
}

#[actix_rt::test]
async fn values_postgres_cannot_take_are_refused_before_sql() {
    let arena = Arena::start(&[]).await;
    let base = arena.base().to_owned();
    for (request, status) in abuse::bad_values(&base).await {
        assert!(status == 400 || status == 404, "{request}: {status}");
    }
    // An invite code that is no invite code is simply not found.
    let (status, body): (u16, Value) =
        call("GET", format!("{base}/v1/invites/not-a-code"), None, None).await;
    assert_eq!((status, body["code"].as_str()), (404, Some("not_found")));
    arena.done().await;
}
