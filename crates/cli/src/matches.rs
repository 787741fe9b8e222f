//! `mancala match`: AI against AI, sides alternating, with the score's
//! confidence interval and the rating difference it implies.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use mancala_ai::{AnyAi, Budget, Chooser, Decision, Level, ProofTables, SolverTable};

use crate::endgame::EndgameChoice;
use mancala_rules::{AnyPosition, Game, Pit, Position, Variant, Winner};
use serde_json::json;

use crate::Failure;
use crate::position_args::PositionArgs;

/// A contestant: an AI level, or a player that picks uniformly at random.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Contestant {
    Random,
    Ai(Level),
}

impl std::str::FromStr for Contestant {
    type Err = String;
    fn from_str(text: &str) -> Result<Contestant, String> {
        if text == "random" {
            return Ok(Contestant::Random);
        }
        text.parse()
            .map(Contestant::Ai)
            .map_err(|error: mancala_ai::UnknownLevel| format!("{error}, or random"))
    }
}

impl std::fmt::Display for Contestant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Contestant::Random => f.write_str("random"),
            Contestant::Ai(level) => f.write_str(level.name()),
        }
    }
}

#[derive(Debug, Args)]
pub(crate) struct MatchArgs {
    #[command(flatten)]
    position: PositionArgs,
    /// Side A: beginner, intermediate, advanced, perfect or random.
    #[arg(long)]
    a: Contestant,
    /// Side B.
    #[arg(long)]
    b: Contestant,
    /// Games to play; A moves first in the even-numbered ones.
    #[arg(long, default_value_t = 100)]
    games: usize,
    /// Seed of the whole match: the same seed replays the same games.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Plies of random opening before the players take over, the same for
    /// both games of a pair, so that deterministic players meet new positions.
    #[arg(long, default_value_t = 2)]
    random_plies: usize,
    /// Search at most this many nodes a move instead of each level's default.
    #[arg(long)]
    nodes: Option<u64>,
    /// Games played at once (default: the number of cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Print one JSON object: {"a_wins","draws","b_wins","score"}.
    #[arg(long)]
    json: bool,
    /// Kalah: a `Perfect` player proves positions with few stones in the
    /// pits from one endgame table that every game shares, as the server's
    /// AI does (16 stones unless told).
    #[command(flatten)]
    endgame: EndgameChoice,
    /// Kalah: megabytes of the solver's table that every `Perfect` player
    /// shares, as the server's AI does.
    #[arg(long, default_value_t = PERFECT_TABLE_MB)]
    solver_table_mb: usize,
}

/// Stones in the pits up to which `Perfect` proves from an endgame table
/// (30 MB, a few seconds to build on one core).
pub(crate) const PERFECT_ENDGAME_STONES: u8 = 16;

/// Megabytes of the solver's table the `Perfect` players of a match share
/// (the server's default).
pub(crate) const PERFECT_TABLE_MB: usize = 256;

/// The tables a match's `Perfect` Kalah players share: one solver table,
/// and the endgame table unless `stones` is 0. None without a `Perfect`
/// Kalah player.
pub(crate) fn perfect_tables(
    variant: Variant,
    contestants: [Contestant; 2],
    endgame: &EndgameChoice,
    table_mb: usize,
) -> Result<ProofTables, Failure> {
    let Variant::Kalah(options) = variant else {
        return Ok(ProofTables::default());
    };
    if !contestants.contains(&Contestant::Ai(Level::Perfect)) {
        return Ok(ProofTables::default());
    }
    Ok(ProofTables {
        table: Some(Arc::new(SolverTable::new(options, table_mb << 20))),
        endgame: endgame
            .table(options, PERFECT_ENDGAME_STONES)?
            .map(Arc::new),
    })
}

/// Results from A's side.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Tally {
    pub(crate) a_wins: u32,
    pub(crate) draws: u32,
    pub(crate) b_wins: u32,
}

impl Tally {
    pub(crate) fn games(&self) -> u32 {
        self.a_wins + self.draws + self.b_wins
    }

    /// A's share of the points, 0..=1.
    pub(crate) fn score(&self) -> f64 {
        (f64::from(self.a_wins) + 0.5 * f64::from(self.draws)) / f64::from(self.games().max(1))
    }

    /// The half-width of the 95% interval of the score (normal
    /// approximation over per-game results).
    pub(crate) fn margin(&self) -> f64 {
        let n = f64::from(self.games().max(1));
        let mean = self.score();
        let square = (f64::from(self.a_wins) + 0.25 * f64::from(self.draws)) / n;
        let variance = (square - mean * mean).max(0.0);
        1.96 * (variance / n).sqrt()
    }
}

