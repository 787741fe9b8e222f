//! Ratings of the AI levels, measured by round-robin matches: 60 games per
//! pair between a random mover and every level, sides alternating, fitted to
//! Elo with the random mover pinned at 400 (`mancala calibrate --variant V
//! --games 60 --threads 1 --json`; the README has the table and the games).
//!
//! Where one side won every game the fit keeps the gap finite with one
//! virtual draw per pair, so those gaps are lower bounds.

use mancala_rules::Variant;

use crate::player::Level;

/// The Elo-scale rating of a level in a variant, on the scale where a new
/// player starts at 1500: what matchmaking uses to pick an AI opponent near
/// a player's rating. `None` for `Perfect` outside Kalah.
pub fn rating(variant: Variant, level: Level) -> Option<f64> {
    let table = match variant {
        Variant::Kalah(_) => &KALAH[..],
        Variant::Oware => &OWARE[..],
        Variant::Mangala => &MANGALA[..],
    };
    table
        .iter()
        .find(|(rated, _)| *rated == level)
        .map(|&(_, rating)| rating)
}

/// The level whose rating is nearest `rating` in `variant`, among the
/// levels that play at their default budget in well under 300 ms: what
/// matchmaking offers a player of that rating, and what takes over the seat
/// of a player who left. `Perfect` is never chosen: a proof may take a
/// second or more, and from a random position it rates with `Advanced`.
pub fn level_near(variant: Variant, rating: f64) -> Level {
    [Level::Beginner, Level::Intermediate, Level::Advanced]
        .into_iter()
        .filter_map(|level| {
            self::rating(variant, level).map(|rated| (level, (rated - rating).abs()))
        })
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map_or(Level::Intermediate, |(level, _)| level)
}

/// Kalah, rerun with `Perfect` in the round robin (`--with-perfect`).
const KALAH: [(Level, f64); 4] = [
    (Level::Beginner, 1004.0),
    (Level::Intermediate, 1443.0),
    (Level::Advanced, 1876.0),
    (Level::Perfect, 1881.0),
];
const OWARE: [(Level, f64); 3] = [
    (Level::Beginner, 1045.0),
    (Level::Intermediate, 1642.0),
    (Level::Advanced, 2287.0),
];
const MANGALA: [(Level, f64); 3] = [
    (Level::Beginner, 1050.0),
    (Level::Intermediate, 1548.0),
    (Level::Advanced, 2106.0),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stronger_levels_rate_higher_in_every_variant() {
        for variant in [
            Variant::Kalah(Default::default()),
            Variant::Oware,
            Variant::Mangala,
        ] {
            let ratings: Vec<f64> = [Level::Beginner, Level::Intermediate, Level::Advanced]
                .into_iter()
                .map(|level| rating(variant, level).unwrap())
                .collect();
            assert!(
                ratings.windows(2).all(|pair| pair[0] < pair[1]),
                "{variant}: {ratings:?}"
            );
        }
        assert!(rating(Variant::Kalah(Default::default()), Level::Perfect).is_some());
        assert_eq!(rating(Variant::Oware, Level::Perfect), None);
    }

    #[test]
    fn the_nearest_level_follows_the_rating() {
        let kalah = Variant::Kalah(Default::default());
        assert_eq!(level_near(kalah, 800.0), Level::Beginner);
        assert_eq!(level_near(kalah, 1500.0), Level::Intermediate);
        assert_eq!(level_near(kalah, 2600.0), Level::Advanced);
        assert_eq!(level_near(Variant::Oware, f64::NAN), Level::Beginner);
    }
}
