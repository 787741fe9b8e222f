//! The game socket's messages (`/v1/games/{id}/play` and `/watch`) and the
//! game REST bodies.
//!
//! Every socket message is `{"t": "<type>", "d": {...}}` (lila-ws style);
//! messages without data may leave `d` out. Seats are 0 and 1: seat 0 moves
//! first. Pits are numbered 1 to 6 from the mover's own left.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

pub use mancala_rules::Side;

use crate::error::ErrorBody;
use crate::variant::VariantSpec;

/// What a client sends.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(
    tag = "t",
    content = "d",
    rename_all = "snake_case",
    deny_unknown_fields
)]
pub enum ClientMessage {
    /// The first message of a play socket: the access token from the
    /// accounts API. Watch sockets need none.
    Auth { token: String },
    /// Play `pit` as move number `ply` (the first move of the game is ply
    /// 1; an extra turn is a new ply). Resending an applied move gets its
    /// `moved` again; any other wrong ply gets `stale_ply` and a `state`.
    /// `hidden_ms`: how long the page was hidden during this turn, as the
    /// web client measures it (kept with the move for the fair-play
    /// sentinel; never a rule).
    Move {
        pit: u8,
        ply: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        hidden_ms: Option<u32>,
    },
    /// Give up the game.
    Resign,
    /// Ask for the events after version `since`: they come as they were,
    /// or as one fresh `state` when the gap is too old.
    Sync { since: u64 },
    /// Answered with `pong`.
    Ping,
    /// Take back moves: in a game against the AI, your last move and the
    /// AI's replies after it; in a hotseat game, the last move.
    Undo,
    /// After the end: play again with sides swapped. Against the AI, on one
    /// device, or in a friend's room the next game starts at once; between
    /// two players otherwise it is an offer the other must match.
    Rematch,
    /// After the opponent's reconnect countdown ran out: an AI takes their
    /// seat and the game goes on, casual.
    ContinueVsAi,
    /// After the opponent's reconnect countdown ran out (or when they never
    /// came): end the game. A win by claim (rated if it was) once both
    /// sides have moved; an abort before that.
    ClaimVictory,
    /// In a friend's room, after a game: leave the room for good. The room
    /// closes; nobody can start another game in it.
    LeaveRoom,
    /// On your turn in a game against the AI or on one device (never
    /// between two people): ask the Advanced engine for a move. Answered
    /// with `hint`, to this socket only.
    Hint,
    /// In an arena tournament's game, before your first move: halve your
    /// own clock and give up your increment, for one more point if you
    /// win. Answered to everyone with `berserked`.
    Berserk,
}

/// The access token stays out of logs.
impl std::fmt::Debug for ClientMessage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClientMessage::Auth { .. } => f.write_str("Auth(..)"),
            ClientMessage::Move { pit, ply, .. } => {
                write!(f, "Move {{ pit: {pit}, ply: {ply} }}")
            }
            ClientMessage::Resign => f.write_str("Resign"),
            ClientMessage::Sync { since } => write!(f, "Sync {{ since: {since} }}"),
            ClientMessage::Ping => f.write_str("Ping"),
            ClientMessage::Undo => f.write_str("Undo"),
            ClientMessage::Rematch => f.write_str("Rematch"),
            ClientMessage::ContinueVsAi => f.write_str("ContinueVsAi"),
            ClientMessage::ClaimVictory => f.write_str("ClaimVictory"),
            ClientMessage::LeaveRoom => f.write_str("LeaveRoom"),
            ClientMessage::Hint => f.write_str("Hint"),
            ClientMessage::Berserk => f.write_str("Berserk"),
        }
    }
}

