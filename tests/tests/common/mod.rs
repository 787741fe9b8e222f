//! What the end-to-end checks against the real `arena` process share: the
//! process with fresh stores and short windows, guests, sockets, friend
//! rooms, and the game records and rating rows in Postgres.

#![allow(dead_code)] // each test file uses its own share of these

use std::time::{Duration, Instant};

use mancala_platform::ExposeSecret;
use mancala_platform::testing::{TestStores, database_url, redis_url};
use mancala_tests::harness::{
    Guest, Service, Ws, call, free_port, guest, registered_player, request, start_on,
};
use serde_json::{Value, json};

pub(crate) const WAIT: Duration = Duration::from_secs(10);

/// Every registered player's password in these tests.
pub(crate) const PASSWORD: &str = "correct horse battery";

pub(crate) struct Arena {
    pub(crate) service: Service,
    pub(crate) stores: TestStores,
    /// What it was started with, to start it again in its place.
    env: Vec<(String, String)>,
    host: String,
    port: u16,
}

fn owned(env: &[(&str, String)]) -> Vec<(String, String)> {
    env.iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect()
}

impl Arena {
    pub(crate) async fn start(extra: &[(&str, &str)]) -> Arena {
        Arena::start_on("127.0.0.1", extra).await
    }

    /// The process as it ships: its fresh stores and nothing else set, so
    /// every window and tick is the default a player meets.
    pub(crate) async fn start_default() -> Arena {
        let stores = TestStores::new().await.unwrap();
        let env = vec![
            (
                "DATABASE_URL",
                database_url(&stores.database).expose_secret().to_owned(),
            ),
            ("REDIS_URL", redis_url().expose_secret().to_owned()),
            ("APP_REDIS_PREFIX", stores.prefix.clone()),
            ("RUST_LOG", "error".to_owned()),
        ];
        let port = free_port();
        Arena {
            service: start_on("arena", "127.0.0.1", port, &env).await,
            stores,
            env: owned(&env),
            host: "127.0.0.1".to_owned(),
            port,
        }
    }

    /// [`Arena::start`] listening on `host` (reached at 127.0.0.1).
    pub(crate) async fn start_on(host: &str, extra: &[(&str, &str)]) -> Arena {
        Arena::start_with(host, extra, None).await
    }

    /// [`Arena::start`], its log lines written to `log`.
    pub(crate) async fn start_logged(extra: &[(&str, &str)], log: &std::path::Path) -> Arena {
        Arena::start_with("127.0.0.1", extra, Some(log)).await
    }

    async fn start_with(
        host: &str,
        extra: &[(&str, &str)],
        log: Option<&std::path::Path>,
    ) -> Arena {
        let stores = TestStores::new().await.unwrap();
        let mut env = vec![
            (
                "DATABASE_URL",
                database_url(&stores.database).expose_secret().to_owned(),
            ),
            ("REDIS_URL", redis_url().expose_secret().to_owned()),
            ("APP_REDIS_PREFIX", stores.prefix.clone()),
            ("APP_WS_TICK_MS", "50".to_owned()),
            ("APP_PAIRING_WAVE_MS", "100".to_owned()),
            ("APP_LOBBY_TICK_MS", "50".to_owned()),
            ("APP_RATING_POLL_MS", "100".to_owned()),
            ("APP_WS_RATE", "200/100".to_owned()),
            ("APP_LOG_FORMAT", "json".to_owned()),
            ("RUST_LOG", "error".to_owned()),
            // One signing key for the arena and the one started in its
            // place (`kill_and_restart`): tokens outlive the process.
            (
                "APP_JWT_PRIVATE_KEY",
                mancala_platform::jwt::random_seed()
                    .expose_secret()
                    .to_owned(),
            ),
        ];
        for (name, value) in extra {
            env.push((name, (*value).to_owned()));
        }
        let port = free_port();
        let service = match log {
            Some(log) => mancala_tests::harness::start_logged("arena", port, &env, log).await,
            None => start_on("arena", host, port, &env).await,
        };
        Arena {
            service,
            stores,
            env: owned(&env),
            host: host.to_owned(),
            port,
        }
    }

    /// SIGKILL, then the same process started again on the same port and
    /// stores, as a supervisor would.
    pub(crate) async fn kill_and_restart(&mut self) {
        self.service.kill();
        let env: Vec<(&str, String)> = self
            .env
            .iter()
            .map(|(k, v)| (k.as_str(), v.clone()))
            .collect();
        self.service = start_on("arena", &self.host, self.port, &env).await;
    }

    /// A second instance beside this one: the same stores and settings
    /// (its own port and instance id), as a second replica would run.
    pub(crate) async fn beside(&self) -> Service {
        let env: Vec<(&str, String)> = self
            .env
            .iter()
            .map(|(k, v)| (k.as_str(), v.clone()))
            .collect();
        start_on("arena", &self.host, free_port(), &env).await
    }

