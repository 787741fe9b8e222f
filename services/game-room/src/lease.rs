//! Host leases: a game is hosted by at most one instance at a time, under
//! a Redis lease its host renews (the Postgres epoch fences a host that
//! lost it). Leases are renewed on a connection of their own.

use std::time::Duration;

use mancala_platform::Redis;
use uuid::Uuid;

/// The longest a game's host waits for Redis inline, in the loop that
/// plays its moves (a lease renewal, the lobby's marks): a shard failing
/// over answers in seconds, and the moves, which need only Postgres, must
/// not wait for it. Past it the host goes on as if Redis were away.
pub(crate) const HOST_WAITS_FOR_REDIS: Duration = Duration::from_millis(500);

/// Why a lease was not taken.
#[derive(Debug, thiserror::Error)]
pub enum NotLeased {
    /// Another instance holds it, reachable at this URL if it said.
    #[error("hosted by another instance ({0:?})")]
    Elsewhere(Option<String>),
    #[error("redis: {0}")]
    Redis(#[from] redis::RedisError),
}

/// A host lease on one game.
pub struct Lease {
    key: String,
    owner: String,
    millis: u64,
    /// When it was taken (before asking Redis, so never late): the first
    /// renewal is timed from here.
    taken: tokio::time::Instant,
}

/// The connection game hosts renew their leases on: one of its own, made
/// on first use, so that a burst of other Redis traffic (sign-ins, lobby
/// counts, presence) cannot hold a renewal up until the lease lapses and
/// a live game moves. Until it can be made, the shared one serves.
#[derive(Clone)]
pub struct LeaseConnection {
    shared: Redis,
    own: std::sync::Arc<tokio::sync::OnceCell<Redis>>,
}

impl LeaseConnection {
    pub fn new(shared: Redis) -> LeaseConnection {
        LeaseConnection {
            shared,
            own: Default::default(),
        }
    }

    pub async fn redis(&self) -> &Redis {
        let made = self
            .own
            .get_or_try_init(|| async { self.shared.dedicated().await })
            .await;
        made.unwrap_or(&self.shared)
    }
}

/// Renews the lease while this instance holds it, and takes it back when
/// nobody does (Redis restarted empty): the host keeps its game rather
/// than closing every socket. Were another instance to have hosted the
/// game meanwhile, the epoch fence in Postgres refuses this one's writes.
const RENEW: &str = r#"
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then
    return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
if not holder then
    redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
    return 1
end
return 0"#;

/// Releases the lease only if this instance holds it.
const RELEASE: &str = r#"
if redis.call('GET', KEYS[1]) == ARGV[1] then
    return redis.call('DEL', KEYS[1])
end
return 0"#;

impl Lease {
    /// Takes the lease on `game`, or names its holder. A lease this instance
    /// already holds (a task that is just unloading) is taken over.
    pub async fn acquire(
        redis: &Redis,
        game: Uuid,
        owner: &str,
        millis: u64,
    ) -> Result<Lease, NotLeased> {
        let key = redis.key(&mancala_proto::bus::names::game_lease(game));
        let asked = tokio::time::Instant::now();
        let mut connection = redis.connection();
        let taken: Option<String> = redis::cmd("SET")
            .arg(&key)
            .arg(owner)
            .arg("NX")
            .arg("PX")
            .arg(millis)
            .query_async(&mut connection)
            .await?;
        let lease = Lease {
            key,
            owner: owner.to_owned(),
            millis,
            taken: asked,
        };
        if taken.is_some() {
            return Ok(lease);
        }
        let holder: Option<String> = redis::cmd("GET")
            .arg(&lease.key)
            .query_async(&mut connection)
            .await?;
        match holder {
            Some(holder) if holder == owner => {
                lease.renew(redis).await;
                Ok(lease)
            }
            Some(holder) => {
                let url: Option<String> = redis::cmd("HGET")
                    .arg(redis.key(mancala_proto::bus::names::INSTANCES))
                    .arg(&holder)
                    .query_async(&mut connection)
                    .await
                    .unwrap_or(None);
                Err(NotLeased::Elsewhere(url))
            }
            // Expired between the two calls: try once more.
            None => Box::pin(Lease::acquire(redis, game, owner, millis)).await,
        }
    }

    /// Extends the lease; false only when another instance holds it now. A
    /// Redis outage keeps the game hosted (nobody else can take it then),
    /// and a renewal that has not answered within [`HOST_WAITS_FOR_REDIS`]
    /// counts as one: the host's loop, which plays the moves, must not wait
    /// for a shard that is failing over.
    /// When it was taken (or renewed on taking).
    pub fn taken(&self) -> tokio::time::Instant {
        self.taken
    }

    pub async fn renew(&self, redis: &Redis) -> bool {
        let mut connection = redis.connection();
        let script = redis::Script::new(RENEW);
        let mut invocation = script.key(&self.key);
        invocation.arg(&self.owner).arg(self.millis);
        let renewed = tokio::time::timeout(
            HOST_WAITS_FOR_REDIS,
            invocation.invoke_async::<i64>(&mut connection),
        )
        .await;
        match renewed {
            Ok(Ok(0)) => false,
            Ok(Ok(_)) => true,
            Ok(Err(error)) => {
                tracing::warn!(%error, "renewing a game lease");
                true
            }
            Err(_) => {
                tracing::warn!("renewing a game lease: Redis did not answer in time");
                true
            }
        }
    }

    /// Whether any instance hosts `game` now; `None` when Redis cannot say.
    pub async fn held(redis: &Redis, game: Uuid) -> Option<bool> {
        let key = redis.key(&mancala_proto::bus::names::game_lease(game));
        redis::cmd("EXISTS")
            .arg(&key)
            .query_async::<bool>(&mut redis.connection())
            .await
            .ok()
    }

    pub async fn release(&self, redis: &Redis) {
        let mut connection = redis.connection();
        let _: Result<i64, _> = redis::Script::new(RELEASE)
            .key(&self.key)
            .arg(&self.owner)
            .invoke_async(&mut connection)
            .await;
    }
}
