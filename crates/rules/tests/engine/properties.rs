//! Properties every position and game must have, checked on random games,
//! and move-by-move agreement with the reference implementation.

use mancala_rules::{
    AnyPosition, EndReason, Game, KalahEnd, KalahOptions, Pit, PlayError, Position, Record, Side,
    Variant,
};
use proptest::prelude::*;

use crate::reference::Reference;
use crate::support::reference_rules;

/// Plies after which a random game is declared endless: far beyond any real
/// game, since the repetition rule ends cycles.
const PLY_CAP: usize = 20_000;

fn variants() -> impl Strategy<Value = Variant> {
    prop_oneof![
        (1u8..=6, 1u8..=6, any::<bool>(), any::<bool>()).prop_map(
            |(pits, seeds, empty_capture, on_turn)| {
                let end = if on_turn {
                    KalahEnd::OnTurn
                } else {
                    KalahEnd::Immediate
                };
                Variant::Kalah(
                    KalahOptions::new(pits, seeds)
                        .unwrap()
                        .with_empty_capture(empty_capture)
                        .with_end(end),
                )
            }
        ),
        Just(Variant::Oware),
        Just(Variant::Mangala),
    ]
}

/// A tiny deterministic generator, so a failing game replays from its seed.
struct Chooser(u64);

impl Chooser {
    fn pick(&mut self, legal: &[Pit]) -> Pit {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        legal[(self.0 % legal.len() as u64) as usize]
    }
}

/// Plays a random game to its end, calling `each` on every position.
fn random_game(variant: Variant, seed: u64, mut each: impl FnMut(&Game, Option<Pit>)) -> Game {
    let mut game = Game::from_variant(variant);
    let mut chooser = Chooser(seed | 1);
    each(&game, None);
    while !game.position().is_over() {
        let legal: Vec<Pit> = game.position().legal_moves().collect();
        assert!(
            !legal.is_empty(),
            "a game that is not over has a legal move"
        );
        let pit = chooser.pick(&legal);
        game.play(pit).unwrap();
        each(&game, Some(pit));
        assert!(
            game.ply() < PLY_CAP,
            "game did not end: {:?}",
            game.record()
        );
    }
    game
}

fn snapshot(position: &AnyPosition) -> (Vec<u8>, Vec<u8>, [u8; 2], bool) {
    let pits = usize::from(position.pits_per_side());
    (
        position.row(Side::South)[..pits].to_vec(),
        position.row(Side::North)[..pits].to_vec(),
        position.score(),
        position.is_over(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn stones_are_conserved_and_every_game_ends(variant in variants(), seed in any::<u64>()) {
        let total = variant.start().total_stones();
        let game = random_game(variant, seed, |game, _| {
            assert_eq!(game.position().total_stones(), total);
        });
        let outcome = game.outcome().unwrap();
        // Every end but Oware's majority rule sweeps the board into the scores.
        if outcome.reason != EndReason::Majority {
            prop_assert_eq!(u32::from(outcome.score[0]) + u32::from(outcome.score[1]), total);
        }
        prop_assert!(game.position().legal_moves().is_empty());
    }

    #[test]
    fn the_engine_agrees_with_the_reference(variant in variants(), seed in any::<u64>()) {
        let mut reference = Reference::new(reference_rules(variant));
        random_game(variant, seed, |game, pit| {
            if let Some(pit) = pit {
                reference.play(usize::from(pit.get()));
            }
            let position = game.position();
            let expected = (reference.row(0), reference.row(1), reference.score(), reference.over);
            assert_eq!(snapshot(position), expected, "after {:?}", game.moves());
            if !reference.over {
                assert_eq!(position.turn().index(), reference.turn, "after {:?}", game.moves());
            }
            let legal: Vec<usize> = position.legal_moves().map(|pit| usize::from(pit.get())).collect();
            assert_eq!(legal, reference.legal(), "after {:?}", game.moves());
        });
    }

    #[test]
    fn legal_moves_and_play_agree(variant in variants(), seed in any::<u64>()) {
        random_game(variant, seed, |game, _| {
            let position = *game.position();
            for number in 0..=7u8 {
                let played = Pit::new(number).and_then(|pit| position.play(pit));
                let listed = Pit::new(number).is_ok_and(|pit| position.legal_moves().contains(pit));
                assert_eq!(played.is_ok(), listed, "pit {number} in {position:?}");
                match played {
                    Ok(_) => {}
                    Err(PlayError::GameOver) => assert!(position.is_over()),
                    Err(PlayError::PitOutOfRange { pit, .. }) => {
                        assert!(pit == 0 || pit > position.pits_per_side());
                    }
                    Err(PlayError::EmptyPit { pit }) => {
                        assert_eq!(position.row(position.turn())[usize::from(pit - 1)], 0);
                    }
                    Err(PlayError::MustFeed { .. }) => {
                        assert_eq!(position.variant(), Variant::Oware);
                        assert_eq!(position.row(position.turn().opponent()), [0; 6]);
                    }
                }
            }
        });
    }

    #[test]
    fn replaying_a_record_is_deterministic(variant in variants(), seed in any::<u64>()) {
        let game = random_game(variant, seed, |_, _| {});
        let record = game.record();
        let first = record.replay().unwrap();
        let second = record.replay().unwrap();
        prop_assert_eq!(first.position(), game.position());
        prop_assert_eq!(second.position(), game.position());
        prop_assert_eq!(first.moves(), game.moves());
        // One more move after the end is refused and changes nothing.
        let mut longer: Record = record.clone();
        longer.moves.push(Pit::new(1).unwrap());
        let error = longer.replay().unwrap_err();
        prop_assert_eq!(error.ply, record.moves.len() + 1);
        prop_assert_eq!(error.error, PlayError::GameOver);
    }

    #[test]
    fn equal_positions_hash_equal_and_distinct_ones_rarely_collide(variant in variants(), seed in any::<u64>()) {
        let mut seen = std::collections::HashMap::new();
        random_game(variant, seed, |game, _| {
            let position = *game.position();
            let previous = seen.insert(position.hash64(), position);
            if let Some(previous) = previous {
                assert_eq!(previous, position, "hash collision");
            }
        });
    }
}

#[test]
fn undo_restores_every_earlier_position() {
    let mut positions = vec![];
    let mut game = random_game(Variant::Oware, 7, |game, _| {
        positions.push(*game.position())
    });
    positions.pop();
    while let Some(expected) = positions.pop() {
        game.undo().unwrap();
        assert_eq!(*game.position(), expected);
    }
    assert_eq!(game.undo(), None);
}
