//! A live game as pure state: the rules engine's `Game` plus the seats,
//! the mover, clock and time of each ply, the version, and the end. It
//! decides what a request would do and produces the wire events; it does
//! no IO and reads no clock (the time is passed in), so the actor that owns
//! it can write to Postgres between deciding and applying.

use mancala_proto::game::{
    Board, Clocks, EndReason, GameResult, GameState, GameStatus, Moved, Over, PlayedMove, SeatInfo,
    TimeControl, Undone,
};
use mancala_proto::{ErrorBody, ErrorCode};
use mancala_rules::{AnyPosition, Game, Pit, Player, Position, Variant, Winner};
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
}

impl GameInfo {
    /// One player in both seats: two people on one device.
    pub fn hotseat(&self) -> bool {
        self.seats[0].player.is_some() && self.seats[0].player == self.seats[1].player
    }

    pub fn is_ai(&self, seat: u8) -> bool {
        self.seats[seat as usize % 2].ai.is_some()
    }
}

/// A stored move, as the game replays it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StoredMove {
    pub played: PlayedMove,
    /// The mover's clock after the move, for timed games.
    pub clock_ms: Option<u64>,
    pub at_ms: u64,
}

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
        ErrorBody {
            code: self.code,
            message: self.message.clone(),
        }
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

fn seat_of(player: Player) -> u8 {
    player.index() as u8
}