/// What the server sends.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(
    tag = "t",
    content = "d",
    rename_all = "snake_case",
    deny_unknown_fields
)]
pub enum ServerMessage {
    /// A full snapshot: sent first, after a stale move, and when a sync gap
    /// is too old.
    State(Box<GameState>),
    /// A move was made durable. The mover's acknowledgement is this same
    /// message.
    Moved(Moved),
    /// The game ended.
    Over(Over),
    /// Moves were taken back; the board is as after `ply`.
    Undone(Undone),
    /// A seat's player connected or disconnected (any of their sockets).
    /// On a disconnect in a game against a person, `countdown_ms` is how
    /// long they have to return before the opponent may `continue_vs_ai`
    /// or `claim_victory`.
    Presence {
        #[schemars(with = "u8")]
        seat: Side,
        connected: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        countdown_ms: Option<u64>,
    },
    /// A player went berserk: their clock is now `clock_ms`, with no
    /// increment.
    Berserked {
        version: u64,
        #[schemars(with = "u8")]
        seat: Side,
        clock_ms: u64,
    },
    /// An AI took over an absent player's seat; the game is now casual.
    TakenOver {
        version: u64,
        #[schemars(with = "u8")]
        seat: Side,
        level: String,
    },
    /// The other player offers a rematch (`rematch` accepts it).
    RematchOffer {
        #[schemars(with = "u8")]
        by: Side,
    },
    /// The rematch offer of seat `by` is off: its player left.
    RematchCancelled {
        #[schemars(with = "u8")]
        by: Side,
    },
    /// The player of seat `seat` left the friend room for good: it is
    /// closed, and no further game starts in it.
    RoomLeft {
        #[schemars(with = "u8")]
        seat: Side,
    },
    /// The next game has started: connect to it.
    Rematch { game_id: Uuid, play_path: String },
    /// This instance does not host the game: connect to `url` (the socket
    /// closes with 4001).
    Elsewhere { url: Option<String> },
    /// After a rated game: each seat's rating before and after.
    RatingChange {
        changes: Vec<crate::rating::RatingDelta>,
    },
    /// How many watch the game.
    Watchers { count: u32 },
    /// Something the client sent was refused; nothing changed.
    Error(ErrorBody),
    /// The answer to `ping`.
    Pong,
    /// The answer to `hint`: the engine's move for ply `ply` (drop it once
    /// that ply has been played).
    Hint { ply: u32, pit: u8 },
}

/// Whether a game is being played.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, ToSchema)]
#[cfg_attr(
    feature = "sqlx",
    derive(sqlx::Type),
    sqlx(type_name = "text", rename_all = "snake_case")
)]
#[serde(rename_all = "snake_case")]
pub enum GameStatus {
    Live,
    Over,
    /// Ended without a result: it ended (a resignation, a claim, a first
    /// move not made in time) before each side had moved, or its friend
    /// room closed with the game unfinished. Never rated.
    Aborted,
}

impl GameStatus {
    /// The name on the wire and in the `games.status` column.
    pub const fn as_str(self) -> &'static str {
        match self {
            GameStatus::Live => "live",
            GameStatus::Over => "over",
            GameStatus::Aborted => "aborted",
        }
    }
}

/// A time control: `initial + increment` seconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TimeControl {
    /// 1 s to 3 h.
    #[schema(minimum = 1, maximum = 10800)]
    pub initial_secs: u32,
    /// At most 180 s a move.
    #[schema(maximum = 180)]
    pub increment_secs: u32,
}

impl TimeControl {
    /// What a game may be played at, and the answer when it may not.
    pub const LIMITS: &str = "the time control is 1 s to 3 h, plus at most 180 s a move";

    pub fn is_playable(&self) -> bool {
        (1..=10_800).contains(&self.initial_secs) && self.increment_secs <= 180
    }
}

/// The clocks of a timed game, as of the message. The running side's
/// time is counting down from `remaining_ms` since the message was sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Clocks {
    pub remaining_ms: [u64; 2],
    /// The seat whose clock runs, or `null` (before the first move, after
    /// the end).
    #[schemars(with = "Option<u8>")]
    #[schema(value_type = Option<u8>, maximum = 1)]
    pub running: Option<Side>,
}

/// Who sits in a seat.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SeatInfo {
    /// The player, or `null` for an AI seat.
    pub player: Option<Uuid>,
    /// The player's display name, or the AI level's name.
    pub name: String,
    /// The AI level, for an AI seat (`beginner` .. `perfect`), including
    /// an AI that took over an absent player's seat.
    pub ai: Option<String>,
    /// The rating when the game was created, for ranked games.
    pub rating: Option<f64>,
}

/// The board as both sides see it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Board {
    /// Each seat's row, from that seat's own left: `pits[s][i]` is pit
    /// `i + 1` of seat `s`. Boards with fewer pits leave the rest 0.
    pub pits: [[u8; 6]; 2],
    /// Stones in each seat's store (Kalah) or captured (Oware, Mangala).
    pub score: [u8; 2],
    /// Pits per side.
    pub pits_per_side: u8,
}

