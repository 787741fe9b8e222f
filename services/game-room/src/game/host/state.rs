//! The host of one game as pure state, in the shape of a match handler:
//! [`HostState::step`] takes an [`Input`] (a socket's command, a timer, a
//! message heard on the game's channel) at a given time and returns a
//! [`Step`]: the [`Effect`]s to carry out, in order, and at most one
//! [`Ask`] whose [`Answer`] (a commit's outcome, a limit's verdict, a row
//! read back) is fed to [`HostState::answer`], which may ask again. The
//! state never waits and never does IO: the task in `mod.rs` carries the
//! effects out, so every flow here runs in a unit test with the time
//! passed in.
//!
//! One input is carried through to its last answer before the next is
//! taken: the host stays serial, and two moves of a game never race.

use bytestring::ByteString;
use mancala_proto::error::CLOSE_ELSEWHERE;
use mancala_proto::{ErrorCode, game::Over};
use mancala_rules::Side;
use uuid::Uuid;

use super::{REPLACED, Request};
use crate::ai;
use crate::config::GameRoomSettings;
use crate::game::live::{LiveGame, PlannedMove, Refusal};
use crate::store::{Change, CommitError, SeatCheck};
use mancala_platform::socket::error_text;

/// The settings the host's rules read, in milliseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct HostRules {
    /// How long an absent player has to come back.
    pub reconnect_ms: u64,
    /// How long a side has to make its first move, where one is due.
    pub first_move_ms: u64,
    /// How long a game nobody is connected to stays loaded.
    pub idle_unload_ms: u64,
    /// A resignation before this many plies is a quick one.
    pub quick_resign_plies: u32,
}

impl HostRules {
    pub(crate) fn of(settings: &GameRoomSettings) -> HostRules {
        HostRules {
            reconnect_ms: settings.reconnect.as_millis() as u64,
            first_move_ms: settings.first_move.as_millis() as u64,
            idle_unload_ms: settings.idle_unload.as_millis() as u64,
            quick_resign_plies: settings.quick_resign_plies,
        }
    }
}

/// What reaches the host.
#[derive(Clone, Debug)]
pub(crate) enum Input {
    /// The task starts, with the game's watcher count.
    Started { watchers: u32 },
    /// A socket of `player` joins.
    Join { player: Uuid },
    /// What the game says of `player`, as the stored row would.
    SeatCheck { player: Uuid },
    /// A socket of these seats closed.
    Leave { seats: Vec<Side> },
    /// A request from a seated socket.
    Seated { seats: Vec<Side>, request: Request },
    /// The events after `since`, or a fresh state.
    Sync { since: u64, you: Option<Side> },
    /// A hint is asked for.
    Hint { seats: Vec<Side> },
    /// The AI's answer for the position at `version`.
    Thought {
        version: u64,
        seat: Side,
        pit: Option<u8>,
    },
    /// The clock's tick.
    Tick,
    /// The lease is about to be renewed: refresh what the lobby counts.
    Renewing,
    /// A message on the game's channel.
    Heard(ByteString),
    /// The process is stopping.
    Drain,
}

/// Work whose outcome the host needs before it goes on.
#[derive(Clone, Debug)]
pub(crate) enum Ask {
    /// Write this change under the host's epoch.
    Commit(Change),
    /// Count one more of these for `player` (undos and hints restart or
    /// start a search on the shared workers).
    Limit { kind: Counted, player: Uuid },
    /// Whether the instance takes a rematch now: `held` when this game
    /// still holds its place, which the rematch takes over.
    Admit { held: bool },
    /// Make the rematch of this finished game.
    CreateRematch,
    /// Close the friend room on behalf of `player`, who left it.
    LeaveRoom { room: Uuid, player: Uuid },
    /// Whether the room has closed (someone else ended the game).
    RoomClosed { room: Uuid },
    /// The finished rated game's rating change, read back.
    RatingChange,
}

/// The outcome of an [`Ask`].
#[derive(Clone, Debug)]
pub(crate) enum Answer {
    Committed(Result<(), CommitError>),
    /// The refusal to send, when over the limit.
    Limit(Option<ByteString>),
    /// The refusal to send, when the instance is busy.
    Admitted(Result<(), ByteString>),
    /// The next game, `None` when the room has closed, `Err` on a failure.
    RematchMade(Result<Option<Uuid>, ()>),
    /// Whether leaving the room was stored.
    RoomLeft(bool),
    RoomClosed(bool),
    /// The rating change, encoded, when known.
    RatingChange(Option<ByteString>),
}

/// What a player is allowed only so often.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Counted {
    Undos,
    Hints,
}

