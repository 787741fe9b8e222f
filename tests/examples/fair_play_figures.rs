//! How often the fair-play sentinel's signals would report honest players,
//! and whether they report the programs they are for: a season of rated
//! Kalah games among honest players of mixed strength (the Beginner,
//! Intermediate and Advanced AI levels, each making a human's share of
//! careless moves) who think for varied times, each game analysed as the
//! server analyses it, every player weighed after each of their games as
//! the sentinel weighs them (their last ten games). Beside them, two
//! programs at a steady pace: the Perfect engine and the Advanced one.
//!
//! `cargo run --release -p mancala-tests --example fair_play_figures [GAMES] [PLAYERS]`
//! (defaults 200 and 20; the analyses take most of the time, spread over
//! the machine's cores).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use mancala_ai::{Ai, AnalysisPlan, Chooser, Level, ProofTables, analyse};
use mancala_game_room::sentinel::signals::{self, OpponentRecord, Outcome, PlayedMoves, RatedGame};
use mancala_rules::{Game, Kalah, Pit, Position, Side, Winner};
use uuid::Uuid;

/// A player of the season.
struct Player {
    name: String,
    level: Level,
    /// The share of moves played without thinking (a random legal move).
    careless: f64,
    /// Median seconds a move, and the spread of the log of it (0 for a
    /// program's steady pace).
    median_secs: f64,
    spread: f64,
    honest: bool,
}

/// A small deterministic generator: the season is the same every run.
struct Dice(u64);

