//! The rating service's REST bodies, and the rating change players see
//! after a rated game.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::VariantName;
use mancala_rules::Side;

/// One seat's rating change, sent to a finished game's sockets.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RatingDelta {
    /// 0 or 1.
    #[schema(value_type = u8)]
    #[schemars(with = "u8")]
    pub seat: Side,
    pub before: f64,
    pub after: f64,
}

/// A place on a leaderboard.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LeaderboardEntry {
    pub rank: u64,
    pub player: Uuid,
    pub name: String,
    pub rating: f64,
    pub rd: f64,
    pub games: u32,
}

/// `GET /v1/leaderboard/{variant}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Leaderboard {
    pub variant: VariantName,
    pub entries: Vec<LeaderboardEntry>,
    /// Who is ranked, as this server is set up.
    pub eligibility: Eligibility,
}

/// Who makes a leaderboard: the server's settings, so a page says what
/// they are rather than what they were once.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Eligibility {
    /// At least this many rated games in the variant.
    pub min_games: u32,
    /// A rated game within this many days.
    pub active_days: f64,
    /// A rating deviation of at most this, as of now.
    pub max_rd: f64,
}

/// `GET /v1/leaderboard/{variant}/me`: the rank, or why there is none.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MyRank {
    pub rank: Option<u64>,
    /// `guest`, `no_rating`, `provisional` (RD too high), `few_games`,
    /// `inactive`, `closed` (the account) or `marked` (as a booster or an
    /// engine), when unranked.
    pub reason: Option<String>,
}

/// A player's rating in one variant.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct VariantRating {
    pub variant: VariantName,
    pub rating: f64,
    /// As of now: it grows while the player does not play.
    pub rd: f64,
    pub provisional: bool,
    pub games: u32,
    pub wins: u32,
    pub draws: u32,
    pub losses: u32,
}

/// `GET /v1/players/{id}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    pub id: Uuid,
    pub name: String,
    /// A guest account (never for a closed one: closing forgets whether
    /// it had a username).
    pub guest: bool,
    /// The account was closed (by its player or a moderator).
    #[serde(default)]
    pub closed: bool,
    pub ratings: Vec<VariantRating>,
}

/// A point of the rating chart.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RatingPoint {
    pub game_id: Uuid,
    /// RFC 3339.
    pub at: String,
    pub rating: f64,
    /// The mark (on either player) that voids this game: it moved nobody's
    /// rating, and `rating` is the rating as it stood.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub voided_by: Option<MarkKind>,
}

/// A moderator's mark on an account whose rated games then count for
/// nobody.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum MarkKind {
    /// Lost on purpose to raise another's rating, or won against accounts
    /// they control.
    Booster,
    /// Played with an engine's help.
    Engine,
}

impl MarkKind {
    pub fn as_str(self) -> &'static str {
        match self {
            MarkKind::Booster => "booster",
            MarkKind::Engine => "engine",
        }
    }

    pub fn parse(text: &str) -> Option<MarkKind> {
        match text {
            "booster" => Some(MarkKind::Booster),
            "engine" => Some(MarkKind::Engine),
            _ => None,
        }
    }
}
