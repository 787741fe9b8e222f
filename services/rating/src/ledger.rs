//! How a run of rated games moves ratings: the one computation behind both
//! the worker, which rates games as they end, and the replay, which rates
//! a variant's history again when a mark voids some of its games. Both
//! feed it the same inputs (each game's players, result, the seats it may
//! move, whether the players are linked, whether a mark voids it, and the
//! time it was rated), so a replay of an unchanged history comes to the
//! same numbers, to the bit.
//!
//! Pure: no IO and no clock; the caller passes each game's time.

use std::collections::HashMap;

use mancala_proto::VariantName;
use mancala_proto::game::Side;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::boosting::{Counts, bounded};
use crate::config::BoostingSettings;
use crate::glicko::{Rating, RatingRules, Score, days_between};

/// A player's rating in one variant as stored: what a game starts from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Standing {
    pub rating: Rating,
    /// Games that moved it.
    pub games: i32,
    /// When it last moved: its deviation grows from then.
    pub last_rated: Option<OffsetDateTime>,
}

/// One rated game, as the ledger needs it.
#[derive(Clone, Debug, PartialEq)]
pub struct GameToRate {
    pub game: Uuid,
    pub variant: VariantName,
    /// South's, then North's.
    pub players: [Uuid; 2],
    /// South's score.
    pub score: Score,
    /// Seats whose rating the game may not move: a registered player
    /// against a guest.
    pub held: [bool; 2],
    /// The two accounts are linked (see `boosting`).
    pub linked: bool,
    /// A mark on one of the players voids it: it moves nobody.
    pub voided: bool,
}

/// One player's line of the history for one game.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Line {
    pub game: Uuid,
    pub variant: VariantName,
    pub player: Uuid,
    pub seat: Side,
    pub result: &'static str,
    /// As of the game (the deviation grown over the player's idle days);
    /// for a voided game, the rating as it stood.
    pub before: Rating,
    pub after: Rating,
    pub linked: bool,
    pub voided: bool,
}

/// What one game did: each seat's rating before and after (a held seat's
/// unchanged), and the history lines it writes (none for a held seat).
#[derive(Clone, Debug, PartialEq)]
pub struct Rated {
    pub seats: [(Rating, Rating); 2],
    pub lines: Vec<Line>,
}

/// The ratings a run of games starts from and leaves, and the gains each
/// player took from linked opponents (which the boosting bound counts
/// over a window).
#[derive(Clone, Debug)]
pub struct Ledger {
    rules: RatingRules,
    boosting: BoostingSettings,
    standings: HashMap<(Uuid, VariantName), Standing>,
    /// Per player and variant: when, and how many points, each gain from
    /// a linked opponent (only those that may still count).
    linked_gains: HashMap<(Uuid, VariantName), Vec<(OffsetDateTime, f64)>>,
}

impl Ledger {
    pub fn new(rules: RatingRules, boosting: BoostingSettings) -> Ledger {
        Ledger {
            rules,
            boosting,
            standings: HashMap::new(),
            linked_gains: HashMap::new(),
        }
    }

    /// Sets where a player's rating stands before the run.
    pub fn start_from(&mut self, player: Uuid, variant: VariantName, standing: Standing) {
        self.standings.insert((player, variant), standing);
    }

    /// A gain taken from a linked opponent before the run.
    pub fn gained_before(
        &mut self,
        player: Uuid,
        variant: VariantName,
        at: OffsetDateTime,
        points: f64,
    ) {
        self.linked_gains
            .entry((player, variant))
            .or_default()
            .push((at, points));
    }

    /// Where a player's rating stands now: a newcomer's defaults when no
    /// game has moved it.
    pub fn standing(&self, player: Uuid, variant: VariantName) -> Standing {
        self.standings
            .get(&(player, variant))
            .copied()
            .unwrap_or(Standing {
                rating: self.rules.initial(),
                games: 0,
                last_rated: None,
            })
    }

