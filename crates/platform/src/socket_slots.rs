//! Open sockets per player, counted across every instance and service (the
//! lobby's and the games'), so one account cannot hold hundreds. Each
//! socket holds a slot in a Redis sorted set, scored by when it lapses; a
//! live socket renews its slot, so slots of an instance that died lapse by
//! themselves instead of locking their player out.
//!
//! When Redis cannot be asked the socket is let in: a limit is not worth
//! refusing every player while Redis restarts.

use crate::stores::Redis;

/// How long a slot lasts unrenewed (ms); sockets renew at a third of it.
pub const SLOT_MILLIS: u64 = 60_000;

/// Drops lapsed slots, then takes one if fewer than the limit are held (or
/// renews the caller's own).
const CLAIM: &str = r#"
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
local mine = redis.call('ZSCORE', KEYS[1], ARGV[4])
if not mine and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
    return 0
end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1"#;

/// A socket's place among its player's sockets.
pub struct SocketSlot {
    redis: Redis,
    key: String,
    member: String,
    renewed: u64,
}

/// Takes a slot for a new socket of `player` at `now` (ms); `None` when
/// the player already holds `limit` (0: no limit).
pub async fn claim(redis: &Redis, player: &str, limit: u32, now: u64) -> Option<SocketSlot> {
    let slot = SocketSlot {
        redis: redis.clone(),
        key: redis.key(&format!("sockets:{player}")),
        member: uuid::Uuid::new_v4().simple().to_string(),
        renewed: now,
    };
    if limit == 0 {
        return Some(slot);
    }
    match slot.write(limit, now).await {
        Ok(true) => Some(slot),
        Ok(false) => None,
        Err(error) => {
            tracing::warn!(%error, "counting a player's sockets; letting it in");
            Some(slot)
        }
    }
}

impl SocketSlot {
    async fn write(&self, limit: u32, now: u64) -> Result<bool, redis::RedisError> {
        let taken: i64 = redis::Script::new(CLAIM)
            .key(&self.key)
            .arg(now)
            .arg(now + SLOT_MILLIS)
            .arg(limit.max(1))
            .arg(&self.member)
            .arg(SLOT_MILLIS)
            .invoke_async(&mut self.redis.connection())
            .await?;
        Ok(taken == 1)
    }

    /// Keeps the slot alive; cheap to call on every tick (it writes only
    /// once a third of the slot's life has passed).
    pub async fn renew(&mut self, now: u64) {
        if now.saturating_sub(self.renewed) < SLOT_MILLIS / 3 {
            return;
        }
        self.renewed = now;
        if let Err(error) = self.write(u32::MAX, now).await {
            tracing::warn!(%error, "renewing a socket's slot");
        }
    }

    /// Gives the slot back when the socket closes.
    pub async fn release(self) {
        let removed: Result<i64, _> = redis::cmd("ZREM")
            .arg(&self.key)
            .arg(&self.member)
            .query_async(&mut self.redis.connection())
            .await;
        if let Err(error) = removed {
            tracing::warn!(%error, "releasing a socket's slot");
        }
    }
}
