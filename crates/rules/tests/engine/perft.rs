//! Perft counts pinned in `tests/perft.txt`.

use mancala_rules::{perft, perft_any};

use crate::support::parse_game;

const GOLDEN: &str = include_str!("../perft.txt");

#[test]
fn perft_matches_the_pinned_numbers() {
    let mut checked = 0;
    for line in GOLDEN
        .lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
    {
        let (variant, counts) = line
            .split_once(':')
            .expect("a ':' between variant and counts");
        let game = parse_game(variant);
        for (index, expected) in counts.split_whitespace().enumerate() {
            let depth = index as u32 + 1;
            let expected: u64 = expected.parse().unwrap();
            assert_eq!(perft(&game, depth), expected, "{variant} at depth {depth}");
            if depth <= 6 {
                assert_eq!(
                    perft_any(&game, depth),
                    expected,
                    "{variant} at depth {depth}"
                );
            }
            checked += 1;
        }
    }
    assert!(
        checked >= 100,
        "the golden file lost its lines: {checked} checked"
    );
}

#[test]
fn every_variant_is_pinned_to_depth_eight_at_least() {
    let deep: Vec<&str> = GOLDEN
        .lines()
        .filter(|line| !line.starts_with('#'))
        .filter_map(|line| line.split_once(':'))
        .filter(|(_, counts)| {
            let counts: Vec<&str> = counts.split_whitespace().collect();
            counts.len() >= 8 || counts.last() == Some(&"0")
        })
        .map(|(variant, _)| variant.split_whitespace().next().unwrap_or(""))
        .collect();
    for variant in ["kalah", "oware", "mangala"] {
        assert!(
            deep.contains(&variant),
            "{variant} lacks deep perft numbers"
        );
    }
}
