//! What a seated player (or the AI) asks of a game: moves, resignations,
//! undos, what follows an absent opponent's countdown, rematches. Each is
//! decided by the pure model (`live`), committed, and only then applied
//! and sent; a refusal changes nothing and is answered to the asker alone.

use bytestring::ByteString;
use mancala_platform::socket::error_text;
use mancala_proto::ErrorCode;
use mancala_proto::game::{Over, ServerMessage};
use mancala_rules::Side;

use super::Request;
use super::encode;
use super::state::{Ask, Counted, Effect, Flow, HostState, Pending, Reply, Then};
use crate::game::fair_play::{self, AtTheEnd};
use crate::game::live::MoveDecision;
use crate::game::rematch;
use crate::store::{Change, CommitError, OffenceRow};

impl HostState {
    /// Carries out a seated request for `seat`.
    pub(super) fn request(&mut self, seat: Side, seats: &[Side], request: Request) -> Flow {
        match request {
            Request::Move {
                pit,
                ply,
                hidden_ms,
            } => self.play(seat, pit, ply, false, hidden_ms),
            Request::Resign => self.resign(seat),
            Request::Undo => self.undo(seats),
            Request::Rematch => self.rematch(seat),
            Request::ContinueVsAi => self.after_countdown(seat, false),
            Request::ClaimVictory => self.after_countdown(seat, true),
            Request::LeaveRoom => self.leave_room_request(seat),
            Request::Berserk => self.berserk(seat),
        }
    }

    /// Goes berserk for `seat`, once written.
    fn berserk(&mut self, seat: Side) -> Flow {
        if let Err(refused) = self.live.may_berserk(seat) {
            return Some(vec![error_text(refused.code, &refused.message)]);
        }
        let version = self.live.version() + 1;
        self.commit(Change::Berserk { seat, version }, Then::Berserk { seat })
    }

    pub(super) fn play(
        &mut self,
        seat: Side,
        pit: u8,
        ply: u32,
        by_ai: bool,
        hidden_ms: Option<u32>,
    ) -> Flow {
        if self.live.info().is_ai(seat) != by_ai {
            return Some(vec![error_text(
                ErrorCode::NotAllowed,
                "an AI plays this seat now",
            )]);
        }
        let now = self.now;
        if let Some(over) = self.live.flag_fall(now) {
            let flag = error_text(ErrorCode::GameOver, "your flag fell");
            return self.end(over, self.live.turn(), vec![flag]);
        }
        let planned = match self.live.decide_move(seat, pit, ply, now) {
            Err(refusal) => {
                let mut answer = vec![error_text(refusal.code, &refusal.message)];
                if refusal.resync {
                    answer.push(self.state(Some(seat)));
                }
                return Some(answer);
            }
            Ok(MoveDecision::Duplicate { ply }) => {
                let text = self
                    .recent
                    .iter()
                    .find(|(_, moved, _)| *moved == Some(ply))
                    .map(|(_, _, text)| text.clone())
                    .unwrap_or_else(|| self.state(Some(seat)));
                return Some(vec![text]);
            }
            Ok(MoveDecision::Play(planned)) => planned,
        };
        let mut planned = planned;
        planned.stored.hidden_ms = hidden_ms;
        let change = Change::Move {
            stored: planned.stored,
            version: planned.version,
            ends: planned.ends,
            rates: planned.ends.is_some_and(|over| self.live.would_rate(&over)),
            moved_before: self.live.moved(),
        };
        self.commit(change, Then::Move(planned))
    }

    /// Ends the game (resignation, flag, no start, claim); `by` is the side
    /// whose act or absence ended it (the resigner, the flagged side, the
    /// side that never started, the absent side), and bears the offence, if
    /// it is one, in the same commit. `answer` goes to the asker once it is
    /// committed.
    pub(super) fn end(&mut self, over: Over, by: Option<Side>, answer: Vec<ByteString>) -> Flow {
        let at_ms = self.now;
        let offence = by.and_then(|by| self.offence(&over, by, at_ms));
        let change = Change::End {
            over,
            at_ms,
            offence,
            rates: self.live.would_rate(&over),
            plies: self.live.ply(),
            moved: self.live.moved(),
        };
        self.commit(change, Then::End { over, answer })
    }

    /// What `over`, made by `by`, charges them with (`game::fair_play`).
    fn offence(&self, over: &Over, by: Side, at_ms: u64) -> Option<OffenceRow> {
        let state = AtTheEnd {
            moved: self.live.moved(),
            plies: self.live.ply(),
            connected: self.connected(),
        };
        let info = self.live.info();
        let quick = self.rules.quick_resign_plies;
        let kind = fair_play::offence(info, over, by, state, quick)?;
        let player = info.seats[by.index()].player?;
        Some(OffenceRow {
            player,
            kind,
            at_ms,
        })
    }

