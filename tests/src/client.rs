//! A client of the accounts API, the internal game endpoint and the game
//! sockets, as a real front end (or another service) would use them.

use std::time::Duration;

use awc::ws::{Frame, Message};
use futures_util::{SinkExt, StreamExt};
use mancala_proto::game::{CreatedGame, ServerMessage};
use mancala_proto::{ClientMessage, Session};
use serde_json::{Value, json};

/// Something that went wrong talking to the servers.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("http: {0}")]
    Http(String),
    #[error("unexpected answer {status}: {body}")]
    Status { status: u16, body: String },
    #[error("socket: {0}")]
    Socket(String),
    #[error("socket closed")]
    Closed,
    #[error("bad message: {0}")]
    Decode(String),
}

/// HTTP to the services.
#[derive(Clone)]
pub struct Api {
    client: awc::Client,
    /// The accounts API (matchmaking).
    pub accounts: String,
    /// game-room.
    pub games: String,
}

impl Api {
    pub fn new(accounts: &str, games: &str) -> Api {
        Api {
            // Each socket holds a connection: no pool limit (awc's default
            // of 100 would queue the rest).
            client: awc::Client::builder()
                .connector(awc::Connector::new().limit(0))
                .timeout(Duration::from_secs(30))
                .finish(),
            accounts: accounts.trim_end_matches('/').to_owned(),
            games: games.trim_end_matches('/').to_owned(),
        }
    }

    async fn post(
        &self,
        url: String,
        body: Value,
        token: Option<&str>,
    ) -> Result<Value, ClientError> {
        let mut request = self.client.post(url);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let mut response = request
            .send_json(&body)
            .await
            .map_err(|e| ClientError::Http(e.to_string()))?;
        let bytes = response
            .body()
            .await
            .map_err(|e| ClientError::Http(e.to_string()))?;
        if !response.status().is_success() {
            return Err(ClientError::Status {
                status: response.status().as_u16(),
                body: String::from_utf8_lossy(&bytes).into_owned(),
            });
        }
        serde_json::from_slice(&bytes).map_err(|e| ClientError::Decode(e.to_string()))
    }

    /// A new guest session.
    pub async fn guest(&self) -> Result<Session, ClientError> {
        let body = self
            .post(format!("{}/v1/auth/guest", self.accounts), json!({}), None)
            .await?;
        serde_json::from_value(body).map_err(|e| ClientError::Decode(e.to_string()))
    }

    /// Exchanges a refresh token for a new session (each works once).
    pub async fn refresh(&self, refresh_token: &str) -> Result<Session, ClientError> {
        let body = self
            .post(
                format!("{}/v1/auth/refresh", self.accounts),
                json!({"refresh_token": refresh_token}),
                None,
            )
            .await?;
        serde_json::from_value(body).map_err(|e| ClientError::Decode(e.to_string()))
    }

    /// Creates a game through game-room's internal endpoint.
    pub async fn create_game(
        &self,
        service_token: &str,
        variant: &str,
        seats: [uuid::Uuid; 2],
        rated: bool,
    ) -> Result<CreatedGame, ClientError> {
        let mut body = json!({
            "variant": {"variant": variant},
            "seats": [{"player": {"id": seats[0]}}, {"player": {"id": seats[1]}}],
            "rated": rated,
        });
        // A rated game needs a clock; ten minutes a side outlasts any run.
        if rated {
            body["time_control"] = json!({"initial_secs": 600, "increment_secs": 0});
        }
        let created = self
            .post(
                format!("{}/internal/v1/games", self.games),
                body,
                Some(service_token),
            )
            .await?;
        serde_json::from_value(created).map_err(|e| ClientError::Decode(e.to_string()))
    }

    /// Opens a game socket (`path` is `/v1/games/{id}/play` or `/watch`).
    pub async fn socket(&self, path: &str) -> Result<GameSocket, ClientError> {
        let url = format!("{}{path}", self.games.replacen("http", "ws", 1));
        let (_, framed) = self
            .client
            .ws(url)
            .max_frame_size(1 << 20)
            .connect()
            .await
            .map_err(|e| ClientError::Socket(e.to_string()))?;
        Ok(GameSocket { framed })
    }
}

