//! The lobby's figures (players online, in each queue, playing), read
//! from Redis, where every instance keeps them with entries that expire
//! unless refreshed.

use std::collections::BTreeMap;

use mancala_proto::bus::names::{ONLINE, PLAYING};
use mancala_proto::lobby::LobbyStats;
use redis::AsyncCommands;

use crate::context::{Context, Figures};
use crate::queue::store;

/// How long the lobby's figures are shared before they are read again.
const FIGURES_FRESH_MS: u64 = 1_000;

/// The figures of the lobby for its sockets, read at most once a second
/// per instance.
pub(crate) async fn stats(deps: &Context) -> Result<LobbyStats, redis::RedisError> {
    let now = deps.clock.now_millis();
    let kept = |figures: &Figures| {
        let kept = figures.0.lock().unwrap_or_else(|e| e.into_inner());
        kept.as_ref()
            .filter(|(read_at, _)| now.saturating_sub(*read_at) < FIGURES_FRESH_MS)
            .map(|(_, stats)| stats.clone())
    };
    if let Some(stats) = kept(&deps.figures) {
        return Ok(stats);
    }
    let stats = read_stats(deps).await?;
    *deps.figures.0.lock().unwrap_or_else(|e| e.into_inner()) = Some((now, stats.clone()));
    Ok(stats)
}

/// The figures of the lobby, from Redis: right across instances, and with
/// no drift when one dies (every entry expires unless refreshed). Read
/// afresh for each REST request (a request is paid for by its asker);
/// sockets share [`stats`].
pub(crate) async fn read_stats(deps: &Context) -> Result<LobbyStats, redis::RedisError> {
    let now = deps.clock.now_millis() as f64;
    let connection = deps.redis.connection();
    let count = |key: String| {
        let mut connection = connection.clone();
        async move {
            let _: () = connection.zrembyscore(&key, "-inf", now - 1.0).await?;
            connection.zcount::<_, _, _, u64>(&key, now, "+inf").await
        }
    };
    let online = count(deps.redis.key(ONLINE)).await?;
    let playing = count(deps.redis.key(PLAYING)).await?;
    let mut in_queue = BTreeMap::new();
    for queue in &deps.settings.queues {
        in_queue.insert(queue.clone(), store::waiting(&deps.redis, queue).await?);
    }
    Ok(LobbyStats {
        online,
        in_queue,
        playing,
    })
}
