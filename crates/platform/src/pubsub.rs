//! Messages across instances through Redis pub/sub, fanned out locally.
//!
//! One pub/sub connection per instance carries every subscription. A
//! reader task hands each message to a local broadcast channel per Redis
//! channel, and reconnects (resubscribing) when Redis goes away; users
//! that need every message notice gaps themselves (versions) and catch up
//! from Postgres.
//!
//! Publishing never waits for Redis: a publish joins the instance's outbox,
//! and one task sends whatever queued meanwhile as one pipeline (a write
//! and a round trip for many messages), in order.
//!
//! On a Redis Cluster the channels are sharded (`SSUBSCRIBE`, `SPUBLISH`):
//! a channel lives on the shard of its hash tag (a game's channels on its
//! game's shard), so a message goes to one shard instead of every node, and
//! the outbox goes out as one pipeline per shard.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytestring::ByteString;
use futures_util::StreamExt;
use redis::aio::PubSubSink;
use redis::cluster_async::ClusterConnection;
use tokio::sync::broadcast;

use crate::stores::Redis;

/// Messages buffered per channel for a slow local reader before it lags.
const CHANNEL_CAPACITY: usize = 256;
/// How long a pipeline of publishes may take before it is given up: Redis
/// is down, and the instance goes on.
const PUBLISH_TIMEOUT: Duration = Duration::from_millis(250);
/// After a cluster node's connection drops, when to subscribe everything
/// again on a new connection: by then its shard has been failed over to a
/// replica (the cluster's node timeout and an election) or the node is
/// back; a subscription that cannot be made yet is tried again shortly.
const RESUBSCRIBE_AFTER: Duration = Duration::from_millis(2500);
/// How long one subscription may take before the connection is given up
/// and made again (a shard with no primary yet).
const SUBSCRIBE_TIMEOUT: Duration = Duration::from_secs(1);
/// The most publishes one pipeline carries.
const PUBLISH_BATCH: usize = 256;
/// Publishes waiting for the pipeline; beyond it (Redis far behind) new
/// ones are dropped, never the caller held up. Receivers notice the gap
/// by version and catch up.
const OUTBOX_CAPACITY: usize = 8192;

/// This instance's end of the channels; cheap to clone.
#[derive(Clone)]
pub struct PubSub {
    inner: Arc<Inner>,
}

struct Inner {
    redis: Redis,
    outbox: tokio::sync::mpsc::Sender<(String, String)>,
    channels: Mutex<HashMap<String, broadcast::Sender<ByteString>>>,
    sink: tokio::sync::Mutex<Option<Sink>>,
    /// Bumped whenever messages may have been lost while subscriptions
    /// were down (see [`PubSub::gaps`]).
    gaps: tokio::sync::watch::Sender<u64>,
}

/// Where subscriptions are made: one server's pub/sub connection, or a
/// cluster connection whose sharded messages come back as pushes.
enum Sink {
    Single(PubSubSink),
    Cluster(ClusterConnection),
}

impl Sink {
    async fn subscribe(&mut self, channel: &str) -> redis::RedisResult<()> {
        match self {
            Sink::Single(sink) => sink.subscribe(channel).await,
            Sink::Cluster(connection) => connection.ssubscribe(channel).await,
        }
    }

    async fn unsubscribe(&mut self, channel: &str) -> redis::RedisResult<()> {
        match self {
            Sink::Single(sink) => sink.unsubscribe(channel).await,
            Sink::Cluster(connection) => connection.sunsubscribe(channel).await,
        }
    }
}

/// A subscription to one channel; unsubscribes when the last one for the
/// channel is dropped.
pub struct Subscription {
    pub receiver: broadcast::Receiver<ByteString>,
    channel: String,
    pubsub: PubSub,
}