fn board(position: &AnyPosition) -> Board {
    Board {
        pits: [position.row(Player::South), position.row(Player::North)],
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

fn winner(seat: u8) -> GameResult {
    if seat == 0 {
        GameResult::P0
    } else {
        GameResult::P1
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
        }
    }

    /// A stored game: its moves replayed in order, then its stored state.
    pub fn replay(
        info: GameInfo,
        moves: &[StoredMove],
        ending: Option<(GameResult, EndReason)>,
        version: u64,
        rematch: Option<Uuid>,
    ) -> Result<LiveGame, ReplayError> {
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
            live.turn_started = Some(stored.at_ms);
            if let Some(outcome) = live.game.outcome() {
                live.over = Some(live.outcome_over(outcome, 0));
            }
        }
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

    fn outcome_over(&self, outcome: mancala_rules::Outcome, version: u64) -> Over {
        Over {
            version,
            result: match outcome.winner {
                Winner::Player(Player::South) => GameResult::P0,
                Winner::Player(Player::North) => GameResult::P1,
                Winner::Draw => GameResult::Draw,
            },
            reason: outcome.reason.into(),
            score: outcome.score,
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

    pub fn is_over(&self) -> bool {
        self.over.is_some()
    }

    pub fn rematch(&self) -> Option<Uuid> {
        self.rematch
    }

    pub fn set_rematch(&mut self, game: Uuid) {
        self.rematch = Some(game);
    }

    /// Every seat a player holds: both in a hotseat game.
    pub fn seats_of(&self, player: Uuid) -> Vec<u8> {
        (0..2u8)
            .filter(|&seat| self.info.seats[seat as usize].player == Some(player))
            .collect()
    }

    /// The seat to move, if the game is on.
    pub fn turn(&self) -> Option<u8> {
        let position = self.game.position();
        if self.is_over() || position.is_over() {
            None
        } else {
            Some(seat_of(position.turn()))
        }
    }

    /// The game in the rules engine's terms, for the AI.
    pub fn rules_game(&self) -> &Game<AnyPosition> {
        &self.game
    }

    fn increment_ms(&self) -> u64 {
        self.info
            .time_control
            .map_or(0, |tc| u64::from(tc.increment_secs) * 1000)
    }

    /// Each seat's clock as of its last move (or the initial time).
    fn banked(&self) -> Option<[u64; 2]> {
        let initial = u64::from(self.info.time_control?.initial_secs) * 1000;
        let mut banked = [initial, initial];
        for stored in &self.moves {
            if let Some(clock) = stored.clock_ms {
                banked[stored.played.seat as usize % 2] = clock;
            }
        }
        Some(banked)
    }

    /// The clocks at `now` (ms), for timed games.
    pub fn clocks(&self, now: u64) -> Option<Clocks> {
        let mut remaining = self.banked()?;
        let running = self.turn().filter(|_| self.turn_started.is_some());
        if let (Some(seat), Some(started)) = (running, self.turn_started) {
            let side = &mut remaining[seat as usize];
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
        (clocks.remaining_ms[seat as usize] == 0).then(|| Over {
            version: self.version + 1,
            result: winner(1 - seat),
            reason: EndReason::Timeout,
            score: self.game.position().score(),
        })
    }

    /// The abort at `now`, if no first move came within `limit_ms` of the
    /// game's creation.
    pub fn no_start(&self, now: u64, limit_ms: u64) -> Option<Over> {
        (!self.is_over() && self.moves.is_empty() && now >= self.info.created_ms + limit_ms)
            .then(|| self.aborted(EndReason::NoStart))
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
        seat: u8,
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
        let clock_ms = self
            .clocks(now)
            .map(|clocks| clocks.remaining_ms[seat as usize] + self.increment_ms());
        let version = self.version + 1;
        let ends = after
            .outcome()
            .map(|outcome| self.outcome_over(outcome, version + 1));
        Ok(MoveDecision::Play(Box::new(PlannedMove {
            stored: StoredMove {
                played: PlayedMove {
                    ply,
                    seat,
                    pit: pit.get(),
                },
                clock_ms,
                at_ms: now,
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
            by: last.map_or(0, |m| m.seat),
            pit: last.map_or(0, |m| m.pit),
            version,
            board: board(position),
            turn: next,
            legal: if next.is_some() {
                legal(position)
            } else {
                Vec::new()
            },
            extra_turn: next.is_some() && next == last.map(|m| m.seat),
            clocks: self.clocks(now),
        }
    }

    /// The end a resignation by `seat` would make.
    pub fn decide_resign(&self, seat: u8) -> Result<Over, Refusal> {
        if self.is_over() {
            return Err(Refusal::new(ErrorCode::GameOver, "the game is over"));
        }
        Ok(Over {
            version: self.version + 1,
            result: winner(1 - seat),
            reason: EndReason::Resign,
            score: self.game.position().score(),
        })
    }

    /// The end `claimant` claims when the opponent stayed away.
    pub fn claim(&self, claimant: u8) -> Over {
        Over {
            version: self.version + 1,
            result: winner(claimant),
            reason: EndReason::Abandoned,
            score: self.game.position().score(),
        }
    }

    /// Applies a stored end that came from outside the moves.
    pub fn finish(&mut self, over: Over) {
        self.version = over.version;
        self.over = Some(over);
    }

    /// The ply an `undo` by `seats` would go back to.
    pub fn decide_undo(&self, seats: &[u8]) -> Result<u32, Refusal> {
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
        self.turn_started = (ply > 0).then_some(now);
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
        }
    }

    /// An AI takes `seat`; returns the new version.
    pub fn take_over(&mut self, seat: u8, level: &str) -> u64 {
        self.info.seats[seat as usize % 2].ai = Some(level.to_owned());
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
        you: Option<u8>,
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
        }
    }
}

#[cfg(test)]
mod tests {
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
        }
    }

    fn play_at(game: &mut LiveGame, seat: u8, pit: u8, now: u64) -> Moved {
        let ply = game.ply() + 1;
        match game.decide_move(seat, pit, ply, now).unwrap() {
            MoveDecision::Play(planned) => game.apply(*planned).0,
            MoveDecision::Duplicate { .. } => panic!("duplicate"),
        }
    }

    fn play(game: &mut LiveGame, seat: u8, pit: u8) -> Moved {
        play_at(game, seat, pit, 2_000)
    }

    fn stored(game: &LiveGame) -> Vec<StoredMove> {
        game.moves.clone()
    }

    #[test]
    fn moves_are_checked_in_order_of_what_the_client_got_wrong() {
        let mut game = LiveGame::new(info(None));
        // Kalah 6x4: pit 3 sows into the store, an extra turn.
        let moved = play(&mut game, 0, 3);
        assert!(moved.extra_turn);
        assert_eq!((moved.ply, moved.version, moved.turn), (1, 1, Some(0)));
        let refuse =
            |game: &LiveGame, seat, pit, ply| game.decide_move(seat, pit, ply, 0).unwrap_err();
        assert_eq!(refuse(&game, 1, 1, 2).code, ErrorCode::NotYourTurn);
        let stale = refuse(&game, 0, 1, 5);
        assert_eq!((stale.code, stale.resync), (ErrorCode::StalePly, true));
        assert_eq!(refuse(&game, 0, 3, 2).code, ErrorCode::EmptyPit);
        assert_eq!(refuse(&game, 0, 7, 2).code, ErrorCode::PitOutOfRange);
        assert!(matches!(
            game.decide_move(0, 3, 1, 0),
            Ok(MoveDecision::Duplicate { ply: 1 })
        ));
        assert_eq!(refuse(&game, 0, 4, 1).code, ErrorCode::StalePly);
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
            None,
            game.version(),
            None,
        )
        .unwrap();
        assert_eq!(replayed.over(), Some(&over));
        assert_eq!(
            replayed.state(Some(0), [true; 2], 3, [None; 2], now),
            game.state(Some(0), [true; 2], 3, [None; 2], now)
        );
        assert_eq!(
            game.decide_move(0, 1, game.ply() + 1, now)
                .unwrap_err()
                .code,
            ErrorCode::GameOver
        );
    }

    #[test]
    fn clocks_run_for_the_side_to_move_and_flags_fall() {
        let mut game = LiveGame::new(info(Some(TimeControl {
            initial_secs: 10,
            increment_secs: 1,
        })));
        // Before the first move no clock runs.
        assert_eq!(game.clocks(50_000).unwrap().running, None);
        assert_eq!(game.flag_fall(50_000), None);
        let moved = play_at(&mut game, 0, 1, 2_000);
        let clocks = moved.clocks.unwrap();
        assert_eq!(
            (clocks.remaining_ms, clocks.running),
            ([11_000, 10_000], Some(1))
        );
        // North thinks 4 s: 6 s left, plus the increment.
        let moved = play_at(&mut game, 1, 1, 6_000);
        assert_eq!(moved.clocks.unwrap().remaining_ms, [11_000, 7_000]);
        // South lets 11 s pass: the flag falls, North wins.
        assert_eq!(game.flag_fall(16_999), None);
        let over = game.flag_fall(17_000).unwrap();
        assert_eq!(
            (over.result, over.reason),
            (GameResult::P1, EndReason::Timeout)
        );
    }

    #[test]
    fn no_first_move_in_time_aborts() {
        let game = LiveGame::new(info(None));
        assert_eq!(game.no_start(30_999, 30_000), None);
        let over = game.no_start(31_000, 30_000).unwrap();
        assert_eq!(
            (over.result, over.reason),
            (GameResult::Aborted, EndReason::NoStart)
        );
    }

    #[test]
    fn undo_against_the_ai_takes_back_the_humans_move_and_the_replies() {
        let mut against_ai = info(None);
        against_ai.against_ai = true;
        against_ai.seats[1].ai = Some("advanced".into());
        let mut game = LiveGame::new(against_ai);
        play(&mut game, 0, 1); // human
        play(&mut game, 1, 3); // AI: an extra turn
        play(&mut game, 1, 1); // AI again
        assert_eq!(game.decide_undo(&[0]), Ok(0));
        let undone = game.apply_undo(0, 5_000);
        assert_eq!((undone.ply, undone.turn, undone.version), (0, Some(0), 4));
        assert_eq!(undone.board.pits, [[4; 6], [4; 6]]);
        assert_eq!(
            game.decide_undo(&[0]).unwrap_err().code,
            ErrorCode::NotAllowed
        );
        // Between two players there is no undo.
        let human = LiveGame::new(info(None));
        assert_eq!(
            human.decide_undo(&[0]).unwrap_err().code,
            ErrorCode::NotAllowed
        );
    }

    #[test]
    fn hotseat_undo_takes_back_one_move() {
        let mut hotseat = info(None);
        hotseat.seats[1].player = hotseat.seats[0].player;
        let mut game = LiveGame::new(hotseat);
        play(&mut game, 0, 1);
        play(&mut game, 1, 2);
        assert_eq!(game.decide_undo(&[0, 1]), Ok(1));
        let undone = game.apply_undo(1, 3_000);
        assert_eq!((undone.ply, undone.turn), (1, Some(1)));
        assert_eq!(undone.last_move.unwrap().pit, 1);
    }

    #[test]
    fn resigning_and_claiming_end_the_game() {
        let mut game = LiveGame::new(info(None));
        play(&mut game, 0, 1);
        let over = game.decide_resign(1).unwrap();
        assert_eq!(
            (over.result, over.reason, over.version),
            (GameResult::P0, EndReason::Resign, 2)
        );
        game.finish(over);
        assert_eq!(game.turn(), None);
        assert_eq!(game.decide_resign(0).unwrap_err().code, ErrorCode::GameOver);
        let replayed = LiveGame::replay(
            game.info().clone(),
            &stored(&game),
            Some((GameResult::P0, EndReason::Resign)),
            2,
            None,
        )
        .unwrap();
        assert_eq!(replayed.over(), Some(&over));
        let claimed = LiveGame::new(info(None)).claim(1);
        assert_eq!(
            (claimed.result, claimed.reason),
            (GameResult::P1, EndReason::Abandoned)
        );
    }

    #[test]
    fn a_takeover_makes_the_game_casual() {
        let mut ranked = info(None);
        ranked.rated = true;
        let mut game = LiveGame::new(ranked);
        assert_eq!(game.take_over(1, "advanced"), 1);
        assert!(!game.info().rated);
        assert!(game.info().is_ai(1));
    }

    #[test]
    fn corrupt_rows_do_not_replay() {
        let game = LiveGame::new(info(None));
        let bad = [StoredMove {
            played: PlayedMove {
                ply: 1,
                seat: 1,
                pit: 1,
            },
            clock_ms: None,
            at_ms: 0,
        }];
        assert!(LiveGame::replay(game.info().clone(), &bad, None, 1, None).is_err());
    }
}
