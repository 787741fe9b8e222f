//! The game-room service's own settings, beside the shared
//! [`mancala_platform::Settings`].

use std::collections::HashMap;
use std::time::Duration;

use mancala_platform::{ConfigError, SecretString};
use uuid::Uuid;

/// How game sockets and hosted games behave.
#[derive(Clone, Debug)]
pub struct GameRoomSettings {
    /// `APP_INSTANCE_ID`: names this instance in leases and watcher counts.
    /// Default: a fresh id per start.
    pub instance: String,
    /// `APP_INTERNAL_TOKEN`: the bearer token other services present on
    /// `/internal/v1/*`. Unset: a random one, so nothing outside can call.
    pub internal_token: SecretString,
    /// `APP_ALLOWED_ORIGINS`: comma-separated origins browsers may open
    /// sockets from, besides the server's own host. Clients that send no
    /// `Origin` (not browsers) are let in; the token protects play.
    pub allowed_origins: Vec<String>,
    /// `APP_WS_MAX_FRAME_BYTES`: the largest message a client may send.
    pub max_frame_bytes: usize,
    /// `APP_WS_AUTH_TIMEOUT_SECS`: a play socket must authenticate within.
    pub auth_timeout: Duration,
    /// `APP_WS_PING_SECS`: how often the server pings.
    pub ping_every: Duration,
    /// `APP_WS_TIMEOUT_SECS`: a socket silent this long is closed.
    pub client_timeout: Duration,
    /// `APP_WS_TICK_MS`: how often a socket checks its deadlines against
    /// the clock; tests shorten it and move a manual clock.
    pub tick: Duration,
    /// `APP_WS_RATE`: `burst/per_second` message credits per socket; a
    /// socket that runs out is closed with 1008.
    pub message_burst: u32,
    pub messages_per_second: u32,
    /// `APP_GAME_IDLE_SECS`: a hosted game with no player connected is
    /// unloaded after this long (its lease released).
    pub idle_unload: Duration,
    /// `APP_GAME_LEASE_SECS`: how long a host's lease lasts unrenewed.
    pub lease: Duration,
    /// `APP_PUBLIC_URL`: where clients reach this instance, told to those
    /// who reach another one. Default: the address it listens on.
    pub public_url: Option<String>,
    /// `APP_RECONNECT_SECS`: how long a dropped player has to return before
    /// the opponent may continue against the AI or claim the win.
    pub reconnect: Duration,
    /// `APP_FIRST_MOVE_SECS`: until each side has moved, the side to move
    /// must move within this long of its turn's start, or the game is
    /// aborted (no clock runs before then).
    pub first_move: Duration,
    /// `APP_ROOM_IDLE_SECS`: a friend room with nobody connected this long
    /// closes.
    pub room_idle: Duration,
    /// `APP_ROOM_LIFE_SECS`: a friend room closes this long after it opens.
    pub room_life: Duration,
    /// `APP_ROOM_SWEEP_MS`: how often expired rooms are looked for.
    pub room_sweep: Duration,
    /// `APP_AI_DEADLINE_MS`: the most an AI move may take, its wait for a
    /// worker included.
    pub ai_deadline: Duration,
    /// `APP_AI_WORKERS`: AI searches that run at once in this process.
    /// Default: the number of cores.
    pub ai_workers: usize,
    /// `APP_AI_QUEUE_WAIT_MS`: an AI move that waited longer than this for
    /// a worker searches on an eighth of its budget.
    pub ai_queue_wait: Duration,
    /// `APP_AI_IDLE_MB`: memory kept in idle AI engines (their tables)
    /// for the next searches; beyond it the least recently used are freed.
    pub ai_idle_bytes: usize,
    /// `APP_RATED_PAIR_LIMIT`: rated games between the same two players
    /// that count within 24 hours; further ones are made casual.
    pub rated_pair_limit: u32,
    /// `APP_LIMIT_SOCKETS_PER_PLAYER`: lobby and game sockets one player
    /// may have open, over every service (0: no limit).
    pub sockets_per_player: u32,
    /// `APP_LIMIT_UNDOS_PER_PLAYER`: undos one player may ask per window.
    pub undos: mancala_platform::ratelimit::Limit,
}

impl GameRoomSettings {
    pub fn from_env() -> Result<GameRoomSettings, ConfigError> {
        GameRoomSettings::from_vars(std::env::vars())
    }

