//! The host's flows, one a test, driven through `HostState` with the time
//! passed in and every ask answered here: what a commit, a limit or a room
//! row would say is chosen by the test, so the fenced, failed and refused
//! paths run as easily as the happy ones.

use std::sync::Arc;

use bytestring::ByteString;
use mancala_proto::bus::{GameBus, Route};
use mancala_proto::error::{CLOSE_ELSEWHERE, CLOSE_RESTART, CLOSE_ROOM_CLOSED};
use mancala_proto::game::{EndReason, GameResult, SeatInfo, TimeControl};
use mancala_rules::{KalahOptions, Pit, Position, Side, Variant};
use serde_json::Value;
use uuid::Uuid;

use super::Request;
use super::state::{Answer, Ask, Counted, Effect, HostRules, HostState, Input, Marks, Reply, Step};
use crate::game::live::{GameInfo, LiveGame};
use crate::store::{Change, CommitError, SeatCheck};

const RULES: HostRules = HostRules {
    reconnect_ms: 60_000,
    first_move_ms: 30_000,
    idle_unload_ms: 120_000,
    quick_resign_plies: 2,
};
const START: u64 = 1_000;

fn person(name: &str) -> SeatInfo {
    SeatInfo {
        player: Some(Uuid::new_v4()),
        name: name.into(),
        ai: None,
        rating: Some(1500.0),
    }
}

fn ai(level: &str) -> SeatInfo {
    SeatInfo {
        player: None,
        name: level.into(),
        ai: Some(level.into()),
        rating: None,
    }
}

fn info(seats: [SeatInfo; 2]) -> GameInfo {
    GameInfo {
        id: Uuid::new_v4(),
        variant: Variant::Kalah(KalahOptions::default()),
        rated: false,
        seats,
        time_control: None,
        room: None,
        created_ms: START,
        against_ai: false,
        casual_reason: None,
        tournament: None,
        berserk: [false; 2],
    }
}

fn between_people() -> GameInfo {
    info([person("south"), person("north")])
}

fn rated() -> GameInfo {
    GameInfo {
        rated: true,
        ..between_people()
    }
}

fn against_ai() -> GameInfo {
    GameInfo {
        against_ai: true,
        ..info([person("south"), ai("beginner")])
    }
}

fn hotseat() -> GameInfo {
    let mut game = between_people();
    game.seats[1].player = game.seats[0].player;
    game
}

fn in_room() -> GameInfo {
    GameInfo {
        room: Some(Uuid::new_v4()),
        ..between_people()
    }
}

/// Every ask answered as a healthy system would.
fn healthy(ask: &Ask) -> Answer {
    match ask {
        Ask::Commit(_) => Answer::Committed(Ok(())),
        Ask::Limit { .. } => Answer::Limit(None),
        Ask::Admit { .. } => Answer::Admitted(Ok(())),
        Ask::CreateRematch => Answer::RematchMade(Ok(Some(Uuid::new_v4()))),
        Ask::LeaveRoom { .. } => Answer::RoomLeft(true),
        Ask::RoomClosed { .. } => Answer::RoomClosed(false),
        Ask::RatingChange => Answer::RatingChange(None),
    }
}

fn store_failed() -> Answer {
    Answer::Committed(Err(CommitError::Store(Arc::new(sqlx::Error::PoolTimedOut))))
}

/// One host, its clock, and what it did: the asks it made and every
/// effect, in order.
struct Run {
    host: HostState,
    now: u64,
    asks: Vec<Ask>,
}

/// What one input came to, asks answered.
#[derive(Debug, Default)]
struct Done {
    effects: Vec<Effect>,
    asks: Vec<Ask>,
}

impl Done {
    /// The `t` of each event emitted, in order.
    fn emitted(&self) -> Vec<String> {
        self.events().into_iter().map(|(kind, _)| kind).collect()
    }

    fn events(&self) -> Vec<(String, Value)> {
        self.effects
            .iter()
            .filter_map(|effect| match effect {
                Effect::Emit { text, .. } => Some(message(text)),
                _ => None,
            })
            .collect()
    }

    fn event(&self, kind: &str) -> Value {
        let found = self.events().into_iter().find(|(t, _)| t == kind);
        found
            .unwrap_or_else(|| panic!("no {kind} in {:?}", self.emitted()))
            .1
    }

    /// The texts answered to the asker.
    fn answer(&self) -> Vec<(String, Value)> {
        let replies: Vec<_> = self
            .effects
            .iter()
            .filter_map(|effect| match effect {
                Effect::Reply(Reply::Texts(texts)) => Some(texts.iter().map(message).collect()),
                _ => None,
            })
            .collect();
        assert_eq!(replies.len(), 1, "one reply: {:?}", self.effects);
        replies.into_iter().next().unwrap_or_default()
    }

