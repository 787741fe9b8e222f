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
    /// Which seats' players were thin opponents (see `boosting`) when the
    /// game was claimed: what the other seat gains from them is bounded.
    pub thin: [bool; 2],
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
    /// The player's opponent was thin.
    pub opponent_thin: bool,
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
    /// Per player and variant: when, and how many points (negative for a
    /// loss), each game against a thin opponent moved the rating.
    thin_moves: HashMap<(Uuid, VariantName), Vec<(OffsetDateTime, f64)>>,
}

impl Ledger {
    pub fn new(rules: RatingRules, boosting: BoostingSettings) -> Ledger {
        Ledger {
            rules,
            boosting,
            standings: HashMap::new(),
            linked_gains: HashMap::new(),
            thin_moves: HashMap::new(),
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

    /// A move (gain or loss) from a game against a thin opponent before
    /// the run.
    pub fn moved_by_thin_before(
        &mut self,
        player: Uuid,
        variant: VariantName,
        at: OffsetDateTime,
        points: f64,
    ) {
        self.thin_moves
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

    /// What a player's games against thin opponents have moved their
    /// rating, net, in the window ending at `now`.
    fn thin_net(&self, key: (Uuid, VariantName), now: OffsetDateTime) -> f64 {
        let since = now - time::Duration::days(i64::from(self.boosting.thin_days));
        self.thin_moves.get(&key).map_or(0.0, |moves| {
            moves
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
                    opponent_thin: game.thin[1 - seat],
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
            let opponent_thin = game.thin[1 - seat];
            let counts = if game.held[seat] {
                Counts::Held
            } else if game.linked || opponent_thin {
                let linked_left = if game.linked {
                    self.boosting.linked_budget - self.gained(key, now)
                } else {
                    f64::INFINITY
                };
                // Net: what thin opponents took is theirs to give back, so
                // a newcomer who lost to newcomers may win it back; what
                // games against them add up to stays within the budget.
                let thin_left = if opponent_thin {
                    self.boosting.thin_budget - self.thin_net(key, now)
                } else {
                    f64::INFINITY
                };
                Counts::Bounded {
                    left: linked_left.min(thin_left),
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
            if opponent_thin {
                let moved = after.rating - before[seat].rating;
                self.thin_moves.entry(key).or_default().push((now, moved));
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
                opponent_thin,
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
            thin_budget: 80.0,
            thin_days: 30,
            thin_account_days: 7,
            thin_games: 10,
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
            thin: [false, false],
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

    /// A ring: thirty fresh accounts from thirty networks, five wins each
    /// for one climber. Linked or not, thin opponents give 80 points a
    /// month, net.
    #[test]
    fn a_ring_of_thin_opponents_gives_its_climber_the_budget_and_no_more() {
        let mut ledger = Ledger::new(RatingRules::default(), boosting());
        let climber = Uuid::now_v7();
        let start = ledger.standing(climber, VariantName::Kalah).rating.rating;
        for sybil in 0..30 {
            let sybil = Uuid::from_u128(sybil + 1);
            for _ in 0..5 {
                let mut won = game([climber, sybil], Score::Win);
                won.thin = [false, true];
                ledger.rate(&won, at(0));
            }
        }
        let after = ledger.standing(climber, VariantName::Kalah);
        assert!(
            (after.rating.rating - (start + 80.0)).abs() < 1e-9,
            "{after:?}"
        );
        // Every game still counts as played.
        assert_eq!(after.games, 150);
    }

    /// A newcomer among newcomers near their level loses and wins: the net
    /// stays inside the budget and every game counts in full, as if there
    /// were no bound. (What the bound costs an honest newcomer is a first
    /// win that would have given more than the budget: see the next test.)
    #[test]
    fn losses_and_wins_among_newcomers_meet_no_bound() {
        let mut bounded = Ledger::new(RatingRules::default(), boosting());
        let mut free = Ledger::new(
            RatingRules::default(),
            BoostingSettings {
                thin_budget: f64::INFINITY,
                ..boosting()
            },
        );
        let newcomer = Uuid::now_v7();
        for n in 0..20u128 {
            let mut played = game(
                [newcomer, Uuid::from_u128(n + 100)],
                if n % 2 == 0 { Score::Loss } else { Score::Win },
            );
            played.thin = [true, true];
            bounded.rate(&played, at(n as i64));
            free.rate(&played, at(n as i64));
        }
        assert_eq!(
            bounded.standing(newcomer, VariantName::Kalah),
            free.standing(newcomer, VariantName::Kalah)
        );
    }

    /// The cost to an honest newcomer: a first win against another
    /// newcomer moves a fresh rating (deviation 350) about 170 points;
    /// the bound lets 80 of them count.
    #[test]
    fn a_newcomers_first_win_over_a_newcomer_gives_the_budget() {
        let mut ledger = Ledger::new(RatingRules::default(), boosting());
        let newcomer = Uuid::now_v7();
        let mut first = game([newcomer, Uuid::now_v7()], Score::Win);
        first.thin = [true, true];
        let rated = ledger.rate(&first, at(0));
        let (before, after) = rated.seats[0];
        assert!((after.rating - before.rating - 80.0).abs() < 1e-9);
        let mut free = Ledger::new(
            RatingRules::default(),
            BoostingSettings {
                thin_budget: f64::INFINITY,
                ..boosting()
            },
        );
        let (_, unbounded) = free.rate(&first, at(0)).seats[0];
        assert!(unbounded.rating - before.rating > 150.0, "{unbounded:?}");
    }

    /// Losses to thin opponents give back what they took: the net of the
    /// window is what is bounded.
    #[test]
    fn losses_to_thin_opponents_give_the_budget_back() {
        let mut ledger = Ledger::new(RatingRules::default(), boosting());
        let player = Uuid::now_v7();
        let thin_game = |score, n: u128| {
            let mut played = game([player, Uuid::from_u128(n + 1_000)], score);
            played.thin = [false, true];
            played
        };
        for n in 0..8 {
            ledger.rate(&thin_game(Score::Win, n), at(0));
        }
        let capped = ledger.standing(player, VariantName::Kalah).rating.rating;
        ledger.rate(&thin_game(Score::Loss, 8), at(1));
        let lost = ledger.standing(player, VariantName::Kalah).rating.rating;
        assert!(lost < capped);
        // The loss gave its points back: winning again climbs to the cap.
        for n in 9..30 {
            ledger.rate(&thin_game(Score::Win, n), at(2));
        }
        let again = ledger.standing(player, VariantName::Kalah).rating.rating;
        assert!((again - capped).abs() < 1e-9, "{again} vs {capped}");
        // A month on, the window is empty again.
        ledger.rate(&thin_game(Score::Win, 99), at(40));
        assert!(ledger.standing(player, VariantName::Kalah).rating.rating > capped);
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
                game.thin = [n % 5 == 0, n % 4 == 0];
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
