//! Helpers shared by the integration tests.

use mancala_rules::{Game, KalahEnd, KalahOptions, Pit, Variant};

use crate::reference;

/// Parses `kalah pits=6 seeds=4 empty_capture end=on_turn`, `oware` or
/// `mangala`, optionally followed by `moves=3,1,6`, into the game reached.
pub fn parse_game(text: &str) -> Game {
    let (variant, moves) = match text.split_once("moves=") {
        Some((variant, moves)) => (variant, moves.trim()),
        None => (text, ""),
    };
    let mut game = Game::from_variant(parse_variant(variant));
    for pit in moves.split(',').filter(|pit| !pit.is_empty()) {
        game.play(Pit::new(pit.parse().unwrap()).unwrap()).unwrap();
    }
    game
}

/// Parses `kalah pits=6 seeds=4 empty_capture end=on_turn`, `oware` or
/// `mangala`.
pub fn parse_variant(text: &str) -> Variant {
    let mut words = text.split_whitespace();
    match words.next() {
        Some("oware") => Variant::Oware,
        Some("mangala") => Variant::Mangala,
        Some("kalah") => {
            let (mut pits, mut seeds, mut empty_capture, mut end) =
                (6, 4, false, KalahEnd::Immediate);
            for word in words {
                match word.split_once('=') {
                    Some(("pits", n)) => pits = n.parse().unwrap(),
                    Some(("seeds", n)) => seeds = n.parse().unwrap(),
                    Some(("end", "on_turn")) => end = KalahEnd::OnTurn,
                    None if word == "empty_capture" => empty_capture = true,
                    _ => panic!("unknown option {word:?}"),
                }
            }
            let options = KalahOptions::new(pits, seeds).unwrap();
            Variant::Kalah(options.with_empty_capture(empty_capture).with_end(end))
        }
        other => panic!("unknown variant {other:?}"),
    }
}

/// The reference rules for a variant.
pub fn reference_rules(variant: Variant) -> reference::Rules {
    match variant {
        Variant::Kalah(options) => reference::Rules::Kalah {
            pits: usize::from(options.pits()),
            seeds: options.seeds(),
            empty_capture: options.empty_capture(),
            on_turn: options.end() == KalahEnd::OnTurn,
        },
        Variant::Oware => reference::Rules::Oware,
        Variant::Mangala => reference::Rules::Mangala,
    }
}
