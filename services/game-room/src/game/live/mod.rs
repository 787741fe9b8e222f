//! A live game as pure state: the rules engine's `Game` plus the seats,
//! the mover, clock and time of each ply, the version, and the end. It
//! decides what a request would do and produces the wire events; it does
//! no IO and reads no clock (the time is passed in), so the host that owns
//! it can write to Postgres between deciding and applying.
//!
//! (Long on purpose: one type, whose every decision reads the same state;
//! its tests are in `tests.rs`.)

use mancala_proto::game::{
    Board, CasualReason, Clocks, EndReason, GameResult, GameState, GameStatus, Moved, Over,
    PlayedMove, SeatInfo, TimeControl, Undone,
};
use mancala_proto::{ErrorBody, ErrorCode};
use mancala_rules::{AnyPosition, Game, Pit, Position, Side, Variant, Winner};
use uuid::Uuid;

/// What the game is, apart from its moves.
#[derive(Clone, Debug, PartialEq)]
pub struct GameInfo {
    pub id: Uuid,
    pub variant: Variant,
    pub rated: bool,
    pub seats: [SeatInfo; 2],
    pub time_control: Option<TimeControl>,
    pub room: Option<Uuid>,
    /// When the game was created (ms): the first move is due after it.
    pub created_ms: u64,
    /// A game created against the AI (not one where an AI took over).
    pub against_ai: bool,
    /// Why a game asked for as rated is casual.
    pub casual_reason: Option<CasualReason>,
    /// The arena tournament it is a game of.
    pub tournament: Option<Uuid>,
    /// Which seats went berserk: half the initial time, no increment.
    pub berserk: [bool; 2],
}

impl GameInfo {
    /// One player in both seats: two people on one device.
    pub fn hotseat(&self) -> bool {
        self.seats[0].player.is_some() && self.seats[0].player == self.seats[1].player
    }

    pub fn is_ai(&self, seat: Side) -> bool {
        self.seats[seat.index()].ai.is_some()
    }

    /// Whether the game was asked for as rated: it is, or it was made
    /// casual only by the pair limit (its series stays a rated one).
    pub fn asked_rated(&self) -> bool {
        self.rated || self.casual_reason.is_some()
    }

    /// Whether each side's first move has a deadline: in a rated or timed
    /// game, where a seat never taken must not hold the other player (or
    /// a clock) hostage. An untimed casual game may take its time to start:
    /// friends talking in a room, a family at one device. The room's idle
    /// rule, or the rule for games nobody is connected to, ends those.
    pub fn first_move_due(&self) -> bool {
        self.asked_rated() || self.time_control.is_some()
    }

    /// Two different people, neither seat an AI: the games where a drop,
    /// a rematch offer and leaving a room mean something.
    pub fn between_people(&self) -> bool {
        !self.hotseat() && !self.is_ai(Side::South) && !self.is_ai(Side::North)
    }
}

/// What a stored game holds beside its moves.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StoredEnd {
    pub ending: Option<(GameResult, EndReason)>,
    pub version: u64,
    pub rematch: Option<Uuid>,
    /// The seats that have ever moved (kept through undos).
    pub moved: [bool; 2],
    /// When the side to move began its turn (ms): the last move, or a
    /// later undo.
    pub turn_started: Option<u64>,
}

pub(crate) use crate::store::StoredMove;

/// A game being played (or just finished).
#[derive(Clone, Debug)]
pub struct LiveGame {
    info: GameInfo,
    game: Game<AnyPosition>,
    moves: Vec<StoredMove>,
    /// When the side to move started thinking (ms); `None` before the
    /// first move, when no clock runs.
    turn_started: Option<u64>,
    over: Option<Over>,
    version: u64,
    rematch: Option<Uuid>,
    /// Which seats have ever moved. Undo never clears it: a game taken back
    /// to its start is still a game that was played.
    moved: [bool; 2],
}

/// A move the game would accept, with everything needed to store it and to
/// apply it once stored.
#[derive(Clone, Debug)]
pub struct PlannedMove {
    pub stored: StoredMove,
    /// The version the move will have.
    pub version: u64,
    /// Set when this move ends the game.
    pub ends: Option<Over>,
    after: Game<AnyPosition>,
}

