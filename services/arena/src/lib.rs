//! The three services in one process, on one port: what a newcomer runs.
//! Each service mounts its own routes (`configure`), exactly as its own
//! binary does; matchmaking reaches game-room's internal endpoint on this
//! same port.

use std::net::SocketAddr;

use mancala_game_room::{GameRoom, GameRoomSettings};
use mancala_matchmaking::{AccountSettings, MatchSettings, Matchmaking};
use mancala_platform::cli::{Declaration, Parsed};
use mancala_platform::{
    Bound, Clock, ConfigError, Readiness, Settings, StartError, Started, serve_on, start_process,
};
use mancala_rating::{RatingService, RatingSettings};

pub mod web;

/// Everything each service reads, from one environment.
pub struct ArenaSettings {
    pub shared: Settings,
    pub accounts: AccountSettings,
    pub matching: MatchSettings,
    pub game_room: GameRoomSettings,
    pub rating: RatingSettings,
    pub web: web::WebSettings,
}

/// Every setting the `arena` binary reads: each service's, once.
pub fn declaration() -> Declaration {
    Declaration::new("arena", "Mancala Arena in one process")
        .with::<Settings>()
        .with::<AccountSettings>()
        .with::<MatchSettings>()
        .with::<GameRoomSettings>()
        .with::<RatingSettings>()
        .with::<web::WebSettings>()
}

impl ArenaSettings {
    /// One environment read by every service of the process.
    pub fn from_parsed(parsed: &Parsed) -> Result<ArenaSettings, ConfigError> {
        Ok(ArenaSettings {
            shared: parsed.get()?,
            accounts: parsed.get()?,
            matching: parsed.get()?,
            game_room: parsed.get()?,
            rating: parsed.get()?,
            web: parsed.get()?,
        })
    }
}

/// The running arena.
pub struct Arena {
    bound: Bound,
    game_room: GameRoom,
}

impl Arena {
    /// Connects the stores once, migrates, mounts the three services.
    pub async fn build(mut settings: ArenaSettings, clock: Clock) -> Result<Arena, StartError> {
        let listener = std::net::TcpListener::bind(settings.shared.bind)?;
        let address: SocketAddr = listener.local_addr()?;
        let own = format!("http://{address}");
        // Matchmaking creates games through game-room's endpoint, here.
        settings.matching.game_room_url = own.clone();
        // One instance: one id and one internal token for its services.
        settings.matching.instance.name_after(address);
        settings.matching.instance.internal_token();
        settings.game_room.instance = settings.matching.instance.clone();
        settings.game_room.instance_url.get_or_insert(own);
        if settings.shared.jwt_private_key.is_none() {
            // One key for the signer and the verifiers of this process.
            settings.shared.jwt_private_key = Some(mancala_platform::jwt::random_seed());
        }
        let shared = &settings.shared;
        let http = shared.http;
        // One reading of the process's load and one view of the signed-out
        // sessions for every service in it.
        let Started {
            postgres,
            redis,
            process,
        } = start_process(shared, 32, clock).await?;
        let matchmaking = Matchmaking::new(
            postgres.clone(),
            redis.clone(),
            shared,
            settings.accounts,
            settings.matching,
            process.clone(),
        )?;
        let game_room = GameRoom::new(
            postgres.clone(),
            redis.clone(),
            shared,
            settings.game_room,
            process.clone(),
        )?;
        let rating = RatingService::new(
            postgres.clone(),
            redis.clone(),
            shared,
            settings.rating,
            process.clock,
            process.revocations,
        )?;
        matchmaking.spawn_housekeeping();
        matchmaking.spawn_pairers();
        rating.start_background();
        let web_dir = settings.web.web_dir;
        if !web_dir.join("index.html").is_file() {
            tracing::warn!(dir = %web_dir.display(), "no web client here (APP_WEB_DIR)");
        }
        let routes = (matchmaking, game_room.clone(), rating, web_dir);
        let bound = serve_on(
            listener,
            Readiness { postgres, redis },
            http,
            // A request is matched against the routes in the order they
            // were mounted, each address with a parameter costing a regex
            // run (actix's `regex-lite`): the game-room's first, as every
            // player opens a game socket for every game (matched after
            // matchmaking's two dozen, the matching was 1% of the server's
            // CPU at zero think time). No address is served by two
            // services, so the order changes nothing else.
            move |config| {
                routes.1.configure(config);
                routes.0.configure(config);
                routes.2.configure(config);
                web::configure(config, &routes.3);
            },
        )?;
        Ok(Arena { bound, game_room })
    }

    pub fn address(&self) -> SocketAddr {
        self.bound.address
    }

    /// Serves until SIGINT/SIGTERM, then drains the hosted games.
    pub async fn run_until_stopped(self) -> std::io::Result<()> {
        let hosted = self.game_room.hosted().clone();
        self.bound
            .run_until_signal(|| async move { hosted.drain().await })
            .await
    }
}
