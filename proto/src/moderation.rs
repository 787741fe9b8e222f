//! Moderation: roles, reports, sanctions, notes and the audit log, as the
//! players' side and the moderators' console (`/v1/mod/*`) see them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::VariantName;
use crate::rating::{MarkKind, RatingPoint};
use crate::text::TextField;

/// What a player may do beyond playing. Carried in access tokens.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    #[default]
    Player,
    /// Reads reports and accounts, warns, bans, closes, renames, marks.
    Moderator,
    /// A moderator who also grants and takes roles and reads the audit log.
    Admin,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Player => "player",
            Role::Moderator => "moderator",
            Role::Admin => "admin",
        }
    }

    pub fn parse(text: &str) -> Option<Role> {
        match text {
            "player" => Some(Role::Player),
            "moderator" => Some(Role::Moderator),
            "admin" => Some(Role::Admin),
            _ => None,
        }
    }

    pub fn is_player(&self) -> bool {
        *self == Role::Player
    }

    /// A moderator or an admin.
    pub fn moderates(self) -> bool {
        self >= Role::Moderator
    }
}

/// What a reporter may add to a report.
pub const REPORT_TEXT: TextField = TextField::paragraphs("text", 0, 1000);
/// A moderator's note on an account.
pub const NOTE_TEXT: TextField = TextField::paragraphs("text", 1, 2000);
/// The reason of a moderator's action, a lifting or a closed report.
pub const REASON: TextField = TextField::paragraphs("reason", 1, 500);
/// A display name a moderator gives.
pub const DISPLAY_NAME: TextField = TextField::line("name", 1, 40);
/// A name moderators search for.
pub const SEARCH_NAME: TextField = TextField::line("name", 1, 40);

/// Why a player reports another.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReportReason {
    /// Cheating with an engine.
    Engine,
    /// Boosting another's rating, or sandbagging their own.
    Boosting,
    /// Leaving games or stalling them.
    Stalling,
    /// An offensive name.
    OffensiveName,
}

impl ReportReason {
    pub fn as_str(self) -> &'static str {
        match self {
            ReportReason::Engine => "engine",
            ReportReason::Boosting => "boosting",
            ReportReason::Stalling => "stalling",
            ReportReason::OffensiveName => "offensive_name",
        }
    }

    pub fn parse(text: &str) -> Option<ReportReason> {
        match text {
            "engine" => Some(ReportReason::Engine),
            "boosting" => Some(ReportReason::Boosting),
            "stalling" => Some(ReportReason::Stalling),
            "offensive_name" => Some(ReportReason::OffensiveName),
            _ => None,
        }
    }
}

/// `POST /v1/reports`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReportRequest {
    pub player: Uuid,
    /// The finished game the report is about, if one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub game: Option<Uuid>,
    pub reason: ReportReason,
    /// Up to 1,000 characters.
    #[serde(default)]
    pub text: String,
}

/// A report made (or the same one already open).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReportFiled {
    pub id: i64,
}

/// How much a reporter's word weighs, by what their account has behind
/// it when the queue is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReporterStanding {
    /// A guest: one click made it.
    Guest,
    /// Registered, but younger than a week or with fewer than ten rated
    /// games.
    New,
    /// Registered, a week old or more, with ten rated games or more.
    Established,
    /// The fair-play sentinel: a signal in the account's rated games,
    /// with its evidence.
    Automatic,
}

/// What an automatic report rests on: the signal, its figures, and the
/// games with theirs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Evidence {
    /// `ring`, `engine`, `program` or `sandbagging`.
    pub signal: String,
    /// The signal's figures by name (counts, shares, stones a move,
    /// coefficients of variation).
    pub figures: std::collections::BTreeMap<String, f64>,
    pub games: Vec<GameEvidence>,
}

/// One game an automatic report names, with its own figures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GameEvidence {
    pub game: Uuid,
    pub figures: std::collections::BTreeMap<String, f64>,
}

/// A report, as moderators see it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Report {
    pub id: i64,
    /// Absent for an automatic report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reporter: Option<PlayerRef>,
    pub reporter_standing: ReporterStanding,
    /// An automatic report's evidence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<Evidence>,
    pub player: PlayerRef,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub game: Option<Uuid>,
    pub reason: ReportReason,
    pub text: String,
    /// RFC 3339.
    pub at: String,
    /// RFC 3339; absent while open.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closed_at: Option<String>,
}

