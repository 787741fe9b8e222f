//! Admission control: whether this instance is past what it can carry,
//! and, while it is, refusing *new* work (sign-ins, queue entries, new
//! games, new watchers) at once with `503 unavailable` and `Retry-After`,
//! so that the games already in progress keep their moves fast instead of
//! everything timing out together.
//!
//! Past a set number of games in progress on the instance (its capacity,
//! measured by `deploy/bench.sh`), new work is refused at once, game by
//! game, with no sampling: a machine whose cores are saturated does not
//! always show it in the signs below before its games slow down (the load
//! that saturates it may be elsewhere on the machine), but every game
//! admitted past the knee slows every other.
//!
//! Four signs are sampled a few times a second: how late the runtime
//! wakes a timer (its event loop is behind), how long a Redis PING takes,
//! how long taking a Postgres connection from the pool takes, and how long
//! the games' writes waited for their commits (the 95th percentile of the
//! sample's quarter second: what the players of games in progress feel,
//! and the sign that rises first when the machine is saturated, since the
//! database shares its cores). Any of them over its limit twice in a row
//! makes the instance busy; it is open again once all have been under half
//! their limits for a second, so it does not flap at the edge.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use mancala_proto::ErrorCode;
use sqlx::PgPool;

use crate::http::ApiError;
use crate::stores::Redis;

/// The limits past which the instance refuses new work.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::Args)]
pub struct LoadLimits {
    /// Busy when the event loop wakes a timer this many ms late (0: never).
    #[arg(env = "APP_OVERLOAD_LOOP_LAG_MS", default_value = "150",
          value_parser = crate::config::millis)]
    pub loop_lag: Duration,
    /// Busy when a Redis round trip takes this many ms (0: never).
    #[arg(env = "APP_OVERLOAD_REDIS_MS", default_value = "250",
          value_parser = crate::config::millis)]
    pub redis: Duration,
    /// Busy when taking a Postgres connection takes this many ms (0: never).
    #[arg(env = "APP_OVERLOAD_POSTGRES_WAIT_MS", default_value = "250",
          value_parser = crate::config::millis)]
    pub postgres_wait: Duration,
    /// Busy when games' writes (moves, ends) waited this many ms for their
    /// commits, the 95th percentile of a sample's quarter second (0: never).
    // A last resort: the games' own capacity (`APP_OVERLOAD_GAMES`) keeps
    // them under the knee, and at the knee on a noisy machine the writes
    // pass 50 ms for a second now and then.
    #[arg(env = "APP_OVERLOAD_WRITE_MS", default_value = "200",
          value_parser = crate::config::millis)]
    pub write: Duration,
    /// Busy while this many games are in progress on the instance: its
    /// capacity, the knee `deploy/bench.sh` measures (0: no limit).
    #[arg(env = "APP_OVERLOAD_GAMES", default_value_t = 0)]
    pub games_in_progress: u32,
}

/// The share of a sample's game writes that must have waited less than
/// the write limit.
const WRITE_QUANTILE: f64 = 0.95;
/// How often the signs are read.
const PERIOD: Duration = Duration::from_millis(250);
/// Samples over a limit in a row that make the instance busy.
const BUSY_AFTER: u32 = 2;
/// Samples all under half their limits in a row that open it again.
const OPEN_AFTER: u32 = 4;
/// What a refused client is told to wait, in seconds.
pub const RETRY_AFTER_SECS: u64 = 5;
/// The longest a probe waits: a store that does not answer within it is
/// as good as past any limit.
const PROBE_TIMEOUT: Duration = Duration::from_secs(1);

/// One reading of the three signs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sample {
    pub loop_lag: Duration,
    pub redis: Duration,
    pub postgres_wait: Duration,
    /// The 95th percentile of the games' writes since the sample before.
    pub write: Duration,
}

/// The busy/open decision over successive samples (no clock, no IO).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Verdict {
    busy: bool,
    over_in_a_row: u32,
    calm_in_a_row: u32,
}

impl Verdict {
    /// Whether the instance refuses new work.
    pub fn busy(&self) -> bool {
        self.busy
    }