/// What a move request comes to.
#[derive(Clone, Debug)]
pub enum MoveDecision {
    /// A new move: store it, then [`LiveGame::apply`] it.
    Play(Box<PlannedMove>),
    /// The same move as ply `ply`, already applied: answer, do not apply.
    Duplicate { ply: u32 },
}

/// A request the game refuses; nothing changes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub code: ErrorCode,
    pub message: String,
    /// The client's view is out of date: send a fresh state after the error.
    pub resync: bool,
}

impl Refusal {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Refusal {
        Refusal {
            code,
            message: message.into(),
            resync: false,
        }
    }

    pub fn body(&self) -> ErrorBody {
        ErrorBody::new(self.code, self.message.clone())
    }
}

/// A stored game that does not replay: the rows are corrupt.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("game {game}: stored ply {ply} does not replay: {reason}")]
pub struct ReplayError {
    pub game: Uuid,
    pub ply: u32,
    pub reason: String,
}

fn board(position: &AnyPosition) -> Board {
    Board {
        pits: [position.row(Side::South), position.row(Side::North)],
        score: position.score(),
        pits_per_side: position.pits_per_side(),
    }
}

fn legal(position: &AnyPosition) -> Vec<u8> {
    if position.is_over() {
        return Vec::new();
    }
    position.legal_moves().map(Pit::get).collect()
}

fn winner(seat: Side) -> GameResult {
    match seat {
        Side::South => GameResult::P0,
        Side::North => GameResult::P1,
    }
}

impl LiveGame {
    /// A game at its start.
    pub fn new(info: GameInfo) -> LiveGame {
        LiveGame {
            game: Game::from_variant(info.variant),
            info,
            moves: Vec::new(),
            turn_started: None,
            over: None,
            version: 0,
            rematch: None,
            moved: [false, false],
        }
    }

    /// A stored game: its moves replayed in order, then its stored state.
    pub fn replay(
        info: GameInfo,
        moves: &[StoredMove],
        stored: StoredEnd,
    ) -> Result<LiveGame, ReplayError> {
        let StoredEnd {
            ending,
            version,
            rematch,
            moved,
            turn_started,
        } = stored;
        let mut live = LiveGame::new(info);
        for (index, stored) in moves.iter().enumerate() {
            let played = stored.played;
            let fail = |reason: String| ReplayError {
                game: live.info.id,
                ply: played.ply,
                reason,
            };
            if played.ply as usize != index + 1 {
                return Err(fail(format!("expected ply {}", index + 1)));
            }
            let pit = Pit::new(played.pit).map_err(|e| fail(e.to_string()))?;
            if live.turn() != Some(played.seat) {
                return Err(fail("out of turn".into()));
            }
            live.game.play(pit).map_err(|e| fail(e.to_string()))?;
            live.moves.push(*stored);
            live.moved[played.seat.index()] = true;
            live.turn_started = Some(stored.at_ms);
            if let Some(outcome) = live.game.outcome() {
                live.over = Some(live.outcome_over(outcome, 0, live.moved));
            }
        }
        live.moved = [live.moved[0] || moved[0], live.moved[1] || moved[1]];
        live.turn_started = live.turn_started.max(turn_started);
        if let Some((result, reason)) = ending {
            live.over = Some(Over {
                version,
                result,
                reason,
                score: live.game.position().score(),
            });
        }
        if let Some(over) = &mut live.over {
            over.version = version;
        }
        live.version = version;
        live.rematch = rematch;
        Ok(live)
    }

    fn outcome_over(
        &self,
        outcome: mancala_rules::Outcome,
        version: u64,
        moved: [bool; 2],
    ) -> Over {
        let result = match outcome.winner {
            Winner::Player(Side::South) => GameResult::P0,
            Winner::Player(Side::North) => GameResult::P1,
            Winner::Draw => GameResult::Draw,
        };
        Over {
            score: outcome.score,
            ..settle(result, outcome.reason.into(), version, moved)
        }
    }

    /// An end from outside the rules (resignation, flag, claim) at the
    /// next version, settled by what counts.
    fn ending(&self, result: GameResult, reason: EndReason) -> Over {
        Over {
            score: self.game.position().score(),
            ..settle(result, reason, self.version + 1, self.moved)
        }
    }