/// What the task does for the host.
#[derive(Clone, Debug)]
pub(crate) enum Effect {
    /// The answer to the input's asker.
    Reply(Reply),
    /// An event for this game's sockets, and for watchers elsewhere;
    /// `version` for the events a `sync` replays.
    Emit {
        text: ByteString,
        version: Option<u64>,
    },
    /// A message for this instance's sockets only (heard on the channel).
    Local(ByteString),
    /// Ask the AI for the move of `seat` at `version`.
    Think {
        request: ai::Request,
        version: u64,
        seat: Side,
    },
    /// Stop the search under way (it still reports, with nothing).
    StopThinking,
    /// Analyse the game that just ended, for its watchers.
    Analyse,
    /// A rated game ended with a result: wake the rating service.
    WakeRatings,
    /// Who counts as online and playing, whether the game is occupied,
    /// and who is connected: one Redis batch.
    Mark(Marks),
    /// Record in the room since when it is idle (`None`: occupied now).
    RoomIdle { room: Uuid, since: Option<u64> },
    /// Close the rooms whose time is up.
    CloseExpiredRooms { now: u64 },
    /// The finished game gives its place among the instance's games up.
    FreePlace,
    /// Stop the task and close the sockets with this code.
    Stop(u16, &'static str),
}

/// The answer to the input that asked.
#[derive(Clone, Debug)]
pub(crate) enum Reply {
    /// What goes to this socket alone (errors, repeats).
    Texts(Vec<ByteString>),
    Joined {
        state: ByteString,
        seats: Vec<Side>,
        rating_change: Option<ByteString>,
    },
    Refused(Refusal),
    SeatCheck(SeatCheck),
    Hint(Result<(u32, ai::Request), ByteString>),
}

/// Lobby marks: each connected player and whether they are playing here,
/// the players whose last socket here just closed, and whether the game
/// is occupied (listed as live); with them, when a seat's connection
/// changed, who is connected now, for other instances (`Hub::presence`).
/// One effect, so that a socket opening or closing costs the host one
/// Redis batch (one round trip to one server).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Marks {
    pub here: Vec<(Uuid, bool)>,
    pub gone: Vec<Uuid>,
    pub occupied: bool,
    pub presence: Option<[bool; 2]>,
}

/// What one input (or answer) comes to.
#[derive(Debug, Default)]
pub(crate) struct Step {
    pub effects: Vec<Effect>,
    pub ask: Option<Ask>,
}

/// Where the flow in progress began: what its end answers.
#[derive(Clone, Copy, Debug)]
pub(super) enum Origin {
    Seated(Request),
    Thought,
    Tick,
}

/// What to do with the answer to the ask in flight.
#[derive(Debug)]
pub(super) enum Pending {
    /// Apply a committed change, then end the flow.
    Commit(Then),
    Join {
        seats: Vec<Side>,
        before: [bool; 2],
    },
    UndoLimit {
        ply: u32,
    },
    HintLimit {
        search: (u32, ai::Request),
    },
    RematchAdmit {
        seat: Side,
    },
    Rematch,
    LeaveRoom {
        seat: Side,
    },
    WalkedOut {
        seat: Side,
    },
    RoomClosed {
        over: Over,
    },
}

/// A change to apply once committed.
#[derive(Debug)]
pub(super) enum Then {
    Move(Box<PlannedMove>),
    /// `answer` goes to the asker (a flag that fell as they moved).
    End {
        over: Over,
        answer: Vec<ByteString>,
    },
    Undo {
        ply: u32,
        at_ms: u64,
    },
    TakeOver {
        seat: Side,
        level: &'static str,
    },
    Berserk {
        seat: Side,
    },
    CloseRoom {
        over: Over,
    },
}

/// How a flow that needs no answer ends: its answer for the asker, or
/// `None` when it asked and goes on at the answer.
pub(super) type Flow = Option<Vec<ByteString>>;

