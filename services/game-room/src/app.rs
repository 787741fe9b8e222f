//! Assembling the service: state from the stores and settings, routes, and
//! the binary's server. The one-process launcher mounts the same
//! [`GameRoom::configure`] beside the other services.

use std::sync::Arc;

use actix_web::web;
use mancala_platform::{
    Authenticator, Bound, Clock, ProcessContext, Readiness, Redis, Settings, StartError, Started,
    serve_on, start_process,
};
use sqlx::PgPool;

use crate::ai::{AiPool, PoolSettings};
use crate::config::GameRoomSettings;
use crate::context::Context;
use crate::game::HostedGames;
use crate::hub::Hub;
use crate::routes::{self, InternalToken};
use crate::store::GroupCommit;
use crate::ws::snapshots::Snapshots;

/// The game-room service's state, shared by its handlers.
#[derive(Clone)]
pub struct GameRoom {
    hosted: HostedGames,
    authenticator: Authenticator,
    internal_token: InternalToken,
    /// Watchers' snapshots, shared by every watch socket of the process.
    snapshots: Snapshots,
}

impl GameRoom {
    /// The service over connected stores. It verifies access tokens with
    /// `APP_JWT_PUBLIC_KEY`, or, when only the private key is configured
    /// (one process running every service), with the key derived from it.
    pub fn new(
        postgres: PgPool,
        redis: Redis,
        settings: &Settings,
        mut room_settings: GameRoomSettings,
        process: ProcessContext,
    ) -> Result<GameRoom, StartError> {
        let ProcessContext {
            clock,
            admission,
            revocations,
            anonymous_sockets,
        } = process;
        let verifier = mancala_platform::token_verifier(settings)?;
        let authenticator = Authenticator::new(verifier, clock.clone(), revocations);
        let hub = Hub::start(redis.clone(), room_settings.instance.id().to_owned());
        let instance_url = room_settings.instance_url.clone();
        let internal_token = InternalToken(room_settings.instance.internal_token());
        let ai = AiPool::new(PoolSettings {
            workers: usize::from(room_settings.ai_workers),
            deadline: room_settings.ai_deadline,
            queue_wait: room_settings.ai_queue_wait,
            idle_bytes: room_settings.ai_idle_bytes,
            endgame_stones: room_settings.ai_endgame_stones,
            endgame_file: room_settings.ai_endgame_file.clone(),
            solver_table_bytes: room_settings.ai_solver_table_bytes,
            analysis_deadline: room_settings.analysis_deadline,
            idle_priority: room_settings.ai_priority == crate::config::AiPriority::Idle,
            yield_slice: crate::ai::YIELD_SLICE,
        });
        keep_analyses(&ai, postgres.clone(), room_settings.analysis_kept_bytes);
        // The games in progress write through connections of their own, so
        // a burst of other work (sign-ins, lists, loads) that empties the
        // shared pool cannot make a move wait for one.
        let postgres_for_writes = writes_pool(&settings.database_url, &postgres);
        crate::store::keep_partitions(postgres.clone());
        let write_batch = usize::from(room_settings.write_batch);
        let reads = mancala_platform::read_pool(settings.database_read_url.as_ref(), &postgres, 16);
        let deps = Context {
            postgres,
            reads,
            leases: crate::lease::LeaseConnection::new(redis.clone()),
            redis,
            hub,
            clock: clock.clone(),
            settings: Arc::new(room_settings),
            ai,
            writer: GroupCommit::start(postgres_for_writes, write_batch),
            admission,
            anonymous_sockets,
        };
        // Present from the start, so that a scrape says 0 rather than nothing.
        metrics::counter!("game_leases_lost_total").increment(0);
        let hosted = HostedGames::new(deps);
        hosted.spawn_room_sweeper();
        crate::sentinel::spawn(hosted.deps().clone());
        if let Some(url) = instance_url {
            let hosted = hosted.clone();
            tokio::spawn(async move { hosted.advertise_forever(url).await });
        }
        Ok(GameRoom {
            hosted,
            authenticator,
            internal_token,
            snapshots: Snapshots::default(),
        })
    }

