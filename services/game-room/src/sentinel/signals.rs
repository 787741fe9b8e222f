//! What a player's finished rated games say about how they were won or
//! lost, as figures with the games behind them: the fair-play sentinel's
//! judgement, pure (lichess's `Assessible` and `PlayerFlags` are the
//! model). A signal never sanctions anyone: it becomes a report, with its
//! evidence, for a moderator to weigh.
//!
//! - **Ring**: rating won mostly from thin opponents (young accounts, few
//!   games, mostly quick losses), opponents who lose quickly and often to
//!   one player, accounts that only ever play that player.
//! - **Engine**: moves as good as an engine's over several games (Kalah's
//!   exact loss in stones a move; Oware's and Mangala's against a deep
//!   search), the more telling with move times as regular as a program's,
//!   and with the page hidden during one's own turns.
//! - **Sandbagging**: many losses by resignation, flag or leaving against
//!   much weaker players.
//!
//! Every threshold is a named constant here, and docs/ARCHITECTURE.md
//! ("Fair play") lists them with the false-positive rate measured on
//! honest play.

use mancala_proto::moderation::ReportReason;
use serde::Serialize;
use uuid::Uuid;

/// A game lost within this many plies by resignation, flag or leaving is
/// a quick loss (a real game of any of the three takes 30 or more).
pub const QUICK_PLIES: u32 = 20;

/// Ring: wins over thin opponents, at least this many...
pub const RING_THIN_WINS: usize = 10;
/// ...making at least this share of the player's wins...
pub const RING_THIN_SHARE: f64 = 0.6;
/// ...from few opponents, each giving this many wins on average (a good
/// newcomer beats many newcomers once or twice; a ring's sybils give
/// their climber all they can).
pub const RING_WINS_PER_THIN: f64 = 3.0;
/// Ring: wins that the opponent gave up quickly, at least this many...
pub const RING_QUICK_WINS: usize = 10;
/// ...from at least this many different opponents...
pub const RING_QUICK_OPPONENTS: usize = 3;
/// ...making at least this share of the player's wins.
pub const RING_QUICK_SHARE: f64 = 0.5;
/// Ring: opponents whose rated games were this share or more against the
/// player (at least [`CIRCLE_GAMES`] of them)...
pub const CIRCLE_SHARE: f64 = 0.8;
pub const CIRCLE_GAMES: u32 = 5;
/// ...at least this many such opponents.
pub const CIRCLE_OPPONENTS: usize = 3;

/// Engine: at least this many analysed games...
pub const ENGINE_GAMES: usize = 5;
/// ...and this many of the player's own moves with a value...
pub const ENGINE_MOVES: usize = 50;
/// ...with the best move played this often...
///
/// Set above what strong honest play reaches under our analysis (which
/// proves few early Kalah positions and estimates the rest): in the
/// measured season (tests/PERFORMANCE.md) the most accurate honest player
/// came to 88 % over all their games and passed 90 % in a run of ten, the
/// Perfect engine itself to 90 %. Accuracy alone cannot tell those apart,
/// so it reports only what is clearly above both; timing (a program) does
/// the rest.
pub const ENGINE_BEST_SHARE: f64 = 0.95;
/// ...and no more than this many stones lost a move on average.
pub const ENGINE_MEAN_LOSS: f64 = 0.1;
/// A program: move times this regular (coefficient of variation over the
/// games, and the median over windows of [`WINDOW`] moves)...
pub const PROGRAM_TIME_CV: f64 = 0.25;
/// ...over at least this many timed moves...
pub const PROGRAM_MOVES: usize = 40;
/// ...with the best move this often (a program that plays well; a
/// beginner's fixed-delay bot is nobody's problem).
pub const PROGRAM_BEST_SHARE: f64 = 0.8;
/// Moves in a window of the time regularity.
pub const WINDOW: usize = 10;

/// Sandbagging: losses by resignation, flag or leaving against players
/// rated this much lower or more...
pub const SANDBAG_GAP: f64 = 200.0;
/// ...at least this many...
pub const SANDBAG_LOSSES: usize = 5;
/// ...making at least this share of the player's losses.
pub const SANDBAG_SHARE: f64 = 0.5;

