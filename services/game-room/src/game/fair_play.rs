//! What an ending says about the player who caused it: whether a game
//! between two people, asked for as rated, was spoiled by one of them not
//! playing it (lichess's playban outcomes). Pure: the host asks at the
//! end, and writes the answer in the transaction that ends the game; the
//! sanctions themselves are matchmaking's, computed from those rows.

use mancala_proto::fair_play::OffenceKind;
use mancala_proto::game::{EndReason, GameResult, Over};
use mancala_rules::Side;

use super::live::GameInfo;

/// The game as it stood when it ended, for [`offence`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct AtTheEnd {
    /// Which seats had moved.
    pub moved: [bool; 2],
    /// Moves on the board.
    pub plies: u32,
    /// Whether each seat's player had the game open.
    pub connected: [bool; 2],
}

/// The offence of the side `by` whose act or absence made `over` (the
/// resigner, the flagged side, the side that never started, the absent
/// side), if any. `quick_resign_plies`: a resignation before this many
/// plies is a quick one.
pub(crate) fn offence(
    info: &GameInfo,
    over: &Over,
    by: Side,
    state: AtTheEnd,
    quick_resign_plies: u32,
) -> Option<OffenceKind> {
    // Casual games with friends, games on one device and against the AI
    // are nobody else's business.
    if !info.between_people() || !info.asked_rated() {
        return None;
    }
    let had_moved = state.moved[by.index()];
    match over.reason {
        EndReason::NoStart => Some(OffenceKind::NoStart),
        // The other side's abort is not yours: only a resignation before
        // one's own first move is an abort charged to the resigner.
        EndReason::Resign if !had_moved => Some(OffenceKind::EarlyAbort),
        EndReason::Resign
            if over.result != GameResult::Aborted && state.plies < quick_resign_plies =>
        {
            Some(OffenceKind::QuickResign)
        }
        EndReason::Abandoned => Some(OffenceKind::Left),
        // A flag that falls on a player who is here is a clock let run;
        // on one who is gone, leaving.
        EndReason::Timeout if state.connected[by.index()] => Some(OffenceKind::Timeout),
        EndReason::Timeout => Some(OffenceKind::Left),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use mancala_proto::game::{SeatInfo, TimeControl};
    use mancala_rules::{KalahOptions, Variant};
    use uuid::Uuid;

    use super::*;

    fn seat(player: u128) -> SeatInfo {
        SeatInfo {
            player: Some(Uuid::from_u128(player)),
            name: format!("player {player}"),
            ai: None,
            rating: None,
        }
    }

    fn ranked() -> GameInfo {
        GameInfo {
            id: Uuid::from_u128(9),
            variant: Variant::Kalah(KalahOptions::default()),
            rated: true,
            seats: [seat(1), seat(2)],
            time_control: Some(TimeControl {
                initial_secs: 180,
                increment_secs: 2,
            }),
            room: None,
            created_ms: 0,
            against_ai: false,
            casual_reason: None,
            tournament: None,
            berserk: [false; 2],
        }
    }

    fn over(result: GameResult, reason: EndReason) -> Over {
        Over {
            version: 1,
            result,
            reason,
            score: [0, 0],
        }
    }

    const PLAYED: AtTheEnd = AtTheEnd {
        moved: [true, true],
        plies: 12,
        connected: [true, true],
    };

    fn charged(info: &GameInfo, over: Over, by: Side, state: AtTheEnd) -> Option<OffenceKind> {
        offence(info, &over, by, state, 6)
    }

    #[test]
    fn not_starting_and_aborting_before_ones_first_move_are_offences() {
        let info = ranked();
        let nobody_moved = AtTheEnd {
            moved: [false, false],
            plies: 0,
            ..PLAYED
        };
        let aborted = |reason| over(GameResult::Aborted, reason);
        assert_eq!(
            charged(
                &info,
                aborted(EndReason::NoStart),
                Side::South,
                nobody_moved
            ),
            Some(OffenceKind::NoStart)
        );
        // Seated second, resigning at ply 0 to pick another opponent.
        assert_eq!(
            charged(&info, aborted(EndReason::Resign), Side::North, nobody_moved),
            Some(OffenceKind::EarlyAbort)
        );
        // South moved; North resigns before its own first move: North's.
        let south_moved = AtTheEnd {
            moved: [true, false],
            plies: 1,
            ..PLAYED
        };
        assert_eq!(
            charged(&info, aborted(EndReason::Resign), Side::North, south_moved),
            Some(OffenceKind::EarlyAbort)
        );
        // South resigns after its move, North never having moved: South
        // had started; the game is only aborted.
        assert_eq!(
            charged(&info, aborted(EndReason::Resign), Side::South, south_moved),
            None
        );
    }

    #[test]
    fn leaving_letting_the_clock_run_and_quick_resigns_are_offences() {
        let info = ranked();
        let lost = |reason| over(GameResult::P1, reason);
        assert_eq!(
            charged(&info, lost(EndReason::Abandoned), Side::South, PLAYED),
            Some(OffenceKind::Left)
        );
        assert_eq!(
            charged(&info, lost(EndReason::Timeout), Side::South, PLAYED),
            Some(OffenceKind::Timeout)
        );
        let gone = AtTheEnd {
            connected: [false, true],
            ..PLAYED
        };
        assert_eq!(
            charged(&info, lost(EndReason::Timeout), Side::South, gone),
            Some(OffenceKind::Left)
        );
        let early = AtTheEnd { plies: 5, ..PLAYED };
        assert_eq!(
            charged(&info, lost(EndReason::Resign), Side::South, early),
            Some(OffenceKind::QuickResign)
        );
        // Three moves a side is a game: resigning then is the player's right.
        let six = AtTheEnd { plies: 6, ..PLAYED };
        assert_eq!(
            charged(&info, lost(EndReason::Resign), Side::South, six),
            None
        );
        // The rules ending a game, or a closed room, charge nobody.
        assert_eq!(
            charged(&info, lost(EndReason::SideEmpty), Side::South, PLAYED),
            None
        );
        assert_eq!(
            charged(
                &info,
                over(GameResult::Aborted, EndReason::RoomClosed),
                Side::South,
                PLAYED
            ),
            None
        );
    }

    #[test]
    fn only_games_between_people_asked_for_as_rated_count() {
        let mut casual = ranked();
        casual.rated = false;
        let aborted = over(GameResult::Aborted, EndReason::NoStart);
        assert_eq!(charged(&casual, aborted, Side::South, PLAYED), None);
        // Made casual by the pair limit: still a rated series.
        casual.casual_reason = Some(mancala_proto::game::CasualReason::PairLimit);
        assert_eq!(
            charged(&casual, aborted, Side::South, PLAYED),
            Some(OffenceKind::NoStart)
        );
        let mut against_ai = ranked();
        against_ai.seats[1] = SeatInfo {
            player: None,
            name: "Advanced".into(),
            ai: Some("advanced".into()),
            rating: None,
        };
        assert_eq!(charged(&against_ai, aborted, Side::South, PLAYED), None);
        let mut one_device = ranked();
        one_device.seats[1] = seat(1);
        assert_eq!(charged(&one_device, aborted, Side::South, PLAYED), None);
    }
}