    pub(crate) fn base(&self) -> &str {
        &self.service.base
    }

    pub(crate) async fn guest(&self) -> Guest {
        guest(self.base()).await
    }

    /// Signs `name` in again: a token that carries the role they hold now.
    pub(crate) async fn sign_in(&self, name: &str) -> Guest {
        let session = request(
            "POST",
            format!("{}/v1/auth/login", self.base()),
            Some(json!({"username": name, "password": PASSWORD})),
            None,
        )
        .await;
        Guest {
            id: session["player"]["id"].as_str().unwrap().to_owned(),
            token: session["access_token"].as_str().unwrap().to_owned(),
        }
    }

    /// The first admin, as the site's owner makes one: `mancala-admin
    /// grant` against the same stores, then a fresh sign-in.
    pub(crate) async fn admin(&self, name: &str) -> Guest {
        self.registered(name).await;
        let output = std::process::Command::new(mancala_tests::harness::binary("mancala-admin"))
            .args(["grant", name, "admin", "--reason", "the site's owner"])
            .env(
                "DATABASE_URL",
                database_url(&self.stores.database).expose_secret(),
            )
            .env("REDIS_URL", redis_url().expose_secret())
            .env("APP_REDIS_PREFIX", &self.stores.prefix)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "mancala-admin: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        self.sign_in(name).await
    }

    /// A guest who registers as `name` (password "correct horse battery").
    pub(crate) async fn registered(&self, name: &str) -> Guest {
        let (id, token) = registered_player(self.base(), name).await;
        Guest { id, token }
    }

    /// A play socket, authenticated; its first message (a `state`, or the
    /// error that refused it).
    pub(crate) async fn open(&self, game: &str, who: &Guest) -> (Ws, Value) {
        let mut ws = Ws::open(format!("{}/v1/games/{game}/play", self.base()))
            .await
            .unwrap();
        ws.send(json!({"t": "auth", "d": {"token": who.token}}))
            .await;
        let first = ws.next(WAIT).await.expect("an answer to auth");
        (ws, first)
    }

    /// A play socket and the game's `state`.
    pub(crate) async fn play(&self, game: &str, who: &Guest) -> (Ws, Value) {
        let (ws, first) = self.open(game, who).await;
        assert_eq!(first["t"], "state", "{first}");
        (ws, first["d"].clone())
    }

    /// A lobby socket of `who`, authenticated and past its first figures.
    pub(crate) async fn lobby(&self, who: &Guest) -> Ws {
        let mut lobby = Ws::open(format!("{}/v1/lobby", self.base())).await.unwrap();
        lobby
            .send(json!({"t": "auth", "d": {"token": who.token}}))
            .await;
        lobby.until("lobby_stats", WAIT).await;
        lobby
    }

    /// An invite of `who` with this body: its code.
    pub(crate) async fn invite(&self, who: &Guest, body: Value) -> String {
        let invite = request(
            "POST",
            format!("{}/v1/invites", self.base()),
            Some(body),
            Some(&who.token),
        )
        .await;
        invite["code"].as_str().unwrap().to_owned()
    }

    /// `who` accepts the invite `code`: the status and the body.
    pub(crate) async fn accept(&self, who: &Guest, code: &str) -> (u16, Value) {
        call(
            "POST",
            format!("{}/v1/invites/{code}/accept", self.base()),
            None,
            Some(&who.token),
        )
        .await
    }

    /// A rated Kalah 3+2 invite's body.
    pub(crate) fn rated_invite() -> Value {
        json!({"variant": {"variant": "kalah"}, "rated": true,
               "time_control": {"initial_secs": 180, "increment_secs": 2}})
    }

    /// A friend room between `a` (the inviter, first) and `b`: its game.
    /// A rated one without a `clock` gets 10 minutes a side (a rated game
    /// needs one).
    pub(crate) async fn room(
        &self,
        a: &Guest,
        b: &Guest,
        rated: bool,
        clock: Option<Value>,
    ) -> String {
        let mut body = json!({"variant": {"variant": "kalah"}, "rated": rated});
        let clock =
            clock.or_else(|| rated.then(|| json!({"initial_secs": 600, "increment_secs": 0})));
        if let Some(clock) = clock {
            body["time_control"] = clock;
        }
        let invite = request(
            "POST",
            format!("{}/v1/invites", self.base()),
            Some(body),
            Some(&a.token),
        )
        .await;
        let code = invite["code"].as_str().unwrap();
        let accepted = request(
            "POST",
            format!("{}/v1/invites/{code}/accept", self.base()),
            None,
            Some(&b.token),
        )
        .await;
        accepted["game_id"].as_str().unwrap().to_owned()
    }

    pub(crate) async fn record(&self, game: &str) -> Value {
        call(
            "GET",
            format!("{}/v1/games/{game}", self.base()),
            None,
            None,
        )
        .await
        .1
    }

