//! The friend room a game belongs to: it is occupied while anyone is
//! connected (its idle rule), and ends when a player leaves it for good,
//! by `leave_room` or by staying away for the reconnect window after a
//! game. A pending rematch offer goes with the player who made it.

use bytestring::ByteString;
use mancala_platform::socket::error_text;
use mancala_proto::ErrorCode;
use mancala_proto::game::ServerMessage;
use mancala_rules::Side;

use super::state::{Ask, Flow, HostState, Pending};

/// The seat whose player has had no socket for `limit_ms` at `now`.
fn walked_out_at(
    connections: [u32; 2],
    absent_since: [Option<u64>; 2],
    limit_ms: u64,
    now: u64,
) -> Option<Side> {
    Side::BOTH.into_iter().find(|&seat| {
        connections[seat.index()] == 0
            && absent_since[seat.index()].is_some_and(|since| now.saturating_sub(since) >= limit_ms)
    })
}

impl HostState {
    /// After a game in a friend's room, the seat whose player has been
    /// away for the reconnect window: they closed the page and left.
    pub(super) fn walked_out(&self, now: u64) -> Option<Side> {
        let info = self.live.info();
        if info.room.is_none()
            || self.room_left
            || self.live.rematch().is_some()
            || !info.between_people()
        {
            return None;
        }
        walked_out_at(
            self.connections,
            self.absent_since,
            self.rules.reconnect_ms,
            now,
        )
    }

    /// A rematch offer is off once the player who made it is gone: nobody
    /// is put into a rated game after leaving.
    pub(super) fn withdraw_offer(&mut self, seat: Side) {
        if self.rematch_offer == Some(seat) {
            self.rematch_offer = None;
            self.emit(&ServerMessage::RematchCancelled { by: seat }, None);
        }
    }

    pub(super) fn leave_room_request(&mut self, seat: Side) -> Flow {
        let refuse = |message: &str| Some(vec![error_text(ErrorCode::NotAllowed, message)]);
        if self.live.info().room.is_none() {
            return refuse("this game is not in a friend's room");
        }
        if !self.live.is_over() {
            return refuse("finish or resign the game first");
        }
        if self.live.rematch().is_some() {
            return refuse("the room has moved on to its next game; leave from there");
        }
        if self.room_left {
            return Some(Vec::new());
        }
        if !self.leave_room(seat, Pending::LeaveRoom { seat }) {
            return Some(self.room_left_stored(seat, false));
        }
        None
    }

    /// Asks to close the friend room on behalf of the player of `seat`,
    /// who left it for good; false when there is no room or player.
    pub(super) fn leave_room(&mut self, seat: Side, then: Pending) -> bool {
        let info = self.live.info();
        let (Some(room), Some(player)) = (info.room, info.seats[seat.index()].player) else {
            return false;
        };
        self.ask(Ask::LeaveRoom { room, player }, then);
        true
    }

    /// Whether leaving was stored: the answer for the player who asked.
    pub(super) fn room_left_stored(&mut self, seat: Side, left: bool) -> Vec<ByteString> {
        if !left {
            return vec![error_text(
                ErrorCode::Unavailable,
                "leaving was not saved; retry",
            )];
        }
        self.room_left = true;
        self.rematch_offer = None;
        self.emit(&ServerMessage::RoomLeft { seat }, None);
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_player_away_for_the_window_has_walked_out() {
        assert_eq!(walked_out_at([1, 0], [None, Some(0)], 1_000, 999), None);
        assert_eq!(
            walked_out_at([1, 0], [None, Some(0)], 1_000, 1_000),
            Some(Side::North)
        );
        // Connected again (another tab): not gone, whatever the mark says.
        assert_eq!(walked_out_at([1, 1], [None, Some(0)], 1_000, 5_000), None);
    }
}
