//! The lobby socket (`/v1/lobby`) and the matchmaking REST bodies: queues,
//! games against the AI, hotseat games, friend invites, lobby stats.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::error::ErrorBody;
use crate::game::{SeatInfo, Side, TimeControl};
use crate::variant::{VariantName, VariantSpec};

/// What a lobby client sends.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(
    tag = "t",
    content = "d",
    rename_all = "snake_case",
    deny_unknown_fields
)]
pub enum LobbyClientMessage {
    /// The first message: the access token.
    Auth {
        token: String,
    },
    /// Wait for a ranked game of `variant` (`kalah`, `oware`, `mangala`)
    /// at `time_control`. Several queues at once are fine.
    QueueJoin {
        variant: VariantName,
        time_control: TimeControl,
    },
    /// Leave one queue, or every queue when `d` is left out.
    QueueLeave {
        #[serde(default)]
        variant: Option<VariantName>,
        #[serde(default)]
        time_control: Option<TimeControl>,
    },
    Ping,
}

impl std::fmt::Debug for LobbyClientMessage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LobbyClientMessage::Auth { .. } => f.write_str("Auth(..)"),
            LobbyClientMessage::QueueJoin {
                variant,
                time_control,
            } => write!(f, "QueueJoin({variant}, {time_control:?})"),
            LobbyClientMessage::QueueLeave { variant, .. } => write!(f, "QueueLeave({variant:?})"),
            LobbyClientMessage::Ping => f.write_str("Ping"),
        }
    }
}

/// What the lobby sends.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(
    tag = "t",
    content = "d",
    rename_all = "snake_case",
    deny_unknown_fields
)]
pub enum LobbyServerMessage {
    QueueStatus(QueueStatus),
    /// A game was made: connect to `ws_path`.
    Matched(Matched),
    /// A friend accepted your invite: its first game is made (you move
    /// first), connect to `ws_path`.
    InviteAccepted(InviteAccepted),
    LobbyStats(LobbyStats),
    /// The player's fair-play record: a warning, or a ban from ranked
    /// play with the time left.
    FairPlay(crate::fair_play::FairPlayStanding),
    Error(ErrorBody),
    Pong,
}

/// Your invite was accepted.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InviteAccepted {
    pub code: String,
    pub game_id: Uuid,
    /// Who accepted.
    pub friend: InviteCreator,
    pub ws_path: String,
}

/// One queue as a waiting player sees it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QueueStatus {
    /// `kalah:3+2` and so on.
    pub queue: String,
    pub waiting: u64,
    /// The rating difference this player accepts now; it widens.
    pub window: f64,
    /// Until a pairing wave that may pair this player with someone
    /// waiting now (their rating windows met); when nobody waiting is in
    /// reach before the AI fallback (`by_ai_fallback`), the fallback's
    /// countdown. An estimate: newcomers may come sooner.
    pub estimated_wait_ms: u64,
    /// Whether `estimated_wait_ms` is the AI fallback's countdown: nobody
    /// waiting can be paired with this player before it.
    #[serde(default)]
    pub by_ai_fallback: bool,
    /// Others waiting who are not paired with this player now because the
    /// two just played each other (in `waiting`, but not opponents).
    #[serde(default)]
    pub last_opponents_waiting: u64,
    /// When an AI opponent comes if no person does.
    pub ai_fallback_in_ms: u64,
}

/// A game found.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Matched {
    pub game_id: Uuid,
    pub queue: String,
    /// The player's seat: 0 moves first.
    #[schemars(with = "u8")]
    pub seat: Side,
    pub opponent: SeatInfo,
    pub ws_path: String,
    /// Whether the game is rated; a ranked pairing is casual when
    /// `casual_reason` says why (the pair's rated games of the day).
    #[serde(default)]
    pub rated: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub casual_reason: Option<crate::game::CasualReason>,
}

/// How busy the platform is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LobbyStats {
    /// Distinct players with any socket open.
    pub online: u64,
    /// Players waiting, per queue.
    pub in_queue: BTreeMap<String, u64>,
    /// Players in live games.
    pub playing: u64,
}

/// A ranked queue the platform offers (`GET /v1/queues`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct QueueInfo {
    /// Its name, as `queue_status` and the stats give it: `kalah:3+2`.
    pub queue: String,
    pub variant: VariantName,
    /// What `queue_join` must name, exactly.
    pub time_control: TimeControl,
    /// Players waiting in it now.
    pub waiting: u64,
}

/// One of your live games (`GET /v1/me/games`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MyGame {
    pub game_id: Uuid,
    pub variant: VariantName,
    pub rated: bool,
    pub against_ai: bool,
    pub hotseat: bool,
    /// Your seat (0 moves first); in a hotseat game you hold both.
    #[schema(value_type = u8, maximum = 1)]
    pub seat: Side,
    pub ws_path: String,
    /// The arena tournament the game belongs to (the way back to it after
    /// the game).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tournament: Option<Uuid>,
}

/// Which side the human takes against the AI.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SideChoice {
    First,
    Second,
    Random,
}

/// `POST /v1/ai-games`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AiGameRequest {
    pub variant: VariantSpec,
    /// `beginner`, `intermediate`, `advanced` or `perfect` (Kalah).
    #[schema(pattern = "^(beginner|intermediate|advanced|perfect)$")]
    pub level: String,
    pub side: SideChoice,
    #[serde(default)]
    pub time_control: Option<TimeControl>,
}

/// `POST /v1/hotseat-games`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct HotseatRequest {
    pub variant: VariantSpec,
    #[serde(default)]
    pub time_control: Option<TimeControl>,
}

/// A game made for the caller.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewGameAnswer {
    pub game_id: Uuid,
    /// The caller's seat (the first of two in a hotseat game).
    #[schema(value_type = u8, maximum = 1)]
    pub seat: Side,
    pub ws_path: String,
}

/// `POST /v1/invites`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct InviteRequest {
    pub variant: VariantSpec,
    #[serde(default)]
    pub time_control: Option<TimeControl>,
    #[serde(default)]
    pub rated: bool,
}

/// An invite as anyone holding the code sees it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Invite {
    pub code: String,
    /// The link to share.
    pub url: String,
    pub creator: InviteCreator,
    pub variant: VariantSpec,
    pub time_control: Option<TimeControl>,
    pub rated: bool,
    /// RFC 3339.
    pub expires_at: String,
    /// `open`, `accepted` or `expired`.
    pub status: String,
    /// The game, once accepted.
    pub game_id: Option<Uuid>,
}

/// Who invites.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct InviteCreator {
    pub id: Uuid,
    pub name: String,
}
