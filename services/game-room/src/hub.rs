//! Game events across instances, through Redis pub/sub: the host of a game
//! publishes each event on the game's channel while another instance has
//! a watcher of it (and hands it to its own process's watchers without
//! Redis otherwise), and every instance with a watcher (or the host
//! itself, for watcher counts) subscribes. Watchers notice a gap by the
//! events' versions and resynchronise from Postgres.
//!
//! How a host learns that another instance follows: each instance keeps
//! its count of a game's watchers in the game's watcher hash, and
//! publishes the new total on the game's channels when it changes. The
//! host reads the hash when it starts and on each such message
//! (`audience`). A watcher elsewhere subscribes, then reads its snapshot,
//! then counts itself in: events the host made in between went nowhere,
//! so the host, on learning of it, publishes its latest event again, and
//! the watcher either has it, takes it as the next one, or sees the gap
//! and reads a newer snapshot.
//! Also the shared bits of a game's life that watchers elsewhere need:
//! presence and watcher counts.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mancala_platform::Redis;
use mancala_platform::pubsub::{PubSub, Subscription};
use mancala_proto::bus::{GameBus, Route, names};
use redis::AsyncCommands;
use uuid::Uuid;

/// How long a Redis read or write for shared state may take before it is
/// given up (Redis is down; the game goes on).
const PUBLISH_TIMEOUT: Duration = Duration::from_millis(250);

/// A game's watchers, as its host needs to know them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Audience {
    /// On every instance.
    pub watchers: u32,
    /// Whether another instance than this one has any: only then do the
    /// host's events go through Redis.
    pub elsewhere: bool,
}

/// This instance's end of the event channels; cheap to clone.
#[derive(Clone)]
pub struct Hub {
    inner: Arc<Inner>,
}

struct Inner {
    redis: Redis,
    pubsub: PubSub,
    /// Names this instance's field in the watcher-count hashes.
    instance: String,
    /// This instance's watchers per game, and whether a count is due.
    watching: Mutex<HashMap<Uuid, (u32, bool)>>,
}

/// How long watcher joins and leaves are gathered before one count goes
/// out: 5,000 watchers arriving must not mean 5,000 broadcasts to each.
const WATCHER_COUNT_DELAY: Duration = Duration::from_millis(250);
/// After a count Redis did not take, when to try again.
const WATCHER_COUNT_RETRY: Duration = Duration::from_secs(1);
/// Presence and watcher counts expire if no host refreshes them.
const SHARED_STATE_TTL_SECS: i64 = 24 * 3600;

