//! What a seated player (or the AI) asks of a game: moves, resignations,
//! undos, what follows an absent opponent's countdown, rematches. Each is
//! decided by the pure model (`live`), committed, and only then applied
//! and sent; a refusal changes nothing and is answered to the asker alone.

use bytestring::ByteString;
use mancala_platform::clock::timestamp;
use mancala_platform::ratelimit;
use mancala_platform::socket::{error_body_text, error_text};
use mancala_proto::game::{GameResult, Over, ServerMessage};
use mancala_proto::{ErrorBody, ErrorCode};
use mancala_rules::Side;

use super::commit::{Change, CommitError, commit};
use super::{Host, Request, encode};
use crate::game::fair_play::{self, AtTheEnd};
use crate::game::live::MoveDecision;
use crate::game::rematch;
use crate::store::OffenceRow;

/// What a player is allowed only so often.
#[derive(Clone, Copy, Debug)]
pub(super) enum Counted {
    Undos,
    Hints,
}

impl Host {
    /// Carries out a seated request; the answer for the asker alone.
    pub(super) async fn request(
        &mut self,
        seat: Side,
        seats: &[Side],
        request: Request,
    ) -> Result<Vec<ByteString>, CommitError> {
        match request {
            Request::Move { pit, ply } => self.play(seat, pit, ply, false).await,
            Request::Resign => self.resign(seat).await,
            Request::Undo => self.undo(seats).await,
            Request::Rematch => self.rematch(seat).await,
            Request::ContinueVsAi => self.after_countdown(seat, false).await,
            Request::ClaimVictory => self.after_countdown(seat, true).await,
            Request::LeaveRoom => self.leave_room_request(seat).await,
        }
    }

    /// Writes a change of this game under its epoch (see `commit`).
    async fn commit(&self, change: Change) -> Result<(), CommitError> {
        commit(
            &self.deps.writer,
            &self.deps.admission,
            self.live.id(),
            self.epoch,
            change,
        )
        .await
    }

    /// The seat a socket acts for: the one to move, if it holds it.
    pub(super) fn acting_seat(&self, seats: &[Side]) -> Option<Side> {
        match self.live.turn() {
            Some(turn) if seats.contains(&turn) => Some(turn),
            _ => seats.first().copied(),
        }
    }

    pub(super) async fn play(
        &mut self,
        seat: Side,
        pit: u8,
        ply: u32,
        by_ai: bool,
    ) -> Result<Vec<ByteString>, CommitError> {
        if self.live.info().is_ai(seat) != by_ai {
            return Ok(vec![error_text(
                ErrorCode::NotAllowed,
                "an AI plays this seat now",
            )]);
        }
        let now = self.now();
        if let Some(over) = self.live.flag_fall(now) {
            self.end(over, self.live.turn()).await?;
            return Ok(vec![error_text(ErrorCode::GameOver, "your flag fell")]);
        }
        let planned = match self.live.decide_move(seat, pit, ply, now) {
            Err(refusal) => {
                let mut answer = vec![error_text(refusal.code, &refusal.message)];
                if refusal.resync {
                    answer.push(self.state(Some(seat)));
                }
                return Ok(answer);
            }
            Ok(MoveDecision::Duplicate { ply }) => {
                let text = self
                    .recent
                    .iter()
                    .find(|(_, moved, _)| *moved == Some(ply))
                    .map(|(_, _, text)| text.clone())
                    .unwrap_or_else(|| self.state(Some(seat)));
                return Ok(vec![text]);
            }
            Ok(MoveDecision::Play(planned)) => *planned,
        };
        self.commit(Change::Move {
            stored: planned.stored,
            version: planned.version,
            ends: planned.ends,
        })
        .await?;
        let ply = planned.stored.played.ply;
        let (moved, over) = self.live.apply(planned);
        let version = moved.version;
        self.emit(&ServerMessage::Moved(moved), Some((version, Some(ply))))
            .await;
        if let Some(over) = over {
            self.emit(&ServerMessage::Over(over), Some((over.version, None)))
                .await;
            self.wake_ratings().await;
            self.analyse_at_the_end();
        }
        Ok(Vec::new())
    }

