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

/// Counts an event of `subject` under `name` at time `now` (Unix seconds)
/// and decides. The count expires with its window.
pub async fn hit(
    redis: &Redis,
    name: &str,
    subject: &str,
    limit: Limit,
    now: u64,
) -> Result<Decision, redis::RedisError> {
    let window = limit.window_seconds.max(1);
    let start = now - now % window;
    let key = redis.key(&format!("ratelimit:{name}:{subject}:{start}"));
    let mut connection = redis.connection();
    let (count,): (u64,) = redis::pipe()
        .atomic()
        .incr(&key, 1u64)
        .expire(&key, (window + 1) as i64)
        .ignore()
        .query_async(&mut connection)
        .await?;
    Ok(if count > limit.max {
        Decision::Limited {
            retry_after: (start + window - now).max(1),
        }
    } else {
        Decision::Allowed {
            remaining: limit.max - count,
        }
    })
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
    let window = limit.window_seconds.max(1);
    let start = now - now % window;
    let key = redis.key(&format!("ratelimit:{name}:{subject}:{start}"));
    let count: Option<u64> = redis.connection().get(&key).await?;
    let count = count.unwrap_or(0);
    Ok(if count >= limit.max {
        Decision::Limited {
            retry_after: (start + window - now).max(1),
        }
    } else {
        Decision::Allowed {
            remaining: limit.max - count,
        }
    })
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
    let window = limit.window_seconds.max(1);
    let key = redis.key(&format!(
        "ratelimit:{name}:{subject}:{}",
        now - now % window
    ));
    redis.connection().del::<_, ()>(key).await
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
