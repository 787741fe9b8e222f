//! Arena scores, as lichess counts them: a win 2, a draw 1, a loss 0;
//! after two wins in a row each win counts double until a game is not won
//! (the player is "on fire"); a berserk win (the winner halved their own
//! clock at the start and played at least [`BERSERK_MIN_MOVES`] moves)
//! one point more; a game the player never started costs a point.
//!
//! Pure: a player's score is a fold over their finished tournament games
//! in the order they ended, so the standings after a crash are the same
//! numbers, read again from the committed games.

use std::cmp::Ordering;

use uuid::Uuid;

/// Moves a berserker must have made for the extra point (lichess's rule:
/// berserk and resign at once earns nothing).
pub const BERSERK_MIN_MOVES: u32 = 7;
/// Wins in a row after which wins count double.
pub const FIRE_AFTER: u32 = 2;
/// What a game the player never started costs.
pub const NO_START_PENALTY: i32 = 1;

/// How one finished tournament game went for one player.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Win,
    Draw,
    Loss,
    /// The game never started because this player never moved.
    NoStart,
    /// Ended before it started for a reason not this player's (the
    /// opponent's no-start, or the tournament ending): counts for nothing.
    Void,
}

/// One game of a player's, as scoring needs it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlayedGame {
    pub outcome: Outcome,
    /// The player went berserk in it.
    pub berserk: bool,
    /// Moves the player made.
    pub moves: u32,
    /// The opponent's rating when the game began.
    pub opponent_rating: f64,
}

/// What one game scored, for the standings' sheet (lichess shows each
/// game's points, with the streak and berserk marked).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GamePoints {
    pub points: i32,
    pub on_fire: bool,
    pub berserk_bonus: bool,
}

/// A player's tally over their games so far.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tally {
    pub score: i32,
    pub sheet: Vec<GamePoints>,
    /// Wins in a row at the end.
    pub streak: u32,
    pub wins: u32,
    pub draws: u32,
    pub losses: u32,
    /// For the performance rating: the sum of the opponents' ratings and
    /// of the results (1, ½, 0) over the rated games counted.
    opponents_sum: f64,
    results_sum: f64,
    counted: u32,
}

impl Tally {
    /// Adds one game, in the order the games ended.
    pub fn add(&mut self, game: &PlayedGame) {
        let on_fire = self.streak >= FIRE_AFTER;
        let berserk_bonus =
            game.outcome == Outcome::Win && game.berserk && game.moves >= BERSERK_MIN_MOVES;
        let points = match game.outcome {
            Outcome::Win => {
                let base = if on_fire { 4 } else { 2 };
                base + i32::from(berserk_bonus)
            }
            Outcome::Draw => 1,
            Outcome::Loss | Outcome::Void => 0,
            Outcome::NoStart => -NO_START_PENALTY,
        };
        match game.outcome {
            Outcome::Win => {
                self.streak += 1;
                self.wins += 1;
            }
            Outcome::Draw => {
                self.streak = 0;
                self.draws += 1;
            }
            Outcome::Loss | Outcome::NoStart => {
                self.streak = 0;
                self.losses += 1;
            }
            // Nothing was played: the streak stands.
            Outcome::Void => {}
        }
        if let Some(result) = match game.outcome {
            Outcome::Win => Some(1.0),
            Outcome::Draw => Some(0.5),
            Outcome::Loss => Some(0.0),
            Outcome::NoStart | Outcome::Void => None,
        } {
            self.opponents_sum += game.opponent_rating;
            self.results_sum += result;
            self.counted += 1;
        }
        self.score += points;
        self.sheet.push(GamePoints {
            points,
            on_fire: on_fire && game.outcome == Outcome::Win,
            berserk_bonus,
        });
    }

    /// The whole tally of a list of games.
    pub fn of(games: &[PlayedGame]) -> Tally {
        let mut tally = Tally::default();
        for game in games {
            tally.add(game);
        }
        tally
    }

    /// Lichess's tournament performance: the opponents' average rating,
    /// plus 500 times the (wins − losses) share; none before a game.
    pub fn performance(&self) -> Option<f64> {
        if self.counted == 0 {
            return None;
        }
        let n = f64::from(self.counted);
        let balance = 2.0 * self.results_sum - n;
        Some(self.opponents_sum / n + 500.0 * balance / n)
    }

    /// Whether the next win counts double.
    pub fn on_fire(&self) -> bool {
        self.streak >= FIRE_AFTER
    }
}

/// One row of the standings before ranking.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub player: Uuid,
    pub tally: Tally,
    /// The rating the player joined with: the last tie-break before the id.
    pub rating: f64,
}

/// Ranks entries: score, then performance (a player with no game below
/// one with any), then rating, then id, so equal inputs give one order.
pub fn rank(entries: &mut [Entry]) {
    entries.sort_by(|a, b| {
        b.tally
            .score
            .cmp(&a.tally.score)
            .then_with(|| compare_performance(b.tally.performance(), a.tally.performance()))
            .then_with(|| b.rating.total_cmp(&a.rating))
            .then_with(|| a.player.cmp(&b.player))
    });
}

