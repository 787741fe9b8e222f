//! Glicko-2 as lichess applies it: one update per game with no RD growth
//! inside the game, and the RD's growth with inactivity computed when a
//! rating is read. The `skillratings` crate's Glicko-2 is the reference the
//! tests check the textbook example against; its per-game function grows
//! the RD inside the game (φ* = √(φ² + σ'²)), which lichess does not, so
//! that one step is written here.

/// Days from `last` to `now`: the inactivity that grows a rating's RD.
pub fn days_between(last: time::OffsetDateTime, now: time::OffsetDateTime) -> f64 {
    (now - last).as_seconds_f64() / 86_400.0
}

/// The Glicko-2 scale factor (Glickman).
const SCALE: f64 = 173.7178;

/// Everything about ratings; the first four are settings.
#[derive(Clone, Copy, Debug, PartialEq, clap::Args)]
pub struct RatingRules {
    /// A new player's rating.
    #[arg(env = "APP_GLICKO_RATING", default_value_t = LICHESS.initial_rating)]
    pub initial_rating: f64,
    /// A new player's rating deviation.
    #[arg(env = "APP_GLICKO_RD", default_value_t = LICHESS.initial_rd)]
    pub initial_rd: f64,
    /// A new player's volatility.
    #[arg(env = "APP_GLICKO_VOLATILITY", default_value_t = LICHESS.initial_volatility)]
    pub initial_volatility: f64,
    /// Glicko-2's τ: how fast volatility may change.
    #[arg(env = "APP_GLICKO_TAU", default_value_t = LICHESS.tau)]
    pub tau: f64,
    /// Rating periods per day of inactivity (lichess: 0.21436).
    #[arg(skip = LICHESS.periods_per_day)]
    pub periods_per_day: f64,
    #[arg(skip = LICHESS.min_rd)]
    pub min_rd: f64,
    #[arg(skip = LICHESS.max_rd)]
    pub max_rd: f64,
    /// A rating is provisional while its RD is at least this.
    #[arg(skip = LICHESS.provisional_rd)]
    pub provisional_rd: f64,
}

/// Lichess's values.
const LICHESS: RatingRules = RatingRules {
    initial_rating: 1500.0,
    initial_rd: 500.0,
    initial_volatility: 0.09,
    tau: 0.75,
    periods_per_day: 0.21436,
    min_rd: 45.0,
    max_rd: 500.0,
    provisional_rd: 110.0,
};

impl Default for RatingRules {
    fn default() -> RatingRules {
        LICHESS
    }
}

/// A stored rating.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rating {
    pub rating: f64,
    pub rd: f64,
    pub volatility: f64,
}

/// A game's result for the first player.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Score {
    Win,
    Draw,
    Loss,
}

impl RatingRules {
    pub fn initial(&self) -> Rating {
        Rating {
            rating: self.initial_rating,
            rd: self.initial_rd,
            volatility: self.initial_volatility,
        }
    }

    /// The RD after `days` without games: it grows by the volatility per
    /// rating period, within [min, max].
    pub fn rd_after(&self, rating: Rating, days: f64) -> f64 {
        let phi = rating.rd / SCALE;
        let periods = (days * self.periods_per_day).max(0.0);
        let grown = (phi * phi + rating.volatility * rating.volatility * periods).sqrt() * SCALE;
        grown.clamp(self.min_rd, self.max_rd)
    }

    pub fn provisional(&self, rd: f64) -> bool {
        rd >= self.provisional_rd
    }

    /// Both players' ratings after one game, each as of the game's start
    /// (RD grown over their idle days by the caller). This is the step
    /// `skillratings` lacks: lichess's per-game update, in which the RD
    /// does not grow inside the game (φ* = φ), so a game moves ratings by
    /// exactly what it shows.
    pub fn update(&self, first: Rating, second: Rating, score: Score) -> (Rating, Rating) {
        let points = match score {
            Score::Win => 1.0,
            Score::Draw => 0.5,
            Score::Loss => 0.0,
        };
        (
            self.one_side(first, second, points),
            self.one_side(second, first, 1.0 - points),
        )
    }

    fn one_side(&self, player: Rating, opponent: Rating, points: f64) -> Rating {
        let mu = (player.rating - 1500.0) / SCALE;
        let phi = player.rd / SCALE;
        let mu_j = (opponent.rating - 1500.0) / SCALE;
        let phi_j = opponent.rd / SCALE;
        let g = 1.0
            / (1.0 + 3.0 * phi_j * phi_j / (std::f64::consts::PI * std::f64::consts::PI)).sqrt();
        let expected = 1.0 / (1.0 + (-g * (mu - mu_j)).exp());
        let v = 1.0 / (g * g * expected * (1.0 - expected));
        let delta = v * g * (points - expected);
        let sigma = self.new_volatility(player.volatility, phi, v, delta);
        let new_phi = 1.0 / (1.0 / (phi * phi) + 1.0 / v).sqrt();
        let new_mu = mu + new_phi * new_phi * g * (points - expected);
        Rating {
            rating: new_mu * SCALE + 1500.0,
            rd: (new_phi * SCALE).clamp(self.min_rd, self.max_rd),
            volatility: sigma,
        }
    }