/// How a rated game ended for the player.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Win,
    Draw,
    Loss,
}

/// One finished rated game of the player, as the history and the game
/// record have it.
#[derive(Clone, Debug, PartialEq)]
pub struct RatedGame {
    pub game: Uuid,
    pub opponent: Uuid,
    /// The player sat in seat 0 (South, first to move).
    pub south: bool,
    pub outcome: Outcome,
    /// The opponent was thin when the game was rated.
    pub opponent_thin: bool,
    /// Plies on the board when it ended.
    pub plies: u32,
    /// It ended by resignation, a flag or a player leaving (not on the
    /// board).
    pub given_up: bool,
    /// The player's and the opponent's ratings before it.
    pub rating: f64,
    pub opponent_rating: f64,
}

impl RatedGame {
    fn quick_loss(&self) -> bool {
        self.given_up && self.plies < QUICK_PLIES
    }
}

/// An opponent's rated games, and how many of them against the player.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpponentRecord {
    pub opponent: Uuid,
    pub games: u32,
    pub against_player: u32,
}

/// The player's moves in one analysed game: how good and how timed.
#[derive(Clone, Debug, PartialEq)]
pub struct PlayedMoves {
    pub game: Uuid,
    /// Stones each valued move gave away against the best (0: a best
    /// move); moves the analysis left without a value are not here.
    pub losses: Vec<f64>,
    /// Seconds each move took (from the opponent's move or the game's
    /// start to this one).
    pub think_secs: Vec<f64>,
    /// Seconds the page was hidden during the player's own turns, when
    /// the client said.
    pub hidden_secs: Option<f64>,
    /// Of the valued moves, how many were proved exact (Kalah's solver)
    /// rather than estimated by a search.
    pub exact_moves: usize,
}

/// A signal: the report's reason, what it rests on, and the games.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Signal {
    pub reason: ReportReason,
    /// Machine-readable: `ring`, `engine`, `program`, `sandbagging`.
    pub kind: &'static str,
    pub figures: Vec<(&'static str, f64)>,
    pub games: Vec<GameFigures>,
}

/// One game named in a signal, with its own figures.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GameFigures {
    pub game: Uuid,
    pub figures: Vec<(&'static str, f64)>,
}

