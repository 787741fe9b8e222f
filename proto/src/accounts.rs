//! The accounts API's bodies (`/v1/auth/*`, `/v1/me`).

use std::fmt;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

/// `POST /v1/auth/register` and `POST /v1/auth/login`.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Credentials {
    /// 3 to 20 characters of `[A-Za-z0-9_-]`; unique without regard to case.
    #[schema(
        example = "alice",
        min_length = 3,
        max_length = 20,
        pattern = "^[A-Za-z0-9_-]{3,20}$"
    )]
    pub username: String,
    /// 8 to 128 characters.
    #[schema(example = "correct horse battery", min_length = 8, max_length = 128)]
    pub password: String,
}

/// Passwords never reach a log line, even through `{:?}`.
impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credentials")
            .field("username", &self.username)
            .finish_non_exhaustive()
    }
}

/// `POST /v1/auth/refresh` and `POST /v1/auth/logout`.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RefreshRequest {
    pub refresh_token: String,
}

impl fmt::Debug for RefreshRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("RefreshRequest(..)")
    }
}

/// A player as others see them, plus whether they are a guest.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Player {
    /// Stable for life: a guest who registers keeps it.
    pub id: Uuid,
    /// A generated name for guests ("Swift Otter 42"), the username once
    /// registered.
    #[schema(example = "Swift Otter 42")]
    pub display_name: String,
    /// True until the player registers.
    pub guest: bool,
}

/// What signing in (as a guest, by registering, logging in or refreshing)
/// returns.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Session {
    pub player: Player,
    /// A JWT (EdDSA) for `Authorization: Bearer` and the sockets' `auth`.
    pub access_token: String,
    /// Always `Bearer`.
    #[schema(example = "Bearer")]
    pub token_type: String,
    /// Seconds until the access token expires.
    #[schema(example = 900)]
    pub expires_in: u64,
    /// Opaque; exchange it at `/v1/auth/refresh` for a new session. Each
    /// can be used once.
    pub refresh_token: String,
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session")
            .field("player", &self.player)
            .field("expires_in", &self.expires_in)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_stay_out_of_debug_output() {
        let credentials = Credentials {
            username: "alice".into(),
            password: "hunter2hunter2".into(),
        };
        assert!(!format!("{credentials:?}").contains("hunter2"));
        let refresh = RefreshRequest {
            refresh_token: "secret-token".into(),
        };
        assert!(!format!("{refresh:?}").contains("secret"));
    }

    #[test]
    fn unknown_fields_are_refused() {
        let error = serde_json::from_str::<Credentials>(
            r#"{"username":"alice","password":"12345678","admin":true}"#,
        )
        .unwrap_err();
        assert!(error.to_string().contains("unknown field"));
    }
}