    /// Glickman's step 5: the new volatility, by the Illinois algorithm.
    fn new_volatility(&self, sigma: f64, phi: f64, v: f64, delta: f64) -> f64 {
        const EPSILON: f64 = 0.000_001;
        let tau = self.tau;
        let a = (sigma * sigma).ln();
        let f = |x: f64| {
            let ex = x.exp();
            let d = phi * phi + v + ex;
            ex * (delta * delta - phi * phi - v - ex) / (2.0 * d * d) - (x - a) / (tau * tau)
        };
        let mut big_a = a;
        let mut big_b = if delta * delta > phi * phi + v {
            (delta * delta - phi * phi - v).ln()
        } else {
            let mut k = 1.0;
            while f(a - k * tau) < 0.0 && k < 1_000.0 {
                k += 1.0;
            }
            a - k * tau
        };
        let (mut f_a, mut f_b) = (f(big_a), f(big_b));
        let mut rounds = 0;
        while (big_b - big_a).abs() > EPSILON && rounds < 1_000 {
            let big_c = big_a + (big_a - big_b) * f_a / (f_b - f_a);
            let f_c = f(big_c);
            if f_c * f_b <= 0.0 {
                big_a = big_b;
                f_a = f_b;
            } else {
                f_a /= 2.0;
            }
            big_b = big_c;
            f_b = f_c;
            rounds += 1;
        }
        (big_a / 2.0).exp()
    }
}

#[cfg(test)]
mod tests {
    use skillratings::Outcomes;
    use skillratings::glicko2::{Glicko2Config, Glicko2Rating, glicko2_rating_period};

    use super::*;

    fn close(a: f64, b: f64, tolerance: f64) -> bool {
        (a - b).abs() <= tolerance
    }

    #[test]
    fn glickmans_worked_example() {
        // As one rating period, tau 0.5 (Glickman's paper).
        let player = Glicko2Rating {
            rating: 1500.0,
            deviation: 200.0,
            volatility: 0.06,
        };
        let opponent = |rating, deviation| Glicko2Rating {
            rating,
            deviation,
            volatility: 0.06,
        };
        let results = [
            (opponent(1400.0, 30.0), Outcomes::WIN),
            (opponent(1550.0, 100.0), Outcomes::LOSS),
            (opponent(1700.0, 300.0), Outcomes::LOSS),
        ];
        let config = Glicko2Config {
            tau: 0.5,
            ..Glicko2Config::default()
        };
        let after = glicko2_rating_period(&player, &results, &config);
        assert!(close(after.rating, 1464.05, 0.01), "{}", after.rating);
        assert!(close(after.deviation, 151.52, 0.01), "{}", after.deviation);
        assert!(
            close(after.volatility, 0.05999, 0.00001),
            "{}",
            after.volatility
        );
    }

    #[test]
    fn lichess_vector() {
        let rules = RatingRules::default();
        let start = Rating {
            rating: 1500.0,
            rd: 350.0,
            volatility: 0.06,
        };
        let (winner, loser) = rules.update(start, start, Score::Win);
        assert!(close(winner.rating, 1662.21, 0.01), "{}", winner.rating);
        assert!(close(loser.rating, 1337.79, 0.01), "{}", loser.rating);
        assert!(close(winner.rd, 290.23, 0.01), "{}", winner.rd);
        assert!(close(loser.rd, 290.23, 0.01));
        assert!(
            close(winner.volatility, 0.0599993, 0.0000001),
            "{}",
            winner.volatility
        );
    }

    #[test]
    fn rd_grows_with_idle_days_within_bounds() {
        let rules = RatingRules::default();
        let settled = Rating {
            rating: 1800.0,
            rd: 50.0,
            volatility: 0.06,
        };
        assert!(close(rules.rd_after(settled, 0.0), 50.0, 1e-9));
        let month = rules.rd_after(settled, 30.0);
        assert!(month > 50.0 && month < 80.0, "{month}");
        assert_eq!(rules.rd_after(settled, 1e9), 500.0);
        let tight = Rating {
            rd: 10.0,
            ..settled
        };
        assert_eq!(rules.rd_after(tight, 0.0), 45.0);
        assert!(rules.provisional(110.0) && !rules.provisional(109.9));
    }
}