    /// Takes one sample into account.
    pub fn observe(&mut self, sample: Sample, limits: &LoadLimits) -> bool {
        let pairs = [
            (sample.loop_lag, limits.loop_lag),
            (sample.redis, limits.redis),
            (sample.postgres_wait, limits.postgres_wait),
            (sample.write, limits.write),
        ];
        let set = |limit: Duration| !limit.is_zero();
        let over = pairs
            .iter()
            .any(|&(seen, limit)| set(limit) && seen >= limit);
        let calm = pairs
            .iter()
            .all(|&(seen, limit)| !set(limit) || seen < limit / 2);
        self.over_in_a_row = if over { self.over_in_a_row + 1 } else { 0 };
        self.calm_in_a_row = if calm { self.calm_in_a_row + 1 } else { 0 };
        if self.over_in_a_row >= BUSY_AFTER {
            self.busy = true;
        } else if self.calm_in_a_row >= OPEN_AFTER {
            self.busy = false;
        }
        self.busy
    }
}

/// This instance's load; cheap to clone.
#[derive(Clone, Debug)]
pub struct Load {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    busy: AtomicBool,
    /// Games in progress on the instance, and how many it may hold (0: any).
    games: AtomicU64,
    games_limit: u64,
    /// The game writes since the last sample, by how long they waited.
    writes: WriteTimes,
}

/// Write waits in 1 ms buckets up to a second (the last takes the rest),
/// counted without locks and emptied by each sample.
#[derive(Debug)]
struct WriteTimes {
    buckets: Box<[AtomicU64]>,
}

impl Default for WriteTimes {
    fn default() -> WriteTimes {
        WriteTimes {
            buckets: (0..WRITE_BUCKETS).map(|_| AtomicU64::new(0)).collect(),
        }
    }
}

/// Buckets of [`WriteTimes`]: 0 to 1,023 ms, and longer.
const WRITE_BUCKETS: usize = 1024;

impl WriteTimes {
    fn note(&self, waited: Duration) {
        let bucket = (waited.as_millis() as usize).min(WRITE_BUCKETS - 1);
        self.buckets[bucket].fetch_add(1, Ordering::Relaxed);
    }

    /// The `share` quantile of the writes noted since the last call (zero
    /// when none were), and empties the buckets.
    fn take_quantile(&self, share: f64) -> Duration {
        let counts: Vec<u64> = self
            .buckets
            .iter()
            .map(|bucket| bucket.swap(0, Ordering::Relaxed))
            .collect();
        let total: u64 = counts.iter().sum();
        if total == 0 {
            return Duration::ZERO;
        }
        let wanted = ((total as f64 * share).ceil() as u64).max(1);
        let mut seen = 0;
        for (millis, count) in counts.iter().enumerate() {
            seen += count;
            if seen >= wanted {
                return Duration::from_millis(millis as u64 + 1);
            }
        }
        Duration::from_millis(WRITE_BUCKETS as u64)
    }
}

impl Load {
    /// Starts reading the signs of `redis` and `postgres` in the background,
    /// for as long as the returned handle (or a clone) lives.
    pub fn start(limits: LoadLimits, redis: Redis, postgres: PgPool) -> Load {
        let load = Load {
            inner: Arc::new(Inner {
                games_limit: u64::from(limits.games_in_progress),
                ..Inner::default()
            }),
        };
        let watched = Arc::downgrade(&load.inner);
        tokio::spawn(async move {
            let mut verdict = Verdict::default();
            loop {
                let asleep = Instant::now();
                tokio::time::sleep(PERIOD).await;
                let loop_lag = asleep.elapsed().saturating_sub(PERIOD);
                let Some(inner) = watched.upgrade() else {
                    return;
                };
                let sample = Sample {
                    loop_lag,
                    redis: probe_redis(&redis, &limits).await,
                    postgres_wait: probe_postgres(&postgres, &limits).await,
                    write: inner.writes.take_quantile(WRITE_QUANTILE),
                };
                record(&sample);
                let busy = verdict.observe(sample, &limits);
                if inner.busy.swap(busy, Ordering::Relaxed) != busy {
                    tracing::warn!(
                        busy,
                        ?sample,
                        "admission: the instance is {}",
                        if busy { "busy" } else { "open again" }
                    );
                }
                metrics::gauge!("load_busy").set(f64::from(u8::from(busy)));
            }
        });
        load
    }

