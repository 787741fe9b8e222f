//! Perft: the number of move sequences of a given length, the standard check
//! that a move generator is exactly right.
//!
//! One ply is one sowing; an extra turn is a new ply; forced passes are not
//! plies. Games that end before the depth are not counted; games that end
//! exactly at it are.

use crate::game::{Game, History};
use crate::position::Position;
use crate::variant::AnyPosition;
use crate::{Kalah, Mangala, Oware};

/// Counts the move sequences of length `depth` from the game's position,
/// applying the repetition rule against the game's history.
pub fn perft<P: Position>(game: &Game<P>, depth: u32) -> u64 {
    if game.position().can_repeat() {
        let mut history = game.history().clone();
        perft_with_history(&mut history, depth)
    } else {
        perft_position(game.position(), depth)
    }
}

/// [`perft`] for a game whose variant is chosen at run time: dispatches on
/// the variant once instead of at every node.
pub fn perft_any(game: &Game<AnyPosition>, depth: u32) -> u64 {
    if let Some(game) = game.concrete::<Kalah>() {
        perft(&game, depth)
    } else if let Some(game) = game.concrete::<Oware>() {
        perft(&game, depth)
    } else if let Some(game) = game.concrete::<Mangala>() {
        perft(&game, depth)
    } else {
        perft(game, depth)
    }
}

/// Perft for variants whose positions cannot recur (Kalah): no history,
/// and bulk counting at the last ply, where every legal move is one leaf.
pub fn perft_position<P: Position>(position: &P, depth: u32) -> u64 {
    if position.is_over() {
        return u64::from(depth == 0);
    }
    match depth {
        0 => 1,
        1 => position.legal_moves().len() as u64,
        _ => position
            .legal_moves()
            .map(|pit| perft_position(&position.play_unchecked(pit), depth - 1))
            .sum(),
    }
}

fn perft_with_history<P: Position>(history: &mut History<P>, depth: u32) -> u64 {
    let position = *history.current();
    if position.is_over() {
        return u64::from(depth == 0);
    }
    match depth {
        0 => 1,
        // Each move leads to exactly one position, over or not: a leaf.
        1 => position.legal_moves().len() as u64,
        _ => {
            let mut nodes = 0;
            for pit in position.legal_moves() {
                history.push(position.play_unchecked(pit));
                nodes += perft_with_history(history, depth - 1);
                history.pop();
            }
            nodes
        }
    }
}