    /// The error code answered, if the answer is an error.
    fn refused(&self) -> Option<String> {
        let answer = self.answer();
        let (kind, body) = answer.first()?;
        (kind == "error").then(|| body["code"].as_str().unwrap_or_default().to_owned())
    }

    fn stop(&self) -> Option<u16> {
        self.effects.iter().find_map(|effect| match effect {
            Effect::Stop(code, _) => Some(*code),
            _ => None,
        })
    }

    fn has(&self, wanted: fn(&Effect) -> bool) -> bool {
        self.effects.iter().any(wanted)
    }

    fn commits(&self) -> Vec<&Change> {
        self.asks
            .iter()
            .filter_map(|ask| match ask {
                Ask::Commit(change) => Some(change),
                _ => None,
            })
            .collect()
    }
}

fn message(text: &ByteString) -> (String, Value) {
    let value: Value = serde_json::from_str(text).expect("JSON");
    (
        value["t"].as_str().unwrap_or_default().to_owned(),
        value["d"].clone(),
    )
}

impl Run {
    fn new(info: GameInfo) -> Run {
        Run::at(info, None)
    }

    fn at(info: GameInfo, room_closes: Option<u64>) -> Run {
        let host = HostState::new(LiveGame::new(info), RULES, START, room_closes);
        Run {
            host,
            now: START,
            asks: Vec::new(),
        }
    }

    fn player(&self, seat: Side) -> Uuid {
        self.host.live().info().seats[seat.index()]
            .player
            .expect("a person")
    }

    /// `input`, every ask answered by `answers`.
    fn with(&mut self, input: Input, mut answers: impl FnMut(&Ask) -> Answer) -> Done {
        let mut done = Done::default();
        let mut step: Step = self.host.step(input, self.now);
        loop {
            done.effects.append(&mut step.effects);
            let Some(ask) = step.ask.take() else {
                break;
            };
            let answer = answers(&ask);
            done.asks.push(ask.clone());
            self.asks.push(ask);
            step = self.host.answer(answer, self.now);
        }
        done
    }

    fn input(&mut self, input: Input) -> Done {
        self.with(input, healthy)
    }

    fn at_ms(&mut self, now: u64) -> &mut Run {
        self.now = now;
        self
    }

    fn join(&mut self, seat: Side) -> Done {
        let player = self.player(seat);
        self.input(Input::Join { player })
    }

    fn leave(&mut self, seat: Side) -> Done {
        self.input(Input::Leave { seats: vec![seat] })
    }

    fn ask(&mut self, seat: Side, request: Request) -> Done {
        self.ask_with(seat, request, healthy)
    }

    /// A seated request, every ask answered by `answers`.
    fn ask_with(
        &mut self,
        seat: Side,
        request: Request,
        answers: impl FnMut(&Ask) -> Answer,
    ) -> Done {
        let seats = vec![seat];
        self.with(Input::Seated { seats, request }, answers)
    }

    fn play(&mut self, seat: Side, pit: u8) -> Done {
        let ply = self.host.live().ply() + 1;
        self.ask(
            seat,
            Request::Move {
                pit,
                ply,
                hidden_ms: None,
            },
        )
    }

    /// Plays the first legal move for whoever is to move.
    fn play_any(&mut self) -> Done {
        let live = self.host.live();
        let seat = live.turn().expect("a game on");
        let pit = live
            .rules_game()
            .position()
            .legal_moves()
            .next()
            .expect("a move");
        self.play(seat, Pit::get(pit))
    }

    fn both_here(&mut self) {
        self.join(Side::South);
        self.join(Side::North);
    }
}

#[test]
fn a_move_is_applied_and_sent_only_once_committed() {
    let mut run = Run::new(between_people());
    run.both_here();
    let step = run.host.step(
        Input::Seated {
            seats: vec![Side::South],
            request: Request::Move {
                pit: 1,
                ply: 1,
                hidden_ms: None,
            },
        },
        START + 500,
    );
    assert!(step.effects.is_empty(), "nothing before the commit");
    assert!(matches!(
        step.ask,
        Some(Ask::Commit(Change::Move { version: 1, .. }))
    ));
    assert_eq!(run.host.live().version(), 0, "not applied yet");
    let step = run.host.answer(Answer::Committed(Ok(())), START + 510);
    let done = Done {
        effects: step.effects,
        asks: Vec::new(),
    };
    assert_eq!(done.emitted(), ["moved"]);
    assert_eq!(done.event("moved")["version"], 1);
    assert!(done.answer().is_empty(), "the event is the answer");
    assert_eq!(run.host.live().version(), 1);
    assert!(matches!(
        done.effects
            .iter()
            .find(|e| matches!(e, Effect::Emit { .. })),
        Some(Effect::Emit {
            version: Some(1),
            ..
        })
    ));
}