/// A move that was played, as the record and the socket carry it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PlayedMove {
    pub ply: u32,
    #[schemars(with = "u8")]
    #[schema(value_type = u8, maximum = 1)]
    pub seat: Side,
    pub pit: u8,
}

/// A snapshot of a game.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GameState {
    pub game_id: Uuid,
    pub variant: VariantSpec,
    pub rated: bool,
    /// Made against the AI (a seat an AI took over later does not count).
    pub against_ai: bool,
    /// Two people on one device: one player holds both seats.
    pub hotseat: bool,
    /// The player can take a move back now (`undo`): a live game against
    /// the AI where they have moved, or one on one device with a move
    /// played. Never in a game between people, even after an AI took a
    /// seat over.
    pub undoable: bool,
    pub status: GameStatus,
    pub seats: [SeatInfo; 2],
    pub board: Board,
    /// The seat to move, or `null` once the game is over.
    #[schemars(with = "Option<u8>")]
    pub turn: Option<Side>,
    /// The pits the side to move may play.
    pub legal: Vec<u8>,
    /// The number of moves played; the next move is `ply + 1`.
    pub ply: u32,
    /// The last event's version; `sync {since: version}` resumes here.
    pub version: u64,
    pub last_move: Option<PlayedMove>,
    /// Which seats have a connected player.
    pub connected: [bool; 2],
    pub watchers: u32,
    /// The receiver's seat, or `null` for a watcher.
    #[schemars(with = "Option<u8>")]
    pub you: Option<Side>,
    /// The result, once over.
    pub result: Option<Over>,
    pub time_control: Option<TimeControl>,
    pub clocks: Option<Clocks>,
    /// Per seat: milliseconds left of an absent player's reconnect
    /// countdown (0 once it ran out), or `null`.
    pub countdown_ms: [Option<u64>; 2],
    /// The friend room this game belongs to, if any.
    pub room: Option<Uuid>,
    /// The next game, once a rematch started.
    pub rematch: Option<Uuid>,
    /// Why a game asked for as rated is casual, if it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub casual_reason: Option<CasualReason>,
    /// The arena tournament the game belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tournament: Option<Uuid>,
    /// Which seats went berserk (half the clock, no increment).
    #[serde(default)]
    pub berserk: [bool; 2],
}

/// Why a game that was asked for as rated was made casual.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, ToSchema)]
#[cfg_attr(
    feature = "sqlx",
    derive(sqlx::Type),
    sqlx(type_name = "text", rename_all = "snake_case")
)]
#[serde(rename_all = "snake_case")]
pub enum CasualReason {
    /// The two players have already played their rated games together in
    /// the last 24 hours: further games between them count for nothing.
    PairLimit,
    /// One of the players had another rated game on when this one was made
    /// (two rated games asked for at the same instant): ranked games are
    /// one at a time.
    InRankedGame,
}

/// A durable move, broadcast to everyone in the game.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Moved {
    pub ply: u32,
    /// The seat that moved.
    #[schemars(with = "u8")]
    pub by: Side,
    pub pit: u8,
    pub version: u64,
    /// The board after the move.
    pub board: Board,
    /// The seat to move next, or `null` when the move ended the game.
    #[schemars(with = "Option<u8>")]
    pub turn: Option<Side>,
    pub legal: Vec<u8>,
    /// The mover moves again ("one more"): Kalah's last stone in its
    /// store. When `turn` is the mover without it, the other side had no
    /// stones and passed (Mangala).
    pub extra_turn: bool,
    pub clocks: Option<Clocks>,
    /// The player can take a move back now (see [`GameState::undoable`]).
    pub undoable: bool,
}

/// Moves taken back.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Undone {
    pub version: u64,
    /// Moves left; the next move is `ply + 1`.
    pub ply: u32,
    pub board: Board,
    #[schemars(with = "Option<u8>")]
    pub turn: Option<Side>,
    pub legal: Vec<u8>,
    pub last_move: Option<PlayedMove>,
    pub clocks: Option<Clocks>,
    /// The player can take a move back now (see [`GameState::undoable`]).
    pub undoable: bool,
}

