//! Signed-out sessions. An access token names its session (`sid`, the
//! refresh-token family it was issued in); signing out revokes the family
//! in Postgres and lists the session here, in a Redis sorted set scored by
//! when its last access token expires. Every process keeps the list in
//! memory, reloaded every second, so a token of a signed-out session is
//! refused everywhere within a second (at once in the process that signed
//! it out), and the sockets opened with it close on their next tick.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use redis::AsyncCommands;

use crate::clock::Clock;
use crate::stores::Redis;

/// The sorted set of revoked sessions: member the session id, score the
/// Unix second after which no token of it is valid anyway.
const REVOKED: &str = "sessions:revoked";

/// How often each process reloads the list.
const RELOAD_EVERY: Duration = Duration::from_secs(1);

/// This process's view of the revoked sessions; cheap to clone.
#[derive(Clone, Debug, Default)]
pub struct Revocations {
    /// Session id to the Unix second its listing may be forgotten.
    ended: Arc<RwLock<HashMap<String, u64>>>,
}

impl Revocations {
    pub fn is_revoked(&self, session: &str) -> bool {
        self.ended
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .contains_key(session)
    }

    /// Revokes `session` until `until` (Unix seconds, when its last access
    /// token expires): here at once, in every process within a second.
    pub async fn revoke(
        &self,
        redis: &Redis,
        session: &str,
        until: u64,
    ) -> Result<(), redis::RedisError> {
        self.ended
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(session.to_owned(), until);
        let _: () = redis
            .connection()
            .zadd(redis.key(REVOKED), session, until)
            .await?;
        Ok(())
    }

    /// Keeps this view current for as long as the process runs.
    pub fn follow(&self, redis: Redis, clock: Clock) {
        let revocations = self.clone();
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(RELOAD_EVERY);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                ticks.tick().await;
                if let Err(error) = revocations.reload(&redis, clock.now_secs()).await {
                    // The last view stays: a Redis outage forgets nothing.
                    tracing::warn!(%error, "reloading revoked sessions");
                }
            }
        });
    }

    /// Replaces the view with the listed sessions not yet past `now`,
    /// dropping the rest from the list.
    pub async fn reload(&self, redis: &Redis, now: u64) -> Result<(), redis::RedisError> {
        let key = redis.key(REVOKED);
        let mut connection = redis.connection();
        let _: () = connection.zrembyscore(&key, "-inf", now).await?;
        let listed: Vec<(String, u64)> = connection
            .zrangebyscore_withscores(&key, format!("({now}"), "+inf")
            .await?;
        let mut ended = self.ended.write().unwrap_or_else(|e| e.into_inner());
        // Ones revoked here after the read began stay.
        ended.retain(|_, until| *until > now);
        ended.extend(listed);
        Ok(())
    }
}
