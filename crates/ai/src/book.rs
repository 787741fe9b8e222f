//! The opening book: exact values of the Kalah positions the `Perfect` AI
//! meets first, which take the solver longest.
//!
//! A proof from the start of six-pit Kalah takes half a minute or more of
//! one core; a few moves in, under a second. So the positions `Perfect`
//! can face in its opponent's first moves, on either side, are solved
//! ahead of time (`mancala book build`), checked (`mancala book verify`)
//! and shipped in the crate (`book/kalah-6.txt`, embedded at build time).
//!
//! Each entry is keyed on the pits alone, seen from the player to move:
//! what is still to be won does not depend on the stores, so an entry
//! serves every board of six pits a side with the default rules, whatever
//! its stones a pit. An entry holds the gain still to come for the player
//! to move, every best pit, and the one the book's own line plays: the
//! book covers the replies to that move, so `Perfect` plays it to stay on
//! the book.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::OnceLock;

use mancala_rules::{Kalah, KalahEnd, Pit, Position, Side};

/// The shipped book.
const STANDARD: &str = include_str!("../book/kalah-6.txt");

/// Pits on each side of the boards a book serves.
const PITS: usize = 6;

/// What the book knows of one position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BookEntry {
    /// The final store difference minus the current one for the player to
    /// move, under perfect play.
    pub gain: i32,
    /// Every pit that keeps it, lowest first.
    pub best: Vec<Pit>,
    /// The best pit the book's line plays.
    pub played: Pit,
}

/// A book answer for a position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BookMove {
    /// South's final store minus North's under perfect play.
    pub value: i32,
    pub best: Vec<Pit>,
    pub played: Pit,
}

/// A line of a book that does not read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("book line {line}: {reason}")]
pub struct BookError {
    pub line: usize,
    pub reason: String,
}

/// Exact values of Kalah positions by their pits.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Book {
    entries: HashMap<[u8; 2 * PITS], BookEntry>,
}

impl Book {
    /// The book shipped with the crate (empty if it does not read, which
    /// its tests rule out).
    pub fn standard() -> &'static Book {
        static BOOK: OnceLock<Book> = OnceLock::new();
        BOOK.get_or_init(|| Book::parse(STANDARD).unwrap_or_default())
    }

    /// Reads a book: one entry a line, `#` starting a comment.
    pub fn parse(text: &str) -> Result<Book, BookError> {
        let mut book = Book::default();
        for (index, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let fail = |reason: &str| BookError {
                line: index + 1,
                reason: reason.to_owned(),
            };
            let fields: Vec<&str> = line.split_whitespace().collect();
            let [mine, theirs, gain, best, played] = fields[..] else {
                return Err(fail("expected five fields"));
            };
            let mut pits = [0u8; 2 * PITS];
            for (half, text) in [mine, theirs].into_iter().enumerate() {
                let counts: Vec<u8> = text
                    .split(',')
                    .map(str::parse)
                    .collect::<Result<_, _>>()
                    .map_err(|_| fail("pits are six counts"))?;
                if counts.len() != PITS {
                    return Err(fail("pits are six counts"));
                }
                pits[half * PITS..(half + 1) * PITS].copy_from_slice(&counts);
            }
            let gain: i32 = gain.parse().map_err(|_| fail("the gain is a number"))?;
            let pit = |text: &str| {
                text.parse::<u8>()
                    .ok()
                    .and_then(|n| Pit::new(n).ok())
                    .filter(|pit| usize::from(pit.get()) <= PITS)
                    .ok_or_else(|| fail("a pit is 1 to 6"))
            };
            let best: Vec<Pit> = best.split(',').map(pit).collect::<Result<_, _>>()?;
            let played = pit(played)?;
            if !best.contains(&played) {
                return Err(fail("the pit played is not among the best"));
            }
            book.entries.insert(pits, BookEntry { gain, best, played });
        }
        Ok(book)
    }

    /// The entries, each with its pits (the mover's six, then the
    /// opponent's).
    pub fn entries(&self) -> impl Iterator<Item = ([u8; 12], &BookEntry)> {
        self.entries.iter().map(|(pits, entry)| (*pits, entry))
    }

    /// How many positions it holds.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Adds or replaces the entry of `position`'s pits.
    pub fn insert(&mut self, position: &Kalah, entry: BookEntry) {
        if let Some(pits) = key(position) {
            self.entries.insert(pits, entry);
        }
    }

    /// The entry for `position`'s pits, if the book serves its board.
    pub fn entry(&self, position: &Kalah) -> Option<&BookEntry> {
        self.entries.get(&key(position)?)
    }

    /// The value and moves of `position` under perfect play, if the book
    /// has it.
    pub fn lookup(&self, position: &Kalah) -> Option<BookMove> {
        let entry = self.entry(position)?;
        let me = position.turn();
        let now = i32::from(position.store(me)) - i32::from(position.store(me.opponent()));
        let sign = if me == Side::South { 1 } else { -1 };
        Some(BookMove {
            value: sign * (now + entry.gain),
            best: entry.best.clone(),
            played: entry.played,
        })
    }

    /// The book as text, one entry a line in a stable order, under
    /// `header` (each of its lines becomes a comment).
    pub fn to_text(&self, header: &str) -> String {
        let mut text = String::new();
        for line in header.lines() {
            let _ = writeln!(text, "# {line}");
        }
        let mut entries: Vec<_> = self.entries.iter().collect();
        // Most stones first: the start, then on into the game.
        entries.sort_by_key(|(pits, _)| {
            let stones: u32 = pits.iter().map(|&s| u32::from(s)).sum();
            (std::cmp::Reverse(stones), **pits)
        });
        let counts = |half: &[u8]| half.iter().map(u8::to_string).collect::<Vec<_>>().join(",");
        for (pits, entry) in entries {
            let best: Vec<String> = entry.best.iter().map(Pit::to_string).collect();
            let _ = writeln!(
                text,
                "{} {} {:+} {} {}",
                counts(&pits[..PITS]),
                counts(&pits[PITS..]),
                entry.gain,
                best.join(","),
                entry.played
            );
        }
        text
    }
}

