//! An AI for a game whose variant is chosen at run time, as the services
//! hold them.

use mancala_rules::{AnyPosition, Game, Kalah, Mangala, Oware, Variant};

use crate::budget::Budget;
use crate::player::{Ai, Chooser, Decision, Level, LevelUnavailable};

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

    /// Proves Kalah positions with `tables`, shared with the process's
    /// other AIs (other variants have no solver).
    pub fn share(&mut self, tables: &crate::ProofTables) {
        if let Inner::Kalah(ai) = &mut self.inner {
            ai.share(tables);
        }
    }

    /// Whether it proves positions: a `Perfect` Kalah AI.
    pub fn proves(&self) -> bool {
        matches!(&self.inner, Inner::Kalah(ai) if ai.level() == Level::Perfect)
    }

    /// The tables its proofs use (none shared unless given).
    pub fn proof_tables(&self) -> Option<&crate::ProofTables> {
        match &self.inner {
            Inner::Kalah(ai) => Some(ai.proof_tables()),
            _ => None,
        }
    }

    /// Whether `level` plays games of `variant` (only Kalah is solved, so
    /// only Kalah has `Perfect`), without making an AI.
    pub fn offers(variant: Variant, level: Level) -> bool {
        level != Level::Perfect || matches!(variant, Variant::Kalah(_))
    }

    /// The level.
    pub fn level(&self) -> Level {
        match &self.inner {
            Inner::Kalah(ai) => ai.level(),
            Inner::Oware(ai) => ai.level(),
            Inner::Mangala(ai) => ai.level(),
        }
    }

    /// See [`Ai::reseed`].
    pub fn reseed(&mut self, seed: u64) {
        match &mut self.inner {
            Inner::Kalah(ai) => ai.reseed(seed),
            Inner::Oware(ai) => ai.reseed(seed),
            Inner::Mangala(ai) => ai.reseed(seed),
        }
    }

    /// See [`Ai::bytes`].
    pub fn bytes(&self) -> usize {
        match &self.inner {
            Inner::Kalah(ai) => ai.bytes(),
            Inner::Oware(ai) => ai.bytes(),
            Inner::Mangala(ai) => ai.bytes(),
        }
    }
}

impl Chooser<AnyPosition> for AnyAi {
    /// `None` when the game is over or is of another variant than the AI's.
    fn choose(&mut self, game: &Game<AnyPosition>, budget: &Budget) -> Option<Decision> {
        match &mut self.inner {
            Inner::Kalah(ai) => ai.choose(&game.concrete()?, budget),
            Inner::Oware(ai) => ai.choose(&game.concrete()?, budget),
            Inner::Mangala(ai) => ai.choose(&game.concrete()?, budget),
        }
    }
}