/// Why a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, ToSchema)]
#[cfg_attr(
    feature = "sqlx",
    derive(sqlx::Type),
    sqlx(type_name = "text", rename_all = "snake_case")
)]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    /// Kalah: a side ran out of stones.
    SideEmpty,
    /// The player to move had no stones.
    NoStones,
    /// Oware: a player captured more than half the stones.
    Majority,
    /// Oware: the opponent was empty and could not be fed.
    CannotFeed,
    /// A position occurred for the third time.
    Repetition,
    /// Mangala: every hole was empty.
    BoardEmpty,
    /// A player resigned.
    Resign,
    /// A flag fell.
    Timeout,
    /// The opponent was away past the countdown and the winner claimed it
    /// (an abort when the absent side had never moved).
    Abandoned,
    /// A side did not make its first move within the first-move window
    /// (always an abort: no result, unrated).
    NoStart,
    /// The friend room closed with the game unfinished (no result).
    RoomClosed,
}

impl EndReason {
    /// The name on the wire and in the `games.reason` column.
    pub const fn as_str(self) -> &'static str {
        match self {
            EndReason::SideEmpty => "side_empty",
            EndReason::NoStones => "no_stones",
            EndReason::Majority => "majority",
            EndReason::CannotFeed => "cannot_feed",
            EndReason::Repetition => "repetition",
            EndReason::BoardEmpty => "board_empty",
            EndReason::Resign => "resign",
            EndReason::Timeout => "timeout",
            EndReason::Abandoned => "abandoned",
            EndReason::NoStart => "no_start",
            EndReason::RoomClosed => "room_closed",
        }
    }
}

impl From<mancala_rules::EndReason> for EndReason {
    fn from(reason: mancala_rules::EndReason) -> EndReason {
        use mancala_rules::EndReason as Rules;
        match reason {
            Rules::SideEmpty => EndReason::SideEmpty,
            Rules::NoStones => EndReason::NoStones,
            Rules::Majority => EndReason::Majority,
            Rules::CannotFeed => EndReason::CannotFeed,
            Rules::Repetition => EndReason::Repetition,
            Rules::BoardEmpty => EndReason::BoardEmpty,
        }
    }
}

/// Who won.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, ToSchema)]
#[cfg_attr(
    feature = "sqlx",
    derive(sqlx::Type),
    sqlx(type_name = "text", rename_all = "snake_case")
)]
#[serde(rename_all = "snake_case")]
pub enum GameResult {
    /// Seat 0 won.
    P0,
    /// Seat 1 won.
    P1,
    Draw,
    /// No result: the game was aborted.
    Aborted,
}

/// Whether a game moves its players' ratings: it is rated (asked for as
/// rated, and still rated: an AI taking a seat makes it casual) and it
/// ended with a result, not aborted. The one rule: the game host asks it
/// as a game ends and writes its answer into the commit that ends the
/// game (which writes the rating outbox row only then), and the rating
/// service asks it again of every game it claims.
pub fn rates_its_players(rated: bool, result: Option<GameResult>) -> bool {
    rated && result.is_some_and(|result| result != GameResult::Aborted)
}

impl GameResult {
    /// The name on the wire and in the `games.result` column.
    pub const fn as_str(self) -> &'static str {
        match self {
            GameResult::P0 => "p0",
            GameResult::P1 => "p1",
            GameResult::Draw => "draw",
            GameResult::Aborted => "aborted",
        }
    }

    /// The seat that won, if any.
    pub const fn winner(self) -> Option<Side> {
        match self {
            GameResult::P0 => Some(Side::South),
            GameResult::P1 => Some(Side::North),
            GameResult::Draw | GameResult::Aborted => None,
        }
    }
}

/// The end of a game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Over {
    pub version: u64,
    pub result: GameResult,
    pub reason: EndReason,
    pub score: [u8; 2],
}

/// A seat in `POST /internal/v1/games`: a player, or an AI level.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, ToSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum SeatRequest {
    /// A player, with their rating when the game is ranked.
    Player {
        id: Uuid,
        #[serde(default)]
        rating: Option<f64>,
        #[serde(default)]
        rd: Option<f64>,
    },
    /// An AI level (`beginner`, `intermediate`, `advanced`, `perfect`).
    Ai {
        /// `beginner`, `intermediate`, `advanced` or `perfect` (Kalah).
        #[schema(pattern = "^(beginner|intermediate|advanced|perfect)$")]
        level: String,
    },
}

