//! The game-room service's own settings, beside the shared
//! [`mancala_platform::Settings`], declared (see `mancala_platform::cli`).

use std::time::Duration;

use mancala_platform::ConfigError;

/// Rated games between the same two players that count within a day, by
/// default (`APP_RATED_PAIR_LIMIT`). Lichess-like: enough for a real
/// series between friends, too few to farm from a willing partner.
pub(crate) const DEFAULT_RATED_PAIR_LIMIT: u32 = 5;

/// How the AI workers are scheduled (`APP_AI_PRIORITY`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum AiPriority {
    /// `SCHED_IDLE`: only the CPU nothing else wants.
    Idle,
    /// The same as every other thread.
    Normal,
}
use mancala_platform::config::InstanceSettings;
use mancala_platform::config::{millis, positive_millis, positive_seconds, seconds};
use mancala_platform::ratelimit::Limit;
use mancala_platform::socket::SocketSettings;

/// How game sockets and hosted games behave.
#[derive(Clone, Debug, clap::Args)]
pub struct GameRoomSettings {
    #[command(flatten)]
    pub instance: InstanceSettings,
    #[command(flatten)]
    pub sockets: SocketSettings,
    /// The largest message a client may send on a game or watch socket.
    #[arg(env = "APP_WS_MAX_FRAME_BYTES", default_value_t = 4096)]
    pub max_frame_bytes: usize,
    /// Message credits of a game or watch socket, `burst/per_second`; a
    /// socket that runs out is closed with 1008.
    #[arg(env = "APP_WS_RATE", default_value = "20/10")]
    pub message_rate: MessageRate,
    /// How often a socket checks its deadlines against the clock, in
    /// milliseconds; tests shorten it and move a manual clock.
    #[arg(env = "APP_WS_TICK_MS", default_value = "1000", value_parser = positive_millis)]
    pub tick: Duration,
    /// A hosted game with no player connected this many seconds is
    /// unloaded (its lease released).
    #[arg(env = "APP_GAME_IDLE_SECS", default_value = "120", value_parser = seconds)]
    pub idle_unload: Duration,
    /// How long a host's lease on a game lasts unrenewed, in seconds.
    #[arg(env = "APP_GAME_LEASE_SECS", default_value = "15", value_parser = positive_seconds)]
    pub lease: Duration,
    /// Where clients reach this very instance (told to a client that
    /// reached another one). Default: the address it listens on.
    #[arg(env = "APP_INSTANCE_URL")]
    pub instance_url: Option<String>,
    /// Seconds a dropped player has to return before the opponent may
    /// continue against the AI or claim the win.
    #[arg(env = "APP_RECONNECT_SECS", default_value = "120", value_parser = seconds)]
    pub reconnect: Duration,
    /// Until each side has moved, the side to move must move within this
    /// many seconds of its turn's start, or the game is aborted (no clock
    /// runs before then).
    #[arg(env = "APP_FIRST_MOVE_SECS", default_value = "60", value_parser = seconds)]
    pub first_move: Duration,
    /// A friend room with nobody connected this many seconds closes.
    #[arg(env = "APP_ROOM_IDLE_SECS", default_value = "1800", value_parser = seconds)]
    pub room_idle: Duration,
    /// A friend room closes this many seconds after it opens.
    #[arg(env = "APP_ROOM_LIFE_SECS", default_value = "86400", value_parser = seconds)]
    pub room_life: Duration,
    /// A live game nobody has had open, with no move for this many
    /// seconds, is ended (aborted, `abandoned`): a closed tab's game leaves
    /// the live lists and the featured games. Friend rooms keep their own
    /// idle rule (`APP_ROOM_IDLE_SECS`).
    #[arg(env = "APP_ABANDONED_SECS", default_value = "600", value_parser = positive_seconds)]
    pub abandoned: Duration,
    /// How often expired rooms and abandoned games are looked for, in
    /// milliseconds.
    #[arg(env = "APP_ROOM_SWEEP_MS", default_value = "30000", value_parser = positive_millis)]
    pub room_sweep: Duration,
    /// The most an AI move may take, its wait for a worker included, in
    /// milliseconds.
    #[arg(env = "APP_AI_DEADLINE_MS", default_value = "2000", value_parser = positive_millis)]
    pub ai_deadline: Duration,
    /// AI searches that run at once in this process. Default: the number
    /// of cores.
    #[arg(env = "APP_AI_WORKERS", default_value_t = cores(),
          value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub ai_workers: u16,
    /// How the AI workers are scheduled: `idle` (the default) gives them
    /// only the CPU nothing else wants, so a busy instance keeps its cores
    /// for moves, and AI moves and analyses wait while it is saturated;
    /// `normal` shares the CPU evenly (an instance given to AI games, or
    /// tests that must not wait on a busy machine).
    #[arg(env = "APP_AI_PRIORITY", value_enum, default_value = "idle")]
    pub ai_priority: AiPriority,
    /// An AI move that waited longer than this many milliseconds for a
    /// worker searches on an eighth of its budget.
    #[arg(env = "APP_AI_QUEUE_WAIT_MS", default_value = "300", value_parser = millis)]
    pub ai_queue_wait: Duration,
    /// Megabytes kept in idle AI engines (their tables) for the next
    /// searches; beyond it the least recently used are freed.
    #[arg(env = "APP_AI_IDLE_MB", default_value = "96", value_parser = megabytes)]
    pub ai_idle_bytes: usize,
    /// Kalah positions with at most this many stones in the pits are
    /// proved by the `Perfect` AI from an endgame table of the process
    /// (30 MB and a few seconds of one core at 16, built in the background
    /// when the first `Perfect` game asks; 0: none).
    #[arg(env = "APP_AI_ENDGAME_STONES", default_value = "16",
          value_parser = clap::value_parser!(u8).range(0..=20))]
    pub ai_endgame_stones: u8,
    /// A bigger Kalah endgame table for the `Perfect` AI and analyses, read
    /// from this file (made by `mancala endgame build --stones 22`: 548 MB,
    /// and a proof from the start needs a sixth of the nodes) instead of
    /// building one of `APP_AI_ENDGAME_STONES`, which stands in when the
    /// file cannot be read.
    #[arg(env = "APP_AI_ENDGAME_FILE")]
    pub ai_endgame_file: Option<std::path::PathBuf>,
    /// Megabytes of the Kalah solver's table, one per process, shared by
    /// every `Perfect` move and every analysis (made when the first one
    /// asks; the system hands its memory out as it is touched).
    #[arg(env = "APP_AI_SOLVER_TABLE_MB", default_value = "256", value_parser = megabytes)]
    pub ai_solver_table_bytes: usize,
    /// The longest one post-game analysis works, in milliseconds; the
    /// positions nearest the start (the hardest) are left without values
    /// when it runs out.
    #[arg(env = "APP_ANALYSIS_DEADLINE_MS", default_value = "10000", value_parser = positive_millis)]
    pub analysis_deadline: Duration,
    /// Megabytes of finished games' analyses kept in Postgres for every
    /// instance; past it the oldest go (and are worked out again if asked).
    #[arg(env = "APP_ANALYSIS_KEPT_MB", default_value = "256", value_parser = megabytes)]
    pub analysis_kept_bytes: usize,
    /// Analyses not kept yet that someone other than the game's players
    /// may have worked out, `max/window_seconds`, per account or, signed
    /// out, per address.
    #[arg(env = "APP_LIMIT_ANALYSES_PER_CALLER", default_value = "12/600")]
    pub analyses_per_caller: Limit,
    /// Take the client's address from `Forwarded`/`X-Forwarded-For`. Only
    /// behind a proxy that sets them; otherwise a client could pick its own
    /// address and dodge the limits.
    #[arg(env = "APP_TRUST_FORWARDED_FOR", default_value_t = false,
          action = clap::ArgAction::Set)]
    pub trust_forwarded_for: bool,
    /// A resignation of a game asked for as rated, between two people,
    /// before this many plies is a quick one: it counts against the
    /// resigner's fair-play record (as does not starting, aborting before
    /// one's first move, leaving, and letting one's clock run out).
    #[arg(env = "APP_FAIR_PLAY_QUICK_RESIGN_PLIES", default_value_t = 6)]
    pub quick_resign_plies: u32,
    /// Rated games between the same two players that count within 24
    /// hours; further ones are made casual.
    #[arg(env = "APP_RATED_PAIR_LIMIT",
          default_value_t = DEFAULT_RATED_PAIR_LIMIT)]
    pub rated_pair_limit: u32,
    /// The most writes of hosted games (moves, ends, undos) one commit
    /// takes: what queued while the previous commit was in flight goes
    /// out together, up to this many.
    #[arg(env = "APP_GAME_WRITE_BATCH", default_value_t = 256,
          value_parser = clap::value_parser!(u16).range(1..=4096))]
    pub write_batch: u16,
    /// Undos one player may ask, `max/window_seconds`.
    #[arg(env = "APP_LIMIT_UNDOS_PER_PLAYER", default_value = "30/60")]
    pub undos: Limit,
    /// Hints one player may ask, `max/window_seconds`: each is a search on
    /// the AI workers that every game's AI shares.
    #[arg(env = "APP_LIMIT_HINTS_PER_PLAYER", default_value = "20/60")]
    pub hints: Limit,
}

