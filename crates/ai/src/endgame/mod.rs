//! Kalah endgame tables: the exact gain of every position with at most a
//! few stones left in the pits, for the player to move.
//!
//! Stores never change how a position plays out, so one entry serves every
//! position with the same pits and player to move; and the rules are the
//! same for both players, so the table is indexed by the pits seen from the
//! player to move (theirs first). A configuration of `s` stones in `p` pits
//! is ranked by the combinatorial number system (stars and bars), so the
//! table is dense: `C(k + p, p)` one-byte entries for at most `k` stones.

use mancala_rules::{Kalah, KalahOptions, Position};

use crate::rank::Ranks;
use crate::solver::{Board, Rules};

mod file;

pub use file::{EndgameFileError, HEADER_BYTES, PendingEndgame};

/// Exact gains for positions with at most `max_stones` stones in the pits.
#[derive(Clone, Debug)]
pub struct Endgame {
    options: KalahOptions,
    max_stones: u8,
    /// A configuration's index is its rank.
    ranks: Ranks,
    /// Gains, `UNKNOWN` while building.
    values: Vec<i8>,
}

const UNKNOWN: i8 = i8::MIN;

impl Endgame {
    /// Entries of a table for boards of `pits` pits a side and at most
    /// `max_stones` stones: its size in bytes.
    pub fn entries(pits: u8, max_stones: u8) -> u64 {
        let places = 2 * u64::from(pits);
        // Configurations of 0..=k stones in p places: C(k + p, p).
        let mut total = 1u64;
        for i in 1..=places {
            total = total * (u64::from(max_stones) + i) / i;
        }
        total
    }

    /// Builds the table for `options` and positions with at most
    /// `max_stones` stones in the pits (capped at the board's stones).
    pub fn build(options: KalahOptions, max_stones: u8) -> Endgame {
        let board_stones = 2 * options.pits() * options.seeds();
        let max_stones = max_stones.min(board_stones);
        let ranks = Ranks::new(options.pits());
        let total = ranks.count(max_stones);
        let mut table = Endgame {
            options,
            max_stones,
            ranks,
            values: vec![UNKNOWN; total as usize],
        };
        match options.pits() {
            1 => Builder::<1>::new(&mut table).fill(),
            2 => Builder::<2>::new(&mut table).fill(),
            3 => Builder::<3>::new(&mut table).fill(),
            4 => Builder::<4>::new(&mut table).fill(),
            5 => Builder::<5>::new(&mut table).fill(),
            _ => Builder::<6>::new(&mut table).fill(),
        }
        table
    }

    /// Whether the table answers positions of boards with `options`. A
    /// gain depends on the pits alone, never on the stores, so one table
    /// serves a board whatever its stones a pit at the start.
    pub fn covers(&self, options: KalahOptions) -> bool {
        let rules = |o: KalahOptions| (o.pits(), o.empty_capture(), o.end());
        rules(options) == rules(self.options)
    }

    /// The most stones in the pits that the table covers.
    pub fn max_stones(&self) -> u8 {
        self.max_stones
    }

    /// Bytes of the values.
    pub fn bytes(&self) -> usize {
        self.values.len()
    }

    /// The gains, indexed by rank ([`crate::rank`]).
    pub(crate) fn values(&self) -> &[i8] {
        &self.values
    }

    /// The exact gain of the player to move, if the position is covered:
    /// the final store difference minus the current one.
    pub fn gain(&self, position: &Kalah) -> Option<i32> {
        if !self.covers(position.options())
            || position.is_over()
            || position.stones_in_pits() > self.max_stones
        {
            return None;
        }
        let value = self.values[self.ranks.rank_position(position) as usize];
        (value != UNKNOWN).then_some(i32::from(value))
    }

    /// Checks one configuration in every `every` (all of them with 1), in
    /// rank order, against its moves: its gain must be the best of what
    /// each move stores plus (or minus, when the turn passes) the gain of
    /// the configuration it leads to. A table that passes with 1 is right,
    /// by induction from the empty board; a file read back passes its
    /// checksum already, so this checks the build. Returns the number
    /// checked.
    pub fn audit(&self, every: u64) -> Result<u64, Inconsistency> {
        match self.options.pits() {
            1 => self.audit_board::<1>(every),
            2 => self.audit_board::<2>(every),
            3 => self.audit_board::<3>(every),
            4 => self.audit_board::<4>(every),
            5 => self.audit_board::<5>(every),
            _ => self.audit_board::<6>(every),
        }
    }