    /// A change is in: apply it and send it, then end the flow.
    pub(super) fn committed(&mut self, then: Then, committed: Result<(), CommitError>) {
        match (then, committed) {
            (Then::CloseRoom { over }, Err(CommitError::Fenced)) => self.close_room_fenced(over),
            (Then::CloseRoom { .. }, Err(CommitError::Store(error))) => {
                tracing::warn!(%error, game = %self.live.id(), "closing the room's game failed");
            }
            (_, Err(error)) => self.end_flow(Some(Err(error))),
            (Then::Move(planned), Ok(())) => {
                let ply = planned.stored.played.ply;
                let (moved, over) = self.live.apply(*planned);
                let version = moved.version;
                self.emit(&ServerMessage::Moved(moved), Some((version, Some(ply))));
                if let Some(over) = over {
                    self.announce_end(over);
                }
                self.end_flow(Some(Ok(Vec::new())));
            }
            (Then::End { over, answer }, Ok(())) => {
                self.ended(over);
                self.end_flow(Some(Ok(answer)));
            }
            (Then::Undo { ply, at_ms }, Ok(())) => {
                // An AI reply being computed is for a position that is
                // gone: stop it. The next search starts once it has
                // returned (one per game).
                self.stop_thinking();
                let undone = self.live.apply_undo(ply, at_ms);
                let version = undone.version;
                self.emit(&ServerMessage::Undone(undone), Some((version, None)));
                self.end_flow(Some(Ok(Vec::new())));
            }
            (Then::TakeOver { seat, level }, Ok(())) => {
                let version = self.live.take_over(seat, level);
                self.absent_since[seat.index()] = None;
                let message = ServerMessage::TakenOver {
                    version,
                    seat,
                    level: level.to_owned(),
                };
                self.emit(&message, Some((version, None)));
                self.end_flow(Some(Ok(Vec::new())));
            }
            (Then::Berserk { seat }, Ok(())) => {
                let (version, clock_ms) = self.live.berserk(seat);
                let message = ServerMessage::Berserked {
                    version,
                    seat,
                    clock_ms,
                };
                self.emit(&message, Some((version, None)));
                self.end_flow(Some(Ok(Vec::new())));
            }
            (Then::CloseRoom { over }, Ok(())) => {
                self.ended(over);
                // Closing it now: it counts as idle since now.
                self.effect(Effect::CloseExpiredRooms { now: self.now });
                self.stop(mancala_proto::error::CLOSE_ROOM_CLOSED, "the room closed");
            }
        }
    }

    /// The game ended from outside its moves.
    pub(super) fn ended(&mut self, over: Over) {
        self.live.finish(over);
        self.stop_thinking();
        self.announce_end(over);
    }

    /// Tells everyone the game is over, the rating service that a rated
    /// result is in, and has a watched game analysed.
    fn announce_end(&mut self, over: Over) {
        self.emit(&ServerMessage::Over(over), Some((over.version, None)));
        if self.live.rates_its_players() {
            self.effect(Effect::WakeRatings);
        }
        self.analyse_at_the_end();
    }

    /// A game watched as it ends is analysed now, for its players and
    /// watchers, who ask together in a moment: they join this one analysis
    /// rather than queue behind strangers for the instance's one place. A
    /// game played with nobody watching is analysed when a player asks.
    fn analyse_at_the_end(&mut self) {
        if self.live.was_played_out() && self.watchers > 0 {
            self.effect(Effect::Analyse);
        }
    }

    fn resign(&mut self, seat: Side) -> Flow {
        match self.live.decide_resign(seat) {
            Ok(over) => self.end(over, Some(seat), Vec::new()),
            Err(refusal) => Some(vec![error_text(refusal.code, &refusal.message)]),
        }
    }

    fn undo(&mut self, seats: &[Side]) -> Flow {
        let ply = match self.live.decide_undo(seats) {
            Ok(ply) => ply,
            Err(refusal) => return Some(vec![error_text(refusal.code, &refusal.message)]),
        };
        match self.counted_player(seats) {
            Some(player) => {
                let kind = Counted::Undos;
                self.ask(Ask::Limit { kind, player }, Pending::UndoLimit { ply });
                None
            }
            None => self.undo_counted(ply, None),
        }
    }

    /// The undo, once counted (`refused` when over the limit).
    pub(super) fn undo_counted(&mut self, ply: u32, refused: Option<ByteString>) -> Flow {
        if let Some(refused) = refused {
            return Some(vec![refused]);
        }
        let version = self.live.version() + 1;
        let at_ms = self.now;
        self.commit(
            Change::Undo {
                ply,
                version,
                at_ms,
            },
            Then::Undo { ply, at_ms },
        )
    }

