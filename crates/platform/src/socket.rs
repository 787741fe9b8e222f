//! The one WebSocket stack every socket endpoint uses (the lobby, play and
//! watch): frames in, size-capped and paid for with message credits, parsed
//! into the endpoint's message type; text out; a heartbeat that pings the
//! client and closes it after a silence; the time to authenticate; and
//! closing with an error and a policy code. Deadlines read the injected
//! clock, so tests move them by hand.

use std::sync::LazyLock;
use std::time::Duration;

use actix_ws::{AggregatedMessage, AggregatedMessageStream, CloseCode, CloseReason, ProtocolError};
use bytestring::ByteString;
use mancala_proto::{ErrorBody, ErrorCode};
use serde::de::DeserializeOwned;

use crate::clock::Clock;
use crate::http::ApiError;

/// Set once when the process stops (after its drain): every socket then
/// closes with 1012, so its client reconnects at once (to another instance,
/// or to this one restarted) rather than hold the graceful stop open until
/// its timeout. Process-wide, as the signal that stops it is.
static STOPPING: LazyLock<tokio::sync::watch::Sender<bool>> =
    LazyLock::new(|| tokio::sync::watch::channel(false).0);

/// Closes every socket of this process with 1012 (service restart), and
/// any opened from now on at its first read.
pub fn close_all_for_restart() {
    STOPPING.send_replace(true);
}

/// What a socket allows, from its service's settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SocketLimits {
    /// The largest message a client may send.
    pub max_frame_bytes: usize,
    /// A socket must authenticate within this.
    pub auth_timeout: Duration,
    /// The server pings this often.
    pub ping_every: Duration,
    /// A client silent this long (not even a pong) is closed.
    pub silence: Duration,
    /// Message credits: this many at once...
    pub message_burst: u32,
    /// ...refilled at this many a second.
    pub messages_per_second: u32,
}

/// How every socket endpoint (lobby, play, watch) behaves: one group of
/// settings for the services that serve sockets.
#[derive(Clone, Debug, clap::Args)]
pub struct SocketSettings {
    /// Origins (comma-separated) besides the server's own host whose pages
    /// may open sockets. Clients that send no `Origin` (not browsers) are
    /// let in; the token protects play.
    #[arg(env = "APP_ALLOWED_ORIGINS", default_value = "")]
    pub allowed_origins: crate::http::AllowedOrigins,
    /// A socket must authenticate within this many seconds.
    #[arg(env = "APP_WS_AUTH_TIMEOUT_SECS", default_value = "5",
          value_parser = crate::values::positive_seconds)]
    pub auth_timeout: Duration,
    /// How often the server pings a socket, in seconds.
    #[arg(env = "APP_WS_PING_SECS", default_value = "10",
          value_parser = crate::values::positive_seconds)]
    pub ping_every: Duration,
    /// A socket silent this many seconds (not even a pong) is closed; a
    /// lobby socket's queue tickets lapse after the lobby grace.
    #[arg(env = "APP_WS_TIMEOUT_SECS", default_value = "30",
          value_parser = crate::values::positive_seconds)]
    pub client_timeout: Duration,
    /// Lobby and game sockets one player may have open, over every service
    /// (0: no limit).
    #[arg(env = "APP_LIMIT_SOCKETS_PER_PLAYER", default_value_t = 20)]
    pub sockets_per_player: u32,
}

impl SocketSettings {
    /// The limits of one endpoint, whose frames and message rate are its own.
    pub fn limits(
        &self,
        max_frame_bytes: usize,
        message_burst: u32,
        messages_per_second: u32,
    ) -> SocketLimits {
        SocketLimits {
            max_frame_bytes,
            auth_timeout: self.auth_timeout,
            ping_every: self.ping_every,
            silence: self.client_timeout,
            message_burst,
            messages_per_second,
        }
    }
}

/// What the client did.
#[derive(Debug)]
pub enum Inbound<M> {
    Message(M),
    /// A message that does not parse; answer with the error, change nothing.
    Invalid(ErrorBody),
    /// Out of message credits: close with 1008.
    Flood,
    /// A frame over the size limit: close with 1009.
    TooBig,
    /// The client closed, or the connection broke.
    Closed,
    /// A control frame (ping, pong): nothing to do but note the sign of life.
    Nothing,
}

/// Message credits: `burst` at most, refilled at `rate` per second.
#[derive(Debug)]
struct Credits {
    available: f64,
    burst: f64,
    rate: f64,
    at: u64,
}

