//! What reports weigh, so that the moderators' queue puts first what many
//! trusted people saw, not what one person with many accounts typed.
//!
//! A reporter's standing comes from what their account has behind it: a
//! guest costs one click, a new registered account little more; a week
//! and ten rated games cost time. And reporters who signed up from one
//! network (an IPv4 /24, an IPv6 /64) are one voice, at their best standing:
//! thirty guests from one address weigh as one guest.

use std::collections::HashMap;

use mancala_proto::moderation::ReporterStanding;
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

/// Age at which a registered account is established, with
/// [`ESTABLISHED_GAMES`].
pub(crate) const ESTABLISHED_AGE: Duration = Duration::days(7);
/// Rated games (all variants) at which a registered account is
/// established, with [`ESTABLISHED_AGE`].
pub(crate) const ESTABLISHED_GAMES: i64 = 10;

/// What one reporter's word weighs.
pub(crate) fn weight_of(standing: ReporterStanding) -> f64 {
    match standing {
        // A signal with its evidence weighs as much as a trusted player.
        ReporterStanding::Established | ReporterStanding::Automatic => 1.0,
        ReporterStanding::New => 0.5,
        ReporterStanding::Guest => 0.2,
    }
}

/// What a reporter's account has behind it, at `now`.
pub(crate) fn standing(
    registered: bool,
    created_at: OffsetDateTime,
    rated_games: i64,
    now: OffsetDateTime,
) -> ReporterStanding {
    if !registered {
        ReporterStanding::Guest
    } else if now - created_at >= ESTABLISHED_AGE && rated_games >= ESTABLISHED_GAMES {
        ReporterStanding::Established
    } else {
        ReporterStanding::New
    }
}

/// One reporter of an account.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Reporter {
    pub id: Uuid,
    /// The network they signed up from; `None` when not known (they are
    /// then a network of their own).
    pub network: Option<String>,
    pub standing: ReporterStanding,
}

/// What the reports of these reporters weigh together: per network, the
/// best standing's weight. A reporter counted twice (two reasons) counts
/// once.
pub(crate) fn weight(reporters: &[Reporter]) -> f64 {
    let mut voices: HashMap<String, ReporterStanding> = HashMap::new();
    for reporter in reporters {
        let voice = reporter
            .network
            .clone()
            .unwrap_or_else(|| reporter.id.to_string());
        let best = voices.entry(voice).or_insert(reporter.standing);
        *best = (*best).max(reporter.standing);
    }
    voices.into_values().map(weight_of).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reporter(network: &str, standing: ReporterStanding) -> Reporter {
        Reporter {
            id: Uuid::new_v4(),
            network: Some(network.to_owned()),
            standing,
        }
    }

    #[test]
    fn a_crowd_of_guests_from_one_network_is_one_guest() {
        let crowd: Vec<Reporter> = (0..30)
            .map(|_| reporter("203.0.113.0/24", ReporterStanding::Guest))
            .collect();
        assert_eq!(weight(&crowd), 0.2);
        let two_players = [
            reporter("198.51.100.0/24", ReporterStanding::Established),
            reporter("192.0.2.0/24", ReporterStanding::Established),
        ];
        assert!(weight(&two_players) > weight(&crowd) * 5.0);
    }

    #[test]
    fn a_network_counts_at_its_best_reporter() {
        let mixed = [
            reporter("203.0.113.0/24", ReporterStanding::Guest),
            reporter("203.0.113.0/24", ReporterStanding::Established),
            reporter("203.0.113.0/24", ReporterStanding::New),
            reporter("198.51.100.0/24", ReporterStanding::New),
        ];
        assert_eq!(weight(&mixed), 1.5);
    }

    #[test]
    fn an_unknown_network_is_its_own_and_one_reporter_counts_once() {
        let id = Uuid::new_v4();
        let twice = [
            Reporter {
                id,
                network: None,
                standing: ReporterStanding::New,
            },
            Reporter {
                id,
                network: None,
                standing: ReporterStanding::New,
            },
        ];
        assert_eq!(weight(&twice), 0.5);
        let strangers = [
            Reporter {
                network: None,
                ..twice[0].clone()
            },
            Reporter {
                id: Uuid::new_v4(),
                network: None,
                standing: ReporterStanding::New,
            },
        ];
        assert_eq!(weight(&strangers), 1.0);
    }

    #[test]
    fn standing_needs_registration_age_and_games() {
        let now = OffsetDateTime::UNIX_EPOCH + Duration::days(100);
        let old = now - Duration::days(30);
        let young = now - Duration::days(2);
        assert_eq!(standing(false, old, 500, now), ReporterStanding::Guest);
        assert_eq!(standing(true, young, 500, now), ReporterStanding::New);
        assert_eq!(standing(true, old, 9, now), ReporterStanding::New);
        assert_eq!(standing(true, old, 10, now), ReporterStanding::Established);
        assert_eq!(
            standing(true, now - ESTABLISHED_AGE, 10, now),
            ReporterStanding::Established
        );
    }
}
