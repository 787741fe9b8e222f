use std::time::Duration;

use awc::ws::{Frame, Message};
use futures_util::{SinkExt, StreamExt};
use mancala_game_room::{Application, GameRoomSettings};
use mancala_platform::binary::Service as _;
use mancala_platform::jwt::{TokenSigner, random_seed};
use mancala_platform::testing::{TestStores, database_url, redis_url};
use mancala_platform::{Clock, ExposeSecret, SecretString, Settings};
use mancala_proto::game::{CreatedGame, GameState, Moved, ServerMessage};
use mancala_proto::{ErrorBody, ErrorCode};
use serde_json::{Value, json};
use uuid::Uuid;

pub(crate) const SERVICE_TOKEN: &str = "test-service-token";

/// A GET's status and JSON body, sent first on `client`. A connection
/// that could not be used (a pooled one the server closed after its
/// keep-alive while the test waited on something else, or one awc's
/// connector reports disconnected on a loaded machine) never carried the
/// request: the GET is sent again, on a client of its own with `timeout`,
/// until `retry_for` has passed.
async fn answer(
    client: &awc::Client,
    url: &str,
    timeout: Duration,
    retry_for: Duration,
) -> (u16, Value) {
    let deadline = std::time::Instant::now() + retry_for;
    let mut sent = client.get(url).send().await;
    while let Err(awc::error::SendRequestError::Connect(error)) = &sent
        && std::time::Instant::now() < deadline
    {
        eprintln!("connecting for {url} failed ({error}); again");
        tokio::time::sleep(Duration::from_millis(200)).await;
        let fresh = awc::Client::builder().timeout(timeout).finish();
        sent = fresh.get(url).send().await;
    }
    let mut response = sent.unwrap();
    let bytes = response.body().limit(1 << 20).await.unwrap();
    (
        response.status().as_u16(),
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

/// Shared stores and keys for one or more instances.
pub(crate) struct World {
    pub(crate) stores: TestStores,
    pub(crate) signer: TokenSigner,
    pub(crate) clock: Clock,
}

/// One running game-room instance.
pub(crate) struct Instance {
    pub(crate) base: String,
    pub(crate) ws_base: String,
    pub(crate) client: awc::Client,
    pub(crate) server: actix_web::dev::ServerHandle,
    pub(crate) hosted: mancala_game_room::game::HostedGames,
}

impl World {
    pub(crate) async fn new() -> World {
        let stores = TestStores::new().await.unwrap();
        let signer =
            TokenSigner::from_seed(&random_seed(), "arena-test", "players-test", 900).unwrap();
        World {
            stores,
            signer,
            clock: Clock::manual(Clock::system().now_millis()),
        }
    }

    /// A new world and one instance serving it: most tests' start.
    pub(crate) async fn with_instance() -> (World, Instance) {
        let world = World::new().await;
        let instance = world.instance().await;
        (world, instance)
    }

    pub(crate) async fn instance(&self) -> Instance {
        self.instance_with(&database_url(&self.stores.database), &[])
            .await
    }

    /// An instance with its own database URL (a proxy) and extra settings.
    pub(crate) async fn instance_with(
        &self,
        database: &SecretString,
        extra: &[(&str, &str)],
    ) -> Instance {
        let mut vars: Vec<(String, String)> = [
            ("APP_BIND", "127.0.0.1:0".to_owned()),
            ("DATABASE_URL", database.expose_secret().to_owned()),
            ("REDIS_URL", redis_url().expose_secret().to_owned()),
            ("APP_REDIS_PREFIX", self.stores.prefix.clone()),
            ("APP_JWT_ISSUER", "arena-test".to_owned()),
            ("APP_JWT_AUDIENCE", "players-test".to_owned()),
            ("APP_JWT_PUBLIC_KEY", self.signer.public_key().to_owned()),
            ("APP_INTERNAL_TOKEN", SERVICE_TOKEN.to_owned()),
            ("APP_WS_TICK_MS", "20".to_owned()),
            ("APP_ALLOWED_ORIGINS", "https://friends.example".to_owned()),
            // The manual clock stands still, so credits would never refill.
            ("APP_WS_RATE", "100000/1".to_owned()),
            ("APP_ROOM_SWEEP_MS", "50".to_owned()),
            // Tests jump the clock by hours; only the silence test wants
            // sockets to time out.
            ("APP_WS_TIMEOUT_SECS", "100000000".to_owned()),
            ("APP_WS_PING_SECS", "100000000".to_owned()),
            ("APP_AI_DEADLINE_MS", "500".to_owned()),
        ]
        .into_iter()
        .map(|(name, value)| (name.to_owned(), value))
        .collect();
        for (name, value) in extra {
            vars.push(((*name).to_owned(), (*value).to_owned()));
        }
        let settings = Settings::from_vars(vars.clone()).unwrap();
        let hosted = GameRoomSettings::from_vars(vars).unwrap();
        let application = Application::build(settings, hosted, self.clock.clone())
            .await
            .unwrap();
        let port = application.port();
        let server = application.handle();
        let hosted = application.service().hosted().clone();
        actix_web::rt::spawn(application.run_until_stopped());
        Instance {
            base: format!("http://127.0.0.1:{port}"),
            ws_base: format!("ws://127.0.0.1:{port}"),
            client: awc::Client::builder()
                .timeout(Duration::from_secs(30))
                .finish(),
            server,
            hosted,
        }
    }

    /// A player row and an access token for them.
    pub(crate) async fn player(&self, name: &str) -> (Uuid, String) {
        let id = self.stores.player(name).await.unwrap();
        (id, self.token(id))
    }

    /// A fresh access token for a player, as a refresh would give.
    pub(crate) fn token(&self, player: Uuid) -> String {
        self.signer
            .issue(&player.to_string(), self.clock.now_secs())
            .unwrap()
    }

    /// Two new players, South and North: each one's id and token.
    pub(crate) async fn two_players(&self) -> ((Uuid, String), (Uuid, String)) {
        (self.player("South").await, self.player("North").await)
    }

    pub(crate) async fn cleanup(self) {
        self.stores.cleanup().await.unwrap();
    }
}

impl Instance {
    pub(crate) async fn post(&self, path: &str, body: Value, token: Option<&str>) -> (u16, Value) {
        let mut request = self.client.post(format!("{}{path}", self.base));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let mut response = request.send_json(&body).await.unwrap();
        let bytes = response.body().await.unwrap();
        (
            response.status().as_u16(),
            serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        )
    }

    pub(crate) async fn get(&self, path: &str) -> (u16, Value) {
        let url = format!("{}{path}", self.base);
        answer(
            &self.client,
            &url,
            Duration::from_secs(5),
            Duration::from_secs(1),
        )
        .await
    }

    /// [`Instance::get`] for an answer that may take up to `wait`, on a
    /// connection of its own (a pooled one the server closed after its
    /// keep-alive while a long test ran would fail the request).
    pub(crate) async fn get_within(&self, path: &str, wait: Duration) -> (u16, Value) {
        let url = format!("{}{path}", self.base);
        let client = awc::Client::builder().timeout(wait).finish();
        answer(&client, &url, wait, wait).await
    }

    /// A GET with `token` as the bearer, its answer waited for up to `wait`.
    pub(crate) async fn get_as(&self, path: &str, token: &str, wait: Duration) -> (u16, Value) {
        let client = awc::Client::builder().timeout(wait).finish();
        let mut response = client
            .get(format!("{}{path}", self.base))
            .bearer_auth(token)
            .send()
            .await
            .unwrap();
        let bytes = response.body().limit(1 << 20).await.unwrap();
        (
            response.status().as_u16(),
            serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        )
    }

    /// Creates a game between two seats (JSON seat requests).
    pub(crate) async fn create(
        &self,
        variant: Value,
        seats: [Value; 2],
        rated: bool,
    ) -> CreatedGame {
        // A rated game needs a clock; three hours is longer than any
        // test's clock jumps between moves, so it never decides one.
        let mut body = json!({"variant": variant, "seats": seats, "rated": rated});
        if rated {
            body["time_control"] = json!({"initial_secs": 10_800, "increment_secs": 0});
        }
        self.create_with(body).await
    }

    /// A casual game of `variant` with these seats, seat 0 moving first.
    pub(crate) async fn casual(&self, variant: &str, seats: [Value; 2]) -> CreatedGame {
        self.create(json!({"variant": variant}), seats, false).await
    }

    /// A game of `variant` asked for as rated, with these seats.
    pub(crate) async fn rated(&self, variant: &str, seats: [Value; 2]) -> CreatedGame {
        self.create(json!({"variant": variant}), seats, true).await
    }

    /// A casual game of `variant` between two new players, both at the board.
    pub(crate) async fn casual_seated(&self, world: &World, variant: &str) -> Seated {
        let (south, north) = world.two_players().await;
        let game = self.casual(variant, [seat(south.0), seat(north.0)]).await;
        let (a, _) = self.play(&game, &south.1).await;
        let (b, _) = self.play(&game, &north.1).await;
        Seated {
            game,
            south,
            north,
            a,
            b,
        }
    }

    /// Creates a game from a whole request body.
    pub(crate) async fn create_with(&self, body: Value) -> CreatedGame {
        let (status, body) = self
            .post("/internal/v1/games", body, Some(SERVICE_TOKEN))
            .await;
        assert_eq!(status, 201, "{body}");
        serde_json::from_value(body).unwrap()
    }

    pub(crate) async fn connect(&self, path: &str) -> Ws {
        self.connect_with(path, None).await
    }

    pub(crate) async fn connect_with(&self, path: &str, origin: Option<&str>) -> Ws {
        let mut request = self
            .client
            .ws(format!("{}{path}", self.ws_base))
            .max_frame_size(1 << 20);
        if let Some(origin) = origin {
            request = request.origin(origin);
        }
        let (_, framed) = request.connect().await.unwrap();
        Ws { framed }
    }

    /// A play socket, authenticated, with its first `state`.
    pub(crate) async fn play(&self, game: &CreatedGame, token: &str) -> (Ws, GameState) {
        let mut ws = self.connect(&game.play_path).await;
        ws.send(json!({"t": "auth", "d": {"token": token}})).await;
        let state = ws.state().await;
        (ws, state)
    }
}

/// A game with both players' sockets open: `a` is South's, `b` North's;
/// each player is their id and token.
pub(crate) struct Seated {
    pub game: CreatedGame,
    pub south: (Uuid, String),
    pub north: (Uuid, String),
    pub a: Ws,
    pub b: Ws,
}

/// A test's end of a socket.
pub(crate) struct Ws {
    framed: actix_codec::Framed<awc::BoxedSocket, awc::ws::Codec>,
}

/// How a socket ended.
#[derive(Debug, PartialEq)]
pub(crate) enum Received {
    Message(ServerMessage),
    Closed(Option<u16>),
}

impl Ws {
    pub(crate) async fn send(&mut self, value: Value) {
        self.send_text(value.to_string()).await;
    }

    pub(crate) async fn send_text(&mut self, text: String) {
        self.framed.send(Message::Text(text.into())).await.unwrap();
    }

    pub(crate) async fn send_raw(&mut self, message: Message) {
        let _ = self.framed.send(message).await;
    }

    /// The next message or the close, skipping pings; fails after 10 s.
    pub(crate) async fn next(&mut self) -> Received {
        loop {
            let frame = tokio::time::timeout(Duration::from_secs(10), self.framed.next())
                .await
                .expect("nothing arrived within 10 s");
            match frame {
                Some(Ok(Frame::Text(bytes))) => {
                    let message = serde_json::from_slice(&bytes)
                        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&bytes)));
                    return Received::Message(message);
                }
                Some(Ok(Frame::Ping(bytes))) => {
                    let _ = self.framed.send(Message::Pong(bytes)).await;
                }
                Some(Ok(Frame::Close(reason))) => {
                    return Received::Closed(reason.map(|r| u16::from(r.code)));
                }
                Some(Ok(_)) => {}
                Some(Err(_)) | None => return Received::Closed(None),
            }
        }
    }

    pub(crate) async fn message(&mut self) -> ServerMessage {
        match self.next().await {
            Received::Message(message) => message,
            Received::Closed(code) => panic!("closed ({code:?}) while waiting for a message"),
        }
    }

    /// The next message that is not presence or a watcher count.
    pub(crate) async fn event(&mut self) -> ServerMessage {
        loop {
            match self.message().await {
                ServerMessage::Presence { .. } | ServerMessage::Watchers { .. } => {}
                other => return other,
            }
        }
    }

    /// Reads until a message `pick` accepts.
    pub(crate) async fn until<T>(&mut self, mut pick: impl FnMut(ServerMessage) -> Option<T>) -> T {
        loop {
            if let Some(found) = pick(self.message().await) {
                return found;
            }
        }
    }

    pub(crate) async fn state(&mut self) -> GameState {
        match self.event().await {
            ServerMessage::State(state) => *state,
            other => panic!("expected a state, got {other:?}"),
        }
    }

    pub(crate) async fn moved(&mut self) -> Moved {
        match self.event().await {
            ServerMessage::Moved(moved) => moved,
            other => panic!("expected a move, got {other:?}"),
        }
    }

    pub(crate) async fn error(&mut self) -> ErrorBody {
        match self.event().await {
            ServerMessage::Error(error) => error,
            other => panic!("expected an error, got {other:?}"),
        }
    }

    pub(crate) async fn expect_error(&mut self, code: ErrorCode) {
        let error = self.error().await;
        assert_eq!(error.code, code, "{}", error.message);
    }

    /// Reads until the socket closes; returns the close code and the last
    /// error sent before it.
    pub(crate) async fn closed(&mut self) -> (Option<u16>, Option<ErrorCode>) {
        let mut last = None;
        loop {
            match self.next().await {
                Received::Message(ServerMessage::Error(error)) => last = Some(error.code),
                Received::Message(_) => {}
                Received::Closed(code) => return (code, last),
            }
        }
    }

    /// Reads without answering pings (a silent client) until the socket
    /// closes or `wait` passes; the close code, if it closed.
    pub(crate) async fn closed_within(&mut self, wait: Duration) -> Option<Option<u16>> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let frame = tokio::time::timeout_at(deadline, self.framed.next())
                .await
                .ok()?;
            match frame {
                Some(Ok(Frame::Close(reason))) => return Some(reason.map(|r| u16::from(r.code))),
                Some(Err(_)) | None => return Some(None),
                Some(Ok(_)) => {}
            }
        }
    }

    pub(crate) async fn play_move(&mut self, pit: u8, ply: u32) {
        self.send(json!({"t": "move", "d": {"pit": pit, "ply": ply}}))
            .await;
    }
}

/// A seat request for a player.
pub(crate) fn seat(id: Uuid) -> Value {
    json!({"player": {"id": id}})
}

/// The seat request of the Beginner AI.
pub(crate) fn beginner() -> Value {
    json!({"ai": {"level": "beginner"}})
}
