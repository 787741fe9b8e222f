//! Post-game analysis: the value of every position of a finished game and
//! what each move cost its player.
//!
//! A value is South's final store minus North's, in stones, under best
//! play from there on. Kalah positions are proved by the solver wherever a
//! proof fits the node budget (exact); the rest, and every Oware and
//! Mangala position, get the Advanced search's estimate, marked as such.
//! Positions are taken from the end back: the last ones prove at once and
//! leave the solver's table warm for the earlier ones.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use mancala_rules::{AnyPosition, Game, Kalah, Mangala, Oware, Pit, Position, Side};

use crate::book::Book;
use crate::budget::Budget;
use crate::eval::{Evaluate, SCALE};
use crate::player::{Ai, Chooser, Level};
use crate::solver::{ProofTables, Solution};

/// How much work one analysis may do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AnalysisPlan {
    /// Nodes a proof of one Kalah position may take before it gives way to
    /// an estimate.
    pub proof_nodes: u64,
    /// Nodes of one estimate.
    pub estimate_nodes: u64,
    /// The solver's table.
    pub solver_bytes: usize,
}

impl Default for AnalysisPlan {
    fn default() -> AnalysisPlan {
        AnalysisPlan {
            proof_nodes: 2_000_000,
            estimate_nodes: Level::ADVANCED_NODES,
            solver_bytes: 24 << 20,
        }
    }
}

/// What a position is worth.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// South's final store minus North's, in stones.
    pub value: f64,
    /// The moves that keep the value (every one when exact; the search's
    /// choice otherwise); empty when the game is over.
    pub best: Vec<Pit>,
    /// Proved, not estimated.
    pub exact: bool,
}

/// One move of the game, judged.
#[derive(Clone, Debug, PartialEq)]
pub struct MoveReview {
    /// 1 for the first move.
    pub ply: u32,
    pub mover: Side,
    pub pit: Pit,
    /// The position's value before the move, and after it; `None` where the
    /// analysis stopped before reaching it.
    pub before: Option<Verdict>,
    pub after: Option<Verdict>,
}

impl MoveReview {
    /// What the move gave away against the best, in stones for its player:
    /// never negative (an estimate that finds the move better than its own
    /// choice counts it as best).
    pub fn loss(&self) -> Option<f64> {
        let (before, after) = (self.before.as_ref()?, self.after.as_ref()?);
        let sign = if self.mover == Side::South { 1.0 } else { -1.0 };
        Some((sign * (before.value - after.value)).max(0.0))
    }

    /// Whether both values are proved, so the loss is too.
    pub fn exact(&self) -> bool {
        self.before.as_ref().is_some_and(|v| v.exact)
            && self.after.as_ref().is_some_and(|v| v.exact)
    }
}

/// Reviews every move of `game`. `stop`, once set, ends the work: the
/// positions not reached by then have no verdict. Kalah positions come
/// from the opening book where it has them, else from proofs with
/// `tables` (a table of the plan's size when none is shared).
pub fn analyse(
    game: &Game<AnyPosition>,
    plan: &AnalysisPlan,
    tables: &ProofTables,
    stop: Arc<AtomicBool>,
) -> Vec<MoveReview> {
    let start = *game.start();
    let verdicts = match start {
        AnyPosition::Kalah(_) => {
            let Some(game) = game.concrete::<Kalah>() else {
                return Vec::new();
            };
            let mut solver = tables.solver(plan.solver_bytes);
            let book = Book::standard();
            verdicts(&game, plan, &stop, |position, budget| {
                match book.lookup(position) {
                    Some(known) => Some(Solution {
                        value: known.value,
                        best: known.best,
                        nodes: 0,
                    }),
                    None => solver.solve(position, budget),
                }
            })
        }
        AnyPosition::Oware(_) => match game.concrete::<Oware>() {
            Some(game) => verdicts(&game, plan, &stop, |_, _| None),
            None => return Vec::new(),
        },
        AnyPosition::Mangala(_) => match game.concrete::<Mangala>() {
            Some(game) => verdicts(&game, plan, &stop, |_, _| None),
            None => return Vec::new(),
        },
    };
    let mut replay = Game::new(*game.start());
    let mut reviews = Vec::with_capacity(game.moves().len());
    for (index, &pit) in game.moves().iter().enumerate() {
        let mover = replay.position().turn();
        if replay.play(pit).is_err() {
            break;
        }
        reviews.push(MoveReview {
            ply: index as u32 + 1,
            mover,
            pit,
            before: verdicts[index].clone(),
            after: verdicts[index + 1].clone(),
        });
    }
    reviews
}

