//! The rating service's own settings, declared (see
//! `mancala_platform::cli`).

use std::time::Duration;

use mancala_platform::ConfigError;
use mancala_platform::config::positive_millis;

use crate::glicko::RatingRules;

/// Who makes a leaderboard.
#[derive(Clone, Copy, Debug, PartialEq, clap::Args)]
pub struct Eligibility {
    /// At most this rating deviation, as of now.
    #[arg(env = "APP_LEADERBOARD_MAX_RD", default_value_t = 80.0)]
    pub max_rd: f64,
    /// At least this many rated games.
    #[arg(env = "APP_LEADERBOARD_MIN_GAMES", default_value_t = 10)]
    pub min_games: u32,
    /// A rated game within this many days.
    #[arg(env = "APP_LEADERBOARD_ACTIVE_DAYS", default_value_t = 30.0)]
    pub active_days: f64,
}

/// The bound on gains from accounts a player may control
/// (`crate::boosting`).
#[derive(Clone, Copy, Debug, PartialEq, clap::Args)]
pub struct BoostingSettings {
    /// An account made within this many days from a network its opponent
    /// has used in that time is linked to the opponent.
    #[arg(env = "APP_LINKED_ACCOUNT_DAYS", default_value_t = 30,
          value_parser = clap::value_parser!(u32).range(1..=3650))]
    pub linked_days: u32,
    /// Rating points a player can gain, per variant, from games against
    /// linked accounts over `APP_LINKED_ACCOUNT_DAYS`.
    #[arg(env = "APP_LINKED_GAIN_BUDGET", default_value_t = 50.0)]
    pub linked_budget: f64,
    /// Net rating points a player can gain, per variant, from games
    /// against thin opponents (young accounts, few rated games, or mostly
    /// quick losses) over `APP_THIN_GAIN_DAYS`: gains count up, losses
    /// against them count down.
    #[arg(env = "APP_THIN_GAIN_BUDGET", default_value_t = 80.0)]
    pub thin_budget: f64,
    /// The window of `APP_THIN_GAIN_BUDGET`, in days.
    #[arg(env = "APP_THIN_GAIN_DAYS", default_value_t = 30,
          value_parser = clap::value_parser!(u32).range(1..=3650))]
    pub thin_days: u32,
    /// An account younger than this many days is a thin opponent.
    #[arg(env = "APP_THIN_ACCOUNT_DAYS", default_value_t = 7,
          value_parser = clap::value_parser!(u32).range(0..=3650))]
    pub thin_account_days: u32,
    /// An opponent with fewer rated games of the variant than this is
    /// thin.
    #[arg(env = "APP_THIN_GAMES", default_value_t = 10,
          value_parser = clap::value_parser!(u32).range(0..=100_000))]
    pub thin_games: u32,
}

impl BoostingSettings {
    /// A loss within this many plies by resignation, flag or leaving is a
    /// quick one; five of an opponent's last ten make them thin.
    pub const QUICK_LOSS_PLIES: i32 = 20;
    pub const QUICK_LOSSES_NEEDED: i32 = 5;
}

/// Everything the rating service is configured with.
#[derive(Clone, Debug, clap::Args)]
pub struct RatingSettings {
    #[command(flatten)]
    pub rules: RatingRules,
    #[command(flatten)]
    pub eligibility: Eligibility,
    #[command(flatten)]
    pub boosting: BoostingSettings,
    /// Outbox workers in this process.
    #[arg(env = "APP_RATING_WORKERS", default_value_t = 2,
          value_parser = clap::value_parser!(u16).range(1..=256))]
    pub workers: u16,
    /// The safety-net poll of the outbox when no notice comes, in
    /// milliseconds.
    #[arg(env = "APP_RATING_POLL_MS", default_value = "1000", value_parser = positive_millis)]
    pub poll: Duration,
}

impl RatingSettings {
    /// Reads the settings from name-value pairs (tests, `arena`'s own).
    pub fn from_vars(
        vars: impl IntoIterator<Item = (String, String)>,
    ) -> Result<RatingSettings, ConfigError> {
        mancala_platform::cli::from_vars(vars)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_lichess_and_workers_are_whole() {
        let settings = RatingSettings::from_vars([]).unwrap();
        assert_eq!(settings.rules, RatingRules::default());
        assert_eq!(settings.workers, 2);
        let error =
            RatingSettings::from_vars([("APP_RATING_WORKERS".into(), "2.7".into())]).unwrap_err();
        assert_eq!(error.name, "APP_RATING_WORKERS");
    }
}
