//! The model's decisions, one rule a test, under given times.

use mancala_rules::KalahOptions;

use super::*;

fn seat(name: &str) -> SeatInfo {
    SeatInfo {
        player: Some(Uuid::new_v4()),
        name: name.into(),
        ai: None,
        rating: None,
    }
}

fn info(time_control: Option<TimeControl>) -> GameInfo {
    GameInfo {
        id: Uuid::new_v4(),
        variant: Variant::Kalah(KalahOptions::default()),
        rated: false,
        seats: [seat("south"), seat("north")],
        time_control,
        room: None,
        created_ms: 1_000,
        against_ai: false,
        casual_reason: None,
        tournament: None,
        berserk: [false; 2],
    }
}

fn play_at(game: &mut LiveGame, seat: Side, pit: u8, now: u64) -> Moved {
    let ply = game.ply() + 1;
    match game.decide_move(seat, pit, ply, now).unwrap() {
        MoveDecision::Play(planned) => game.apply(*planned).0,
        MoveDecision::Duplicate { .. } => panic!("duplicate"),
    }
}

fn play(game: &mut LiveGame, seat: Side, pit: u8) -> Moved {
    play_at(game, seat, pit, 2_000)
}

fn stored(game: &LiveGame) -> Vec<StoredMove> {
    game.moves.clone()
}

#[test]
fn moves_are_checked_in_order_of_what_the_client_got_wrong() {
    let mut game = LiveGame::new(info(None));
    // Kalah 6x4: pit 3 sows into the store, an extra turn.
    let moved = play(&mut game, Side::South, 3);
    assert!(moved.extra_turn);
    assert_eq!(
        (moved.ply, moved.version, moved.turn),
        (1, 1, Some(Side::South))
    );
    let refuse = |game: &LiveGame, seat, pit, ply| game.decide_move(seat, pit, ply, 0).unwrap_err();
    assert_eq!(
        refuse(&game, Side::North, 1, 2).code,
        ErrorCode::NotYourTurn
    );
    let stale = refuse(&game, Side::South, 1, 5);
    assert_eq!((stale.code, stale.resync), (ErrorCode::StalePly, true));
    assert_eq!(refuse(&game, Side::South, 3, 2).code, ErrorCode::EmptyPit);
    assert_eq!(
        refuse(&game, Side::South, 7, 2).code,
        ErrorCode::PitOutOfRange
    );
    assert!(matches!(
        game.decide_move(Side::South, 3, 1, 0),
        Ok(MoveDecision::Duplicate { ply: 1 })
    ));
    assert_eq!(refuse(&game, Side::South, 4, 1).code, ErrorCode::StalePly);
}

#[test]
fn a_replayed_game_equals_the_one_played() {
    let mut game = LiveGame::new(info(Some(TimeControl {
        initial_secs: 60,
        increment_secs: 2,
    })));
    let mut seed = 7u64;
    let mut now = 1_000;
    while !game.is_over() {
        let state = game.state(None, [true; 2], 0, [None; 2], now);
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let pit = state.legal[(seed >> 33) as usize % state.legal.len()];
        now += 700;
        play_at(&mut game, state.turn.unwrap(), pit, now);
    }
    let over = *game.over().unwrap();
    assert_eq!(over.version, game.version());
    let replayed = LiveGame::replay(
        game.info().clone(),
        &stored(&game),
        StoredEnd {
            version: game.version(),
            ..StoredEnd::default()
        },
    )
    .unwrap();
    assert_eq!(replayed.over(), Some(&over));
    assert_eq!(
        replayed.state(Some(Side::South), [true; 2], 3, [None; 2], now),
        game.state(Some(Side::South), [true; 2], 3, [None; 2], now)
    );
    assert_eq!(
        game.decide_move(Side::South, 1, game.ply() + 1, now)
            .unwrap_err()
            .code,
        ErrorCode::GameOver
    );
}

