//! The matchmaking service's own settings, beside the shared
//! [`mancala_platform::Settings`], declared (see `mancala_platform::cli`).
//! Read once, in `main`, and passed by value.

use std::time::Duration;

use mancala_platform::ConfigError;
use mancala_platform::config::{InstanceSettings, positive_millis, positive_seconds, seconds};
use mancala_platform::ratelimit::Limit;
use mancala_platform::socket::SocketSettings;

/// Limits on signing in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::Args)]
pub struct AccountSettings {
    /// New players (guests, and accounts registered without a guest)
    /// from one address, `max/window_seconds`. A classroom or an office
    /// behind one address brings a hundred people in an hour, each with
    /// a second device or a cleared browser now and then; a script minting
    /// players by the thousand still stops here.
    #[arg(env = "APP_LIMIT_SIGNUPS_PER_IP", default_value = "150/3600")]
    pub signups_per_ip: Limit,
    /// Registrations (a guest keeping its games under a username, or a
    /// new account) from one address, `max/window_seconds`: each costs an
    /// argon2 hash, so a script must not buy them freely, while a whole
    /// class may register.
    #[arg(env = "APP_LIMIT_REGISTRATIONS_PER_IP", default_value = "100/3600")]
    pub registrations_per_ip: Limit,
    /// Wrong passwords for one username from one address: stops that
    /// address guessing the account's password, while the owner, signing
    /// in from elsewhere, is not locked out by a stranger's guesses.
    #[arg(env = "APP_LIMIT_LOGIN_FAILURES_PER_ACCOUNT", default_value = "10/900")]
    pub login_failures_per_account: Limit,
    /// Wrong passwords for one username from every address together: the
    /// backstop against guessing spread over many addresses (it does lock
    /// the account, for everyone, when reached).
    #[arg(
        env = "APP_LIMIT_LOGIN_FAILURES_PER_ACCOUNT_ALL",
        default_value = "200/900"
    )]
    pub login_failures_per_account_all: Limit,
    /// Wrong passwords from one address, for any username: stops spraying
    /// one password over many accounts.
    #[arg(env = "APP_LIMIT_LOGIN_FAILURES_PER_IP", default_value = "50/900")]
    pub login_failures_per_ip: Limit,
    /// Successful sign-ins to one account, `max/window_seconds`: a person
    /// signs in a few times a day; a loop of sign-in and sign-out would
    /// otherwise start sessions (and list revoked ones) as fast as it can.
    #[arg(env = "APP_LIMIT_LOGINS_PER_ACCOUNT", default_value = "20/3600")]
    pub logins_per_account: Limit,
    /// Successful sign-ins from one address, to any account: the same
    /// bound for a script spread over many accounts (roomy enough for a
    /// school or an office behind one address).
    #[arg(env = "APP_LIMIT_LOGINS_PER_IP", default_value = "120/3600")]
    pub logins_per_ip: Limit,
    /// Take the client's address from `Forwarded`/`X-Forwarded-For`. Only
    /// behind a proxy that sets them; otherwise a client could pick its own
    /// address and dodge the limits.
    #[arg(env = "APP_TRUST_FORWARDED_FOR", default_value_t = false,
          action = clap::ArgAction::Set)]
    pub trust_forwarded_for: bool,
}

impl AccountSettings {
    /// Reads the settings from name-value pairs.
    pub fn from_vars(
        vars: impl IntoIterator<Item = (String, String)>,
    ) -> Result<AccountSettings, ConfigError> {
        mancala_platform::cli::from_vars(vars)
    }
}

