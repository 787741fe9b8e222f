//! Tickets in Redis, shared by every matchmaking instance.
//!
//! Keys, under the deployment's prefix (`{queues}` is a hash tag: on a
//! Redis Cluster those keys share a slot, for the claim script):
//! - `queue:{queues}:<queue>:tickets`: a hash of player → ticket;
//! - `player:{queues}:<id>:queues`: the queues a player waits in;
//! - `lobby:alive`: players with a lobby socket, scored by when that stops
//!   counting (clock ms); tickets of players past it are dropped;
//! - `lease:queue:<queue>` and `fence:{queues}:<queue>`: the pairing lease
//!   and its fencing token;
//! - `player:<id>:firsts`: recent first moves minus second moves.
//!
//! Taking tickets out of every queue of a player is one Lua script that
//! also checks the fencing token: a pair is claimed at most once, and a
//! pairer that lost its lease claims nothing.

use std::collections::HashSet;

use mancala_platform::Redis;
use redis::AsyncCommands;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::pairing::Ticket;

/// A ticket as stored (the player is the hash field).
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Stored {
    rating: f64,
    rd: f64,
    joined_ms: u64,
    last_opponent: Option<Uuid>,
    first_balance: i32,
}

/// Claims tickets: checks the fence, checks every player still waits in
/// this queue, then removes each from all their queues. 1 claimed, 0 gone,
/// -1 fenced off.
const CLAIM: &str = r#"
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
for i = 3, #ARGV do
    if redis.call('HEXISTS', KEYS[2], ARGV[i]) == 0 then return 0 end
end
for i = 3, #ARGV do
    local set = ARGV[2] .. 'player:{queues}:' .. ARGV[i] .. ':queues'
    for _, queue in ipairs(redis.call('SMEMBERS', set)) do
        redis.call('HDEL', ARGV[2] .. 'queue:{queues}:' .. queue .. ':tickets', ARGV[i])
    end
    redis.call('DEL', set)
end
return 1"#;

/// Renews a lease only while it is ours.
const RENEW: &str = r#"
if redis.call('GET', KEYS[1]) == ARGV[1] then
    return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0"#;

/// What claiming came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Claim {
    Claimed,
    /// A ticket was no longer there (left, or paired elsewhere).
    Gone,
    /// The fencing token is stale: another instance pairs this queue now.
    Fenced,
}

// The queues' tickets, each player's set of queues and each queue's fence
// share the hash tag `{queues}`: the claim script reads and changes them
// together, which on a Redis Cluster needs one slot.

fn tickets_key(redis: &Redis, queue: &str) -> String {
    redis.key(&format!("queue:{{queues}}:{queue}:tickets"))
}

fn queues_key(redis: &Redis, player: impl std::fmt::Display) -> String {
    redis.key(&format!("player:{{queues}}:{player}:queues"))
}

fn fence_key(redis: &Redis, queue: &str) -> String {
    redis.key(&format!("fence:{{queues}}:{queue}"))
}

/// Puts a player in a queue (replacing an earlier ticket there).
pub async fn join(redis: &Redis, queue: &str, ticket: &Ticket) -> Result<(), redis::RedisError> {
    let stored = Stored {
        rating: ticket.rating,
        rd: ticket.rd,
        joined_ms: ticket.joined_ms,
        last_opponent: ticket.last_opponent,
        first_balance: ticket.first_balance,
    };
    let text = serde_json::to_string(&stored).unwrap_or_default();
    let player = ticket.player.to_string();
    let mut connection = redis.connection();
    redis::pipe()
        .atomic()
        .hset(tickets_key(redis, queue), &player, text)
        .ignore()
        .sadd(queues_key(redis, &player), queue)
        .ignore()
        .query_async::<()>(&mut connection)
        .await
}