/// The 95% bounds on A's expected score.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Bounds {
    /// A two-sided interval (the normal approximation).
    Between(f64, f64),
    /// Every game won: no spread to measure, so the exact one-sided bound.
    AtLeast(f64),
    /// Every game lost.
    AtMost(f64),
}

impl Tally {
    /// The 95% bounds on the score. After `n` wins in `n` games the chance
    /// of that sweep is below 5% for any win rate under 0.05^(1/n) (the
    /// exact one-sided bound, about 1 - 3/n); a normal interval would say
    /// "± 0", as if the sweep proved a perfect score. Every game drawn
    /// bounds the share of decisive games the same way, and the score moves
    /// at most half of that share from 50%.
    pub(crate) fn bounds(&self) -> Bounds {
        let n = self.games();
        let sweep_floor = 0.05_f64.powf(1.0 / f64::from(n.max(1)));
        if n > 0 && self.a_wins == n {
            Bounds::AtLeast(sweep_floor)
        } else if n > 0 && self.b_wins == n {
            Bounds::AtMost(1.0 - sweep_floor)
        } else if n > 0 && self.draws == n {
            let spread = (1.0 - sweep_floor) / 2.0;
            Bounds::Between(0.5 - spread, 0.5 + spread)
        } else {
            let (score, margin) = (self.score(), self.margin());
            Bounds::Between((score - margin).max(0.0), (score + margin).min(1.0))
        }
    }
}

/// The lines that report a tally's score and rating difference.
pub(crate) fn score_lines(tally: &Tally) -> [String; 2] {
    let score = tally.score();
    let percent = |value: f64| 100.0 * value;
    match tally.bounds() {
        Bounds::Between(low, high) => [
            format!(
                "A's score: {:.1}% ± {:.1}% (95%: {:.1}% to {:.1}%)",
                percent(score),
                percent((high - low) / 2.0),
                percent(low),
                percent(high)
            ),
            format!(
                "rating difference: {:+.0} Elo (95%: {:+.0} to {:+.0})",
                elo_difference(score),
                elo_difference(low),
                elo_difference(high)
            ),
        ],
        Bounds::AtLeast(low) => [
            format!(
                "A's score: {:.1}%, every game won (95% one-sided: at least {:.1}%)",
                percent(score),
                percent(low)
            ),
            format!(
                "rating difference: at least {:+.0} Elo (95% one-sided)",
                elo_difference(low)
            ),
        ],
        Bounds::AtMost(high) => [
            format!(
                "A's score: {:.1}%, every game lost (95% one-sided: at most {:.1}%)",
                percent(score),
                percent(high)
            ),
            format!(
                "rating difference: at most {:+.0} Elo (95% one-sided)",
                elo_difference(high)
            ),
        ],
    }
}

/// The Elo difference that a score implies; clamped where the score is 0 or 1.
pub(crate) fn elo_difference(score: f64) -> f64 {
    let score = score.clamp(0.001, 0.999);
    -400.0 * (1.0 / score - 1.0).log10()
}

struct RandomPlayer(u64);

impl RandomPlayer {
    fn pick(&mut self, position: &AnyPosition) -> Option<Pit> {
        let moves: Vec<Pit> = position.legal_moves().collect();
        // splitmix64: enough for choosing among six moves.
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        moves.get((z % moves.len().max(1) as u64) as usize).copied()
    }
}

enum Seat {
    Random(RandomPlayer),
    Ai(Box<AnyAi>, Budget),
}

impl Seat {
    fn new(
        contestant: Contestant,
        variant: Variant,
        seed: u64,
        nodes: Option<u64>,
        tables: &ProofTables,
    ) -> Result<Seat, String> {
        Ok(match contestant {
            Contestant::Random => Seat::Random(RandomPlayer(seed)),
            Contestant::Ai(level) => {
                let mut ai = AnyAi::new(variant, level, seed).map_err(|error| error.to_string())?;
                ai.share(tables);
                let budget = nodes.map_or_else(|| level.default_budget(), Budget::nodes);
                Seat::Ai(Box::new(ai), budget)
            }
        })
    }

    fn choose(&mut self, game: &Game) -> Option<Pit> {
        match self {
            Seat::Random(random) => random.pick(game.position()),
            Seat::Ai(ai, budget) => ai
                .choose(game, budget)
                .map(|decision: Decision| decision.pit),
        }
    }
}

