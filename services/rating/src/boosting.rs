//! The bound on what a player can gain from accounts they may control.
//!
//! - A registered player's rating never moves in a game against a guest
//!   (a guest is one click away, so a farm of guests would be free); the
//!   guest's rating moves as in any rated game.
//! - Two accounts are *linked* when one was made within the last
//!   `APP_LINKED_ACCOUNT_DAYS` from a network (an IPv4 /24, an IPv6 /64)
//!   the other has used in that time. What a player gains in games against
//!   linked opponents is bounded, per variant, by `APP_LINKED_GAIN_BUDGET`
//!   points over those days, however many such opponents there are;
//!   losses count in full.
//! - An opponent is *thin* when their account is younger than
//!   `APP_THIN_ACCOUNT_DAYS` (7), they have played fewer than
//!   `APP_THIN_GAMES` (10) rated games of the variant, or five of their
//!   last ten rated games were lost by resignation, flag or leaving within
//!   20 plies. What a player gains from thin opponents is bounded, per
//!   variant, by `APP_THIN_GAIN_BUDGET` (80) points *net* over
//!   `APP_THIN_GAIN_DAYS` (30): losses to thin opponents give the budget
//!   back, so a newcomer who wins and loses among newcomers near their
//!   level never meets it, while a ring of fresh accounts, from however
//!   many networks, gives its climber 80 points a month.
//!
//! Pure: the worker asks before it writes, with the gains already taken.

use crate::glicko::Rating;

/// What a game may do to one player's rating.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Counts {
    /// In full.
    Full,
    /// Not at all: a registered player against a guest.
    Held,
    /// Against a linked or thin opponent, with `left` points of gain left
    /// to take (the smaller budget's, when both bound it).
    Bounded { left: f64 },
}

/// The rating a player leaves the game with: Glicko's `after`, within
/// what the game may give. `stored` is the rating before the game (as
/// stored, before the rating deviation grew with time away).
pub fn bounded(stored: Rating, before: Rating, after: Rating, counts: Counts) -> Rating {
    match counts {
        Counts::Full => after,
        Counts::Held => stored,
        Counts::Bounded { left } => Rating {
            rating: after.rating.min(before.rating + left.max(0.0)),
            ..after
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BEFORE: Rating = Rating {
        rating: 1500.0,
        rd: 200.0,
        volatility: 0.06,
    };
    const WON: Rating = Rating {
        rating: 1662.0,
        rd: 180.0,
        volatility: 0.06,
    };
    const LOST: Rating = Rating {
        rating: 1338.0,
        rd: 180.0,
        volatility: 0.06,
    };

    #[test]
    fn a_game_counts_in_full_held_or_up_to_what_is_left() {
        assert_eq!(bounded(BEFORE, BEFORE, WON, Counts::Full), WON);
        assert_eq!(bounded(BEFORE, BEFORE, WON, Counts::Held), BEFORE);
        let capped = bounded(BEFORE, BEFORE, WON, Counts::Bounded { left: 20.0 });
        assert_eq!((capped.rating, capped.rd), (1520.0, 180.0));
        let spent = bounded(BEFORE, BEFORE, WON, Counts::Bounded { left: -5.0 });
        assert_eq!(spent.rating, 1500.0);
        // A loss to a linked account is a loss.
        assert_eq!(
            bounded(BEFORE, BEFORE, LOST, Counts::Bounded { left: 0.0 }),
            LOST
        );
    }
}