#[test]
fn a_move_that_was_not_saved_changes_nothing_and_says_retry() {
    let mut run = Run::new(between_people());
    run.both_here();
    let done = run.ask_with(
        Side::South,
        Request::Move {
            pit: 1,
            ply: 1,
            hidden_ms: None,
        },
        |_| store_failed(),
    );
    assert_eq!(done.refused().as_deref(), Some("unavailable"));
    assert!(done.emitted().is_empty());
    assert_eq!(run.host.live().version(), 0);
    assert_eq!(done.stop(), None, "the host goes on");
    // The retry is played.
    assert_eq!(run.play(Side::South, 1).emitted(), ["moved"]);
}

#[test]
fn a_fenced_commit_stops_the_host_and_sends_its_sockets_elsewhere() {
    let mut run = Run::new(between_people());
    run.both_here();
    let done = run.ask_with(
        Side::South,
        Request::Move {
            pit: 1,
            ply: 1,
            hidden_ms: None,
        },
        |_| Answer::Committed(Err(CommitError::Fenced)),
    );
    assert_eq!(done.refused().as_deref(), Some("unavailable"));
    assert_eq!(done.stop(), Some(CLOSE_ELSEWHERE));
    assert_eq!(run.host.live().version(), 0, "a stale host applies nothing");
}

#[test]
fn refused_and_repeated_moves_are_answered_to_the_asker_alone() {
    let mut run = Run::new(between_people());
    run.both_here();
    let wrong = run.play(Side::North, 1);
    assert_eq!(wrong.refused().as_deref(), Some("not_your_turn"));
    assert!(wrong.asks.is_empty() && wrong.emitted().is_empty());
    run.play(Side::South, 1);
    // The same move again (a retry after a lost answer): its event again.
    let again = run.ask(
        Side::South,
        Request::Move {
            pit: 1,
            ply: 1,
            hidden_ms: None,
        },
    );
    assert!(again.asks.is_empty(), "not stored twice");
    assert_eq!(again.answer()[0].0, "moved");
    // A stale ply gets the error and a fresh state.
    let stale = run.ask(
        Side::North,
        Request::Move {
            pit: 1,
            ply: 7,
            hidden_ms: None,
        },
    );
    let kinds: Vec<_> = stale.answer().into_iter().map(|(t, _)| t).collect();
    assert_eq!(kinds, ["error", "state"]);
}

