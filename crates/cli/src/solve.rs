//! `mancala solve`: the exact value of a Kalah position.

use std::time::Instant;

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use mancala_ai::{Budget, Endgame, Solver};

use crate::endgame::EndgameChoice;
use mancala_rules::{AnyPosition, Pit, Position};
use serde_json::json;

use crate::Failure;
use crate::position_args::PositionArgs;

#[derive(Debug, Args)]
pub(crate) struct SolveArgs {
    #[command(flatten)]
    position: PositionArgs,
    /// Print one JSON object: {"value","best","nodes","seconds"}.
    #[arg(long)]
    json: bool,
    /// Memory for the solver's transposition table, in MiB.
    #[arg(long, default_value_t = Solver::DEFAULT_TABLE_BYTES >> 20)]
    table_mb: usize,
    #[command(flatten)]
    endgame: EndgameChoice,
    /// Print each narrowing of the bounds on standard error, one line each,
    /// even when standard error is not a terminal.
    #[arg(long)]
    verbose: bool,
    /// Give up after this many nodes (exit code 3).
    #[arg(long)]
    nodes: Option<u64>,
}

/// Stones up to which `mancala solve` builds an endgame table unless told
/// otherwise: a few seconds to build, and about as much as it saves.
const SOLVE_ENDGAME_STONES: u8 = 16;

pub(crate) fn run(args: &SolveArgs) -> Result<(), Failure> {
    let game = args.position.game()?;
    let AnyPosition::Kalah(position) = *game.position() else {
        return Err(Failure::Usage(
            "only kalah can be solved; try `mancala ai --level advanced`".into(),
        ));
    };
    let progress = ProgressBar::new_spinner().with_style(
        ProgressStyle::with_template("{spinner} {elapsed} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    let budget = args.nodes.map_or_else(Budget::unlimited, Budget::nodes);
    let started = Instant::now();
    // A small board needs far less than the default table: no more slots
    // than it has configurations of its pits.
    let options = position.options();
    let configurations = Endgame::entries(options.pits(), 2 * options.pits() * options.seeds());
    let table_bytes =
        (args.table_mb << 20).min(configurations.saturating_mul(64).max(1 << 20) as usize);
    let mut solver = Solver::new(table_bytes);
    if let Some(endgame) = args.endgame.table(options, SOLVE_ENDGAME_STONES)? {
        solver = solver.with_endgame(endgame);
    }
    let solution = solver.solve_with_progress(&position, &budget, |step| {
        let message = format!(
            "gain for the player to move in [{}, {}], {} nodes, {:.1} s",
            step.lower,
            step.upper,
            step.nodes,
            started.elapsed().as_secs_f64()
        );
        if args.verbose {
            progress.suspend(|| eprintln!("{message}"));
        }
        progress.set_message(message);
        progress.tick();
    });
    progress.finish_and_clear();
    let seconds = started.elapsed().as_secs_f64();
    let Some(solution) = solution else {
        eprintln!("error: the node budget ran out before the proof");
        return Err(Failure::Exit(3));
    };
    let best: Vec<u8> = solution.best.iter().map(|pit| pit.get()).collect();
    if args.json {
        println!(
            "{}",
            json!({"value": solution.value, "best": best, "nodes": solution.nodes, "seconds": seconds})
        );
    } else {
        let mover = if position.turn().index() == 0 {
            "South (player 0)"
        } else {
            "North (player 1)"
        };
        let best: Vec<String> = solution.best.iter().map(Pit::to_string).collect();
        println!(
            "value: {:+} (South's final store minus North's, perfect play)",
            solution.value
        );
        println!(
            "best moves for {mover}: {}",
            if best.is_empty() {
                "none, the game is over".into()
            } else {
                best.join(", ")
            }
        );
        println!("{} nodes in {seconds:.2} s", solution.nodes);
    }
    Ok(())
}
