//! The matchmaking service's own settings, beside the shared
//! [`mancala_platform::Settings`]. Read from the environment once, in
//! `main`, and passed by value.

use std::collections::HashMap;

use std::time::Duration;

use mancala_platform::ratelimit::Limit;
use mancala_platform::{ConfigError, SecretString};

/// Limits on signing in, per the abuse cases.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AccountSettings {
    /// `APP_LIMIT_SIGNUPS_PER_IP`: guests created and accounts registered
    /// from one address. Each costs a row (and a registration an argon2
    /// hash), so a script must not mint them freely.
    pub signups_per_ip: Limit,
    /// `APP_LIMIT_LOGIN_FAILURES_PER_ACCOUNT`: wrong passwords for one
    /// username, from anywhere: stops guessing one account's password.
    pub login_failures_per_account: Limit,
    /// `APP_LIMIT_LOGIN_FAILURES_PER_IP`: wrong passwords from one address,
    /// for any username: stops spraying one password over many accounts.
    pub login_failures_per_ip: Limit,
    /// `APP_TRUST_FORWARDED_FOR`: take the client's address from
    /// `Forwarded`/`X-Forwarded-For`. Only behind a proxy that sets them;
    /// otherwise a client could pick its own address and dodge the limits.
    pub trust_forwarded_for: bool,
}

impl Default for AccountSettings {
    fn default() -> AccountSettings {
        AccountSettings {
            signups_per_ip: Limit {
                max: 30,
                window_seconds: 3600,
            },
            login_failures_per_account: Limit {
                max: 10,
                window_seconds: 900,
            },
            login_failures_per_ip: Limit {
                max: 50,
                window_seconds: 900,
            },
            trust_forwarded_for: false,
        }
    }
}

impl AccountSettings {
    /// Reads the settings from the process environment.
    pub fn from_env() -> Result<AccountSettings, ConfigError> {
        AccountSettings::from_vars(std::env::vars())
    }

    /// Reads the settings from name-value pairs.
    pub fn from_vars(
        vars: impl IntoIterator<Item = (String, String)>,
    ) -> Result<AccountSettings, ConfigError> {
        let vars: HashMap<String, String> = vars.into_iter().collect();
        let defaults = AccountSettings::default();
        let limit = |name: &'static str, default: Limit| -> Result<Limit, ConfigError> {
            vars.get(name).map_or(Ok(default), |text| {
                text.parse().map_err(|reason| ConfigError { name, reason })
            })
        };
        let trust_forwarded_for = match vars.get("APP_TRUST_FORWARDED_FOR").map(String::as_str) {
            None | Some("false" | "0") => false,
            Some("true" | "1") => true,
            Some(other) => {
                return Err(ConfigError {
                    name: "APP_TRUST_FORWARDED_FOR",
                    reason: format!("expected true or false, got {other:?}"),
                });
            }
        };
        Ok(AccountSettings {
            signups_per_ip: limit("APP_LIMIT_SIGNUPS_PER_IP", defaults.signups_per_ip)?,
            login_failures_per_account: limit(
                "APP_LIMIT_LOGIN_FAILURES_PER_ACCOUNT",
                defaults.login_failures_per_account,
            )?,
            login_failures_per_ip: limit(
                "APP_LIMIT_LOGIN_FAILURES_PER_IP",
                defaults.login_failures_per_ip,
            )?,
            trust_forwarded_for,
        })
    }
}

/// Queues, the AI fallback, the lobby and the services matchmaking calls.
#[derive(Clone, Debug)]
pub struct MatchSettings {
    /// `APP_QUEUES`: the ranked queues, `variant:initial+increment` comma
    /// separated. Default: Kalah, Oware and Mangala at 3+2 and 10+5.
    pub queues: Vec<String>,
    /// `APP_AI_FALLBACK_SECS`: a player waiting this long gets an AI.
    pub ai_fallback: Duration,
    /// `APP_LOBBY_GRACE_SECS`: tickets outlive the last lobby socket by this.
    pub lobby_grace: Duration,
    /// `APP_PAIRING_WAVE_MS`: the pairing tick (and the window's wave).
    pub wave: Duration,
    /// `APP_GAME_ROOM_URL`: game-room's base URL, for creating games.
    pub game_room_url: String,
    /// `APP_INTERNAL_TOKEN`: the token of game-room's internal endpoint.
    pub internal_token: SecretString,
    /// `APP_PUBLIC_URL`: the site's address, for invite links.
    pub public_url: String,
    /// `APP_INSTANCE_ID`: names this instance in pairing leases.
    pub instance: String,
    /// `APP_LOBBY_TICK_MS`: how often a lobby socket checks its timers.
    pub tick: Duration,
    /// `APP_LOBBY_STATS_SECS`: how often lobby stats are pushed.
    pub stats_every: Duration,
    /// `APP_WS_AUTH_TIMEOUT_SECS`: a lobby socket must authenticate within.
    pub auth_timeout: Duration,
    /// `APP_ALLOWED_ORIGINS`: origins besides the server's own host whose
    /// pages may open the lobby socket.
    pub allowed_origins: Vec<String>,
    /// What one player may hold or do; defaults a real player never meets.
    pub player_limits: PlayerLimits,
    /// `APP_WS_PING_SECS`: how often the server pings a lobby socket.
    pub ping_every: Duration,
    /// `APP_WS_TIMEOUT_SECS`: a lobby socket silent this long is closed,
    /// and its tickets lapse after the grace.
    pub client_timeout: Duration,
}

