//! The exact Kalah solver: MTD(f) over the final stone difference, with a
//! transposition table keyed on the pits alone, futility bounds and move
//! ordering that tries extra turns first (after "Solving Kalah", Irving,
//! Donkers and Uiterwijk, 2000).
//!
//! A position's stores never change how it plays out, only the final score,
//! so the solver works with the *gain*: the final store difference minus the
//! current one, for the player to move. Positions that differ only in their
//! stores share one table entry, and the gain is bounded by the stones left
//! in the pits, which cuts off hopeless lines at once.

use std::sync::Arc;

use mancala_rules::{Game, Kalah, Pit, Position, Side};
use rand_xoshiro::Xoshiro256PlusPlus;
use rand_xoshiro::rand_core::Rng;

use crate::budget::Budget;
use crate::endgame::Endgame;
use crate::eval::{Evaluate, SCALE};
use crate::player::Decision;

/// A solved position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Solution {
    /// South's final store minus North's under perfect play.
    pub value: i32,
    /// Every move of the player to move that achieves `value`, lowest pit
    /// first. Empty when the game is over.
    pub best: Vec<Pit>,
    /// Nodes visited.
    pub nodes: u64,
}

/// Where a solve stands: `lower <= value <= upper` for the player to move's
/// gain, after `nodes` nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    pub lower: i32,
    pub upper: i32,
    pub nodes: u64,
}

#[derive(Clone, Copy, Debug)]
struct Slot {
    /// The pits key, split for 8-byte alignment (24-byte slots).
    key: [u64; 2],
    lower: i8,
    upper: i8,
    /// Best move's pit, 0 when unknown.
    best: u8,
    /// log2 of the nodes spent below this position: what to keep when two
    /// positions compete for a bucket.
    work: u8,
    used: bool,
}

impl Slot {
    /// Unpacks a stored slot: the key, then bounds, move, work and the used
    /// flag in the third word.
    #[inline]
    fn load(raw: [u64; 3]) -> Slot {
        let data = raw[2];
        Slot {
            key: [raw[0], raw[1]],
            lower: data as u8 as i8,
            upper: (data >> 8) as u8 as i8,
            best: (data >> 16) as u8,
            work: (data >> 24) as u8,
            used: data >> 32 != 0,
        }
    }

    #[inline]
    fn save(&self) -> [u64; 3] {
        let data = u64::from(self.lower as u8)
            | u64::from(self.upper as u8) << 8
            | u64::from(self.best) << 16
            | u64::from(self.work) << 24
            | u64::from(self.used) << 32;
        [self.key[0], self.key[1], data]
    }
}

/// Two-slot buckets: a new position replaces the slot that cost less work.
/// Slots are stored as plain words so that the table starts as zeroed
/// memory, which the system hands out lazily instead of being written.
#[derive(Clone, Debug)]
struct Table {
    slots: Vec<[u64; 3]>,
    buckets: usize,
}

impl Table {
    fn new(bytes: usize) -> Table {
        // The largest power of two of buckets that fits the bytes.
        let wanted = (bytes / std::mem::size_of::<[u64; 3]>() / 2).max(1);
        let buckets = 1 << (usize::BITS - 1 - wanted.leading_zeros());
        Table {
            slots: vec![[0; 3]; buckets * 2],
            buckets,
        }
    }