    pub fn info(&self) -> &GameInfo {
        &self.info
    }

    pub fn id(&self) -> Uuid {
        self.info.id
    }

    /// The number of moves played.
    pub fn ply(&self) -> u32 {
        self.game.ply() as u32
    }

    /// Events so far (moves, undos, takeovers, the end).
    pub fn version(&self) -> u64 {
        self.version
    }

    pub fn over(&self) -> Option<&Over> {
        self.over.as_ref()
    }

    /// Whether the game ended with a result, not aborted.
    pub fn was_played_out(&self) -> bool {
        self.over
            .is_some_and(|over| over.result != GameResult::Aborted)
    }

    /// Whether the game, now over, moves its players' ratings.
    pub fn rates_its_players(&self) -> bool {
        self.over.is_some_and(|over| self.would_rate(&over))
    }

    /// Whether ending the game with `over` would move its players' ratings
    /// (`mancala_proto::game::rates_its_players`).
    pub fn would_rate(&self, over: &Over) -> bool {
        mancala_proto::game::rates_its_players(self.info.rated, Some(over.result))
    }

    pub fn is_over(&self) -> bool {
        self.over.is_some()
    }

    pub fn rematch(&self) -> Option<Uuid> {
        self.rematch
    }

    pub fn set_rematch(&mut self, game: Uuid) {
        self.rematch = Some(game);
    }

    /// Whether each side has made a move: only then is it a game that was
    /// played, which can end with a result and be rated, and whose clocks
    /// run.
    pub fn played(&self) -> bool {
        self.moved == [true, true]
    }

    /// Which seats have ever moved.
    pub fn moved(&self) -> [bool; 2] {
        self.moved
    }

    /// Every seat a player holds and still plays: both in a hotseat game,
    /// none once an AI took their seat over.
    pub fn seats_of(&self, player: Uuid) -> Vec<Side> {
        Side::BOTH
            .into_iter()
            .filter(|&seat| {
                let held = &self.info.seats[seat.index()];
                held.player == Some(player) && held.ai.is_none()
            })
            .collect()
    }

    /// Whether an AI now plays a seat that was this player's: they may
    /// watch the game, and do nothing else in it.
    pub fn replaced(&self, player: Uuid) -> bool {
        self.info
            .seats
            .iter()
            .any(|held| held.player == Some(player) && held.ai.is_some())
    }

    /// The seat to move, if the game is on.
    pub fn turn(&self) -> Option<Side> {
        let position = self.game.position();
        if self.is_over() || position.is_over() {
            None
        } else {
            Some(position.turn())
        }
    }

    /// The game in the rules engine's terms, for the AI.
    pub fn rules_game(&self) -> &Game<AnyPosition> {
        &self.game
    }

    /// A seat's increment: none for a seat that went berserk.
    fn increment_ms(&self, seat: Side) -> u64 {
        if self.info.berserk[seat.index()] {
            return 0;
        }
        self.info
            .time_control
            .map_or(0, |tc| u64::from(tc.increment_secs) * 1000)
    }

    /// Each seat's clock as of its last move (or the initial time, halved
    /// for a seat that went berserk).
    fn banked(&self) -> Option<[u64; 2]> {
        let initial = u64::from(self.info.time_control?.initial_secs) * 1000;
        let start = |seat: usize| {
            if self.info.berserk[seat] {
                initial / 2
            } else {
                initial
            }
        };
        let mut banked = [start(0), start(1)];
        for stored in &self.moves {
            if let Some(clock) = stored.clock_ms {
                banked[stored.played.seat.index()] = clock;
            }
        }
        Some(banked)
    }

    /// The clocks at `now` (ms), for timed games. They stand still until
    /// each side has moved: a first move is timed by the first-move window
    /// instead, which aborts rather than loses.
    pub fn clocks(&self, now: u64) -> Option<Clocks> {
        let mut remaining = self.banked()?;
        let running = self
            .turn()
            .filter(|_| self.played() && self.turn_started.is_some());
        if let (Some(seat), Some(started)) = (running, self.turn_started) {
            let side = &mut remaining[seat.index()];
            *side = side.saturating_sub(now.saturating_sub(started));
        }
        Some(Clocks {
            remaining_ms: remaining,
            running,
        })
    }