/// Per-player limits, counted across instances.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlayerLimits {
    /// `APP_LIMIT_GAMES_PER_PLAYER`: games against the AI, hotseat games
    /// and invites one player may make per window (`30/60`).
    pub games: Limit,
    /// `APP_LIMIT_ACTIVE_CASUAL_GAMES`: games against the AI and hotseat
    /// games one player may have going at once (10); a game with no move
    /// for ten minutes no longer counts.
    pub active_casual_games: u32,
    /// `APP_LIMIT_OPEN_INVITES`: invites one player may have waiting (10).
    pub open_invites: u32,
    /// `APP_LIMIT_SOCKETS_PER_PLAYER`: lobby and game sockets one player may
    /// have open, over every service (20; 0 for none).
    pub sockets: u32,
}

impl MatchSettings {
    pub fn from_env() -> Result<MatchSettings, ConfigError> {
        MatchSettings::from_vars(std::env::vars())
    }

    pub fn from_vars(
        vars: impl IntoIterator<Item = (String, String)>,
    ) -> Result<MatchSettings, ConfigError> {
        let vars: HashMap<String, String> = vars.into_iter().collect();
        let number = |name: &'static str, default: u64| -> Result<u64, ConfigError> {
            vars.get(name).map_or(Ok(default), |text| {
                text.trim().parse().map_err(|_| ConfigError {
                    name,
                    reason: format!("expected a whole number, got {text:?}"),
                })
            })
        };
        let queues: Vec<String> = vars
            .get("APP_QUEUES")
            .map_or(
                "kalah:3+2,kalah:10+5,oware:3+2,oware:10+5,mangala:3+2,mangala:10+5",
                String::as_str,
            )
            .split(',')
            .map(|queue| queue.trim().to_owned())
            .filter(|queue| !queue.is_empty())
            .collect();
        for queue in &queues {
            if crate::queue::QueueSpec::parse(queue).is_none() {
                return Err(ConfigError {
                    name: "APP_QUEUES",
                    reason: format!("{queue:?} is not variant:initial+increment"),
                });
            }
        }
        Ok(MatchSettings {
            queues,
            ai_fallback: Duration::from_secs(number("APP_AI_FALLBACK_SECS", 20)?),
            lobby_grace: Duration::from_secs(number("APP_LOBBY_GRACE_SECS", 10)?),
            wave: Duration::from_millis(number("APP_PAIRING_WAVE_MS", 2_000)?.max(10)),
            game_room_url: vars
                .get("APP_GAME_ROOM_URL")
                .cloned()
                .unwrap_or_else(|| "http://127.0.0.1:8080".into()),
            internal_token: SecretString::from(
                vars.get("APP_INTERNAL_TOKEN")
                    .cloned()
                    .unwrap_or_else(|| uuid::Uuid::new_v4().to_string()),
            ),
            public_url: vars
                .get("APP_PUBLIC_URL")
                .cloned()
                .unwrap_or_else(|| "http://127.0.0.1:8080".into()),
            instance: vars
                .get("APP_INSTANCE_ID")
                .cloned()
                .unwrap_or_else(|| uuid::Uuid::new_v4().simple().to_string()),
            tick: Duration::from_millis(number("APP_LOBBY_TICK_MS", 1_000)?.max(1)),
            stats_every: Duration::from_secs(number("APP_LOBBY_STATS_SECS", 5)?.max(1)),
            auth_timeout: Duration::from_secs(number("APP_WS_AUTH_TIMEOUT_SECS", 5)?),
            allowed_origins: mancala_platform::http::allowed_origins(
                vars.get("APP_ALLOWED_ORIGINS"),
            ),
            ping_every: Duration::from_secs(number("APP_WS_PING_SECS", 10)?.max(1)),
            client_timeout: Duration::from_secs(number("APP_WS_TIMEOUT_SECS", 30)?.max(1)),
            player_limits: PlayerLimits {
                games: match vars.get("APP_LIMIT_GAMES_PER_PLAYER") {
                    None => Limit {
                        max: 30,
                        window_seconds: 60,
                    },
                    Some(text) => text.parse().map_err(|reason| ConfigError {
                        name: "APP_LIMIT_GAMES_PER_PLAYER",
                        reason,
                    })?,
                },
                active_casual_games: number("APP_LIMIT_ACTIVE_CASUAL_GAMES", 10)?
                    .min(u64::from(u32::MAX)) as u32,
                open_invites: number("APP_LIMIT_OPEN_INVITES", 10)?.min(u64::from(u32::MAX)) as u32,
                sockets: number("APP_LIMIT_SOCKETS_PER_PLAYER", 20)?.min(u64::from(u32::MAX))
                    as u32,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_come_from_the_environment_or_the_defaults() {
        let settings = AccountSettings::from_vars([
            ("APP_LIMIT_SIGNUPS_PER_IP".to_owned(), "3/60".to_owned()),
            ("APP_TRUST_FORWARDED_FOR".to_owned(), "true".to_owned()),
        ])
        .unwrap();
        assert_eq!(
            settings.signups_per_ip,
            Limit {
                max: 3,
                window_seconds: 60
            }
        );
        assert!(settings.trust_forwarded_for);
        assert_eq!(
            settings.login_failures_per_ip,
            AccountSettings::default().login_failures_per_ip
        );
        let error =
            AccountSettings::from_vars([("APP_LIMIT_LOGIN_FAILURES_PER_IP".into(), "many".into())])
                .unwrap_err();
        assert_eq!(error.name, "APP_LIMIT_LOGIN_FAILURES_PER_IP");
    }
}
