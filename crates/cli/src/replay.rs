//! `mancala replay`: the position reached by a list of moves.

use clap::Args;
use mancala_rules::{Position, Side};
use serde::Serialize;

use crate::Failure;
use crate::position_args::PositionArgs;

#[derive(Debug, Args)]
pub(crate) struct ReplayArgs {
    #[command(flatten)]
    position: PositionArgs,
}

/// The printed position. `score` is the stores (Kalah) or the captures.
#[derive(Debug, Serialize)]
struct Snapshot {
    variant: &'static str,
    to_move: u8,
    over: bool,
    pits: [Vec<u8>; 2],
    score: [u8; 2],
    result: Option<&'static str>,
}

pub(crate) fn run(args: &ReplayArgs) -> Result<(), Failure> {
    let game = args.position.game()?;
    let position = game.position();
    let pits = usize::from(position.pits_per_side());
    let row = |player: Side| position.row(player)[..pits].to_vec();
    let snapshot = Snapshot {
        variant: game.variant().name(),
        to_move: position.turn().into(),
        over: position.is_over(),
        pits: [row(Side::South), row(Side::North)],
        score: position.score(),
        result: position.outcome().map(|outcome| outcome.result_str()),
    };
    let text = serde_json::to_string(&snapshot)
        .map_err(|error| Failure::Usage(format!("cannot print the position: {error}")))?;
    println!("{text}");
    Ok(())
}
