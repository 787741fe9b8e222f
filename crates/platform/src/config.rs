//! The settings every service shares, declared (see [`crate::cli`]):
//! `DATABASE_URL` and `REDIS_URL` by convention, `APP_`-prefixed names for
//! the rest, each with a default that works on a developer's machine.

use std::net::SocketAddr;
use std::time::Duration;

use secrecy::SecretString;

pub use crate::telemetry::LogFormat;
pub use crate::values::{
    ConfigError, days, millis, positive_millis, positive_seconds, seconds, secret,
};

/// What every service is configured with.
#[derive(Clone, Debug, clap::Args)]
pub struct Settings {
    /// Where the HTTP server listens, HOST:PORT.
    #[arg(env = "APP_BIND", default_value = "127.0.0.1:8080")]
    pub bind: SocketAddr,
    /// Postgres, the system of record (may hold a password).
    #[arg(env = "DATABASE_URL", hide_env_values = true, value_parser = secret,
          default_value = "postgres://postgres@127.0.0.1:5432/mancala")]
    pub database_url: SecretString,
    /// A read replica of Postgres (may hold a password): profiles, game
    /// records, live lists and leaderboards are read from it, which may lag
    /// the primary by its replication delay. Unset: everything is read
    /// from the primary.
    #[arg(env = "DATABASE_READ_URL", hide_env_values = true, value_parser = secret)]
    pub database_read_url: Option<SecretString>,
    /// Redis, for what is shared and fast (may hold a password).
    #[arg(env = "REDIS_URL", hide_env_values = true, value_parser = secret,
          default_value = "redis://127.0.0.1:6379")]
    pub redis_url: SecretString,
    /// `single` (one server) or `cluster` (a Redis Cluster, Redis 7: then
    /// `REDIS_URL` lists one or more of its nodes, comma separated).
    #[arg(env = "APP_REDIS_MODE", value_enum, default_value = "single")]
    pub redis_mode: crate::kv::RedisMode,
    /// Prefixed to every Redis key, so deployments (and tests) can share
    /// one Redis.
    #[arg(env = "APP_REDIS_PREFIX", default_value = "mancala:")]
    pub redis_prefix: String,
    /// Log lines as `json` (for collectors) or `pretty` (for a terminal).
    #[arg(env = "APP_LOG_FORMAT", value_enum, default_value = "pretty")]
    pub log_format: LogFormat,
    /// Which log lines are written (tracing's filter syntax).
    #[arg(env = "RUST_LOG", default_value = "info", value_parser = crate::telemetry::log_filter)]
    pub log_filter: String,
    /// The `iss` of access tokens.
    #[arg(env = "APP_JWT_ISSUER", default_value = "mancala-arena")]
    pub jwt_issuer: String,
    /// The `aud` of access tokens.
    #[arg(env = "APP_JWT_AUDIENCE", default_value = "mancala-arena")]
    pub jwt_audience: String,
    /// How long an access token lives, in seconds.
    #[arg(env = "APP_ACCESS_TOKEN_TTL_SECS", default_value = "900", value_parser = positive_seconds)]
    pub access_token_ttl: Duration,
    /// Clock skew tolerated when checking a token's `exp`, in seconds.
    #[arg(env = "APP_JWT_LEEWAY_SECS", default_value = "30", value_parser = seconds)]
    pub jwt_leeway: Duration,
    /// How long a refresh token family lives, in days.
    #[arg(env = "APP_REFRESH_TOKEN_TTL_DAYS", default_value = "30", value_parser = days)]
    pub refresh_token_ttl: Duration,
    /// Base64url Ed25519 seed that matchmaking signs tokens with. Unset: a
    /// random key per start, which suits a single process only.
    #[arg(env = "APP_JWT_PRIVATE_KEY", hide_env_values = true, value_parser = secret)]
    pub jwt_private_key: Option<SecretString>,
    /// Base64url Ed25519 public key the other services verify tokens with.
    #[arg(env = "APP_JWT_PUBLIC_KEY")]
    pub jwt_public_key: Option<String>,
    /// Moves this process's clock by this many seconds (back when
    /// negative), for rehearsing a time of day (a tournament schedule's
    /// start) end to end. Every service of a deployment must share it.
    /// 0 in production.
    #[arg(
        env = "APP_CLOCK_OFFSET_SECS",
        default_value = "0",
        allow_hyphen_values = true
    )]
    pub clock_offset_secs: i64,
    #[command(flatten)]
    pub http: crate::guard::HttpLimits,
    #[command(flatten)]
    pub admission: crate::admission::AdmissionLimits,
    #[command(flatten)]
    pub anonymous_sockets: crate::open_sockets::AnonymousSocketLimits,
}