/// `POST /internal/v1/games`: matchmaking (or a test) creates a game.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateGame {
    /// The game's id, chosen by the caller so that a retried request
    /// (after a lost answer) makes the game once. Made up when absent.
    #[serde(default)]
    pub id: Option<Uuid>,
    pub variant: VariantSpec,
    /// Seat 0 (moves first), then seat 1. The same player in both seats
    /// makes a hotseat game (two people on one device).
    #[schema(min_items = 2, max_items = 2)]
    pub seats: [SeatRequest; 2],
    #[serde(default)]
    pub rated: bool,
    /// Untimed when absent.
    #[serde(default)]
    pub time_control: Option<TimeControl>,
    /// A friend game: it opens a room, a series of games between the two.
    #[serde(default)]
    pub room: bool,
    /// The arena tournament the game belongs to (its result scores there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tournament: Option<Uuid>,
}

/// The AI levels a seat may name.
pub const AI_LEVELS: [&str; 4] = ["beginner", "intermediate", "advanced", "perfect"];

/// A [`CreateGame`] that passed every check that needs no database: the
/// one type matchmaking builds (and checks before sending) and game-room
/// accepts, so the two cannot disagree on what a valid game is.
#[derive(Clone, Debug, PartialEq)]
pub struct GameRequest {
    pub id: Option<Uuid>,
    pub variant: mancala_rules::Variant,
    pub seats: [SeatRequest; 2],
    pub rated: bool,
    pub time_control: Option<TimeControl>,
    pub room: bool,
    pub tournament: Option<Uuid>,
}

/// Why a game request is not one.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum InvalidGame {
    #[error("{0}")]
    Variant(String),
    #[error("this board is for analysis only")]
    AnalysisOnly,
    #[error("no AI level {0:?}")]
    Level(String),
    #[error("at least one seat is a player")]
    NoPlayer,
    #[error("ranked games are between two players")]
    RankedNeedsTwo,
    #[error("a game on one device is casual")]
    RankedHotseat,
    #[error("a friend room is for two players")]
    RoomNeedsTwo,
    /// A rated game without a clock lets the side to move stall for ever
    /// while connected: the clock is what answers stalling.
    #[error("a rated game needs a time control")]
    RatedNeedsClock,
    #[error("{}", TimeControl::LIMITS)]
    TimeControl,
    /// Game ids carry the time they were made (UUIDv7): the game history
    /// is partitioned by it.
    #[error("a game id is a UUIDv7")]
    IdVersion,
}

impl CreateGame {
    /// Parses the request into a [`GameRequest`], or says what is wrong.
    pub fn validate(self) -> Result<GameRequest, InvalidGame> {
        if self
            .id
            .is_some_and(|id| id.get_version() != Some(uuid::Version::SortRand))
        {
            return Err(InvalidGame::IdVersion);
        }
        let variant = mancala_rules::Variant::try_from(self.variant)
            .map_err(|error| InvalidGame::Variant(error.to_string()))?;
        if !variant.is_playable() {
            return Err(InvalidGame::AnalysisOnly);
        }
        let mut players = Vec::with_capacity(2);
        for seat in &self.seats {
            match seat {
                SeatRequest::Player { id, .. } => players.push(*id),
                SeatRequest::Ai { level } if !AI_LEVELS.contains(&level.as_str()) => {
                    return Err(InvalidGame::Level(level.clone()));
                }
                SeatRequest::Ai { .. } => {}
            }
        }
        match players.as_slice() {
            [] => return Err(InvalidGame::NoPlayer),
            [_] if self.rated => return Err(InvalidGame::RankedNeedsTwo),
            [a, b] if self.rated && a == b => return Err(InvalidGame::RankedHotseat),
            _ => {}
        }
        if self.room && players.len() != 2 {
            return Err(InvalidGame::RoomNeedsTwo);
        }
        if self.time_control.is_some_and(|tc| !tc.is_playable()) {
            return Err(InvalidGame::TimeControl);
        }
        if self.rated && self.time_control.is_none() {
            return Err(InvalidGame::RatedNeedsClock);
        }
        Ok(GameRequest {
            id: self.id,
            variant,
            seats: self.seats,
            rated: self.rated,
            time_control: self.time_control,
            room: self.room,
            tournament: self.tournament,
        })
    }
}

impl From<GameRequest> for CreateGame {
    fn from(request: GameRequest) -> CreateGame {
        CreateGame {
            id: request.id,
            variant: VariantSpec::from(request.variant),
            seats: request.seats,
            rated: request.rated,
            time_control: request.time_control,
            room: request.room,
            tournament: request.tournament,
        }
    }
}