/// A player named: id and display name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PlayerRef {
    pub id: Uuid,
    pub name: String,
}

/// `GET /v1/mod/reports`: the open reports, grouped by the reported
/// account, the weightiest first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReportQueue {
    pub accounts: Vec<ReportedAccount>,
}

/// One reported account and its open reports.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReportedAccount {
    pub player: PlayerRef,
    /// Distinct reporters.
    pub reporters: u32,
    /// What the reports weigh together, the queue's order: each network
    /// the reporters signed up from counts once, at its best-standing
    /// reporter (1 established, 0.5 new, 0.2 guest).
    pub weight: f64,
    pub reports: Vec<Report>,
}

/// What a moderator can put on an account that lasts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SanctionKind {
    Warning,
    RankedBan,
    Booster,
    Engine,
}

impl SanctionKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SanctionKind::Warning => "warning",
            SanctionKind::RankedBan => "ranked_ban",
            SanctionKind::Booster => "booster",
            SanctionKind::Engine => "engine",
        }
    }

    pub fn parse(text: &str) -> Option<SanctionKind> {
        match text {
            "warning" => Some(SanctionKind::Warning),
            "ranked_ban" => Some(SanctionKind::RankedBan),
            "booster" => Some(SanctionKind::Booster),
            "engine" => Some(SanctionKind::Engine),
            _ => None,
        }
    }

    pub fn mark(kind: MarkKind) -> SanctionKind {
        match kind {
            MarkKind::Booster => SanctionKind::Booster,
            MarkKind::Engine => SanctionKind::Engine,
        }
    }

    /// Whether it closes ranked play while it stands.
    pub fn closes_ranked(self) -> bool {
        self != SanctionKind::Warning
    }
}

/// A sanction, as moderators see it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Sanction {
    pub id: i64,
    pub kind: SanctionKind,
    pub reason: String,
    /// Absent: the command line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<PlayerRef>,
    /// RFC 3339.
    pub at: String,
    /// A ban's end (RFC 3339); absent: until lifted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<String>,
    /// A mark's reach back (RFC 3339): the rated games from then on count
    /// for nobody.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub covers_from: Option<String>,
    /// RFC 3339; absent while it stands.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lifted_at: Option<String>,
    /// It stands now (not lifted, not run out).
    pub active: bool,
}

/// A sanction as its player sees it: what, why, until when.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SanctionNotice {
    pub id: i64,
    pub kind: SanctionKind,
    pub reason: String,
    /// RFC 3339.
    pub at: String,
    /// Seconds until it ends; absent: until a moderator lifts it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ends_in_secs: Option<u64>,
}

/// `POST /v1/mod/players/{id}/actions`: one action on an account, with
/// its reason (1 to 500 characters), which goes into the audit log.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(tag = "action", rename_all = "snake_case", deny_unknown_fields)]
pub enum ModAction {
    /// Shown to the player until they dismiss it. `about`: the reason of
    /// the reports it answers (they are closed); none when absent.
    Warn {
        reason: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        about: Option<ReportReason>,
    },
    /// No ranked queue and no rated invite for `hours` (1 to 8,760).
    /// `about`: the reason of the reports it answers, as for a warning.
    BanRanked {
        reason: String,
        hours: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        about: Option<ReportReason>,
    },
    /// The account cannot sign in; its sessions end at once; its name stays
    /// taken, its games stay, it leaves the leaderboards.
    Close { reason: String },
    /// Opens a closed account again.
    Reopen { reason: String },
    /// A new display name (the username stays for signing in).
    Rename { reason: String, name: String },
    /// Marks a booster or an engine: the account's rated games created
    /// from `since` (RFC 3339; all of them when absent) count for nobody,
    /// and every rating they moved is recomputed.
    Mark {
        reason: String,
        mark: MarkKind,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        since: Option<String>,
    },
    /// Admins only: grants or takes a role; the account's sessions end.
    SetRole { reason: String, role: Role },
}

impl ModAction {
    pub fn reason(&self) -> &str {
        match self {
            ModAction::Warn { reason, .. }
            | ModAction::BanRanked { reason, .. }
            | ModAction::Close { reason }
            | ModAction::Reopen { reason }
            | ModAction::Rename { reason, .. }
            | ModAction::Mark { reason, .. }
            | ModAction::SetRole { reason, .. } => reason,
        }
    }