/// The host of one game.
#[derive(Debug)]
pub(crate) struct HostState {
    pub(super) live: LiveGame,
    pub(super) rules: HostRules,
    /// The time of the input being handled (clock ms).
    pub(super) now: u64,
    /// Versioned events: (version, the ply of a `moved`, text).
    pub(super) recent: std::collections::VecDeque<(u64, Option<u32>, ByteString)>,
    /// Sockets per seat.
    pub(super) connections: [u32; 2],
    pub(super) watchers: u32,
    /// When the last player socket closed (clock ms).
    pub(super) idle_since: Option<u64>,
    /// Since when each seat's player has had no socket here, in games
    /// between two people: from the moment this host took the game for a
    /// player who never came. During play it drives the reconnect
    /// countdown; after a game in a friend's room, a player away this long
    /// has left the room.
    pub(super) absent_since: [Option<u64>; 2],
    /// A player left the friend room for good: no further game starts.
    pub(super) room_left: bool,
    /// A standing rematch offer, by seat.
    pub(super) rematch_offer: Option<Side>,
    /// An AI search is under way: at most one per game. Its reply names
    /// the version it answers, and is dropped for any other.
    pub(super) thinking: bool,
    /// When the game's room closes at the latest (ms).
    pub(super) room_closes: Option<u64>,
    /// The game counts against the instance's capacity: while it is in
    /// progress, and for a moment after it ends while its players may
    /// still ask for a rematch.
    pub(super) holds_place: bool,
    /// Until when a finished game keeps its place for a rematch.
    pub(super) held_until: Option<u64>,
    /// The rating change of this finished rated game, once known.
    pub(super) rating_change: Option<ByteString>,
    /// The flow in progress and what its answer continues with.
    pub(super) origin: Origin,
    pub(super) pending: Option<Pending>,
    pub(super) out: Vec<Effect>,
    pub(super) asking: Option<Ask>,
}

impl HostState {
    /// The host of `live`, taken at `now`, its room closing at `room_closes`.
    pub(crate) fn new(
        live: LiveGame,
        rules: HostRules,
        now: u64,
        room_closes: Option<u64>,
    ) -> HostState {
        // Nobody is connected yet: a player who never comes is absent from now.
        let absent = live.info().between_people().then_some(now);
        HostState {
            holds_place: !live.is_over(),
            live,
            rules,
            now,
            recent: Default::default(),
            connections: [0, 0],
            watchers: 0,
            idle_since: Some(now),
            absent_since: [absent, absent],
            room_left: false,
            rematch_offer: None,
            thinking: false,
            room_closes,
            held_until: None,
            rating_change: None,
            origin: Origin::Tick,
            pending: None,
            out: Vec::new(),
            asking: None,
        }
    }

    pub(crate) fn live(&self) -> &LiveGame {
        &self.live
    }

    /// Whether the finished game still counts against the instance.
    pub(crate) fn holds_place(&self) -> bool {
        self.holds_place
    }

    /// Handles `input` at `now`. An input that comes while an answer is
    /// awaited is a bug of the task; it is handled after dropping the
    /// flow in flight rather than mixed into it.
    pub(crate) fn step(&mut self, input: Input, now: u64) -> Step {
        self.now = now;
        if let Some(pending) = self.pending.take() {
            tracing::error!(
                ?pending,
                "a host input came before the answer it waited for"
            );
        }
        match input {
            Input::Started { watchers } => {
                self.watchers = watchers;
                self.think();
            }
            Input::Join { player } => self.join(player),
            Input::SeatCheck { player } => {
                let check = if !self.live.seats_of(player).is_empty() {
                    SeatCheck::Seated
                } else if self.live.replaced(player) {
                    SeatCheck::Replaced
                } else {
                    SeatCheck::Stranger
                };
                self.reply(Reply::SeatCheck(check));
            }
            Input::Leave { seats } => self.leave(seats),
            Input::Seated { seats, request } => self.seated(seats, request),
            Input::Sync { since, you } => {
                let texts = self.since(since, you);
                self.reply(Reply::Texts(texts));
            }
            Input::Hint { seats } => self.hint(&seats),
            Input::Thought { version, seat, pit } => self.thought(version, seat, pit),
            Input::Tick => self.on_tick(),
            Input::Renewing => self.mark_players(Vec::new(), None),
            Input::Heard(text) => self.relay(text),
            Input::Drain => self.stop(
                mancala_proto::error::CLOSE_RESTART,
                "the server is restarting; reconnect",
            ),
        }
        self.finish_step()
    }

    /// Goes on with the flow in flight, given the answer to its ask.
    pub(crate) fn answer(&mut self, answer: Answer, now: u64) -> Step {
        self.now = now;
        let Some(pending) = self.pending.take() else {
            tracing::error!(?answer, "a host answer nobody asked for");
            return self.finish_step();
        };
        match (pending, answer) {
            (Pending::Commit(then), Answer::Committed(committed)) => {
                self.committed(then, committed)
            }
            (Pending::Join { seats, before }, Answer::RatingChange(change)) => {
                if change.is_some() {
                    self.rating_change = change;
                }
                self.joined(seats, before);
            }
            (Pending::UndoLimit { ply }, Answer::Limit(refused)) => {
                let flow = self.undo_counted(ply, refused);
                self.end_flow(flow.map(Ok));
            }
            (Pending::HintLimit { search }, Answer::Limit(refused)) => {
                self.reply(Reply::Hint(refused.map_or(Ok(search), Err)));
            }
            (Pending::RematchAdmit { seat }, Answer::Admitted(admitted)) => {
                let flow = self.rematch_admitted(seat, admitted);
                self.end_flow(flow.map(Ok));
            }
            (Pending::Rematch, Answer::RematchMade(made)) => {
                let answer = self.rematch_made(made);
                self.end_flow(Some(Ok(answer)));
            }
            (Pending::LeaveRoom { seat }, Answer::RoomLeft(left)) => {
                let answer = self.room_left_stored(seat, left);
                self.end_flow(Some(Ok(answer)));
            }
            (Pending::WalkedOut { seat }, Answer::RoomLeft(left)) => {
                self.room_left_stored(seat, left);
                self.after_walk_out();
            }
            (Pending::RoomClosed { over }, Answer::RoomClosed(closed)) => {
                self.room_closed_elsewhere(over, closed)
            }
            (pending, answer) => {
                tracing::error!(?pending, ?answer, "a host answer to another question");
            }
        }
        self.finish_step()
    }

