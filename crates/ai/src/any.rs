//! An AI for a game whose variant is chosen at run time, as the services
//! hold them.

use mancala_rules::{AnyPosition, Game, Kalah, Mangala, Oware, Variant};

use crate::budget::Budget;
use crate::player::{Ai, Decision, Level, LevelUnavailable, Player};

/// An AI of any variant. It searches the variant's own position type, so it
/// is as fast as [`Ai`] over that type.
#[derive(Debug)]
pub struct AnyAi {
    inner: Inner,
}

#[derive(Debug)]
enum Inner {
    Kalah(Ai<Kalah>),
    Oware(Ai<Oware>),
    Mangala(Ai<Mangala>),
}

impl AnyAi {
    /// An AI of `level` for games of `variant`, its choices drawn from
    /// `seed`.
    pub fn new(variant: Variant, level: Level, seed: u64) -> Result<AnyAi, LevelUnavailable> {
        let inner = match variant {
            Variant::Kalah(_) => Inner::Kalah(Ai::new(level, seed)?),
            Variant::Oware => Inner::Oware(Ai::new(level, seed)?),
            Variant::Mangala => Inner::Mangala(Ai::new(level, seed)?),
        };
        Ok(AnyAi { inner })
    }

    /// The level.
    pub fn level(&self) -> Level {
        match &self.inner {
            Inner::Kalah(ai) => ai.level(),
            Inner::Oware(ai) => ai.level(),
            Inner::Mangala(ai) => ai.level(),
        }
    }
}

impl Player<AnyPosition> for AnyAi {
    /// `None` when the game is over or is of another variant than the AI's.
    fn choose(&mut self, game: &Game<AnyPosition>, budget: &Budget) -> Option<Decision> {
        match &mut self.inner {
            Inner::Kalah(ai) => ai.choose(&game.concrete()?, budget),
            Inner::Oware(ai) => ai.choose(&game.concrete()?, budget),
            Inner::Mangala(ai) => ai.choose(&game.concrete()?, budget),
        }
    }
}