/// One game socket.
pub struct GameSocket {
    framed: actix_codec::Framed<awc::BoxedSocket, awc::ws::Codec>,
}

impl GameSocket {
    pub async fn send(&mut self, message: &ClientMessage) -> Result<(), ClientError> {
        let text =
            serde_json::to_string(message).map_err(|e| ClientError::Decode(e.to_string()))?;
        self.framed
            .send(Message::Text(text.into()))
            .await
            .map_err(|e| ClientError::Socket(e.to_string()))
    }

    /// The next message, answering pings on the way.
    pub async fn receive(&mut self) -> Result<ServerMessage, ClientError> {
        loop {
            match self.framed.next().await {
                Some(Ok(Frame::Text(bytes))) => {
                    return serde_json::from_slice(&bytes)
                        .map_err(|e| ClientError::Decode(e.to_string()));
                }
                Some(Ok(Frame::Ping(bytes))) => {
                    let _ = self.framed.send(Message::Pong(bytes)).await;
                }
                Some(Ok(Frame::Close(_))) | None => return Err(ClientError::Closed),
                Some(Ok(_)) => {}
                Some(Err(error)) => return Err(ClientError::Socket(error.to_string())),
            }
        }
    }

    pub async fn close(mut self) {
        let _ = self.framed.send(Message::Close(None)).await;
    }
}

/// A socket speaking `{"t", "d"}` JSON without a fixed message type: the
/// load generator reads lobby and game messages alike.
pub struct JsonSocket {
    framed: actix_codec::Framed<awc::BoxedSocket, awc::ws::Codec>,
}

impl JsonSocket {
    /// Opens `url` (`ws://…`) with the client's unlimited connection pool.
    pub async fn open(api: &Api, url: &str) -> Result<JsonSocket, ClientError> {
        let (_, framed) = api
            .client
            .ws(url)
            .max_frame_size(1 << 20)
            .connect()
            .await
            .map_err(|e| ClientError::Socket(e.to_string()))?;
        Ok(JsonSocket { framed })
    }

    pub async fn send(&mut self, message: Value) -> Result<(), ClientError> {
        self.framed
            .send(Message::Text(message.to_string().into()))
            .await
            .map_err(|e| ClientError::Socket(e.to_string()))
    }

    /// The next message, answering pings on the way.
    pub async fn receive(&mut self) -> Result<Value, ClientError> {
        let bytes = self.receive_text().await?;
        serde_json::from_slice(&bytes).map_err(|e| ClientError::Decode(e.to_string()))
    }

    /// The next text frame as it came, for a reader that decodes only
    /// what it needs (thousands of watchers on one thread).
    pub async fn receive_text(&mut self) -> Result<bytes::Bytes, ClientError> {
        loop {
            match self.framed.next().await {
                Some(Ok(Frame::Text(bytes))) => return Ok(bytes),
                Some(Ok(Frame::Ping(bytes))) => {
                    let _ = self.framed.send(Message::Pong(bytes)).await;
                }
                Some(Ok(Frame::Close(_))) | None => return Err(ClientError::Closed),
                Some(Ok(_)) => {}
                Some(Err(error)) => return Err(ClientError::Socket(error.to_string())),
            }
        }
    }

    pub async fn close(mut self) {
        let _ = self.framed.send(Message::Close(None)).await;
    }
}

impl Api {
    /// A JSON POST to `url` (absolute), with a bearer token when given.
    pub async fn post_json(
        &self,
        url: String,
        body: Value,
        token: Option<&str>,
    ) -> Result<Value, ClientError> {
        self.post(url, body, token).await
    }

    /// A JSON GET to `url` (absolute).
    pub async fn get_json(&self, url: String) -> Result<Value, ClientError> {
        let mut response = self
            .client
            .get(url)
            .send()
            .await
            .map_err(|e| ClientError::Http(e.to_string()))?;
        let bytes = response
            .body()
            .limit(1 << 22)
            .await
            .map_err(|e| ClientError::Http(e.to_string()))?;
        if !response.status().is_success() {
            return Err(ClientError::Status {
                status: response.status().as_u16(),
                body: String::from_utf8_lossy(&bytes).into_owned(),
            });
        }
        serde_json::from_slice(&bytes).map_err(|e| ClientError::Decode(e.to_string()))
    }
}