#[test]
fn a_game_played_to_its_end_is_over_rated_and_analysed_for_its_watchers() {
    let mut run = Run::new(rated());
    run.both_here();
    let watchers = GameBus::encode_parts(Route::Watchers { count: 2 }, r#"{"t":"watchers"}"#);
    let heard = run.input(Input::Heard(ByteString::from(watchers)));
    assert!(heard.has(|e| matches!(e, Effect::Local(_))), "told locally");
    let mut last = Done::default();
    for _ in 0..200 {
        if run.host.live().is_over() {
            break;
        }
        last = run.play_any();
    }
    assert!(run.host.live().is_over());
    assert_eq!(last.emitted(), ["moved", "over"]);
    assert!(matches!(
        last.commits()[..],
        [Change::Move {
            ends: Some(_),
            rates: true,
            ..
        }]
    ));
    assert!(last.has(|e| matches!(e, Effect::WakeRatings)));
    assert!(last.has(|e| matches!(e, Effect::Analyse)));
    // The finished game keeps its place while its players may rematch.
    assert!(run.host.holds_place());
}

#[test]
fn a_casual_game_that_ends_wakes_no_ratings_and_an_unwatched_one_is_not_analysed() {
    let mut run = Run::new(between_people());
    run.both_here();
    run.play(Side::South, 1);
    run.play(Side::North, 1);
    let done = run.ask(Side::South, Request::Resign);
    assert_eq!(done.emitted(), ["over"]);
    assert!(matches!(
        done.commits()[..],
        [Change::End { rates: false, .. }]
    ));
    assert!(!done.has(|e| matches!(e, Effect::WakeRatings)));
    assert!(!done.has(|e| matches!(e, Effect::Analyse)));
}

#[test]
fn a_resignation_is_committed_with_the_offence_it_is() {
    let mut run = Run::new(rated());
    run.both_here();
    let south = run.player(Side::South);
    let done = run.ask(Side::South, Request::Resign);
    match done.commits()[..] {
        [
            Change::End {
                over,
                offence,
                rates,
                ..
            },
        ] => {
            assert!(!rates, "an aborted game rates nobody");
            // Before anyone moved: no result, and no rating change.
            assert_eq!(
                (over.result, over.reason),
                (GameResult::Aborted, EndReason::Resign)
            );
            // Resigning a rated game before it began picks sides.
            assert_eq!(offence.as_ref().map(|offence| offence.player), Some(south));
        }
        _ => panic!("{:?}", done.asks),
    }
    assert_eq!(done.event("over")["result"], "aborted");
    // Over is over.
    let again = run.ask(Side::North, Request::Resign);
    assert_eq!(again.refused().as_deref(), Some("game_over"));
}

#[test]
fn undo_is_counted_then_committed_and_stops_the_search_it_makes_stale() {
    let mut run = Run::new(against_ai());
    run.join(Side::South);
    let moved = run.play(Side::South, 1);
    let Some(Effect::Think { version, .. }) = moved
        .effects
        .iter()
        .find(|e| matches!(e, Effect::Think { .. }))
    else {
        panic!("the AI is asked: {:?}", moved.effects);
    };
    assert_eq!(*version, 1);
    let south = run.player(Side::South);
    let undone = run.ask(Side::South, Request::Undo);
    assert!(matches!(
        undone.asks[..],
        [
            Ask::Limit { kind: Counted::Undos, player },
            Ask::Commit(Change::Undo { ply: 0, version: 2, .. })
        ] if player == south
    ));
    assert_eq!(undone.emitted(), ["undone"]);
    assert!(undone.has(|e| matches!(e, Effect::StopThinking)));
    assert_eq!(run.host.live().ply(), 0);
    // The stale search's move is dropped; a fresh search follows it.
    let stale = run.input(Input::Thought {
        version: 1,
        seat: Side::North,
        pit: Some(1),
    });
    assert!(stale.asks.is_empty(), "{:?}", stale.asks);
}

#[test]
fn an_undo_over_the_limit_is_refused_and_stores_nothing() {
    let mut run = Run::new(hotseat());
    run.join(Side::South);
    run.play(Side::South, 1);
    let refused =
        ByteString::from(r#"{"t":"error","d":{"code":"rate_limited","message":"too many undos"}}"#);
    let done = run.with(
        Input::Seated {
            seats: vec![Side::South, Side::North],
            request: Request::Undo,
        },
        |ask| match ask {
            Ask::Limit { .. } => Answer::Limit(Some(refused.clone())),
            other => healthy(other),
        },
    );
    assert_eq!(done.refused().as_deref(), Some("rate_limited"));
    assert!(done.commits().is_empty());
    assert_eq!(run.host.live().ply(), 1);
    // Between two people there is no undo at all.
    let mut people = Run::new(between_people());
    people.both_here();
    people.play(Side::South, 1);
    let no = people.ask(Side::South, Request::Undo);
    assert_eq!(no.refused().as_deref(), Some("not_allowed"));
}

#[test]
fn the_ai_move_is_played_for_the_position_it_was_asked_about() {
    let mut run = Run::new(against_ai());
    run.join(Side::South);
    run.play(Side::South, 1);
    // A search that found nothing is asked again.
    let nothing = run.input(Input::Thought {
        version: 1,
        seat: Side::North,
        pit: None,
    });
    assert!(nothing.has(|e| matches!(e, Effect::Think { version: 1, .. })));
    let thought = run.input(Input::Thought {
        version: 1,
        seat: Side::North,
        pit: Some(1),
    });
    assert_eq!(thought.emitted(), ["moved"]);
    assert_eq!(run.host.live().ply(), 2);
    // A person cannot move for the AI's seat.
    let forged = run.play(Side::North, 2);
    assert_eq!(forged.refused().as_deref(), Some("not_allowed"));
}

#[test]
fn the_ai_move_that_is_fenced_stops_the_host() {
    let mut run = Run::new(against_ai());
    run.join(Side::South);
    run.play(Side::South, 1);
    let done = run.with(
        Input::Thought {
            version: 1,
            seat: Side::North,
            pit: Some(1),
        },
        |_| Answer::Committed(Err(CommitError::Fenced)),
    );
    assert_eq!(done.stop(), Some(CLOSE_ELSEWHERE));
}

fn finished(info: GameInfo) -> Run {
    let mut run = Run::new(info);
    run.both_here();
    run.play(Side::South, 1);
    run.ask(Side::North, Request::Resign);
    assert!(run.host.live().is_over());
    run
}

#[test]
fn a_rematch_between_two_people_is_an_offer_the_other_accepts() {
    let mut run = finished(between_people());
    let offer = run.ask(Side::South, Request::Rematch);
    assert!(matches!(offer.asks[..], [Ask::Admit { held: true }]));
    assert_eq!(offer.emitted(), ["rematch_offer"]);
    assert!(offer.answer().is_empty());
    // Asking twice changes nothing.
    assert!(run.ask(Side::South, Request::Rematch).emitted().is_empty());
    let next = Uuid::new_v4();
    let accept = run.ask_with(Side::North, Request::Rematch, |ask| match ask {
        Ask::CreateRematch => Answer::RematchMade(Ok(Some(next))),
        other => healthy(other),
    });
    assert_eq!(accept.emitted(), ["rematch"]);
    assert_eq!(accept.event("rematch")["game_id"], next.to_string());
    assert!(
        accept.has(|e| matches!(e, Effect::FreePlace)),
        "the place passes on"
    );
    assert_eq!(run.host.live().rematch(), Some(next));
    // A late ask is sent to the next game, nothing made again.
    let late = run.ask(Side::South, Request::Rematch);
    assert!(late.asks.is_empty());
    assert_eq!(late.answer()[0].0, "rematch");
}

#[test]
fn a_rematch_offer_goes_with_the_player_who_leaves() {
    let mut run = finished(between_people());
    run.ask(Side::South, Request::Rematch);
    let gone = run.leave(Side::South);
    assert_eq!(gone.emitted(), ["rematch_cancelled", "presence"]);
    // North's ask is a new offer, not an acceptance.
    let offer = run.ask(Side::North, Request::Rematch);
    assert_eq!(offer.emitted(), ["rematch_offer"]);
    assert!(
        !offer
            .asks
            .iter()
            .any(|ask| matches!(ask, Ask::CreateRematch))
    );
}

#[test]
fn a_busy_instance_refuses_a_rematch_and_a_game_on_has_none() {
    let mut on = Run::new(between_people());
    on.both_here();
    let early = on.ask(Side::South, Request::Rematch);
    assert_eq!(early.refused().as_deref(), Some("not_allowed"));
    // A casual game on one device: its rematch needs no agreement.
    let mut run = finished(hotseat());
    let busy = ByteString::from(r#"{"t":"error","d":{"code":"busy","message":"full"}}"#);
    let done = run.ask_with(Side::South, Request::Rematch, |ask| match ask {
        Ask::Admit { .. } => Answer::Admitted(Err(busy.clone())),
        other => healthy(other),
    });
    assert_eq!(done.refused().as_deref(), Some("busy"));
    assert!(
        !done
            .asks
            .iter()
            .any(|ask| matches!(ask, Ask::CreateRematch))
    );
}

#[test]
fn a_rematch_that_cannot_be_made_says_so() {
    let mut run = finished(hotseat());
    let failed = run.ask_with(Side::South, Request::Rematch, |ask| match ask {
        Ask::CreateRematch => Answer::RematchMade(Err(())),
        other => healthy(other),
    });
    assert_eq!(failed.refused().as_deref(), Some("unavailable"));
    let closed = run.ask_with(Side::South, Request::Rematch, |ask| match ask {
        Ask::CreateRematch => Answer::RematchMade(Ok(None)),
        other => healthy(other),
    });
    assert_eq!(closed.refused().as_deref(), Some("not_allowed"));
    // The next tick tells everyone the room closed.
    let tick = run.input(Input::Tick);
    assert_eq!(tick.stop(), Some(CLOSE_ROOM_CLOSED));
}

#[test]
fn an_absent_opponent_has_the_reconnect_window_then_can_be_claimed_against() {
    let mut run = Run::new(rated());
    run.both_here();
    run.play(Side::South, 1);
    run.play(Side::North, 1);
    run.at_ms(10_000);
    let gone = run.leave(Side::North);
    assert!(
        gone.has(|e| matches!(e, Effect::Mark(marks) if marks.presence == Some([true, false])))
    );
    assert_eq!(gone.event("presence")["countdown_ms"], 60_000);
    run.at_ms(40_000);
    let early = run.ask(Side::South, Request::ClaimVictory);
    assert_eq!(early.refused().as_deref(), Some("countdown_running"));
    assert!(
        early.answer()[0].1["message"]
            .as_str()
            .is_some_and(|text| text.contains("30 s"))
    );
    run.at_ms(70_000);
    let claimed = run.ask(Side::South, Request::ClaimVictory);
    match claimed.commits()[..] {
        [Change::End { over, offence, .. }] => {
            assert_eq!(
                (over.result, over.reason),
                (GameResult::P0, EndReason::Abandoned)
            );
            assert!(offence.is_some(), "leaving a rated game is an offence");
        }
        _ => panic!("{:?}", claimed.asks),
    }
    assert_eq!(claimed.emitted(), ["over"]);
}

#[test]
fn a_player_who_is_here_cannot_be_claimed_against() {
    let mut run = Run::new(between_people());
    run.both_here();
    let done = run.ask(Side::South, Request::ClaimVictory);
    assert_eq!(done.refused().as_deref(), Some("not_allowed"));
    let mut ai = Run::new(against_ai());
    ai.join(Side::South);
    let done = ai.ask(Side::South, Request::ContinueVsAi);
    assert_eq!(done.refused().as_deref(), Some("not_allowed"));
}

#[test]
fn an_ai_takes_over_the_absent_seat_and_plays_on() {
    let mut run = Run::new(between_people());
    run.both_here();
    run.play(Side::South, 1);
    run.leave(Side::North);
    run.at_ms(START + 60_000);
    let done = run.ask(Side::South, Request::ContinueVsAi);
    assert!(matches!(
        done.commits()[..],
        [Change::TakeOver {
            seat: Side::North,
            version: 2,
            ..
        }]
    ));
    assert_eq!(done.emitted(), ["taken_over"]);
    assert!(run.host.live().info().is_ai(Side::North));
    // It is the AI's turn: a search is asked at once.
    assert!(done.has(|e| matches!(
        e,
        Effect::Think {
            seat: Side::North,
            ..
        }
    )));
    // The player who left is not seated any more.
    let north = run.player(Side::North);
    assert!(run.host.live().replaced(north));
    assert!(run.host.live().seats_of(north).is_empty());
}

#[test]
fn a_stranger_is_refused_and_a_seat_an_ai_took_is_not_the_sockets_any_more() {
    let mut run = Run::new(between_people());
    let stranger = run.input(Input::Join {
        player: Uuid::new_v4(),
    });
    assert!(matches!(
        stranger.effects[..],
        [Effect::Reply(Reply::Refused(ref refusal))] if refusal.code == mancala_proto::ErrorCode::Forbidden
    ));
    let check = run.input(Input::SeatCheck {
        player: run.player(Side::South),
    });
    assert!(matches!(
        check.effects[..],
        [Effect::Reply(Reply::SeatCheck(SeatCheck::Seated))]
    ));
    let joined = run.join(Side::South);
    let Some(Effect::Reply(Reply::Joined { seats, state, .. })) = joined.effects.first() else {
        panic!("{:?}", joined.effects);
    };
    assert_eq!(seats, &[Side::South]);
    assert_eq!(message(state).0, "state");
    assert_eq!(joined.emitted(), ["presence"]);
    assert!(joined.has(|e| matches!(e, Effect::Mark(marks) if marks.occupied)));
}

/// The marks of one step: every Redis write a socket's coming or going
/// costs the host (`Effect::Mark` is one batch).
fn marks_of(done: &Done) -> Vec<&Marks> {
    done.effects
        .iter()
        .filter_map(|effect| match effect {
            Effect::Mark(marks) => Some(marks),
            _ => None,
        })
        .collect()
}

#[test]
fn a_socket_coming_or_going_costs_the_host_one_redis_write_with_who_is_connected_in_it() {
    let mut run = Run::new(between_people());
    let (south, north) = (run.player(Side::South), run.player(Side::North));
    run.join(Side::South);
    let joined = run.join(Side::North);
    let [marks] = marks_of(&joined)[..] else {
        panic!("{:?}", joined.effects);
    };
    assert_eq!(marks.presence, Some([true, true]));
    assert_eq!(marks.here, [(south, true), (north, true)]);
    assert!(marks.occupied);
    // A second tab of the same seat changes nobody's presence.
    let second_tab = run.join(Side::North);
    let [marks] = marks_of(&second_tab)[..] else {
        panic!("{:?}", second_tab.effects);
    };
    assert_eq!(marks.presence, None);
    assert!(second_tab.emitted().is_empty());
    let one_tab_closed = run.leave(Side::North);
    assert_eq!(marks_of(&one_tab_closed)[0].presence, None);
    let gone = run.leave(Side::North);
    let [marks] = marks_of(&gone)[..] else {
        panic!("{:?}", gone.effects);
    };
    assert_eq!(marks.presence, Some([true, false]));
    assert_eq!(marks.gone, [north]);
}

#[test]
fn a_finished_rated_game_reads_its_rating_change_back_for_a_late_page() {
    let mut run = finished(rated());
    run.leave(Side::South);
    let change = ByteString::from(r#"{"t":"rating_change","d":{"changes":[]}}"#);
    let player = run.player(Side::South);
    let joined = run.with(Input::Join { player }, |ask| match ask {
        Ask::RatingChange => Answer::RatingChange(Some(change.clone())),
        other => healthy(other),
    });
    assert!(matches!(joined.asks[..], [Ask::RatingChange]));
    assert!(joined.has(|e| matches!(
        e,
        Effect::Reply(Reply::Joined {
            rating_change: Some(_),
            ..
        })
    )));
    // Known now: the next page is not a second read.
    let again = run.join(Side::South);
    assert!(again.asks.is_empty());
}

#[test]
fn time_alone_ends_a_game_whose_first_move_never_came() {
    let mut run = Run::new(rated());
    run.join(Side::South);
    run.at_ms(START + 29_999);
    assert!(run.input(Input::Tick).asks.is_empty());
    run.at_ms(START + 30_000);
    let done = run.input(Input::Tick);
    match done.commits()[..] {
        [Change::End { over, .. }] => assert_eq!(over.reason, EndReason::NoStart),
        _ => panic!("{:?}", done.asks),
    }
    assert_eq!(done.emitted(), ["over"]);
    assert_eq!(done.stop(), None);
}

#[test]
fn a_flag_that_falls_ends_the_game_at_the_tick_or_at_the_late_move() {
    let timed = GameInfo {
        time_control: Some(TimeControl {
            initial_secs: 10,
            increment_secs: 0,
        }),
        ..between_people()
    };
    // Each side's clock runs from its first move on.
    let mut run = Run::new(timed.clone());
    run.both_here();
    run.play(Side::South, 1);
    run.play(Side::North, 1);
    run.at_ms(START + 20_000);
    let late = run.play(Side::South, 2);
    assert_eq!(late.refused().as_deref(), Some("game_over"));
    assert_eq!(late.emitted(), ["over"]);
    assert_eq!(late.event("over")["reason"], "timeout");
    // The same flag, found by the tick; a failed store is tried again.
    let mut run = Run::new(timed);
    run.both_here();
    run.play(Side::South, 1);
    run.play(Side::North, 1);
    run.at_ms(START + 20_000);
    let failed = run.with(Input::Tick, |_| store_failed());
    assert!(failed.emitted().is_empty());
    assert!(!run.host.live().is_over());
    let retried = run.input(Input::Tick);
    assert_eq!(retried.emitted(), ["over"]);
}

#[test]
fn a_game_nobody_is_at_unloads_after_the_idle_window_unless_the_ai_thinks() {
    let mut run = Run::new(against_ai());
    run.join(Side::South);
    run.play(Side::South, 1);
    run.at_ms(START + 10_000);
    run.leave(Side::South);
    run.at_ms(START + 10_000 + 120_000);
    assert_eq!(
        run.input(Input::Tick).stop(),
        None,
        "the AI's move is coming"
    );
    run.input(Input::Thought {
        version: 1,
        seat: Side::North,
        pit: None,
    });
    let mut idle = Run::new(between_people());
    idle.at_ms(START + 119_999);
    assert_eq!(idle.input(Input::Tick).stop(), None);
    idle.at_ms(START + 120_000);
    assert_eq!(idle.input(Input::Tick).stop(), Some(CLOSE_RESTART));
    // A finished game outside a room goes within seconds.
    let mut done = finished(between_people());
    done.leave(Side::South);
    done.leave(Side::North);
    let left = done.now;
    done.at_ms(left + 10_000);
    assert_eq!(done.input(Input::Tick).stop(), Some(CLOSE_RESTART));
}

#[test]
fn a_finished_game_frees_its_place_once_a_rematch_can_no_longer_come() {
    let mut run = finished(between_people());
    assert!(run.host.holds_place());
    let ended = run.now;
    run.at_ms(ended + 9_000);
    run.input(Input::Tick);
    assert!(run.host.holds_place(), "its players may still ask");
    run.at_ms(ended + 10_000);
    let tick = run.input(Input::Tick);
    assert!(tick.has(|e| matches!(e, Effect::FreePlace)));
    assert!(!run.host.holds_place());
    // Everyone gone: at once.
    let mut run = finished(between_people());
    run.leave(Side::South);
    let gone = run.leave(Side::North);
    assert!(gone.has(|e| matches!(e, Effect::FreePlace)));
}

#[test]
fn a_player_who_walks_out_of_a_finished_room_game_leaves_the_room() {
    let mut run = finished(in_room());
    let away = run.now;
    run.leave(Side::North);
    run.at_ms(away + 59_999);
    assert!(run.input(Input::Tick).asks.is_empty());
    run.at_ms(away + 60_000);
    let tick = run.input(Input::Tick);
    assert!(matches!(tick.asks[..], [Ask::LeaveRoom { .. }]));
    assert_eq!(tick.emitted(), ["room_left"]);
    let refused = run.ask(Side::South, Request::Rematch);
    assert_eq!(refused.refused().as_deref(), Some("not_allowed"));
}

#[test]
fn leaving_a_room_is_refused_until_the_game_is_over_and_retried_if_not_stored() {
    let mut run = Run::new(in_room());
    run.both_here();
    let early = run.ask(Side::South, Request::LeaveRoom);
    assert_eq!(early.refused().as_deref(), Some("not_allowed"));
    run.ask(Side::South, Request::Resign);
    let failed = run.ask_with(Side::South, Request::LeaveRoom, |_| Answer::RoomLeft(false));
    assert_eq!(failed.refused().as_deref(), Some("unavailable"));
    let left = run.ask(Side::South, Request::LeaveRoom);
    assert_eq!(left.emitted(), ["room_left"]);
    assert!(run.ask(Side::South, Request::LeaveRoom).answer().is_empty());
}

#[test]
fn a_room_whose_time_is_up_closes_its_game() {
    let mut run = Run::at(in_room(), Some(5_000));
    run.both_here();
    run.at_ms(5_000);
    let done = run.input(Input::Tick);
    match done.commits()[..] {
        [Change::End { over, .. }] => assert_eq!(over.reason, EndReason::RoomClosed),
        _ => panic!("{:?}", done.asks),
    }
    assert_eq!(done.emitted(), ["over"]);
    assert!(done.has(|e| matches!(e, Effect::CloseExpiredRooms { now: 5_000 })));
    assert_eq!(done.stop(), Some(CLOSE_ROOM_CLOSED));
}

#[test]
fn a_room_closed_by_the_sweeper_first_is_the_same_end_and_any_other_fence_moves_away() {
    for (swept, code) in [(true, CLOSE_ROOM_CLOSED), (false, CLOSE_ELSEWHERE)] {
        let mut run = Run::at(in_room(), Some(5_000));
        run.both_here();
        run.at_ms(5_000);
        let done = run.with(Input::Tick, |ask| match ask {
            Ask::Commit(_) => Answer::Committed(Err(CommitError::Fenced)),
            Ask::RoomClosed { .. } => Answer::RoomClosed(swept),
            other => healthy(other),
        });
        assert_eq!(done.stop(), Some(code));
        assert_eq!(run.host.live().is_over(), swept);
    }
}

#[test]
fn a_hint_is_counted_and_answered_with_its_search() {
    let mut run = Run::new(against_ai());
    run.join(Side::South);
    let done = run.input(Input::Hint {
        seats: vec![Side::South],
    });
    assert!(matches!(
        done.asks[..],
        [Ask::Limit {
            kind: Counted::Hints,
            ..
        }]
    ));
    assert!(matches!(
        done.effects[..],
        [Effect::Reply(Reply::Hint(Ok((1, _))))]
    ));
    let not_yours = run.input(Input::Hint {
        seats: vec![Side::North],
    });
    assert!(matches!(
        not_yours.effects[..],
        [Effect::Reply(Reply::Hint(Err(_)))]
    ));
}

#[test]
fn sync_replays_what_was_missed_or_sends_a_fresh_state() {
    let mut run = Run::new(between_people());
    run.both_here();
    run.play(Side::South, 1);
    run.play(Side::North, 1);
    let sync = |run: &mut Run, since| {
        let done = run.input(Input::Sync {
            since,
            you: Some(Side::South),
        });
        done.answer()
            .into_iter()
            .map(|(t, _)| t)
            .collect::<Vec<_>>()
    };
    assert_eq!(sync(&mut run, 0), ["moved", "moved"]);
    assert_eq!(sync(&mut run, 1), ["moved"]);
    assert!(sync(&mut run, 2).is_empty());
}

#[test]
fn a_drain_stops_the_host_for_a_restart() {
    let mut run = Run::new(between_people());
    assert_eq!(run.input(Input::Drain).stop(), Some(CLOSE_RESTART));
}

#[test]
fn an_ai_that_moves_first_is_asked_as_the_host_starts_and_renewals_mark_the_lobby() {
    let mut run = Run::new(info([ai("beginner"), person("north")]));
    let started = run.input(Input::Started { watchers: 0 });
    assert!(started.has(|e| matches!(
        e,
        Effect::Think {
            seat: Side::South,
            version: 0,
            ..
        }
    )));
    // One search at a time.
    assert!(
        !run.input(Input::Tick)
            .has(|e| matches!(e, Effect::Think { .. }))
    );
    run.join(Side::North);
    let renewing = run.input(Input::Renewing);
    assert!(matches!(
        renewing.effects[..],
        [Effect::Mark(ref marks)] if marks.here == [(run.player(Side::North), true)]
    ));
}

#[test]
fn berserk_halves_the_clock_and_drops_the_increment_only_in_an_arena_before_the_first_move() {
    let arena = GameInfo {
        time_control: Some(TimeControl {
            initial_secs: 180,
            increment_secs: 2,
        }),
        tournament: Some(Uuid::new_v4()),
        ..between_people()
    };
    let mut run = Run::new(arena.clone());
    run.both_here();
    let done = run.ask(Side::North, Request::Berserk);
    assert!(
        matches!(
            done.commits()[..],
            [Change::Berserk {
                seat: Side::North,
                ..
            }]
        ),
        "{:?}",
        done.asks
    );
    let event = done.event("berserked");
    assert_eq!(
        (event["seat"].as_u64(), event["clock_ms"].as_u64()),
        (Some(1), Some(90_000))
    );
    // Once.
    let again = run.ask(Side::North, Request::Berserk);
    assert_eq!(again.refused().as_deref(), Some("not_allowed"));
    // Each side's first move; North is credited no increment, South is.
    run.play(Side::South, 1);
    run.at_ms(START + 5_000);
    run.play(Side::North, 1);
    run.at_ms(START + 8_000);
    run.play(Side::South, 2);
    let clocks = run.host.live().clocks(START + 8_000).unwrap();
    assert_eq!(clocks.remaining_ms, [180_000 - 3_000 + 2_000, 90_000]);
    // After a first move: too late.
    let late = run.ask(Side::South, Request::Berserk);
    assert_eq!(late.refused().as_deref(), Some("not_allowed"));
    // Outside a tournament: refused, nothing stored.
    let mut casual = Run::new(GameInfo {
        tournament: None,
        ..arena
    });
    casual.both_here();
    let refused = casual.ask(Side::South, Request::Berserk);
    assert_eq!(refused.refused().as_deref(), Some("not_allowed"));
    assert!(refused.commits().is_empty());
}
