//! What voiding a booster's results costs, on the real Postgres and Redis:
//! a season of 10,000 rated Kalah games among 1,000 players, rated by the
//! worker as it would have been day by day; then a moderator's mark on the
//! busiest player (every rated game of theirs voided) and the recompute it
//! asks for. Prints the games, the history lines replayed and changed, the
//! ratings changed, the players touched and the time, and checks the
//! outcome against a full replay of the history (nothing left to change).
//! Then a second mark, on an ordinary player and reaching back ten days,
//! for the cost of the common case: only the tail of the history replays.
//!
//! `cargo run --release -p mancala-tests --example recompute_figures [GAMES] [PLAYERS]`

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Instant;

use mancala_platform::jwt::random_seed;
use mancala_platform::testing::{TestStores, database_url, redis_url};
use mancala_platform::{Clock, ExposeSecret, Settings};
use mancala_rating::RatingSettings;
use time::OffsetDateTime;
use uuid::Uuid;

const DAYS: usize = 100;

fn main() {
    let mut args = std::env::args().skip(1);
    let games: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(10_000);
    let players: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1_000);
    actix_rt::System::new().block_on(run(games, players));
}

/// xorshift: the same season every run.
struct Sequence(u64);

impl Sequence {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

async fn run(games: usize, players: usize) {
    let stores = TestStores::new().await.unwrap();
    let vars: Vec<(String, String)> = [
        (
            "DATABASE_URL",
            database_url(&stores.database).expose_secret().to_owned(),
        ),
        ("REDIS_URL", redis_url().expose_secret().to_owned()),
        ("APP_REDIS_PREFIX", stores.prefix.clone()),
        (
            "APP_JWT_PRIVATE_KEY",
            random_seed().expose_secret().to_owned(),
        ),
    ]
    .into_iter()
    .map(|(name, value)| (name.to_owned(), value))
    .collect();
    let start = time::OffsetDateTime::now_utc() - time::Duration::days(DAYS as i64 + 1);
    let clock = Clock::manual((start.unix_timestamp() * 1000) as u64);
    let service = mancala_rating::RatingService::new(
        stores.postgres.clone(),
        stores.redis.clone(),
        &Settings::from_vars(vars.clone()).unwrap(),
        RatingSettings::from_vars(vars).unwrap(),
        clock.clone(),
        Default::default(),
    )
    .unwrap();
    let rater = service.rater().clone();

    let ids: Vec<Uuid> = (0..players).map(|_| Uuid::now_v7()).collect();
    sqlx::query(
        "INSERT INTO players (id, display_name)
         SELECT id, 'P' || n FROM unnest($1::uuid[]) WITH ORDINALITY AS t(id, n)",
    )
    .bind(&ids)
    .execute(&stores.postgres)
    .await
    .unwrap();
    sqlx::query(
        "INSERT INTO credentials (player_id, username, password_hash)
         SELECT id, 'player' || n, 'x' FROM unnest($1::uuid[]) WITH ORDINALITY AS t(id, n)",
    )
    .bind(&ids)
    .execute(&stores.postgres)
    .await
    .unwrap();

    // A season: each day's games inserted as game-room leaves them, then
    // rated by the worker at the day's end. Player 0 plays ten times as
    // often as the others: the booster.
    let mut sequence = Sequence(0x2545_f491_4f6c_dd1d);
    let per_day = games.div_ceil(DAYS);
    let rating_started = Instant::now();
    let mut made = 0;
    for day in 0..DAYS {
        let mut game_ids = Vec::new();
        let (mut south, mut north, mut results) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..per_day.min(games - made) {
            let a = if sequence.below(10) == 0 {
                0
            } else {
                sequence.below(players)
            };
            let mut b = sequence.below(players);
            if b == a {
                b = (a + 1) % players;
            }
            game_ids.push(Uuid::now_v7());
            south.push(ids[a]);
            north.push(ids[b]);
            results.push(["p0", "p1", "draw"][sequence.below(3)].to_owned());
            made += 1;
        }
        let at = start + time::Duration::days(day as i64);
        sqlx::query(
            "INSERT INTO games (id, variant, seat0_player, seat1_player, rated, status, result,
                                reason, score0, score1, created_at, ended_at)
             SELECT id, '{\"variant\":\"kalah\"}', s, n, true, 'over', r, 'resign', 0, 0, $5, $5
             FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[]) AS t(id, s, n, r)",
        )
        .bind(&game_ids)
        .bind(&south)
        .bind(&north)
        .bind(&results)
        .bind(at)
        .execute(&stores.postgres)
        .await
        .unwrap();
        sqlx::query(
            "INSERT INTO rating_outbox (game_id, created_at) SELECT id, $2 FROM unnest($1::uuid[]) AS t(id)",
        )
        .bind(&game_ids)
        .bind(at)
        .execute(&stores.postgres)
        .await
        .unwrap();
        clock.advance(3_600_000);
        rater.drain().await;
        clock.advance(23 * 3_600_000);
    }
    let rating_secs = rating_started.elapsed().as_secs_f64();
    let booster_games: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM games WHERE rated AND (seat0_player = $1 OR seat1_player = $1)",
    )
    .bind(ids[0])
    .fetch_one(&stores.postgres)
    .await
    .unwrap();
    println!(
        "season: {made} rated games among {players} players over {DAYS} days, rated by the worker in {rating_secs:.1} s"
    );

    // The mark, as the moderators' action writes it.
    let (done, wall) = mark_and_recompute(
        &stores,
        &rater,
        ids[0],
        "booster",
        OffsetDateTime::UNIX_EPOCH,
    )
    .await;
    let replayed = &done.replayed;
    println!(
        "mark on the busiest player ({booster_games} rated games voided): replayed {} history lines, \
         {} lines changed, {} ratings changed, {} players touched; {} ms in the transaction, {} ms with the leaderboards",
        replayed.lines,
        replayed.lines_changed,
        replayed.ratings_changed,
        replayed.players.len(),
        done.millis,
        wall.as_millis()
    );
    // A later mark reaching back ten days: only the tail is replayed.
    let since = start + time::Duration::days(DAYS as i64 - 10);
    let (done, wall) = mark_and_recompute(&stores, &rater, ids[1], "engine", since).await;
    let replayed = &done.replayed;
    println!(
        "a mark reaching back 10 days on an ordinary player: replayed {} history lines, \
         {} lines changed, {} ratings changed; {} ms in the transaction, {} ms with the leaderboards",
        replayed.lines,
        replayed.lines_changed,
        replayed.ratings_changed,
        done.millis,
        wall.as_millis()
    );
    let check_started = Instant::now();
    let check = rater.check_history().await.unwrap();
    println!(
        "check: a full replay of {} lines finds {} lines and {} ratings to change ({} ms)",
        check.lines,
        check.lines_changed,
        check.ratings_changed,
        check_started.elapsed().as_millis()
    );
    assert_eq!((check.lines_changed, check.ratings_changed), (0, 0));
    stores.cleanup().await.unwrap();
}

/// A mark of `kind` on `player` from `since`, as the moderators' action
/// writes it, and the recompute it asks for: what it did, and its time
/// with the leaderboards.
async fn mark_and_recompute(
    stores: &TestStores,
    rater: &mancala_rating::context::Context,
    player: Uuid,
    kind: &str,
    since: OffsetDateTime,
) -> (mancala_rating::recompute::Recomputed, std::time::Duration) {
    sqlx::query(
        "INSERT INTO sanctions (player_id, kind, reason, created_at, covers_from)
         VALUES ($1, $2, 'bench', now(), $3)",
    )
    .bind(player)
    .bind(kind)
    .bind(since)
    .execute(&stores.postgres)
    .await
    .unwrap();
    sqlx::query("INSERT INTO rating_recomputes (player_id, requested_at) VALUES ($1, now())")
        .bind(player)
        .execute(&stores.postgres)
        .await
        .unwrap();
    let started = Instant::now();
    let done = rater
        .recompute_next()
        .await
        .unwrap()
        .expect("the recompute");
    (done, started.elapsed())
}
