//! Access tokens: EdDSA (Ed25519) JWTs with `iss`, `aud`, `sub`, `iat` and
//! `exp`. Only the matchmaking service holds the private key and signs; the
//! other services verify with the public key.
//!
//! The algorithm is pinned, so a token that names another (`none`, HS256
//! with the public key as secret, ...) is refused. Expiry is checked against
//! a time the caller passes in, so tests control the clock.

use std::sync::Arc;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ed25519_dalek::SigningKey;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use mancala_proto::moderation::Role;
use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Serialize};

/// The claims of an access token.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claims {
    /// The player's id.
    pub sub: String,
    pub iss: String,
    pub aud: String,
    /// Issued at, seconds since the Unix epoch.
    pub iat: u64,
    /// Expires at, seconds since the Unix epoch.
    pub exp: u64,
    /// The session (refresh-token family) the token was issued in: signing
    /// out revokes it (`mancala_platform::revocation`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sid: Option<String>,
    /// What the player may do beyond playing; absent for a player. Taking
    /// a role away ends the player's sessions, so no token outlives it.
    #[serde(default, skip_serializing_if = "Role::is_player")]
    pub role: Role,
}

/// Why a token was refused. Both map to 401; the client refreshes on
/// `Expired` and signs in again on `Invalid`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    #[error("the token has expired")]
    Expired,
    #[error("the token is invalid")]
    Invalid,
}

/// A key that does not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("bad key: {0}")]
pub struct KeyError(String);

/// PKCS#8 v1 wrapping of a 32-byte Ed25519 seed (RFC 8410): this fixed
/// prefix, then the seed.
const PKCS8_ED25519_PREFIX: [u8; 16] = [
    0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
];

/// Signs access tokens. Holds the private key: the matchmaking service only.
pub struct TokenSigner {
    key: EncodingKey,
    public: String,
    issuer: String,
    audience: String,
    ttl_seconds: u64,
}

impl std::fmt::Debug for TokenSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenSigner")
            .field("public", &self.public)
            .field("issuer", &self.issuer)
            .finish_non_exhaustive()
    }
}

impl TokenSigner {
    /// A signer from a base64url Ed25519 seed (the `APP_JWT_PRIVATE_KEY`).
    pub fn from_seed(
        seed: &SecretString,
        issuer: &str,
        audience: &str,
        ttl_seconds: u64,
    ) -> Result<TokenSigner, KeyError> {
        let bytes = URL_SAFE_NO_PAD
            .decode(seed.expose_secret().trim())
            .map_err(|e| KeyError(e.to_string()))?;
        let seed: [u8; 32] = bytes
            .try_into()
            .map_err(|_| KeyError("an Ed25519 seed is 32 bytes".into()))?;
        let public =
            URL_SAFE_NO_PAD.encode(SigningKey::from_bytes(&seed).verifying_key().to_bytes());
        let mut der = PKCS8_ED25519_PREFIX.to_vec();
        der.extend_from_slice(&seed);
        Ok(TokenSigner {
            key: EncodingKey::from_ed_der(&der),
            public,
            issuer: issuer.to_owned(),
            audience: audience.to_owned(),
            ttl_seconds,
        })
    }

    /// The public key, base64url, for the verifying services
    /// (`APP_JWT_PUBLIC_KEY`).
    pub fn public_key(&self) -> &str {
        &self.public
    }

    /// An access token for `subject`, issued at `now` (Unix seconds).
    pub fn issue(&self, subject: &str, now: u64) -> Result<String, KeyError> {
        self.sign(subject, None, Role::Player, now)
    }

    /// An access token for `subject` in session `session`, with `role`.
    pub fn issue_in_session(
        &self,
        subject: &str,
        session: &str,
        role: Role,
        now: u64,
    ) -> Result<String, KeyError> {
        self.sign(subject, Some(session.to_owned()), role, now)
    }

    /// How long the tokens it issues last, in seconds.
    pub fn ttl_seconds(&self) -> u64 {
        self.ttl_seconds
    }