/// The answer to `POST /internal/v1/games`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreatedGame {
    pub id: Uuid,
    /// Where the players connect: `/v1/games/{id}/play`.
    pub play_path: String,
    /// Where anyone may watch: `/v1/games/{id}/watch`.
    pub watch_path: String,
    /// Whether the game is rated: a game asked for as rated is casual when
    /// `casual_reason` says why.
    #[serde(default)]
    pub rated: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub casual_reason: Option<CasualReason>,
}

/// `POST /internal/v1/games/batch`: many games made in one transaction (a
/// tournament's wave). Each is checked and refused on its own; no room.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateGames {
    #[schema(max_items = 500)]
    pub games: Vec<CreateGame>,
}

/// The most games one batch may ask for.
pub const MAX_BATCH_GAMES: usize = 500;

/// The answer to `POST /internal/v1/games/batch`: one entry per game
/// asked for, in the same order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreatedGames {
    pub games: Vec<BatchCreated>,
}

/// One game of a batch: made, or refused and why (nothing of it was
/// written).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, ToSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum BatchCreated {
    Created(CreatedGame),
    Refused(crate::ErrorBody),
}

/// `GET /v1/games/{id}`: a game's full record.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GameRecord {
    pub id: Uuid,
    pub variant: VariantSpec,
    pub rated: bool,
    pub time_control: Option<TimeControl>,
    pub room: Option<Uuid>,
    pub status: GameStatus,
    pub seats: [SeatInfo; 2],
    pub moves: Vec<PlayedMove>,
    pub result: Option<GameResult>,
    pub reason: Option<EndReason>,
    pub score: Option<[u8; 2]>,
    /// RFC 3339 timestamps.
    pub created_at: String,
    pub ended_at: Option<String>,
}

/// `GET /v1/games/{id}/analysis`: every move of a finished game, judged.
/// Values are seat 0's final store minus seat 1's, in stones, under best
/// play from that position on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GameAnalysis {
    pub id: Uuid,
    /// Every move has its values: the analysis was not cut short by its
    /// deadline (then the earliest moves have none).
    pub complete: bool,
    pub moves: Vec<MoveAnalysis>,
}

/// One move of a game, judged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MoveAnalysis {
    pub ply: u32,
    #[schema(value_type = u8, maximum = 1)]
    pub seat: Side,
    pub pit: u8,
    /// The value before the move (with the best play from there).
    pub before: Option<f64>,
    /// The value after it.
    pub after: Option<f64>,
    /// Stones the move gave away against the best, for its player (0 for a
    /// best move).
    pub loss: Option<f64>,
    /// The best moves in the position: every one when exact, the engine's
    /// choice otherwise.
    pub best: Vec<u8>,
    /// Proved by the solver (Kalah), not estimated by the Advanced engine.
    pub exact: bool,
}

/// One line of a list of games (history, live games, featured).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GameSummary {
    pub id: Uuid,
    pub variant: VariantSpec,
    pub rated: bool,
    pub status: GameStatus,
    pub seats: [SeatInfo; 2],
    pub plies: u32,
    pub result: Option<GameResult>,
    pub reason: Option<EndReason>,
    pub created_at: String,
    pub ended_at: Option<String>,
    /// Made against the AI; two people on one device.
    #[serde(default)]
    pub against_ai: bool,
    #[serde(default)]
    pub hotseat: bool,
    /// Watchers now, on every instance (live games; 0 in histories).
    #[serde(default)]
    pub watchers: u32,
}

