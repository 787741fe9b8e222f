//! `mancala calibrate`: a round robin between the AI levels (and a random
//! mover), fitted to Elo ratings.

use clap::Args;
use mancala_ai::Level;
use serde_json::json;

use crate::Failure;
use crate::endgame::EndgameChoice;
use crate::matches::{
    Contestant, PERFECT_ENDGAME_STONES, PERFECT_TABLE_MB, Plan, Tally, perfect_tables, play_match,
    threads_or_cores,
};
use crate::position_args::PositionArgs;

/// Where the scale is pinned: a player who moves at random.
pub(crate) const RANDOM_RATING: f64 = 400.0;

#[derive(Debug, Args)]
pub(crate) struct CalibrateArgs {
    #[command(flatten)]
    position: PositionArgs,
    /// Games per pair of contestants.
    #[arg(long, default_value_t = 60)]
    games: usize,
    /// Include `perfect` (Kalah only; slow).
    #[arg(long)]
    with_perfect: bool,
    /// Seed of the whole round robin.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Games played at once (default: the number of cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

/// Bradley-Terry ratings by minorise-maximise iterations, with one virtual
/// draw per pair so that a clean sweep still gives a finite gap. `scores[i][j]`
/// is i's points against j out of `games[i][j]`.
pub(crate) fn fit_ratings(scores: &[Vec<f64>], games: &[Vec<f64>]) -> Vec<f64> {
    let n = scores.len();
    let mut strength = vec![1.0f64; n];
    for _ in 0..10_000 {
        let mut next = strength.clone();
        for i in 0..n {
            let (mut won, mut expected) = (0.0, 0.0);
            for j in (0..n).filter(|&j| j != i && games[i][j] > 0.0) {
                won += scores[i][j] + 0.5;
                expected += (games[i][j] + 1.0) / (strength[i] + strength[j]);
            }
            if expected > 0.0 {
                next[i] = won / expected;
            }
        }
        let anchor = next[0];
        strength = next.iter().map(|s| s / anchor).collect();
    }
    strength
        .iter()
        .map(|s| RANDOM_RATING + 400.0 * s.log10())
        .collect()
}

pub(crate) fn run(args: &CalibrateArgs) -> Result<(), Failure> {
    let variant = args.position.variant()?;
    let mut contestants = vec![
        Contestant::Random,
        Contestant::Ai(Level::Beginner),
        Contestant::Ai(Level::Intermediate),
        Contestant::Ai(Level::Advanced),
    ];
    if args.with_perfect {
        contestants.push(Contestant::Ai(Level::Perfect));
    }
    // Perfect proves with the tables the server's AI uses.
    let perfect = if args.with_perfect {
        Contestant::Ai(Level::Perfect)
    } else {
        Contestant::Random
    };
    let tables = perfect_tables(
        variant,
        [perfect, perfect],
        &EndgameChoice::stones(PERFECT_ENDGAME_STONES),
        PERFECT_TABLE_MB,
    )?;
    let n = contestants.len();
    let mut scores = vec![vec![0.0; n]; n];
    let mut games = vec![vec![0.0; n]; n];
    let mut pairs = Vec::new();
    for i in 0..n {
        for j in i + 1..n {
            let plan = Plan {
                variant,
                a: contestants[i],
                b: contestants[j],
                games: args.games,
                seed: args.seed.wrapping_add((i * n + j) as u64),
                random_plies: 2,
                nodes: None,
                tables: tables.clone(),
            };
            eprintln!(
                "playing {} vs {} ({} games)",
                contestants[i], contestants[j], args.games
            );
            let tally: Tally = play_match(&plan, threads_or_cores(args.threads), &|_| {})
                .map(|report| report.tally)
                .map_err(Failure::Usage)?;
            let points = tally.score() * f64::from(tally.games());
            scores[i][j] = points;
            scores[j][i] = f64::from(tally.games()) - points;
            games[i][j] = f64::from(tally.games());
            games[j][i] = f64::from(tally.games());
            pairs.push(json!({
                "a": contestants[i].to_string(), "b": contestants[j].to_string(),
                "a_wins": tally.a_wins, "draws": tally.draws, "b_wins": tally.b_wins,
            }));
        }
    }
    let ratings = fit_ratings(&scores, &games);
    if args.json {
        let table: serde_json::Map<String, serde_json::Value> = contestants
            .iter()
            .zip(&ratings)
            .map(|(c, r)| (c.to_string(), json!(r.round())))
            .collect();
        println!(
            "{}",
            json!({"variant": variant.name(), "ratings": table, "pairs": pairs})
        );
    } else {
        println!("{variant}: ratings (random pinned at {RANDOM_RATING})");
        for (contestant, rating) in contestants.iter().zip(&ratings) {
            println!("  {contestant:<13} {rating:>6.0}");
        }
        for pair in &pairs {
            println!("  {pair}");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_even_match_gives_equal_ratings_and_a_3_to_1_score_about_190() {
        let even = fit_ratings(
            &[vec![0.0, 50.0], vec![50.0, 0.0]],
            &[vec![0.0, 100.0], vec![100.0, 0.0]],
        );
        assert!((even[1] - even[0]).abs() < 1e-6);
        let lopsided = fit_ratings(
            &[vec![0.0, 25.0], vec![75.0, 0.0]],
            &[vec![0.0, 100.0], vec![100.0, 0.0]],
        );
        let gap = lopsided[1] - lopsided[0];
        assert!((gap - 189.0).abs() < 5.0, "{gap}");
        assert!((lopsided[0] - RANDOM_RATING).abs() < 1e-6);
    }
}