/// Queues, the AI fallback, the lobby and the services matchmaking calls.
#[derive(Clone, Debug, clap::Args)]
pub struct MatchSettings {
    #[command(flatten)]
    pub instance: InstanceSettings,
    #[command(flatten)]
    pub sockets: SocketSettings,
    /// The ranked queues, `variant:minutes+increment_seconds`,
    /// comma-separated.
    #[arg(env = "APP_QUEUES", value_delimiter = ',', value_parser = queue,
          default_value = "kalah:3+2,kalah:10+5,oware:3+2,oware:10+5,mangala:3+2,mangala:10+5")]
    pub queues: Vec<String>,
    /// A player waiting this many seconds in a queue gets an AI opponent.
    #[arg(env = "APP_AI_FALLBACK_SECS", default_value = "20", value_parser = seconds)]
    pub ai_fallback: Duration,
    /// Queue tickets outlive the player's last lobby socket by this many
    /// seconds.
    #[arg(env = "APP_LOBBY_GRACE_SECS", default_value = "10", value_parser = seconds)]
    pub lobby_grace: Duration,
    /// The pairing tick (and the rating window's wave), in milliseconds.
    #[arg(env = "APP_PAIRING_WAVE_MS", default_value = "2000", value_parser = wave)]
    pub wave: Duration,
    /// Game-room's base URL, for creating games. `arena` uses its own.
    #[arg(env = "APP_GAME_ROOM_URL", default_value = "http://127.0.0.1:8080")]
    pub game_room_url: String,
    /// The site's address as players reach it, for invite links. Default:
    /// the address each request came to (its `Host`, or a proxy's
    /// `Forwarded` / `X-Forwarded-Host`).
    #[arg(env = "APP_PUBLIC_URL")]
    pub public_url: Option<String>,
    /// How often a lobby socket checks its timers, in milliseconds.
    #[arg(env = "APP_LOBBY_TICK_MS", default_value = "1000", value_parser = positive_millis)]
    pub lobby_tick: Duration,
    /// How often lobby stats are pushed, in seconds.
    #[arg(env = "APP_LOBBY_STATS_SECS", default_value = "2", value_parser = positive_seconds)]
    pub stats_every: Duration,
    #[command(flatten)]
    pub player_limits: PlayerLimits,
    #[command(flatten)]
    pub fair_play: FairPlaySettings,
    /// The scheduled arena tournaments: a TOML file of rules (cron, variant,
    /// clock, minutes; docs/ARCHITECTURE.md, "Tournaments"). None when unset.
    #[arg(env = "APP_TOURNAMENT_SCHEDULE")]
    pub tournament_schedule: Option<std::path::PathBuf>,
    /// How often a running arena pairs its waiting players, in milliseconds.
    #[arg(env = "APP_TOURNAMENT_WAVE_MS", default_value = "2000", value_parser = wave)]
    pub tournament_wave: Duration,
}

/// How not playing games is answered (`crate::fair_play`): offences are
/// counted in a sliding window; the one before `ban_after` brings a
/// warning, and each from `ban_after` on a ban from ranked play, longer
/// each time.
#[derive(Clone, Debug, PartialEq, Eq, clap::Args)]
pub struct FairPlaySettings {
    /// The window offences count in, in seconds.
    #[arg(env = "APP_FAIR_PLAY_WINDOW_SECS", default_value = "86400", value_parser = positive_seconds)]
    pub window: Duration,
    /// Offences in the window that bring the first ban (one fewer brings a
    /// warning).
    #[arg(env = "APP_FAIR_PLAY_BAN_AFTER", default_value_t = 3,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub ban_after: u32,
    /// The bans, in seconds, comma-separated: the first for the
    /// `APP_FAIR_PLAY_BAN_AFTER`-th offence in the window, the next for the
    /// one after, the last for every later one.
    #[arg(env = "APP_FAIR_PLAY_BANS_SECS", value_delimiter = ',', value_parser = positive_seconds,
          default_value = "600,3600,86400")]
    pub bans: Vec<Duration>,
}