    /// The open reports about the account that the action answers, and
    /// so closes: a mark answers the reports of its kind, a new name the
    /// reports about the name, a closed account every report; a warning
    /// or a ban the reports of the reason it is given `about`. Nothing
    /// else closes a report but a moderator closing it.
    pub fn answers(&self) -> Answers {
        match self {
            ModAction::Warn { about, .. } | ModAction::BanRanked { about, .. } => {
                about.map_or(Answers::None, Answers::Reason)
            }
            ModAction::Mark { mark, .. } => Answers::Reason(match mark {
                MarkKind::Booster => ReportReason::Boosting,
                MarkKind::Engine => ReportReason::Engine,
            }),
            ModAction::Rename { .. } => Answers::Reason(ReportReason::OffensiveName),
            ModAction::Close { .. } => Answers::All,
            ModAction::Reopen { .. } | ModAction::SetRole { .. } => Answers::None,
        }
    }

    /// The name the audit log keeps it under.
    pub fn name(&self) -> &'static str {
        match self {
            ModAction::Warn { .. } => "warn",
            ModAction::BanRanked { .. } => "ban_ranked",
            ModAction::Close { .. } => "close",
            ModAction::Reopen { .. } => "reopen",
            ModAction::Rename { .. } => "rename",
            ModAction::Mark { .. } => "mark",
            ModAction::SetRole { .. } => "set_role",
        }
    }
}

/// Which open reports an action closes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answers {
    None,
    Reason(ReportReason),
    All,
}

/// `POST /v1/mod/sanctions/{id}/lift`, `POST /v1/mod/reports/{id}/close`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Reasoned {
    pub reason: String,
}

/// What an action did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ActionDone {
    /// Its line in the audit log.
    pub log_id: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sanction: Option<Sanction>,
    /// The ratings recompute a mark (or its lifting) started: follow it at
    /// `GET /v1/mod/recomputes/{id}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recompute: Option<i64>,
}

/// `GET /v1/mod/recomputes/{id}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RecomputeStatus {
    pub id: i64,
    pub done: bool,
    /// History lines rewritten (voided, restored, or rated again).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lines_changed: Option<u32>,
    /// Rating rows (player and variant) whose value changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratings_changed: Option<u32>,
    #[serde(default)]
    pub players: Vec<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub millis: Option<u32>,
}

/// `POST /v1/mod/players/{id}/notes`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NoteRequest {
    /// 1 to 2,000 characters.
    pub text: String,
}

/// A moderators' note on an account.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Note {
    pub id: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<PlayerRef>,
    pub text: String,
    /// RFC 3339.
    pub at: String,
}

/// A line of the audit log.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LogEntry {
    pub id: i64,
    /// RFC 3339.
    pub at: String,
    /// Absent: the `mancala-admin` command line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actor: Option<PlayerRef>,
    pub action: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub player: Option<PlayerRef>,
    pub reason: String,
    /// What the action carried (a ban's hours, a new name, a mark...).
    #[schema(value_type = Object)]
    pub details: serde_json::Value,
}

/// `GET /v1/mod/log`: newest first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LogPage {
    pub entries: Vec<LogEntry>,
    /// Pass as `before` for the next page; absent at the end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next: Option<i64>,
}

/// An account that shares a network with the one looked at.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkedAccount {
    pub player: PlayerRef,
    /// The network (an IPv4 /24, an IPv6 /64) both used.
    pub network: String,
    /// RFC 3339: when the other account was last seen on it.
    pub last_seen: String,
    /// Games the two played each other.
    pub games_together: u32,
}

/// An opponent the account played often.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FrequentOpponent {
    pub player: PlayerRef,
    pub games: u32,
    /// Rated games and the account's score in them (wins, draws, losses).
    pub rated: u32,
    pub wins: u32,
    pub draws: u32,
    pub losses: u32,
}

/// One of the account's recent games.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AccountGame {
    pub id: Uuid,
    pub variant: VariantName,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opponent: Option<PlayerRef>,
    /// `ai` for a game against the AI.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ai: Option<String>,
    pub rated: bool,
    pub status: String,
    /// `win`, `draw`, `loss` for the account, or `aborted`; absent while live.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub plies: u32,
    /// RFC 3339.
    pub at: String,
    /// Its analysis is kept (GET /v1/games/{id}/analysis answers at once).
    pub analysed: bool,
}