    /// Ends the game (resignation, flag, no start, claim, closed room);
    /// `by` is the side whose act or absence ended it (the resigner, the
    /// flagged side, the side that never started, the absent side), and
    /// bears the offence, if it is one, in the same commit.
    pub(super) async fn end(&mut self, over: Over, by: Option<Side>) -> Result<(), CommitError> {
        let at_ms = self.now();
        let offence = by.and_then(|by| self.offence(&over, by, at_ms));
        self.commit(Change::End {
            over,
            at_ms,
            offence,
        })
        .await?;
        self.live.finish(over);
        self.stop_thinking();
        self.emit(&ServerMessage::Over(over), Some((over.version, None)))
            .await;
        self.wake_ratings().await;
        self.analyse_at_the_end();
        Ok(())
    }

    /// What `over`, made by `by`, charges them with (`game::fair_play`).
    fn offence(&self, over: &Over, by: Side, at_ms: u64) -> Option<OffenceRow> {
        let state = AtTheEnd {
            moved: self.live.moved(),
            plies: self.live.ply(),
            connected: self.connected(),
        };
        let info = self.live.info();
        let quick = self.deps.settings.quick_resign_plies;
        let kind = fair_play::offence(info, over, by, state, quick)?;
        let player = info.seats[by.index()].player?;
        Some(OffenceRow {
            player,
            kind,
            at_ms,
        })
    }

    async fn resign(&mut self, seat: Side) -> Result<Vec<ByteString>, CommitError> {
        match self.live.decide_resign(seat) {
            Ok(over) => {
                self.end(over, Some(seat)).await?;
                Ok(Vec::new())
            }
            Err(refusal) => Ok(vec![error_text(refusal.code, &refusal.message)]),
        }
    }

    async fn undo(&mut self, seats: &[Side]) -> Result<Vec<ByteString>, CommitError> {
        let ply = match self.live.decide_undo(seats) {
            Ok(ply) => ply,
            Err(refusal) => return Ok(vec![error_text(refusal.code, &refusal.message)]),
        };
        if let Some(refused) = self.limited(Counted::Undos, seats).await {
            return Ok(vec![refused]);
        }
        let version = self.live.version() + 1;
        let now = self.now();
        self.commit(Change::Undo {
            ply,
            version,
            at_ms: now,
        })
        .await?;
        // An AI reply being computed is for a position that is gone: stop
        // it. The next search starts once it has returned (one per game).
        self.stop_thinking();
        let undone = self.live.apply_undo(ply, now);
        let version = undone.version;
        self.emit(&ServerMessage::Undone(undone), Some((version, None)))
            .await;
        Ok(Vec::new())
    }

    /// The refusal when the player has undone or asked for hints too much
    /// lately: each restarts or starts a search on the
    /// shared AI workers, so they are counted per player, across
    /// instances. A Redis outage lets them through.
    pub(super) async fn limited(&self, kind: Counted, seats: &[Side]) -> Option<ByteString> {
        let seat = *seats.first()?;
        let player = self.live.info().seats[seat.index()].player?;
        let (kind, limit) = match kind {
            Counted::Undos => ("undos", self.deps.settings.undos),
            Counted::Hints => ("hints", self.deps.settings.hints),
        };
        let now = self.deps.clock.now_secs();
        let redis = &self.deps.redis;
        match ratelimit::hit(redis, kind, &player.to_string(), limit, now).await {
            Ok(ratelimit::Decision::Limited { retry_after }) => Some(error_body_text(&ErrorBody {
                retry_after: Some(retry_after),
                ..ErrorBody::new(
                    ErrorCode::RateLimited,
                    format!("too many {kind}; retry in {retry_after} s"),
                )
            })),
            Ok(ratelimit::Decision::Allowed { .. }) => None,
            Err(error) => {
                tracing::warn!(%error, kind, "counting");
                None
            }
        }
    }

    async fn after_countdown(
        &mut self,
        seat: Side,
        claim: bool,
    ) -> Result<Vec<ByteString>, CommitError> {
        if self.live.is_over() {
            return Ok(vec![error_text(ErrorCode::GameOver, "the game is over")]);
        }
        let absent = seat.opponent();
        if !self.live.info().between_people() {
            return Ok(vec![error_text(
                ErrorCode::NotAllowed,
                "only against an absent person",
            )]);
        }
        let Some(countdown) = self.countdowns()[absent.index()] else {
            return Ok(vec![error_text(
                ErrorCode::NotAllowed,
                "your opponent is here",
            )]);
        };
        if countdown > 0 {
            return Ok(vec![error_text(
                ErrorCode::CountdownRunning,
                &format!("your opponent has {} s to return", countdown.div_ceil(1000)),
            )]);
        }
        if claim {
            // An abort if the absent side never moved (see `live::settle`).
            let over = self.live.claim(seat);
            self.end(over, Some(absent)).await?;
            return Ok(Vec::new());
        }
        let info = self.live.info();
        let rating = info.seats[absent.index()].rating.unwrap_or(1500.0);
        let level = mancala_ai::level_near(info.variant, rating);
        let version = self.live.version() + 1;
        // Going on against the AI is the same leaving as a claim: the
        // absent player is charged as if the game had ended so.
        let left = self.live.claim(seat);
        let offence = self.offence(&left, absent, self.now());
        self.commit(Change::TakeOver {
            seat: absent,
            level: level.name().to_owned(),
            version,
            offence,
        })
        .await?;
        let version = self.live.take_over(absent, level.name());
        self.absent_since[absent.index()] = None;
        let message = ServerMessage::TakenOver {
            version,
            seat: absent,
            level: level.name().to_owned(),
        };
        self.emit(&message, Some((version, None))).await;
        Ok(Vec::new())
    }

