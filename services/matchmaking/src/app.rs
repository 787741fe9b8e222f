//! Assembling the service: its state from the stores and settings, its
//! routes, and the binary's server. The one-process launcher mounts the
//! same [`Matchmaking::configure`] beside the other services.

use std::time::Duration;

use actix_web::http::Method;
use actix_web::web;
use mancala_platform::ApiRoutes;
use mancala_platform::jwt::{TokenSigner, TokenVerifier, random_seed};
use mancala_platform::{
    Authenticator, Bound, Clock, ProcessContext, Readiness, Redis, Settings, StartError, Started,
    serve_on, start_process,
};
use sqlx::PgPool;

use std::sync::Arc;

use mancala_platform::pubsub::PubSub;

use crate::accounts::{self, Accounts};
use crate::config::{AccountSettings, MatchSettings};
use crate::context::Context;
use crate::game_room_client::GameRoomClient;
use crate::pairer::spawn_pairers;
use crate::queue::pairing::PairingRules;
use crate::tournament;
use crate::{fair_play, games, invites, lobby, openapi};

/// How often dead refresh-token families are deleted.
const PURGE_EVERY: Duration = Duration::from_secs(3600);

/// The matchmaking service's state, shared by its handlers.
#[derive(Clone)]
pub struct Matchmaking {
    accounts: Accounts,
    authenticator: Authenticator,
    queues: Context,
    /// The scheduled arenas' rules (`APP_TOURNAMENT_SCHEDULE`).
    tournament_rules: Arc<Vec<tournament::schedule::Rule>>,
    /// The arenas this instance's standings sockets follow.
    boards: tournament::live::Hub,
}

impl Matchmaking {
    /// The service over connected stores. Without `APP_JWT_PRIVATE_KEY` it
    /// signs with a key made up for this process, which suits a single
    /// development process only (tokens die with it).
    pub fn new(
        postgres: PgPool,
        redis: Redis,
        settings: &Settings,
        account_settings: AccountSettings,
        mut match_settings: MatchSettings,
        process: ProcessContext,
    ) -> Result<Matchmaking, StartError> {
        let ProcessContext {
            clock,
            admission,
            revocations,
            anonymous_sockets,
        } = process;
        let seed = match &settings.jwt_private_key {
            Some(seed) => seed.clone(),
            None => {
                tracing::warn!("APP_JWT_PRIVATE_KEY is not set: signing with a throwaway key");
                random_seed()
            }
        };
        let signer = TokenSigner::from_seed(
            &seed,
            &settings.jwt_issuer,
            &settings.jwt_audience,
            settings.access_token_ttl.as_secs(),
        )?;
        let verifier = TokenVerifier::from_public_key(
            signer.public_key(),
            &settings.jwt_issuer,
            &settings.jwt_audience,
            settings.jwt_leeway.as_secs(),
        )?;
        let authenticator = Authenticator::new(verifier, clock.clone(), revocations);
        let tournament_rules = Arc::new(match &match_settings.tournament_schedule {
            Some(path) => {
                let fail = |error: String| {
                    StartError::Other(format!(
                        "APP_TOURNAMENT_SCHEDULE {}: {error}",
                        path.display()
                    ))
                };
                let text = std::fs::read_to_string(path).map_err(|e| fail(e.to_string()))?;
                tournament::schedule::parse(&text).map_err(|e| fail(e.to_string()))?
            }
            None => Vec::new(),
        });
        let rules = PairingRules {
            wave_ms: match_settings.wave.as_millis() as u64,
            ..PairingRules::default()
        };
        let queues = Context {
            postgres: postgres.clone(),
            redis: redis.clone(),
            pubsub: PubSub::start(redis.clone()),
            clock: clock.clone(),
            game_room: GameRoomClient::new(
                &match_settings.game_room_url,
                match_settings.instance.internal_token(),
            ),
            settings: Arc::new(match_settings),
            rules,
            admission,
            anonymous_sockets,
            figures: Default::default(),
        };
        let accounts = Accounts::new(
            postgres,
            redis,
            signer,
            clock.clone(),
            account_settings,
            accounts::TokenLifetimes {
                access: settings.access_token_ttl,
                refresh: settings.refresh_token_ttl,
            },
            authenticator.revocations().clone(),
        )
        .map_err(|error| StartError::Other(error.to_string()))?;
        Ok(Matchmaking {
            accounts,
            authenticator,
            boards: tournament::live::Hub::new(queues.clone()),
            queues,
            tournament_rules,
        })
    }

