use std::time::Duration;

use awc::http::StatusCode;
use awc::http::header::HeaderMap;
use mancala_matchmaking::{AccountSettings, Application, MatchSettings};
use mancala_platform::binary::Service as _;
use mancala_platform::jwt::{TokenSigner, random_seed};
use mancala_platform::ratelimit::Limit;
use mancala_platform::testing::{TestStores, database_url, redis_url};
use mancala_platform::{Clock, ExposeSecret, SecretString, Settings};
use mancala_proto::{ErrorBody, ErrorCode, Session};
use serde_json::{Value, json};

pub(crate) const ISSUER: &str = "mancala-arena-test";
pub(crate) const AUDIENCE: &str = "players-test";
pub(crate) const ACCESS_TTL: u64 = 900;
pub(crate) const LEEWAY: u64 = 30;

/// A running service with its own stores and clock.
pub(crate) struct TestApp {
    pub(crate) base: String,
    pub(crate) client: awc::Client,
    pub(crate) clock: Clock,
    /// The signing seed, to mint tokens the way the service does.
    pub(crate) seed: SecretString,
    pub(crate) stores: TestStores,
    /// game-room's base URL.
    pub(crate) games: String,
    vars: Vec<(String, String)>,
    limits: AccountSettings,
}

/// A response, read whole.
pub(crate) struct Reply {
    pub(crate) status: StatusCode,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Value,
}

impl Reply {
    /// The status and the body.
    pub(crate) fn into_parts(self) -> (u16, Value) {
        (self.status.as_u16(), self.body)
    }

    /// The error code of an error reply.
    pub(crate) fn code(&self) -> ErrorCode {
        serde_json::from_value::<ErrorBody>(self.body.clone())
            .unwrap_or_else(|_| panic!("not an error body: {}", self.body))
            .code
    }

    pub(crate) fn session(&self) -> Session {
        serde_json::from_value(self.body.clone())
            .unwrap_or_else(|_| panic!("not a session ({}): {}", self.status, self.body))
    }

    pub(crate) fn expect_error(&self, status: u16, code: ErrorCode) {
        assert_eq!(
            (self.status.as_u16(), self.code()),
            (status, code),
            "{}",
            self.body
        );
    }
}

/// Generous limits, so only the tests about limits meet them.
pub(crate) fn roomy_limits() -> AccountSettings {
    let roomy = Limit {
        max: 1000,
        window_seconds: 60,
    };
    AccountSettings {
        signups_per_ip: roomy,
        registrations_per_ip: roomy,
        login_failures_per_account: roomy,
        login_failures_per_account_all: roomy,
        login_failures_per_ip: roomy,
        logins_per_account: roomy,
        logins_per_ip: roomy,
        trust_forwarded_for: false,
    }
}

impl TestApp {
    pub(crate) async fn spawn() -> TestApp {
        TestApp::spawn_with(roomy_limits()).await
    }

    pub(crate) async fn spawn_with(limits: AccountSettings) -> TestApp {
        TestApp::spawn_full(limits, &[]).await
    }

    /// Matchmaking with game-room beside it (sharing stores, keys and the
    /// service token), and `extra` settings for matchmaking.
    pub(crate) async fn spawn_full(limits: AccountSettings, extra: &[(&str, &str)]) -> TestApp {
        if let Ok(filter) = std::env::var("RUST_LOG") {
            mancala_platform::telemetry::init_logging(mancala_platform::LogFormat::Pretty, &filter);
        }
        let stores = TestStores::new().await.unwrap();
        let seed = random_seed();
        let clock = Clock::manual(Clock::system().now_millis());
        let shared: Vec<(String, String)> = [
            ("APP_BIND", "127.0.0.1:0".to_owned()),
            (
                "DATABASE_URL",
                database_url(&stores.database).expose_secret().to_owned(),
            ),
            ("REDIS_URL", redis_url().expose_secret().to_owned()),
            ("APP_REDIS_PREFIX", stores.prefix.clone()),
            ("APP_JWT_ISSUER", ISSUER.to_owned()),
            ("APP_JWT_AUDIENCE", AUDIENCE.to_owned()),
            ("APP_ACCESS_TOKEN_TTL_SECS", ACCESS_TTL.to_string()),
            ("APP_JWT_LEEWAY_SECS", LEEWAY.to_string()),
            ("APP_JWT_PRIVATE_KEY", seed.expose_secret().to_owned()),
            ("APP_INTERNAL_TOKEN", "internal-test-token".to_owned()),
            ("APP_WS_TICK_MS", "20".to_owned()),
            ("APP_WS_RATE", "100000/1".to_owned()),
            // Tests jump the clock by minutes; only the silence test wants
            // sockets to time out.
            ("APP_WS_TIMEOUT_SECS", "100000000".to_owned()),
            ("APP_WS_PING_SECS", "100000000".to_owned()),
        ]
        .into_iter()
        .map(|(name, value)| (name.to_owned(), value))
        .collect();
        let game_room = mancala_game_room::Application::build(
            Settings::from_vars(shared.clone()).unwrap(),
            mancala_game_room::GameRoomSettings::from_vars(shared.clone()).unwrap(),
            clock.clone(),
        )
        .await
        .unwrap();
        let games = format!("http://127.0.0.1:{}", game_room.port());
        actix_web::rt::spawn(game_room.run_until_stopped());
        let mut vars = shared;
        vars.push(("APP_GAME_ROOM_URL".into(), games.clone()));
        vars.push(("APP_PAIRING_WAVE_MS".into(), "50".into()));
        vars.push(("APP_LOBBY_TICK_MS".into(), "20".into()));
        // Tests jump the clock past the real ticks that keep tickets alive.
        vars.push(("APP_LOBBY_GRACE_SECS".into(), "3600".into()));
        for (name, value) in extra {
            vars.push(((*name).to_owned(), (*value).to_owned()));
        }
        let app = TestApp {
            base: String::new(),
            games,
            client: awc::Client::builder()
                .timeout(Duration::from_secs(30))
                .finish(),
            clock,
            seed,
            stores,
            vars,
            limits,
        };
        let base = app.instance().await;
        TestApp { base, ..app }
    }

