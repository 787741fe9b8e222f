//! Redis, one server or a Redis Cluster, behind one handle: every key under
//! a prefix so that deployments and tests can share a server, commands on
//! a reconnecting connection, and what cluster mode asks of callers.
//!
//! In a cluster, a command goes to the primary that owns its key's slot.
//! Keys that one script or one atomic step touches must share a slot: a
//! part of the key in braces, the hash tag, decides the slot alone
//! (`game:{id}:lease` and `game:{id}:watchers` live together). Names are
//! made in `mancala_proto::bus::names` with their tags; a key prefix must
//! hold no braces, or it would be the tag. Pipelines may not cross slots,
//! so commands for many keys go through [`Redis::batch`], which groups them
//! by slot. Pub/sub is sharded (`SPUBLISH`/`SSUBSCRIBE`, Redis 7), so a
//! game's events touch only its own shard.

use std::sync::Arc;
use std::time::Duration;

use redis::aio::{ConnectionLike, ConnectionManager, ConnectionManagerConfig};
use redis::cluster::ClusterClient;
use redis::cluster_async::ClusterConnection;
use redis::{Cmd, FromRedisValue, Pipeline, RedisFuture, RedisResult, Value};
use secrecy::{ExposeSecret, SecretString};

/// How the Redis of `REDIS_URL` is deployed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum RedisMode {
    /// One server (with replicas behind it or not).
    #[default]
    Single,
    /// A Redis Cluster: `REDIS_URL` lists one or more of its nodes,
    /// separated by commas; the rest are found from them.
    Cluster,
}

/// Slots of a Redis Cluster.
const SLOTS: u16 = 16384;

/// The cluster slot of `key`: CRC16 (XMODEM) of its hash tag, or of the
/// whole key when it has none, modulo 16384.
pub fn slot(key: &[u8]) -> u16 {
    let tagged = key
        .iter()
        .position(|&b| b == b'{')
        .and_then(|open| {
            let rest = &key[open + 1..];
            let close = rest.iter().position(|&b| b == b'}')?;
            (close > 0).then(|| &rest[..close])
        })
        .unwrap_or(key);
    crc16::State::<crc16::XMODEM>::calculate(tagged) % SLOTS
}

/// The client's default of 500 ms per response turns a burst on a busy
/// machine (thousands of players signing in at once) into errors; a Redis
/// that is really gone fails the connection instead.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(3);
const RETRIES: usize = 2;

fn manager_config() -> ConnectionManagerConfig {
    ConnectionManagerConfig::new()
        .set_number_of_retries(RETRIES)
        .set_connection_timeout(Some(CONNECT_TIMEOUT))
        .set_response_timeout(Some(RESPONSE_TIMEOUT))
}

/// Where connections come from.
#[derive(Clone)]
enum Origin {
    Single(redis::Client),
    /// The URL too: a subscriber makes a client of its own, with a push
    /// channel.
    Cluster(Box<(ClusterClient, SecretString)>),
}

/// A connection for commands: cheap to clone, shared, reconnecting.
#[derive(Clone)]
pub enum Connection {
    Single(ConnectionManager),
    Cluster(ClusterConnection),
}

impl ConnectionLike for Connection {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Connection::Single(connection) => connection.req_packed_command(cmd),
            Connection::Cluster(connection) => connection.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Connection::Single(connection) => {
                connection.req_packed_commands(pipeline, offset, count)
            }
            Connection::Cluster(connection) => {
                connection.req_packed_commands(pipeline, offset, count)
            }
        }
    }

    fn get_db(&self) -> i64 {
        0
    }
}

/// Redis with every key under a prefix.
#[derive(Clone)]
pub struct Redis {
    connection: Connection,
    origin: Origin,
    prefix: Arc<str>,
}

impl std::fmt::Debug for Redis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redis")
            .field("prefix", &self.prefix)
            .field("cluster", &self.is_cluster())
            .finish_non_exhaustive()
    }
}

/// The nodes a cluster URL lists.
fn nodes(url: &SecretString) -> Vec<String> {
    url.expose_secret()
        .split(',')
        .map(str::trim)
        .filter(|node| !node.is_empty())
        .map(str::to_owned)
        .collect()
}

fn cluster_client(
    url: &SecretString,
    push: Option<tokio::sync::mpsc::UnboundedSender<redis::PushInfo>>,
) -> RedisResult<ClusterClient> {
    let mut builder = redis::cluster::ClusterClientBuilder::new(nodes(url))
        .connection_timeout(CONNECT_TIMEOUT)
        .response_timeout(RESPONSE_TIMEOUT)
        .retries(RETRIES as u32);
    if let Some(push) = push {
        // Sharded subscriptions arrive as RESP3 pushes.
        builder = builder
            .use_protocol(redis::ProtocolVersion::RESP3)
            .push_sender(push);
    }
    builder.build()
}

impl Redis {
    /// Connects to one server, failing within seconds when it does not
    /// answer (later drops reconnect in the background).
    pub async fn connect(url: &SecretString, prefix: &str) -> RedisResult<Redis> {
        Redis::connect_as(RedisMode::Single, url, prefix).await
    }

