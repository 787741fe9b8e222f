//! Random byte strings as games: the first bytes choose the variant and its
//! options, every later byte is a pit number 0..=7 (so out-of-range pits are
//! tried too). Whatever the input, the engine must not panic, `play` must
//! agree with `legal_moves`, a refused move must change nothing, and stones
//! must be conserved.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mancala_rules::{Game, KalahEnd, KalahOptions, Pit, Position, Variant};

fn variant(bytes: &[u8]) -> Option<Variant> {
    let (&kind, rest) = bytes.split_first()?;
    Some(match kind % 3 {
        0 => {
            let &[size, flags, ..] = rest else { return None };
            let options = KalahOptions::new(size % 6 + 1, size / 6 % 6 + 1).ok()?;
            let end = if flags & 2 == 0 { KalahEnd::Immediate } else { KalahEnd::OnTurn };
            Variant::Kalah(options.with_empty_capture(flags & 1 == 1).with_end(end))
        }
        1 => Variant::Oware,
        _ => Variant::Mangala,
    })
}

fuzz_target!(|bytes: &[u8]| {
    let Some(variant) = variant(bytes) else { return };
    let mut game = Game::from_variant(variant);
    let total = game.position().total_stones();
    for &byte in bytes.iter().skip(3) {
        let before = *game.position();
        let listed = Pit::new(byte % 8).is_ok_and(|pit| before.legal_moves().contains(pit));
        let played = Pit::new(byte % 8).and_then(|pit| game.play(pit).map(|_| ()));
        assert_eq!(played.is_ok(), listed, "play and legal_moves disagree");
        if played.is_err() {
            assert_eq!(*game.position(), before, "a refused move changed the position");
        }
        assert_eq!(game.position().total_stones(), total, "stones are not conserved");
        assert_eq!(game.position().is_over(), game.position().legal_moves().is_empty());
    }
    let replayed = game.record().replay().expect("a played game replays");
    assert_eq!(replayed.position(), game.position());
});
