//! Iterative-deepening principal variation search (negamax alpha-beta) with
//! a transposition table, move ordering and exact play once the game tree's
//! end is in reach.

use mancala_rules::{Game, Pit};
use rand_xoshiro::Xoshiro256PlusPlus;
use rand_xoshiro::rand_core::Rng;

use crate::budget::Budget;
use crate::eval::{Evaluate, final_value};
use crate::table::{Bound, Table};

/// Larger than any value: 72 stones at most, times the scale.
const INFINITY: i32 = 1 << 20;

/// What a search found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SearchResult {
    /// The move to play.
    pub best: Pit,
    /// Its value for the player to move, in 1/[`crate::SCALE`] stones: the
    /// final stone difference when `exact`.
    pub value: i32,
    /// Plies of the deepest completed iteration.
    pub depth: u32,
    /// Nodes visited.
    pub nodes: u64,
    /// Whether the search saw the end of every line: the value is the game's
    /// value under perfect play from here (repetition aside).
    pub exact: bool,
}

/// A searcher for one variant, keeping its table between moves of a game.
#[derive(Clone, Debug)]
pub struct Searcher<P> {
    table: Table,
    /// History heuristic: how often each player's pit caused a cut-off.
    history: [[u32; 6]; 2],
    _variant: std::marker::PhantomData<P>,
}

impl<P: Evaluate> Searcher<P> {
    /// A searcher with a table of `2^table_bits` entries of 16 bytes.
    pub fn new(table_bits: u32) -> Searcher<P> {
        Searcher {
            table: Table::new(table_bits),
            history: [[0; 6]; 2],
            _variant: std::marker::PhantomData,
        }
    }

    /// Bytes held by the table.
    pub fn table_bytes(&self) -> usize {
        self.table.bytes()
    }

    /// Forgets everything learnt, so that the next search depends only on
    /// its arguments.
    pub fn clear(&mut self) {
        self.table.clear();
        self.history = [[0; 6]; 2];
    }

    /// Searches the game's position by iterative deepening up to `max_depth`
    /// plies or until the budget runs out, and returns the best move of the
    /// deepest completed iteration. Root moves are tried in an order shuffled
    /// by `rng`, so that equally good moves are chosen among at random.
    ///
    /// `None` when the game is over.
    pub fn search(
        &mut self,
        game: &Game<P>,
        max_depth: u32,
        budget: &Budget,
        rng: &mut Xoshiro256PlusPlus,
    ) -> Option<SearchResult> {
        let root = *game.position();
        let mut moves: Vec<Pit> = root.legal_moves().collect();
        if moves.is_empty() {
            return None;
        }
        shuffle(&mut moves, rng);
        let mut run = Run::new(self, game, budget);
        let mut result = None;
        for depth in 1..=max_depth.max(1) {
            run.horizon = false;
            let mut alpha = -INFINITY;
            let mut best = (moves[0], -INFINITY);
            for (index, &pit) in moves.iter().enumerate() {
                let child = root.play_unchecked(pit);
                let value = if index == 0 {
                    run.child_value(&root, &child, depth - 1, alpha, INFINITY)
                } else {
                    let probe = run.child_value(&root, &child, depth - 1, alpha, alpha + 1);
                    if probe > alpha {
                        run.child_value(&root, &child, depth - 1, alpha, INFINITY)
                    } else {
                        probe
                    }
                };
                if run.aborted {
                    break;
                }
                if value > best.1 {
                    best = (pit, value);
                    alpha = value;
                }
            }
            if run.aborted && result.is_some() {
                break;
            }
            let exact = !run.horizon && !run.aborted;
            result = Some(SearchResult {
                best: best.0,
                value: best.1,
                depth,
                nodes: run.nodes,
                exact,
            });
            // The best move leads the next iteration; the others keep their
            // shuffled order.
            if let Some(position) = moves.iter().position(|&pit| pit == best.0) {
                moves[..=position].rotate_right(1);
            }
            if exact || run.aborted || moves.len() == 1 {
                break;
            }
        }
        result.map(|found| SearchResult {
            nodes: run.nodes,
            ..found
        })
    }

    /// The value of every legal move, each searched with a full window to
    /// `depth` plies in all: what a level that errs on purpose picks from.
    pub fn root_values(&mut self, game: &Game<P>, depth: u32, budget: &Budget) -> Vec<(Pit, i32)> {
        let root = *game.position();
        let mut run = Run::new(self, game, budget);
        let values: Vec<(Pit, i32)> = root
            .legal_moves()
            .map(|pit| {
                let child = root.play_unchecked(pit);
                (
                    pit,
                    run.child_value(&root, &child, depth.saturating_sub(1), -INFINITY, INFINITY),
                )
            })
            .collect();
        if !run.aborted || depth <= 1 {
            return values;
        }
        // Out of budget: one ply, which always finishes, beats garbage.
        self.root_values(game, 1, &Budget::unlimited())
    }
}

fn shuffle<T>(items: &mut [T], rng: &mut Xoshiro256PlusPlus) {
    for index in (1..items.len()).rev() {
        let other = (rng.next_u64() % (index as u64 + 1)) as usize;
        items.swap(index, other);
    }
}