/// Takes a player out of one queue, or of all (`None`).
pub async fn leave(
    redis: &Redis,
    player: Uuid,
    queue: Option<&str>,
) -> Result<(), redis::RedisError> {
    let set = queues_key(redis, player);
    let mut connection = redis.connection();
    let queues: Vec<String> = match queue {
        Some(queue) => vec![queue.to_owned()],
        None => connection.smembers(&set).await?,
    };
    let mut pipe = redis::pipe();
    pipe.atomic();
    for queue in &queues {
        pipe.hdel(tickets_key(redis, queue), player.to_string())
            .ignore();
        pipe.srem(&set, queue).ignore();
    }
    pipe.query_async::<()>(&mut connection).await
}

/// The queues a player waits in.
pub async fn queues_of(redis: &Redis, player: Uuid) -> Result<Vec<String>, redis::RedisError> {
    redis.connection().smembers(queues_key(redis, player)).await
}

/// Every ticket of a queue.
pub async fn tickets(redis: &Redis, queue: &str) -> Result<Vec<Ticket>, redis::RedisError> {
    let all: Vec<(String, String)> = redis
        .connection()
        .hgetall(tickets_key(redis, queue))
        .await?;
    Ok(all
        .into_iter()
        .filter_map(|(player, text)| {
            let stored: Stored = serde_json::from_str(&text).ok()?;
            Some(Ticket {
                player: Uuid::parse_str(&player).ok()?,
                rating: stored.rating,
                rd: stored.rd,
                joined_ms: stored.joined_ms,
                last_opponent: stored.last_opponent,
                first_balance: stored.first_balance,
            })
        })
        .collect())
}

/// How many wait in a queue.
pub async fn waiting(redis: &Redis, queue: &str) -> Result<u64, redis::RedisError> {
    redis.connection().hlen(tickets_key(redis, queue)).await
}

/// The players waiting in any of `queues`, each once.
pub async fn waiting_players(
    redis: &Redis,
    queues: &[String],
) -> Result<HashSet<Uuid>, redis::RedisError> {
    let mut pipe = redis::pipe();
    for queue in queues {
        pipe.hkeys(tickets_key(redis, queue));
    }
    let players: Vec<Vec<String>> = pipe.query_async(&mut redis.connection()).await?;
    Ok(players
        .iter()
        .flatten()
        .filter_map(|player| Uuid::parse_str(player).ok())
        .collect())
}

/// Notes that a player's lobby socket is open until `until` (clock ms).
pub async fn keep_alive(redis: &Redis, player: Uuid, until: u64) -> Result<(), redis::RedisError> {
    redis
        .connection()
        .zadd(redis.key("lobby:alive"), player.to_string(), until)
        .await
}

/// Which of `players` (a queue's ticket holders) have a lobby socket that
/// counts at `now`. Asks about those players only, whatever the number of
/// players online: a pairing wave reads as much as the queue holds.
pub async fn alive_among(
    redis: &Redis,
    players: &[Uuid],
    now: u64,
) -> Result<HashSet<Uuid>, redis::RedisError> {
    if players.is_empty() {
        return Ok(HashSet::new());
    }
    let key = redis.key("lobby:alive");
    let mut command = redis::cmd("ZMSCORE");
    command.arg(&key);
    for player in players {
        command.arg(player.to_string());
    }
    let until: Vec<Option<f64>> = command.query_async(&mut redis.connection()).await?;
    Ok(players
        .iter()
        .zip(until)
        .filter(|(_, until)| until.is_some_and(|until| until >= now as f64))
        .map(|(player, _)| *player)
        .collect())
}

/// Drops the players whose lobby socket stopped counting before `now`, so
/// the set holds only who is online.
pub async fn forget_gone(redis: &Redis, now: u64) -> Result<(), redis::RedisError> {
    let key = redis.key("lobby:alive");
    redis
        .connection()
        .zrembyscore(&key, "-inf", now as f64 - 1.0)
        .await
}

