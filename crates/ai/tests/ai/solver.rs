//! The solver against plain exhaustive minimax, on every reachable position
//! of small boards.

use std::collections::HashMap;

use mancala_ai::{Budget, Solver};
use mancala_rules::{Kalah, KalahEnd, KalahOptions, Position, Side};

/// South's final store minus North's under perfect play: the whole tree,
/// no pruning, memoised only so that small boards finish quickly.
fn minimax(position: &Kalah, memo: &mut HashMap<Kalah, i32>) -> i32 {
    if let Some(outcome) = position.outcome() {
        return i32::from(outcome.score[0]) - i32::from(outcome.score[1]);
    }
    if let Some(&value) = memo.get(position) {
        return value;
    }
    let values = position
        .legal_moves()
        .map(|pit| minimax(&position.play_unchecked(pit), memo));
    let value = if position.turn() == Side::South {
        values.max()
    } else {
        values.min()
    };
    let value = value.expect("a position that is not over has moves");
    memo.insert(*position, value);
    value
}

fn reachable(start: Kalah) -> Vec<Kalah> {
    let mut seen = std::collections::HashSet::new();
    let mut stack = vec![start];
    while let Some(position) = stack.pop() {
        if seen.insert(position) {
            stack.extend(
                position
                    .legal_moves()
                    .map(|pit| position.play_unchecked(pit)),
            );
        }
    }
    seen.into_iter().collect()
}

fn check_every_position(options: KalahOptions) -> usize {
    let mut memo = HashMap::new();
    let mut solver = Solver::new(1 << 20);
    let positions = reachable(Kalah::new(options));
    for position in &positions {
        let expected = minimax(position, &mut memo);
        let solution = solver.solve(position, &Budget::unlimited()).unwrap();
        assert_eq!(solution.value, expected, "{options:?} {position:?}");
        let best: Vec<_> = position
            .legal_moves()
            .filter(|&pit| minimax(&position.play_unchecked(pit), &mut memo) == expected)
            .collect();
        assert_eq!(solution.best, best, "{options:?} {position:?}");
    }
    positions.len()
}

#[test]
fn the_solver_agrees_with_minimax_on_every_position_of_small_boards() {
    let mut total = 0;
    for (pits, seeds) in [(1, 1), (2, 2), (3, 2), (2, 3), (3, 3), (4, 2)] {
        for empty_capture in [false, true] {
            for end in [KalahEnd::Immediate, KalahEnd::OnTurn] {
                let options = KalahOptions::new(pits, seeds)
                    .unwrap()
                    .with_empty_capture(empty_capture)
                    .with_end(end);
                total += check_every_position(options);
            }
        }
    }
    assert!(total > 10_000, "only {total} positions checked");
}

#[test]
fn a_budget_too_small_gives_no_solution() {
    let mut solver = Solver::new(1 << 20);
    let position = Kalah::new(KalahOptions::new(5, 4).unwrap());
    assert_eq!(solver.solve(&position, &Budget::nodes(5_000)), None);
    // The same solver, with enough budget, still finds the right answer.
    let mut fresh = Solver::new(1 << 20);
    let small = Kalah::new(KalahOptions::new(3, 3).unwrap());
    let reused = solver.solve(&small, &Budget::unlimited()).unwrap();
    let expected = fresh.solve(&small, &Budget::unlimited()).unwrap();
    assert_eq!((reused.value, reused.best), (expected.value, expected.best));
}

#[test]
fn any_first_guess_proves_the_same_value_and_moves() {
    let options = KalahOptions::new(4, 3).unwrap();
    for position in reachable(Kalah::new(options))
        .into_iter()
        .step_by(97)
        .take(40)
    {
        let expected = Solver::new(1 << 20)
            .solve(&position, &Budget::unlimited())
            .unwrap();
        for guess in [-30, -3, 0, 2, 30] {
            let proved = Solver::new(1 << 20)
                .prove(&position, Some(guess), &Budget::unlimited())
                .unwrap();
            assert_eq!(
                (proved.value, &proved.best),
                (expected.value, &expected.best)
            );
        }
    }
}

#[test]
fn a_proof_out_of_budget_names_a_move_that_reaches_what_it_proved() {
    // Budgets that end the proof part way, from guesses below the value so
    // that the searches climb: every move named must reach its bound.
    let position = Kalah::new(KalahOptions::new(5, 3).unwrap());
    let mut exact = Solver::new(16 << 20);
    let full = exact.solve(&position, &Budget::unlimited()).unwrap().nodes;
    let mut named = 0;
    for share in [2, 3, 4, 5, 6, 7, 8] {
        let nodes = full * share / 10;
        for guess in [-12, -4, 0] {
            let partial = Solver::new(1 << 20)
                .prove(&position, Some(guess), &Budget::nodes(nodes))
                .expect_err("the budget is too small for a proof");
            assert!(partial.nodes >= nodes);
            let Some((pit, at_least)) = partial.proven else {
                continue;
            };
            named += 1;
            let after = position.play_unchecked(pit);
            let reached = exact.solve(&after, &Budget::unlimited()).unwrap().value;
            let sign = if position.turn() == Side::South {
                1
            } else {
                -1
            };
            assert!(
                sign * reached >= at_least,
                "{nodes} nodes, guess {guess}: {pit}"
            );
        }
    }
    assert!(named >= 5, "only {named} partial proofs named a move");
}