/// The verdict on each position of `game`, the start first.
fn verdicts<P: Evaluate>(
    game: &Game<P>,
    plan: &AnalysisPlan,
    stop: &Arc<AtomicBool>,
    mut prove: impl FnMut(&P, &Budget) -> Option<Solution>,
) -> Vec<Option<Verdict>> {
    let mut prefixes = Vec::with_capacity(game.moves().len() + 1);
    let mut prefix = Game::new(*game.start());
    prefixes.push(prefix.clone());
    for &pit in game.moves() {
        if prefix.play(pit).is_err() {
            break;
        }
        prefixes.push(prefix.clone());
    }
    // The seed only breaks ties between equal moves: any will do, and the
    // same game always gets the same analysis.
    let mut estimator = Ai::<P>::new(Level::Advanced, 0).ok();
    let mut verdicts = vec![None; prefixes.len()];
    // Taken from the end back, positions mostly get harder to prove: once a
    // proof runs out of nodes, the earlier ones would too, each spending its
    // whole budget for nothing, so they go straight to the estimate.
    let mut proving = true;
    for (index, prefix) in prefixes.iter().enumerate().rev() {
        let position = prefix.position();
        if position.is_over() {
            let score = position.score();
            verdicts[index] = Some(Verdict {
                value: f64::from(score[0]) - f64::from(score[1]),
                best: Vec::new(),
                exact: true,
            });
            continue;
        }
        if stop.load(Ordering::Relaxed) {
            break;
        }
        if proving {
            let proof = Budget::nodes(plan.proof_nodes).with_stop(stop.clone());
            if let Some(solution) = prove(position, &proof) {
                verdicts[index] = Some(Verdict {
                    value: f64::from(solution.value),
                    best: solution.best,
                    exact: true,
                });
                continue;
            }
            proving = false;
        }
        let Some(estimator) = estimator.as_mut() else {
            break;
        };
        let budget = Budget::nodes(plan.estimate_nodes).with_stop(stop.clone());
        let Some(decision) = estimator.choose(prefix, &budget) else {
            break;
        };
        if stop.load(Ordering::Relaxed) && !decision.exact {
            // Cut short by the deadline: not the estimate it claims to be.
            break;
        }
        let sign = if position.turn() == Side::South {
            1.0
        } else {
            -1.0
        };
        verdicts[index] = Some(Verdict {
            value: sign * f64::from(decision.value) / f64::from(SCALE),
            best: vec![decision.pit],
            exact: decision.exact,
        });
    }
    verdicts
}

#[cfg(test)]
mod tests {
    use mancala_rules::{Pit, Variant};
    use rand_xoshiro::Xoshiro256PlusPlus;
    use rand_xoshiro::rand_core::{Rng, SeedableRng};

    use super::*;
    use crate::solver::Solver;

    /// A whole game of random legal moves.
    fn random_game(variant: Variant, seed: u64) -> Game<AnyPosition> {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut game = Game::from_variant(variant);
        while !game.position().is_over() {
            let moves: Vec<Pit> = game.position().legal_moves().into_iter().collect();
            let pit = moves[(rng.next_u64() % moves.len() as u64) as usize];
            game.play(pit).unwrap();
        }
        game
    }