    #[inline]
    fn bucket(&self, key: u128) -> usize {
        let mixed = (key as u64 ^ (key >> 64) as u64 ^ (key >> 53) as u64)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15);
        ((mixed >> 20) as usize & (self.buckets - 1)) * 2
    }

    #[inline]
    fn probe(&self, key: u128) -> Option<Slot> {
        let split = [key as u64, (key >> 64) as u64];
        let at = self.bucket(key);
        self.slots[at..at + 2]
            .iter()
            .map(|&raw| Slot::load(raw))
            .find(|slot| slot.used && slot.key == split)
    }

    #[inline]
    fn store(&mut self, key: u128, lower: i32, upper: i32, best: u8, work: u8) {
        let split = [key as u64, (key >> 64) as u64];
        let at = self.bucket(key);
        let bucket = [Slot::load(self.slots[at]), Slot::load(self.slots[at + 1])];
        let index = if let Some(same) = bucket
            .iter()
            .position(|slot| slot.used && slot.key == split)
        {
            same
        } else if !bucket[0].used || bucket[0].work <= bucket[1].work {
            0
        } else {
            1
        };
        let mut slot = bucket[index];
        if slot.used && slot.key == split {
            // Narrow what is known; both bounds stay true.
            slot.lower = slot.lower.max(lower as i8);
            slot.upper = slot.upper.min(upper as i8);
            slot.work = slot.work.max(work);
            if best != 0 {
                slot.best = best;
            }
        } else {
            slot = Slot {
                key: split,
                lower: lower as i8,
                upper: upper as i8,
                best,
                work,
                used: true,
            };
        }
        self.slots[at + index] = slot.save();
    }
}

/// An exact Kalah solver. Keep one for a whole game: its table makes each
/// later position cheap.
#[derive(Clone, Debug)]
pub struct Solver {
    table: Table,
    /// Shared: one table serves every solver of a process.
    endgame: Option<Arc<Endgame>>,
    nodes: u64,
    aborted: bool,
}

impl Solver {
    /// Table memory of the `mancala solve` command unless told otherwise.
    pub const DEFAULT_TABLE_BYTES: usize = 1 << 30;

    /// A solver whose table takes about `table_bytes` bytes.
    pub fn new(table_bytes: usize) -> Solver {
        Solver {
            table: Table::new(table_bytes),
            endgame: None,
            nodes: 0,
            aborted: false,
        }
    }

    /// Bytes held by the transposition table.
    pub fn table_bytes(&self) -> usize {
        self.table.slots.len() * std::mem::size_of::<[u64; 3]>()
    }

    /// This solver, answering positions with few stones left from an
    /// endgame table instead of searching them.
    #[must_use]
    pub fn with_endgame(mut self, endgame: impl Into<Arc<Endgame>>) -> Solver {
        self.endgame = Some(endgame.into());
        self
    }

    /// Solves `position`, or returns `None` when the budget runs out first.
    pub fn solve(&mut self, position: &Kalah, budget: &Budget) -> Option<Solution> {
        self.solve_with_progress(position, budget, |_| {})
    }

    /// [`Solver::solve`], reporting after each narrowing of the bounds and
    /// every 2^24 nodes.
    pub fn solve_with_progress(
        &mut self,
        position: &Kalah,
        budget: &Budget,
        mut progress: impl FnMut(Progress),
    ) -> Option<Solution> {
        self.nodes = 0;
        self.aborted = false;
        let south_view = |gain: i32| {
            let score = position.score();
            let me = position.turn();
            let sign = if me == Side::South { 1 } else { -1 };
            sign * (i32::from(score[me.index()]) - i32::from(score[me.opponent().index()]) + gain)
        };
        if position.is_over() {
            return Some(Solution {
                value: south_view(0),
                best: vec![],
                nodes: 0,
            });
        }
        let gain = self.gain(position, budget, &mut progress)?;
        let mut best = Vec::new();
        for pit in position.legal_moves() {
            // A move is best when its gain reaches the position's: one null
            // window each, mostly answered by the table.
            let child = position.play_unchecked(pit);
            let (step, same) = step_gain(position, &child);
            let needed = gain - step;
            let reaches = if same {
                self.search(&child, needed - 1, needed, budget, &mut progress) >= needed
            } else {
                -self.search(&child, -needed, -needed + 1, budget, &mut progress) >= needed
            };
            if self.aborted {
                return None;
            }
            if reaches {
                best.push(pit);
            }
        }
        Some(Solution {
            value: south_view(gain),
            best,
            nodes: self.nodes,
        })
    }