    /// Connects to one server or to a cluster through the nodes `url` lists.
    pub async fn connect_as(
        mode: RedisMode,
        url: &SecretString,
        prefix: &str,
    ) -> RedisResult<Redis> {
        let (connection, origin) = match mode {
            RedisMode::Single => {
                let client = redis::Client::open(url.expose_secret())?;
                let manager =
                    ConnectionManager::new_with_config(client.clone(), manager_config()).await?;
                (Connection::Single(manager), Origin::Single(client))
            }
            RedisMode::Cluster => {
                let client = cluster_client(url, None)?;
                let connection = client.get_async_connection().await?;
                (
                    Connection::Cluster(connection),
                    Origin::Cluster(Box::new((client, url.clone()))),
                )
            }
        };
        Ok(Redis {
            connection,
            origin,
            prefix: Arc::from(prefix),
        })
    }

    /// Whether this is a Redis Cluster.
    pub fn is_cluster(&self) -> bool {
        matches!(self.origin, Origin::Cluster(..))
    }

    /// The same Redis over a connection of its own, for traffic that must
    /// not queue behind everything else on the shared one (a game host's
    /// lease renewals).
    pub async fn dedicated(&self) -> RedisResult<Redis> {
        let connection = match &self.origin {
            Origin::Single(client) => Connection::Single(
                ConnectionManager::new_with_config(client.clone(), manager_config()).await?,
            ),
            Origin::Cluster(cluster) => {
                Connection::Cluster(cluster.0.get_async_connection().await?)
            }
        };
        Ok(Redis {
            connection,
            origin: self.origin.clone(),
            prefix: self.prefix.clone(),
        })
    }

    /// The full key for `name`.
    pub fn key(&self, name: &str) -> String {
        format!("{}{name}", self.prefix)
    }

    /// A handle for commands; cheap to clone, shares one connection.
    pub fn connection(&self) -> Connection {
        self.connection.clone()
    }

    /// A new pub/sub connection of one server (subscriptions need their
    /// own); `None` for a cluster, whose sharded subscriptions go through
    /// [`Redis::sharded_pubsub`].
    pub async fn pubsub(&self) -> RedisResult<Option<redis::aio::PubSub>> {
        match &self.origin {
            Origin::Single(client) => Ok(Some(client.get_async_pubsub().await?)),
            Origin::Cluster(..) => Ok(None),
        }
    }

    /// A cluster connection whose sharded subscriptions' messages go to
    /// `push`; `None` for one server.
    pub async fn sharded_pubsub(
        &self,
        push: tokio::sync::mpsc::UnboundedSender<redis::PushInfo>,
    ) -> RedisResult<Option<ClusterConnection>> {
        match &self.origin {
            Origin::Single(_) => Ok(None),
            Origin::Cluster(cluster) => Ok(Some(
                cluster_client(&cluster.1, Some(push))?
                    .get_async_connection()
                    .await?,
            )),
        }
    }

    /// Whether the server answers.
    pub async fn ping(&self) -> RedisResult<()> {
        let mut connection = self.connection();
        redis::cmd("PING")
            .query_async::<String>(&mut connection)
            .await
            .map(|_| ())
    }

    /// Runs commands that may name keys of different slots, each with the
    /// key that routes it, and returns their answers in order. One server
    /// takes them as one pipeline; a cluster as one pipeline per slot, sent
    /// together.
    pub async fn batch<T: FromRedisValue>(
        &self,
        commands: Vec<(String, Cmd)>,
    ) -> RedisResult<Vec<T>> {
        let mut connection = self.connection();
        if !self.is_cluster() {
            let mut pipe = redis::pipe();
            for (_, command) in commands {
                pipe.add_command(command);
            }
            return pipe.query_async(&mut connection).await;
        }
        let mut by_slot: std::collections::BTreeMap<u16, (Pipeline, Vec<usize>)> =
            std::collections::BTreeMap::new();
        let count = commands.len();
        for (index, (key, command)) in commands.into_iter().enumerate() {
            let (pipe, indices) = by_slot
                .entry(slot(key.as_bytes()))
                .or_insert_with(|| (redis::pipe(), Vec::new()));
            pipe.add_command(command);
            indices.push(index);
        }
        let answers =
            futures_util::future::try_join_all(by_slot.into_values().map(|(pipe, indices)| {
                let mut connection = connection.clone();
                async move {
                    let values: Vec<Value> = pipe.query_async(&mut connection).await?;
                    Ok::<_, redis::RedisError>(indices.into_iter().zip(values))
                }
            }))
            .await?;
        let mut ordered: Vec<Option<Value>> = vec![None; count];
        for (index, value) in answers.into_iter().flatten() {
            ordered[index] = Some(value);
        }
        ordered
            .into_iter()
            .map(|value| {
                T::from_redis_value(value.unwrap_or(Value::Nil)).map_err(redis::RedisError::from)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hash_tag_decides_the_slot() {
        // The examples of the Redis Cluster specification.
        assert_eq!(slot(b"123456789"), 0x31c3 % SLOTS);
        assert_eq!(slot(b"{user1000}.following"), slot(b"{user1000}.followers"));
        assert_eq!(slot(b"foo{}{bar}"), slot(b"foo{}{bar}"));
        assert_ne!(slot(b"foo{}{bar}"), slot(b"bar"), "an empty tag is no tag");
        assert_eq!(slot(b"foo{{bar}}zap"), slot(b"{bar"));
        assert_eq!(slot(b"foo{bar}{zap}"), slot(b"bar"));
    }
}
