//! The rules of Kalah, Oware (Abapa) and Mangala II, exactly as
//! `docs/RULES.md` states them.
//!
//! The crate is pure: no IO, no clock, no randomness. Positions are small
//! `Copy` values; [`Position::play`] returns the next position or a
//! [`PlayError`] that names why the move is illegal, and never allocates.
//! [`Game`] adds the history that the repetition rules of Oware and Mangala
//! need, and [`Record`] replays a game from its variant and moves.
//!
//! ```
//! use mancala_rules::{Game, Pit, Side, Position, Variant};
//!
//! let mut game = Game::from_variant(Variant::Kalah(Default::default()));
//! // Pit 3 holds four stones and ends in South's store: South moves again.
//! game.play(Pit::new(3)?)?;
//! assert_eq!(game.position().turn(), Side::South);
//! assert_eq!(game.position().score(), [1, 0]);
//! # Ok::<(), mancala_rules::PlayError>(())
//! ```
//!
//! Pits are numbered 1..=6 from the mover's own left; player 0 (South) moves
//! first. Code that knows its variant at compile time uses [`Kalah`],
//! [`Oware`] or [`Mangala`] directly; code that learns it at run time uses
//! [`Variant`] and [`AnyPosition`].

mod game;
mod kalah;
mod mangala;
mod oware;
mod perft;
mod position;
mod types;
mod variant;

pub use game::{Game, Record, ReplayError};
pub use kalah::{Kalah, KalahEnd, KalahOptions, KalahOptionsError};
pub use mangala::Mangala;
pub use oware::Oware;
pub use perft::{perft, perft_any, perft_position};
pub use position::Position;
pub use types::{
    EndReason, InvalidSide, Outcome, Pit, PitSet, PlayError, PositionError, Side, Winner,
};
pub use variant::{AnyPosition, FromAny, Variant};
