//! Restarts under load, against real processes with the default lease and
//! the default instance identity: a process stopped the way orchestrators
//! stop one (SIGTERM) hands its games over before it exits, and one that
//! crashed (SIGKILL) and is started again in its place takes back the
//! games whose leases name it, rather than wait for them to lapse. Either
//! way every game moves again within seconds and no acknowledged move is
//! lost.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::cell::RefCell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use mancala_platform::testing::{TestStores, database_url, redis_url};
use mancala_platform::{ExposeSecret, SecretString};
use mancala_tests::driven::{
    Outcome, Started, check_records, drive_all, moving_again_after, new_games, pace_before,
    summary, until_all_started,
};
use mancala_tests::harness::{Service, free_port, start};

const GAMES: usize = 20;
const PLIES: u64 = 40;

struct Shared {
    key: SecretString,
    internal_token: String,
}

/// The defaults, but for what several processes must share (the signing
/// key, so tokens outlive a restart; the internal token, to make games) and
/// a sign-up limit that lets one address make 40 guests.
fn environment(stores: &TestStores, shared: &Shared) -> Vec<(&'static str, String)> {
    vec![
        (
            "DATABASE_URL",
            database_url(&stores.database).expose_secret().to_owned(),
        ),
        ("REDIS_URL", redis_url().expose_secret().to_owned()),
        ("APP_REDIS_PREFIX", stores.prefix.clone()),
        ("APP_JWT_PRIVATE_KEY", shared.key.expose_secret().to_owned()),
        ("APP_INTERNAL_TOKEN", shared.internal_token.clone()),
        ("APP_LOG_FORMAT", "json".to_owned()),
        (
            "RUST_LOG",
            std::env::var("TEST_RUST_LOG").unwrap_or("error".into()),
        ),
        ("APP_LIMIT_SIGNUPS_PER_IP", "10000/60".to_owned()),
        ("APP_LIMIT_REGISTRATIONS_PER_IP", "10000/60".to_owned()),
    ]
}

fn shared() -> Shared {
    Shared {
        key: mancala_platform::jwt::random_seed(),
        internal_token: uuid::Uuid::new_v4().to_string(),
    }
}

/// Twenty games under way on `host`, driven on `bases` (which the fault
/// may change), and what the drivers saw once every game is done.
struct UnderWay {
    bases: Rc<RefCell<Vec<String>>>,
    running: actix_rt::task::JoinHandle<Vec<Outcome>>,
}

async fn games_under_way(accounts: &str, host: &Service, token: &str) -> UnderWay {
    let games = new_games(accounts, &host.base, token, GAMES).await;
    let bases = Rc::new(RefCell::new(vec![host.base.clone()]));
    let started = Started::default();
    let running = actix_rt::spawn({
        let (bases, started) = (bases.clone(), started.clone());
        async move { drive_all(games, &bases, PLIES, &started).await }
    });
    until_all_started(&started, GAMES).await;
    UnderWay { bases, running }
}

/// Every game that was being played at `fault` moved again within `limit`.
fn every_game_moved_again_within(outcomes: &[Outcome], fault: Instant, limit: Duration) {
    let gaps = moving_again_after(outcomes, fault);
    let moves: usize = outcomes.iter().map(|o| o.acknowledged.len()).sum();
    let (p50, p99) = pace_before(outcomes, fault);
    println!(
        "{moves} acknowledged moves, none lost; before the fault a game moved every \
         {p50:?} (p50), {p99:?} (p99); after it {}",
        summary(&gaps)
    );
    assert!(
        gaps.len() >= GAMES / 2,
        "most games were in play at the fault: {} of {GAMES}",
        gaps.len()
    );
    for gap in &gaps {
        assert!(
            gap.is_some_and(|gap| gap <= limit),
            "a game moved again only after {gap:?} (limit {limit:?}): {}",
            summary(&gaps)
        );
    }
}

/// How the arena is stopped before it is started again in its place.
#[derive(Clone, Copy, Debug)]
enum Stop {
    Sigterm,
    Sigkill,
}

/// Twenty games on an arena stopped with `stop` and started again at once
/// on its port: every game moves again within `limit`, none loses a move.
async fn arena_restarted_in_place(stop: Stop, limit: Duration) {
    let stores = TestStores::new().await.unwrap();
    let shared = shared();
    let env = environment(&stores, &shared);
    let port = free_port();
    let mut arena = start("arena", port, &env).await;
    let play = games_under_way(&arena.base, &arena, &shared.internal_token).await;
    let fault = Instant::now();
    let exited = match stop {
        Stop::Sigterm => arena.terminate().await,
        Stop::Sigkill => {
            arena.kill();
            fault.elapsed()
        }
    };
    arena = start("arena", port, &env).await;
    println!(
        "{stop:?}: exited after {exited:?}, serving again after {:?}",
        fault.elapsed()
    );
    let outcomes = play.running.await.unwrap();
    check_records(&arena.base, &outcomes).await;
    every_game_moved_again_within(&outcomes, fault, limit);
    drop(arena);
    stores.cleanup().await.unwrap();
}

#[actix_rt::test]
async fn an_arena_stopped_with_sigterm_and_started_again_moves_every_game_within_2_s() {
    arena_restarted_in_place(Stop::Sigterm, Duration::from_secs(2)).await;
}

#[actix_rt::test]
async fn an_arena_killed_and_started_again_at_once_takes_its_games_back_within_3_s() {
    arena_restarted_in_place(Stop::Sigkill, Duration::from_secs(3)).await;
}

#[actix_rt::test]
async fn a_game_room_stopped_with_sigterm_hands_its_games_to_another_within_2_s() {
    let stores = TestStores::new().await.unwrap();
    let shared = shared();
    let env = environment(&stores, &shared);
    let room = |port: u16| {
        let mut env = env.clone();
        env.push(("APP_PUBLIC_URL", format!("http://127.0.0.1:{port}")));
        env
    };
    let (port_a, port_b) = (free_port(), free_port());
    let mut host = start("game-room", port_a, &room(port_a)).await;
    let other = start("game-room", port_b, &room(port_b)).await;
    let accounts = start("matchmaking", free_port(), &env).await;
    let play = games_under_way(&accounts.base, &host, &shared.internal_token).await;
    // Players' clients know the proxy in front of every instance: here,
    // both addresses, the stopping one first.
    *play.bases.borrow_mut() = vec![host.base.clone(), other.base.clone()];
    let fault = Instant::now();
    let exited = host.terminate().await;
    println!("SIGTERM: the host exited after {exited:?}");
    let outcomes = play.running.await.unwrap();
    check_records(&other.base, &outcomes).await;
    every_game_moved_again_within(&outcomes, fault, Duration::from_secs(2));
    drop((other, accounts));
    stores.cleanup().await.unwrap();
}