#[test]
fn clocks_run_once_each_side_has_moved_and_flags_fall() {
    let mut game = LiveGame::new(info(Some(TimeControl {
        initial_secs: 10,
        increment_secs: 1,
    })));
    // Before the first moves no clock runs, and none falls.
    assert_eq!(game.clocks(50_000).unwrap().running, None);
    assert_eq!(game.flag_fall(50_000), None);
    let moved = play_at(&mut game, Side::South, 1, 2_000);
    let clocks = moved.clocks.unwrap();
    assert_eq!(
        (clocks.remaining_ms, clocks.running),
        ([10_000, 10_000], None)
    );
    // North's first move takes 40 s: still no clock (the first-move
    // window governs it); now South's clock runs.
    assert_eq!(game.flag_fall(41_000), None);
    let moved = play_at(&mut game, Side::North, 1, 42_000);
    let clocks = moved.clocks.unwrap();
    assert_eq!(
        (clocks.remaining_ms, clocks.running),
        ([10_000, 10_000], Some(Side::South))
    );
    // South thinks 3 s: 7 s left, plus the increment.
    let moved = play_at(&mut game, Side::South, 3, 45_000);
    assert_eq!(moved.clocks.unwrap().remaining_ms, [8_000, 10_000]);
    // North lets 10 s pass: the flag falls, South wins, rated.
    assert_eq!(game.flag_fall(54_999), None);
    let over = game.flag_fall(55_000).unwrap();
    assert_eq!(
        (over.result, over.reason),
        (GameResult::P0, EndReason::Timeout)
    );
}

fn assert_aborted_no_start(over: Option<Over>) {
    let over = over.expect("an end");
    assert_eq!(
        (over.result, over.reason),
        (GameResult::Aborted, EndReason::NoStart)
    );
}

#[test]
fn a_side_that_never_moves_in_its_window_aborts_the_game() {
    let mut game = LiveGame::new(info(Some(TimeControl {
        initial_secs: 300,
        increment_secs: 0,
    })));
    // South's window runs from the game's creation (1 s).
    assert_eq!(game.first_move_missed(30_999, 30_000), None);
    assert_aborted_no_start(game.first_move_missed(31_000, 30_000));
    // South moves at 20 s; North's window runs from then, and North's
    // five-minute clock never starts: North cannot lose on time.
    play_at(&mut game, Side::South, 1, 20_000);
    assert_eq!(game.first_move_missed(49_999, 30_000), None);
    assert_eq!(game.flag_fall(400_000), None);
    assert_aborted_no_start(game.first_move_missed(50_000, 30_000));
    // Once North has moved, the window is over for good.
    play_at(&mut game, Side::North, 1, 45_000);
    assert_eq!(game.first_move_missed(10_000_000, 30_000), None);
}

#[test]
fn an_untimed_casual_game_has_no_first_move_window() {
    let mut casual = info(None);
    casual.rated = false;
    let game = LiveGame::new(casual.clone());
    assert_eq!(game.first_move_missed(10_000_000, 30_000), None);
    // Timed, or asked for as rated, it has.
    casual.time_control = Some(TimeControl {
        initial_secs: 600,
        increment_secs: 0,
    });
    assert!(
        LiveGame::new(casual)
            .first_move_missed(31_000, 30_000)
            .is_some()
    );
    let mut capped = info(None);
    capped.rated = false;
    capped.casual_reason = Some(CasualReason::PairLimit);
    assert!(
        LiveGame::new(capped)
            .first_move_missed(31_000, 30_000)
            .is_some()
    );
}

#[test]
fn an_extra_turn_before_the_opponents_first_move_is_in_the_window_too() {
    let mut ranked = info(None);
    ranked.rated = true;
    let mut game = LiveGame::new(ranked);
    // Kalah pit 3 from the start: an extra turn for South.
    play_at(&mut game, Side::South, 3, 5_000);
    assert_eq!(game.turn(), Some(Side::South));
    assert_eq!(game.first_move_missed(34_999, 30_000), None);
    assert!(game.first_move_missed(35_000, 30_000).is_some());
}

#[test]
fn ends_before_each_side_has_moved_are_aborts() {
    let game = LiveGame::new(info(None));
    let resigned = game.decide_resign(Side::South).unwrap();
    assert_eq!(
        (resigned.result, resigned.reason),
        (GameResult::Aborted, EndReason::Resign)
    );
    let mut game = LiveGame::new(info(None));
    play(&mut game, Side::South, 1);
    // North never moved: North's resignation, or South's claim against
    // North, ends nothing but the game.
    assert_eq!(
        game.decide_resign(Side::North).unwrap().result,
        GameResult::Aborted
    );
    let claimed = game.claim(Side::South);
    assert_eq!(
        (claimed.result, claimed.reason),
        (GameResult::Aborted, EndReason::Abandoned)
    );
    play(&mut game, Side::North, 1);
    assert_eq!(
        game.decide_resign(Side::North).unwrap().result,
        GameResult::P0
    );
    assert_eq!(game.claim(Side::South).result, GameResult::P0);
}