    /// Waits for the game's status to become `status`: its record.
    pub(crate) async fn status(&self, game: &str, status: &str) -> Value {
        let deadline = Instant::now() + WAIT;
        loop {
            let record = self.record(game).await;
            if record["status"] == status {
                return record;
            }
            assert!(Instant::now() < deadline, "{game} never {status}: {record}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    pub(crate) async fn scalar(&self, sql: &str, player: &str) -> i64 {
        sqlx::query_scalar(sql)
            .bind(player.parse::<uuid::Uuid>().unwrap())
            .fetch_one(&self.stores.postgres)
            .await
            .unwrap()
    }

    /// Rating rows and rating-history rows a player has.
    pub(crate) async fn rated(&self, who: &Guest) -> (i64, i64) {
        let ratings = self
            .scalar("SELECT count(*) FROM ratings WHERE player_id = $1", &who.id)
            .await;
        let history = self
            .scalar(
                "SELECT count(*) FROM rating_history WHERE player_id = $1",
                &who.id,
            )
            .await;
        (ratings, history)
    }

    /// Waits until the rating service has applied `games` of `who`'s games.
    pub(crate) async fn rated_games(&self, who: &Guest, games: i64) {
        let deadline = Instant::now() + WAIT;
        while self.rated(who).await.1 < games {
            assert!(
                Instant::now() < deadline,
                "{games} rated games never applied"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        // Nothing more comes after them.
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert_eq!(self.rated(who).await.1, games);
    }

    pub(crate) async fn games_between(&self, who: &Guest) -> i64 {
        self.scalar(
            "SELECT count(*) FROM games WHERE seat0_player = $1 OR seat1_player = $1",
            &who.id,
        )
        .await
    }
}

/// Plays one legal move from a socket whose turn it is: `moved` comes back.
pub(crate) async fn move_once(ws: &mut Ws, other: Option<&mut Ws>, state: &Value) -> Value {
    let pit = state["legal"][0].as_u64().unwrap();
    let ply = state["ply"].as_u64().unwrap() + 1;
    ws.send(json!({"t": "move", "d": {"pit": pit, "ply": ply}}))
        .await;
    let moved = ws.until("moved", WAIT).await;
    if let Some(other) = other {
        other.until("moved", WAIT).await;
    }
    moved
}

/// Seat 0 then seat 1 move once (pit 1 from the start: no extra turns).
pub(crate) async fn both_move(first: &mut Ws, second: &mut Ws) {
    first
        .send(json!({"t": "move", "d": {"pit": 1, "ply": 1}}))
        .await;
    first.until("moved", WAIT).await;
    second.until("moved", WAIT).await;
    second
        .send(json!({"t": "move", "d": {"pit": 1, "ply": 2}}))
        .await;
    first.until("moved", WAIT).await;
    second.until("moved", WAIT).await;
}

pub(crate) async fn resign(who: &mut Ws, other: &mut Ws) -> Value {
    who.send(json!({"t": "resign"})).await;
    other.until("over", WAIT).await;
    who.until("over", WAIT).await
}

/// Sends `message` every 200 ms until the answer is a `wanted` (its data);
/// each earlier answer must be the error `waiting` (a countdown running).
pub(crate) async fn ask_until(ws: &mut Ws, message: Value, wanted: &str, waiting: &str) -> Value {
    let deadline = Instant::now() + WAIT;
    loop {
        ws.send(message.clone()).await;
        loop {
            let answer = ws.next(WAIT).await.expect("an answer");
            if answer["t"] == wanted {
                return answer["d"].clone();
            }
            if answer["t"] == "error" {
                assert_eq!(answer["d"]["code"], waiting, "{answer}");
                break;
            }
        }
        assert!(Instant::now() < deadline, "never got {wanted}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The next error on a socket, past any other message.
pub(crate) async fn error(ws: &mut Ws) -> String {
    ws.until_or_none("error", WAIT)
        .await
        .map(|error| error["code"].as_str().unwrap().to_owned())
        .expect("an error")
}

/// Plays from the two seats' sockets (seat 0's first) until `plies` moves
/// are on the board, whoever's turn it is (Kalah gives extra turns).
pub(crate) async fn play_plies(seats: [&mut Ws; 2], state: &Value, plies: u64) {
    let [first, second] = seats;
    let (mut turn, mut legal, mut ply) = (
        state["turn"].as_u64(),
        state["legal"].clone(),
        state["ply"].as_u64().unwrap(),
    );
    while ply < plies {
        let Some(side) = turn else { return };
        let pit = legal[0].as_u64().unwrap();
        let mover = if side == 0 { &mut *first } else { &mut *second };
        mover
            .send(json!({"t": "move", "d": {"pit": pit, "ply": ply + 1}}))
            .await;
        let moved = first.until("moved", WAIT).await;
        second.until("moved", WAIT).await;
        (turn, legal, ply) = (
            moved["turn"].as_u64(),
            moved["legal"].clone(),
            moved["ply"].as_u64().unwrap(),
        );
    }
}