impl Drop for Subscription {
    fn drop(&mut self) {
        let mut channels = self.pubsub.channels();
        let last = channels
            .get(&self.channel)
            .is_some_and(|sender| sender.receiver_count() <= 1);
        if last {
            channels.remove(&self.channel);
            // Dropped outside a runtime (at shutdown): the connection
            // goes with it, so there is nothing to unsubscribe.
            let Ok(runtime) = tokio::runtime::Handle::try_current() else {
                return;
            };
            let pubsub = self.pubsub.clone();
            let channel = self.channel.clone();
            runtime.spawn(async move {
                if let Some(sink) = pubsub.inner.sink.lock().await.as_mut() {
                    let _ = sink.unsubscribe(&channel).await;
                }
            });
        }
    }
}

impl PubSub {
    /// Starts the reader task.
    pub fn start(redis: Redis) -> PubSub {
        let (outbox, pending) = tokio::sync::mpsc::channel(OUTBOX_CAPACITY);
        tokio::spawn(publish_forever(redis.clone(), pending));
        let pubsub = PubSub {
            inner: Arc::new(Inner {
                redis,
                outbox,
                channels: Mutex::new(HashMap::new()),
                sink: tokio::sync::Mutex::new(None),
                gaps: tokio::sync::watch::Sender::new(0),
            }),
        };
        let reader = pubsub.clone();
        tokio::spawn(async move { reader.read_forever().await });
        pubsub
    }