/// The pits of `position`, the mover's first, if a book serves its board:
/// six pits a side and the default rules.
fn key(position: &Kalah) -> Option<[u8; 12]> {
    let options = position.options();
    if usize::from(options.pits()) != PITS
        || options.empty_capture()
        || options.end() != KalahEnd::Immediate
        || position.is_over()
    {
        return None;
    }
    let me = position.turn();
    let mut pits = [0u8; 12];
    pits[..PITS].copy_from_slice(&position.row(me));
    pits[PITS..].copy_from_slice(&position.row(me.opponent()));
    Some(pits)
}

#[cfg(test)]
mod tests {
    use mancala_rules::KalahOptions;

    use super::*;

    #[test]
    fn a_book_reads_back_what_it_wrote_and_answers_from_the_mover_s_side() {
        let start = Kalah::default();
        let after = start.play_unchecked(Pit::new(1).unwrap());
        let mut book = Book::default();
        let entry = |gain, best: &[u8], played| BookEntry {
            gain,
            best: best.iter().map(|&n| Pit::new(n).unwrap()).collect(),
            played: Pit::new(played).unwrap(),
        };
        book.insert(&start, entry(8, &[3], 3));
        book.insert(&after, entry(-4, &[2, 5], 5));
        let again = Book::parse(&book.to_text("a test\nof two lines")).unwrap();
        assert_eq!(again, book);
        // North to move after pit 1: a gain of -4 for North is +4 for South.
        let known = again.lookup(&after).unwrap();
        assert_eq!(known.value, 4);
        assert_eq!(known.played, Pit::new(5).unwrap());
        // The same pits on a five-stone board: the same gain.
        let five = Kalah::new(KalahOptions::new(6, 5).unwrap());
        assert_eq!(again.entry(&five), None);
        let other_rules = Kalah::new(KalahOptions::default().with_empty_capture(true));
        assert_eq!(again.entry(&other_rules), None);
    }

    #[test]
    fn lines_that_do_not_read_are_named() {
        for bad in [
            "4,4,4,4,4,4 4,4,4,4,4,4 +8 3",
            "4,4,4,4,4 4,4,4,4,4,4 +8 3 3",
            "4,4,4,4,4,4 4,4,4,4,4,4 eight 3 3",
            "4,4,4,4,4,4 4,4,4,4,4,4 +8 7 7",
            "4,4,4,4,4,4 4,4,4,4,4,4 +8 3 4",
        ] {
            let error = Book::parse(&format!("# header\n{bad}\n")).unwrap_err();
            assert_eq!(error.line, 2, "{bad}");
        }
    }
}
