//! Fair play on the wire: what counted against a player for not playing
//! a game, and what it brings (a warning, a ban from ranked play).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

/// A way of spoiling a game between two people that was asked for as
/// rated, by not playing it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, ToSchema)]
#[cfg_attr(
    feature = "sqlx",
    derive(sqlx::Type),
    sqlx(type_name = "text", rename_all = "snake_case")
)]
#[serde(rename_all = "snake_case")]
pub enum OffenceKind {
    /// The first-move window passed on the player's turn: they never
    /// started the game.
    NoStart,
    /// They resigned (aborted) before making their first move.
    EarlyAbort,
    /// They were away past the reconnect countdown, and the opponent
    /// claimed the game or went on against the AI.
    Left,
    /// Their clock ran out while they were connected.
    Timeout,
    /// They resigned within the game's first plies.
    QuickResign,
}

impl OffenceKind {
    pub const ALL: [OffenceKind; 5] = [
        OffenceKind::NoStart,
        OffenceKind::EarlyAbort,
        OffenceKind::Left,
        OffenceKind::Timeout,
        OffenceKind::QuickResign,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            OffenceKind::NoStart => "no_start",
            OffenceKind::EarlyAbort => "early_abort",
            OffenceKind::Left => "left",
            OffenceKind::Timeout => "timeout",
            OffenceKind::QuickResign => "quick_resign",
        }
    }
}

/// One offence, as its player is shown it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Offence {
    pub game_id: Uuid,
    pub kind: OffenceKind,
    /// When (RFC 3339).
    pub at: String,
    /// Another guest's, from the same network as this guest: a guest's
    /// record is kept by network as well as by account.
    pub on_network: bool,
}

/// A player's record as it stands: `GET /v1/me/fair-play`, and the lobby
/// socket's `fair_play` message (sent at sign-in when there is something
/// to say, and with a refused queue entry).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FairPlayStanding {
    /// The offences that count now (within the window), newest first.
    pub offences: Vec<Offence>,
    /// The window offences count in, seconds.
    pub window_secs: u64,
    /// Offences that bring a ban; `offences.len()` reaching it (or more).
    pub ban_after: u32,
    /// One more offence brings a ban.
    pub warned: bool,
    /// Seconds until ranked play is open again; absent when it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub banned_secs: Option<u64>,
    /// What moderators put on the account that stands now: a warning not
    /// yet dismissed, a ranked ban, a mark; each with why and until when.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sanctions: Vec<crate::moderation::SanctionNotice>,
}