#[test]
fn undo_against_the_ai_takes_back_the_humans_move_and_the_replies() {
    let mut against_ai = info(None);
    against_ai.against_ai = true;
    against_ai.seats[1].ai = Some("advanced".into());
    let mut game = LiveGame::new(against_ai);
    play(&mut game, Side::South, 1); // human
    play(&mut game, Side::North, 3); // AI: an extra turn
    play(&mut game, Side::North, 1); // AI again
    assert_eq!(game.decide_undo(&[Side::South]), Ok(0));
    let undone = game.apply_undo(0, 5_000);
    assert_eq!(
        (undone.ply, undone.turn, undone.version),
        (0, Some(Side::South), 4)
    );
    assert_eq!(undone.board.pits, [[4; 6], [4; 6]]);
    // Taken back to the start, it is still a game that was played: no
    // first-move window aborts it, and its ends keep their result.
    assert!(game.played());
    assert_eq!(game.first_move_missed(10_000_000, 30_000), None);
    assert_eq!(
        game.decide_resign(Side::South).unwrap().result,
        GameResult::P1
    );
    assert_eq!(
        game.decide_undo(&[Side::South]).unwrap_err().code,
        ErrorCode::NotAllowed
    );
    // Between two players there is no undo.
    let human = LiveGame::new(info(None));
    assert_eq!(
        human.decide_undo(&[Side::South]).unwrap_err().code,
        ErrorCode::NotAllowed
    );
}

#[test]
fn hints_are_for_the_side_to_move_where_nobody_else_plays() {
    let mut against_ai = info(None);
    against_ai.against_ai = true;
    against_ai.seats[1].ai = Some("advanced".into());
    let mut game = LiveGame::new(against_ai);
    assert_eq!(game.decide_hint(&[Side::South]), Ok(Side::South));
    play(&mut game, Side::South, 1);
    assert_eq!(
        game.decide_hint(&[Side::South]).unwrap_err().code,
        ErrorCode::NotYourTurn
    );
    // On one device, for whichever side is to move.
    let mut hotseat = info(None);
    hotseat.seats[1].player = hotseat.seats[0].player;
    let mut game = LiveGame::new(hotseat);
    play(&mut game, Side::South, 1);
    assert_eq!(
        game.decide_hint(&[Side::South, Side::North]),
        Ok(Side::North)
    );
    // Between two people, rated or not, never; nor after the end.
    for rated in [false, true] {
        let mut people = info(None);
        people.rated = rated;
        let game = LiveGame::new(people);
        assert_eq!(
            game.decide_hint(&[Side::South]).unwrap_err().code,
            ErrorCode::NotAllowed
        );
    }
    let mut over = LiveGame::new(info(None));
    let resigned = over.decide_resign(Side::South).unwrap();
    over.finish(resigned);
    assert_eq!(
        over.decide_hint(&[Side::North]).unwrap_err().code,
        ErrorCode::GameOver
    );
}

#[test]
fn hotseat_undo_takes_back_one_move() {
    let mut hotseat = info(None);
    hotseat.seats[1].player = hotseat.seats[0].player;
    let mut game = LiveGame::new(hotseat);
    play(&mut game, Side::South, 1);
    play(&mut game, Side::North, 2);
    assert_eq!(game.decide_undo(&[Side::South, Side::North]), Ok(1));
    let undone = game.apply_undo(1, 3_000);
    assert_eq!((undone.ply, undone.turn), (1, Some(Side::North)));
    assert_eq!(undone.last_move.unwrap().pit, 1);
}

#[test]
fn resigning_and_claiming_end_the_game() {
    let mut game = LiveGame::new(info(None));
    play(&mut game, Side::South, 1);
    play(&mut game, Side::North, 1);
    let over = game.decide_resign(Side::North).unwrap();
    assert_eq!(
        (over.result, over.reason, over.version),
        (GameResult::P0, EndReason::Resign, 3)
    );
    game.finish(over);
    assert_eq!(game.turn(), None);
    assert_eq!(
        game.decide_resign(Side::South).unwrap_err().code,
        ErrorCode::GameOver
    );
    let replayed = LiveGame::replay(
        game.info().clone(),
        &stored(&game),
        StoredEnd {
            ending: Some((GameResult::P0, EndReason::Resign)),
            version: 3,
            ..StoredEnd::default()
        },
    )
    .unwrap();
    assert_eq!(replayed.over(), Some(&over));
    assert!(replayed.played());
}

