//! Who is here: the sockets of each seat, since when a player has been
//! away (the reconnect countdown), what the lobby counts as online and
//! playing, and what every socket of the game hears when someone comes or
//! goes.

use mancala_proto::ErrorCode;
use mancala_proto::error::CLOSE_ROOM_CLOSED;
use mancala_proto::game::ServerMessage;
use mancala_rules::Side;
use uuid::Uuid;

use super::REPLACED;
use super::state::{Ask, Effect, HostState, Marks, Pending, Reply};
use crate::game::live::Refusal;

/// Each seat's countdown (ms left) at `now`, for players away since
/// `absent_since`, who have `limit_ms` to come back.
fn countdowns_at(absent_since: [Option<u64>; 2], limit_ms: u64, now: u64) -> [Option<u64>; 2] {
    absent_since.map(|since| since.map(|since| limit_ms.saturating_sub(now.saturating_sub(since))))
}

impl HostState {
    /// A socket of `player` joins: their seats, or why they have none.
    pub(super) fn join(&mut self, player: Uuid) {
        let seats = self.live.seats_of(player);
        if seats.is_empty() {
            let refusal = if self.live.replaced(player) {
                Refusal::new(ErrorCode::NotAllowed, REPLACED)
            } else {
                Refusal::new(
                    ErrorCode::Forbidden,
                    "you hold no seat in this game; watch it instead",
                )
            };
            self.reply(Reply::Refused(refusal));
            self.close_if_room_closed();
            return;
        }
        let before = self.connected();
        for &seat in &seats {
            self.connections[seat.index()] += 1;
            self.absent_since[seat.index()] = None;
        }
        if self.idle_since.take().is_some() {
            self.room_idle(None);
        }
        // A page opened (or reloaded) after a rated game shows the ratings
        // it left: as heard, or read back from the rating history (this
        // host was loaded after the change was made).
        if self.live.is_over() && self.live.info().rated && self.rating_change.is_none() {
            self.ask(Ask::RatingChange, Pending::Join { seats, before });
            return;
        }
        self.joined(seats, before);
    }

    /// The joining socket's snapshot, then what everyone hears of it.
    pub(super) fn joined(&mut self, seats: Vec<Side>, before: [bool; 2]) {
        let rated_over = self.live.is_over() && self.live.info().rated;
        let rating_change = self.rating_change.clone().filter(|_| rated_over);
        let state = self.state(seats.first().copied());
        self.reply(Reply::Joined {
            state,
            seats,
            rating_change,
        });
        self.mark_players(Vec::new(), self.changed_presence(before));
        self.announce_presence(before);
        self.close_if_room_closed();
    }

    /// Told at once, not at the next tick, so a page never offers a
    /// rematch in a room that has closed.
    fn close_if_room_closed(&mut self) {
        if self.finished_room_closed(self.now) {
            self.stop(CLOSE_ROOM_CLOSED, "the room closed");
        }
    }

    /// A socket of these seats closed.
    pub(super) fn leave(&mut self, seats: Vec<Side>) {
        let before = self.connected();
        for seat in seats {
            let count = &mut self.connections[seat.index()];
            *count = count.saturating_sub(1);
        }
        let now = self.now;
        let counts = self.live.info().between_people();
        let mut gone = Vec::new();
        for (seat, was_here) in Side::BOTH.into_iter().zip(before) {
            if !was_here || self.connections[seat.index()] > 0 {
                continue;
            }
            gone.extend(self.live.info().seats[seat.index()].player);
            if counts {
                self.absent_since[seat.index()] = Some(now);
                self.withdraw_offer(seat);
            }
        }
        // Told at once, not at the next renewal: the lobby's lists and
        // figures must not show a game nobody is playing any more.
        self.mark_players(gone, self.changed_presence(before));
        // A room whose series moved on to its next game is not left empty
        // by the old game's sockets closing.
        if self.connections == [0, 0] {
            self.idle_since = Some(now);
            if self.live.rematch().is_none() {
                self.room_idle(Some(now));
            }
        }
        self.announce_presence(before);
    }

    pub(super) fn connected(&self) -> [bool; 2] {
        [self.connections[0] > 0, self.connections[1] > 0]
    }

    /// Each absent player's reconnect countdown (ms left), while the game
    /// is on.
    pub(super) fn countdowns(&self) -> [Option<u64>; 2] {
        if self.live.is_over() {
            return [None, None];
        }
        countdowns_at(self.absent_since, self.rules.reconnect_ms, self.now)
    }

    /// Records in the room whether anyone is connected (for its idle rule).
    fn room_idle(&mut self, since: Option<u64>) {
        if let Some(room) = self.live.info().room {
            self.effect(Effect::RoomIdle { room, since });
        }
    }

    /// Counts this game's connected players as online and playing in the
    /// lobby's figures, and the game as occupied in the live lists while a
    /// player is at the board (entries expire unless refreshed, so a dead
    /// instance leaves no drift). `gone` are players whose last socket
    /// here just closed: they stop counting as playing at once. (One still
    /// at another game counts again at that game's next renewal, seconds
    /// later: a short undercount rather than a ghost.)
    pub(super) fn mark_players(&mut self, gone: Vec<Uuid>, presence: Option<[bool; 2]>) {
        let mut marks = Marks {
            presence,
            ..Marks::default()
        };
        for (seat, info) in self.live.info().seats.iter().enumerate() {
            let Some(player) = info.player.filter(|_| self.connections[seat] > 0) else {
                continue;
            };
            let playing = !self.live.is_over() && info.ai.is_none();
            marks.occupied |= playing;
            marks.here.push((player, playing));
        }
        marks.gone = gone
            .into_iter()
            .filter(|&player| !self.connected_player(player))
            .collect();
        self.effect(Effect::Mark(marks));
    }

    /// Whether `player` still has a socket at one of this game's seats (a
    /// one-device game seats them twice).
    fn connected_player(&self, player: Uuid) -> bool {
        self.live
            .info()
            .seats
            .iter()
            .zip(self.connections)
            .any(|(seat, sockets)| sockets > 0 && seat.player == Some(player))
    }

    /// Who is connected now, if that changed since `before`.
    fn changed_presence(&self, before: [bool; 2]) -> Option<[bool; 2]> {
        Some(self.connected()).filter(|&now| now != before)
    }

    /// Tells every socket of the game whose connection changed since
    /// `before` (other instances learn it with the marks).
    pub(super) fn announce_presence(&mut self, before: [bool; 2]) {
        let now = self.connected();
        if now == before {
            return;
        }
        let countdowns = self.countdowns();
        for seat in Side::BOTH {
            if now[seat.index()] != before[seat.index()] {
                let message = ServerMessage::Presence {
                    seat,
                    connected: now[seat.index()],
                    countdown_ms: countdowns[seat.index()],
                };
                self.emit(&message, None);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn countdowns_run_from_when_each_player_went() {
        let left = countdowns_at([None, Some(1_000)], 120_000, 31_000);
        assert_eq!(left, [None, Some(90_000)]);
        let over = countdowns_at([Some(0), Some(1_000)], 120_000, 500_000);
        assert_eq!(over, [Some(0), Some(0)], "never below zero");
    }
}
