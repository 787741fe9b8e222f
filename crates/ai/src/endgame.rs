//! Kalah endgame tables: the exact gain of every position with at most a
//! few stones left in the pits, for the player to move.
//!
//! Stores never change how a position plays out, so one entry serves every
//! position with the same pits and player to move; and the rules are the
//! same for both players, so the table is indexed by the pits seen from the
//! player to move (theirs first). A configuration of `s` stones in `p` pits
//! is ranked by the combinatorial number system (stars and bars), so the
//! table is dense: `C(k + p, p)` one-byte entries for at most `k` stones.

use mancala_rules::{Kalah, KalahOptions, Position, Side};

/// Exact gains for positions with at most `max_stones` stones in the pits.
#[derive(Clone, Debug)]
pub struct Endgame {
    options: KalahOptions,
    max_stones: u8,
    /// `binomial[n][k]` for the ranks, rows of fixed width so that a rank
    /// costs no pointer chasing.
    binomial: Vec<[u64; 13]>,
    /// Index of the first configuration with `s` stones.
    offsets: Vec<u64>,
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
        let pits = usize::from(options.pits());
        let places = 2 * pits;
        let board_stones = 2 * options.pits() * options.seeds();
        let max_stones = max_stones.min(board_stones);
        let top = usize::from(max_stones) + places + 1;
        let mut binomial = vec![[0u64; 13]; top + 1];
        for n in 0..=top {
            binomial[n][0] = 1;
            for k in 1..=places.min(n) {
                binomial[n][k] =
                    binomial[n - 1][k - 1] + if k < n { binomial[n - 1][k] } else { 0 };
            }
        }
        let mut offsets = Vec::with_capacity(usize::from(max_stones) + 2);
        let mut total = 0u64;
        for stones in 0..=usize::from(max_stones) {
            offsets.push(total);
            total += binomial[stones + places - 1][places - 1];
        }
        offsets.push(total);
        let mut table = Endgame {
            options,
            max_stones,
            binomial,
            offsets,
            values: vec![UNKNOWN; total as usize],
        };
        let mut counts = vec![0u8; places];
        let mut next = 0;
        for stones in 0..=max_stones {
            table.fill_layer(&mut counts, places - 1, stones, board_stones, &mut next);
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

    /// The exact gain of the player to move, if the position is covered:
    /// the final store difference minus the current one.
    #[inline]
    pub fn gain(&self, position: &Kalah) -> Option<i32> {
        if !self.covers(position.options()) || position.stones_in_pits() > self.max_stones {
            return None;
        }
        let value = self.values[self.index_of(position)];
        (value != UNKNOWN).then_some(i32::from(value))
    }

    /// Visits every configuration of `left` stones in the places up to
    /// `place` and solves it, in the order of their indices (the last place
    /// counts down slowest), so that the table is written front to back and
    /// each configuration's own entry is `next`, not a miss to memory.
    fn fill_layer(
        &mut self,
        counts: &mut [u8],
        place: usize,
        left: u8,
        board_stones: u8,
        next: &mut usize,
    ) {
        if place == 0 {
            counts[0] = left;
            let index = *next;
            *next += 1;
            if self.values[index] != UNKNOWN {
                return;
            }
            if let Some(position) = self.position(counts, board_stones)
                && !position.is_over()
            {
                debug_assert_eq!(self.index_of(&position), index);
                self.solve_at(&position, index);
            }
            return;
        }
        for here in (0..=left).rev() {
            counts[place] = here;
            self.fill_layer(counts, place - 1, left - here, board_stones, next);
        }
    }

    /// The position with these pits (the mover's first), South to move.
    fn position(&self, counts: &[u8], board_stones: u8) -> Option<Kalah> {
        let pits = usize::from(self.options.pits());
        let in_pits: u8 = counts.iter().sum();
        let mut rows = [[0u8; 6]; 2];
        rows[0][..pits].copy_from_slice(&counts[..pits]);
        rows[1][..pits].copy_from_slice(&counts[pits..]);
        Kalah::from_parts(self.options, rows, [board_stones - in_pits, 0], Side::South).ok()
    }

    /// The gain of `position`, solving the positions it leads to first.
    ///
    /// The table is far larger than the caches, so a child's value is a
    /// miss to memory: every child's index is worked out first and their
    /// values read together, letting the processor wait for all the misses
    /// at once rather than one after another.
    fn solve(&mut self, position: &Kalah) -> i32 {
        if position.is_over() {
            return 0;
        }
        let index = self.index_of(position);
        if self.values[index] != UNKNOWN {
            return i32::from(self.values[index]);
        }
        self.solve_at(position, index)
    }

    /// [`Endgame::solve`] for a position not over and not yet solved, whose
    /// index is `index`.
    fn solve_at(&mut self, position: &Kalah, index: usize) -> i32 {
        let me = position.turn();
        let difference = |p: &Kalah| i32::from(p.store(me)) - i32::from(p.store(me.opponent()));
        let before = difference(position);
        const OVER: usize = usize::MAX;
        let mut children = [(*position, OVER, 0i32); 6];
        let mut count = 0;
        for pit in position.legal_moves() {
            let child = position.play_unchecked(pit);
            let at = if child.is_over() {
                OVER
            } else {
                self.index_of(&child)
            };
            children[count] = (child, at, difference(&child) - before);
            count += 1;
        }
        let mut known = [0i8; 6];
        for (value, (_, at, _)) in known.iter_mut().zip(&children[..count]) {
            *value = if *at == OVER { 0 } else { self.values[*at] };
        }
        let mut best = i32::MIN;
        for ((child, _, step), value) in children[..count].iter().zip(known) {
            // Kalah cannot cycle, so this recursion ends: a child keeps the
            // stone count only when the turn passes and no stone is stored.
            let rest = if value == UNKNOWN {
                self.solve(child)
            } else {
                i32::from(value)
            };
            let value = if child.turn() == me {
                step + rest
            } else {
                step - rest
            };
            best = best.max(value);
        }
        // |gain| <= stones in the pits <= 72, so it fits a byte.
        self.values[index] = best as i8;
        best
    }

    /// The dense index of a position's pits, seen from the player to move.
    #[inline]
    fn index_of(&self, position: &Kalah) -> usize {
        let pits = usize::from(self.options.pits());
        let key = position.pits_key().to_le_bytes();
        // The key is mover-relative: the mover's pits, their store (zeroed),
        // the opponent's pits.
        let mut rank = 0u64;
        let mut bar = 0usize;
        let mut stones = 0usize;
        for place in 0..2 * pits - 1 {
            let byte = if place < pits {
                key[place]
            } else {
                key[place + 1]
            };
            bar += usize::from(byte);
            stones += usize::from(byte);
            // Bar `place` sits after the stones so far and the bars before it.
            rank += self.binomial[bar + place][place + 1];
        }
        let last = usize::from(key[2 * pits]);
        stones += last;
        (self.offsets[stones] + rank) as usize
    }
}

#[cfg(test)]
mod tests {
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
    fn sizes_follow_stars_and_bars() {
        assert_eq!(Endgame::entries(6, 0), 1);
        assert_eq!(Endgame::entries(6, 1), 13);
        assert_eq!(Endgame::entries(6, 15), 17_383_860);
        let table = Endgame::build(KalahOptions::new(2, 2).unwrap(), 20);
        assert_eq!(table.max_stones(), 8, "capped at the board's stones");
        assert_eq!(table.bytes() as u64, Endgame::entries(2, 8));
    }
}