/// Who this process is, among the instances of its service.
#[derive(Clone, Debug, clap::Args)]
pub struct InstanceSettings {
    /// Names this instance in game and pairing leases and watcher counts.
    /// Default: the host's name and the port the process bound (a fresh id
    /// when it binds none), so that a process restarted in its place takes
    /// back the games it hosted at once. Set it where host names repeat.
    #[arg(env = "APP_INSTANCE_ID")]
    configured_id: Option<String>,
    // Made when read (not a clap default, which is made once a process).
    #[arg(skip = fresh_id())]
    fresh_id: String,
    /// The bearer token services present to each other on `/internal/v1/*`.
    /// Unset: a random one per process, so nothing outside can call (one
    /// process, `arena`, shares it between its services).
    #[arg(env = "APP_INTERNAL_TOKEN", hide_env_values = true, value_parser = secret)]
    pub internal_token: Option<SecretString>,
}

impl InstanceSettings {
    /// `APP_INSTANCE_ID`, or the id made up for this instance.
    pub fn id(&self) -> &str {
        self.configured_id.as_deref().unwrap_or(&self.fresh_id)
    }
    /// Names the instance after where it runs, unless an id was set: the
    /// host's name and the port bound. A process restarted in the same
    /// place (same host, same port; in Kubernetes, the same pod) gets the
    /// same name, and so may take back at once the leases that name it
    /// rather than wait for them to lapse; two live processes cannot share
    /// it, for one port cannot be bound twice on one host. (Were it shared
    /// by mistake, the epoch fence still refuses the stale host's writes.)
    pub fn name_after(&mut self, bound: std::net::SocketAddr) {
        if self.configured_id.is_none()
            && let Some(host) = host_name()
        {
            self.fresh_id = format!("{host}:{}", bound.port());
        }
    }

    /// The token, made up once if none was given.
    pub fn internal_token(&mut self) -> SecretString {
        self.internal_token
            .get_or_insert_with(|| SecretString::from(uuid::Uuid::new_v4().to_string()))
            .clone()
    }
}

/// The kernel's name for this host (a container's or pod's own), or the
/// `HOSTNAME` the shell exported.
fn host_name() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
}

fn fresh_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

impl Settings {
    /// Reads the settings from name-value pairs: tests, and services built
    /// in-process. A binary reads its [`Declaration`](crate::cli::Declaration).
    pub fn from_vars(
        vars: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Settings, ConfigError> {
        crate::cli::from_vars(vars)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use secrecy::ExposeSecret;

    use super::*;

    /// Name-value pairs as the settings read them.
    pub(crate) fn vars(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
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
        let error = Settings::from_vars(vars(&[("DATABASE_URL", "")]));
        assert!(error.is_ok(), "a URL is checked when connecting, not here");
        let error = Settings::from_vars(vars(&[("APP_JWT_LEEWAY_SECS", "hunter2")])).unwrap_err();
        assert_eq!(error.name, "APP_JWT_LEEWAY_SECS");
        assert!(!error.to_string().contains("hunter2"), "{error}");
    }

    fn instance(configured: Option<&str>) -> InstanceSettings {
        InstanceSettings {
            configured_id: configured.map(str::to_owned),
            fresh_id: fresh_id(),
            internal_token: None,
        }
    }

    #[test]
    fn a_process_restarted_in_its_place_keeps_its_name_and_no_two_ports_share_one() {
        let at = |port: u16| std::net::SocketAddr::from(([127, 0, 0, 1], port));
        let (mut before, mut after, mut beside) = (instance(None), instance(None), instance(None));
        assert_ne!(before.id(), after.id(), "unnamed: a fresh id each");
        before.name_after(at(8080));
        after.name_after(at(8080));
        beside.name_after(at(8081));
        assert_eq!(before.id(), after.id());
        assert_ne!(before.id(), beside.id());
        assert!(before.id().ends_with(":8080"), "{}", before.id());
        let mut named = instance(Some("room-a"));
        named.name_after(at(8080));
        assert_eq!(named.id(), "room-a", "a configured id wins");
    }
}