    /// The end by time at `now`, if the running side's flag has fallen.
    pub fn flag_fall(&self, now: u64) -> Option<Over> {
        let clocks = self.clocks(now)?;
        let seat = clocks.running?;
        (clocks.remaining_ms[seat.index()] == 0)
            .then(|| self.ending(winner(seat.opponent()), EndReason::Timeout))
    }

    /// When the side to move began its turn (the game's creation before
    /// any move).
    fn turn_since(&self) -> u64 {
        self.turn_started.unwrap_or(self.info.created_ms)
    }

    /// The abort at `now`, if the game has not been played yet (a side has
    /// never moved) and the side to move let `limit_ms` pass since its turn
    /// began: a seat never taken, or a first move never made, aborts the
    /// game; it never loses on time. Only where a first move is due.
    pub fn first_move_missed(&self, now: u64, limit_ms: u64) -> Option<Over> {
        let due = self.turn_since().saturating_add(limit_ms);
        let missed = self.info.first_move_due() && !self.is_over() && !self.played() && now >= due;
        missed.then(|| self.aborted(EndReason::NoStart))
    }

    /// The end without a result (no start, room closed).
    pub fn aborted(&self, reason: EndReason) -> Over {
        Over {
            version: self.version + 1,
            result: GameResult::Aborted,
            reason,
            score: self.game.position().score(),
        }
    }

    /// What `seat` playing `pit` as ply `ply` at `now` would do.
    pub fn decide_move(
        &self,
        seat: Side,
        pit: u8,
        ply: u32,
        now: u64,
    ) -> Result<MoveDecision, Refusal> {
        let played = self.ply();
        if ply >= 1 && ply <= played {
            let earlier = self.moves[ply as usize - 1].played;
            if earlier.seat == seat && earlier.pit == pit {
                return Ok(MoveDecision::Duplicate { ply });
            }
        }
        if self.is_over() {
            return Err(Refusal::new(ErrorCode::GameOver, "the game is over"));
        }
        if ply != played + 1 {
            return Err(Refusal {
                resync: true,
                ..Refusal::new(
                    ErrorCode::StalePly,
                    format!("the next move is ply {}, not {ply}", played + 1),
                )
            });
        }
        if self.turn() != Some(seat) {
            return Err(Refusal::new(
                ErrorCode::NotYourTurn,
                "it is the other seat's turn",
            ));
        }
        let pit = Pit::new(pit)
            .map_err(|error| Refusal::new(ErrorCode::from(error), error.to_string()))?;
        let mut after = self.game.clone();
        after
            .play(pit)
            .map_err(|error| Refusal::new(ErrorCode::from(error), error.to_string()))?;
        // Before each side has moved no clock runs, and none is credited.
        let increment = if self.played() {
            self.increment_ms(seat)
        } else {
            0
        };
        let clock_ms = self
            .clocks(now)
            .map(|clocks| clocks.remaining_ms[seat.index()] + increment);
        let version = self.version + 1;
        let mut moved = self.moved;
        moved[seat.index()] = true;
        let ends = after
            .outcome()
            .map(|outcome| self.outcome_over(outcome, version + 1, moved));
        Ok(MoveDecision::Play(Box::new(PlannedMove {
            stored: StoredMove {
                played: PlayedMove {
                    ply,
                    seat,
                    pit: pit.get(),
                },
                clock_ms,
                at_ms: now,
                hidden_ms: None,
            },
            version,
            ends,
            after,
        })))
    }

    /// Applies a stored move; returns its event (and the end, if it ended
    /// the game).
    pub fn apply(&mut self, planned: PlannedMove) -> (Moved, Option<Over>) {
        self.game = planned.after;
        self.moves.push(planned.stored);
        self.moved[planned.stored.played.seat.index()] = true;
        self.turn_started = Some(planned.stored.at_ms);
        self.version = planned.version;
        if let Some(over) = planned.ends {
            self.version = over.version;
            self.over = Some(over);
        }
        let moved = self.moved_event(planned.version, planned.stored.at_ms);
        (moved, self.over)
    }

