//! `mancala perft`: count move sequences, the engine's golden check.

use std::time::Instant;

use clap::Args;
use serde_json::json;

use crate::Failure;
use crate::position_args::PositionArgs;

#[derive(Debug, Args)]
pub(crate) struct PerftArgs {
    #[command(flatten)]
    position: PositionArgs,
    /// Plies to count: one ply is one sowing, an extra turn is a new ply.
    #[arg(long)]
    depth: u32,
    /// Print a JSON object with the count, the time and the rate.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: &PerftArgs) -> Result<(), Failure> {
    let game = args.position.game()?;
    let started = Instant::now();
    let nodes = mancala_rules::perft_any(&game, args.depth);
    let seconds = started.elapsed().as_secs_f64();
    if args.json {
        let rate = if seconds > 0.0 {
            nodes as f64 / seconds
        } else {
            0.0
        };
        let report = json!({
            "variant": game.variant().name(),
            "depth": args.depth,
            "nodes": nodes,
            "seconds": seconds,
            "nodes_per_second": rate.round(),
        });
        println!("{report}");
    } else {
        println!("{nodes}");
    }
    Ok(())
}