    fn plan() -> AnalysisPlan {
        AnalysisPlan {
            proof_nodes: 300_000,
            estimate_nodes: 20_000,
            solver_bytes: 1 << 20,
        }
    }

    #[test]
    fn a_kalah_game_s_late_positions_are_proved_and_agree_with_a_fresh_solve() {
        let game = random_game(Variant::Kalah(Default::default()), 3);
        let reviews = analyse(&game, &plan(), &ProofTables::default(), Arc::default());
        assert_eq!(reviews.len(), game.moves().len());
        let last = reviews.last().unwrap();
        let score = game.position().score();
        assert_eq!(
            last.after.as_ref().unwrap().value,
            f64::from(score[0]) - f64::from(score[1])
        );
        let exact: Vec<&MoveReview> = reviews.iter().filter(|r| r.exact()).collect();
        assert!(
            exact.len() >= 3,
            "only {} exact of {}",
            exact.len(),
            reviews.len()
        );
        let concrete = game.concrete::<Kalah>().unwrap();
        let mut replay = Game::new(*concrete.start());
        for review in &reviews {
            if review.exact() {
                let solved = Solver::new(1 << 20)
                    .solve(replay.position(), &Budget::unlimited())
                    .unwrap();
                let before = review.before.as_ref().unwrap();
                assert_eq!(before.value, f64::from(solved.value), "ply {}", review.ply);
                assert_eq!(before.best, solved.best, "ply {}", review.ply);
                // A move among the best loses nothing; any other loses.
                let loss = review.loss().unwrap();
                assert_eq!(
                    loss == 0.0,
                    before.best.contains(&review.pit),
                    "ply {}",
                    review.ply
                );
            }
            replay.play(review.pit).unwrap();
        }
    }

    #[test]
    fn oware_and_mangala_are_estimated_and_say_so() {
        for variant in [Variant::Oware, Variant::Mangala] {
            let game = random_game(variant, 5);
            let reviews = analyse(&game, &plan(), &ProofTables::default(), Arc::default());
            assert_eq!(reviews.len(), game.moves().len());
            assert!(
                reviews
                    .iter()
                    .all(|r| r.before.is_some() && r.after.is_some())
            );
            assert!(reviews.iter().all(|r| r.loss().unwrap() >= 0.0));
            // The opening is far from the end: no proof there.
            assert!(!reviews[0].exact());
        }
    }

    #[test]
    fn once_a_proof_fails_the_earlier_positions_are_estimated_without_trying() {
        let game = random_game(Variant::Kalah(Default::default()), 6)
            .concrete::<Kalah>()
            .unwrap();
        let mut solver = Solver::new(1 << 20);
        let mut proved = Vec::new();
        let verdicts = verdicts(&game, &plan(), &Arc::default(), |position, budget| {
            // Nothing with more than 20 stones left proves.
            let solution = (position.stones_in_pits() <= 20)
                .then(|| solver.solve(position, budget))
                .flatten();
            proved.push(solution.is_some());
            solution
        });
        assert_eq!(
            proved.iter().position(|&ok| !ok),
            Some(proved.len() - 1),
            "tried after the first failure: {proved:?}"
        );
        assert!(verdicts.iter().all(Option::is_some));
        assert!(!verdicts[0].as_ref().unwrap().exact);
    }

    #[test]
    fn a_stopped_analysis_leaves_the_early_positions_without_a_verdict() {
        let game = random_game(Variant::Kalah(Default::default()), 4);
        let stop = Arc::new(AtomicBool::new(true));
        let reviews = analyse(&game, &plan(), &ProofTables::default(), stop);
        assert_eq!(reviews.len(), game.moves().len());
        assert!(reviews[0].before.is_none() && reviews[0].loss().is_none());
        // The final position needs no work.
        assert!(reviews.last().unwrap().after.is_some());
    }
}