    fn sign(
        &self,
        subject: &str,
        sid: Option<String>,
        role: Role,
        now: u64,
    ) -> Result<String, KeyError> {
        let claims = Claims {
            sub: subject.to_owned(),
            iss: self.issuer.clone(),
            aud: self.audience.clone(),
            iat: now,
            exp: now.saturating_add(self.ttl_seconds),
            sid,
            role,
        };
        jsonwebtoken::encode(&Header::new(Algorithm::EdDSA), &claims, &self.key)
            .map_err(|e| KeyError(e.to_string()))
    }
}

/// Verifies access tokens with the public key: every service.
#[derive(Clone)]
pub struct TokenVerifier {
    key: DecodingKey,
    validation: Validation,
    leeway_seconds: u64,
    /// Tokens whose signature checked out, with their claims: a player's
    /// token is shown on each socket they open (lobby, then each game)
    /// and each request, and checking an Ed25519 signature costs tens of
    /// microseconds where a lookup costs well under one. Only what the
    /// signature proves is kept: expiry is checked on every use against
    /// the caller's clock, and revocation is the caller's, on every use.
    verified: Arc<quick_cache::sync::Cache<String, Claims>>,
}

/// Verified tokens kept (a few hundred bytes each): the players of a busy
/// instance, several times over.
const VERIFIED_TOKENS: usize = 16_384;

impl TokenVerifier {
    /// A verifier from a base64url Ed25519 public key.
    pub fn from_public_key(
        public: &str,
        issuer: &str,
        audience: &str,
        leeway_seconds: u64,
    ) -> Result<TokenVerifier, KeyError> {
        let key =
            DecodingKey::from_ed_components(public.trim()).map_err(|e| KeyError(e.to_string()))?;
        let mut validation = Validation::new(Algorithm::EdDSA);
        validation.set_issuer(&[issuer]);
        validation.set_audience(&[audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        // Expiry is checked below against the caller's clock.
        validation.validate_exp = false;
        Ok(TokenVerifier {
            key,
            validation,
            leeway_seconds,
            verified: Arc::new(quick_cache::sync::Cache::new(VERIFIED_TOKENS)),
        })
    }

    /// The claims of a valid token at time `now` (Unix seconds).
    pub fn verify(&self, token: &str, now: u64) -> Result<Claims, TokenError> {
        let claims = match self.verified.get(token) {
            Some(claims) => claims,
            None => {
                let claims = jsonwebtoken::decode::<Claims>(token, &self.key, &self.validation)
                    .map_err(|_| TokenError::Invalid)?
                    .claims;
                self.verified.insert(token.to_owned(), claims.clone());
                claims
            }
        };
        if claims.exp.saturating_add(self.leeway_seconds) <= now {
            return Err(TokenError::Expired);
        }
        Ok(claims)
    }
}

/// A fresh random seed, base64url: for development, where no key is
/// configured, and for tests.
pub fn random_seed() -> SecretString {
    use argon2::password_hash::rand_core::{OsRng, RngCore};
    let mut seed = [0u8; 32];
    OsRng.fill_bytes(&mut seed);
    SecretString::from(URL_SAFE_NO_PAD.encode(seed))
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: u64 = 1_800_000_000;

    fn pair() -> (TokenSigner, TokenVerifier) {
        let signer = TokenSigner::from_seed(&random_seed(), "arena", "players", 900).unwrap();
        let verifier =
            TokenVerifier::from_public_key(signer.public_key(), "arena", "players", 30).unwrap();
        (signer, verifier)
    }

    #[test]
    fn a_token_round_trips_until_it_expires() {
        let (signer, verifier) = pair();
        let token = signer.issue("player-1", NOW).unwrap();
        let claims = verifier.verify(&token, NOW + 10).unwrap();
        assert_eq!((claims.sub.as_str(), claims.exp), ("player-1", NOW + 900));
        assert!(
            verifier.verify(&token, NOW + 900 + 29).is_ok(),
            "within the leeway"
        );
        assert_eq!(
            verifier.verify(&token, NOW + 900 + 30),
            Err(TokenError::Expired)
        );
    }

    #[test]
    fn a_remembered_token_still_expires_and_proves_nothing_for_another_token() {
        let (signer, verifier) = pair();
        let token = signer.issue("player-1", NOW).unwrap();
        assert!(verifier.verify(&token, NOW).is_ok());
        assert_eq!(verifier.verified.len(), 1, "remembered once verified");
        // The same signature under other claims, and a token of another
        // key: each checked on its own, and refused.
        let mut parts: Vec<&str> = token.split('.').collect();
        let other = signer.issue("player-2", NOW).unwrap();
        parts[1] = other.split('.').nth(1).unwrap();
        assert_eq!(
            verifier.verify(&parts.join("."), NOW),
            Err(TokenError::Invalid)
        );
        let (stranger, _) = pair();
        let foreign = stranger.issue("player-1", NOW).unwrap();
        assert_eq!(verifier.verify(&foreign, NOW), Err(TokenError::Invalid));
        assert_eq!(verifier.verified.len(), 1, "refused tokens are not kept");
        assert_eq!(
            verifier.verify(&token, NOW + 900 + 30),
            Err(TokenError::Expired),
            "a remembered token expires like any other"
        );
    }

    #[test]
    fn a_tampered_token_is_invalid() {
        let (signer, verifier) = pair();
        let token = signer.issue("player-1", NOW).unwrap();
        let mut parts: Vec<String> = token.split('.').map(str::to_owned).collect();
        let forged = Claims {
            sub: "player-2".into(),
            iss: "arena".into(),
            aud: "players".into(),
            iat: NOW,
            exp: NOW + 900,
            sid: None,
            // A player who promotes themself: the signature gives it away.
            role: Role::Admin,
        };
        parts[1] = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&forged).unwrap());
        assert_eq!(
            verifier.verify(&parts.join("."), NOW),
            Err(TokenError::Invalid)
        );
        // A flipped signature byte.
        let mut signature = URL_SAFE_NO_PAD
            .decode(token.rsplit('.').next().unwrap())
            .unwrap();
        signature[0] ^= 1;
        let (head, _) = token.rsplit_once('.').unwrap();
        let flipped = format!("{head}.{}", URL_SAFE_NO_PAD.encode(signature));
        assert_eq!(verifier.verify(&flipped, NOW), Err(TokenError::Invalid));
    }

