//! The rating service's own settings.

use std::collections::HashMap;
use std::time::Duration;

use mancala_platform::ConfigError;

use crate::glicko::RatingRules;

/// Who makes a leaderboard.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Eligibility {
    /// `APP_LEADERBOARD_MAX_RD`: at most this RD, as of now.
    pub max_rd: f64,
    /// `APP_LEADERBOARD_MIN_GAMES`: at least this many rated games.
    pub min_games: u32,
    /// `APP_LEADERBOARD_ACTIVE_DAYS`: a rated game within this many days.
    pub active_days: f64,
}

/// Everything the rating service is configured with.
#[derive(Clone, Debug)]
pub struct RatingSettings {
    pub rules: RatingRules,
    pub eligibility: Eligibility,
    /// `APP_RATING_WORKERS`: outbox workers in this process.
    pub workers: usize,
    /// `APP_RATING_POLL_MS`: the safety-net poll when no notice comes.
    pub poll: Duration,
}

impl RatingSettings {
    pub fn from_env() -> Result<RatingSettings, ConfigError> {
        RatingSettings::from_vars(std::env::vars())
    }

    pub fn from_vars(
        vars: impl IntoIterator<Item = (String, String)>,
    ) -> Result<RatingSettings, ConfigError> {
        let vars: HashMap<String, String> = vars.into_iter().collect();
        let number = |name: &'static str, default: f64| -> Result<f64, ConfigError> {
            vars.get(name).map_or(Ok(default), |text| {
                text.trim().parse().map_err(|_| ConfigError {
                    name,
                    reason: format!("expected a number, got {text:?}"),
                })
            })
        };
        let defaults = RatingRules::default();
        Ok(RatingSettings {
            rules: RatingRules {
                initial_rating: number("APP_GLICKO_RATING", defaults.initial_rating)?,
                initial_rd: number("APP_GLICKO_RD", defaults.initial_rd)?,
                initial_volatility: number("APP_GLICKO_VOLATILITY", defaults.initial_volatility)?,
                tau: number("APP_GLICKO_TAU", defaults.tau)?,
                ..defaults
            },
            eligibility: Eligibility {
                max_rd: number("APP_LEADERBOARD_MAX_RD", 80.0)?,
                min_games: number("APP_LEADERBOARD_MIN_GAMES", 10.0)? as u32,
                active_days: number("APP_LEADERBOARD_ACTIVE_DAYS", 30.0)?,
            },
            workers: number("APP_RATING_WORKERS", 2.0)?.max(1.0) as usize,
            poll: Duration::from_millis(number("APP_RATING_POLL_MS", 1000.0)?.max(1.0) as u64),
        })
    }
}
