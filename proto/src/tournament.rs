//! Arena tournaments as the API shows them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::VariantName;
use crate::error::ErrorBody;
use crate::game::TimeControl;
use crate::text::TextField;

/// A tournament's name, from a player or from the operator's schedule.
pub const TOURNAMENT_NAME: TextField = TextField::line("name", 1, 60);

/// The highest rating band a tournament may set: no Glicko-2 rating comes
/// near it, and a larger number is a mistake to answer, not to store.
pub const MAX_RATING_BAND: u32 = 5_000;

/// `POST /v1/tournaments`: a private arena, joined with its code.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewTournament {
    /// 1 to 60 characters.
    pub name: String,
    pub variant: VariantName,
    pub time_control: TimeControl,
    /// Seconds from now to the start: 0 (at once) to a week.
    #[serde(default)]
    pub starts_in_secs: u32,
    /// How long it runs: 5 to 1,440 minutes.
    pub minutes: u32,
    #[serde(default)]
    pub rated: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_rating: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rating: Option<u32>,
    /// 2 to 10,000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_players: Option<u32>,
}

/// Where a tournament is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TournamentStatus {
    Upcoming,
    Running,
    Finished,
}

/// A tournament.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Tournament {
    pub id: Uuid,
    pub name: String,
    pub variant: VariantName,
    pub time_control: TimeControl,
    /// RFC 3339.
    pub starts_at: String,
    /// RFC 3339.
    pub ends_at: String,
    pub status: TournamentStatus,
    /// Seconds until the start (upcoming) or the end (running); 0 after.
    pub seconds_left: u64,
    pub rated: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_rating: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rating: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_players: Option<u32>,
    /// Players who joined (withdrawn ones included: they keep their points).
    pub players: u32,
    /// A private arena (joined with a code, not listed).
    pub private: bool,
    /// The code, for the one who made it (to pass on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
}

/// `GET /v1/tournaments`: the listed arenas running now and starting next.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TournamentList {
    pub running: Vec<Tournament>,
    pub upcoming: Vec<Tournament>,
}

/// `POST /v1/tournaments/{id}/join`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct JoinTournament {
    /// A private arena's code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
}

/// A player's row in the standings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StandingRow {
    pub rank: u32,
    pub player: Uuid,
    pub name: String,
    pub score: i32,
    /// Each game's points, oldest first (4 and 5 are wins on fire).
    pub sheet: Vec<i32>,
    /// The next win counts double.
    pub on_fire: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub performance: Option<f64>,
    pub rating: f64,
    pub games: u32,
    /// Not paired now (left, a game not started, or asked).
    pub paused: bool,
    pub withdrawn: bool,
}

/// `GET /v1/tournaments/{id}`: the tournament and a page of its standings
/// (10 rows), with my own row wherever it is.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TournamentView {
    pub tournament: Tournament,
    /// The page shown, from 1.
    pub page: u32,
    pub pages: u32,
    pub standings: Vec<StandingRow>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub me: Option<StandingRow>,
    /// My live game in it, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub my_game: Option<Uuid>,
    /// The live game between the best-placed players.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_game: Option<Uuid>,
}

/// One finished arena a player played in, for their profile.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TournamentResult {
    pub tournament: Tournament,
    pub rank: u32,
    pub score: i32,
    pub games: u32,
    /// A place on the podium of a listed arena: what a profile shows as
    /// a title. A private arena's result never is (anyone can make one and
    /// fill it with friends); it is shown as private.
    #[serde(default)]
    pub title: bool,
}

/// `GET /v1/players/{id}/tournaments`: the finished arenas, newest first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TournamentResults {
    pub results: Vec<TournamentResult>,
}

/// What a client of the standings socket (`GET /v1/tournaments/{id}/live`)
/// sends: nothing is required; `auth` adds my row and my game, `page`
/// picks the ten rows followed.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(
    tag = "t",
    content = "d",
    rename_all = "snake_case",
    deny_unknown_fields
)]
pub enum TournamentClientMessage {
    /// An access token: the pushes then carry my row and my game.
    Auth {
        token: String,
    },
    /// The page of the standings to follow, from 1.
    Page {
        page: u32,
    },
    Ping,
}

impl std::fmt::Debug for TournamentClientMessage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TournamentClientMessage::Auth { .. } => f.write_str("Auth(..)"),
            TournamentClientMessage::Page { page } => write!(f, "Page({page})"),
            TournamentClientMessage::Ping => f.write_str("Ping"),
        }
    }
}

/// What the standings socket sends.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(
    tag = "t",
    content = "d",
    rename_all = "snake_case",
    deny_unknown_fields
)]
pub enum TournamentServerMessage {
    /// The arena as it stands: on connecting, after `auth` or `page`, and
    /// at every change (a game ends or starts, someone joins, pauses or
    /// withdraws, the arena starts or ends).
    Standings(Box<LiveStandings>),
    Error(ErrorBody),
    Pong,
}

/// One push of the standings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LiveStandings {
    /// Counts the changes this server has pushed for the arena.
    pub version: u64,
    /// When the change was noticed (ms since the Unix epoch): a client
    /// beside the server can measure how long the push took.
    pub changed_at_ms: u64,
    pub view: TournamentView,
}
