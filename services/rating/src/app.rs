//! Assembling the service: workers, the leaderboard rebuild, routes.

use std::sync::Arc;
use std::time::Duration;

use actix_web::web;
use mancala_platform::pubsub::PubSub;
use mancala_platform::{
    Authenticator, Bound, Clock, Readiness, Redis, Revocations, Settings, StartError,
    connect_stores, serve,
};
use sqlx::PgPool;

use crate::config::RatingSettings;
use crate::context::Context;
use crate::leaderboard;
use crate::routes;

/// How often the boards are rebuilt from Postgres (eligibility lapses
/// with time, not only with games).
const REBUILD_EVERY: Duration = Duration::from_secs(3600);

/// The rating service's state.
#[derive(Clone)]
pub struct RatingService {
    rater: Context,
    authenticator: Authenticator,
}

impl RatingService {
    pub fn new(
        postgres: PgPool,
        redis: Redis,
        settings: &Settings,
        rating_settings: RatingSettings,
        clock: Clock,
        revocations: Revocations,
    ) -> Result<RatingService, StartError> {
        let verifier = mancala_platform::token_verifier(settings)?;
        let authenticator = Authenticator::new(verifier, clock.clone(), revocations);
        let reads = mancala_platform::read_pool(settings.database_read_url.as_ref(), &postgres, 8);
        let rater = Context {
            postgres,
            reads,
            pubsub: PubSub::start(redis.clone()),
            redis,
            clock: clock.clone(),
            settings: Arc::new(rating_settings),
        };
        Ok(RatingService {
            rater,
            authenticator,
        })
    }

    pub fn rater(&self) -> &Context {
        &self.rater
    }

    /// Rebuilds the boards now and hourly, and starts the workers.
    pub fn start_background(&self) {
        let rater = self.rater.clone();
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(REBUILD_EVERY);
            loop {
                ticks.tick().await;
                match leaderboard::rebuild(&rater).await {
                    Ok(ranked) => tracing::info!(ranked, "leaderboards rebuilt"),
                    Err(error) => tracing::warn!(%error, "rebuilding leaderboards"),
                }
            }
        });
        self.rater
            .spawn_workers(usize::from(self.rater.settings.workers));
    }

    pub fn configure(&self, config: &mut web::ServiceConfig) {
        config
            .app_data(web::Data::new(self.rater.clone()))
            .app_data(web::Data::new(self.authenticator.clone()))
            .configure(routes::configure);
    }
}

/// The rating binary.
pub struct Application {
    bound: Bound,
    service: RatingService,
}

impl Application {
    pub async fn build(
        settings: Settings,
        rating_settings: RatingSettings,
        clock: Clock,
    ) -> Result<Application, StartError> {
        let (postgres, redis) = connect_stores(&settings, 16).await?;
        let service = RatingService::new(
            postgres.clone(),
            redis.clone(),
            &settings,
            rating_settings,
            clock.clone(),
            Revocations::followed(redis.clone(), clock),
        )?;
        service.start_background();
        let routes = service.clone();
        let bound = serve(
            settings.bind,
            Readiness { postgres, redis },
            settings.http,
            move |config| {
                routes.configure(config);
            },
        )?;
        Ok(Application { bound, service })
    }

    pub fn service(&self) -> &RatingService {
        &self.service
    }
}

impl mancala_platform::binary::Service for Application {
    fn port(&self) -> u16 {
        self.bound.address.port()
    }

    async fn run_until_stopped(self) -> std::io::Result<()> {
        self.bound.run_until_signal(|| async {}).await
    }
}
