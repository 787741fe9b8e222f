//! Signed-out sessions. An access token names its session (`sid`, the
//! refresh-token family it was issued in); signing out, a stolen refresh
//! token or a guest registering revokes the family in Postgres and appends
//! the session here, to a Redis stream, with the second after which none
//! of its access tokens is valid anyway. Every process follows the stream
//! from where it last read, once a second: a token of a signed-out session
//! is refused everywhere within a second (at once in the process that
//! signed it out), and the sockets opened with it close on their next tick.
//!
//! The cost is bounded by design, not by luck:
//! - a check is one hash lookup in this process's map;
//! - a follow reads what was appended since the last one (`XREAD` from a
//!   cursor), never the whole list;
//! - a session is listed only while one of its tokens could still be
//!   presented (an access token's lifetime and a minute): the stream is
//!   trimmed past that on every append, and each map forgets it then. The
//!   list therefore holds the sign-outs of the last few minutes, and
//!   sign-outs need sign-ins, which are limited per account and per
//!   address.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use redis::streams::{StreamId, StreamReadReply};

use crate::clock::Clock;
use crate::stores::Redis;

/// The stream of revoked sessions: each entry a session (`s`) and the Unix
/// second after which no token of it is valid anyway (`u`).
const REVOKED: &str = "sessions:revoked";

/// How often each process reads what was appended.
const FOLLOW_EVERY: Duration = Duration::from_secs(1);

/// Entries read per round trip; a follow loops while a read comes back full.
const READ_COUNT: usize = 5_000;

/// This process's view of the revoked sessions; cheap to clone.
#[derive(Clone, Debug, Default)]
pub struct Revocations {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    /// Session id to the Unix second its listing may be forgotten.
    ended: RwLock<HashMap<String, u64>>,
    /// The id of the last stream entry read (none yet: from the start).
    cursor: Mutex<Option<String>>,
}

impl Revocations {
    pub fn is_revoked(&self, session: &str) -> bool {
        self.inner
            .ended
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .contains_key(session)
    }

    /// How many sessions this process holds as revoked.
    pub fn len(&self) -> usize {
        self.inner
            .ended
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Revokes `session` until `until` (Unix seconds, when its last access
    /// token expires), `now` being the current second: here at once, in
    /// every process within a second.
    pub async fn revoke(
        &self,
        redis: &Redis,
        session: &str,
        until: u64,
        now: u64,
    ) -> Result<(), redis::RedisError> {
        self.inner
            .ended
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(session.to_owned(), until);
        let key = redis.key(REVOKED);
        let mut connection = redis.connection();
        let id: String = redis::cmd("XADD")
            .arg(&key)
            .arg("*")
            .arg("s")
            .arg(session)
            .arg("u")
            .arg(until)
            .query_async(&mut connection)
            .await?;
        // Entries older than one listing are past their `until`: the ids
        // are Redis's own milliseconds, so the cut is taken from the id
        // just made, whatever clock this process runs on.
        let made_ms = id
            .split_once('-')
            .and_then(|(ms, _)| ms.parse::<u64>().ok())
            .unwrap_or(0);
        let listed_ms = until.saturating_sub(now).saturating_mul(1000);
        let _: () = redis::cmd("XTRIM")
            .arg(&key)
            .arg("MINID")
            .arg("~")
            .arg(made_ms.saturating_sub(listed_ms))
            .query_async(&mut connection)
            .await?;
        Ok(())
    }

    /// A view kept current for as long as the process runs.
    pub fn followed(redis: Redis, clock: Clock) -> Revocations {
        let revocations = Revocations::default();
        revocations.follow(redis, clock);
        revocations
    }

    /// Keeps this view current for as long as the process runs.
    pub fn follow(&self, redis: Redis, clock: Clock) {
        let revocations = self.clone();
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(FOLLOW_EVERY);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                ticks.tick().await;
                if let Err(error) = revocations.catch_up(&redis, clock.now_secs()).await {
                    // The view stays as it was: a Redis outage forgets
                    // nothing this process knew.
                    tracing::warn!(%error, "following revoked sessions");
                }
                // What the bound on the set is measured by.
                metrics::gauge!("sessions_revoked_listed").set(revocations.len() as f64);
            }
        });
    }

    /// Reads what was appended since the last read, and forgets the
    /// sessions whose tokens have all expired by `now`.
    pub async fn catch_up(&self, redis: &Redis, now: u64) -> Result<(), redis::RedisError> {
        let key = redis.key(REVOKED);
        let mut connection = redis.connection();
        loop {
            let from = self
                .inner
                .cursor
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone()
                .unwrap_or_else(|| "0".to_owned());
            let reply: Option<StreamReadReply> = redis::cmd("XREAD")
                .arg("COUNT")
                .arg(READ_COUNT)
                .arg("STREAMS")
                .arg(&key)
                .arg(&from)
                .query_async(&mut connection)
                .await?;
            let entries: Vec<StreamId> = reply
                .map(|reply| reply.keys.into_iter().flat_map(|k| k.ids).collect())
                .unwrap_or_default();
            let Some(last) = entries.last().map(|entry| entry.id.clone()) else {
                break;
            };
            let read = entries.len();
            {
                let mut ended = self.inner.ended.write().unwrap_or_else(|e| e.into_inner());
                for entry in entries {
                    let session: Option<String> = entry.get("s");
                    let until: Option<u64> = entry.get("u");
                    if let (Some(session), Some(until)) = (session, until)
                        && until > now
                    {
                        ended.insert(session, until);
                    }
                }
            }
            *self.inner.cursor.lock().unwrap_or_else(|e| e.into_inner()) = Some(last);
            if read < READ_COUNT {
                break;
            }
        }
        self.inner
            .ended
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|_, until| *until > now);
        Ok(())
    }
}
