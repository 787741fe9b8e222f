//! `mancala book`: builds and checks the `Perfect` AI's opening book.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use clap::{Args, Subcommand};
use mancala_ai::{Book, BookEntry, Budget, ProofTables, Solver, SolverTable};

use crate::endgame::EndgameChoice;
use mancala_rules::{Kalah, KalahOptions, Position, Side};

use crate::Failure;
use crate::matches::threads_or_cores;

#[derive(Debug, Args)]
pub(crate) struct BookArgs {
    #[command(subcommand)]
    command: BookCommand,
}

#[derive(Debug, Subcommand)]
enum BookCommand {
    /// Solve every position `Perfect` can face in its opponent's first moves,
    /// on either side, and print the book.
    Build(BuildArgs),
    /// Check a book: it covers those positions, and its entries are what a
    /// fresh solve says.
    Verify(VerifyArgs),
}

/// Which positions a book covers.
#[derive(Debug, Args)]
struct Reach {
    /// Opponent moves (an extra turn being a move of its own) that the book
    /// answers, from the start, whichever side `Perfect` plays.
    #[arg(long, default_value_t = 3)]
    opponent_moves: u32,
    /// Stones a pit at the start, on six pits a side (repeat for several).
    #[arg(long = "seeds", default_values_t = [4u8])]
    seeds: Vec<u8>,
}

#[derive(Debug, Args)]
struct Tables {
    /// Megabytes of the solver's table, shared by the threads.
    #[arg(long, default_value_t = 1024)]
    table_mb: usize,
    /// The endgame table proofs read (17 stones unless told).
    #[command(flatten)]
    endgame: EndgameChoice,
    /// Solves at once (default: the number of cores).
    #[arg(long)]
    threads: Option<usize>,
}

#[derive(Debug, Args)]
struct BuildArgs {
    #[command(flatten)]
    reach: Reach,
    #[command(flatten)]
    tables: Tables,
}

#[derive(Debug, Args)]
struct VerifyArgs {
    #[command(flatten)]
    reach: Reach,
    #[command(flatten)]
    tables: Tables,
    /// The book to check (default: the one built into this program).
    #[arg(long)]
    file: Option<std::path::PathBuf>,
    /// Re-solve one entry in this many (1: all of them).
    #[arg(long, default_value_t = 1)]
    every: usize,
}

pub(crate) fn run(args: &BookArgs) -> Result<(), Failure> {
    match &args.command {
        BookCommand::Build(args) => build(args),
        BookCommand::Verify(args) => verify(args),
    }
}

fn options(seeds: u8) -> Result<KalahOptions, Failure> {
    KalahOptions::new(6, seeds).map_err(|error| Failure::Usage(error.to_string()))
}

/// The proof tables for boards of `options`, built once for all solves.
fn proof_tables(tables: &Tables, options: KalahOptions) -> Result<ProofTables, Failure> {
    Ok(ProofTables {
        table: Some(Arc::new(SolverTable::new(options, tables.table_mb << 20))),
        endgame: tables.endgame.table(options, 17)?.map(Arc::new),
    })
}

/// Walks the positions `Perfect` faces, playing `side`, within `reach`
/// opponent moves: `answer` gives its move in each (or `None` to stop
/// there). Level by level, so that a level's positions can be answered
/// together.
fn walk(
    start: Kalah,
    side: Side,
    reach: u32,
    mut answer: impl FnMut(&[Kalah]) -> Result<Vec<Option<mancala_rules::Pit>>, Failure>,
) -> Result<(), Failure> {
    let mut level = vec![(start, 0u32)];
    let mut seen = HashSet::new();
    while !level.is_empty() {
        let mut ours = Vec::new();
        let mut next = Vec::new();
        for (position, used) in level {
            if position.is_over() || !seen.insert((position, used)) {
                continue;
            }
            if position.turn() == side {
                ours.push((position, used));
            } else if used < reach {
                next.extend(
                    position
                        .legal_moves()
                        .map(|pit| (position.play_unchecked(pit), used + 1)),
                );
            }
        }
        let positions: Vec<Kalah> = ours.iter().map(|&(position, _)| position).collect();
        for ((position, used), pit) in ours.into_iter().zip(answer(&positions)?) {
            if let Some(pit) = pit {
                next.push((position.play_unchecked(pit), used));
            }
        }
        level = next;
    }
    Ok(())
}

/// Solves `positions` on `threads` threads sharing `tables`.
fn solve_all(
    positions: &[Kalah],
    tables: &ProofTables,
    threads: usize,
) -> Vec<Option<mancala_ai::Solution>> {
    let queue = Mutex::new(positions.iter().enumerate().collect::<Vec<_>>());
    let results = Mutex::new(vec![None; positions.len()]);
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1) {
            scope.spawn(|| {
                let mut solver: Solver = tables.solver(0);
                loop {
                    let next = queue.lock().unwrap_or_else(|e| e.into_inner()).pop();
                    let Some((index, position)) = next else {
                        return;
                    };
                    let solution = solver.solve(position, &Budget::unlimited());
                    results.lock().unwrap_or_else(|e| e.into_inner())[index] = solution;
                }
            });
        }
    });
    results.into_inner().unwrap_or_else(|e| e.into_inner())
}

