//! A test's lobby (and game) sockets.

use std::time::Duration;

use awc::ws::{Frame, Message};
use futures_util::{SinkExt, StreamExt};
use mancala_proto::lobby::{LobbyServerMessage, Matched, QueueStatus};
use serde_json::{Value, json};

pub(crate) struct Socket {
    framed: actix_codec::Framed<awc::BoxedSocket, awc::ws::Codec>,
}

impl Socket {
    pub(crate) async fn open(base: &str, path: &str) -> Socket {
        let client = awc::Client::builder()
            .timeout(Duration::from_secs(30))
            .finish();
        let url = format!("{}{path}", base.replacen("http", "ws", 1));
        let (_, framed) = client
            .ws(url)
            .max_frame_size(1 << 20)
            .connect()
            .await
            .unwrap();
        Socket { framed }
    }

    /// A lobby socket, authenticated.
    pub(crate) async fn lobby(base: &str, token: &str) -> Socket {
        let mut socket = Socket::open(base, "/v1/lobby").await;
        socket
            .send(json!({"t": "auth", "d": {"token": token}}))
            .await;
        socket
    }

    pub(crate) async fn send(&mut self, value: Value) {
        self.framed
            .send(Message::Text(value.to_string().into()))
            .await
            .unwrap();
    }

    /// The next JSON message within `wait`, or `None`.
    pub(crate) async fn next_within(&mut self, wait: Duration) -> Option<Value> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let frame = tokio::time::timeout_at(deadline, self.framed.next())
                .await
                .ok()??;
            match frame {
                Ok(Frame::Text(bytes)) => return serde_json::from_slice(&bytes).ok(),
                Ok(Frame::Ping(bytes)) => {
                    let _ = self.framed.send(Message::Pong(bytes)).await;
                }
                Ok(Frame::Close(_)) | Err(_) => return None,
                Ok(_) => {}
            }
        }
    }

    /// The next message of type `t` within `wait`.
    pub(crate) async fn find(&mut self, t: &str, wait: Duration) -> Option<Value> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let message = self.next_within(left).await?;
            if message["t"] == t {
                return Some(message);
            }
        }
    }

    pub(crate) async fn matched(&mut self) -> Matched {
        let message = self
            .find("matched", Duration::from_secs(20))
            .await
            .expect("matched");
        match serde_json::from_value(message).unwrap() {
            LobbyServerMessage::Matched(matched) => matched,
            other => panic!("{other:?}"),
        }
    }

    pub(crate) async fn status(&mut self) -> QueueStatus {
        let message = self
            .find("queue_status", Duration::from_secs(10))
            .await
            .expect("status");
        match serde_json::from_value(message).unwrap() {
            LobbyServerMessage::QueueStatus(status) => status,
            other => panic!("{other:?}"),
        }
    }

    pub(crate) async fn join(&mut self, variant: &str, minutes: u32, increment: u32) {
        self.send(json!({"t": "queue_join", "d": {
            "variant": variant,
            "time_control": {"initial_secs": minutes * 60, "increment_secs": increment},
        }}))
        .await;
    }
}
