//! Game events across instances, through Redis pub/sub: the host of a game
//! publishes each event on the game's channel, and every instance with a
//! watcher (or the host itself, for watcher counts) subscribes.
//!
//! One pub/sub connection per instance carries every subscription. A
//! reader task fans each message out to a local broadcast channel per game,
//! and reconnects (resubscribing) when Redis goes away; watchers notice the
//! gap by the events' versions and resynchronise from Postgres.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytestring::ByteString;
use futures_util::StreamExt;
use mancala_platform::Redis;
use redis::AsyncCommands;
use redis::aio::PubSubSink;
use tokio::sync::broadcast;
use uuid::Uuid;

/// Messages buffered per game for a slow local reader before it lags.
const CHANNEL_CAPACITY: usize = 256;
/// How long a publish may take before it is given up (Redis is down; the
/// game goes on and remote watchers resynchronise later).
const PUBLISH_TIMEOUT: Duration = Duration::from_millis(250);

/// This instance's end of the event channels; cheap to clone.
#[derive(Clone)]
pub struct Hub {
    inner: Arc<Inner>,
}

struct Inner {
    redis: Redis,
    /// Names this instance's field in the watcher-count hashes.
    instance: String,
    channels: Mutex<HashMap<String, broadcast::Sender<ByteString>>>,
    sink: tokio::sync::Mutex<Option<PubSubSink>>,
    /// This instance's watchers per game, and whether a count is due.
    watching: Mutex<HashMap<Uuid, (u32, bool)>>,
}

/// How long watcher joins and leaves are gathered before one count goes
/// out: 5,000 watchers arriving must not mean 5,000 broadcasts to each.
const WATCHER_COUNT_DELAY: Duration = Duration::from_millis(250);
/// Presence and watcher counts expire if no host refreshes them.
const SHARED_STATE_TTL_SECS: i64 = 24 * 3600;

/// A subscription to one game's channel; unsubscribes when the last one
/// for the game is dropped.
pub struct Subscription {
    pub receiver: broadcast::Receiver<ByteString>,
    channel: String,
    hub: Hub,
}

impl Drop for Subscription {
    fn drop(&mut self) {
        let mut channels = self
            .hub
            .inner
            .channels
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let last = channels
            .get(&self.channel)
            .is_some_and(|sender| sender.receiver_count() <= 1);
        if last {
            channels.remove(&self.channel);
            let hub = self.hub.clone();
            let channel = self.channel.clone();
            tokio::spawn(async move {
                if let Some(sink) = hub.inner.sink.lock().await.as_mut() {
                    let _ = sink.unsubscribe(&channel).await;
                }
            });
        }
    }
}

impl Hub {
    /// Starts the reader task.
    pub fn start(redis: Redis, instance: String) -> Hub {
        let hub = Hub {
            inner: Arc::new(Inner {
                redis,
                instance,
                channels: Mutex::new(HashMap::new()),
                sink: tokio::sync::Mutex::new(None),
                watching: Mutex::new(HashMap::new()),
            }),
        };
        let reader = hub.clone();
        tokio::spawn(async move { reader.read_forever().await });
        hub
    }

    fn channel(&self, game: Uuid) -> String {
        self.inner.redis.key(&format!("game:{game}"))
    }

    /// Listens to a game's events.
    pub async fn subscribe(&self, game: Uuid) -> Subscription {
        let channel = self.channel(game);
        let (receiver, new) = {
            let mut channels = self
                .inner
                .channels
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            match channels.get(&channel) {
                Some(sender) => (sender.subscribe(), false),
                None => {
                    let (sender, receiver) = broadcast::channel(CHANNEL_CAPACITY);
                    channels.insert(channel.clone(), sender);
                    (receiver, true)
                }
            }
        };
        if new && let Some(sink) = self.inner.sink.lock().await.as_mut() {
            // On failure the reader's reconnect resubscribes everything.
            let _ = sink.subscribe(&channel).await;
        }
        Subscription {
            receiver,
            channel,
            hub: self.clone(),
        }
    }

