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
//! their limits for a second, so it does not flap at the edge. Work that
//! takes over a place its caller already holds (a rematch) is refused for
//! slowness only once the instance has been busy for a few seconds.
//!
//! What a refused client is told to wait grows with how long the instance
//! has been refusing (see [`retry_after`]): a full instance frees room
//! only as its games end, and clients told "5 s" again and again become a
//! load of their own that the games in progress pay for.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use mancala_proto::ErrorCode;
use sqlx::PgPool;

use crate::clock::Clock;
use crate::http::ApiError;
use crate::stores::Redis;

/// The limits past which the instance refuses new work.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::Args)]
pub struct AdmissionLimits {
    /// Busy when the event loop wakes a timer this many ms late (0: never).
    #[arg(env = "APP_OVERLOAD_LOOP_LAG_MS", default_value = "150",
          value_parser = crate::values::millis)]
    pub loop_lag: Duration,
    /// Busy when a Redis round trip takes this many ms (0: never).
    #[arg(env = "APP_OVERLOAD_REDIS_MS", default_value = "250",
          value_parser = crate::values::millis)]
    pub redis: Duration,
    /// Busy when taking a Postgres connection takes this many ms (0: never).
    #[arg(env = "APP_OVERLOAD_POSTGRES_WAIT_MS", default_value = "250",
          value_parser = crate::values::millis)]
    pub postgres_wait: Duration,
    /// Busy when games' writes (moves, ends) waited this many ms for their
    /// commits, the 95th percentile of a sample's quarter second (0: never).
    // A last resort: the games' own capacity (`APP_OVERLOAD_GAMES`) keeps
    // them under the knee, and at the knee on a noisy machine the writes
    // pass 50 ms for a second now and then.
    #[arg(env = "APP_OVERLOAD_WRITE_MS", default_value = "200",
          value_parser = crate::values::millis)]
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
/// How long the instance must have been slow before it refuses work that
/// keeps a place it already holds (a rematch). A stall of a second or two
/// (a checkpoint's fsync on a saturated machine) adds no game; refusing
/// the rematches finishing in it would end those games and send both
/// players to the queue: a pairing and a new game each, more work than
/// the rematch, and an error for players who did nothing wrong.
const SLOW_HOLDS_AFTER: Duration = Duration::from_secs(5);
/// What a refused client is told to wait at the start of a busy spell, in
/// seconds.
pub const RETRY_AFTER_SECS: u64 = 5;
/// The longest a busy instance asks a client to wait (before the spread).
pub const RETRY_AFTER_MAX_SECS: u64 = 60;
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
    pub fn observe(&mut self, sample: Sample, limits: &AdmissionLimits) -> bool {
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

/// How long a client refused `busy_for` into a busy spell (refusals with no
/// gap over [`SPELL_GAP`]) is told to wait, in seconds: 5 at first, then as
/// long as the spell has lasted so far, up to a minute, and spread by ±25%
/// with `spread` (in `[0, 1)`) so that the clients refused in one second do
/// not all come back in the same second.
///
/// As long as the spell: a client that finds the instance still full after
/// waiting is told to wait about twice as long (the backoff doubles), so a
/// long overload is met by fewer and fewer retries. At 1.5x the knee with
/// a fixed 5 s, about a hundred refusals a second (each a sign-in or a
/// socket handshake) took CPU from the games in progress; with half the
/// spell, the first minutes of a spell still did.
pub fn retry_after(busy_for: Duration, spread: f64) -> u64 {
    let base = busy_for
        .as_secs_f64()
        .clamp(RETRY_AFTER_SECS as f64, RETRY_AFTER_MAX_SECS as f64);
    let spread = if spread.is_finite() {
        spread.clamp(0.0, 1.0)
    } else {
        0.5
    };
    ((base * (0.75 + 0.5 * spread)).round() as u64).max(1)
}

/// Refusals further apart than this are two busy spells, not one.
const SPELL_GAP: Duration = Duration::from_secs(10);

/// A well-spread fraction in `[0, 1)` from a counter (splitmix64's mix):
/// the spread of the n-th refusal, without a random source in the hot path.
fn spread(n: u64) -> f64 {
    let mut z = n.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}

/// This instance's load; cheap to clone.
#[derive(Clone, Debug)]
pub struct Admission {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    /// When a sign last made the instance slow (clock ms, at least 1), or
    /// 0 while it is open.
    slow_since: AtomicU64,
    /// Games in progress on the instance, and how many it may hold (0: any).
    games: AtomicU64,
    games_limit: u64,
    /// The game writes since the last sample, by how long they waited.
    writes: WriteTimes,
    /// The busy spell: when its first refusal was, and its last (clock
    /// ms). A spell is refusals with no gap over [`SPELL_GAP`]: a full
    /// instance opens for a moment whenever a game ends, and those moments
    /// do not end it.
    spell_began: AtomicU64,
    last_refusal: AtomicU64,
    /// Refusals so far: each one's place in the spread of waits.
    refusals: AtomicU64,
    clock: Clock,
}

impl Inner {
    fn new(games_limit: u64, clock: Clock) -> Inner {
        Inner {
            slow_since: AtomicU64::new(0),
            games: AtomicU64::new(0),
            games_limit,
            writes: WriteTimes::default(),
            spell_began: AtomicU64::new(0),
            last_refusal: AtomicU64::new(0),
            refusals: AtomicU64::new(0),
            clock,
        }
    }

    /// Takes the sampler's verdict; whether it changed.
    fn set_slow(&self, slow: bool) -> bool {
        if slow {
            let since = self.clock.now_millis().max(1);
            self.slow_since
                .compare_exchange(0, since, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        } else {
            self.slow_since.swap(0, Ordering::Relaxed) != 0
        }
    }

    fn slow(&self) -> bool {
        self.slow_since.load(Ordering::Relaxed) != 0
    }

    /// Slow for at least `lasting`.
    fn slow_for(&self, lasting: Duration) -> bool {
        let since = self.slow_since.load(Ordering::Relaxed);
        since != 0 && self.clock.now_millis().saturating_sub(since) >= lasting.as_millis() as u64
    }
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

impl Admission {
    /// Starts reading the signs of `redis` and `postgres` in the background,
    /// for as long as the returned handle (or a clone) lives.
    pub fn start(
        limits: AdmissionLimits,
        redis: Redis,
        postgres: PgPool,
        clock: Clock,
    ) -> Admission {
        let load = Admission {
            inner: Arc::new(Inner::new(u64::from(limits.games_in_progress), clock)),
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
                if inner.set_slow(busy) {
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
    pub fn unlimited() -> Admission {
        Admission {
            inner: Arc::new(Inner::new(0, Clock::system())),
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
        self.inner.slow() || self.full()
    }

    fn full(&self) -> bool {
        let limit = self.inner.games_limit;
        limit > 0 && self.inner.games.load(Ordering::Relaxed) >= limit
    }

    /// `Ok` when new work of kind `what` may start; the `503` otherwise.
    pub fn admit(&self, what: &'static str) -> Result<(), ApiError> {
        if self.inner.slow() {
            return Err(self.refuse(what, "slow"));
        }
        if self.full() {
            return Err(self.refuse(what, "full"));
        }
        Ok(())
    }

    /// As [`Admission::admit`], for work that takes over a place its caller
    /// already holds (a rematch while its finished game still holds its
    /// place): refused when the signs have said the instance is slow for
    /// [`SLOW_HOLDS_AFTER`], or when it holds more games than it may (new
    /// games admitted together at the edge may overshoot), but not merely
    /// because it is full, since it adds no game.
    pub fn admit_held(&self, what: &'static str) -> Result<(), ApiError> {
        let limit = self.inner.games_limit;
        if self.inner.slow_for(SLOW_HOLDS_AFTER) {
            return Err(self.refuse(what, "slow"));
        }
        if limit > 0 && self.inner.games.load(Ordering::Relaxed) > limit {
            return Err(self.refuse(what, "over"));
        }
        Ok(())
    }

    /// Places for new games left under the instance's limit (`None`: it
    /// has none): how many games a pairing wave may make.
    pub fn free_places(&self) -> Option<u64> {
        let limit = self.inner.games_limit;
        (limit > 0).then(|| limit.saturating_sub(self.inner.games.load(Ordering::Relaxed)))
    }

    /// As [`Admission::admit`], for a queue entry while `waiting` players already
    /// wait for a game here: refused as well when they are enough to fill
    /// every free place (`promised`). A player admitted to a queue whose
    /// pairs the instance cannot host would wait for a place with nothing
    /// to tell them when, while their lobby's status reads cost the games
    /// in progress; refused, they are told when to come back.
    pub fn admit_queue(&self, waiting: u64) -> Result<(), ApiError> {
        self.admit("queue")?;
        match self.free_places() {
            Some(free) if waiting / 2 >= free => Err(self.refuse("queue", "promised")),
            _ => Ok(()),
        }
    }

    /// `why`: a sign said the instance is `slow`, it is `full`, it holds
    /// more games than it may (`over`), or the players already queueing
    /// will take its free places (`promised`); the label tells a soak which
    /// of admission's checks its refusals came from.
    fn refuse(&self, what: &'static str, why: &'static str) -> ApiError {
        metrics::counter!("admission_refused_total", "what" => what, "why" => why).increment(1);
        let busy_for = self.refused_for();
        metrics::gauge!("load_busy_for_seconds").set(busy_for.as_secs_f64());
        let nth = self.inner.refusals.fetch_add(1, Ordering::Relaxed);
        busy_error(retry_after(busy_for, spread(nth)))
    }

    /// Notes a refusal now: how long the spell it belongs to has lasted.
    fn refused_for(&self) -> Duration {
        let inner = &self.inner;
        let now = inner.clock.now_millis();
        let last = inner.last_refusal.swap(now, Ordering::Relaxed);
        let gap = now.saturating_sub(last);
        if last == 0 || gap > SPELL_GAP.as_millis() as u64 {
            // Two refusals racing here may both start the spell: the same
            // moment, give or take.
            inner.spell_began.store(now, Ordering::Relaxed);
            return Duration::ZERO;
        }
        let began = inner.spell_began.load(Ordering::Relaxed);
        Duration::from_millis(now.saturating_sub(began))
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

/// What a refused client gets: `unavailable`, come back in `seconds`.
pub fn busy_error(seconds: u64) -> ApiError {
    ApiError {
        retry_after: Some(seconds),
        ..ApiError::new(
            ErrorCode::Unavailable,
            format!("the server is busy; try again in {seconds} s"),
        )
    }
}

async fn probe_redis(redis: &Redis, limits: &AdmissionLimits) -> Duration {
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

async fn probe_postgres(postgres: &PgPool, limits: &AdmissionLimits) -> Duration {
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

    fn limits() -> AdmissionLimits {
        AdmissionLimits {
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
        let off = AdmissionLimits {
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

    fn limited(games: u64, clock: &Clock) -> Admission {
        Admission {
            inner: Arc::new(Inner::new(games, clock.clone())),
        }
    }

    /// The wait a refusal asks for, with the spread taken out.
    fn told(refused: &ApiError) -> u64 {
        refused
            .retry_after
            .expect("a refusal says when to come back")
    }

    #[test]
    fn an_instance_holding_all_the_games_it_may_refuses_until_one_ends() {
        let clock = Clock::manual(1_000);
        let load = limited(2, &clock);
        let first = load.game_in_progress();
        assert!(load.admit("new_game").is_ok());
        let second = load.game_in_progress();
        assert_eq!(load.games_in_progress(), 2);
        let refused = load.admit("new_game").unwrap_err();
        assert_eq!(refused.code, ErrorCode::Unavailable);
        assert!((4..=7).contains(&told(&refused)), "about 5 s at first");
        // A rematch whose finished game still holds its place adds no game.
        assert!(load.admit_held("rematch").is_ok());
        load.inner.set_slow(true);
        assert!(load.admit("new_game").is_err(), "slow: no new game");
        assert!(
            load.admit_held("rematch").is_ok(),
            "a stall of a moment ends no game"
        );
        clock.advance(SLOW_HOLDS_AFTER.as_millis() as u64);
        load.inner.set_slow(true);
        assert!(
            load.admit_held("rematch").is_err(),
            "slow for a while: refused all the same"
        );
        load.inner.set_slow(false);
        assert!(load.admit_held("rematch").is_ok(), "open again");
        let third = load.game_in_progress();
        assert!(load.admit_held("rematch").is_err(), "over its capacity");
        drop(third);
        drop(first);
        assert!(load.admit("new_game").is_ok(), "one ended: room for one");
        drop(second);
        assert_eq!(load.games_in_progress(), 0);
        // No limit: any number.
        let unlimited = Admission::unlimited();
        let games: Vec<_> = (0..100).map(|_| unlimited.game_in_progress()).collect();
        assert!(unlimited.admit("new_game").is_ok());
        assert_eq!(unlimited.games_in_progress(), 100);
        drop(games);
    }

    #[test]
    fn a_queue_entry_is_refused_once_the_players_waiting_fill_the_free_places() {
        let clock = Clock::manual(1_000);
        let load = limited(3, &clock);
        let _playing = load.game_in_progress();
        assert_eq!(load.free_places(), Some(2));
        // Two places: four players waiting fill them; a fifth would wait
        // for a game the instance cannot host.
        for waiting in 0..4 {
            assert!(load.admit_queue(waiting).is_ok(), "{waiting} waiting");
        }
        let refused = load.admit_queue(4).unwrap_err();
        assert_eq!(refused.code, ErrorCode::Unavailable);
        assert!(refused.retry_after.is_some());
        // Full: refused whoever waits.
        let _more = [load.game_in_progress(), load.game_in_progress()];
        assert_eq!(load.free_places(), Some(0));
        assert!(load.admit_queue(0).is_err());
        // No limit: no places to count, any queue.
        let unlimited = Admission::unlimited();
        assert_eq!(unlimited.free_places(), None);
        assert!(unlimited.admit_queue(1_000_000).is_ok());
    }

    #[test]
    fn a_busy_instance_refuses_with_a_time_to_come_back() {
        let load = Admission::unlimited();
        assert!(load.admit("sign_in").is_ok());
        load.inner.set_slow(true);
        let refused = load.admit("sign_in").unwrap_err();
        assert_eq!(refused.code, ErrorCode::Unavailable);
        assert!((4..=7).contains(&told(&refused)));
        assert!(refused.message.contains(&format!("{} s", told(&refused))));
    }

    #[test]
    fn the_wait_grows_with_the_spell_to_a_minute_spread_by_a_quarter() {
        let secs = Duration::from_secs;
        assert_eq!(retry_after(Duration::ZERO, 0.5), RETRY_AFTER_SECS);
        assert_eq!(retry_after(secs(4), 0.5), RETRY_AFTER_SECS);
        assert_eq!(retry_after(secs(20), 0.5), 20);
        assert_eq!(retry_after(secs(60), 0.5), RETRY_AFTER_MAX_SECS);
        assert_eq!(retry_after(secs(3_600), 0.5), RETRY_AFTER_MAX_SECS);
        // The spread: a quarter either side, never zero, whatever it is fed.
        assert_eq!(retry_after(secs(3_600), 0.0), 45);
        assert_eq!(retry_after(secs(3_600), 0.999_999), 75);
        assert_eq!(retry_after(Duration::ZERO, 0.0), 4);
        assert_eq!(retry_after(Duration::ZERO, f64::NAN), RETRY_AFTER_SECS);
        assert_eq!(retry_after(Duration::ZERO, -3.0), 4);
        // Spreads of successive refusals cover the range, not one spot.
        let spreads: Vec<f64> = (0..1_000).map(spread).collect();
        assert!(spreads.iter().all(|s| (0.0..1.0).contains(s)));
        for quarter in 0..4 {
            let (low, high) = (quarter as f64 / 4.0, (quarter + 1) as f64 / 4.0);
            let inside = spreads.iter().filter(|s| (low..high).contains(*s)).count();
            assert!(
                (200..300).contains(&inside),
                "{inside} in quarter {quarter}"
            );
        }
    }

    #[test]
    fn a_client_refused_longer_into_a_spell_is_told_to_wait_longer() {
        let clock = Clock::manual(1_000_000);
        let load = limited(1, &clock);
        let game = load.game_in_progress();
        let first = told(&load.admit("queue").unwrap_err());
        assert!((4..=7).contains(&first), "{first}");
        // Refused again and again for a minute, never 10 s apart: one spell,
        // whatever openings there were between the refusals.
        for _ in 0..6 {
            clock.advance(5_000);
            let _ = load.admit("queue");
        }
        let later: Vec<u64> = (0..20)
            .map(|_| told(&load.admit("queue").unwrap_err()))
            .collect();
        assert!(later.iter().all(|&s| (22..=38).contains(&s)), "{later:?}");
        assert!(later.iter().any(|&s| s != later[0]), "spread: {later:?}");
        for _ in 0..120 {
            clock.advance(9_000);
            let _ = load.admit("queue");
        }
        let long = told(&load.admit("queue").unwrap_err());
        assert!((45..=75).contains(&long), "{long}");
        // Nobody refused for more than 10 s: the next refusal starts anew.
        drop(game);
        clock.advance(10_001);
        let _game = load.game_in_progress();
        let fresh = told(&load.admit("queue").unwrap_err());
        assert!((4..=7).contains(&fresh), "{fresh}");
    }
}