/// One search: its counters and the path that repetition is checked on.
struct Run<'a, P> {
    table: &'a mut Table,
    history: &'a mut [[u32; 6]; 2],
    budget: &'a Budget,
    nodes: u64,
    aborted: bool,
    /// Whether some line was cut at the depth limit, so values are estimates.
    horizon: bool,
    /// Hashes of the game's positions since its last capture, then of the
    /// search path: only variants whose positions can recur keep it.
    path: Vec<u64>,
    /// Where the current capture-free stretch of `path` begins.
    stretch: usize,
    repeats: bool,
    _variant: std::marker::PhantomData<P>,
}

impl<'a, P: Evaluate> Run<'a, P> {
    fn new(searcher: &'a mut Searcher<P>, game: &Game<P>, budget: &'a Budget) -> Run<'a, P> {
        let repeats = game.position().can_repeat();
        let mut path = Vec::new();
        if repeats {
            // Replay the game to collect the positions since its last capture.
            let mut position = *game.start();
            path.push(position.hash64());
            for &pit in game.moves() {
                let next = position.play_unchecked(pit);
                if next.score() != position.score() {
                    path.clear();
                }
                path.push(next.hash64());
                position = next;
            }
        }
        Run {
            table: &mut searcher.table,
            history: &mut searcher.history,
            budget,
            nodes: 0,
            aborted: false,
            horizon: false,
            path,
            stretch: 0,
            repeats,
            _variant: std::marker::PhantomData,
        }
    }

    /// The value of `child` for the player to move at `parent`.
    #[inline]
    fn child_value(&mut self, parent: &P, child: &P, depth: u32, alpha: i32, beta: i32) -> i32 {
        let saved_stretch = self.stretch;
        if self.repeats {
            if child.score() != parent.score() {
                self.stretch = self.path.len();
            }
            self.path.push(child.hash64());
        }
        let value = if child.turn() == parent.turn() {
            self.negamax(child, depth, alpha, beta)
        } else {
            -self.negamax(child, depth, -beta, -alpha)
        };
        if self.repeats {
            self.path.pop();
            self.stretch = saved_stretch;
        }
        value
    }

    fn negamax(&mut self, position: &P, depth: u32, mut alpha: i32, beta: i32) -> i32 {
        self.nodes += 1;
        if self.nodes.is_multiple_of(Budget::CHECK_EVERY) && self.budget.exhausted(self.nodes) {
            self.aborted = true;
        }
        if self.aborted {
            return 0;
        }
        if position.is_over() {
            return final_value(position);
        }
        let key = position.hash64();
        if self.repeats && self.recurs(key) {
            // A second occurrence is scored as the repetition end the third
            // would bring: what a cycle that nobody breaks leads to.
            return final_value(&position.end_by_repetition());
        }
        if depth == 0 {
            self.horizon = true;
            return position.evaluate();
        }
        let mut hinted = None;
        if let Some(entry) = self.table.probe(key) {
            hinted = entry.best;
            if entry.depth >= depth {
                let usable = match entry.bound {
                    Bound::Exact => true,
                    Bound::Lower => entry.value >= beta,
                    Bound::Upper => entry.value <= alpha,
                };
                if usable {
                    self.horizon |= !entry.solved;
                    return entry.value;
                }
            }
        }
        let outer_horizon = std::mem::replace(&mut self.horizon, false);
        let me = position.turn().index();
        let mut children = [(0i32, Pit::ALL[0], *position); 6];
        let mut count = 0;
        for pit in position.legal_moves() {
            let child = position.play_unchecked(pit);
            let gain = i32::from(child.score()[me]) - i32::from(position.score()[me]);
            let mut order =
                gain * 64 + self.history[me][usize::from(pit.get() - 1)].min(1 << 20) as i32 / 1024;
            if child.turn() == position.turn() {
                order += 4096;
            }
            if hinted == Some(pit.get()) {
                order += 1 << 24;
            }
            children[count] = (order, pit, child);
            count += 1;
        }
        let children = &mut children[..count];
        children.sort_unstable_by_key(|child| std::cmp::Reverse(child.0));

        let original_alpha = alpha;
        let mut best = (-INFINITY, children[0].1);
        for (index, (_, pit, child)) in children.iter().enumerate() {
            let value = if index == 0 {
                self.child_value(position, child, depth - 1, alpha, beta)
            } else {
                let probe = self.child_value(position, child, depth - 1, alpha, alpha + 1);
                if probe > alpha && probe < beta {
                    self.child_value(position, child, depth - 1, alpha, beta)
                } else {
                    probe
                }
            };
            if self.aborted {
                return 0;
            }
            if value > best.0 {
                best = (value, *pit);
            }
            if value > alpha {
                alpha = value;
            }
            if alpha >= beta {
                self.history[me][usize::from(pit.get() - 1)] += depth * depth;
                break;
            }
        }
        let bound = if best.0 <= original_alpha {
            Bound::Upper
        } else if best.0 >= beta {
            Bound::Lower
        } else {
            Bound::Exact
        };
        let solved = !self.horizon;
        self.table
            .store(key, best.0, depth, bound, best.1.get(), solved);
        self.horizon |= outer_horizon;
        best.0
    }

    /// Whether `key`, the last entry of the path, occurred earlier in the
    /// current capture-free stretch.
    #[inline]
    fn recurs(&self, key: u64) -> bool {
        let end = self.path.len().saturating_sub(1);
        self.path[self.stretch.min(end)..end].contains(&key)
    }
}