    #[test]
    fn alg_none_and_other_keys_are_refused() {
        let (signer, verifier) = pair();
        let token = signer.issue("player-1", NOW).unwrap();
        let payload = token.split('.').nth(1).unwrap();
        let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"none","typ":"JWT"}"#);
        assert_eq!(
            verifier.verify(&format!("{header}.{payload}."), NOW),
            Err(TokenError::Invalid)
        );
        let (stranger, _) = pair();
        let foreign = stranger.issue("player-1", NOW).unwrap();
        assert_eq!(verifier.verify(&foreign, NOW), Err(TokenError::Invalid));
        assert_eq!(
            verifier.verify("not a token", NOW),
            Err(TokenError::Invalid)
        );
    }

    #[test]
    fn the_wrong_audience_or_issuer_is_refused() {
        let seed = random_seed();
        let signer = TokenSigner::from_seed(&seed, "arena", "someone-else", 900).unwrap();
        let verifier =
            TokenVerifier::from_public_key(signer.public_key(), "arena", "players", 30).unwrap();
        assert_eq!(
            verifier.verify(&signer.issue("p", NOW).unwrap(), NOW),
            Err(TokenError::Invalid)
        );
        let signer = TokenSigner::from_seed(&seed, "impostor", "players", 900).unwrap();
        assert_eq!(
            verifier.verify(&signer.issue("p", NOW).unwrap(), NOW),
            Err(TokenError::Invalid)
        );
    }

    #[test]
    fn bad_keys_are_errors_and_signers_do_not_print_their_key() {
        assert!(TokenSigner::from_seed(&SecretString::from("short"), "a", "b", 1).is_err());
        assert!(TokenVerifier::from_public_key("%%%", "a", "b", 1).is_err());
        let seed = random_seed();
        let signer = TokenSigner::from_seed(&seed, "a", "b", 1).unwrap();
        assert!(!format!("{signer:?}").contains(seed.expose_secret()));
    }
}
