//! One proof: MTD(f) over null-window alpha-beta searches on the gain, on
//! boards of `P` pits a side.

use crate::budget::Budget;
use crate::rank::Ranks;

use super::Progress;
use super::board::{Board, Rules};
use super::table::{Bounds, Place, SolverTable};

/// The tables a proof reads and what it has spent.
pub(super) struct Search<'a, F, const P: usize> {
    pub(super) table: &'a SolverTable,
    pub(super) ranks: &'a Ranks,
    pub(super) rules: Rules,
    /// The endgame table's gains by rank (empty without one): every board
    /// ranked below its length is in it.
    pub(super) endgame: &'a [i8],
    pub(super) budget: &'a Budget,
    pub(super) progress: F,
    pub(super) nodes: u64,
    pub(super) aborted: bool,
}

/// A move's offset and the gain it was proved to reach at least, if a
/// search proved one.
pub(super) type Proven = Option<(usize, i32)>;

/// The moves of a board still to be searched, with what the table said of
/// each when it was asked.
#[derive(Clone, Copy, Default)]
struct Child<const P: usize> {
    board: Board<P>,
    rank: u64,
    step: i32,
    same: bool,
    pit: u8,
    found: Option<Bounds>,
    place: Place,
}

impl<F: FnMut(Progress), const P: usize> Search<'_, F, P> {
    /// The gain of `board` (not over) and the offsets of its best moves,
    /// MTD(f) starting from `guess` (the gain expected), or, when the budget
    /// ran out, the best the proof had shown: a move's offset and a gain it
    /// reaches at least.
    pub(super) fn solve(
        &mut self,
        board: Board<P>,
        guess: Option<i32>,
    ) -> Result<(i32, Vec<usize>), Proven> {
        let (gain, proven) = self.gain(board, guess);
        let gain = gain.ok_or(proven)?;
        let mut best = Vec::new();
        let mut moves = board.moves();
        while moves != 0 {
            let pit = moves.trailing_zeros() as usize;
            moves &= moves - 1;
            // A move is best when its gain reaches the position's: one null
            // window each, mostly answered by the table.
            let played = board.play(pit, self.rules);
            let needed = gain - played.step;
            let reaches = if played.over {
                needed <= 0
            } else if played.same {
                self.value(played.board, needed - 1, needed) >= needed
            } else {
                -self.value(played.board, -needed, -needed + 1) >= needed
            };
            if self.aborted {
                return Err(proven);
            }
            if reaches {
                best.push(pit);
            }
        }
        Ok((gain, best))
    }

    /// The exact gain of the player to move (`None` when the budget ran
    /// out), by MTD(f): null-window searches that close in on the value
    /// from a first guess (the caller's, else a quarter stone for each
    /// stone on the mover's side more than on the other); and the move
    /// behind the best lower bound proved, with that bound.
    ///
    /// A guess just under the value makes the searches climb: each proves
    /// a lower bound and the move that reaches it, so a proof that runs out
    /// of budget while ruling out anything better (the costly last search)
    /// still leaves a move that keeps the value when the bound is the value.
    fn gain(&mut self, board: Board<P>, guess: Option<i32>) -> (Option<i32>, Proven) {
        let stones = board.stones();
        let (mut lower, mut upper) = (-stones, stones);
        let mut guess = guess.unwrap_or(board.material() / 4).clamp(lower, upper);
        let mut proven = None;
        while lower < upper {
            let beta = if guess == lower { guess + 1 } else { guess };
            guess = self.value(board, beta - 1, beta);
            if self.aborted {
                return (None, proven);
            }
            if guess < beta {
                upper = guess;
            } else {
                lower = guess;
                proven = self.root_move(board).map(|pit| (pit, lower));
            }
            (self.progress)(Progress {
                lower,
                upper,
                nodes: self.nodes,
            });
        }
        (Some(lower), proven)
    }

    /// The move the table holds for `board` after a search of it failed
    /// high: the one that reached the bound.
    fn root_move(&self, board: Board<P>) -> Option<usize> {
        let rank = self.ranks.rank(board);
        if (rank as usize) < self.endgame.len() {
            return None;
        }
        let known = self.table.find(rank).0?;
        known.best.checked_sub(1).map(usize::from)
    }

    /// The fail-soft gain of a board that is not over: the endgame table's
    /// when it has it, a search otherwise.
    fn value(&mut self, board: Board<P>, alpha: i32, beta: i32) -> i32 {
        let rank = self.ranks.rank(board);
        if let Some(&gain) = self.endgame.get(rank as usize) {
            return i32::from(gain);
        }
        let (found, place) = self.table.find(rank);
        self.search(board, found, place, alpha, beta)
    }

    /// Fail-soft alpha-beta on the gain of the player to move, for a board
    /// that is not over and that the endgame table does not hold, given
    /// what the table held for it (`found`) and where its bounds go.
    ///
    /// The caller asked the table, together with the board's siblings: by
    /// the time a sibling's subtree has been searched the bucket has left
    /// the cache, and asking again would cost a miss for what is rarely
    /// news (only a transposition in a sibling's subtree could have added
    /// to it).
    fn search(
        &mut self,
        board: Board<P>,
        found: Option<Bounds>,
        place: Place,
        mut alpha: i32,
        mut beta: i32,
    ) -> i32 {
        self.nodes += 1;
        if self.nodes.is_multiple_of(Budget::CHECK_EVERY) {
            if self.budget.exhausted(self.nodes) {
                self.aborted = true;
            }
            if self.nodes.is_multiple_of(1 << 24) {
                (self.progress)(Progress {
                    lower: alpha,
                    upper: beta,
                    nodes: self.nodes,
                });
            }
        }
        if self.aborted {
            return 0;
        }
        let stones = board.stones();
        // Futility: the gain cannot leave [-stones, stones].
        if alpha >= stones {
            return stones;
        }
        if beta <= -stones {
            return -stones;
        }
        let mut hinted = u8::MAX;
        if let Some(known) = found {
            if known.lower >= beta {
                return known.lower;
            }
            if known.upper <= alpha {
                return known.upper;
            }
            if known.lower == known.upper {
                return known.lower;
            }
            alpha = alpha.max(known.lower);
            beta = beta.min(known.upper);
            hinted = known.best.wrapping_sub(1);
        }
        let original_alpha = alpha;
        let nodes_before = self.nodes;

        // Every child's rank first, then what the endgame table or the
        // transposition table knows of each, asked together: both are far
        // larger than the caches, and independent reads let the processor
        // wait for all the misses at once. A child whose bounds settle it
        // (it ends the game, the endgame table has it, the table has it
        // exactly or enough for a cut) is scored without a search.
        let mut best = (i32::MIN, 0u8);
        let mut children = [Child::<P>::default(); 6];
        let mut count = 0;
        let mut moves = board.moves();
        while moves != 0 {
            let pit = moves.trailing_zeros() as usize;
            moves &= moves - 1;
            let played = board.play(pit, self.rules);
            if played.over {
                if played.step > best.0 {
                    best = (played.step, pit as u8);
                }
                continue;
            }
            children[count] = Child {
                board: played.board,
                rank: self.ranks.rank(played.board),
                step: played.step,
                same: played.same,
                pit: pit as u8,
                ..Child::default()
            };
            count += 1;
        }
        let mut known = [None; 6];
        let mut touched = 0;
        for (bounds, child) in known.iter_mut().zip(&children[..count]) {
            match self.endgame.get(child.rank as usize) {
                Some(&gain) => *bounds = Some((i32::from(gain), i32::from(gain))),
                None => touched ^= self.table.touch(child.rank),
            }
        }
        // Keeps the touches: their only purpose is the fetch they start.
        std::hint::black_box(touched);
        for (bounds, child) in known.iter_mut().zip(&mut children[..count]) {
            if bounds.is_none() {
                (child.found, child.place) = self.table.find(child.rank);
                *bounds = child.found.map(|found| (found.lower, found.upper));
            }
        }

        alpha = alpha.max(best.0);
        // Children left to search, by how promising they look: the table's
        // move, then extra turns (the nearest to the store first), then by
        // stones gained. The index rides in the low bits.
        let mut order = [0u32; 6];
        let mut open = 0;
        for (index, (child, bounds)) in children[..count].iter().zip(known).enumerate() {
            if let Some((lower, upper)) = bounds {
                let (worst, most) = if child.same {
                    (child.step + lower, child.step + upper)
                } else {
                    (child.step - upper, child.step - lower)
                };
                if worst >= beta || worst == most {
                    if worst > best.0 {
                        best = (worst, child.pit);
                    }
                    alpha = alpha.max(worst);
                    continue;
                }
                if most <= alpha {
                    // Cannot raise alpha: its bound stands for it.
                    if most > best.0 {
                        best = (most, child.pit);
                    }
                    continue;
                }
            }
            let mut promise = (child.step + 128) as u32 * 8 + u32::from(child.pit);
            if child.same {
                promise += 1 << 12;
            }
            if child.pit == hinted {
                promise += 1 << 13;
            }
            order[open] = promise << 3 | index as u32;
            open += 1;
        }
        if alpha < beta {
            let order = &mut order[..open];
            order.sort_unstable_by(|a, b| b.cmp(a));
            for &key in order.iter() {
                let child = children[(key & 7) as usize];
                let step = child.step;
                let value = if child.same {
                    step + self.search(
                        child.board,
                        child.found,
                        child.place,
                        alpha - step,
                        beta - step,
                    )
                } else {
                    step - self.search(
                        child.board,
                        child.found,
                        child.place,
                        step - beta,
                        step - alpha,
                    )
                };
                if self.aborted {
                    return 0;
                }
                if value > best.0 {
                    best = (value, child.pit);
                }
                alpha = alpha.max(value);
                if alpha >= beta {
                    break;
                }
            }
        }
        let work = (64 - (self.nodes - nodes_before).leading_zeros()) as u8;
        let (lower, upper) = if best.0 <= original_alpha {
            (-stones, best.0)
        } else if best.0 >= beta {
            (best.0, stones)
        } else {
            (best.0, best.0)
        };
        self.table.put(
            place,
            Bounds {
                lower,
                upper,
                best: best.1 + 1,
            },
            work,
        );
        best.0
    }
}