    fn audit_board<const P: usize>(&self, every: u64) -> Result<u64, Inconsistency> {
        let rules = Rules::of(self.options);
        let every = every.max(1);
        let mut checked = 0;
        let mut failure = None;
        each_configuration::<P>(self.max_stones, |board, index| {
            if failure.is_some() || !(index as u64).is_multiple_of(every) || board.is_over(rules) {
                return;
            }
            checked += 1;
            let mut best = i32::MIN;
            let mut moves = board.moves();
            while moves != 0 {
                let pit = moves.trailing_zeros() as usize;
                moves &= moves - 1;
                let played = board.play(pit, rules);
                let rest = if played.over {
                    0
                } else {
                    i32::from(self.values[self.ranks.rank(played.board) as usize])
                };
                best = best.max(if played.same {
                    played.step + rest
                } else {
                    played.step - rest
                });
            }
            let stored = i32::from(self.values[index]);
            if stored != best {
                failure = Some(Inconsistency {
                    rank: index as u64,
                    stored,
                    computed: best,
                });
            }
        });
        failure.map_or(Ok(checked), Err)
    }
}

/// A gain in a table that its moves do not give.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the configuration of rank {rank} holds {stored}, but its moves give {computed}")]
pub struct Inconsistency {
    pub rank: u64,
    pub stored: i32,
    pub computed: i32,
}

/// Calls `visit` with every configuration of at most `max_stones` stones on
/// a board of `P` pits a side and its rank, in rank order: fewest stones
/// first, then the last place counting down slowest.
fn each_configuration<const P: usize>(max_stones: u8, mut visit: impl FnMut(Board<P>, usize)) {
    fn layer<const P: usize>(
        places: &mut [u8; 12],
        place: usize,
        left: u8,
        next: &mut usize,
        visit: &mut impl FnMut(Board<P>, usize),
    ) {
        if place == 0 {
            places[0] = left;
            let index = *next;
            *next += 1;
            visit(Board::<P>::from_places(&places[..2 * P]), index);
            return;
        }
        for here in (0..=left).rev() {
            places[place] = here;
            layer(places, place - 1, left - here, next, visit);
        }
    }
    let mut places = [0u8; 12];
    let mut next = 0;
    for stones in 0..=max_stones {
        layer(&mut places, 2 * P - 1, stones, &mut next, &mut visit);
    }
}

/// Fills a table of boards of `P` pits a side.
struct Builder<'a, const P: usize> {
    ranks: &'a Ranks,
    rules: Rules,
    values: &'a mut [i8],
    max_stones: u8,
}

impl<'a, const P: usize> Builder<'a, P> {
    fn new(table: &'a mut Endgame) -> Builder<'a, P> {
        Builder {
            ranks: &table.ranks,
            rules: Rules::of(table.options),
            values: &mut table.values,
            max_stones: table.max_stones,
        }
    }

    /// Solves every configuration, fewest stones first, each stone count in
    /// the order of the ranks, so that the table is written front to back
    /// and a configuration's own entry is the next byte, not a miss to
    /// memory.
    fn fill(&mut self) {
        let max_stones = self.max_stones;
        each_configuration::<P>(max_stones, |board, index| {
            if self.values[index] == UNKNOWN && !board.is_over(self.rules) {
                debug_assert_eq!(self.ranks.rank(board) as usize, index);
                self.solve_at(board, index);
            }
        });
    }

    /// The gain of `board` (not over, rank `index`), solving the boards it
    /// leads to first.
    ///
    /// The table is far larger than the caches, so a child's value is a
    /// miss to memory: every child's rank is worked out first and their
    /// values read together, letting the processor wait for all the misses
    /// at once rather than one after another.
    fn solve_at(&mut self, board: Board<P>, index: usize) -> i32 {
        const OVER: usize = usize::MAX;
        let mut children = [(board, OVER, 0i32, false); 6];
        let mut count = 0;
        let mut moves = board.moves();
        while moves != 0 {
            let pit = moves.trailing_zeros() as usize;
            moves &= moves - 1;
            let played = board.play(pit, self.rules);
            let at = if played.over {
                OVER
            } else {
                self.ranks.rank(played.board) as usize
            };
            children[count] = (played.board, at, played.step, played.same);
            count += 1;
        }
        let mut known = [0i8; 6];
        for (value, &(_, at, _, _)) in known.iter_mut().zip(&children[..count]) {
            *value = if at == OVER { 0 } else { self.values[at] };
        }
        let mut best = i32::MIN;
        for (&(child, at, step, same), value) in children[..count].iter().zip(known) {
            // Kalah cannot cycle, so this recursion ends: a child keeps the
            // stone count only when the turn passes and no stone is stored.
            let rest = if value == UNKNOWN {
                self.solve_at(child, at)
            } else {
                i32::from(value)
            };
            best = best.max(if same { step + rest } else { step - rest });
        }
        // |gain| <= stones in the pits <= 72, so it fits a byte.
        self.values[index] = best as i8;
        best
    }
}

#[cfg(test)]
mod tests {
    use mancala_rules::Side;