/// Per-player limits, counted across instances: defaults a real player
/// never meets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::Args)]
pub struct PlayerLimits {
    /// Games against the AI, hotseat games and invites one player may make,
    /// `max/window_seconds`.
    #[arg(env = "APP_LIMIT_GAMES_PER_PLAYER", default_value = "30/60")]
    pub games: Limit,
    /// Games against the AI and hotseat games one player may have going at
    /// once; a game with no move for ten minutes no longer counts.
    #[arg(env = "APP_LIMIT_ACTIVE_CASUAL_GAMES", default_value_t = 10)]
    pub active_casual_games: u32,
    /// Invites one player may have waiting.
    #[arg(env = "APP_LIMIT_OPEN_INVITES", default_value_t = 10)]
    pub open_invites: u32,
    /// Reports one player may file, `max/window_seconds`: enough to report
    /// everyone who spoiled an evening, too few to flood the moderators'
    /// queue. Reporting the same player for the same reason again while
    /// the first is open adds nothing and does not count.
    #[arg(env = "APP_LIMIT_REPORTS_PER_PLAYER", default_value = "10/86400")]
    pub reports: Limit,
    /// Private arenas one account may make, `max/window_seconds`: a club's
    /// evening of arenas, not a flood of them.
    #[arg(env = "APP_LIMIT_TOURNAMENTS_PER_PLAYER", default_value = "20/3600")]
    pub tournaments: Limit,
    /// Private arenas made from one client address, `max/window_seconds`
    /// (the accounts of one network together).
    #[arg(env = "APP_LIMIT_TOURNAMENTS_PER_IP", default_value = "60/3600")]
    pub tournaments_per_ip: Limit,
    /// Private arenas one account may have not yet over (waiting to start
    /// or running).
    #[arg(env = "APP_LIMIT_LIVE_TOURNAMENTS", default_value_t = 5)]
    pub live_tournaments: u32,
    /// Joins, pauses and withdrawals one account may make over all arenas,
    /// `max/window_seconds`: each tells every follower of the arena.
    #[arg(env = "APP_LIMIT_TOURNAMENT_ACTIONS", default_value = "20/60")]
    pub tournament_actions: Limit,
}

impl MatchSettings {
    /// Reads the settings from name-value pairs (tests, `arena`'s own).
    pub fn from_vars(
        vars: impl IntoIterator<Item = (String, String)>,
    ) -> Result<MatchSettings, ConfigError> {
        mancala_platform::cli::from_vars(vars)
    }

    /// The configured site address for links, or `""` when links follow
    /// the request.
    pub fn public_url(&self) -> &str {
        self.public_url
            .as_deref()
            .unwrap_or_default()
            .trim_end_matches('/')
    }
}

fn queue(text: &str) -> Result<String, String> {
    let text = text.trim();
    match crate::queue::QueueSpec::parse(text) {
        Some(_) => Ok(text.to_owned()),
        None => Err(format!("{text:?} is not variant:minutes+increment_seconds")),
    }
}

fn wave(text: &str) -> Result<Duration, String> {
    match positive_millis(text)? {
        wave if wave < Duration::from_millis(10) => Err("at least 10 ms".into()),
        wave => Ok(wave),
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
            AccountSettings::from_vars([])
                .unwrap()
                .login_failures_per_ip
        );
        let error =
            AccountSettings::from_vars([("APP_LIMIT_LOGIN_FAILURES_PER_IP".into(), "many".into())])
                .unwrap_err();
        assert_eq!(error.name, "APP_LIMIT_LOGIN_FAILURES_PER_IP");
    }

    #[test]
    fn queues_are_checked_when_read() {
        let settings = MatchSettings::from_vars([]).unwrap();
        assert_eq!(settings.queues.len(), 6);
        let settings =
            MatchSettings::from_vars([("APP_QUEUES".into(), "kalah:1+0, oware:5+3".into())])
                .unwrap();
        assert_eq!(settings.queues, ["kalah:1+0", "oware:5+3"]);
        let error =
            MatchSettings::from_vars([("APP_QUEUES".into(), "chess:3+2".into())]).unwrap_err();
        assert_eq!(error.name, "APP_QUEUES");
    }
}