/// An offence of the fair-play record, with whether it was forgiven.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RecordedOffence {
    pub game_id: Uuid,
    pub kind: String,
    /// RFC 3339.
    pub at: String,
    pub forgiven: bool,
}

/// One variant's rating and its history.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AccountRating {
    pub variant: VariantName,
    pub rating: f64,
    pub rd: f64,
    pub games: u32,
    /// Oldest first; voided games say by which mark.
    pub history: Vec<RatingPoint>,
}

/// `GET /v1/mod/players/{id}`: everything a moderator needs to decide.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AccountFile {
    pub player: PlayerRef,
    /// Absent for a guest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    pub role: Role,
    /// RFC 3339.
    pub created_at: String,
    /// RFC 3339.
    pub last_seen_at: String,
    /// RFC 3339; absent while open.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closed_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signup_network: Option<String>,
    pub sanctions: Vec<Sanction>,
    pub notes: Vec<Note>,
    /// Reports about the account, newest first.
    pub reports: Vec<Report>,
    pub offences: Vec<RecordedOffence>,
    pub linked: Vec<LinkedAccount>,
    pub opponents: Vec<FrequentOpponent>,
    pub ratings: Vec<AccountRating>,
    pub games: Vec<AccountGame>,
}

/// `GET /v1/mod/players?name=`: accounts whose name starts so.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PlayerSearch {
    pub players: Vec<PlayerRef>,
}

/// `POST /v1/me/close`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CloseRequest {
    /// A registered player's password (a guest has none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password: Option<String>,
}

/// `GET /v1/me/data`: what the site keeps about you, to take away.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MyData {
    pub player: PlayerRef,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    /// RFC 3339.
    pub created_at: String,
    /// The network (an IPv4 /24, an IPv6 /64) the account was made from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signup_network: Option<String>,
    /// The networks the account signed in or kept a session from.
    pub networks: Vec<DataNetwork>,
    /// Every sign-in kept (a session: it lasts while its refresh token is
    /// used), newest first.
    pub sessions: Vec<DataSession>,
    pub ratings: Vec<AccountRating>,
    /// Every game, oldest first, with its moves (the pits played, 1 to 6,
    /// in order).
    pub games: Vec<DataGame>,
    /// Games not played that the fair-play rules recorded.
    pub fair_play: Vec<RecordedOffence>,
    /// What moderators put on the account (never their notes).
    pub sanctions: Vec<SanctionNotice>,
    /// The reports you filed about others.
    pub reports_filed: Vec<FiledReport>,
    /// The arenas you joined.
    pub tournaments: Vec<DataTournament>,
    /// The friend invites you made.
    pub invites: Vec<DataInvite>,
}

/// A network an account used, in [`MyData`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DataNetwork {
    pub network: String,
    /// RFC 3339.
    pub first_seen: String,
    /// RFC 3339.
    pub last_seen: String,
}

/// A sign-in, in [`MyData`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DataSession {
    /// RFC 3339.
    pub started_at: String,
    /// RFC 3339: when it ends unless used.
    pub expires_at: String,
    /// RFC 3339: when it was ended (signed out, closed, or a replayed
    /// token).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<String>,
}

/// A report you filed, in [`MyData`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FiledReport {
    pub id: i64,
    pub player: PlayerRef,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub game: Option<Uuid>,
    pub reason: ReportReason,
    pub text: String,
    /// RFC 3339.
    pub at: String,
    /// RFC 3339: when a moderator answered it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closed_at: Option<String>,
}

/// An arena joined, in [`MyData`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DataTournament {
    pub id: Uuid,
    pub name: String,
    pub variant: VariantName,
    /// RFC 3339.
    pub joined_at: String,
    /// The rating you joined with.
    pub rating: f64,
    pub withdrawn: bool,
    /// Whether you made it (a private arena).
    pub made_by_you: bool,
}

/// A friend invite made, in [`MyData`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DataInvite {
    pub code: String,
    pub rated: bool,
    /// RFC 3339.
    pub created_at: String,
    /// The game it started, once accepted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub game: Option<Uuid>,
}

/// One game of [`MyData`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DataGame {
    pub game: AccountGame,
    pub moves: Vec<u8>,
}