/// What a solution makes of a book entry: the gain from the mover's side,
/// and the lowest best pit as the book's own move.
fn entry(position: &Kalah, solution: &mancala_ai::Solution) -> Option<BookEntry> {
    let me = position.turn();
    let sign = if me == Side::South { 1 } else { -1 };
    let now = i32::from(position.store(me)) - i32::from(position.store(me.opponent()));
    Some(BookEntry {
        gain: sign * solution.value - now,
        best: solution.best.clone(),
        played: *solution.best.first()?,
    })
}

fn build(args: &BuildArgs) -> Result<(), Failure> {
    let started = Instant::now();
    let threads = threads_or_cores(args.tables.threads);
    let mut book = Book::default();
    let mut solved = 0usize;
    for &seeds in &args.reach.seeds {
        let options = options(seeds)?;
        let tables = proof_tables(&args.tables, options)?;
        for side in Side::BOTH {
            walk(
                Kalah::new(options),
                side,
                args.reach.opponent_moves,
                |positions| {
                    let fresh: Vec<Kalah> = positions
                        .iter()
                        .filter(|position| book.entry(position).is_none())
                        .copied()
                        .collect::<HashSet<_>>()
                        .into_iter()
                        .collect();
                    for (position, solution) in
                        fresh.iter().zip(solve_all(&fresh, &tables, threads))
                    {
                        let made = solution.as_ref().and_then(|s| entry(position, s));
                        let Some(made) = made else {
                            return Err(Failure::Usage("a book position did not solve".into()));
                        };
                        book.insert(position, made);
                    }
                    solved += fresh.len();
                    eprintln!(
                        "{seeds} seeds, {side:?}: {} positions this level, {} in the book, {:.0} s",
                        positions.len(),
                        book.len(),
                        started.elapsed().as_secs_f64()
                    );
                    Ok(positions
                        .iter()
                        .map(|position| book.entry(position).map(|entry| entry.played))
                        .collect())
                },
            )?;
        }
    }
    let seeds: Vec<String> = args.reach.seeds.iter().map(u8::to_string).collect();
    let header = format!(
        "Mancala Arena's opening book for Kalah: six pits a side, the default rules.\n\
         Each line: the pits of the player to move (pit 1 to 6), the opponent's pits,\n\
         the gain still to come for the player to move under perfect play, every best\n\
         pit, and the best pit the book's line plays.\n\
         Every position the Perfect AI can face within its opponent's first {} moves\n\
         on either side, from the start with {} stones a pit: {} positions.\n\
         Made by: mancala book build --opponent-moves {} --seeds {}\n\
         Checked by: mancala book verify --opponent-moves {} --seeds {} --file <this file>",
        args.reach.opponent_moves,
        seeds.join(", "),
        book.len(),
        args.reach.opponent_moves,
        seeds.join(" --seeds "),
        args.reach.opponent_moves,
        seeds.join(" --seeds "),
    );
    print!("{}", book.to_text(&header));
    eprintln!(
        "{solved} positions solved in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn verify(args: &VerifyArgs) -> Result<(), Failure> {
    let started = Instant::now();
    let book = match &args.file {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|error| Failure::Usage(format!("{}: {error}", path.display())))?;
            Book::parse(&text).map_err(|error| Failure::Usage(error.to_string()))?
        }
        None => Book::standard().clone(),
    };
    let mut missing = 0usize;
    let mut wrong = 0usize;
    let mut checked = 0usize;
    for &seeds in &args.reach.seeds {
        let options = options(seeds)?;
        // Every position the walk meets must be in the book.
        let mut on_lines = Vec::new();
        for side in Side::BOTH {
            walk(
                Kalah::new(options),
                side,
                args.reach.opponent_moves,
                |positions| {
                    Ok(positions
                        .iter()
                        .map(|position| match book.entry(position) {
                            Some(entry) => {
                                on_lines.push(*position);
                                Some(entry.played)
                            }
                            None => {
                                missing += 1;
                                eprintln!("not in the book: {position:?}");
                                None
                            }
                        })
                        .collect())
                },
            )?;
        }
        // And what it says of them is what a solve says.
        on_lines.sort_by_key(|position| std::cmp::Reverse(position.stones_in_pits()));
        on_lines.dedup();
        let sample: Vec<Kalah> = on_lines
            .iter()
            .step_by(args.every.max(1))
            .copied()
            .collect();
        let tables = proof_tables(&args.tables, options)?;
        let solutions = solve_all(&sample, &tables, threads_or_cores(args.tables.threads));
        for (position, solution) in sample.iter().zip(solutions) {
            checked += 1;
            let solved = solution.as_ref().and_then(|s| entry(position, s));
            let stored = book.entry(position);
            let agrees = match (&solved, stored) {
                (Some(solved), Some(stored)) => {
                    solved.gain == stored.gain && solved.best == stored.best
                }
                _ => false,
            };
            if !agrees {
                wrong += 1;
                eprintln!("{position:?}: the book says {stored:?}, a solve {solved:?}");
            }
        }
    }
    println!(
        "{} entries; {missing} positions missing; {checked} re-solved, {wrong} wrong; {:.0} s",
        book.len(),
        started.elapsed().as_secs_f64()
    );
    if missing + wrong > 0 {
        return Err(Failure::Exit(1));
    }
    Ok(())
}