    pub fn hosted(&self) -> &HostedGames {
        &self.hosted
    }

    /// Mounts the service's routes and the state they need.
    pub fn configure(&self, config: &mut web::ServiceConfig) {
        config
            .app_data(web::Data::new(self.hosted.clone()))
            .app_data(web::Data::new(self.authenticator.clone()))
            .app_data(web::Data::new(self.internal_token.clone()))
            .app_data(web::Data::new(self.snapshots.clone()))
            .configure(routes::configure);
    }
}

/// Stores every analysis this instance works out, one at a time, for every
/// instance and every restart after (a failed write is only logged: the
/// analysis is worked out again when next asked).
fn keep_analyses(ai: &AiPool, postgres: PgPool, budget: usize) {
    let (keeper, mut worked) = tokio::sync::mpsc::unbounded_channel();
    ai.analyses().keep_worked_in(keeper);
    tokio::spawn(async move {
        while let Some(analysis) = worked.recv().await {
            if let Err(error) = crate::store::keep_analysis(&postgres, &analysis, budget).await {
                tracing::warn!(%error, game = %analysis.id, "keeping an analysis");
            }
        }
    });
}

/// The group commit's own pool: two flushes in flight, each on two
/// connections, and two to spare while a broken one is replaced. Lazy, so
/// the service starts as before when Postgres is slow to answer. (The URL
/// already served the shared pool; were it refused here, the writes share.)
fn writes_pool(url: &mancala_platform::SecretString, shared: &PgPool) -> PgPool {
    use mancala_platform::ExposeSecret;
    sqlx::postgres::PgPoolOptions::new()
        .max_connections(6)
        .acquire_timeout(std::time::Duration::from_secs(5))
        .connect_lazy(url.expose_secret())
        .unwrap_or_else(|_| shared.clone())
}

/// The game-room binary: stores connected, migrations run, server bound.
pub struct Application {
    bound: Bound,
    service: GameRoom,
}

impl Application {
    pub async fn build(
        settings: Settings,
        mut room_settings: GameRoomSettings,
        clock: Clock,
    ) -> Result<Application, StartError> {
        // Bound first, so the address can be advertised to other instances.
        let listener = std::net::TcpListener::bind(settings.bind)?;
        let address = listener.local_addr()?;
        room_settings.instance.name_after(address);
        room_settings
            .instance_url
            .get_or_insert_with(|| format!("http://{address}"));
        let Started {
            postgres,
            redis,
            process,
        } = start_process(&settings, 32, clock).await?;
        let service = GameRoom::new(
            postgres.clone(),
            redis.clone(),
            &settings,
            room_settings,
            process,
        )?;
        let routes = service.clone();
        let readiness = Readiness { postgres, redis };
        let bound = serve_on(listener, readiness, settings.http, move |config| {
            routes.configure(config);
            config.configure(crate::openapi::configure);
        })?;
        Ok(Application { bound, service })
    }

    pub fn service(&self) -> &GameRoom {
        &self.service
    }

    /// Stops the server: with `drain`, after releasing every hosted game
    /// (as on SIGTERM); without, at once, as if the process died (tests).
    pub fn handle(&self) -> actix_web::dev::ServerHandle {
        self.bound.server.handle()
    }
}

impl mancala_platform::binary::Service for Application {
    fn port(&self) -> u16 {
        self.bound.address.port()
    }

    /// Serves until SIGINT/SIGTERM; then releases every hosted game, so
    /// its players move to another instance at once, and stops.
    async fn run_until_stopped(self) -> std::io::Result<()> {
        let hosted = self.service.hosted().clone();
        self.bound
            .run_until_signal(|| async move { hosted.drain().await })
            .await
    }
}
