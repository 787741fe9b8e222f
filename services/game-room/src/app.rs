//! Assembling the service: state from the stores and settings, routes, and
//! the binary's server. The one-process launcher mounts the same
//! [`GameRoom::configure`] beside the other services.

use std::sync::Arc;

use actix_web::web;
use mancala_platform::jwt::{TokenSigner, TokenVerifier};
use mancala_platform::{
    Authenticator, Bound, Clock, MIGRATOR, Readiness, Redis, Settings, StartError,
    connect_postgres, serve,
};
use sqlx::PgPool;

use crate::config::RoomSettings;
use crate::game::Rooms;
use crate::game::actor::Deps;
use crate::hub::Hub;
use crate::routes::{self, InternalToken};

/// The game-room service's state, shared by its handlers.
#[derive(Clone)]
pub struct GameRoom {
    rooms: Rooms,
    authenticator: Authenticator,
    internal_token: InternalToken,
}

impl GameRoom {
    /// The service over connected stores. It verifies access tokens with
    /// `APP_JWT_PUBLIC_KEY`, or, when only the private key is configured
    /// (one process running every service), with the key derived from it.
    pub fn new(
        postgres: PgPool,
        redis: Redis,
        settings: &Settings,
        room_settings: RoomSettings,
        clock: Clock,
    ) -> Result<GameRoom, StartError> {
        let public = match (&settings.jwt_public_key, &settings.jwt_private_key) {
            (Some(public), _) => public.clone(),
            (None, Some(seed)) => TokenSigner::from_seed(seed, "", "", 1)?
                .public_key()
                .to_owned(),
            (None, None) => {
                return Err(StartError::Other(
                    "set APP_JWT_PUBLIC_KEY (or APP_JWT_PRIVATE_KEY) to verify players".into(),
                ));
            }
        };
        let verifier = TokenVerifier::from_public_key(
            &public,
            &settings.jwt_issuer,
            &settings.jwt_audience,
            settings.jwt_leeway.as_secs(),
        )?;
        let hub = Hub::start(redis.clone(), room_settings.instance.clone());
        let internal_token = InternalToken(room_settings.internal_token.clone());
        let deps = Deps {
            postgres,
            redis,
            hub,
            clock: clock.clone(),
            settings: Arc::new(room_settings),
        };
        Ok(GameRoom {
            rooms: Rooms::new(deps),
            authenticator: Authenticator::new(verifier, clock),
            internal_token,
        })
    }

    pub fn rooms(&self) -> &Rooms {
        &self.rooms
    }

    /// Mounts the service's routes and the state they need.
    pub fn configure(&self, config: &mut web::ServiceConfig) {
        config
            .app_data(web::Data::new(self.rooms.clone()))
            .app_data(web::Data::new(self.authenticator.clone()))
            .app_data(web::Data::new(self.internal_token.clone()))
            .configure(routes::configure);
    }
}

/// The game-room binary: stores connected, migrations run, server bound.
pub struct Application {
    bound: Bound,
    service: GameRoom,
}

impl Application {
    pub async fn build(
        settings: Settings,
        room_settings: RoomSettings,
        clock: Clock,
    ) -> Result<Application, StartError> {
        let postgres = connect_postgres(&settings.database_url, 32).await?;
        MIGRATOR.run(&postgres).await?;
        let redis = Redis::connect(&settings.redis_url, &settings.redis_prefix).await?;
        let service = GameRoom::new(
            postgres.clone(),
            redis.clone(),
            &settings,
            room_settings,
            clock,
        )?;
        let routes = service.clone();
        let readiness = Readiness { postgres, redis };
        let bound = serve(settings.bind, readiness, move |config| {
            routes.configure(config);
            config.configure(crate::openapi::configure);
        })?;
        Ok(Application { bound, service })
    }

    pub fn port(&self) -> u16 {
        self.bound.address.port()
    }

    pub fn service(&self) -> &GameRoom {
        &self.service
    }

    /// Serves until SIGINT/SIGTERM, finishing requests in flight.
    pub async fn run_until_stopped(self) -> std::io::Result<()> {
        self.bound.server.await
    }
}