    use super::*;
    use crate::{Budget, Solver};

    #[test]
    fn the_table_agrees_with_the_solver() {
        for options in [
            KalahOptions::new(3, 3).unwrap(),
            KalahOptions::new(4, 2).unwrap().with_empty_capture(true),
            KalahOptions::new(3, 2)
                .unwrap()
                .with_end(mancala_rules::KalahEnd::OnTurn),
        ] {
            let table = Endgame::build(options, 8);
            let mut solver = Solver::new(1 << 20);
            // Every position reachable from the start with few stones left.
            let mut stack = vec![Kalah::new(options)];
            let mut seen = std::collections::HashSet::new();
            let mut checked = 0;
            while let Some(position) = stack.pop() {
                if !seen.insert(position) {
                    continue;
                }
                stack.extend(
                    position
                        .legal_moves()
                        .map(|pit| position.play_unchecked(pit)),
                );
                if position.is_over() {
                    continue;
                }
                if let Some(gain) = table.gain(&position) {
                    let value = solver.solve(&position, &Budget::unlimited()).unwrap().value;
                    let me = position.turn();
                    let sign = if me == Side::South { 1 } else { -1 };
                    let now =
                        i32::from(position.store(me)) - i32::from(position.store(me.opponent()));
                    assert_eq!(sign * value, now + gain, "{position:?}");
                    checked += 1;
                }
            }
            assert!(checked > 100, "{options:?}: only {checked}");
        }
    }

    #[test]
    fn one_table_serves_a_board_whatever_its_stones_a_pit() {
        let table = Endgame::build(KalahOptions::new(3, 4).unwrap(), 8);
        let other = KalahOptions::new(3, 2).unwrap();
        assert!(table.covers(other));
        assert!(!table.covers(other.with_empty_capture(true)));
        let mut solver = Solver::new(1 << 20);
        let mut stack = vec![Kalah::new(other)];
        let mut checked = 0;
        while let Some(position) = stack.pop() {
            if position.is_over() {
                continue;
            }
            stack.extend(
                position
                    .legal_moves()
                    .map(|pit| position.play_unchecked(pit)),
            );
            let Some(gain) = table.gain(&position) else {
                continue;
            };
            let value = solver.solve(&position, &Budget::unlimited()).unwrap().value;
            let me = position.turn();
            let sign = if me == Side::South { 1 } else { -1 };
            let now = i32::from(position.store(me)) - i32::from(position.store(me.opponent()));
            assert_eq!(sign * value, now + gain, "{position:?}");
            checked += 1;
        }
        assert!(checked > 100, "only {checked}");
    }

    #[test]
    fn a_built_table_passes_its_audit_and_a_wrong_gain_does_not() {
        let options = KalahOptions::new(4, 3).unwrap();
        let mut table = Endgame::build(options, 10);
        let entries = table.bytes() as u64;
        // Every configuration but those where a side is empty (the game is
        // over): C(10 + 4, 4) of them for each side, the empty board twice.
        let over = 2 * Endgame::entries(2, 10) - 1;
        assert_eq!(table.audit(1), Ok(entries - over));
        assert_eq!(
            table.audit(7).map(|checked| checked > entries / 8),
            Ok(true)
        );
        // A wrong entry is caught by a full audit.
        let rank = table
            .ranks
            .rank(Board::<4>::from_places(&[1, 2, 0, 1, 1, 0, 2, 0]));
        table.values[rank as usize] += 1;
        let failure = table.audit(1).unwrap_err();
        assert_eq!(failure.rank, rank);
        assert_eq!(failure.stored, failure.computed + 1);
    }

    #[test]
    fn sizes_follow_stars_and_bars() {
        assert_eq!(Endgame::entries(6, 0), 1);
        assert_eq!(Endgame::entries(6, 1), 13);
        assert_eq!(Endgame::entries(6, 15), 17_383_860);
        let table = Endgame::build(KalahOptions::new(2, 2).unwrap(), 20);
        assert_eq!(table.max_stones(), 8, "capped at the board's stones");
        assert_eq!(table.bytes() as u64, Endgame::entries(2, 8));
    }
}
