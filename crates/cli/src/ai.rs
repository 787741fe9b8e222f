//! `mancala ai`: the AI's move for a position.

use clap::Args;
use mancala_ai::{AnyAi, Budget, Chooser, Level};
use serde_json::json;

use crate::Failure;
use crate::position_args::PositionArgs;

#[derive(Debug, Args)]
pub(crate) struct AiArgs {
    #[command(flatten)]
    position: PositionArgs,
    /// beginner, intermediate, advanced, or perfect (Kalah only).
    #[arg(long)]
    level: Level,
    /// Seed of the AI's random choices: the same seed gives the same move.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Search at most this many nodes instead of the level's default.
    #[arg(long)]
    nodes: Option<u64>,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: &AiArgs) -> Result<(), Failure> {
    let game = args.position.game()?;
    let mut ai = AnyAi::new(game.variant(), args.level, args.seed)
        .map_err(|error| Failure::Usage(error.to_string()))?;
    let budget = args
        .nodes
        .map_or_else(|| args.level.default_budget(), Budget::nodes);
    let Some(decision) = ai.choose(&game, &budget) else {
        return Err(Failure::Input(json!({
            "error": "game_over",
            "message": "the game is over: there is no move to choose",
        })));
    };
    if args.json {
        println!(
            "{}",
            json!({
                "pit": decision.pit.get(),
                "value": decision.stones(),
                "exact": decision.exact,
                "depth": decision.depth,
                "nodes": decision.nodes,
            })
        );
    } else {
        let kind = if decision.exact { "exact" } else { "estimate" };
        println!(
            "pit {} (value {:+.2} stones for the player to move, {kind}; depth {}, {} nodes)",
            decision.pit,
            decision.stones(),
            decision.depth,
            decision.nodes
        );
    }
    Ok(())
}