impl Hub {
    /// Starts the reader task.
    pub fn start(redis: Redis, instance: String) -> Hub {
        Hub {
            inner: Arc::new(Inner {
                pubsub: PubSub::start(redis.clone()),
                redis,
                instance,
                watching: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// Listens to a game's channel, as a watcher: [`GameBus`] messages,
    /// encoded.
    pub async fn subscribe(&self, game: Uuid) -> Subscription {
        self.inner
            .pubsub
            .subscribe(&names::game_channel(game))
            .await
    }

    /// Changes whenever game events may have been lost in Redis (see
    /// [`PubSub::gaps`]): watchers catch up from Postgres then.
    pub fn gaps(&self) -> tokio::sync::watch::Receiver<u64> {
        self.inner.pubsub.gaps()
    }

    /// Listens to what a game's host hears (watcher counts, the rating
    /// change), not the events it publishes itself.
    pub async fn subscribe_host(&self, game: Uuid) -> Subscription {
        self.inner
            .pubsub
            .subscribe(&names::game_control_channel(game))
            .await
    }

    /// A host's event for its game's watchers: through Redis when
    /// `elsewhere` (another instance follows the game), otherwise straight
    /// to this process's watchers, and Redis never hears of it. Either
    /// way, this process's watchers get it once.
    pub async fn publish_event(&self, game: Uuid, route: Route, message: &str, elsewhere: bool) {
        if elsewhere {
            self.publish(game, route, message).await;
        } else {
            let text = GameBus::encode_parts(route, message);
            for channel in route.channels(game) {
                self.inner.pubsub.publish_here(&channel, text.clone());
            }
        }
    }

    /// Who watches a game: the count across every instance, and whether
    /// any other instance than this one has a watcher. One read; `None`
    /// when Redis did not answer in time (the host keeps what it knew: a
    /// busy Redis must not turn on publishing for every game, and a
    /// watcher elsewhere that was missed is found at the next read).
    pub async fn audience(&self, game: Uuid) -> Option<Audience> {
        let key = self.inner.redis.key(&names::watchers(game));
        let mut connection = self.inner.redis.connection();
        let read = connection.hgetall::<_, HashMap<String, u32>>(key);
        match tokio::time::timeout(PUBLISH_TIMEOUT, read).await {
            Ok(Ok(counts)) => Some(Audience {
                watchers: counts.values().sum(),
                elsewhere: counts
                    .iter()
                    .any(|(instance, count)| *count > 0 && *instance != self.inner.instance),
            }),
            _ => None,
        }
    }

    /// Publishes `message` on a game's channel, routed as `route`; watcher
    /// counts go to the host's channel as well.
    pub async fn publish(&self, game: Uuid, route: Route, message: &str) {
        let text = GameBus::encode_parts(route, message);
        for channel in route.channels(game) {
            self.inner.pubsub.publish(&channel, text.clone()).await;
        }
    }

    /// Wakes the rating service's workers.
    pub async fn wake_ratings(&self, game: Uuid) {
        self.inner
            .pubsub
            .publish(names::RATINGS_CHANNEL, game.to_string())
            .await;
    }

    /// Records which seats have a player connected, for watchers that
    /// join on other instances.
    /// The write of who is connected to `game`, with the key that routes
    /// it: the host sends it in one batch with its lobby marks.
    pub(crate) fn presence_write(&self, game: Uuid, connected: [bool; 2]) -> (String, redis::Cmd) {
        let key = self.inner.redis.key(&names::presence(game));
        let value = format!("{}{}", u8::from(connected[0]), u8::from(connected[1]));
        let write = redis::Cmd::set_ex(&key, value, SHARED_STATE_TTL_SECS as u64);
        (key, write)
    }

    /// Which seats have a player connected, as last recorded.
    pub async fn presence(&self, game: Uuid) -> [bool; 2] {
        let key = self.inner.redis.key(&names::presence(game));
        let mut connection = self.inner.redis.connection();
        let read = connection.get::<_, Option<String>>(key);
        match tokio::time::timeout(PUBLISH_TIMEOUT, read).await {
            Ok(Ok(Some(value))) => [value.starts_with('1'), value.ends_with('1')],
            _ => [false, false],
        }
    }

    /// Watchers of a game across every instance.
    pub async fn watchers(&self, game: Uuid) -> u32 {
        let key = self.inner.redis.key(&names::watchers(game));
        let mut connection = self.inner.redis.connection();
        let read = connection.hvals::<_, Vec<u32>>(key);
        match tokio::time::timeout(PUBLISH_TIMEOUT, read).await {
            Ok(Ok(counts)) => counts.iter().sum(),
            _ => 0,
        }
    }

    /// Watchers of each of `games`, in one round trip (the live lists).
    pub async fn watchers_of(&self, games: &[Uuid]) -> Vec<u32> {
        if games.is_empty() {
            return Vec::new();
        }
        let commands = games
            .iter()
            .map(|game| {
                let key = self.inner.redis.key(&names::watchers(*game));
                let mut command = redis::cmd("HVALS");
                command.arg(&key);
                (key, command)
            })
            .collect();
        let read = self.inner.redis.batch::<Vec<u32>>(commands);
        match tokio::time::timeout(PUBLISH_TIMEOUT, read).await {
            Ok(Ok(counts)) if counts.len() == games.len() => {
                counts.iter().map(|counts| counts.iter().sum()).collect()
            }
            _ => vec![0; games.len()],
        }
    }

    /// A watcher joined (`delta` 1) or left (-1) on this instance; the new
    /// total reaches everyone shortly, in one message.
    pub fn watcher_changed(&self, game: Uuid, delta: i32) {
        let due = {
            let mut watching = self
                .inner
                .watching
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            let entry = watching.entry(game).or_insert((0, false));
            entry.0 = entry.0.saturating_add_signed(delta);
            !std::mem::replace(&mut entry.1, true)
        };
        if due {
            let hub = self.clone();
            tokio::spawn(async move {
                tokio::time::sleep(WATCHER_COUNT_DELAY).await;
                hub.publish_watchers(game).await;
            });
        }
    }

    async fn publish_watchers(&self, game: Uuid) {
        let local = {
            let mut watching = self
                .inner
                .watching
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            let Some(entry) = watching.get_mut(&game) else {
                return;
            };
            entry.1 = false;
            let local = entry.0;
            if local == 0 {
                watching.remove(&game);
            }
            local
        };
        let key = self.inner.redis.key(&names::watchers(game));
        let mut connection = self.inner.redis.connection();
        let mut pipe = redis::pipe();
        pipe.hset(&key, &self.inner.instance, local)
            .ignore()
            .expire(&key, SHARED_STATE_TTL_SECS)
            .ignore()
            .hvals(&key);
        let write = pipe.query_async::<(Vec<u32>,)>(&mut connection);
        let Ok(Ok((counts,))) = tokio::time::timeout(PUBLISH_TIMEOUT, write).await else {
            // The game's host learns from this count whether to publish
            // its events at all (`audience`): try again until Redis takes
            // it (the host also reads the counts now and then).
            tracing::warn!(%game, "recording the watcher count failed; retrying");
            let hub = self.clone();
            tokio::spawn(async move {
                tokio::time::sleep(WATCHER_COUNT_RETRY).await;
                hub.watcher_changed(game, 0);
            });
            return;
        };
        let count = counts.iter().sum();
        let message = serde_json::to_string(&mancala_proto::ServerMessage::Watchers { count })
            .unwrap_or_default();
        self.publish(game, Route::Watchers { count }, &message)
            .await;
    }
}

#[cfg(test)]
mod tests {
    use mancala_platform::testing::TestStores;
    use tokio::sync::broadcast::error::TryRecvError;

    use super::*;

    /// The next message on `subscription` within a second, if any.
    async fn next(subscription: &mut Subscription) -> Option<String> {
        tokio::time::timeout(Duration::from_secs(1), subscription.receiver.recv())
            .await
            .ok()
            .and_then(Result::ok)
            .map(|text| text.to_string())
    }

    #[tokio::test]
    async fn the_host_hears_counts_and_ratings_but_not_its_own_events() {
        let stores = TestStores::new().await.unwrap();
        let hub = Hub::start(stores.redis.clone(), "test".into());
        let game = Uuid::now_v7();
        let mut host = hub.subscribe_host(game).await;
        let mut watcher = hub.subscribe(game).await;
        // The pub/sub connection subscribes in the background: wait until
        // a message gets through before counting what does not.
        let mut heard = None;
        for _ in 0..50 {
            hub.publish(game, Route::Watchers { count: 1 }, "{}").await;
            heard = next(&mut host).await;
            if heard.is_some() {
                break;
            }
        }
        assert_eq!(heard.as_deref(), Some("watchers 1\n{}"));
        while let Ok(Some(_)) =
            tokio::time::timeout(Duration::from_millis(200), next(&mut watcher)).await
        {}
        hub.publish(game, Route::Event { version: 7 }, "moved")
            .await;
        hub.publish(game, Route::Notice, "presence").await;
        hub.publish(game, Route::RatingChange, "rating").await;
        assert_eq!(next(&mut watcher).await.as_deref(), Some("event 7\nmoved"));
        assert_eq!(
            next(&mut watcher).await.as_deref(),
            Some("notice\npresence")
        );
        assert_eq!(
            next(&mut watcher).await.as_deref(),
            Some("rating_change\nrating")
        );
        assert_eq!(
            next(&mut host).await.as_deref(),
            Some("rating_change\nrating")
        );
        assert!(matches!(host.receiver.try_recv(), Err(TryRecvError::Empty)));
        drop((host, watcher));
        stores.cleanup().await.unwrap();
    }
}
