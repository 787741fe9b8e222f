//! Who is calling: the `Authorization: Bearer <access token>` of a REST
//! request, verified with the public key against the injected clock.
//!
//! Handlers take [`Authenticated`] when a token is required and
//! [`MaybeAuthenticated`] when it is optional (registering a guest). A
//! token that is present but bad is an error in both: a client that sent
//! one meant to be someone.

use std::future::{Ready, ready};

use actix_web::dev::Payload;
use actix_web::http::header::AUTHORIZATION;
use actix_web::{FromRequest, HttpRequest, web};
use mancala_proto::ErrorCode;
use mancala_proto::moderation::Role;
use uuid::Uuid;

use crate::clock::Clock;
use crate::http::ApiError;
use crate::jwt::{TokenError, TokenVerifier};
use crate::revocation::Revocations;

/// Verifies access tokens; shared with handlers as `web::Data`.
#[derive(Clone)]
pub struct Authenticator {
    verifier: TokenVerifier,
    clock: Clock,
    revocations: Revocations,
}

/// Who a socket's token speaks for, and the session it belongs to, which
/// the socket checks on each tick: signing out closes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SocketIdentity {
    pub player: Uuid,
    pub session: Option<String>,
    pub role: Role,
}

impl Authenticator {
    /// `revocations` is the process's one view of the signed-out sessions
    /// (one process may run several services: a sign-out in one must be
    /// refused by the others at once, not a follow later).
    pub fn new(verifier: TokenVerifier, clock: Clock, revocations: Revocations) -> Authenticator {
        Authenticator {
            verifier,
            clock,
            revocations,
        }
    }

    /// The signed-out sessions this authenticator refuses; `follow` them
    /// to learn of other processes' sign-outs.
    pub fn revocations(&self) -> &Revocations {
        &self.revocations
    }

    /// The player an access token speaks for, now.
    pub fn player(&self, token: &str) -> Result<Uuid, ApiError> {
        Ok(self.identify(token)?.player)
    }

    /// The player and session of a socket's `auth` token.
    pub fn identify(&self, token: &str) -> Result<SocketIdentity, ApiError> {
        let invalid = || ApiError::new(ErrorCode::TokenInvalid, "the access token is not valid");
        let claims =
            self.verifier
                .verify(token, self.clock.now_secs())
                .map_err(|error| match error {
                    TokenError::Expired => {
                        ApiError::new(ErrorCode::TokenExpired, "the access token has expired")
                    }
                    TokenError::Invalid => invalid(),
                })?;
        if claims
            .sid
            .as_deref()
            .is_some_and(|sid| self.revocations.is_revoked(sid))
        {
            return Err(ApiError::new(
                ErrorCode::TokenInvalid,
                "this session has been signed out",
            ));
        }
        let player = Uuid::parse_str(&claims.sub).map_err(|_| invalid())?;
        Ok(SocketIdentity {
            player,
            session: claims.sid,
            role: claims.role,
        })
    }

    /// Whether a socket opened as `identity` must close: its session was
    /// signed out since.
    pub fn signed_out(&self, identity: &SocketIdentity) -> bool {
        identity
            .session
            .as_deref()
            .is_some_and(|sid| self.revocations.is_revoked(sid))
    }
}

/// A request whose bearer token is valid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Authenticated {
    pub player_id: Uuid,
    /// As the token carries it: a role taken away ends the sessions whose
    /// tokens carried it.
    pub role: Role,
}

/// A request from a moderator or an admin; anyone else is refused with
/// `forbidden` (403), whatever the route.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Moderator {
    pub player_id: Uuid,
    pub role: Role,
}

impl Moderator {
    /// Refuses a moderator who is not an admin.
    pub fn admin(&self) -> Result<(), ApiError> {
        if self.role == Role::Admin {
            Ok(())
        } else {
            Err(ApiError::new(
                ErrorCode::Forbidden,
                "only an admin may do this",
            ))
        }
    }
}

/// A request with a valid bearer token, or with none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MaybeAuthenticated(pub Option<Authenticated>);

fn bearer(request: &HttpRequest) -> Result<Option<&str>, ApiError> {
    let Some(value) = request.headers().get(AUTHORIZATION) else {
        return Ok(None);
    };
    value
        .to_str()
        .ok()
        .and_then(|text| text.strip_prefix("Bearer "))
        .map(|token| Some(token.trim()))
        .ok_or_else(|| {
            ApiError::new(
                ErrorCode::TokenInvalid,
                "the Authorization header must be `Bearer <access token>`",
            )
        })
}

