//! Refresh tokens: opaque, random, and stored only as their SHA-256, so a
//! copy of the database holds no usable token. A token is 32 random bytes,
//! base64url: guessing one is hopeless, and hashing it needs no salt.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};

/// A refresh token as given to the client.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct RefreshToken(String);

impl std::fmt::Debug for RefreshToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RefreshToken(..)")
    }
}

impl RefreshToken {
    /// A token from 32 random bytes the caller drew from the OS generator.
    pub(crate) fn from_random(bytes: [u8; 32]) -> RefreshToken {
        RefreshToken(URL_SAFE_NO_PAD.encode(bytes))
    }

    /// A token the client presented; anything that is not 32 bytes of
    /// base64url cannot be one of ours.
    pub(crate) fn parse(text: &str) -> Option<RefreshToken> {
        let bytes = URL_SAFE_NO_PAD.decode(text).ok()?;
        (bytes.len() == 32).then(|| RefreshToken(text.to_owned()))
    }

    /// What the client receives.
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }

    /// What the database stores and looks up.
    pub(crate) fn digest(&self) -> [u8; 32] {
        Sha256::digest(self.0.as_bytes()).into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_round_trip_and_hash_stably() {
        let token = RefreshToken::from_random([7; 32]);
        let presented = RefreshToken::parse(token.as_str()).unwrap();
        assert_eq!(presented.digest(), token.digest());
        assert_ne!(RefreshToken::from_random([8; 32]).digest(), token.digest());
        assert!(!format!("{token:?}").contains(token.as_str()));
    }

    #[test]
    fn anything_else_is_not_a_token() {
        assert_eq!(RefreshToken::parse(""), None);
        assert_eq!(RefreshToken::parse("not base64!"), None);
        assert_eq!(
            RefreshToken::parse(&URL_SAFE_NO_PAD.encode([1u8; 16])),
            None
        );
    }
}
