//! The standings: each entrant's finished games, in the order they ended,
//! folded by `scoring` and ranked. Pure over what the store read.

use std::collections::HashMap;

use uuid::Uuid;

use super::scoring::{Entry, Outcome, PlayedGame, Tally, rank};
use super::store::{Entrant, FinishedGame};

/// What a finished game was for the player in `seat`.
pub fn outcome(game: &FinishedGame, seat: usize) -> Outcome {
    let won = if seat == 0 { "p0" } else { "p1" };
    match game.result.as_str() {
        "draw" => Outcome::Draw,
        "aborted" if game.reason == "no_start" => {
            // The side to move never moved: seat 0 before any move, seat 1
            // after seat 0's first (its extra turns included).
            let idle = usize::from(game.plies > 0);
            if idle == seat {
                Outcome::NoStart
            } else {
                Outcome::Void
            }
        }
        "aborted" => Outcome::Void,
        result if result == won => Outcome::Win,
        _ => Outcome::Loss,
    }
}

/// The moves the player in `seat` made, near enough for the berserk rule
/// (seat 0 moves first; extra turns make it a little more at times).
fn moves_of(game: &FinishedGame, seat: usize) -> u32 {
    let plies = game.plies.max(0) as u32;
    if seat == 0 {
        plies.div_ceil(2)
    } else {
        plies / 2
    }
}

/// Ranked rows, best first.
pub fn standings<'a>(entrants: &'a [Entrant], games: &[FinishedGame]) -> Vec<(Entry, &'a Entrant)> {
    let mut played: HashMap<Uuid, Vec<PlayedGame>> = HashMap::new();
    for game in games {
        for seat in 0..2 {
            let Some(player) = game.seats[seat] else {
                continue;
            };
            played.entry(player).or_default().push(PlayedGame {
                outcome: outcome(game, seat),
                berserk: game.berserk[seat],
                moves: moves_of(game, seat),
                opponent_rating: game.ratings[1 - seat].unwrap_or(1500.0),
            });
        }
    }
    let by_player: HashMap<Uuid, &Entrant> = entrants.iter().map(|e| (e.player, e)).collect();
    let mut entries: Vec<Entry> = entrants
        .iter()
        .map(|entrant| Entry {
            player: entrant.player,
            tally: Tally::of(played.get(&entrant.player).map_or(&[][..], Vec::as_slice)),
            rating: entrant.entry_rating,
        })
        .collect();
    rank(&mut entries);
    entries
        .into_iter()
        .filter_map(|entry| {
            let entrant = by_player.get(&entry.player).copied()?;
            Some((entry, entrant))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game(seats: [u128; 2], result: &str, reason: &str, plies: i32) -> FinishedGame {
        FinishedGame {
            id: Uuid::now_v7(),
            seats: seats.map(|n| Some(Uuid::from_u128(n))),
            ratings: [Some(1500.0), Some(1500.0)],
            berserk: [false, false],
            result: result.to_owned(),
            reason: reason.to_owned(),
            plies,
            ended_ms: 0,
        }
    }

    fn entrant(n: u128) -> Entrant {
        Entrant {
            player: Uuid::from_u128(n),
            name: format!("P{n}"),
            joined_ms: 0,
            rating: 1500.0,
            entry_rating: 1500.0,
            paused: false,
            withdrawn: false,
            last_opponent: None,
            first_balance: 0,
            current_game: None,
            seated_ms: None,
        }
    }

    #[test]
    fn outcomes_read_off_the_result_and_who_never_moved() {
        assert_eq!(outcome(&game([1, 2], "p0", "resign", 9), 0), Outcome::Win);
        assert_eq!(outcome(&game([1, 2], "p0", "resign", 9), 1), Outcome::Loss);
        assert_eq!(
            outcome(&game([1, 2], "draw", "board_empty", 40), 1),
            Outcome::Draw
        );
        assert_eq!(
            outcome(&game([1, 2], "aborted", "no_start", 0), 0),
            Outcome::NoStart
        );
        assert_eq!(
            outcome(&game([1, 2], "aborted", "no_start", 0), 1),
            Outcome::Void
        );
        assert_eq!(
            outcome(&game([1, 2], "aborted", "no_start", 3), 1),
            Outcome::NoStart
        );
        assert_eq!(
            outcome(&game([1, 2], "aborted", "resign", 1), 0),
            Outcome::Void
        );
    }

    #[test]
    fn the_same_games_make_the_same_standings_whatever_the_entrants_order() {
        let games = [
            game([1, 2], "p0", "resign", 10),
            game([3, 4], "p1", "resign", 10),
            game([1, 4], "p0", "resign", 10),
            game([2, 3], "draw", "board_empty", 30),
            game([1, 3], "p0", "resign", 10),
        ];
        let forward = [entrant(1), entrant(2), entrant(3), entrant(4)];
        let mut backward = forward.clone();
        backward.reverse();
        let order = |entrants: &[Entrant]| {
            standings(entrants, &games)
                .iter()
                .map(|(entry, _)| (entry.player.as_u128(), entry.tally.score))
                .collect::<Vec<_>>()
        };
        // 1: three wins in a row, 2 + 2 + 4; 4: a win then a loss; 2 and 3 a
        // draw and a loss each.
        assert_eq!(order(&forward), [(1, 8), (4, 2), (2, 1), (3, 1)]);
        assert_eq!(order(&backward), order(&forward));
    }
}
