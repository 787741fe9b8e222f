//! The flags that choose a variant and a position: shared by every command.

use clap::{Args, ValueEnum};
use mancala_rules::{Game, KalahEnd, KalahOptions, Pit, ReplayError, Variant};
use serde_json::json;

use crate::Failure;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum VariantName {
    Kalah,
    Oware,
    Mangala,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum EndRule {
    Immediate,
    OnTurn,
}

/// Which game and which position.
#[derive(Debug, Args)]
pub(crate) struct PositionArgs {
    /// The rule set.
    #[arg(long, value_enum)]
    pub(crate) variant: VariantName,
    /// Kalah: stones per pit at the start (1..=6; 3..=6 are offered for play).
    #[arg(long)]
    pub(crate) seeds: Option<u8>,
    /// Kalah: pits per side (1..=6).
    #[arg(long)]
    pub(crate) pits: Option<u8>,
    /// Kalah: a lone last stone in an own empty pit goes to the store even
    /// when the opposite pit is empty.
    #[arg(long)]
    pub(crate) empty_capture: bool,
    /// Kalah: end when either side is empty after a move (immediate), or
    /// when the player to move has no stones (on-turn).
    #[arg(long, value_enum)]
    pub(crate) end: Option<EndRule>,
    /// Moves from the start, as pit numbers 1..=6 of the player to move,
    /// separated by commas. An empty list is the start position.
    #[arg(long, default_value = "", value_name = "PITS")]
    pub(crate) moves: String,
}

impl PositionArgs {
    pub(crate) fn variant(&self) -> Result<Variant, Failure> {
        match self.variant {
            VariantName::Kalah => {
                let options = KalahOptions::new(self.pits.unwrap_or(6), self.seeds.unwrap_or(4))
                    .map_err(|error| Failure::Usage(error.to_string()))?
                    .with_empty_capture(self.empty_capture)
                    .with_end(match self.end {
                        Some(EndRule::OnTurn) => KalahEnd::OnTurn,
                        Some(EndRule::Immediate) | None => KalahEnd::Immediate,
                    });
                Ok(Variant::Kalah(options))
            }
            VariantName::Oware | VariantName::Mangala => {
                let kalah_only = [
                    ("--seeds", self.seeds.is_some()),
                    ("--pits", self.pits.is_some()),
                    ("--empty-capture", self.empty_capture),
                    ("--end", self.end.is_some()),
                ];
                if let Some((flag, _)) = kalah_only.iter().find(|(_, given)| *given) {
                    return Err(Failure::Usage(format!("{flag} applies to kalah only")));
                }
                Ok(if self.variant == VariantName::Oware {
                    Variant::Oware
                } else {
                    Variant::Mangala
                })
            }
        }
    }

    /// Plays the moves from the start. An unreadable or illegal move is an
    /// input failure naming its 1-based ply.
    pub(crate) fn game(&self) -> Result<Game, Failure> {
        let mut game = Game::from_variant(self.variant()?);
        let text = self.moves.trim();
        if text.is_empty() {
            return Ok(game);
        }
        for (index, token) in text.split(',').enumerate() {
            let ply = index + 1;
            let token = token.trim();
            let number: u8 = token.parse().map_err(|_| {
                Failure::Input(json!({
                    "error": "invalid_move",
                    "ply": ply,
                    "message": format!("move {ply} is not a pit number: {token:?}"),
                }))
            })?;
            Pit::new(number)
                .and_then(|pit| game.play(pit).map(|_| ()))
                .map_err(|error| illegal_move(ReplayError { ply, error }))?;
        }
        Ok(game)
    }
}

fn illegal_move(error: ReplayError) -> Failure {
    Failure::Input(json!({
        "error": error.error.code(),
        "ply": error.ply,
        "message": error.to_string(),
    }))
}
