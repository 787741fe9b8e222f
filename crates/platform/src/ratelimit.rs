//! Rate limits shared by every instance, in Redis: a fixed window per
//! subject (an IP address, an account), counted with one atomic `INCR`.
//!
//! Redis rather than an in-process limiter (governor and friends) because a
//! flood spread over several matchmaking instances must meet one count.
//! Fixed windows let up to twice the limit through across a window edge;
//! for login and sign-up floods that is fine, and it costs one round trip.
//! The current time is passed in, so tests control the clock.

use redis::AsyncCommands;

use crate::stores::Redis;

/// A limit: at most `max` events per `window_seconds`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limit {
    pub max: u64,
    pub window_seconds: u64,
}

/// Settings write a limit as `max/window_seconds`, e.g. `10/900`.
impl std::str::FromStr for Limit {
    type Err = String;

    fn from_str(text: &str) -> Result<Limit, String> {
        let (max, window) = text
            .split_once('/')
            .ok_or_else(|| format!("expected max/window_seconds, got {text:?}"))?;
        let max = max.trim().parse().map_err(|e| format!("max: {e}"))?;
        let window_seconds: u64 = window.trim().parse().map_err(|e| format!("window: {e}"))?;
        if window_seconds == 0 {
            return Err("the window must be at least one second".into());
        }
        Ok(Limit {
            max,
            window_seconds,
        })
    }
}

/// Whether an event may go ahead.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    Allowed {
        remaining: u64,
    },
    /// Over the limit: retry after this many seconds (the window's end).
    Limited {
        retry_after: u64,
    },
}

/// The current window of a limit at `now`: its Redis key and when it ends.
struct Window {
    key: String,
    ends: u64,
}

impl Window {
    fn at(redis: &Redis, name: &str, subject: &str, limit: Limit, now: u64) -> Window {
        let length = limit.window_seconds.max(1);
        let start = now - now % length;
        Window {
            key: redis.key(&format!("ratelimit:{name}:{subject}:{start}")),
            ends: start + length,
        }
    }

    /// The decision once `allowed` is known, given the events counted.
    fn decide(&self, allowed: bool, limit: Limit, counted: u64, now: u64) -> Decision {
        if allowed {
            Decision::Allowed {
                remaining: limit.max.saturating_sub(counted),
            }
        } else {
            Decision::Limited {
                retry_after: (self.ends - now).max(1),
            }
        }
    }
}

/// Counts an event of `subject` under `name` at time `now` (Unix seconds)
/// and decides. The count expires with its window.
pub async fn hit(
    redis: &Redis,
    name: &str,
    subject: &str,
    limit: Limit,
    now: u64,
) -> Result<Decision, redis::RedisError> {
    let window = Window::at(redis, name, subject, limit, now);
    let mut connection = redis.connection();
    let (count,): (u64,) = redis::pipe()
        .atomic()
        .incr(&window.key, 1u64)
        .expire(&window.key, (window.ends - now + 1) as i64)
        .ignore()
        .query_async(&mut connection)
        .await?;
    Ok(window.decide(count <= limit.max, limit, count, now))
}

/// Whether `subject` is already at the limit, without counting an event:
/// a login is refused before its password is checked once the failures
/// have run out, so a correct guess past the limit teaches nothing.
pub async fn peek(
    redis: &Redis,
    name: &str,
    subject: &str,
    limit: Limit,
    now: u64,
) -> Result<Decision, redis::RedisError> {
    let window = Window::at(redis, name, subject, limit, now);
    let count: Option<u64> = redis.connection().get(&window.key).await?;
    let count = count.unwrap_or(0);
    Ok(window.decide(count < limit.max, limit, count, now))
}

/// Takes back one event counted by [`hit`] at `now` that turned out not to
/// count (a report that was already open). Counting first and taking back
/// after, rather than peeking first, keeps two racing requests from both
/// passing a limit with one place left.
pub async fn refund(
    redis: &Redis,
    name: &str,
    subject: &str,
    limit: Limit,
    now: u64,
) -> Result<(), redis::RedisError> {
    let window = Window::at(redis, name, subject, limit, now);
    redis.connection().decr::<_, _, ()>(window.key, 1u64).await
}

/// Forgets the count of `subject` in the current window: a successful login
/// clears its failures.
pub async fn reset(
    redis: &Redis,
    name: &str,
    subject: &str,
    limit: Limit,
    now: u64,
) -> Result<(), redis::RedisError> {
    let window = Window::at(redis, name, subject, limit, now);
    redis.connection().del::<_, ()>(window.key).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_parse_from_settings() {
        assert_eq!(
            "10/900".parse::<Limit>(),
            Ok(Limit {
                max: 10,
                window_seconds: 900
            })
        );
        for bad in ["10", "x/60", "10/0", "10/-1"] {
            assert!(bad.parse::<Limit>().is_err(), "{bad}");
        }
    }
}