#[test]
fn an_undone_game_remembers_it_was_played_when_reloaded() {
    let mut hotseat = info(None);
    hotseat.seats[1].player = hotseat.seats[0].player;
    let game = LiveGame::replay(
        hotseat,
        &[],
        StoredEnd {
            version: 5,
            moved: [true, true],
            ..StoredEnd::default()
        },
    )
    .unwrap();
    assert_eq!(game.ply(), 0);
    assert!(game.played());
    assert_eq!(game.first_move_missed(10_000_000, 30_000), None);
    // Not yet played, undone to the start at 50 s: the window runs from
    // the undo, after a reload too (timed: an untimed one has no window).
    let mut hotseat = info(Some(TimeControl {
        initial_secs: 600,
        increment_secs: 0,
    }));
    hotseat.seats[1].player = hotseat.seats[0].player;
    let game = LiveGame::replay(
        hotseat,
        &[],
        StoredEnd {
            version: 2,
            moved: [true, false],
            turn_started: Some(50_000),
            ..StoredEnd::default()
        },
    )
    .unwrap();
    assert_eq!(game.first_move_missed(79_999, 30_000), None);
    assert!(game.first_move_missed(80_000, 30_000).is_some());
}

#[test]
fn a_replaced_player_holds_no_seat() {
    let mut ranked = info(None);
    ranked.rated = true;
    let north = ranked.seats[1].player.unwrap();
    let mut game = LiveGame::new(ranked);
    assert_eq!(game.seats_of(north), [Side::North]);
    assert!(!game.replaced(north));
    game.take_over(Side::North, "advanced");
    assert!(game.seats_of(north).is_empty());
    assert!(game.replaced(north));
    assert!(!game.replaced(game.info().seats[0].player.unwrap()));
}

#[test]
fn a_takeover_makes_the_game_casual() {
    let mut ranked = info(None);
    ranked.rated = true;
    let mut game = LiveGame::new(ranked);
    assert_eq!(game.take_over(Side::North, "advanced"), 1);
    assert!(!game.info().rated);
    assert!(game.info().is_ai(Side::North));
}

#[test]
fn corrupt_rows_do_not_replay() {
    let game = LiveGame::new(info(None));
    let bad = [StoredMove {
        played: PlayedMove {
            ply: 1,
            seat: Side::North,
            pit: 1,
        },
        clock_ms: None,
        at_ms: 0,
        hidden_ms: None,
    }];
    let end = StoredEnd {
        version: 1,
        ..StoredEnd::default()
    };
    assert!(LiveGame::replay(game.info().clone(), &bad, end).is_err());
}

#[test]
fn the_player_can_undo_only_with_a_move_of_their_own_to_take_back() {
    // Against the AI, moving second: the AI's opening is not the
    // person's to take back.
    let mut against_ai = info(None);
    against_ai.against_ai = true;
    against_ai.seats[0] = SeatInfo {
        player: None,
        name: "AI".into(),
        ai: Some("beginner".into()),
        rating: None,
    };
    let mut game = LiveGame::new(against_ai);
    assert!(!game.undoable());
    let moved = play(&mut game, Side::South, 1);
    assert!(!moved.undoable, "the AI moved, the person has not");
    let moved = play(&mut game, Side::North, 1);
    assert!(moved.undoable);
    let undone = game.apply_undo(game.decide_undo(&[Side::North]).unwrap(), 3_000);
    assert!(!undone.undoable, "back to before the person's only move");

    // On one device: any move played.
    let mut hotseat = info(None);
    hotseat.seats[1].player = hotseat.seats[0].player;
    let mut game = LiveGame::new(hotseat);
    assert!(!game.state(None, [true; 2], 0, [None; 2], 0).undoable);
    assert!(play(&mut game, Side::South, 1).undoable);

    // Between people, even once an AI holds a seat: never.
    let mut game = LiveGame::new(info(None));
    play(&mut game, Side::South, 1);
    game.take_over(Side::North, "beginner");
    assert!(!play(&mut game, Side::North, 1).undoable);
}

#[test]
fn only_kalah_grants_an_extra_turn_and_a_mangala_pass_is_not_one() {
    // Mangala games played by a fixed rule until one side has to pass.
    let mut passes = 0;
    for rule in 0..200_u64 {
        let mut mangala = info(None);
        mangala.variant = Variant::Mangala;
        let mut game = LiveGame::new(mangala);
        while let Some(turn) = game.turn() {
            let legal = legal(game.game.position());
            let pit = legal[((game.ply() as u64 * 7 + rule) % legal.len() as u64) as usize];
            let moved = play(&mut game, turn, pit);
            assert!(!moved.extra_turn, "Mangala has no extra turns");
            if moved.turn == Some(turn) {
                passes += 1;
            }
        }
    }
    assert!(passes > 0, "no game of the sample had a pass");
}