fn authenticate(request: &HttpRequest) -> Result<Option<Authenticated>, ApiError> {
    let Some(token) = bearer(request)? else {
        return Ok(None);
    };
    let authenticator = request
        .app_data::<web::Data<Authenticator>>()
        .ok_or_else(|| {
            tracing::error!("no Authenticator in app data");
            ApiError::internal()
        })?;
    let identity = authenticator.identify(token)?;
    Ok(Some(Authenticated {
        player_id: identity.player,
        role: identity.role,
    }))
}

impl FromRequest for Authenticated {
    type Error = ApiError;
    type Future = Ready<Result<Authenticated, ApiError>>;

    fn from_request(request: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(authenticate(request).and_then(|caller| {
            caller.ok_or_else(|| {
                ApiError::new(ErrorCode::Unauthenticated, "an access token is required")
            })
        }))
    }
}

impl FromRequest for Moderator {
    type Error = ApiError;
    type Future = Ready<Result<Moderator, ApiError>>;

    fn from_request(request: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let caller = match Authenticated::from_request(request, payload).into_inner() {
            Ok(caller) => caller,
            Err(error) => return ready(Err(error)),
        };
        ready(if caller.role.moderates() {
            Ok(Moderator {
                player_id: caller.player_id,
                role: caller.role,
            })
        } else {
            Err(ApiError::new(
                ErrorCode::Forbidden,
                "this needs a moderator's role",
            ))
        })
    }
}

impl FromRequest for MaybeAuthenticated {
    type Error = ApiError;
    type Future = Ready<Result<MaybeAuthenticated, ApiError>>;

    fn from_request(request: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(authenticate(request).map(MaybeAuthenticated))
    }
}

#[cfg(test)]
mod tests {
    use actix_web::{App, HttpResponse, test};
    use mancala_proto::ErrorBody;

    use super::*;
    use crate::jwt::{TokenSigner, random_seed};

    async fn whoami(caller: Authenticated) -> HttpResponse {
        HttpResponse::Ok().body(caller.player_id.to_string())
    }

    async fn maybe(caller: MaybeAuthenticated) -> HttpResponse {
        HttpResponse::Ok().body(caller.0.map_or("guest".into(), |c| c.player_id.to_string()))
    }

    #[actix_web::test]
    async fn bearer_tokens_are_checked_against_the_injected_clock() {
        let signer = TokenSigner::from_seed(&random_seed(), "arena", "players", 60).unwrap();
        let verifier =
            TokenVerifier::from_public_key(signer.public_key(), "arena", "players", 0).unwrap();
        let clock = Clock::manual(1_800_000_000_000);
        let app = test::init_service(
            App::new()
                .app_data(web::Data::new(Authenticator::new(
                    verifier,
                    clock.clone(),
                    Revocations::default(),
                )))
                .route("/me", web::get().to(whoami))
                .route("/maybe", web::get().to(maybe)),
        )
        .await;
        let id = Uuid::new_v4();
        let token = signer.issue(&id.to_string(), clock.now_secs()).unwrap();
        let call = |path: &'static str, header: Option<String>| {
            let mut request = test::TestRequest::get().uri(path);
            if let Some(header) = header {
                request = request.insert_header((AUTHORIZATION, header));
            }
            request.to_request()
        };

        let response = test::call_service(&app, call("/me", Some(format!("Bearer {token}")))).await;
        assert_eq!(test::read_body(response).await, id.to_string());
        let response = test::call_service(&app, call("/maybe", None)).await;
        assert_eq!(test::read_body(response).await, "guest");

        for (path, header, code) in [
            ("/me", None, ErrorCode::Unauthenticated),
            (
                "/me",
                Some(format!("Basic {token}")),
                ErrorCode::TokenInvalid,
            ),
            (
                "/maybe",
                Some("Bearer nonsense".to_owned()),
                ErrorCode::TokenInvalid,
            ),
        ] {
            let response = test::call_service(&app, call(path, header)).await;
            assert_eq!(response.status().as_u16(), 401);
            let body: ErrorBody = test::read_body_json(response).await;
            assert_eq!(body.code, code);
        }

        clock.advance(61_000);
        let response = test::call_service(&app, call("/me", Some(format!("Bearer {token}")))).await;
        let body: ErrorBody = test::read_body_json(response).await;
        assert_eq!(body.code, ErrorCode::TokenExpired);
    }
}