impl Dice {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 11
    }

    fn unit(&mut self) -> f64 {
        self.next() as f64 / (1u64 << 53) as f64
    }

    /// A standard normal draw (Box–Muller).
    fn normal(&mut self) -> f64 {
        let (u, v) = (self.unit().max(1e-12), self.unit());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

/// One game of the season, played and analysed.
struct Played {
    id: Uuid,
    players: [usize; 2],
    winner: Option<usize>,
    plies: u32,
    /// Per seat: losses of its valued moves, think times, exact moves.
    moves: [PlayedMoves; 2],
}

fn players(count: usize) -> Vec<Player> {
    let mut dice = Dice(7);
    let mut season: Vec<Player> = (0..count)
        .map(|n| {
            let level = [Level::Beginner, Level::Intermediate, Level::Advanced][n % 3];
            Player {
                name: format!("honest {n} ({level})"),
                level,
                careless: 0.05 + 0.25 * dice.unit(),
                median_secs: 1.0 + 7.0 * dice.unit(),
                spread: 0.6 + 0.5 * dice.unit(),
                honest: true,
            }
        })
        .collect();
    for (level, name) in [
        (Level::Perfect, "program (Perfect)"),
        (Level::Advanced, "program (Advanced)"),
    ] {
        season.push(Player {
            name: name.to_owned(),
            level,
            careless: 0.0,
            median_secs: 1.0,
            spread: 0.0,
            honest: false,
        });
    }
    season
}

fn play(season: &[Player], pair: [usize; 2], seed: u64) -> Played {
    let mut dice = Dice(seed);
    let mut game = Game::new(Kalah::default());
    let mut ais: Vec<Ai<Kalah>> = pair
        .iter()
        .map(|&p| Ai::new(season[p].level, seed).unwrap())
        .collect();
    let mut times: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    while game.outcome().is_none() {
        let seat = usize::from(game.position().turn() == Side::North);
        let player = &season[pair[seat]];
        let pit = if dice.unit() < player.careless {
            let legal: Vec<Pit> = game.position().legal_moves().collect();
            legal[(dice.next() as usize) % legal.len()]
        } else {
            let level = player.level;
            ais[seat]
                .choose(&game, &level.default_budget())
                .unwrap()
                .pit
        };
        let secs = player.median_secs * (player.spread * dice.normal()).exp();
        times[seat].push(secs);
        game.play(pit).unwrap();
    }
    let mut any = Game::from_variant(mancala_rules::Variant::Kalah(Default::default()));
    for pit in game.moves() {
        any.play(*pit).unwrap();
    }
    let reviews = analyse(
        &any,
        &AnalysisPlan::default(),
        &ProofTables::default(),
        Arc::new(AtomicBool::new(false)),
    );
    let mut losses: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    let mut exact = [0usize; 2];
    for review in &reviews {
        let seat = usize::from(review.mover == Side::North);
        if let Some(loss) = review.loss() {
            losses[seat].push(loss);
            if review.exact() {
                exact[seat] += 1;
            }
        }
    }
    let winner = match game.outcome().map(|outcome| outcome.winner) {
        Some(Winner::Player(Side::South)) => Some(pair[0]),
        Some(Winner::Player(Side::North)) => Some(pair[1]),
        _ => None,
    };
    let id = Uuid::from_u64_pair(seed, 0);
    let [l0, l1] = losses;
    let [t0, t1] = times;
    Played {
        id,
        players: pair,
        winner,
        plies: game.moves().len() as u32,
        moves: [
            PlayedMoves {
                game: id,
                losses: l0,
                think_secs: t0,
                hidden_secs: None,
                exact_moves: exact[0],
            },
            PlayedMoves {
                game: id,
                losses: l1,
                think_secs: t1,
                hidden_secs: None,
                exact_moves: exact[1],
            },
        ],
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let games: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(200);
    let count: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(20);
    let season = Arc::new(players(count));
    let programs = season.len() - count;
    // The pairings: honest players at random; each program once in every
    // tenth game, against an honest player.
    let mut dice = Dice(11);
    let pairings: Vec<[usize; 2]> = (0..games)
        .map(|n| {
            let a = (dice.next() as usize) % count;
            let mut b = (dice.next() as usize) % count;
            if b == a {
                b = (b + 1) % count;
            }
            if n % 10 < programs {
                [count + n % 10, a]
            } else {
                [a, b]
            }
        })
        .collect();
    let started = Instant::now();
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let chunks: Vec<Vec<(usize, [usize; 2])>> = (0..threads)
        .map(|t| {
            pairings
                .iter()
                .copied()
                .enumerate()
                .filter(|(n, _)| n % threads == t)
                .collect()
        })
        .collect();
    let handles: Vec<_> = chunks
        .into_iter()
        .map(|chunk| {
            let season = season.clone();
            std::thread::spawn(move || {
                chunk
                    .into_iter()
                    .map(|(n, pair)| (n, play(&season, pair, n as u64 + 1)))
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut played: Vec<(usize, Played)> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    played.sort_by_key(|(n, _)| *n);
    println!(
        "{} games played and analysed in {:.0} s",
        played.len(),
        started.elapsed().as_secs_f64()
    );

    // Each player weighed after each of their games, on their last ten.
    let mut history: HashMap<usize, Vec<(RatedGame, PlayedMoves)>> = HashMap::new();
    let mut flagged: HashMap<usize, &'static str> = HashMap::new();
    let mut weighings = 0;
    for (_, game) in &played {
        for seat in 0..2 {
            let me = game.players[seat];
            let opponent = game.players[1 - seat];
            let opponent_games = history.get(&opponent).map_or(0, Vec::len);
            let outcome = match game.winner {
                Some(w) if w == me => Outcome::Win,
                Some(_) => Outcome::Loss,
                None => Outcome::Draw,
            };
            history.entry(me).or_default().push((
                RatedGame {
                    game: game.id,
                    opponent: Uuid::from_u128(opponent as u128),
                    south: seat == 0,
                    outcome,
                    opponent_thin: opponent_games < 10,
                    plies: game.plies,
                    given_up: false,
                    rating: 1500.0,
                    opponent_rating: 1500.0,
                },
                game.moves[seat].clone(),
            ));
            let mine = &history[&me];
            let recent: Vec<&(RatedGame, PlayedMoves)> = mine.iter().rev().take(10).collect();
            let rated: Vec<RatedGame> = mine.iter().rev().map(|(g, _)| g.clone()).collect();
            let records: Vec<OpponentRecord> = Vec::new();
            let moves: Vec<PlayedMoves> = recent.iter().map(|(_, m)| m.clone()).collect();
            weighings += 1;
            let found = signals::ring(&rated, &records)
                .or_else(|| signals::sandbagging(&rated))
                .or_else(|| signals::engine(&moves));
            if let Some(signal) = found {
                flagged.entry(me).or_insert(signal.kind);
            }
        }
    }
    let honest_flagged: Vec<&usize> = flagged.keys().filter(|p| season[**p].honest).collect();
    println!(
        "honest players: {count}, weighed {weighings} times in all; reported: {} ({:.1} %)",
        honest_flagged.len(),
        100.0 * honest_flagged.len() as f64 / count as f64
    );
    for p in &honest_flagged {
        println!("  false positive: {} as {}", season[**p].name, flagged[p]);
    }
    for p in count..season.len() {
        let games = history.get(&p).map_or(0, Vec::len);
        let moves: Vec<PlayedMoves> = history
            .get(&p)
            .map(|h| h.iter().map(|(_, m)| m.clone()).collect())
            .unwrap_or_default();
        let best: usize = moves
            .iter()
            .map(|m| m.losses.iter().filter(|&&l| l <= 0.0).count())
            .sum();
        let all: usize = moves.iter().map(|m| m.losses.len()).sum();
        println!(
            "{}: {games} games, best moves {:.1} %, reported as {}",
            season[p].name,
            100.0 * best as f64 / all.max(1) as f64,
            flagged.get(&p).copied().unwrap_or("nothing")
        );
    }
    // The honest players' own accuracy, for the thresholds' margin.
    let mut shares: Vec<(f64, String)> = (0..count)
        .filter_map(|p| {
            let h = history.get(&p)?;
            let best: usize = h
                .iter()
                .map(|(_, m)| m.losses.iter().filter(|&&l| l <= 0.0).count())
                .sum();
            let all: usize = h.iter().map(|(_, m)| m.losses.len()).sum();
            Some((best as f64 / all.max(1) as f64, season[p].name.clone()))
        })
        .collect();
    shares.sort_by(|a, b| b.0.total_cmp(&a.0));
    if let Some((share, name)) = shares.first() {
        println!(
            "the most accurate honest player: {name}, best moves {:.1} % (the engine threshold: {:.0} %)",
            share * 100.0,
            signals::ENGINE_BEST_SHARE * 100.0
        );
    }
}