/// Takes the queue's pairing lease (or keeps it); the fencing token while
/// held, `None` when another instance holds it.
pub async fn lead(
    redis: &Redis,
    queue: &str,
    instance: &str,
    held: Option<u64>,
    lease_ms: u64,
) -> Result<Option<u64>, redis::RedisError> {
    let lease = redis.key(&format!("lease:queue:{queue}"));
    let fence = fence_key(redis, queue);
    let mut connection = redis.connection();
    if let Some(token) = held {
        let renewed: i64 = redis::Script::new(RENEW)
            .key(&lease)
            .arg(instance)
            .arg(lease_ms)
            .invoke_async(&mut connection)
            .await?;
        if renewed == 1 {
            return Ok(Some(token));
        }
    }
    let taken: Option<String> = redis::cmd("SET")
        .arg(&lease)
        .arg(instance)
        .arg("NX")
        .arg("PX")
        .arg(lease_ms)
        .query_async(&mut connection)
        .await?;
    if taken.is_none() {
        // A lease naming this instance is its own from before a restart
        // (one name per host and port: no live twin can hold it): taken
        // back at once, under a new token like any new leader's.
        let holder: Option<String> = connection.get(&lease).await?;
        if holder.as_deref() != Some(instance) {
            return Ok(None);
        }
        let _: bool = connection.pexpire(&lease, lease_ms as i64).await?;
    }
    // A new leader: a new token, which fences off every earlier one.
    let token: u64 = connection.incr(&fence, 1u64).await?;
    Ok(Some(token))
}

/// Claims `players`' tickets in `queue` under fencing token `token`.
pub async fn claim(
    redis: &Redis,
    queue: &str,
    token: u64,
    players: &[Uuid],
) -> Result<Claim, redis::RedisError> {
    let claim = redis::Script::new(CLAIM);
    let mut script = claim.prepare_invoke();
    script
        .key(fence_key(redis, queue))
        .key(tickets_key(redis, queue))
        .arg(token)
        .arg(redis.key(""));
    for player in players {
        script.arg(player.to_string());
    }
    let result: i64 = script.invoke_async(&mut redis.connection()).await?;
    Ok(match result {
        1 => Claim::Claimed,
        -1 => Claim::Fenced,
        _ => Claim::Gone,
    })
}

/// Remembers two players just met in `queue` (for an hour).
pub async fn record_opponents(
    redis: &Redis,
    queue: &str,
    a: Uuid,
    b: Uuid,
) -> Result<(), redis::RedisError> {
    let remember = |player: Uuid, opponent: Uuid| {
        let key = redis.key(&format!("player:{player}:last:{queue}"));
        let mut command = redis::cmd("SET");
        command
            .arg(&key)
            .arg(opponent.to_string())
            .arg("EX")
            .arg(3600);
        (key, command)
    };
    redis
        .batch::<redis::Value>(vec![remember(a, b), remember(b, a)])
        .await
        .map(|_| ())
}

/// A player's last opponent in `queue`.
pub async fn last_opponent(
    redis: &Redis,
    queue: &str,
    player: Uuid,
) -> Result<Option<Uuid>, redis::RedisError> {
    let last: Option<String> = redis
        .connection()
        .get(redis.key(&format!("player:{player}:last:{queue}")))
        .await?;
    Ok(last.and_then(|text| Uuid::parse_str(&text).ok()))
}

/// How long a `matched` waits for a lobby socket that missed it.
const MATCH_REMEMBERED_SECS: u64 = 120;

fn matched_key(redis: &Redis, player: Uuid) -> String {
    redis.key(&format!("lobby:matched:{player}"))
}

/// Keeps the `matched` just published to `player` (its game and the
/// message), for a lobby socket that reconnects shortly after.
pub async fn remember_match(redis: &Redis, player: Uuid, game: Uuid, message: &str) {
    let value = format!("{game} {message}");
    let stored: Result<(), _> = redis
        .connection()
        .set_ex(matched_key(redis, player), value, MATCH_REMEMBERED_SECS)
        .await;
    if let Err(error) = stored {
        tracing::warn!(%error, "remembering a match");
    }
}

/// The last `matched` of `player`, if recent: its game and the message.
pub async fn remembered_match(redis: &Redis, player: Uuid) -> Option<(Uuid, String)> {
    let value: Option<String> = redis
        .connection()
        .get(matched_key(redis, player))
        .await
        .ok()?;
    let (game, message) = value?
        .split_once(' ')
        .map(|(g, m)| (g.to_owned(), m.to_owned()))?;
    Some((game.parse().ok()?, message))
}
