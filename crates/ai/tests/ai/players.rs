//! Every level returns a legal move, reproducibly.

use mancala_ai::{Ai, AnyAi, Budget, Chooser, Evaluate, Level};
use mancala_rules::{Game, Kalah, KalahOptions, Mangala, Oware, Pit, Position, Variant};
use proptest::prelude::*;

/// A game reached by `moves`, each taken modulo the legal moves.
fn game_after<P: Position>(start: P, moves: &[u8]) -> Game<P> {
    let mut game = Game::new(start);
    for &choice in moves {
        let legal: Vec<Pit> = game.position().legal_moves().collect();
        if legal.is_empty() {
            break;
        }
        game.play(legal[usize::from(choice) % legal.len()]).unwrap();
    }
    game
}

fn check_levels<P: Evaluate>(start: P, moves: &[u8], seed: u64, levels: &[Level]) {
    let game = game_after(start, moves);
    for &level in levels {
        let budget = Budget::nodes(20_000);
        let first = Ai::<P>::new(level, seed).unwrap().choose(&game, &budget);
        let again = Ai::<P>::new(level, seed).unwrap().choose(&game, &budget);
        assert_eq!(first, again, "{level} is not reproducible");
        match first {
            None => assert!(game.position().is_over()),
            Some(decision) => assert!(
                game.position().legal_moves().contains(decision.pit),
                "{level}"
            ),
        }
    }
}

const NOT_PERFECT: [Level; 3] = [Level::Beginner, Level::Intermediate, Level::Advanced];

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn kalah_moves_are_legal_and_reproducible(moves in prop::collection::vec(any::<u8>(), 0..60), seed in any::<u64>()) {
        check_levels(Kalah::default(), &moves, seed, &Level::ALL);
    }

    #[test]
    fn oware_moves_are_legal_and_reproducible(moves in prop::collection::vec(any::<u8>(), 0..120), seed in any::<u64>()) {
        check_levels(Oware::new(), &moves, seed, &NOT_PERFECT);
    }

    #[test]
    fn mangala_moves_are_legal_and_reproducible(moves in prop::collection::vec(any::<u8>(), 0..120), seed in any::<u64>()) {
        check_levels(Mangala::new(), &moves, seed, &NOT_PERFECT);
    }
}

#[test]
fn an_ai_of_any_variant_plays_its_variant_only() {
    let kalah = Game::from_variant(Variant::Kalah(KalahOptions::default()));
    let oware = Game::from_variant(Variant::Oware);
    let mut ai = AnyAi::new(Variant::Oware, Level::Advanced, 3).unwrap();
    assert!(ai.choose(&oware, &Budget::nodes(10_000)).is_some());
    assert!(ai.choose(&kalah, &Budget::nodes(10_000)).is_none());
    assert!(AnyAi::new(Variant::Mangala, Level::Perfect, 3).is_err());
}

#[test]
fn advanced_takes_a_free_capture() {
    // South's pit 1 holds one stone and pit 2 is empty, opposite North's
    // full pit 5: sowing pit 1 captures 9 stones. Every level but a blind
    // one sees it.
    let position = Kalah::from_parts(
        KalahOptions::default(),
        [[1, 0, 1, 1, 1, 0], [1, 1, 1, 1, 8, 1]],
        [15, 16],
        mancala_rules::Side::South,
    )
    .unwrap();
    let game = Game::new(position);
    for level in [Level::Intermediate, Level::Advanced, Level::Perfect] {
        let decision = Ai::<Kalah>::new(level, 1)
            .unwrap()
            .choose(&game, &Budget::nodes(100_000))
            .unwrap();
        assert_eq!(decision.pit.get(), 1, "{level}");
    }
}

#[test]
fn the_search_is_exact_near_the_end() {
    // Few stones left: Advanced sees to the end and agrees with the solver.
    let position = Kalah::from_parts(
        KalahOptions::default(),
        [[0, 0, 2, 0, 1, 1], [1, 0, 0, 2, 0, 1]],
        [20, 20],
        mancala_rules::Side::South,
    )
    .unwrap();
    let game = Game::new(position);
    let decision = Ai::<Kalah>::new(Level::Advanced, 1)
        .unwrap()
        .choose(&game, &Budget::unlimited())
        .unwrap();
    assert!(decision.exact);
    let solution = mancala_ai::Solver::new(1 << 20)
        .solve(&position, &Budget::unlimited())
        .unwrap();
    assert_eq!(decision.value, solution.value * mancala_ai::SCALE);
    assert!(solution.best.contains(&decision.pit));
}