    fn moved_event(&self, version: u64, now: u64) -> Moved {
        let position = self.game.position();
        let last = self.moves.last().map(|stored| stored.played);
        let next = self.turn();
        Moved {
            ply: last.map_or(0, |m| m.ply),
            by: last.map_or(Side::South, |m| m.seat),
            pit: last.map_or(0, |m| m.pit),
            version,
            board: board(position),
            turn: next,
            legal: if next.is_some() {
                legal(position)
            } else {
                Vec::new()
            },
            extra_turn: self.extra_turn(),
            clocks: self.clocks(now),
            undoable: self.undoable(),
        }
    }

    /// The end a resignation by `seat` would make.
    pub fn decide_resign(&self, seat: Side) -> Result<Over, Refusal> {
        if self.is_over() {
            return Err(Refusal::new(ErrorCode::GameOver, "the game is over"));
        }
        Ok(self.ending(winner(seat.opponent()), EndReason::Resign))
    }

    /// The end `claimant` claims when the opponent stayed away.
    pub fn claim(&self, claimant: Side) -> Over {
        self.ending(winner(claimant), EndReason::Abandoned)
    }

    /// Applies a stored end that came from outside the moves.
    pub fn finish(&mut self, over: Over) {
        self.version = over.version;
        self.over = Some(over);
    }

    /// The ply an `undo` by `seats` would go back to.
    pub fn decide_undo(&self, seats: &[Side]) -> Result<u32, Refusal> {
        if self.is_over() {
            return Err(Refusal::new(ErrorCode::GameOver, "the game is over"));
        }
        let target = if self.info.hotseat() {
            self.ply().checked_sub(1)
        } else if self.info.against_ai {
            // Back to before the human's last move: the AI's replies go too.
            let human = seats.first().copied();
            self.moves
                .iter()
                .rposition(|stored| Some(stored.played.seat) == human)
                .map(|index| index as u32)
        } else {
            return Err(Refusal::new(
                ErrorCode::NotAllowed,
                "undo is only for games against the AI or on one device",
            ));
        };
        target.ok_or_else(|| Refusal::new(ErrorCode::NotAllowed, "there is nothing to undo"))
    }

    /// Whether a socket holding `seats` may have a hint now: only for the
    /// side to move, in a game against the AI or on one device (never
    /// between two people, so never in a rated game).
    pub fn decide_hint(&self, seats: &[Side]) -> Result<Side, Refusal> {
        if self.is_over() {
            return Err(Refusal::new(ErrorCode::GameOver, "the game is over"));
        }
        if !(self.info.hotseat() || self.info.against_ai) || self.info.rated {
            return Err(Refusal::new(
                ErrorCode::NotAllowed,
                "hints are for games against the AI or on one device",
            ));
        }
        match self.turn() {
            Some(turn) if seats.contains(&turn) => Ok(turn),
            _ => Err(Refusal::new(
                ErrorCode::NotYourTurn,
                "hints are for your turn",
            )),
        }
    }

    /// Whether the player could take a move back now: what `decide_undo`
    /// would grant the game's one person (the seat no AI plays).
    pub fn undoable(&self) -> bool {
        let person = [Side::South, Side::North]
            .into_iter()
            .find(|seat| !self.info.is_ai(*seat));
        person.is_some_and(|seat| self.decide_undo(&[seat]).is_ok())
    }

    /// Whether the last mover moves again by the rules' gift: only Kalah
    /// grants one (the last stone in one's store). Elsewhere the same
    /// side moving again means the other had no stones and passed.
    fn extra_turn(&self) -> bool {
        let mover = self.moves.last().map(|stored| stored.played.seat);
        matches!(self.info.variant, Variant::Kalah(_))
            && self.turn().is_some()
            && self.turn() == mover
    }

