//! The one table of error codes: each stable snake_case code with its HTTP
//! status, its WebSocket close code (when the error ends the socket) and
//! what it means. Clients may match on the codes; they never change meaning.

use std::fmt;

use mancala_rules::PlayError;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Every error a client can receive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    MalformedJson,
    UnknownField,
    InvalidInput,
    PayloadTooLarge,
    Unauthenticated,
    TokenExpired,
    TokenInvalid,
    Forbidden,
    InvalidCredentials,
    /// The account was closed (by a moderator, or by its player).
    AccountClosed,
    UsernameTaken,
    AlreadyRegistered,
    NotFound,
    MethodNotAllowed,
    RequestTimeout,
    RateLimited,
    PitOutOfRange,
    EmptyPit,
    MustFeed,
    GameOver,
    NotYourTurn,
    StalePly,
    NotAllowed,
    CountdownRunning,
    InviteExpired,
    InviteUsed,
    InRankedGame,
    RankedBanned,
    Unavailable,
    Internal,
}

/// The body of every error response: `{"code": "...", "message": "..."}`,
/// with `retry_after` when the client should come back later.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ErrorBody {
    pub code: ErrorCode,
    pub message: String,
    /// Seconds to wait before trying again: on `unavailable` from a busy
    /// server and on `rate_limited`. Over HTTP it repeats the `Retry-After`
    /// header; on a socket, which has no headers, it is the only place.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after: Option<u64>,
    /// The game the error is about, where there is one to go to (the
    /// ranked game in progress of `in_ranked_game`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub game_id: Option<uuid::Uuid>,
}

impl ErrorBody {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> ErrorBody {
        ErrorBody {
            code,
            message: message.into(),
            retry_after: None,
            game_id: None,
        }
    }
}

/// WebSocket close code for a policy violation (RFC 6455).
pub const CLOSE_POLICY: u16 = 1008;
/// WebSocket close code for a message too big to process.
pub const CLOSE_TOO_BIG: u16 = 1009;
/// WebSocket close code for an unexpected server condition.
pub const CLOSE_INTERNAL: u16 = 1011;
/// WebSocket close code for "try again later".
pub const CLOSE_TRY_AGAIN: u16 = 1013;
/// WebSocket close code when the server restarts or drains: reconnect now.
pub const CLOSE_RESTART: u16 = 1012;
/// The game is hosted by another instance: reconnect where `elsewhere`
/// says (or anywhere, after a moment).
pub const CLOSE_ELSEWHERE: u16 = 4001;
/// The game's friend room closed.
pub const CLOSE_ROOM_CLOSED: u16 = 4002;

impl ErrorCode {
    /// Every code, for documentation and tests.
    pub const ALL: [ErrorCode; 30] = [
        ErrorCode::MalformedJson,
        ErrorCode::UnknownField,
        ErrorCode::InvalidInput,
        ErrorCode::PayloadTooLarge,
        ErrorCode::Unauthenticated,
        ErrorCode::TokenExpired,
        ErrorCode::TokenInvalid,
        ErrorCode::Forbidden,
        ErrorCode::InvalidCredentials,
        ErrorCode::AccountClosed,
        ErrorCode::UsernameTaken,
        ErrorCode::AlreadyRegistered,
        ErrorCode::NotFound,
        ErrorCode::MethodNotAllowed,
        ErrorCode::RequestTimeout,
        ErrorCode::RateLimited,
        ErrorCode::PitOutOfRange,
        ErrorCode::EmptyPit,
        ErrorCode::MustFeed,
        ErrorCode::GameOver,
        ErrorCode::NotYourTurn,
        ErrorCode::StalePly,
        ErrorCode::NotAllowed,
        ErrorCode::CountdownRunning,
        ErrorCode::InviteExpired,
        ErrorCode::InviteUsed,
        ErrorCode::InRankedGame,
        ErrorCode::RankedBanned,
        ErrorCode::Unavailable,
        ErrorCode::Internal,
    ];