/// A socket's message credits: `burst` at once, refilled at `per_second`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MessageRate {
    pub burst: u32,
    pub per_second: u32,
}

impl std::str::FromStr for MessageRate {
    type Err = String;

    fn from_str(text: &str) -> Result<MessageRate, String> {
        text.split_once('/')
            .and_then(|(burst, rate)| Some((burst.trim().parse().ok()?, rate.trim().parse().ok()?)))
            .filter(|&(burst, rate)| burst > 0 && rate > 0)
            .map(|(burst, per_second)| MessageRate { burst, per_second })
            .ok_or_else(|| "expected burst/per_second, both positive".to_owned())
    }
}

impl GameRoomSettings {
    /// Reads the settings from name-value pairs (tests, `arena`'s own).
    pub fn from_vars(
        vars: impl IntoIterator<Item = (String, String)>,
    ) -> Result<GameRoomSettings, ConfigError> {
        mancala_platform::cli::from_vars(vars)
    }
}

fn cores() -> u16 {
    std::thread::available_parallelism().map_or(2, |cores| cores.get().min(1024) as u16)
}

fn megabytes(text: &str) -> Result<usize, String> {
    let megabytes: usize = text
        .trim()
        .parse()
        .map_err(|_| "expected a whole number of megabytes".to_owned())?;
    megabytes
        .checked_mul(1 << 20)
        .ok_or_else(|| "too large".to_owned())
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
            settings.sockets.allowed_origins.0,
            ["https://a.example", "https://b.example"]
        );
        assert_eq!(
            settings.message_rate,
            MessageRate {
                burst: 5,
                per_second: 2
            }
        );
        assert_eq!(settings.sockets.auth_timeout, Duration::from_secs(5));
        assert_eq!(settings.max_frame_bytes, 4096);
        let error = GameRoomSettings::from_vars([("APP_WS_RATE".to_owned(), "0/1".to_owned())])
            .unwrap_err();
        assert_eq!(error.name, "APP_WS_RATE");
        let error = GameRoomSettings::from_vars([("APP_AI_WORKERS".to_owned(), "2.7".to_owned())])
            .unwrap_err();
        assert_eq!(error.name, "APP_AI_WORKERS");
    }
}
