//! What every game socket does the same way: frames in (size-capped,
//! rate-limited by credits, parsed into typed messages), text out,
//! heartbeats and deadlines checked against the injected clock, and
//! closing with a policy code.

use actix_web::HttpRequest;
use actix_ws::{AggregatedMessage, AggregatedMessageStream, CloseCode, CloseReason, ProtocolError};
use bytestring::ByteString;
use mancala_platform::Clock;
use mancala_proto::game::ServerMessage;
use mancala_proto::{ClientMessage, ErrorBody, ErrorCode};

use crate::config::RoomSettings;

/// What the client did.
pub enum Inbound {
    Message(ClientMessage),
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
pub fn parse(text: &str) -> Result<ClientMessage, ErrorBody> {
    serde_json::from_str(text).map_err(|error| {
        let message = error.to_string();
        let code = if message.contains("unknown field") {
            ErrorCode::UnknownField
        } else {
            ErrorCode::MalformedJson
        };
        ErrorBody { code, message }
    })
}

/// Whether a browser on `Origin` may open a socket (see the platform's).
pub fn origin_allowed(request: &HttpRequest, settings: &RoomSettings) -> bool {
    mancala_platform::http::origin_allowed(request, &settings.allowed_origins)
}

/// One socket's two ends and its timers.
pub struct Socket {
    session: actix_ws::Session,
    stream: AggregatedMessageStream,
    clock: Clock,
    credits: Credits,
    opened_at: u64,
    heard_at: u64,
    pinged_at: u64,
    ping_every: u64,
    silence_limit: u64,
    auth_limit: u64,
}

impl Socket {
    pub fn new(
        session: actix_ws::Session,
        stream: actix_ws::MessageStream,
        settings: &RoomSettings,
        clock: Clock,
    ) -> Socket {
        let now = clock.now_millis();
        let stream = stream
            .max_frame_size(settings.max_frame_bytes)
            .aggregate_continuations()
            .max_continuation_size(settings.max_frame_bytes);
        Socket {
            session,
            stream,
            credits: Credits {
                available: f64::from(settings.message_burst),
                burst: f64::from(settings.message_burst),
                rate: f64::from(settings.messages_per_second),
                at: now,
            },
            clock,
            opened_at: now,
            heard_at: now,
            pinged_at: now,
            ping_every: settings.ping_every.as_millis() as u64,
            silence_limit: settings.client_timeout.as_millis() as u64,
            auth_limit: settings.auth_timeout.as_millis() as u64,
        }
    }

    /// The next thing the client did.
    pub async fn next(&mut self) -> Inbound {
        let frame = self.stream.recv().await;
        let now = self.clock.now_millis();
        self.heard_at = now;
        match frame {
            None | Some(Ok(AggregatedMessage::Close(_))) => Inbound::Closed,
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
                Inbound::Invalid(ErrorBody {
                    code: ErrorCode::MalformedJson,
                    message: "messages are JSON text frames".into(),
                })
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

    pub async fn send_message(&mut self, message: &ServerMessage) -> bool {
        self.send(crate::game::actor::encode(message)).await
    }

    pub async fn send_error(&mut self, code: ErrorCode, message: &str) -> bool {
        self.send_message(&ServerMessage::Error(ErrorBody {
            code,
            message: message.to_owned(),
        }))
        .await
    }

    /// On each tick: ping when due; false when the client has been silent
    /// too long (the caller closes).
    pub async fn keep_alive(&mut self) -> bool {
        let now = self.clock.now_millis();
        if now.saturating_sub(self.heard_at) >= self.silence_limit {
            return false;
        }
        if now.saturating_sub(self.pinged_at) >= self.ping_every {
            self.pinged_at = now;
            return self.session.ping(b"").await.is_ok();
        }
        true
    }

    /// Whether the time to authenticate is up.
    pub fn auth_expired(&self) -> bool {
        self.clock.now_millis().saturating_sub(self.opened_at) >= self.auth_limit
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
}
