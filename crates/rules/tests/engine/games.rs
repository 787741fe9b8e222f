//! Whole games from the independent reference, replayed to their last move.

use mancala_rules::{Position, Side};
use serde_json::{Value, json};

use crate::support::parse_game;

const GAMES: &str = include_str!("../games.txt");

#[test]
fn reference_games_end_in_the_same_position() {
    let mut checked = 0;
    for line in GAMES
        .lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
    {
        let fields: Vec<&str> = line.split('|').map(str::trim).collect();
        let [variant, moves, expected] = fields[..] else {
            panic!("bad line {line}")
        };
        let game = parse_game(&format!("{variant} moves={moves}"));
        let position = game.position();
        let row = |player: Side| position.row(player).to_vec();
        let actual = json!({
            "to_move": u8::from(position.turn()),
            "over": position.is_over(),
            "pits": [row(Side::South), row(Side::North)],
            "score": position.score(),
            "result": position.outcome().map(|outcome| outcome.result_str()),
        });
        let expected: Value = serde_json::from_str(expected).unwrap();
        assert_eq!(actual, expected, "{variant} after {moves}");
        assert!(
            position.is_over(),
            "every reference game is played to its end"
        );
        checked += 1;
    }
    assert!(checked >= 14, "only {checked} games");
}