    async fn rematch(&mut self, seat: Side) -> Result<Vec<ByteString>, CommitError> {
        if !self.live.is_over() {
            return Ok(vec![error_text(
                ErrorCode::NotAllowed,
                "finish this game first",
            )]);
        }
        if let Some(next) = self.live.rematch() {
            return Ok(vec![encode(&rematch::started(next))]);
        }
        if self.room_left {
            return Ok(vec![error_text(
                ErrorCode::NotAllowed,
                "a player left the room; it is closed",
            )]);
        }
        // A rematch is a new game: a busy instance keeps its capacity for
        // the games in progress. While this game still holds its place
        // (see `hold_or_free_place`), the rematch takes that place over.
        let admitted = if self.in_progress.is_some() {
            self.deps.admission.admit_held("rematch")
        } else {
            self.deps.admission.admit("rematch")
        };
        if let Err(busy) = admitted {
            return Ok(vec![error_body_text(&busy.body())]);
        }
        if rematch::needs_agreement(self.live.info()) {
            match self.rematch_offer {
                Some(by) if by != seat => {}
                Some(_) => return Ok(Vec::new()),
                None => {
                    self.rematch_offer = Some(seat);
                    self.emit(&ServerMessage::RematchOffer { by: seat }, None)
                        .await;
                    return Ok(Vec::new());
                }
            }
        }
        let now = timestamp(self.now());
        let limit = self.deps.settings.rated_pair_limit;
        match rematch::create(&self.hosted, self.live.info(), now, limit).await {
            Ok(Some(next)) => {
                self.live.set_rematch(next);
                // The rematch is hosted and counted from its commit: its
                // place passes over now, not after the replies are sent,
                // or for that moment a full instance counts one game too
                // many and refuses a rematch ending at the same time.
                self.in_progress = None;
                self.rematch_offer = None;
                self.emit(&rematch::started(next), None).await;
                Ok(Vec::new())
            }
            Ok(None) => {
                // Its life ran out since the game began: the next tick
                // closes the sockets with the room-closed code.
                self.room_closes = Some(0);
                Ok(vec![error_text(
                    ErrorCode::NotAllowed,
                    "the room has closed",
                )])
            }
            Err(error) => {
                tracing::warn!(%error, "creating a rematch failed");
                Ok(vec![error_text(
                    ErrorCode::Unavailable,
                    "no rematch now; retry",
                )])
            }
        }
    }

    /// A game watched as it ends is analysed now, for its players and
    /// watchers, who ask together in a moment: they join this one analysis
    /// rather than queue behind strangers for the instance's one place. A
    /// game played with nobody watching is analysed when a player asks.
    pub(super) fn analyse_at_the_end(&self) {
        let played = self
            .live
            .over()
            .is_some_and(|over| over.result != GameResult::Aborted);
        if !played || self.watchers == 0 {
            return;
        }
        let Some(started) = self.deps.ai.analyses().at_the_end() else {
            return;
        };
        let (ai, id, game) = (
            self.deps.ai.clone(),
            self.live.id(),
            self.live.rules_game().clone(),
        );
        tokio::spawn(async move {
            let _ = ai.analyse(id, game, crate::analysis::Asker::AtTheEnd).await;
            drop(started);
        });
    }

    /// Tells the rating service a rated game ended with a result (its
    /// outbox row is committed); polling covers a lost notice.
    pub(super) async fn wake_ratings(&self) {
        let result = self.live.over().map(|over| over.result);
        if self.live.info().rated && result.is_some_and(|result| result != GameResult::Aborted) {
            self.deps.hub.wake_ratings(self.live.id()).await;
        }
    }
}