    /// Publishes an event on a game's channel; gives up quietly when Redis
    /// does not answer in time.
    pub async fn publish(&self, game: Uuid, text: &str) {
        let mut connection = self.inner.redis.connection();
        let publish = connection.publish::<_, _, ()>(self.channel(game), text);
        match tokio::time::timeout(PUBLISH_TIMEOUT, publish).await {
            Ok(Ok(())) => {}
            Ok(Err(error)) => tracing::warn!(%error, %game, "publishing a game event"),
            Err(_) => tracing::warn!(%game, "publishing a game event timed out"),
        }
    }

    /// Records which seats have a player connected, for watchers that
    /// join on other instances.
    pub async fn set_presence(&self, game: Uuid, connected: [bool; 2]) {
        let key = self.inner.redis.key(&format!("presence:{game}"));
        let value = format!("{}{}", u8::from(connected[0]), u8::from(connected[1]));
        let mut connection = self.inner.redis.connection();
        let write = connection.set_ex::<_, _, ()>(key, value, SHARED_STATE_TTL_SECS as u64);
        if let Ok(Err(error)) = tokio::time::timeout(PUBLISH_TIMEOUT, write).await {
            tracing::warn!(%error, %game, "recording presence");
        }
    }

    /// Which seats have a player connected, as last recorded.
    pub async fn presence(&self, game: Uuid) -> [bool; 2] {
        let key = self.inner.redis.key(&format!("presence:{game}"));
        let mut connection = self.inner.redis.connection();
        let read = connection.get::<_, Option<String>>(key);
        match tokio::time::timeout(PUBLISH_TIMEOUT, read).await {
            Ok(Ok(Some(value))) => [value.starts_with('1'), value.ends_with('1')],
            _ => [false, false],
        }
    }

    /// Watchers of a game across every instance.
    pub async fn watchers(&self, game: Uuid) -> u32 {
        let key = self.inner.redis.key(&format!("watchers:{game}"));
        let mut connection = self.inner.redis.connection();
        let read = connection.hvals::<_, Vec<u32>>(key);
        match tokio::time::timeout(PUBLISH_TIMEOUT, read).await {
            Ok(Ok(counts)) => counts.iter().sum(),
            _ => 0,
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
        let key = self.inner.redis.key(&format!("watchers:{game}"));
        let mut connection = self.inner.redis.connection();
        let mut pipe = redis::pipe();
        pipe.hset(&key, &self.inner.instance, local)
            .ignore()
            .expire(&key, SHARED_STATE_TTL_SECS)
            .ignore();
        let write = pipe.query_async::<()>(&mut connection);
        if !matches!(
            tokio::time::timeout(PUBLISH_TIMEOUT, write).await,
            Ok(Ok(()))
        ) {
            tracing::warn!(%game, "recording the watcher count failed");
            return;
        }
        let count = self.watchers(game).await;
        let text = serde_json::to_string(&mancala_proto::ServerMessage::Watchers { count })
            .unwrap_or_default();
        self.publish(game, &text).await;
    }

    async fn read_forever(self) {
        loop {
            match self.inner.redis.pubsub().await {
                Ok(pubsub) => {
                    let (mut sink, mut stream) = pubsub.split();
                    // Holding the sink's lock while resubscribing: a
                    // subscription made meanwhile waits, then finds the sink.
                    let mut slot = self.inner.sink.lock().await;
                    let channels: Vec<String> = self
                        .inner
                        .channels
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .keys()
                        .cloned()
                        .collect();
                    let mut subscribed = true;
                    for channel in channels {
                        subscribed &= sink.subscribe(&channel).await.is_ok();
                    }
                    if subscribed {
                        *slot = Some(sink);
                    }
                    drop(slot);
                    if subscribed {
                        while let Some(message) = stream.next().await {
                            let Ok(payload) = message.get_payload::<String>() else {
                                continue;
                            };
                            let channels = self
                                .inner
                                .channels
                                .lock()
                                .unwrap_or_else(|e| e.into_inner());
                            if let Some(sender) = channels.get(message.get_channel_name()) {
                                let _ = sender.send(ByteString::from(payload));
                            }
                        }
                        *self.inner.sink.lock().await = None;
                    }
                    tracing::warn!("redis pub/sub connection lost; reconnecting");
                }
                Err(error) => tracing::warn!(%error, "redis pub/sub unavailable; retrying"),
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }
}