    /// The exact gain of the player to move, by MTD(f): null-window searches
    /// that close in on the value from a first guess.
    fn gain(
        &mut self,
        position: &Kalah,
        budget: &Budget,
        progress: &mut impl FnMut(Progress),
    ) -> Option<i32> {
        let stones = i32::from(position.stones_in_pits());
        let (mut lower, mut upper) = (-stones, stones);
        let mut guess = (position.evaluate() - crate::eval::final_value(position)) / SCALE;
        guess = guess.clamp(lower, upper);
        while lower < upper {
            let beta = if guess == lower { guess + 1 } else { guess };
            guess = self.search(position, beta - 1, beta, budget, progress);
            if self.aborted {
                return None;
            }
            if guess < beta {
                upper = guess;
            } else {
                lower = guess;
            }
            progress(Progress {
                lower,
                upper,
                nodes: self.nodes,
            });
        }
        Some(lower)
    }

    /// Fail-soft alpha-beta on the gain of the player to move.
    fn search(
        &mut self,
        position: &Kalah,
        mut alpha: i32,
        beta: i32,
        budget: &Budget,
        progress: &mut impl FnMut(Progress),
    ) -> i32 {
        self.nodes += 1;
        if self.nodes.is_multiple_of(Budget::CHECK_EVERY) {
            if budget.exhausted(self.nodes) {
                self.aborted = true;
            }
            if self.nodes.is_multiple_of(1 << 24) {
                progress(Progress {
                    lower: alpha,
                    upper: beta,
                    nodes: self.nodes,
                });
            }
        }
        if self.aborted {
            return 0;
        }
        if position.is_over() {
            return 0;
        }
        let stones = i32::from(position.stones_in_pits());
        // Futility: the gain cannot leave [-stones, stones].
        if alpha >= stones {
            return stones;
        }
        if beta <= -stones {
            return -stones;
        }
        if let Some(gain) = self.endgame.as_ref().and_then(|table| table.gain(position)) {
            return gain;
        }
        // Positions just above the endgame table are many and cheap to
        // search again: keeping them out of the table keeps it for the
        // expensive ones.
        let cached = true;
        let key = table_key(position);
        let mut hinted = 0;
        let (mut lower_known, mut upper_known) = (-stones, stones);
        if let Some(slot) = self.table.probe(key).filter(|_| cached) {
            lower_known = i32::from(slot.lower);
            upper_known = i32::from(slot.upper);
            if lower_known >= beta {
                return lower_known;
            }
            if upper_known <= alpha {
                return upper_known;
            }
            if lower_known == upper_known {
                return lower_known;
            }
            hinted = slot.best;
        }
        alpha = alpha.max(lower_known);
        let beta = beta.min(upper_known);
        let original_alpha = alpha;
        let nodes_before = self.nodes;
        let me = position.turn();

        // Children whose value is known exactly (the game ends, or the
        // endgame table has them) are scored at once: one may already cut.
        let mut best = (i32::MIN, 0u8);
        let mut open = [(0i32, 0u8, 0i32, false, *position); 6];
        let mut count = 0;
        for pit in position.legal_moves() {
            let child = position.play_unchecked(pit);
            let (step, same) = step_gain(position, &child);
            let known = child.is_over().then_some(0);
            if let Some(rest) = known {
                let value = if same { step + rest } else { step - rest };
                if value > best.0 {
                    best = (value, pit.get());
                }
                continue;
            }
            // The table's move, then extra turns (the nearest to the store
            // first), then by stones gained.
            let mut order = step * 16 + i32::from(pit.get());
            if same {
                order += 1 << 12;
            }
            if pit.get() == hinted {
                order += 1 << 16;
            }
            open[count] = (order, pit.get(), step, same, child);
            count += 1;
        }
        alpha = alpha.max(best.0);
        if alpha < beta {
            let open = &mut open[..count];
            open.sort_unstable_by_key(|child| std::cmp::Reverse(child.0));
            for (_, pit, step, same, child) in open.iter() {
                let (step, same) = (*step, *same);
                let value = if same {
                    step + self.search(child, alpha - step, beta - step, budget, progress)
                } else {
                    step - self.search(child, step - beta, step - alpha, budget, progress)
                };
                if self.aborted {
                    return 0;
                }
                if value > best.0 {
                    best = (value, *pit);
                }
                alpha = alpha.max(value);
                if alpha >= beta {
                    break;
                }
            }
        }
        debug_assert_eq!(position.turn(), me);
        let work = (64 - (self.nodes - nodes_before).leading_zeros()) as u8;
        let (lower, upper) = if best.0 <= original_alpha {
            (-stones, best.0)
        } else if best.0 >= beta {
            (best.0, stones)
        } else {
            (best.0, best.0)
        };
        if cached {
            self.table.store(key, lower, upper, best.1, work);
        }
        best.0
    }
}

