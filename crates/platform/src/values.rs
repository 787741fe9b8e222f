//! What a declared setting's text becomes: the value parsers (a unit in
//! the name, a `Duration` in the field, nothing rounded or clamped in
//! silence) and the error of a setting that could not be read. Below
//! every module that declares settings (`config` re-exports them).

use std::time::Duration;

use secrecy::SecretString;

/// A setting that could not be read. Never holds the value itself, which
/// may be a secret.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("setting {name}: {reason}")]
pub struct ConfigError {
    pub name: String,
    pub reason: String,
}

/// Whole seconds (`APP_*_SECS`).
pub fn seconds(text: &str) -> Result<Duration, String> {
    whole(text).map(Duration::from_secs)
}

/// Whole seconds, at least one.
pub fn positive_seconds(text: &str) -> Result<Duration, String> {
    positive(text).map(Duration::from_secs)
}

/// Whole milliseconds (`APP_*_MS`).
pub fn millis(text: &str) -> Result<Duration, String> {
    whole(text).map(Duration::from_millis)
}

/// Whole milliseconds, at least one.
pub fn positive_millis(text: &str) -> Result<Duration, String> {
    positive(text).map(Duration::from_millis)
}

/// Whole days (`APP_*_DAYS`).
pub fn days(text: &str) -> Result<Duration, String> {
    whole(text).map(|days| Duration::from_secs(days.saturating_mul(24 * 60 * 60)))
}

/// A value that must not reach a log line.
pub fn secret(text: &str) -> Result<SecretString, std::convert::Infallible> {
    Ok(SecretString::from(text.to_owned()))
}

fn whole(text: &str) -> Result<u64, String> {
    text.trim()
        .parse()
        .map_err(|_| "expected a whole number".to_owned())
}

fn positive(text: &str) -> Result<u64, String> {
    match whole(text)? {
        0 => Err("must be at least 1".into()),
        value => Ok(value),
    }
}
