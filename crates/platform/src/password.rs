//! Password hashing: argon2id with OWASP's parameters (19 MiB of memory,
//! two passes, one lane), stored as PHC strings that carry their own salt
//! and parameters, so the parameters can be raised later without breaking
//! old hashes.
//!
//! Hashing costs tens of milliseconds of CPU on purpose: services call these
//! functions on the low-priority background threads (`background`), never
//! on the async runtime's workers.

use argon2::password_hash::rand_core::OsRng;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::{Algorithm, Argon2, Params, Version};
use secrecy::{ExposeSecret, SecretString};

/// OWASP's argon2id minimum: m = 19 MiB, t = 2, p = 1.
const MEMORY_KIB: u32 = 19 * 1024;
const PASSES: u32 = 2;
const LANES: u32 = 1;

/// Hashing or verification failed for a reason other than a wrong password.
#[derive(Debug, thiserror::Error)]
#[error("password hashing failed: {0}")]
pub struct PasswordError(String);

fn hasher() -> Result<Argon2<'static>, PasswordError> {
    let params =
        Params::new(MEMORY_KIB, PASSES, LANES, None).map_err(|e| PasswordError(e.to_string()))?;
    Ok(Argon2::new(Algorithm::Argon2id, Version::V0x13, params))
}

/// Hashes a password with a fresh random salt, as a PHC string.
pub fn hash(password: &SecretString) -> Result<String, PasswordError> {
    let salt = SaltString::generate(&mut OsRng);
    hasher()?
        .hash_password(password.expose_secret().as_bytes(), &salt)
        .map(|hash| hash.to_string())
        .map_err(|e| PasswordError(e.to_string()))
}

/// Whether `password` matches the PHC string `stored`. A malformed stored
/// hash is an error, not a mismatch.
pub fn verify(password: &SecretString, stored: &str) -> Result<bool, PasswordError> {
    let parsed = PasswordHash::new(stored).map_err(|e| PasswordError(e.to_string()))?;
    match hasher()?.verify_password(password.expose_secret().as_bytes(), &parsed) {
        Ok(()) => Ok(true),
        Err(argon2::password_hash::Error::Password) => Ok(false),
        Err(other) => Err(PasswordError(other.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hash_verifies_its_password_only() {
        let password = SecretString::from("correct horse battery");
        let stored = hash(&password).unwrap();
        assert!(
            stored.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"),
            "{stored}"
        );
        assert!(verify(&password, &stored).unwrap());
        assert!(!verify(&SecretString::from("wrong horse battery"), &stored).unwrap());
        // A fresh salt each time.
        assert_ne!(hash(&password).unwrap(), stored);
    }

    #[test]
    fn a_malformed_stored_hash_is_an_error() {
        assert!(verify(&SecretString::from("x"), "not a phc string").is_err());
    }
}
