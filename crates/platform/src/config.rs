//! Typed settings from the environment: `DATABASE_URL` and `REDIS_URL` by
//! convention, `APP_`-prefixed names for the rest, each with a default that
//! works on a developer's machine.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::Duration;

use secrecy::SecretString;

/// How log lines are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogFormat {
    /// One JSON object a line, for log collectors.
    Json,
    /// Human-readable lines, for a terminal.
    Pretty,
}

/// Everything a service is configured with.
#[derive(Debug)]
pub struct Settings {
    /// `APP_BIND`: where the HTTP server listens.
    pub bind: SocketAddr,
    /// `DATABASE_URL`: Postgres, the system of record. May hold a password.
    pub database_url: SecretString,
    /// `REDIS_URL`: Redis, for what is shared and fast. May hold a password.
    pub redis_url: SecretString,
    /// `APP_REDIS_PREFIX`: prefixed to every Redis key, so that deployments
    /// (and tests) can share one Redis.
    pub redis_prefix: String,
    /// `APP_LOG_FORMAT`: `json` or `pretty`.
    pub log_format: LogFormat,
    /// `APP_JWT_ISSUER`: the `iss` of access tokens.
    pub jwt_issuer: String,
    /// `APP_JWT_AUDIENCE`: the `aud` of access tokens.
    pub jwt_audience: String,
    /// `APP_ACCESS_TOKEN_TTL_SECS`: how long an access token lives.
    pub access_token_ttl: Duration,
    /// `APP_JWT_LEEWAY_SECS`: clock skew tolerated when checking `exp`.
    pub jwt_leeway: Duration,
    /// `APP_REFRESH_TOKEN_TTL_DAYS`: how long a refresh token family lives.
    pub refresh_token_ttl: Duration,
    /// `APP_JWT_PRIVATE_KEY`: base64url Ed25519 seed; the matchmaking
    /// service signs with it. Unset: a random key per start, which suits a
    /// single development process only.
    pub jwt_private_key: Option<SecretString>,
    /// `APP_JWT_PUBLIC_KEY`: base64url Ed25519 public key; the other services
    /// verify with it.
    pub jwt_public_key: Option<String>,
    /// `APP_HTTP_BODY_TIMEOUT_SECS` (10) and `APP_HTTP_REQUESTS_PER_ADDRESS`
    /// (64, 0 for none): how long a body may take, and how many requests
    /// one address may have in flight.
    pub http: crate::guard::HttpLimits,
}

/// A setting that could not be read. Never holds the value itself, which
/// may be a secret.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("setting {name}: {reason}")]
pub struct ConfigError {
    pub name: &'static str,
    pub reason: String,
}

impl Settings {
    /// Reads the settings from the process environment.
    pub fn from_env() -> Result<Settings, ConfigError> {
        Settings::from_vars(std::env::vars())
    }