    pub fn from_vars(
        vars: impl IntoIterator<Item = (String, String)>,
    ) -> Result<GameRoomSettings, ConfigError> {
        let vars: HashMap<String, String> = vars.into_iter().collect();
        let number = |name: &'static str, default: u64| -> Result<u64, ConfigError> {
            vars.get(name).map_or(Ok(default), |text| {
                text.trim().parse().map_err(|_| ConfigError {
                    name,
                    reason: format!("expected a whole number, got {text:?}"),
                })
            })
        };
        let (message_burst, messages_per_second) = match vars.get("APP_WS_RATE") {
            None => (20, 10),
            Some(text) => text
                .split_once('/')
                .and_then(|(burst, rate)| Some((burst.parse().ok()?, rate.parse().ok()?)))
                .filter(|&(burst, rate)| burst > 0 && rate > 0)
                .ok_or_else(|| ConfigError {
                    name: "APP_WS_RATE",
                    reason: format!("expected burst/per_second, got {text:?}"),
                })?,
        };
        Ok(GameRoomSettings {
            instance: vars
                .get("APP_INSTANCE_ID")
                .cloned()
                .unwrap_or_else(|| Uuid::new_v4().simple().to_string()),
            internal_token: SecretString::from(
                vars.get("APP_INTERNAL_TOKEN")
                    .cloned()
                    .unwrap_or_else(|| Uuid::new_v4().to_string()),
            ),
            allowed_origins: mancala_platform::http::allowed_origins(
                vars.get("APP_ALLOWED_ORIGINS"),
            ),
            max_frame_bytes: number("APP_WS_MAX_FRAME_BYTES", 4096)? as usize,
            auth_timeout: Duration::from_secs(number("APP_WS_AUTH_TIMEOUT_SECS", 5)?),
            ping_every: Duration::from_secs(number("APP_WS_PING_SECS", 10)?),
            client_timeout: Duration::from_secs(number("APP_WS_TIMEOUT_SECS", 30)?),
            tick: Duration::from_millis(number("APP_WS_TICK_MS", 1000)?.max(1)),
            message_burst,
            messages_per_second,
            idle_unload: Duration::from_secs(number("APP_GAME_IDLE_SECS", 120)?),
            lease: Duration::from_secs(number("APP_GAME_LEASE_SECS", 15)?.max(1)),
            public_url: vars.get("APP_PUBLIC_URL").cloned(),
            reconnect: Duration::from_secs(number("APP_RECONNECT_SECS", 120)?),
            first_move: Duration::from_secs(number("APP_FIRST_MOVE_SECS", 60)?),
            room_idle: Duration::from_secs(number("APP_ROOM_IDLE_SECS", 30 * 60)?),
            room_life: Duration::from_secs(number("APP_ROOM_LIFE_SECS", 24 * 3600)?),
            room_sweep: Duration::from_millis(number("APP_ROOM_SWEEP_MS", 30_000)?.max(1)),
            ai_deadline: Duration::from_millis(number("APP_AI_DEADLINE_MS", 2_000)?.max(1)),
            ai_workers: number(
                "APP_AI_WORKERS",
                std::thread::available_parallelism().map_or(2, |cores| cores.get() as u64),
            )?
            .clamp(1, 1024) as usize,
            ai_queue_wait: Duration::from_millis(number("APP_AI_QUEUE_WAIT_MS", 300)?),
            ai_idle_bytes: (number("APP_AI_IDLE_MB", 96)?.min(1 << 20) as usize) << 20,
            rated_pair_limit: number(
                "APP_RATED_PAIR_LIMIT",
                u64::from(crate::game::ranked::DEFAULT_RATED_PAIR_LIMIT),
            )?
            .min(u64::from(u32::MAX)) as u32,
            sockets_per_player: number("APP_LIMIT_SOCKETS_PER_PLAYER", 20)?.min(u64::from(u32::MAX))
                as u32,
            undos: match vars.get("APP_LIMIT_UNDOS_PER_PLAYER") {
                None => mancala_platform::ratelimit::Limit {
                    max: 30,
                    window_seconds: 60,
                },
                Some(text) => text.parse().map_err(|reason| ConfigError {
                    name: "APP_LIMIT_UNDOS_PER_PLAYER",
                    reason,
                })?,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_overrides() {
        let settings = GameRoomSettings::from_vars([
            (
                "APP_ALLOWED_ORIGINS".to_owned(),
                "https://a.example/, https://b.example".to_owned(),
            ),
            ("APP_WS_RATE".to_owned(), "5/2".to_owned()),
        ])
        .unwrap();
        assert_eq!(
            settings.allowed_origins,
            ["https://a.example", "https://b.example"]
        );
        assert_eq!(
            (settings.message_burst, settings.messages_per_second),
            (5, 2)
        );
        assert_eq!(settings.auth_timeout, Duration::from_secs(5));
        assert_eq!(settings.max_frame_bytes, 4096);
        let error = GameRoomSettings::from_vars([("APP_WS_RATE".to_owned(), "0/1".to_owned())])
            .unwrap_err();
        assert_eq!(error.name, "APP_WS_RATE");
    }
}