impl Credits {
    fn take(&mut self, now: u64) -> bool {
        let elapsed = now.saturating_sub(self.at) as f64 / 1000.0;
        self.available = (self.available + elapsed * self.rate).min(self.burst);
        self.at = now;
        if self.available >= 1.0 {
            self.available -= 1.0;
            true
        } else {
            false
        }
    }
}

/// Parses a client message; the error says what was wrong.
pub fn parse<M: DeserializeOwned>(text: &str) -> Result<M, ErrorBody> {
    serde_json::from_str(text).map_err(|error| {
        let message = error.to_string();
        let code = if message.contains("unknown field") {
            ErrorCode::UnknownField
        } else {
            ErrorCode::MalformedJson
        };
        ErrorBody::new(code, message)
    })
}

/// An `error` message, as every socket sends it: `{"t":"error","d":{...}}`.
pub fn error_text(code: ErrorCode, message: &str) -> ByteString {
    error_body_text(&ErrorBody::new(code, message))
}

/// An `error` message with all of `body`, its `retry_after` included.
pub fn error_body_text(body: &ErrorBody) -> ByteString {
    let text = serde_json::json!({"t": "error", "d": body}).to_string();
    ByteString::from(text)
}

/// One socket's two ends and its timers; `M` is what clients send.
pub struct Socket<M> {
    session: actix_ws::Session,
    stream: AggregatedMessageStream,
    clock: Clock,
    credits: Credits,
    opened_at: u64,
    heard_at: u64,
    pinged_at: u64,
    limits: SocketLimits,
    stopping: tokio::sync::watch::Receiver<bool>,
    _messages: std::marker::PhantomData<fn() -> M>,
}

impl<M: DeserializeOwned> Socket<M> {
    pub fn new(
        session: actix_ws::Session,
        stream: actix_ws::MessageStream,
        limits: SocketLimits,
        clock: Clock,
    ) -> Socket<M> {
        let now = clock.now_millis();
        let stream = stream
            .max_frame_size(limits.max_frame_bytes)
            .aggregate_continuations()
            .max_continuation_size(limits.max_frame_bytes);
        Socket {
            session,
            stream,
            credits: Credits {
                available: f64::from(limits.message_burst),
                burst: f64::from(limits.message_burst),
                rate: f64::from(limits.messages_per_second),
                at: now,
            },
            clock,
            opened_at: now,
            heard_at: now,
            pinged_at: now,
            limits,
            stopping: STOPPING.subscribe(),
            _messages: std::marker::PhantomData,
        }
    }

    /// The next thing the client did.
    pub async fn next(&mut self) -> Inbound<M> {
        let frame = tokio::select! {
            frame = self.stream.recv() => frame,
            _ = self.stopping.wait_for(|stopping| *stopping) => {
                let restart = CloseReason {
                    code: CloseCode::Restart,
                    description: Some("the server is restarting; reconnect".into()),
                };
                let _ = self.session.clone().close(Some(restart)).await;
                return Inbound::Closed;
            }
        };
        let now = self.clock.now_millis();
        self.heard_at = now;
        match frame {
            // RFC 6455 §5.5.1: a Close is answered with a Close (its code
            // echoed), so the client sees the handshake finish at once
            // rather than waiting for the connection to drop.
            Some(Ok(AggregatedMessage::Close(reason))) => {
                let echo = reason.map(|reason| CloseReason {
                    code: reason.code,
                    description: None,
                });
                let _ = self.session.clone().close(echo).await;
                Inbound::Closed
            }
            None => Inbound::Closed,
            Some(Err(ProtocolError::Overflow)) => Inbound::TooBig,
            Some(Err(_)) => Inbound::Closed,
            Some(Ok(AggregatedMessage::Ping(bytes))) => {
                if self.session.pong(&bytes).await.is_err() {
                    return Inbound::Closed;
                }
                Inbound::Nothing
            }
            Some(Ok(AggregatedMessage::Pong(_))) => Inbound::Nothing,
            Some(Ok(AggregatedMessage::Binary(_))) => {
                if !self.credits.take(now) {
                    return Inbound::Flood;
                }
                Inbound::Invalid(ErrorBody::new(
                    ErrorCode::MalformedJson,
                    "messages are JSON text frames",
                ))
            }
            Some(Ok(AggregatedMessage::Text(text))) => {
                if !self.credits.take(now) {
                    return Inbound::Flood;
                }
                match parse(&text) {
                    Ok(message) => Inbound::Message(message),
                    Err(error) => Inbound::Invalid(error),
                }
            }
        }
    }