    /// Mounts the service's routes and the state they need.
    pub fn configure(&self, config: &mut web::ServiceConfig) {
        config
            .app_data(web::Data::new(self.accounts.clone()))
            .app_data(web::Data::new(self.authenticator.clone()))
            .app_data(web::Data::new(self.queues.clone()))
            .app_data(web::Data::new(self.boards.clone()))
            .configure(accounts::routes::configure)
            .api_route("/v1/lobby", Method::GET, lobby::lobby)
            .api_route("/v1/lobby/stats", Method::GET, games::lobby_stats)
            .api_route("/v1/queues", Method::GET, games::queues)
            .api_route("/v1/me/games", Method::GET, games::my_games)
            .api_route("/v1/me/fair-play", Method::GET, fair_play::my_record)
            .api_route("/v1/ai-games", Method::POST, games::ai_game)
            .api_route("/v1/hotseat-games", Method::POST, games::hotseat_game)
            .api_resource(
                "/v1/invites",
                vec![
                    web::post().to(invites::create),
                    web::get().to(invites::mine),
                ],
                "GET, HEAD, POST",
            )
            .api_resource(
                "/v1/invites/{code}",
                vec![
                    web::get().to(invites::show),
                    web::delete().to(invites::cancel),
                ],
                "GET, HEAD, DELETE",
            )
            .api_route("/v1/invites/{code}/accept", Method::POST, invites::accept)
            .configure(moderation_routes)
            .configure(tournament_routes)
            .configure(openapi::configure);
    }

    /// Starts the pairing loops (one per queue; only a lease holder pairs).
    pub fn spawn_pairers(&self) {
        spawn_pairers(self.queues.clone());
        tournament::director::spawn(self.queues.clone(), self.tournament_rules.clone());
    }

    /// Deletes dead refresh-token families every hour, for as long as the
    /// process runs.
    pub fn spawn_housekeeping(&self) {
        let accounts = self.accounts.clone();
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(PURGE_EVERY);
            loop {
                ticks.tick().await;
                match accounts.purge().await {
                    Ok(0) => {}
                    Ok(purged) => tracing::info!(purged, "purged dead token families"),
                    Err(error) => tracing::warn!(%error, "purging token families"),
                }
            }
        });
    }
}

/// Arena tournaments.
fn tournament_routes(config: &mut web::ServiceConfig) {
    use crate::tournament::routes;
    config
        .api_resource(
            "/v1/tournaments",
            vec![web::post().to(routes::create), web::get().to(routes::list)],
            "GET, HEAD, POST",
        )
        .api_route("/v1/tournaments/{id}", Method::GET, routes::show)
        .api_route(
            "/v1/tournaments/{id}/live",
            Method::GET,
            crate::tournament::live::live,
        )
        .api_route("/v1/tournaments/{id}/join", Method::POST, routes::join)
        .api_route("/v1/tournaments/{id}/pause", Method::POST, routes::pause)
        .api_route(
            "/v1/tournaments/{id}/withdraw",
            Method::POST,
            routes::withdraw,
        )
        .api_route("/v1/players/{id}/tournaments", Method::GET, routes::results);
}

/// Reports, the players' side of moderation, and the moderators' routes.
fn moderation_routes(config: &mut web::ServiceConfig) {
    use crate::moderation::routes;
    config
        .api_route("/v1/reports", Method::POST, routes::report)
        .api_route("/v1/me/close", Method::POST, routes::close_mine)
        .api_route("/v1/me/data", Method::GET, routes::my_data)
        .api_route(
            "/v1/me/warnings/{id}/seen",
            Method::POST,
            routes::warning_seen,
        )
        .api_route("/v1/mod/reports", Method::GET, routes::report_queue)
        .api_route(
            "/v1/mod/reports/{id}/close",
            Method::POST,
            routes::close_report,
        )
        .api_route("/v1/mod/players", Method::GET, routes::search)
        .api_route("/v1/mod/players/{id}", Method::GET, routes::account)
        .api_route("/v1/mod/players/{id}/actions", Method::POST, routes::act)
        .api_route("/v1/mod/players/{id}/notes", Method::POST, routes::note)
        .api_route("/v1/mod/sanctions/{id}/lift", Method::POST, routes::lift)
        .api_route("/v1/mod/recomputes/{id}", Method::GET, routes::recompute)
        .api_route("/v1/mod/log", Method::GET, routes::log);
}

/// The matchmaking binary: stores connected, migrations run, server bound.
pub struct Application {
    bound: Bound,
}

impl Application {
    /// Connects the stores, migrates, and binds `settings.bind` (port 0
    /// for a free port, as the tests do).
    pub async fn build(
        settings: Settings,
        account_settings: AccountSettings,
        mut match_settings: MatchSettings,
        clock: Clock,
    ) -> Result<Application, StartError> {
        let listener = std::net::TcpListener::bind(settings.bind)?;
        match_settings.instance.name_after(listener.local_addr()?);
        let Started {
            postgres,
            redis,
            process,
        } = start_process(&settings, 16, clock).await?;
        let service = Matchmaking::new(
            postgres.clone(),
            redis.clone(),
            &settings,
            account_settings,
            match_settings,
            process,
        )?;
        service.spawn_housekeeping();
        service.spawn_pairers();
        let readiness = Readiness { postgres, redis };
        let bound = serve_on(listener, readiness, settings.http, move |config| {
            service.configure(config);
        })?;
        Ok(Application { bound })
    }
}

impl mancala_platform::binary::Service for Application {
    fn port(&self) -> u16 {
        self.bound.address.port()
    }

    /// The port it listens on.
    /// Serves until the process is told to stop (SIGINT/SIGTERM), finishing
    /// requests in flight.
    async fn run_until_stopped(self) -> std::io::Result<()> {
        self.bound.run_until_signal(|| async {}).await
    }
}
