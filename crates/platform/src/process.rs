//! What the services running in one process share: the stores, one clock,
//! one reading of the process's load (admission control), one view of the
//! signed-out sessions. The arena runs three services over one of each; a
//! service alone makes its own. [`start_process`] is the one start-up every
//! binary runs.

use sqlx::PgPool;

use crate::admission::Admission;
use crate::clock::Clock;
use crate::config::Settings;
use crate::kv::Redis;
use crate::open_sockets::{AnonymousSockets, raise_open_files_limit};
use crate::revocation::Revocations;
use crate::server::StartError;
use crate::stores::{MIGRATOR, connect_postgres};

#[derive(Clone)]
pub struct ProcessContext {
    pub clock: Clock,
    pub admission: Admission,
    /// Shared, so that a sign-out taken by one service is refused by the
    /// others in the process at once rather than at their next follow.
    pub revocations: Revocations,
    /// The process's anonymous sockets, over every service in it (they
    /// share its open-files table).
    pub anonymous_sockets: AnonymousSockets,
}

/// A process's stores, connected (Postgres migrated), and its context over
/// them.
pub struct Started {
    pub postgres: PgPool,
    pub redis: Redis,
    pub process: ProcessContext,
}

/// Connects Postgres (`connections` at most in the shared pool) and runs
/// the migrations, and connects Redis: what every service binary does
/// first.
pub async fn connect_stores(
    settings: &Settings,
    connections: u32,
) -> Result<(PgPool, Redis), StartError> {
    let postgres = connect_postgres(&settings.database_url, connections).await?;
    MIGRATOR.run(&postgres).await?;
    let redis = Redis::connect_as(
        settings.redis_mode,
        &settings.redis_url,
        &settings.redis_prefix,
    )
    .await?;
    Ok((postgres, redis))
}

/// [`connect_stores`], then admission control and the revocation follower
/// over them: the start of a process that serves players' requests.
pub async fn start_process(
    settings: &Settings,
    connections: u32,
    clock: Clock,
) -> Result<Started, StartError> {
    let open_files = raise_open_files_limit();
    // The thread that starts the process runs its shared tasks (the
    // writer, the followers) for as long as it lives.
    crate::telemetry::watch_runtime_lag();
    let (postgres, redis) = connect_stores(settings, connections).await?;
    let process = ProcessContext {
        anonymous_sockets: AnonymousSockets::new(settings.anonymous_sockets, open_files),
        admission: Admission::start(
            settings.admission,
            redis.clone(),
            postgres.clone(),
            clock.clone(),
        ),
        revocations: Revocations::followed(redis.clone(), clock.clone()),
        clock,
    };
    Ok(Started {
        postgres,
        redis,
        process,
    })
}