    /// Sends text; false once the socket is closed.
    pub async fn send(&mut self, text: ByteString) -> bool {
        self.session.text(text).await.is_ok()
    }

    /// Sends a message as JSON; false once the socket is closed.
    pub async fn send_json<T: serde::Serialize>(&mut self, message: &T) -> bool {
        let text = serde_json::to_string(message).unwrap_or_default();
        self.send(ByteString::from(text)).await
    }

    pub async fn send_error(&mut self, code: ErrorCode, message: &str) -> bool {
        self.send(error_text(code, message)).await
    }

    /// Sends `refusal` whole, its `retry_after` included.
    pub async fn send_refusal(&mut self, refusal: &ApiError) -> bool {
        self.send(error_body_text(&refusal.body())).await
    }

    /// On each tick: ping when due; false when the client has been silent
    /// too long (the caller closes).
    pub async fn keep_alive(&mut self) -> bool {
        let now = self.clock.now_millis();
        if now.saturating_sub(self.heard_at) >= self.limits.silence.as_millis() as u64 {
            return false;
        }
        if now.saturating_sub(self.pinged_at) >= self.limits.ping_every.as_millis() as u64 {
            self.pinged_at = now;
            return self.session.ping(b"").await.is_ok();
        }
        true
    }

    /// Whether the time to authenticate is up.
    pub fn auth_expired(&self) -> bool {
        let elapsed = self.clock.now_millis().saturating_sub(self.opened_at);
        elapsed >= self.limits.auth_timeout.as_millis() as u64
    }

    /// Turns away a socket nobody signed in for that found no place
    /// ([`crate::open_sockets`]): `rate_limited` with when to try again,
    /// then 1013 (try again later).
    pub async fn turn_away(&mut self, refused: crate::open_sockets::Refused) {
        let refusal = ApiError {
            message: refused.message().to_owned(),
            ..ApiError::rate_limited(crate::open_sockets::RETRY_AFTER_SECS)
        };
        self.send_refusal(&refusal).await;
        self.close(mancala_proto::error::CLOSE_TRY_AGAIN, "too many sockets")
            .await;
    }

    /// Sends an error, then closes with `close_code`.
    pub async fn close_with(&mut self, code: ErrorCode, message: &str, close_code: u16) {
        self.send_error(code, message).await;
        self.close(close_code, message).await;
    }

    pub async fn close(&mut self, code: u16, description: &str) {
        let reason = CloseReason {
            code: CloseCode::from(code),
            description: Some(description.to_owned()),
        };
        let _ = self.session.clone().close(Some(reason)).await;
    }
}

#[cfg(test)]
mod tests {
    use mancala_proto::ClientMessage;

    use super::*;

    #[test]
    fn credits_refill_over_time_up_to_the_burst() {
        let mut credits = Credits {
            available: 3.0,
            burst: 3.0,
            rate: 2.0,
            at: 0,
        };
        assert!((0..3).all(|_| credits.take(0)));
        assert!(!credits.take(0));
        assert!(credits.take(500), "one credit back after half a second");
        assert!(!credits.take(500));
        assert!((0..3).all(|_| credits.take(60_000)));
        assert!(!credits.take(60_000), "never more than the burst");
    }

    #[test]
    fn bad_messages_get_their_codes() {
        let parse = parse::<ClientMessage>;
        assert_eq!(parse("{").unwrap_err().code, ErrorCode::MalformedJson);
        assert_eq!(
            parse(r#"{"t":"move","d":{"pit":1,"ply":1,"x":1}}"#)
                .unwrap_err()
                .code,
            ErrorCode::UnknownField
        );
        assert_eq!(
            parse(r#"{"t":"fly"}"#).unwrap_err().code,
            ErrorCode::MalformedJson
        );
        assert!(matches!(parse(r#"{"t":"ping"}"#), Ok(ClientMessage::Ping)));
    }

    #[test]
    fn errors_have_the_sockets_shape() {
        let text = error_text(ErrorCode::RateLimited, "slow down");
        let parsed: mancala_proto::game::ServerMessage = serde_json::from_str(&text).unwrap();
        assert!(matches!(
            parsed,
            mancala_proto::game::ServerMessage::Error(ErrorBody {
                code: ErrorCode::RateLimited,
                ..
            })
        ));
    }
}