/// What a match plays: everything but how many threads play it.
#[derive(Clone, Debug)]
pub(crate) struct Plan {
    pub(crate) variant: Variant,
    pub(crate) a: Contestant,
    pub(crate) b: Contestant,
    pub(crate) games: usize,
    pub(crate) seed: u64,
    pub(crate) random_plies: usize,
    pub(crate) nodes: Option<u64>,
    /// The tables `Perfect` players prove with, shared by all.
    pub(crate) tables: ProofTables,
}

/// How one game of a match went.
pub(crate) struct Played {
    /// `Some(true)` when A won, `Some(false)` when B did, `None` for a draw.
    pub(crate) a_won: Option<bool>,
    /// Whether A moved first.
    pub(crate) a_first: bool,
    /// How long each of A's moves took to choose.
    pub(crate) a_times: Vec<std::time::Duration>,
}

/// Plays game `index` of a match.
pub(crate) fn play_game(plan: &Plan, index: usize) -> Result<Played, String> {
    let Plan {
        variant,
        a,
        b,
        seed,
        random_plies,
        nodes,
        ..
    } = *plan;
    let tables = &plan.tables;
    let game_seed = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15)
        ^ (index as u64).wrapping_mul(0xd1b5_4a32_d192_ed03);
    let mut seats = [
        Seat::new(a, variant, game_seed, nodes, tables)?,
        Seat::new(b, variant, game_seed ^ 1, nodes, tables)?,
    ];
    // A is South in even games; both games of a pair share their opening.
    let a_seat = index % 2;
    let mut opening = RandomPlayer(seed ^ (index / 2) as u64);
    let mut game = Game::from_variant(variant);
    let mut a_times = Vec::new();
    while !game.position().is_over() {
        let pit = if game.ply() < random_plies {
            opening.pick(game.position())
        } else {
            let side = game.position().turn().index();
            let seat = if side == a_seat { 0 } else { 1 };
            let began = std::time::Instant::now();
            let pit = seats[seat].choose(&game);
            if seat == 0 {
                a_times.push(began.elapsed());
            }
            pit
        };
        let pit = pit.ok_or("a player had no move in a game that was not over")?;
        game.play(pit)
            .map_err(|error| format!("a player chose an illegal move: {error}"))?;
    }
    let outcome = game.outcome().ok_or("the game did not end")?;
    Ok(Played {
        a_won: match outcome.winner {
            Winner::Draw => None,
            Winner::Player(winner) => Some(winner.index() == a_seat),
        },
        a_first: a_seat == 0,
        a_times,
    })
}

impl Tally {
    fn add(&mut self, a_won: Option<bool>) {
        match a_won {
            Some(true) => self.a_wins += 1,
            Some(false) => self.b_wins += 1,
            None => self.draws += 1,
        }
    }
}

/// A match's results: in all, by A's side, and A's move times.
#[derive(Clone, Debug, Default)]
pub(crate) struct Report {
    pub(crate) tally: Tally,
    /// The games A moved first in, and second.
    pub(crate) first: Tally,
    pub(crate) second: Tally,
    pub(crate) a_times: Vec<std::time::Duration>,
}

/// Plays a match on `threads` threads, reporting each finished game.
pub(crate) fn play_match(
    plan: &Plan,
    threads: usize,
    on_game: &(dyn Fn(&Tally) + Sync),
) -> Result<Report, String> {
    let games = plan.games;
    let next = AtomicUsize::new(0);
    let report = Mutex::new(Report::default());
    let failure = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1) {
            scope.spawn(|| {
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    if index >= games {
                        break;
                    }
                    match play_game(plan, index) {
                        Ok(played) => {
                            let mut report =
                                report.lock().unwrap_or_else(|poison| poison.into_inner());
                            report.tally.add(played.a_won);
                            if played.a_first {
                                report.first.add(played.a_won);
                            } else {
                                report.second.add(played.a_won);
                            }
                            report.a_times.extend(played.a_times);
                            on_game(&report.tally);
                        }
                        Err(error) => {
                            *failure.lock().unwrap_or_else(|poison| poison.into_inner()) =
                                Some(error);
                            next.store(games, Ordering::Relaxed);
                        }
                    }
                }
            });
        }
    });
    if let Some(error) = failure
        .into_inner()
        .unwrap_or_else(|poison| poison.into_inner())
    {
        return Err(error);
    }
    Ok(report
        .into_inner()
        .unwrap_or_else(|poison| poison.into_inner()))
}

