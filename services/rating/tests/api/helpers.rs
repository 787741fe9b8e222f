use std::time::Duration;

use mancala_platform::binary::Service as _;
use mancala_platform::jwt::{TokenSigner, random_seed};
use mancala_platform::testing::{TestStores, database_url, redis_url};
use mancala_platform::{Clock, ExposeSecret, Settings};
use mancala_rating::context::Context;
use mancala_rating::{Application, RatingSettings};
use serde_json::Value;
use uuid::Uuid;

pub(crate) struct World {
    pub(crate) stores: TestStores,
    pub(crate) clock: Clock,
    pub(crate) signer: TokenSigner,
    pub(crate) vars: Vec<(String, String)>,
}

impl World {
    pub(crate) async fn new() -> World {
        let stores = TestStores::new().await.unwrap();
        let seed = random_seed();
        let signer = TokenSigner::from_seed(&seed, "arena-test", "players-test", 900).unwrap();
        let vars = [
            ("APP_BIND", "127.0.0.1:0".to_owned()),
            (
                "DATABASE_URL",
                database_url(&stores.database).expose_secret().to_owned(),
            ),
            ("REDIS_URL", redis_url().expose_secret().to_owned()),
            ("APP_REDIS_PREFIX", stores.prefix.clone()),
            ("APP_JWT_ISSUER", "arena-test".to_owned()),
            ("APP_JWT_AUDIENCE", "players-test".to_owned()),
            ("APP_JWT_PRIVATE_KEY", seed.expose_secret().to_owned()),
            ("APP_RATING_POLL_MS", "50".to_owned()),
        ]
        .into_iter()
        .map(|(name, value)| (name.to_owned(), value))
        .collect();
        World {
            stores,
            clock: Clock::manual(Clock::system().now_millis()),
            signer,
            vars,
        }
    }

    /// A running rating service; its base URL and its rater.
    pub(crate) async fn service(&self) -> (String, Context) {
        let application = Application::build(
            Settings::from_vars(self.vars.clone()).unwrap(),
            RatingSettings::from_vars(self.vars.clone()).unwrap(),
            self.clock.clone(),
        )
        .await
        .unwrap();
        let base = format!("http://127.0.0.1:{}", application.port());
        let rater = application.service().rater().clone();
        actix_web::rt::spawn(application.run_until_stopped());
        (base, rater)
    }

    /// A rater without a server or workers: the test drives it.
    pub(crate) async fn rater(&self) -> Context {
        let service = mancala_rating::RatingService::new(
            self.stores.postgres.clone(),
            self.stores.redis.clone(),
            &Settings::from_vars(self.vars.clone()).unwrap(),
            RatingSettings::from_vars(self.vars.clone()).unwrap(),
            self.clock.clone(),
            Default::default(),
        )
        .unwrap();
        service.rater().clone()
    }

    pub(crate) async fn player(&self, name: &str, registered: bool) -> Uuid {
        let id = self.stores.player(name).await.unwrap();
        if registered {
            sqlx::query(
                "INSERT INTO credentials (player_id, username, password_hash) VALUES ($1, $2, 'x')",
            )
            .bind(id)
            .bind(name)
            .execute(&self.stores.postgres)
            .await
            .unwrap();
        }
        id
    }

    /// A finished rated game with its outbox row, as game-room leaves it.
    pub(crate) async fn rated_game(&self, south: Uuid, north: Uuid, result: &str) -> Uuid {
        let id = Uuid::now_v7();
        let now = self.clock.now_secs() as f64;
        sqlx::query(
            "INSERT INTO games (id, variant, seat0_player, seat1_player, rated, status, result, reason,
                                score0, score1, created_at, ended_at)
             VALUES ($1, '{\"variant\":\"kalah\"}', $2, $3, true, 'over', $4, 'resign', 0, 0,
                     to_timestamp($5), to_timestamp($5))",
        )
        .bind(id)
        .bind(south)
        .bind(north)
        .bind(result)
        .bind(now)
        .execute(&self.stores.postgres)
        .await
        .unwrap();
        sqlx::query(
            "INSERT INTO rating_outbox (game_id, created_at) VALUES ($1, to_timestamp($2))",
        )
        .bind(id)
        .bind(now)
        .execute(&self.stores.postgres)
        .await
        .unwrap();
        id
    }

    pub(crate) async fn rating(&self, player: Uuid) -> Option<(f64, f64, i32)> {
        sqlx::query_as(
            "SELECT rating, rd, games FROM ratings WHERE player_id = $1 AND variant = 'kalah'",
        )
        .bind(player)
        .fetch_optional(&self.stores.postgres)
        .await
        .unwrap()
    }

    pub(crate) async fn cleanup(self) {
        self.stores.cleanup().await.unwrap();
    }
}

pub(crate) async fn get(url: &str, token: Option<&str>) -> (u16, Value) {
    let client = awc::Client::builder()
        .timeout(Duration::from_secs(10))
        .finish();
    let mut request = client.get(url);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let mut response = request.send().await.unwrap();
    let body = response.body().await.unwrap();
    (
        response.status().as_u16(),
        serde_json::from_slice(&body).unwrap_or(Value::Null),
    )
}

/// A URL of database `name` whose connections are read-only and named
/// `mancala-reads`: a stand-in for a replica that a test can watch.
pub(crate) fn read_only_url(name: &str) -> String {
    format!(
        "{}?application_name=mancala-reads&options=-c%20default_transaction_read_only%3Don",
        database_url(name).expose_secret()
    )
}

/// The last statement of each connection named `mancala-reads` to this
/// database.
pub(crate) async fn statements_on_reads(postgres: &sqlx::PgPool) -> Vec<String> {
    sqlx::query_scalar(
        "SELECT query FROM pg_stat_activity
         WHERE application_name = 'mancala-reads' AND datname = current_database()",
    )
    .fetch_all(postgres)
    .await
    .unwrap()
}