    /// Reads the settings from name-value pairs: the environment in `main`,
    /// a literal list in tests.
    pub fn from_vars(
        vars: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Settings, ConfigError> {
        let vars: HashMap<String, String> = vars.into_iter().collect();
        let text = |name: &'static str, default: &str| -> String {
            vars.get(name)
                .map_or_else(|| default.to_owned(), Clone::clone)
        };
        let seconds = |name: &'static str, default: u64| -> Result<Duration, ConfigError> {
            parse(name, &text(name, &default.to_string())).map(Duration::from_secs)
        };
        let log_format = match text("APP_LOG_FORMAT", "pretty").as_str() {
            "json" => LogFormat::Json,
            "pretty" => LogFormat::Pretty,
            other => {
                return Err(ConfigError {
                    name: "APP_LOG_FORMAT",
                    reason: format!("expected json or pretty, got {other:?}"),
                });
            }
        };
        let days: u64 = parse(
            "APP_REFRESH_TOKEN_TTL_DAYS",
            &text("APP_REFRESH_TOKEN_TTL_DAYS", "30"),
        )?;
        let access_token_ttl = seconds("APP_ACCESS_TOKEN_TTL_SECS", 15 * 60)?;
        if access_token_ttl.is_zero() {
            return Err(ConfigError {
                name: "APP_ACCESS_TOKEN_TTL_SECS",
                reason: "must be positive".into(),
            });
        }
        Ok(Settings {
            bind: parse("APP_BIND", &text("APP_BIND", "127.0.0.1:8080"))?,
            database_url: SecretString::from(text(
                "DATABASE_URL",
                "postgres://postgres@127.0.0.1:5432/mancala",
            )),
            redis_url: SecretString::from(text("REDIS_URL", "redis://127.0.0.1:6379")),
            redis_prefix: text("APP_REDIS_PREFIX", "mancala:"),
            log_format,
            jwt_issuer: text("APP_JWT_ISSUER", "mancala-arena"),
            jwt_audience: text("APP_JWT_AUDIENCE", "mancala-arena"),
            access_token_ttl,
            jwt_leeway: seconds("APP_JWT_LEEWAY_SECS", 30)?,
            refresh_token_ttl: Duration::from_secs(days.saturating_mul(24 * 60 * 60)),
            jwt_private_key: vars
                .get("APP_JWT_PRIVATE_KEY")
                .map(|key| SecretString::from(key.clone())),
            jwt_public_key: vars.get("APP_JWT_PUBLIC_KEY").cloned(),
            http: crate::guard::HttpLimits {
                body_timeout: seconds("APP_HTTP_BODY_TIMEOUT_SECS", 10)?
                    .max(Duration::from_secs(1)),
                requests_per_address: parse(
                    "APP_HTTP_REQUESTS_PER_ADDRESS",
                    &text("APP_HTTP_REQUESTS_PER_ADDRESS", "64"),
                )?,
            },
        })
    }
}

fn parse<T: std::str::FromStr>(name: &'static str, text: &str) -> Result<T, ConfigError>
where
    T::Err: std::fmt::Display,
{
    text.parse().map_err(|error: T::Err| ConfigError {
        name,
        reason: error.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use secrecy::ExposeSecret;

    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(name, value)| (name.to_string(), value.to_string()))
            .collect()
    }

    #[test]
    fn defaults_work_locally() {
        let settings = Settings::from_vars(vec![]).unwrap();
        assert_eq!(settings.bind.to_string(), "127.0.0.1:8080");
        assert_eq!(settings.redis_url.expose_secret(), "redis://127.0.0.1:6379");
        assert_eq!(settings.access_token_ttl, Duration::from_secs(900));
        assert_eq!(settings.refresh_token_ttl, Duration::from_secs(30 * 86_400));
        assert_eq!(settings.log_format, LogFormat::Pretty);
    }

    #[test]
    fn the_environment_overrides_the_defaults() {
        let settings = Settings::from_vars(vars(&[
            ("APP_BIND", "0.0.0.0:9000"),
            ("DATABASE_URL", "postgres://app:hunter2@db/mancala"),
            ("APP_LOG_FORMAT", "json"),
            ("APP_ACCESS_TOKEN_TTL_SECS", "60"),
        ]))
        .unwrap();
        assert_eq!(settings.bind.port(), 9000);
        assert_eq!(settings.log_format, LogFormat::Json);
        assert_eq!(settings.access_token_ttl, Duration::from_secs(60));
        assert_eq!(
            settings.database_url.expose_secret(),
            "postgres://app:hunter2@db/mancala"
        );
    }

    #[test]
    fn secrets_never_print() {
        let settings = Settings::from_vars(vars(&[(
            "DATABASE_URL",
            "postgres://app:hunter2@db/mancala",
        )]))
        .unwrap();
        let printed = format!("{settings:?}");
        assert!(!printed.contains("hunter2"), "{printed}");
    }

    #[test]
    fn bad_values_name_the_setting_not_the_value() {
        let error = Settings::from_vars(vars(&[("APP_BIND", "nowhere")])).unwrap_err();
        assert_eq!(error.name, "APP_BIND");
        let error = Settings::from_vars(vars(&[("APP_LOG_FORMAT", "xml")])).unwrap_err();
        assert_eq!(error.name, "APP_LOG_FORMAT");
        let error = Settings::from_vars(vars(&[("APP_ACCESS_TOKEN_TTL_SECS", "0")])).unwrap_err();
        assert_eq!(error.name, "APP_ACCESS_TOKEN_TTL_SECS");
    }
}