    /// Every standing the run started from or moved.
    pub fn standings(&self) -> impl Iterator<Item = ((Uuid, VariantName), Standing)> + '_ {
        self.standings
            .iter()
            .map(|(key, standing)| (*key, *standing))
    }

    /// Points a player gained from linked opponents in the window ending
    /// at `now`.
    fn gained(&self, key: (Uuid, VariantName), now: OffsetDateTime) -> f64 {
        let since = now - time::Duration::days(i64::from(self.boosting.linked_days));
        self.linked_gains.get(&key).map_or(0.0, |gains| {
            gains
                .iter()
                .filter(|(at, _)| *at > since)
                .map(|(_, points)| points)
                .sum()
        })
    }

    /// Rates one game at `now`, moving the standings it may move.
    pub fn rate(&mut self, game: &GameToRate, now: OffsetDateTime) -> Rated {
        let variant = game.variant;
        let was = game.players.map(|player| self.standing(player, variant));
        let results = match game.score {
            Score::Win => ["win", "loss"],
            Score::Draw => ["draw", "draw"],
            Score::Loss => ["loss", "win"],
        };
        let seats = [Side::South, Side::North];
        if game.voided {
            let lines = (0..2)
                .filter(|&seat| !game.held[seat])
                .map(|seat| Line {
                    game: game.game,
                    variant,
                    player: game.players[seat],
                    seat: seats[seat],
                    result: results[seat],
                    before: was[seat].rating,
                    after: was[seat].rating,
                    linked: game.linked,
                    voided: true,
                })
                .collect();
            return Rated {
                seats: was.map(|standing| (standing.rating, standing.rating)),
                lines,
            };
        }
        let as_of_now = |standing: &Standing| Rating {
            rd: standing.last_rated.map_or(standing.rating.rd, |last| {
                self.rules
                    .rd_after(standing.rating, days_between(last, now))
            }),
            ..standing.rating
        };
        let before = [as_of_now(&was[0]), as_of_now(&was[1])];
        let (glicko_south, glicko_north) = self.rules.update(before[0], before[1], game.score);
        let glicko = [glicko_south, glicko_north];
        let mut rated = Rated {
            seats: [(before[0], glicko[0]), (before[1], glicko[1])],
            lines: Vec::with_capacity(2),
        };
        for seat in 0..2 {
            let player = game.players[seat];
            let key = (player, variant);
            let counts = if game.held[seat] {
                Counts::Held
            } else if game.linked {
                Counts::Linked {
                    left: self.boosting.linked_budget - self.gained(key, now),
                }
            } else {
                Counts::Full
            };
            let after = bounded(was[seat].rating, before[seat], glicko[seat], counts);
            rated.seats[seat].1 = after;
            if counts == Counts::Held {
                // Nothing moves: no history line, no game counted.
                continue;
            }
            if game.linked {
                let gain = (after.rating - before[seat].rating).max(0.0);
                self.linked_gains.entry(key).or_default().push((now, gain));
            }
            self.standings.insert(
                key,
                Standing {
                    rating: after,
                    games: was[seat].games + 1,
                    last_rated: Some(now),
                },
            );
            rated.lines.push(Line {
                game: game.game,
                variant,
                player,
                seat: seats[seat],
                result: results[seat],
                before: before[seat],
                after,
                linked: game.linked,
                voided: false,
            });
        }
        rated
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(day: i64) -> OffsetDateTime {
        OffsetDateTime::UNIX_EPOCH + time::Duration::days(20_000 + day)
    }

    fn boosting() -> BoostingSettings {
        BoostingSettings {
            linked_days: 30,
            linked_budget: 50.0,
        }
    }

    fn game(players: [Uuid; 2], score: Score) -> GameToRate {
        GameToRate {
            game: Uuid::now_v7(),
            variant: VariantName::Kalah,
            players,
            score,
            held: [false, false],
            linked: false,
            voided: false,
        }
    }

    #[test]
    fn a_win_moves_both_and_counts_a_game_each() {
        let mut ledger = Ledger::new(RatingRules::default(), boosting());
        let players = [Uuid::now_v7(), Uuid::now_v7()];
        let rated = ledger.rate(&game(players, Score::Win), at(0));
        assert_eq!(rated.lines.len(), 2);
        let south = ledger.standing(players[0], VariantName::Kalah);
        let north = ledger.standing(players[1], VariantName::Kalah);
        assert!(south.rating.rating > 1500.0 && north.rating.rating < 1500.0);
        assert_eq!((south.games, south.last_rated), (1, Some(at(0))));
        assert_eq!(rated.lines[0].result, "win");
        assert_eq!(rated.lines[1].result, "loss");
    }

    #[test]
    fn a_voided_game_moves_nobody_and_keeps_its_lines() {
        let mut ledger = Ledger::new(RatingRules::default(), boosting());
        let players = [Uuid::now_v7(), Uuid::now_v7()];
        ledger.rate(&game(players, Score::Win), at(0));
        let before = ledger.standing(players[1], VariantName::Kalah);
        let voided = GameToRate {
            voided: true,
            ..game(players, Score::Loss)
        };
        let rated = ledger.rate(&voided, at(5));
        assert_eq!(ledger.standing(players[1], VariantName::Kalah), before);
        assert!(
            rated
                .lines
                .iter()
                .all(|line| line.voided && line.before == line.after)
        );
        assert_eq!(rated.lines.len(), 2);
    }

    #[test]
    fn a_held_seat_has_no_line_and_does_not_move() {
        let mut ledger = Ledger::new(RatingRules::default(), boosting());
        let players = [Uuid::now_v7(), Uuid::now_v7()];
        let held = GameToRate {
            held: [true, false],
            ..game(players, Score::Loss)
        };
        let rated = ledger.rate(&held, at(0));
        assert_eq!(rated.lines.len(), 1);
        assert_eq!(rated.lines[0].player, players[1]);
        assert_eq!(ledger.standing(players[0], VariantName::Kalah).games, 0);
    }

    #[test]
    fn linked_gains_are_bounded_over_the_window_and_free_again_after_it() {
        let mut ledger = Ledger::new(RatingRules::default(), boosting());
        let farmer = Uuid::now_v7();
        let linked = |day| {
            let mut game = game([farmer, Uuid::now_v7()], Score::Win);
            game.linked = true;
            (game, at(day))
        };
        let start = ledger.standing(farmer, VariantName::Kalah).rating.rating;
        for day in 0..10 {
            let (game, now) = linked(day);
            ledger.rate(&game, now);
        }
        let capped = ledger.standing(farmer, VariantName::Kalah).rating.rating;
        assert!((capped - (start + 50.0)).abs() < 1e-9, "{capped}");
        // Thirty days after the first gains, they no longer count.
        let (game, now) = linked(40);
        ledger.rate(&game, now);
        assert!(ledger.standing(farmer, VariantName::Kalah).rating.rating > capped);
    }

    #[test]
    fn after_a_voided_game_the_rest_rate_as_if_it_had_never_been_played() {
        let players: Vec<Uuid> = (0..5).map(|_| Uuid::now_v7()).collect();
        let games: Vec<(GameToRate, OffsetDateTime)> = (0..60)
            .map(|n| {
                let pair = [players[n % 5], players[(n * 3 + 1) % 5]];
                let pair = if pair[0] == pair[1] {
                    [pair[0], players[(n + 2) % 5]]
                } else {
                    pair
                };
                let mut game = game(pair, [Score::Win, Score::Loss, Score::Draw][n % 3]);
                game.linked = n % 7 == 0;
                game.held = [n % 11 == 0, false];
                (game, at(n as i64 / 3))
            })
            .collect();
        let booster = players[0];
        let involves = |game: &GameToRate| game.players.contains(&booster);
        let mut voiding = Ledger::new(RatingRules::default(), boosting());
        let mut without = Ledger::new(RatingRules::default(), boosting());
        for (game, now) in &games {
            let voided = GameToRate {
                voided: involves(game),
                ..game.clone()
            };
            voiding.rate(&voided, *now);
            if !involves(game) {
                without.rate(game, *now);
            }
        }
        for player in &players[1..] {
            assert_eq!(
                voiding.standing(*player, VariantName::Kalah),
                without.standing(*player, VariantName::Kalah)
            );
        }
        assert_eq!(voiding.standing(booster, VariantName::Kalah).games, 0);
    }
}