    /// The player undos and hints are counted for: each restarts or starts
    /// a search on the shared AI workers, so they are counted per player,
    /// across instances.
    pub(super) fn counted_player(&self, seats: &[Side]) -> Option<uuid::Uuid> {
        let seat = *seats.first()?;
        self.live.info().seats[seat.index()].player
    }

    fn after_countdown(&mut self, seat: Side, claim: bool) -> Flow {
        let refuse = |code, message: &str| Some(vec![error_text(code, message)]);
        if self.live.is_over() {
            return refuse(ErrorCode::GameOver, "the game is over");
        }
        let absent = seat.opponent();
        if !self.live.info().between_people() {
            return refuse(ErrorCode::NotAllowed, "only against an absent person");
        }
        let Some(countdown) = self.countdowns()[absent.index()] else {
            return refuse(ErrorCode::NotAllowed, "your opponent is here");
        };
        if countdown > 0 {
            let message = format!("your opponent has {} s to return", countdown.div_ceil(1000));
            return refuse(ErrorCode::CountdownRunning, &message);
        }
        if claim {
            // An abort if the absent side never moved (see `live::settle`).
            let over = self.live.claim(seat);
            return self.end(over, Some(absent), Vec::new());
        }
        let info = self.live.info();
        let rating = info.seats[absent.index()].rating.unwrap_or(1500.0);
        let level = mancala_ai::level_near(info.variant, rating).name();
        let version = self.live.version() + 1;
        // Going on against the AI is the same leaving as a claim: the
        // absent player is charged as if the game had ended so.
        let left = self.live.claim(seat);
        let offence = self.offence(&left, absent, self.now);
        let change = Change::TakeOver {
            seat: absent,
            level: level.to_owned(),
            version,
            offence,
        };
        let seat = absent;
        self.commit(change, Then::TakeOver { seat, level })
    }

    fn rematch(&mut self, seat: Side) -> Flow {
        if !self.live.is_over() {
            return Some(vec![error_text(
                ErrorCode::NotAllowed,
                "finish this game first",
            )]);
        }
        if let Some(next) = self.live.rematch() {
            return Some(vec![encode(&rematch::started(next))]);
        }
        if self.room_left {
            return Some(vec![error_text(
                ErrorCode::NotAllowed,
                "a player left the room; it is closed",
            )]);
        }
        // A rematch is a new game: a busy instance keeps its capacity for
        // the games in progress. While this game still holds its place
        // (see `hold_or_free_place`), the rematch takes that place over.
        let held = self.holds_place;
        self.ask(Ask::Admit { held }, Pending::RematchAdmit { seat });
        None
    }

    /// The rematch, once admitted: an offer where both must agree, else
    /// (or once both have asked) the next game is made.
    pub(super) fn rematch_admitted(
        &mut self,
        seat: Side,
        admitted: Result<(), ByteString>,
    ) -> Flow {
        if let Err(busy) = admitted {
            return Some(vec![busy]);
        }
        if rematch::needs_agreement(self.live.info()) {
            match self.rematch_offer {
                Some(by) if by != seat => {}
                Some(_) => return Some(Vec::new()),
                None => {
                    self.rematch_offer = Some(seat);
                    self.emit(&ServerMessage::RematchOffer { by: seat }, None);
                    return Some(Vec::new());
                }
            }
        }
        self.ask(Ask::CreateRematch, Pending::Rematch);
        None
    }

    pub(super) fn rematch_made(&mut self, made: Result<Option<uuid::Uuid>, ()>) -> Vec<ByteString> {
        match made {
            Ok(Some(next)) => {
                self.live.set_rematch(next);
                // The rematch is hosted and counted from its commit: its
                // place passes over now, not after the replies are sent,
                // or for that moment a full instance counts one game too
                // many and refuses a rematch ending at the same time.
                self.free_place();
                self.rematch_offer = None;
                self.emit(&rematch::started(next), None);
                Vec::new()
            }
            Ok(None) => {
                // Its life ran out since the game began: the next tick
                // closes the sockets with the room-closed code.
                self.room_closes = Some(0);
                vec![error_text(ErrorCode::NotAllowed, "the room has closed")]
            }
            Err(()) => vec![error_text(ErrorCode::Unavailable, "no rematch now; retry")],
        }
    }

    /// A hint: the search to run, once counted.
    pub(super) fn hint(&mut self, seats: &[Side]) {
        let search = match self.hint_request(seats) {
            Ok(search) => search,
            Err(refusal) => {
                let text = error_text(refusal.code, &refusal.message);
                return self.reply(Reply::Hint(Err(text)));
            }
        };
        match self.counted_player(seats) {
            Some(player) => {
                let kind = Counted::Hints;
                self.ask(Ask::Limit { kind, player }, Pending::HintLimit { search });
            }
            None => self.reply(Reply::Hint(Ok(search))),
        }
    }
}