    fn finish_step(&mut self) -> Step {
        if self.pending.is_none() {
            self.hold_or_free_place();
        }
        Step {
            effects: std::mem::take(&mut self.out),
            ask: self.asking.take(),
        }
    }

    pub(super) fn effect(&mut self, effect: Effect) {
        self.out.push(effect);
    }

    pub(super) fn reply(&mut self, reply: Reply) {
        self.effect(Effect::Reply(reply));
    }

    pub(super) fn stop(&mut self, code: u16, reason: &'static str) {
        self.effect(Effect::Stop(code, reason));
    }

    /// Another host has the game: stop, and send the sockets there.
    pub(super) fn moved_away(&mut self) {
        self.stop(CLOSE_ELSEWHERE, "the game moved to another instance");
    }

    /// Asks `ask`; its answer goes on with `pending`.
    pub(super) fn ask(&mut self, ask: Ask, pending: Pending) {
        self.asking = Some(ask);
        self.pending = Some(pending);
    }

    /// Writes `change`, then applies `then` (see `committed`).
    pub(super) fn commit(&mut self, change: Change, then: Then) -> Flow {
        self.ask(Ask::Commit(change), Pending::Commit(then));
        None
    }

    /// A seated request: the seat acting is the one to move, if the socket
    /// holds it. A seat an AI took over since the socket joined is not the
    /// socket's any more.
    fn seated(&mut self, seats: Vec<Side>, request: Request) {
        let seats: Vec<Side> = seats
            .into_iter()
            .filter(|&seat| !self.live.info().is_ai(seat))
            .collect();
        let acting = match self.live.turn() {
            Some(turn) if seats.contains(&turn) => Some(turn),
            _ => seats.first().copied(),
        };
        let Some(seat) = acting else {
            self.reply(Reply::Texts(vec![error_text(
                ErrorCode::NotAllowed,
                REPLACED,
            )]));
            return;
        };
        self.origin = Origin::Seated(request);
        let flow = self.request(seat, &seats, request);
        self.end_flow(flow.map(Ok));
    }

    /// Ends the flow in progress, if it has ended (`None`: it asked, and
    /// ends at an answer): answers its asker and goes on.
    pub(super) fn end_flow(&mut self, ended: Option<Result<Vec<ByteString>, CommitError>>) {
        let Some(ended) = ended else {
            return;
        };
        match (self.origin, ended) {
            (Origin::Seated(_), Ok(answer)) => {
                self.reply(Reply::Texts(answer));
                self.think();
            }
            (Origin::Seated(request), Err(CommitError::Store(error))) => {
                tracing::warn!(%error, game = %self.live.id(), ?request, "not saved");
                let message = match request {
                    Request::Move { .. } => "the move was not saved; retry it",
                    _ => "not saved; retry",
                };
                self.reply(Reply::Texts(vec![error_text(
                    ErrorCode::Unavailable,
                    message,
                )]));
            }
            (Origin::Seated(_), Err(CommitError::Fenced)) => {
                self.reply(Reply::Texts(vec![error_text(
                    ErrorCode::Unavailable,
                    "the game moved to another instance; reconnect",
                )]));
                self.moved_away();
            }
            (Origin::Thought, Ok(_)) => self.think(),
            (Origin::Thought, Err(CommitError::Store(error))) => {
                // The next search tries again.
                tracing::warn!(%error, game = %self.live.id(), "storing the AI's move failed");
                self.think();
            }
            (Origin::Tick, Ok(_)) => {}
            (Origin::Tick, Err(CommitError::Store(error))) => {
                // Tried again at the next tick.
                tracing::warn!(%error, game = %self.live.id(), "storing the end failed");
            }
            (_, Err(CommitError::Fenced)) => self.moved_away(),
        }
    }
}