fn share(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

/// Rings: wins mostly over thin opponents; wins mostly given up quickly by
/// several opponents; or opponents who play no one else.
pub fn ring(games: &[RatedGame], opponents: &[OpponentRecord]) -> Option<Signal> {
    let wins: Vec<&RatedGame> = games.iter().filter(|g| g.outcome == Outcome::Win).collect();
    let thin: Vec<&&RatedGame> = wins.iter().filter(|g| g.opponent_thin).collect();
    let mut thin_opponents: Vec<Uuid> = thin.iter().map(|g| g.opponent).collect();
    thin_opponents.sort_unstable();
    thin_opponents.dedup();
    let quick: Vec<&&RatedGame> = wins.iter().filter(|g| g.quick_loss()).collect();
    let mut quick_opponents: Vec<Uuid> = quick.iter().map(|g| g.opponent).collect();
    quick_opponents.sort_unstable();
    quick_opponents.dedup();
    let circle: Vec<&OpponentRecord> = opponents
        .iter()
        .filter(|o| o.against_player >= CIRCLE_GAMES && share_of(o) >= CIRCLE_SHARE)
        .collect();
    let thin_ring = thin.len() >= RING_THIN_WINS
        && share(thin.len(), wins.len()) >= RING_THIN_SHARE
        && thin.len() as f64 >= RING_WINS_PER_THIN * thin_opponents.len() as f64;
    let quick_ring = quick.len() >= RING_QUICK_WINS
        && quick_opponents.len() >= RING_QUICK_OPPONENTS
        && share(quick.len(), wins.len()) >= RING_QUICK_SHARE;
    let closed = circle.len() >= CIRCLE_OPPONENTS;
    if !(thin_ring || quick_ring || closed) {
        return None;
    }
    let named: Vec<GameFigures> = wins
        .iter()
        .filter(|g| g.opponent_thin || g.quick_loss())
        .map(|g| GameFigures {
            game: g.game,
            figures: vec![
                ("plies", f64::from(g.plies)),
                ("opponent_thin", f64::from(u8::from(g.opponent_thin))),
                ("given_up", f64::from(u8::from(g.given_up))),
            ],
        })
        .collect();
    Some(Signal {
        reason: ReportReason::Boosting,
        kind: "ring",
        figures: vec![
            ("wins", wins.len() as f64),
            ("wins_over_thin", thin.len() as f64),
            ("thin_opponents", thin_opponents.len() as f64),
            ("wins_given_up_quickly", quick.len() as f64),
            ("opponents_giving_up_quickly", quick_opponents.len() as f64),
            ("opponents_playing_only_them", circle.len() as f64),
        ],
        games: named,
    })
}

fn share_of(record: &OpponentRecord) -> f64 {
    share(record.against_player as usize, record.games as usize)
}

/// Many losses given up against much weaker players.
pub fn sandbagging(games: &[RatedGame]) -> Option<Signal> {
    let losses: Vec<&RatedGame> = games
        .iter()
        .filter(|g| g.outcome == Outcome::Loss)
        .collect();
    let thrown: Vec<&&RatedGame> = losses
        .iter()
        .filter(|g| g.given_up && g.rating - g.opponent_rating >= SANDBAG_GAP)
        .collect();
    if thrown.len() < SANDBAG_LOSSES || share(thrown.len(), losses.len()) < SANDBAG_SHARE {
        return None;
    }
    Some(Signal {
        reason: ReportReason::Boosting,
        kind: "sandbagging",
        figures: vec![
            ("losses", losses.len() as f64),
            ("losses_given_up_to_weaker", thrown.len() as f64),
        ],
        games: thrown
            .iter()
            .map(|g| GameFigures {
                game: g.game,
                figures: vec![
                    ("plies", f64::from(g.plies)),
                    ("rating_gap", g.rating - g.opponent_rating),
                ],
            })
            .collect(),
    })
}

/// The coefficient of variation of `values` (standard deviation over
/// mean); `None` under two values or a mean of zero.
pub fn variation(values: &[f64]) -> Option<f64> {
    if values.len() < 2 {
        return None;
    }
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    if mean <= 0.0 {
        return None;
    }
    let variance =
        values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (values.len() - 1) as f64;
    Some(variance.sqrt() / mean)
}

/// The median coefficient of variation over consecutive windows of
/// [`WINDOW`] moves.
fn windowed_variation(values: &[f64]) -> Option<f64> {
    let mut cvs: Vec<f64> = values.chunks(WINDOW).filter_map(variation).collect();
    if cvs.is_empty() {
        return None;
    }
    cvs.sort_by(f64::total_cmp);
    Some(cvs[cvs.len() / 2])
}

/// Moves as good as an engine's over several games; or, with move times
/// as regular as a program's, good enough.
pub fn engine(games: &[PlayedMoves]) -> Option<Signal> {
    let analysed: Vec<&PlayedMoves> = games.iter().filter(|g| !g.losses.is_empty()).collect();
    let losses: Vec<f64> = analysed
        .iter()
        .flat_map(|g| g.losses.iter().copied())
        .collect();
    if analysed.len() < ENGINE_GAMES || losses.len() < ENGINE_MOVES {
        return None;
    }
    let best = losses.iter().filter(|&&loss| loss <= 0.0).count();
    let best_share = share(best, losses.len());
    let mean_loss = losses.iter().sum::<f64>() / losses.len() as f64;
    let times: Vec<f64> = analysed
        .iter()
        .flat_map(|g| g.think_secs.iter().copied())
        .collect();
    let time_cv = variation(&times);
    let window_cv = windowed_variation(&times);
    let regular = times.len() >= PROGRAM_MOVES
        && time_cv.is_some_and(|cv| cv <= PROGRAM_TIME_CV)
        && window_cv.is_some_and(|cv| cv <= PROGRAM_TIME_CV);
    let accurate = best_share >= ENGINE_BEST_SHARE && mean_loss <= ENGINE_MEAN_LOSS;
    let program = regular && best_share >= PROGRAM_BEST_SHARE;
    if !(accurate || program) {
        return None;
    }
    let think: f64 = times.iter().sum();
    let hidden: Option<f64> = analysed.iter().map(|g| g.hidden_secs).sum::<Option<f64>>();
    let mut figures = vec![
        ("games", analysed.len() as f64),
        ("moves", losses.len() as f64),
        ("best_move_share", best_share),
        ("mean_loss_stones", mean_loss),
        (
            "exact_share",
            share(analysed.iter().map(|g| g.exact_moves).sum(), losses.len()),
        ),
    ];
    if let Some(cv) = time_cv {
        figures.push(("move_time_cv", cv));
    }
    if let Some(cv) = window_cv {
        figures.push(("move_time_window_cv", cv));
    }
    if let Some(hidden) = hidden
        && think > 0.0
    {
        figures.push(("hidden_share_of_own_time", hidden / think));
    }
    Some(Signal {
        reason: ReportReason::Engine,
        kind: if program { "program" } else { "engine" },
        figures,
        games: analysed
            .iter()
            .map(|g| {
                let best = g.losses.iter().filter(|&&loss| loss <= 0.0).count();
                let mut figures = vec![
                    ("moves", g.losses.len() as f64),
                    ("best_move_share", share(best, g.losses.len())),
                    (
                        "mean_loss_stones",
                        g.losses.iter().sum::<f64>() / g.losses.len() as f64,
                    ),
                ];
                if let Some(cv) = variation(&g.think_secs) {
                    figures.push(("move_time_cv", cv));
                }
                GameFigures {
                    game: g.game,
                    figures,
                }
            })
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn won(n: u128, opponent: u128, thin: bool, plies: u32, given_up: bool) -> RatedGame {
        RatedGame {
            game: Uuid::from_u128(n),
            opponent: Uuid::from_u128(opponent),
            south: true,
            outcome: Outcome::Win,
            opponent_thin: thin,
            plies,
            given_up,
            rating: 1500.0,
            opponent_rating: 1500.0,
        }
    }

    fn lost(n: u128, opponent_rating: f64, given_up: bool) -> RatedGame {
        RatedGame {
            outcome: Outcome::Loss,
            opponent_rating,
            rating: 1900.0,
            given_up,
            plies: 9,
            ..won(n, n + 10_000, false, 40, false)
        }
    }

    #[test]
    fn twenty_quick_wins_from_four_fresh_accounts_are_a_ring() {
        let games: Vec<RatedGame> = (0..20).map(|n| won(n, n / 5, true, 8, true)).collect();
        let signal = ring(&games, &[]).expect("a ring");
        assert_eq!(signal.kind, "ring");
        assert_eq!(signal.reason, ReportReason::Boosting);
        assert_eq!(signal.games.len(), 20);
        assert!(signal.figures.contains(&("wins_over_thin", 20.0)));
        assert!(
            signal
                .figures
                .contains(&("opponents_giving_up_quickly", 4.0))
        );
    }

    #[test]
    fn a_strong_newcomer_beating_newcomers_on_the_board_is_no_ring() {
        // Wins over newcomers happen to every good new player: over the
        // board, at full length, they are mixed with wins over others.
        let mut games: Vec<RatedGame> = (0..8).map(|n| won(n, n, true, 44, false)).collect();
        games.extend((8..20).map(|n| won(n, n, false, 40, false)));
        assert_eq!(ring(&games, &[]), None);
        // All of them over twelve different newcomers: still none.
        let newcomers: Vec<RatedGame> = (0..12).map(|n| won(n, n, true, 44, false)).collect();
        assert_eq!(ring(&newcomers, &[]), None);
        // Twelve over three newcomers, four each: what a ring looks like.
        let few: Vec<RatedGame> = (0..12).map(|n| won(n, n % 3, true, 44, false)).collect();
        assert!(ring(&few, &[]).is_some());
        // Quick wins from fewer than three opponents are not enough alone.
        let two: Vec<RatedGame> = (0..12).map(|n| won(n, n % 2, false, 8, true)).collect();
        assert_eq!(ring(&two, &[]), None);
    }

    #[test]
    fn opponents_who_play_no_one_else_close_a_circle() {
        let games: Vec<RatedGame> = (0..15).map(|n| won(n, n % 3, false, 40, false)).collect();
        let circle = [
            OpponentRecord {
                opponent: Uuid::from_u128(0),
                games: 5,
                against_player: 5,
            },
            OpponentRecord {
                opponent: Uuid::from_u128(1),
                games: 6,
                against_player: 5,
            },
            OpponentRecord {
                opponent: Uuid::from_u128(2),
                games: 5,
                against_player: 5,
            },
        ];
        let signal = ring(&games, &circle).expect("a closed circle");
        assert!(
            signal
                .figures
                .contains(&("opponents_playing_only_them", 3.0))
        );
        let open = [
            OpponentRecord {
                opponent: Uuid::from_u128(0),
                games: 50,
                against_player: 5,
            },
            circle[1],
            circle[2],
        ];
        assert_eq!(ring(&games, &open), None);
    }

    #[test]
    fn losses_thrown_to_much_weaker_players_are_sandbagging() {
        let thrown: Vec<RatedGame> = (0..6).map(|n| lost(n, 1500.0, true)).collect();
        let signal = sandbagging(&thrown).expect("sandbagging");
        assert_eq!(signal.games.len(), 6);
        // Losses on the board, or to players near one's level, are not.
        let honest: Vec<RatedGame> = (0..6).map(|n| lost(n, 1500.0, false)).collect();
        assert_eq!(sandbagging(&honest), None);
        let near: Vec<RatedGame> = (0..6).map(|n| lost(n, 1800.0, true)).collect();
        assert_eq!(sandbagging(&near), None);
    }

    fn moves(n: u128, losses: Vec<f64>, think_secs: Vec<f64>) -> PlayedMoves {
        PlayedMoves {
            game: Uuid::from_u128(n),
            losses,
            think_secs,
            hidden_secs: None,
            exact_moves: 0,
        }
    }

    #[test]
    fn perfect_moves_over_five_games_are_an_engine_and_regular_times_a_program() {
        let perfect: Vec<PlayedMoves> = (0..5)
            .map(|n| {
                moves(
                    n,
                    vec![0.0; 12],
                    vec![1.0, 1.1, 0.9, 1.0, 1.05, 0.95, 1.0, 1.0, 1.1, 0.9, 1.0, 1.0],
                )
            })
            .collect();
        let signal = engine(&perfect).expect("an engine");
        assert_eq!(
            (signal.kind, signal.reason),
            ("program", ReportReason::Engine)
        );
        assert!(signal.figures.contains(&("best_move_share", 1.0)));
        // The same moves at human times: still an engine's accuracy.
        let human: Vec<PlayedMoves> = (0..5)
            .map(|n| {
                moves(
                    n,
                    vec![0.0; 12],
                    vec![
                        2.0, 9.0, 1.0, 14.0, 3.5, 0.8, 6.0, 22.0, 1.5, 4.0, 2.5, 11.0,
                    ],
                )
            })
            .collect();
        assert_eq!(engine(&human).map(|s| s.kind), Some("engine"));
    }

    #[test]
    fn a_good_human_is_no_engine_and_few_games_say_nothing() {
        // Best two moves in three, a stone lost every few moves.
        let good: Vec<PlayedMoves> = (0..8)
            .map(|n| {
                let losses = (0..12)
                    .map(|m| if m % 3 == 0 { 1.0 } else { 0.0 })
                    .collect();
                moves(
                    n,
                    losses,
                    (0..12).map(|m| 1.0 + (m * 7 % 5) as f64 * 2.0).collect(),
                )
            })
            .collect();
        assert_eq!(engine(&good), None);
        let few: Vec<PlayedMoves> = (0..4)
            .map(|n| moves(n, vec![0.0; 20], vec![1.0; 20]))
            .collect();
        assert_eq!(engine(&few), None, "fewer than five games");
    }

    #[test]
    fn variation_is_the_spread_over_the_mean() {
        assert_eq!(variation(&[2.0, 2.0, 2.0]), Some(0.0));
        assert_eq!(variation(&[1.0]), None);
        let cv = variation(&[1.0, 3.0]).unwrap();
        assert!((cv - std::f64::consts::SQRT_2 / 2.0).abs() < 1e-12);
    }
}