    /// Takes the game back to `ply` moves at `now`.
    pub fn apply_undo(&mut self, ply: u32, now: u64) -> Undone {
        let mut game = Game::from_variant(self.info.variant);
        self.moves.truncate(ply as usize);
        for stored in &self.moves {
            if let Ok(pit) = Pit::new(stored.played.pit) {
                let _ = game.play(pit);
            }
        }
        self.game = game;
        // The side to move thinks from now on (and, if the game was never
        // played, has the first-move window from now).
        self.turn_started = Some(now);
        self.version += 1;
        let position = self.game.position();
        Undone {
            version: self.version,
            ply,
            board: board(position),
            turn: self.turn(),
            legal: legal(position),
            last_move: self.moves.last().map(|stored| stored.played),
            clocks: self.clocks(now),
            undoable: self.undoable(),
        }
    }

    /// An AI takes `seat`; returns the new version.
    /// Whether `seat` may go berserk now: in an arena's timed game of at
    /// least a minute, before its own first move, once.
    pub fn may_berserk(&self, seat: Side) -> Result<(), Refusal> {
        let refuse = |message: &str| Err(Refusal::new(ErrorCode::NotAllowed, message));
        if self.info.tournament.is_none() {
            return refuse("berserk is for tournament games");
        }
        if self.info.time_control.is_none_or(|tc| tc.initial_secs < 60) {
            return refuse("berserk needs a clock of a minute or more");
        }
        if self.is_over() {
            return refuse("the game is over");
        }
        if self.moved[seat.index()] {
            return refuse("berserk is before your first move");
        }
        if self.info.berserk[seat.index()] {
            return refuse("you went berserk already");
        }
        Ok(())
    }

    /// `seat` goes berserk: the new version and its clock.
    pub fn berserk(&mut self, seat: Side) -> (u64, u64) {
        self.info.berserk[seat.index()] = true;
        self.version += 1;
        let clock = self.banked().map_or(0, |banked| banked[seat.index()]);
        (self.version, clock)
    }

    pub fn take_over(&mut self, seat: Side, level: &str) -> u64 {
        self.info.seats[seat.index()].ai = Some(level.to_owned());
        self.info.rated = false;
        self.version += 1;
        self.version
    }

    /// Every move, as the record lists them.
    pub fn moves(&self) -> Vec<PlayedMove> {
        self.moves.iter().map(|stored| stored.played).collect()
    }

    /// The `moved` event of the last ply, as of `now`.
    pub fn last_moved(&self, now: u64) -> Option<Moved> {
        (!self.moves.is_empty()).then(|| self.moved_event(self.version, now))
    }

    /// A snapshot for one receiver at `now`.
    pub fn state(
        &self,
        you: Option<Side>,
        connected: [bool; 2],
        watchers: u32,
        countdown_ms: [Option<u64>; 2],
        now: u64,
    ) -> GameState {
        let position = self.game.position();
        let status = match self.over.map(|over| over.result) {
            None => GameStatus::Live,
            Some(GameResult::Aborted) => GameStatus::Aborted,
            Some(_) => GameStatus::Over,
        };
        GameState {
            game_id: self.info.id,
            variant: self.info.variant.into(),
            rated: self.info.rated,
            against_ai: self.info.against_ai,
            hotseat: self.info.hotseat(),
            undoable: self.undoable(),
            status,
            seats: self.info.seats.clone(),
            board: board(position),
            turn: self.turn(),
            legal: if self.turn().is_some() {
                legal(position)
            } else {
                Vec::new()
            },
            ply: self.ply(),
            version: self.version,
            last_move: self.moves.last().map(|stored| stored.played),
            connected,
            watchers,
            you,
            result: self.over,
            time_control: self.info.time_control,
            clocks: self.clocks(now),
            countdown_ms,
            room: self.info.room,
            rematch: self.rematch,
            casual_reason: self.info.casual_reason,
            tournament: self.info.tournament,
            berserk: self.info.berserk,
        }
    }
}

/// What counts, in one place: an end that comes before each side has made
/// a move (a resignation at ply 0, a claim against a seat never taken, a
/// natural end reached by one side alone) is an abort: no result against
/// either player, and never rated. The reason says what happened.
fn settle(result: GameResult, reason: EndReason, version: u64, moved: [bool; 2]) -> Over {
    let played = moved == [true, true];
    Over {
        version,
        result: if played { result } else { GameResult::Aborted },
        reason,
        score: [0, 0],
    }
}

#[cfg(test)]
mod tests;
