//! A live game as pure state: the rules engine's `Game` plus the seats, the
//! mover of each ply, and the result. It decides what a request would do
//! and produces the wire events; it does no IO, so the actor that owns it
//! can write to Postgres between deciding and applying.

use mancala_proto::game::{
    Board, EndReason, GameResult, GameState, GameStatus, Moved, Over, PlayedMove, SeatInfo,
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
}

/// A game being played (or just finished).
#[derive(Clone, Debug)]
pub struct LiveGame {
    info: GameInfo,
    game: Game<AnyPosition>,
    /// The seat that made each ply.
    movers: Vec<u8>,
    over: Option<Over>,
}

/// A move the game would accept, with everything needed to store it and to
/// apply it once stored.
#[derive(Clone, Debug)]
pub struct PlannedMove {
    pub ply: u32,
    pub seat: u8,
    pub pit: u8,
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
    fn new(code: ErrorCode, message: impl Into<String>) -> Refusal {
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

fn turn(position: &AnyPosition) -> Option<u8> {
    (!position.is_over()).then(|| seat_of(position.turn()))
}

impl LiveGame {
    /// A game at its start.
    pub fn new(info: GameInfo) -> LiveGame {
        LiveGame {
            game: Game::from_variant(info.variant),
            info,
            movers: Vec::new(),
            over: None,
        }
    }

    /// A stored game: its moves replayed in order, then its stored ending
    /// (a resignation is not in the moves).
    pub fn replay(
        info: GameInfo,
        moves: &[PlayedMove],
        ending: Option<(GameResult, EndReason)>,
    ) -> Result<LiveGame, ReplayError> {
        let mut live = LiveGame::new(info);
        for (index, played) in moves.iter().enumerate() {
            let fail = |reason: String| ReplayError {
                game: live.info.id,
                ply: played.ply,
                reason,
            };
            if played.ply as usize != index + 1 {
                return Err(fail(format!("expected ply {}", index + 1)));
            }
            match live.decide_move(played.seat, played.pit, played.ply) {
                Ok(MoveDecision::Play(planned)) => {
                    live.apply(*planned);
                }
                Ok(MoveDecision::Duplicate { .. }) => return Err(fail("a duplicate".into())),
                Err(refusal) => return Err(fail(refusal.message)),
            }
        }
        if let Some((result, reason)) = ending
            && live.over.is_none()
        {
            live.over = Some(Over {
                version: live.ply() as u64 + 1,
                result,
                reason,
                score: live.game.position().score(),
            });
        }
        Ok(live)
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

    /// Events so far: one per move, plus one for the end.
    pub fn version(&self) -> u64 {
        self.ply() as u64 + u64::from(self.over.is_some())
    }

    pub fn over(&self) -> Option<&Over> {
        self.over.as_ref()
    }

    pub fn is_over(&self) -> bool {
        self.over.is_some()
    }

    /// The seat a player holds, if any (the first, when they hold both).
    pub fn seat_of(&self, player: Uuid) -> Option<u8> {
        self.seats_of(player).first().copied()
    }

    /// Every seat a player holds: both in a hotseat game.
    pub fn seats_of(&self, player: Uuid) -> Vec<u8> {
        (0..2u8)
            .filter(|&seat| self.info.seats[seat as usize].player == Some(player))
            .collect()
    }

    /// The seat to move, if the game is on.
    pub fn turn(&self) -> Option<u8> {
        if self.is_over() {
            None
        } else {
            turn(self.game.position())
        }
    }

    /// What `seat` playing `pit` as ply `ply` would do.
    pub fn decide_move(&self, seat: u8, pit: u8, ply: u32) -> Result<MoveDecision, Refusal> {
        let played = self.ply();
        if ply >= 1 && ply <= played {
            let index = ply as usize - 1;
            if self.movers[index] == seat && self.game.moves()[index].get() == pit {
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
        let ends = after.outcome().map(|outcome| Over {
            version: u64::from(ply) + 1,
            result: match outcome.winner {
                Winner::Player(Player::South) => GameResult::P0,
                Winner::Player(Player::North) => GameResult::P1,
                Winner::Draw => GameResult::Draw,
            },
            reason: outcome.reason.into(),
            score: outcome.score,
        });
        Ok(MoveDecision::Play(Box::new(PlannedMove {
            ply,
            seat,
            pit: pit.get(),
            ends,
            after,
        })))
    }

    /// Applies a stored move; returns its event (and the end, if it ended
    /// the game).
    pub fn apply(&mut self, planned: PlannedMove) -> (Moved, Option<Over>) {
        self.game = planned.after;
        self.movers.push(planned.seat);
        self.over = planned.ends;
        let position = self.game.position();
        let next = self.turn();
        let moved = Moved {
            ply: planned.ply,
            by: planned.seat,
            pit: planned.pit,
            version: u64::from(planned.ply),
            board: board(position),
            turn: next,
            legal: legal(position),
            extra_turn: next == Some(planned.seat),
        };
        (moved, self.over)
    }

    /// The end a resignation by `seat` would make.
    pub fn decide_resign(&self, seat: u8) -> Result<Over, Refusal> {
        if self.is_over() {
            return Err(Refusal::new(ErrorCode::GameOver, "the game is over"));
        }
        Ok(Over {
            version: self.version() + 1,
            result: if seat == 0 {
                GameResult::P1
            } else {
                GameResult::P0
            },
            reason: EndReason::Resign,
            score: self.game.position().score(),
        })
    }

    /// Applies a stored end that came from outside the moves (resignation).
    pub fn finish(&mut self, over: Over) {
        self.over = Some(over);
    }

    /// The `moved` event of an earlier ply, rebuilt by replaying to it.
    pub fn moved_at(&self, ply: u32) -> Option<Moved> {
        if ply == 0 || ply > self.ply() {
            return None;
        }
        let mut game = Game::from_variant(self.info.variant);
        for pit in &self.game.moves()[..ply as usize] {
            game.play(*pit).ok()?;
        }
        let position = game.position();
        let by = self.movers[ply as usize - 1];
        let next = turn(position);
        Some(Moved {
            ply,
            by,
            pit: self.game.moves()[ply as usize - 1].get(),
            version: u64::from(ply),
            board: board(position),
            turn: next,
            legal: legal(position),
            extra_turn: next == Some(by),
        })
    }

    /// Every move, as the record lists them.
    pub fn moves(&self) -> Vec<PlayedMove> {
        self.game
            .moves()
            .iter()
            .zip(&self.movers)
            .enumerate()
            .map(|(index, (pit, seat))| PlayedMove {
                ply: index as u32 + 1,
                seat: *seat,
                pit: pit.get(),
            })
            .collect()
    }

    /// A snapshot for one receiver.
    pub fn state(&self, you: Option<u8>, connected: [bool; 2], watchers: u32) -> GameState {
        let position = self.game.position();
        let last_move = self.moves().last().copied();
        GameState {
            game_id: self.info.id,
            variant: self.info.variant.into(),
            rated: self.info.rated,
            status: if self.is_over() {
                GameStatus::Over
            } else {
                GameStatus::Live
            },
            seats: self.info.seats.clone(),
            board: board(position),
            turn: self.turn(),
            legal: if self.is_over() {
                Vec::new()
            } else {
                legal(position)
            },
            ply: self.ply(),
            version: self.version(),
            last_move,
            connected,
            watchers,
            you,
            result: self.over,
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

    fn kalah() -> LiveGame {
        LiveGame::new(GameInfo {
            id: Uuid::new_v4(),
            variant: Variant::Kalah(KalahOptions::default()),
            rated: false,
            seats: [seat("south"), seat("north")],
        })
    }

    fn play(game: &mut LiveGame, seat: u8, pit: u8) -> Moved {
        let ply = game.ply() + 1;
        match game.decide_move(seat, pit, ply).unwrap() {
            MoveDecision::Play(planned) => game.apply(*planned).0,
            MoveDecision::Duplicate { .. } => panic!("duplicate"),
        }
    }

    #[test]
    fn moves_are_checked_in_order_of_what_the_client_got_wrong() {
        let mut game = kalah();
        // Kalah 6x4: pit 3 sows into the store, an extra turn.
        let moved = play(&mut game, 0, 3);
        assert!(moved.extra_turn);
        assert_eq!((moved.ply, moved.version, moved.turn), (1, 1, Some(0)));
        let refuse =
            |game: &LiveGame, seat, pit, ply| game.decide_move(seat, pit, ply).unwrap_err();
        assert_eq!(refuse(&game, 1, 1, 2).code, ErrorCode::NotYourTurn);
        let stale = refuse(&game, 0, 1, 5);
        assert_eq!((stale.code, stale.resync), (ErrorCode::StalePly, true));
        assert_eq!(refuse(&game, 0, 3, 2).code, ErrorCode::EmptyPit);
        assert_eq!(refuse(&game, 0, 7, 2).code, ErrorCode::PitOutOfRange);
        // The same move again is recognised, not replayed.
        assert!(matches!(
            game.decide_move(0, 3, 1),
            Ok(MoveDecision::Duplicate { ply: 1 })
        ));
        // The same ply with another pit is stale.
        assert_eq!(refuse(&game, 0, 4, 1).code, ErrorCode::StalePly);
        assert_eq!(game.moved_at(1).unwrap(), moved);
    }

    #[test]
    fn a_replayed_game_equals_the_one_played() {
        let mut game = kalah();
        let mut seed = 7u64;
        while !game.is_over() {
            let state = game.state(None, [true; 2], 0);
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let pit = state.legal[(seed >> 33) as usize % state.legal.len()];
            play(&mut game, state.turn.unwrap(), pit);
        }
        let over = *game.over().unwrap();
        assert_eq!(over.version, game.ply() as u64 + 1);
        let replayed = LiveGame::replay(game.info().clone(), &game.moves(), None).unwrap();
        assert_eq!(replayed.over(), Some(&over));
        assert_eq!(
            replayed.state(Some(0), [true; 2], 3),
            game.state(Some(0), [true; 2], 3)
        );
        assert_eq!(
            game.decide_move(0, 1, game.ply() + 1).unwrap_err().code,
            ErrorCode::GameOver
        );
    }

    #[test]
    fn resigning_ends_the_game_for_the_other_seat() {
        let mut game = kalah();
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
            &game.moves(),
            Some((GameResult::P0, EndReason::Resign)),
        )
        .unwrap();
        assert_eq!(replayed.over(), Some(&over));
    }

    #[test]
    fn corrupt_rows_do_not_replay() {
        let game = kalah();
        let bad = [PlayedMove {
            ply: 1,
            seat: 1,
            pit: 1,
        }];
        assert!(LiveGame::replay(game.info().clone(), &bad, None).is_err());
    }
}
