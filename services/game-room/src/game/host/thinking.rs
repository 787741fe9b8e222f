//! The AI's turn: a search asked of the process's pool (`crate::ai`), at
//! most one per game, dropped when the position it answers is gone.

use mancala_ai::{AnyAi, Level};
use mancala_rules::Side;

use super::state::{Effect, HostState, Origin};
use crate::ai;
use crate::game::live::Refusal;

impl HostState {
    /// Asks the AI for a move when an AI seat is to move and no search is
    /// under way.
    pub(super) fn think(&mut self) {
        let Some(seat) = self.live.turn() else {
            return;
        };
        let info = self.live.info();
        if !info.is_ai(seat) || self.thinking {
            return;
        }
        let level = info.seats[seat.index()]
            .ai
            .as_deref()
            .and_then(|name| name.parse::<Level>().ok())
            .filter(|level| AnyAi::offers(info.variant, *level))
            .unwrap_or(Level::Advanced);
        let version = self.live.version();
        // The same game, seat and ply choose alike, on any host.
        let seed =
            self.live.id().as_u64_pair().0 ^ seat.index() as u64 ^ u64::from(self.live.ply()) << 8;
        let request = ai::Request {
            game: self.live.rules_game().clone(),
            variant: info.variant,
            level,
            seed,
            // The AI's time is the share of the person it plays against.
            owner: info.seats[seat.opponent().index()]
                .player
                .unwrap_or(self.live.id()),
        };
        self.thinking = true;
        self.effect(Effect::Think {
            request,
            version,
            seat,
        });
    }

    /// The search behind a hint for the side to move: the Advanced engine
    /// (a hint should be good, and come within the AI's usual time), and
    /// the ply the hint is for, so a client can drop one that arrives late.
    pub(super) fn hint_request(&self, seats: &[Side]) -> Result<(u32, ai::Request), Refusal> {
        let seat = self.live.decide_hint(seats)?;
        let info = self.live.info();
        let seed =
            self.live.id().as_u64_pair().1 ^ seat.index() as u64 ^ u64::from(self.live.ply()) << 8;
        let request = ai::Request {
            game: self.live.rules_game().clone(),
            variant: info.variant,
            level: Level::Advanced,
            seed,
            owner: info.seats[seat.index()].player.unwrap_or(self.live.id()),
        };
        Ok((self.live.ply() + 1, request))
    }

    /// Stops the search under way; it still reports (with nothing).
    pub(super) fn stop_thinking(&mut self) {
        if self.thinking {
            self.effect(Effect::StopThinking);
        }
    }

    /// The AI's answer: played if it is still the position it was asked
    /// about; then the next search, if the AI is to move again.
    pub(super) fn thought(&mut self, version: u64, seat: Side, pit: Option<u8>) {
        self.thinking = false;
        self.origin = Origin::Thought;
        if let Some(pit) = pit
            && version == self.live.version()
            && self.live.turn() == Some(seat)
            && self.live.info().is_ai(seat)
        {
            let ply = self.live.ply() + 1;
            let flow = self.play(seat, pit, ply, true, None);
            return self.end_flow(flow.map(Ok));
        }
        self.think();
    }
}