    /// An instance that never refuses (tests of other things, tools).
    pub fn unlimited() -> Load {
        Load {
            inner: Arc::default(),
        }
    }

    /// A game's write took `waited` from being asked to being committed:
    /// the price of a move's durability, which admission protects.
    pub fn note_write(&self, waited: Duration) {
        self.inner.writes.note(waited);
    }

    /// Counts a game in progress until the guard is dropped.
    pub fn game_in_progress(&self) -> GameInProgress {
        let games = self.inner.games.fetch_add(1, Ordering::Relaxed) + 1;
        metrics::gauge!("load_games_in_progress").set(games as f64);
        GameInProgress {
            inner: self.inner.clone(),
        }
    }

    /// Games in progress on the instance now.
    pub fn games_in_progress(&self) -> u64 {
        self.inner.games.load(Ordering::Relaxed)
    }

    /// Whether new work is refused now: a sign is past its limit, or the
    /// instance holds all the games it may.
    pub fn busy(&self) -> bool {
        self.inner.busy.load(Ordering::Relaxed) || self.full()
    }

    fn full(&self) -> bool {
        let limit = self.inner.games_limit;
        limit > 0 && self.inner.games.load(Ordering::Relaxed) >= limit
    }

    /// `Ok` when new work of kind `what` may start; the `503` otherwise.
    pub fn admit(&self, what: &'static str) -> Result<(), ApiError> {
        if !self.busy() {
            return Ok(());
        }
        metrics::counter!("admission_refused_total", "what" => what).increment(1);
        Err(busy_error())
    }
}

/// One game in progress, counted while it lives.
#[derive(Debug)]
pub struct GameInProgress {
    inner: Arc<Inner>,
}

impl Drop for GameInProgress {
    fn drop(&mut self) {
        let games = self.inner.games.fetch_sub(1, Ordering::Relaxed) - 1;
        metrics::gauge!("load_games_in_progress").set(games as f64);
    }
}

/// What a refused client gets: `unavailable`, come back in a few seconds.
pub fn busy_error() -> ApiError {
    ApiError {
        retry_after: Some(RETRY_AFTER_SECS),
        ..ApiError::new(
            ErrorCode::Unavailable,
            "the server is busy; try again in a few seconds",
        )
    }
}

async fn probe_redis(redis: &Redis, limits: &LoadLimits) -> Duration {
    if limits.redis.is_zero() {
        return Duration::ZERO;
    }
    let started = Instant::now();
    let (mut connection, command) = (redis.connection(), redis::cmd("PING"));
    let ping = command.query_async::<String>(&mut connection);
    match tokio::time::timeout(PROBE_TIMEOUT, ping).await {
        Ok(Ok(_)) => started.elapsed(),
        _ => PROBE_TIMEOUT,
    }
}

async fn probe_postgres(postgres: &PgPool, limits: &LoadLimits) -> Duration {
    if limits.postgres_wait.is_zero() {
        return Duration::ZERO;
    }
    let started = Instant::now();
    match tokio::time::timeout(PROBE_TIMEOUT, postgres.acquire()).await {
        Ok(Ok(_connection)) => started.elapsed(),
        _ => PROBE_TIMEOUT,
    }
}