/// A position's table key: its pits seen from the player to move. The
/// rules treat both players alike, so a position and its mirror image with
/// the other player to move have the same gain and share an entry.
#[inline]
fn table_key(position: &Kalah) -> u128 {
    position.pits_key() & !(0xff << 112)
}

/// What a move adds to the mover's store difference, and whether the mover
/// moves again.
#[inline]
fn step_gain(position: &Kalah, child: &Kalah) -> (i32, bool) {
    let me = position.turn();
    let difference = |p: &Kalah| i32::from(p.store(me)) - i32::from(p.store(me.opponent()));
    (difference(child) - difference(position), child.turn() == me)
}

/// The lazily built solver of a `Perfect` AI: only Kalah ever allocates it.
#[derive(Debug, Default)]
pub struct SolverCache {
    solver: Option<Solver>,
    endgame: Option<Arc<Endgame>>,
}

impl SolverCache {
    /// Table memory of a playing `Perfect` AI.
    pub const TABLE_BYTES: usize = 24 << 20;

    /// Bytes held: nothing until the first proof is tried.
    pub fn bytes(&self) -> usize {
        self.solver.as_ref().map_or(0, Solver::table_bytes)
    }

    /// Answers positions with few stones from `endgame` (shared with the
    /// process's other AIs), from the next proof on.
    pub fn set_endgame(&mut self, endgame: Arc<Endgame>) {
        if let Some(solver) = &mut self.solver {
            solver.endgame = Some(endgame.clone());
        }
        self.endgame = Some(endgame);
    }

    /// Whether proofs use an endgame table.
    pub fn has_endgame(&self) -> bool {
        self.endgame.is_some()
    }

    pub(crate) fn solver(&mut self) -> &mut Solver {
        let endgame = &self.endgame;
        self.solver.get_or_insert_with(|| {
            let solver = Solver::new(SolverCache::TABLE_BYTES);
            match endgame {
                Some(table) => solver.with_endgame(table.clone()),
                None => solver,
            }
        })
    }
}

/// A perfect move for a Kalah game, chosen at random among the best, or
/// `None` when the budget ran out before the proof.
pub(crate) fn perfect_kalah_move(
    game: &Game<Kalah>,
    cache: &mut SolverCache,
    budget: &Budget,
    rng: &mut Xoshiro256PlusPlus,
) -> Option<Decision> {
    let position = game.position();
    let solution = cache.solver().solve(position, budget)?;
    if solution.best.is_empty() {
        return None;
    }
    let pit = solution.best[(rng.next_u64() % solution.best.len() as u64) as usize];
    let sign = if position.turn() == Side::South {
        1
    } else {
        -1
    };
    Some(Decision {
        pit,
        value: sign * solution.value * SCALE,
        depth: 0,
        nodes: solution.nodes,
        exact: true,
    })
}