fn compare_performance(a: Option<f64>, b: Option<f64>) -> Ordering {
    match (a, b) {
        (Some(a), Some(b)) => a.total_cmp(&b),
        (Some(_), None) => Ordering::Greater,
        (None, Some(_)) => Ordering::Less,
        (None, None) => Ordering::Equal,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game(outcome: Outcome) -> PlayedGame {
        PlayedGame {
            outcome,
            berserk: false,
            moves: 20,
            opponent_rating: 1500.0,
        }
    }

    fn points(games: &[PlayedGame]) -> Vec<i32> {
        Tally::of(games).sheet.iter().map(|g| g.points).collect()
    }

    #[test]
    fn a_win_two_a_draw_one_a_loss_nothing() {
        use Outcome::*;
        assert_eq!(points(&[game(Win), game(Draw), game(Loss)]), [2, 1, 0]);
        assert_eq!(Tally::of(&[game(Win), game(Draw), game(Loss)]).score, 3);
    }

    #[test]
    fn after_two_wins_wins_count_double_until_one_is_not_won() {
        use Outcome::*;
        let games = [
            game(Win),
            game(Win),
            game(Win),
            game(Win),
            game(Draw),
            game(Win),
            game(Win),
            game(Loss),
            game(Win),
        ];
        assert_eq!(points(&games), [2, 2, 4, 4, 1, 2, 2, 0, 2]);
        let tally = Tally::of(&games);
        assert_eq!(tally.score, 19);
        assert!(!tally.on_fire());
        assert!(Tally::of(&games[..2]).on_fire());
        let sheet = tally.sheet;
        assert!(sheet[2].on_fire && sheet[3].on_fire && !sheet[1].on_fire && !sheet[4].on_fire);
    }

    #[test]
    fn a_berserk_win_scores_one_more_when_the_berserker_played_it() {
        let berserk = |outcome, moves| PlayedGame {
            outcome,
            berserk: true,
            moves,
            opponent_rating: 1500.0,
        };
        assert_eq!(points(&[berserk(Outcome::Win, 7)]), [3]);
        // Berserk, then the opponent resigned at once: no extra point.
        assert_eq!(points(&[berserk(Outcome::Win, 2)]), [2]);
        assert_eq!(points(&[berserk(Outcome::Loss, 30)]), [0]);
        assert_eq!(points(&[berserk(Outcome::Draw, 30)]), [1]);
        // On fire and berserk: 4 + 1.
        let games = [
            game(Outcome::Win),
            game(Outcome::Win),
            berserk(Outcome::Win, 9),
        ];
        assert_eq!(points(&games), [2, 2, 5]);
    }

    #[test]
    fn a_no_start_costs_a_point_and_a_void_game_nothing_not_even_the_streak() {
        use Outcome::*;
        assert_eq!(points(&[game(Win), game(NoStart)]), [2, -1]);
        assert_eq!(
            points(&[game(Win), game(Win), game(Void), game(Win)]),
            [2, 2, 0, 4]
        );
        assert_eq!(
            points(&[game(Win), game(Win), game(NoStart), game(Win)]),
            [2, 2, -1, 2]
        );
    }

    #[test]
    fn performance_is_the_opponents_average_plus_500_a_net_win() {
        let at = |outcome, opponent_rating| PlayedGame {
            outcome,
            berserk: false,
            moves: 20,
            opponent_rating,
        };
        assert_eq!(Tally::default().performance(), None);
        let tally = Tally::of(&[at(Outcome::Win, 1600.0), at(Outcome::Loss, 1400.0)]);
        assert_eq!(tally.performance(), Some(1500.0));
        let tally = Tally::of(&[at(Outcome::Win, 1600.0), at(Outcome::Draw, 1400.0)]);
        assert_eq!(tally.performance(), Some(1750.0));
        // A no-start is not a result.
        let tally = Tally::of(&[at(Outcome::Win, 1600.0), at(Outcome::NoStart, 1400.0)]);
        assert_eq!(tally.performance(), Some(2100.0));
    }

    #[test]
    fn ties_break_by_performance_then_rating_then_id() {
        use Outcome::*;
        let entry = |id: u128, games: &[PlayedGame], rating| Entry {
            player: Uuid::from_u128(id),
            tally: Tally::of(games),
            rating,
        };
        let strong = PlayedGame {
            opponent_rating: 2000.0,
            ..game(Win)
        };
        let mut entries = vec![
            entry(1, &[game(Win)], 1500.0),
            entry(2, &[strong], 1400.0),
            entry(3, &[], 1900.0),
            entry(4, &[game(Win), game(Win), game(Win)], 1200.0),
            entry(5, &[], 1900.0),
            entry(6, &[game(Draw), game(Draw)], 1000.0),
        ];
        rank(&mut entries);
        let order: Vec<u128> = entries.iter().map(|e| e.player.as_u128()).collect();
        assert_eq!(order, [4, 2, 1, 6, 3, 5]);
    }
}