    /// The stable snake_case name.
    pub const fn as_str(self) -> &'static str {
        match self {
            ErrorCode::MalformedJson => "malformed_json",
            ErrorCode::UnknownField => "unknown_field",
            ErrorCode::InvalidInput => "invalid_input",
            ErrorCode::PayloadTooLarge => "payload_too_large",
            ErrorCode::Unauthenticated => "unauthenticated",
            ErrorCode::TokenExpired => "token_expired",
            ErrorCode::TokenInvalid => "token_invalid",
            ErrorCode::Forbidden => "forbidden",
            ErrorCode::InvalidCredentials => "invalid_credentials",
            ErrorCode::AccountClosed => "account_closed",
            ErrorCode::UsernameTaken => "username_taken",
            ErrorCode::AlreadyRegistered => "already_registered",
            ErrorCode::NotFound => "not_found",
            ErrorCode::MethodNotAllowed => "method_not_allowed",
            ErrorCode::RequestTimeout => "request_timeout",
            ErrorCode::RateLimited => "rate_limited",
            ErrorCode::PitOutOfRange => "pit_out_of_range",
            ErrorCode::EmptyPit => "empty_pit",
            ErrorCode::MustFeed => "must_feed",
            ErrorCode::GameOver => "game_over",
            ErrorCode::NotYourTurn => "not_your_turn",
            ErrorCode::StalePly => "stale_ply",
            ErrorCode::NotAllowed => "not_allowed",
            ErrorCode::CountdownRunning => "countdown_running",
            ErrorCode::InviteExpired => "invite_expired",
            ErrorCode::InviteUsed => "invite_used",
            ErrorCode::InRankedGame => "in_ranked_game",
            ErrorCode::RankedBanned => "ranked_banned",
            ErrorCode::Unavailable => "unavailable",
            ErrorCode::Internal => "internal",
        }
    }

    /// The HTTP status a REST endpoint answers with.
    pub const fn http_status(self) -> u16 {
        match self {
            ErrorCode::MalformedJson | ErrorCode::UnknownField | ErrorCode::InvalidInput => 400,
            ErrorCode::Unauthenticated
            | ErrorCode::TokenExpired
            | ErrorCode::TokenInvalid
            | ErrorCode::InvalidCredentials => 401,
            ErrorCode::Forbidden | ErrorCode::RankedBanned | ErrorCode::AccountClosed => 403,
            ErrorCode::NotFound => 404,
            ErrorCode::MethodNotAllowed => 405,
            ErrorCode::RequestTimeout => 408,
            ErrorCode::UsernameTaken
            | ErrorCode::AlreadyRegistered
            | ErrorCode::GameOver
            | ErrorCode::NotYourTurn
            | ErrorCode::StalePly
            | ErrorCode::NotAllowed
            | ErrorCode::CountdownRunning
            | ErrorCode::InviteUsed
            | ErrorCode::InRankedGame => 409,
            ErrorCode::InviteExpired => 410,
            ErrorCode::PayloadTooLarge => 413,
            ErrorCode::PitOutOfRange | ErrorCode::EmptyPit | ErrorCode::MustFeed => 422,
            ErrorCode::RateLimited => 429,
            ErrorCode::Internal => 500,
            ErrorCode::Unavailable => 503,
        }
    }

    /// The WebSocket close code when this error ends a socket; `None` when
    /// the socket stays open and only an `error` message is sent.
    pub const fn ws_close(self) -> Option<u16> {
        match self {
            ErrorCode::Unauthenticated | ErrorCode::TokenExpired | ErrorCode::TokenInvalid => {
                Some(CLOSE_POLICY)
            }
            ErrorCode::PayloadTooLarge => Some(CLOSE_TOO_BIG),
            ErrorCode::Internal => Some(CLOSE_INTERNAL),
            ErrorCode::Unavailable => Some(CLOSE_TRY_AGAIN),
            _ => None,
        }
    }

    /// What the code means, for documentation.
    pub const fn description(self) -> &'static str {
        match self {
            ErrorCode::MalformedJson => {
                "The body or message is not valid JSON of the expected shape."
            }
            ErrorCode::UnknownField => "The body or message has a field the API does not know.",
            ErrorCode::InvalidInput => "A field's value is out of its allowed range or format.",
            ErrorCode::PayloadTooLarge => "The body or frame exceeds the size limit.",
            ErrorCode::Unauthenticated => "No access token was given where one is required.",
            ErrorCode::TokenExpired => "The access or refresh token has expired.",
            ErrorCode::TokenInvalid => {
                "The token is forged, malformed, revoked or for another audience."
            }
            ErrorCode::Forbidden => {
                "The player may not do this (for example, move in a seat that is not theirs, or use a moderator's route without the role)."
            }
            ErrorCode::InvalidCredentials => "The username or password is wrong.",
            ErrorCode::AccountClosed => {
                "The account is closed (by a moderator, or by its player): it cannot sign in."
            }
            ErrorCode::UsernameTaken => "The username is already taken, in any letter case.",
            ErrorCode::AlreadyRegistered => {
                "The player already has a username; log in instead of registering again."
            }
            ErrorCode::NotFound => "No such resource.",
            ErrorCode::MethodNotAllowed => "The resource exists, but not for this HTTP method.",
            ErrorCode::RequestTimeout => "The request's body did not arrive in time.",
            ErrorCode::RateLimited => {
                "Too many requests; retry after the Retry-After header's seconds."
            }
            ErrorCode::PitOutOfRange => "The pit number is not one of the mover's pits.",
            ErrorCode::EmptyPit => "The pit holds no stones.",
            ErrorCode::MustFeed => {
                "Oware: the opponent is empty and this move does not feed them, while another would."
            }
            ErrorCode::GameOver => "The game has ended.",
            ErrorCode::NotYourTurn => "It is the other seat's turn.",
            ErrorCode::NotAllowed => {
                "Not in this game or not now (undo outside AI and hotseat games, a rematch before the end)."
            }
            ErrorCode::CountdownRunning => {
                "The absent player may still return; wait for the countdown to run out."
            }
            ErrorCode::InviteExpired => "The invite is older than 24 hours.",
            ErrorCode::InviteUsed => "The invite was already accepted.",
            ErrorCode::InRankedGame => {
                "The player has a ranked game in progress (its id is in `game_id`): one at a time."
            }
            ErrorCode::RankedBanned => {
                "The player is banned from ranked play for a while for not playing games (no-starts, aborts, leaving, letting the clock run, quick resignations) or by a moderator; `retry_after` says when it ends, `GET /v1/me/fair-play` why."
            }
            ErrorCode::StalePly => "The move's ply is not the next one; a fresh `state` follows.",
            ErrorCode::Unavailable => "A store the service needs is unreachable; retry shortly.",
            ErrorCode::Internal => "An unexpected server error; nothing about it is shown.",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<PlayError> for ErrorCode {
    fn from(error: PlayError) -> ErrorCode {
        match error {
            PlayError::PitOutOfRange { .. } => ErrorCode::PitOutOfRange,
            PlayError::EmptyPit { .. } => ErrorCode::EmptyPit,
            PlayError::MustFeed { .. } => ErrorCode::MustFeed,
            PlayError::GameOver => ErrorCode::GameOver,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_serialise_as_their_stable_names() {
        for code in ErrorCode::ALL {
            let text = serde_json::to_string(&code).unwrap();
            assert_eq!(text, format!("\"{}\"", code.as_str()));
            assert_eq!(serde_json::from_str::<ErrorCode>(&text).unwrap(), code);
        }
    }

    #[test]
    fn every_code_is_documented_unique_and_an_error_status() {
        let mut names: Vec<&str> = ErrorCode::ALL.iter().map(|code| code.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ErrorCode::ALL.len());
        for code in ErrorCode::ALL {
            assert!(code.description().len() > 10, "{code}");
            assert!((400..600).contains(&code.http_status()), "{code}");
            assert!(
                code.as_str()
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c == '_')
            );
        }
    }

    #[test]
    fn rule_errors_keep_the_rules_crates_names() {
        for error in [
            PlayError::PitOutOfRange { pit: 7, pits: 6 },
            PlayError::EmptyPit { pit: 1 },
            PlayError::MustFeed { pit: 1 },
            PlayError::GameOver,
        ] {
            assert_eq!(ErrorCode::from(error).as_str(), error.code());
        }
    }

    #[test]
    fn error_bodies_reject_unknown_fields() {
        let body: ErrorBody =
            serde_json::from_str(r#"{"code":"not_found","message":"no game"}"#).unwrap();
        assert_eq!(body.code, ErrorCode::NotFound);
        assert!(
            serde_json::from_str::<ErrorBody>(r#"{"code":"not_found","message":"x","extra":1}"#)
                .is_err()
        );
    }
}
