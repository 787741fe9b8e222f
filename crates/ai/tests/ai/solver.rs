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