/// The move-time line of a report: percentiles of A's moves.
fn times_line(times: &mut [std::time::Duration]) -> Option<String> {
    times.sort_unstable();
    let at = |share: f64| times[((times.len() - 1) as f64 * share).round() as usize];
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1000.0;
    (!times.is_empty()).then(|| {
        format!(
            "A's moves: {} in all, p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
            times.len(),
            ms(at(0.5)),
            ms(at(0.99)),
            ms(at(1.0))
        )
    })
}

pub(crate) fn threads_or_cores(threads: Option<usize>) -> usize {
    threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

pub(crate) fn run(args: &MatchArgs) -> Result<(), Failure> {
    let variant = args.position.variant()?;
    let progress = ProgressBar::new(args.games as u64).with_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} games {msg} ({eta} left)")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let on_game = |tally: &Tally| {
        progress.set_position(u64::from(tally.games()));
        progress.set_message(format!(
            "+{} ={} -{}",
            tally.a_wins, tally.draws, tally.b_wins
        ));
    };
    let plan = Plan {
        variant,
        a: args.a,
        b: args.b,
        games: args.games,
        seed: args.seed,
        random_plies: args.random_plies,
        nodes: args.nodes,
        tables: perfect_tables(
            variant,
            [args.a, args.b],
            &args.endgame,
            args.solver_table_mb,
        )?,
    };
    let mut report =
        play_match(&plan, threads_or_cores(args.threads), &on_game).map_err(Failure::Usage)?;
    progress.finish_and_clear();
    let tally = report.tally;
    if args.json {
        let side = |t: &Tally| json!({"a_wins": t.a_wins, "draws": t.draws, "b_wins": t.b_wins});
        println!(
            "{}",
            json!({"a_wins": tally.a_wins, "draws": tally.draws, "b_wins": tally.b_wins,
                   "score": tally.score(), "a_first": side(&report.first),
                   "a_second": side(&report.second)})
        );
    } else {
        println!(
            "{} (A) vs {} (B), {} games of {variant}",
            args.a,
            args.b,
            tally.games()
        );
        println!(
            "A: {} wins, {} draws, {} losses",
            tally.a_wins, tally.draws, tally.b_wins
        );
        for (name, side) in [("first", &report.first), ("second", &report.second)] {
            println!(
                "A moving {name}: {} wins, {} draws, {} losses",
                side.a_wins, side.draws, side.b_wins
            );
        }
        for line in score_lines(&tally) {
            println!("{line}");
        }
        if let Some(line) = times_line(&mut report.a_times) {
            println!("{line}");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tally(a_wins: u32, draws: u32, b_wins: u32) -> Tally {
        Tally {
            a_wins,
            draws,
            b_wins,
        }
    }

    #[test]
    fn a_clean_sweep_gives_a_one_sided_bound_not_a_zero_margin() {
        let Bounds::AtLeast(low) = tally(40, 0, 0).bounds() else {
            panic!("a sweep is bounded from below only");
        };
        // 0.05^(1/40): about 92.8%, near the rule of three's 1 - 3/40.
        assert!((low - 0.9278).abs() < 1e-3, "{low}");
        let [score, elo] = score_lines(&tally(40, 0, 0));
        assert!(score.contains("at least 92.8%"), "{score}");
        assert!(!score.contains('±'), "{score}");
        assert!(elo.starts_with("rating difference: at least +"), "{elo}");
        assert!(!elo.contains("+1200 to +1200"), "{elo}");
        let Bounds::AtMost(high) = tally(0, 0, 40).bounds() else {
            panic!("a sweep the other way is bounded from above only");
        };
        assert!((high - (1.0 - low)).abs() < 1e-12);
    }

    #[test]
    fn mixed_results_keep_the_two_sided_interval() {
        let t = tally(189, 3, 8);
        let Bounds::Between(low, high) = t.bounds() else {
            panic!("mixed results give an interval");
        };
        assert!(low < t.score() && t.score() < high);
        assert!(((high - low) / 2.0 - t.margin()).abs() < 1e-12);
        // Every game drawn: 50%, with an interval that is not zero wide.
        let Bounds::Between(low, high) = tally(0, 30, 0).bounds() else {
            panic!("draws give an interval");
        };
        assert!(low < 0.5 && 0.5 < high && high - low < 0.1);
    }
}