    fn channels(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<String, broadcast::Sender<ByteString>>> {
        self.inner
            .channels
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Listens to channel `name` (under the Redis key prefix).
    pub async fn subscribe(&self, name: &str) -> Subscription {
        let channel = self.inner.redis.key(name);
        let (receiver, new) = {
            let mut channels = self.channels();
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
            pubsub: self.clone(),
        }
    }

    /// Changes whenever messages on any channel may have been lost: the
    /// pub/sub connection came back, or (on a cluster) a node's connection
    /// dropped, after which its shard is subscribed again elsewhere. A
    /// listener that needs every message catches up from the system of
    /// record then: a later message would show it a gap, but a channel
    /// that stays quiet (a game that ended meanwhile) never would.
    pub fn gaps(&self) -> tokio::sync::watch::Receiver<u64> {
        self.inner.gaps.subscribe()
    }

    fn tell_of_a_gap(&self) {
        self.inner.gaps.send_modify(|generation| *generation += 1);
    }

    /// Publishes on channel `name`, after what this instance published
    /// before; returns at once (see the module's note). Takes the text by
    /// value: it is queued as it is, not copied.
    pub async fn publish(&self, name: &str, text: impl Into<String>) {
        let channel = self.inner.redis.key(name);
        if self.inner.outbox.try_send((channel, text.into())).is_err() {
            metrics::counter!("pubsub_dropped_total").increment(1);
            tracing::warn!(name, "publishing: the outbox is full (Redis far behind)");
        }
    }

    /// Hands `text` to this process's listeners of channel `name`, as if
    /// it had come back from Redis, without Redis: for a message nobody
    /// elsewhere listens to.
    pub fn publish_here(&self, name: &str, text: impl Into<String>) {
        self.deliver(&self.inner.redis.key(name), text.into());
    }

    async fn read_forever(self) {
        loop {
            if self.inner.redis.is_cluster() {
                self.read_shards().await;
            } else {
                self.read_server().await;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

    /// Makes `sink` the place of subscriptions, subscribed to every channel
    /// listened to now; false (and no sink) if a subscription failed.
    async fn install(&self, mut sink: Sink) -> bool {
        // Holding the sink's lock while resubscribing: a subscription made
        // meanwhile waits, then finds the sink.
        let mut slot = self.inner.sink.lock().await;
        let channels: Vec<String> = self.channels().keys().cloned().collect();
        let mut subscribed = true;
        for channel in channels {
            let made = tokio::time::timeout(SUBSCRIBE_TIMEOUT, sink.subscribe(&channel)).await;
            subscribed &= matches!(made, Ok(Ok(())));
            if !subscribed {
                break;
            }
        }
        if subscribed {
            *slot = Some(sink);
        }
        subscribed
    }

    fn deliver(&self, channel: &str, payload: String) {
        if let Some(sender) = self.channels().get(channel) {
            let _ = sender.send(ByteString::from(payload));
        }
    }

    /// One server: a pub/sub connection of its own, until it drops.
    async fn read_server(&self) {
        match self.inner.redis.pubsub().await {
            Ok(Some(pubsub)) => {
                let (sink, mut stream) = pubsub.split();
                if self.install(Sink::Single(sink)).await {
                    // Subscribed again (or for the first time: nobody
                    // listens yet): anything published while the last
                    // connection was down is told of now.
                    self.tell_of_a_gap();
                    while let Some(message) = stream.next().await {
                        let Ok(payload) = message.get_payload::<String>() else {
                            continue;
                        };
                        self.deliver(message.get_channel_name(), payload);
                    }
                    *self.inner.sink.lock().await = None;
                }
                tracing::warn!("redis pub/sub connection lost; reconnecting");
            }
            Ok(None) => {}
            Err(error) => tracing::warn!(%error, "redis pub/sub unavailable; retrying"),
        }
    }

    /// A cluster: sharded subscriptions on a cluster connection, which
    /// follows the slots as they move and subscribes again on the node that
    /// took a shard; its messages come as pushes.
    async fn read_shards(&self) {
        let (push, mut pushes) = tokio::sync::mpsc::unbounded_channel();
        match self.inner.redis.sharded_pubsub(push).await {
            Ok(Some(connection)) => {
                if self.install(Sink::Cluster(connection)).await {
                    // Subscribed again (or for the first time: nobody
                    // listens yet, and a nudge costs nothing).
                    self.tell_of_a_gap();
                    // A node's connection dropped: the cluster connection
                    // would reconnect to that address, but its shard may
                    // have moved to a replica, and the sharded
                    // subscriptions would not follow. So everything is
                    // subscribed again, on a new connection, once the
                    // shard has had the time to fail over.
                    let mut resubscribe: Option<std::pin::Pin<Box<tokio::time::Sleep>>> = None;
                    loop {
                        let push = tokio::select! {
                            push = pushes.recv() => push,
                            () = async {
                                match resubscribe.as_mut() {
                                    Some(sleep) => sleep.await,
                                    None => std::future::pending().await,
                                }
                            } => break,
                        };
                        let Some(push) = push else { break };
                        if push.kind == redis::PushKind::Disconnection {
                            resubscribe.get_or_insert_with(|| {
                                Box::pin(tokio::time::sleep(RESUBSCRIBE_AFTER))
                            });
                            continue;
                        }
                        if push.kind != redis::PushKind::SMessage {
                            continue;
                        }
                        let mut data = push.data.into_iter();
                        let (Some(channel), Some(payload)) = (data.next(), data.next()) else {
                            continue;
                        };
                        let (Ok(channel), Ok(payload)) = (
                            redis::from_redis_value::<String>(channel),
                            redis::from_redis_value::<String>(payload),
                        ) else {
                            continue;
                        };
                        self.deliver(&channel, payload);
                    }
                    *self.inner.sink.lock().await = None;
                }
                tracing::warn!("redis sharded pub/sub connection lost; reconnecting");
            }
            Ok(None) => {}
            Err(error) => tracing::warn!(%error, "redis sharded pub/sub unavailable; retrying"),
        }
    }
}

/// Sends the outbox: whatever queued while the last pipeline was out goes
/// as the next one.
async fn publish_forever(redis: Redis, mut pending: tokio::sync::mpsc::Receiver<(String, String)>) {
    let mut batch = Vec::with_capacity(PUBLISH_BATCH);
    while pending.recv_many(&mut batch, PUBLISH_BATCH).await > 0 {
        metrics::histogram!("pubsub_publish_batch_size").record(batch.len() as f64);
        let sharded = redis.is_cluster();
        let commands: Vec<(String, redis::Cmd)> = batch
            .drain(..)
            .map(|(channel, text)| {
                let mut command = redis::cmd(if sharded { "SPUBLISH" } else { "PUBLISH" });
                command.arg(&channel).arg(text);
                (channel, command)
            })
            .collect();
        match tokio::time::timeout(PUBLISH_TIMEOUT, redis.batch::<redis::Value>(commands)).await {
            Ok(Ok(_)) => {}
            Ok(Err(error)) => tracing::warn!(%error, "publishing"),
            Err(_) => tracing::warn!("publishing timed out"),
        }
    }
}