fn record(sample: &Sample) {
    metrics::gauge!("load_loop_lag_seconds").set(sample.loop_lag.as_secs_f64());
    metrics::gauge!("load_redis_seconds").set(sample.redis.as_secs_f64());
    metrics::gauge!("load_postgres_wait_seconds").set(sample.postgres_wait.as_secs_f64());
    metrics::gauge!("load_write_seconds").set(sample.write.as_secs_f64());
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    fn limits() -> LoadLimits {
        LoadLimits {
            loop_lag: 100 * MS,
            redis: 200 * MS,
            postgres_wait: 200 * MS,
            write: 50 * MS,
            games_in_progress: 0,
        }
    }

    fn sample(loop_lag: u32, redis: u32, postgres_wait: u32) -> Sample {
        Sample {
            loop_lag: loop_lag * MS,
            redis: redis * MS,
            postgres_wait: postgres_wait * MS,
            write: Duration::ZERO,
        }
    }

    #[test]
    fn one_slow_sample_is_a_blip_two_in_a_row_make_the_instance_busy() {
        let mut verdict = Verdict::default();
        assert!(!verdict.observe(sample(150, 1, 1), &limits()));
        assert!(!verdict.observe(sample(1, 1, 1), &limits()));
        assert!(!verdict.observe(sample(1, 1, 300), &limits()));
        // Any of the signs counts.
        assert!(verdict.observe(sample(1, 250, 1), &limits()));
        let mut verdict = Verdict::default();
        let slow_writes = Sample {
            write: 80 * MS,
            ..sample(1, 1, 1)
        };
        verdict.observe(slow_writes, &limits());
        assert!(verdict.observe(slow_writes, &limits()));
    }

    #[test]
    fn busy_lasts_until_every_sign_has_been_well_under_its_limit_for_a_while() {
        let mut verdict = Verdict::default();
        verdict.observe(sample(500, 1, 1), &limits());
        assert!(verdict.observe(sample(500, 1, 1), &limits()));
        // Under the limit but not under half of it: still busy.
        for _ in 0..10 {
            assert!(verdict.observe(sample(60, 1, 1), &limits()));
        }
        for _ in 0..OPEN_AFTER - 1 {
            assert!(verdict.observe(sample(10, 10, 10), &limits()));
        }
        assert!(!verdict.observe(sample(10, 10, 10), &limits()));
    }

    #[test]
    fn a_limit_of_zero_is_never_crossed() {
        let mut verdict = Verdict::default();
        let off = LoadLimits {
            loop_lag: Duration::ZERO,
            ..limits()
        };
        for _ in 0..5 {
            assert!(!verdict.observe(sample(10_000, 1, 1), &off));
        }
    }

    #[test]
    fn the_write_sign_is_a_sample_s_95th_percentile_not_its_one_slowest_write() {
        let times = WriteTimes::default();
        assert_eq!(times.take_quantile(0.95), Duration::ZERO, "no writes");
        // 96 quick writes and 4 slow ones: the 95th percentile is quick.
        for _ in 0..96 {
            times.note(3 * MS);
        }
        for _ in 0..4 {
            times.note(900 * MS);
        }
        assert_eq!(times.take_quantile(0.95), 4 * MS);
        // Each sample starts afresh.
        assert_eq!(times.take_quantile(0.95), Duration::ZERO);
        for _ in 0..10 {
            times.note(60 * MS);
        }
        times.note(5 * MS);
        assert_eq!(times.take_quantile(0.95), 61 * MS);
        times.note(Duration::from_secs(30));
        assert_eq!(times.take_quantile(0.95), 1024 * MS);
    }

    #[test]
    fn an_instance_holding_all_the_games_it_may_refuses_until_one_ends() {
        let load = Load {
            inner: Arc::new(Inner {
                games_limit: 2,
                ..Inner::default()
            }),
        };
        let first = load.game_in_progress();
        assert!(load.admit("new_game").is_ok());
        let second = load.game_in_progress();
        assert_eq!(load.games_in_progress(), 2);
        assert_eq!(
            load.admit("new_game").unwrap_err().retry_after,
            Some(RETRY_AFTER_SECS)
        );
        drop(first);
        assert!(load.admit("new_game").is_ok(), "one ended: room for one");
        drop(second);
        assert_eq!(load.games_in_progress(), 0);
        // No limit: any number.
        let unlimited = Load::unlimited();
        let games: Vec<_> = (0..100).map(|_| unlimited.game_in_progress()).collect();
        assert!(unlimited.admit("new_game").is_ok());
        assert_eq!(unlimited.games_in_progress(), 100);
        drop(games);
    }

    #[test]
    fn a_busy_instance_refuses_with_a_time_to_come_back() {
        let load = Load::unlimited();
        assert!(load.admit("sign_in").is_ok());
        load.inner.busy.store(true, Ordering::Relaxed);
        let refused = load.admit("sign_in").unwrap_err();
        assert_eq!(refused.code, ErrorCode::Unavailable);
        assert_eq!(refused.retry_after, Some(RETRY_AFTER_SECS));
    }
}