/// A page of games; pass `next` as `before` for the next page.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GamePage {
    pub games: Vec<GameSummary>,
    /// The cursor for the next page, or `null` at the end.
    pub next: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A value's serde name, for comparing with `as_str`.
    fn wire(value: impl Serialize) -> String {
        serde_json::to_value(value)
            .ok()
            .and_then(|value| value.as_str().map(str::to_owned))
            .unwrap_or_default()
    }

    #[test]
    fn the_column_names_are_the_wire_names() {
        for status in [GameStatus::Live, GameStatus::Over, GameStatus::Aborted] {
            assert_eq!(status.as_str(), wire(status));
        }
        for result in [
            GameResult::P0,
            GameResult::P1,
            GameResult::Draw,
            GameResult::Aborted,
        ] {
            assert_eq!(result.as_str(), wire(result));
        }
        use EndReason::*;
        for reason in [
            SideEmpty, NoStones, Majority, CannotFeed, Repetition, BoardEmpty, Resign, Timeout,
            Abandoned, NoStart, RoomClosed,
        ] {
            assert_eq!(reason.as_str(), wire(reason));
        }
    }

    #[test]
    fn only_a_rated_game_with_a_result_rates_its_players() {
        for result in [GameResult::P0, GameResult::P1, GameResult::Draw] {
            assert!(rates_its_players(true, Some(result)));
            assert!(!rates_its_players(false, Some(result)));
        }
        assert!(!rates_its_players(true, Some(GameResult::Aborted)));
        assert!(!rates_its_players(true, None), "not over");
    }

    #[test]
    fn messages_are_tagged_and_strict() {
        let parsed: ClientMessage =
            serde_json::from_str(r#"{"t":"move","d":{"pit":3,"ply":1}}"#).unwrap();
        assert_eq!(
            parsed,
            ClientMessage::Move {
                pit: 3,
                ply: 1,
                hidden_ms: None
            }
        );
        assert_eq!(
            serde_json::from_str::<ClientMessage>(r#"{"t":"ping"}"#).unwrap(),
            ClientMessage::Ping
        );
        for bad in [
            r#"{"t":"move","d":{"pit":3,"ply":1,"x":0}}"#,
            r#"{"t":"move","d":{"pit":3,"ply":1},"x":0}"#,
            r#"{"t":"teleport","d":{}}"#,
            r#"{"t":"move","d":{"pit":-1,"ply":1}}"#,
            r#"{"t":"move","d":{"pit":300,"ply":1}}"#,
        ] {
            assert!(serde_json::from_str::<ClientMessage>(bad).is_err(), "{bad}");
        }
        let pong = serde_json::to_string(&ServerMessage::Pong).unwrap();
        assert_eq!(pong, r#"{"t":"pong"}"#);
        let auth = ClientMessage::Auth {
            token: "secret".into(),
        };
        assert!(!format!("{auth:?}").contains("secret"));
    }

    #[test]
    fn a_game_request_is_checked_once_for_both_services() {
        let player = |n: u128| SeatRequest::Player {
            id: Uuid::from_u128(n),
            rating: None,
            rd: None,
        };
        let ai = |level: &str| SeatRequest::Ai {
            level: level.into(),
        };
        let request = |seats: [SeatRequest; 2], rated: bool, room: bool| CreateGame {
            id: None,
            variant: crate::VariantName::Kalah.standard(),
            seats,
            rated,
            time_control: None,
            room,
            tournament: None,
        };
        let clock = Some(TimeControl {
            initial_secs: 180,
            increment_secs: 2,
        });
        let timed = |mut r: CreateGame| {
            r.time_control = clock;
            r
        };
        assert!(
            timed(request([player(1), player(2)], true, true))
                .validate()
                .is_ok()
        );
        assert!(
            request([player(1), ai("perfect")], false, false)
                .validate()
                .is_ok()
        );
        let refused = |r: CreateGame| r.validate().unwrap_err();
        assert_eq!(
            refused(request([ai("beginner"), ai("advanced")], false, false)),
            InvalidGame::NoPlayer
        );
        assert_eq!(
            refused(request([player(1), ai("grandmaster")], false, false)),
            InvalidGame::Level("grandmaster".into())
        );
        assert_eq!(
            refused(timed(request([player(1), ai("advanced")], true, false))),
            InvalidGame::RankedNeedsTwo
        );
        assert_eq!(
            refused(timed(request([player(1), player(1)], true, false))),
            InvalidGame::RankedHotseat
        );
        assert_eq!(
            refused(request([player(1), player(2)], true, true)),
            InvalidGame::RatedNeedsClock
        );
        assert_eq!(
            refused(request([player(1), ai("advanced")], false, true)),
            InvalidGame::RoomNeedsTwo
        );
        let mut slow = request([player(1), player(2)], false, false);
        slow.time_control = Some(TimeControl {
            initial_secs: 0,
            increment_secs: 0,
        });
        assert_eq!(refused(slow), InvalidGame::TimeControl);
        let mut old_style = request([player(1), player(2)], false, false);
        old_style.id = Some(Uuid::new_v4());
        assert_eq!(refused(old_style.clone()), InvalidGame::IdVersion);
        old_style.id = Some(Uuid::now_v7());
        assert!(old_style.validate().is_ok());
    }
}