    /// Another matchmaking instance on the same stores; its base URL.
    pub(crate) async fn instance(&self) -> String {
        let settings = Settings::from_vars(self.vars.clone()).unwrap();
        let matching = MatchSettings::from_vars(self.vars.clone()).unwrap();
        let application = Application::build(settings, self.limits, matching, self.clock.clone())
            .await
            .unwrap();
        let base = format!("http://127.0.0.1:{}", application.port());
        actix_web::rt::spawn(application.run_until_stopped());
        base
    }

    pub(crate) async fn cleanup(self) {
        self.stores.cleanup().await.unwrap();
    }

    /// A signer with the service's key but other claims, for forging.
    pub(crate) fn signer(&self, issuer: &str, audience: &str) -> TokenSigner {
        TokenSigner::from_seed(&self.seed, issuer, audience, ACCESS_TTL).unwrap()
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// POSTs a raw body as JSON, with a bearer token if given.
    pub(crate) async fn post_raw(&self, path: &str, body: &str, token: Option<&str>) -> Reply {
        let mut request = self
            .client
            .post(self.url(path))
            .insert_header(("content-type", "application/json"));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        send(request, body.as_bytes().to_vec()).await
    }

    pub(crate) async fn post(&self, path: &str, body: Value, token: Option<&str>) -> Reply {
        self.post_raw(path, &body.to_string(), token).await
    }

    /// A GET on another base URL (another instance, game-room).
    pub(crate) async fn get_at(&self, base: &str, path: &str) -> Reply {
        send(self.client.get(format!("{base}{path}")), Vec::new()).await
    }

    pub(crate) async fn get(&self, path: &str, token: Option<&str>) -> Reply {
        let mut request = self.client.get(self.url(path));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        send(request, Vec::new()).await
    }

    pub(crate) async fn guest(&self) -> Session {
        let reply = self.post("/v1/auth/guest", json!({}), None).await;
        assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
        reply.session()
    }

    pub(crate) async fn register(
        &self,
        username: &str,
        password: &str,
        token: Option<&str>,
    ) -> Reply {
        self.post(
            "/v1/auth/register",
            json!({"username": username, "password": password}),
            token,
        )
        .await
    }

    pub(crate) async fn login(&self, username: &str, password: &str) -> Reply {
        self.post(
            "/v1/auth/login",
            json!({"username": username, "password": password}),
            None,
        )
        .await
    }

    /// A login from `address` (trusted as `X-Forwarded-For` when the
    /// settings say so).
    pub(crate) async fn login_from(&self, address: &str, username: &str, password: &str) -> Reply {
        let request = self
            .client
            .post(self.url("/v1/auth/login"))
            .insert_header(("content-type", "application/json"))
            .insert_header(("x-forwarded-for", address));
        let body = json!({"username": username, "password": password}).to_string();
        send(request, body.into_bytes()).await
    }

    pub(crate) async fn refresh(&self, refresh_token: &str) -> Reply {
        self.post(
            "/v1/auth/refresh",
            json!({"refresh_token": refresh_token}),
            None,
        )
        .await
    }
}

async fn send(request: awc::ClientRequest, body: Vec<u8>) -> Reply {
    let mut response = request.send_body(body).await.unwrap();
    let bytes = response.body().limit(4 << 20).await.unwrap();
    let body = if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()))
    };
    Reply {
        status: response.status(),
        headers: response.headers().clone(),
        body,
    }
}
