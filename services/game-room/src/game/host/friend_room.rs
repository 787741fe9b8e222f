//! The friend room a game belongs to: it is occupied while anyone is
//! connected (its idle rule), and ends when a player leaves it for good,
//! by `leave_room` or by staying away for the reconnect window after a
//! game. A pending rematch offer goes with the player who made it.

use bytestring::ByteString;
use mancala_platform::clock::timestamp;
use mancala_platform::socket::error_text;
use mancala_proto::ErrorCode;
use mancala_proto::game::ServerMessage;
use mancala_rules::Side;

use super::Host;
use super::commit::CommitError;
use crate::store;

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

impl Host {
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
        let limit = self.deps.settings.reconnect.as_millis() as u64;
        walked_out_at(self.connections, self.absent_since, limit, now)
    }

    /// Records in the room whether anyone is connected (for its idle rule).
    pub(super) async fn room_occupied(&self, occupied: bool) {
        let Some(room) = self.live.info().room else {
            return;
        };
        let since = (!occupied).then(|| timestamp(self.now()));
        if let Err(error) = store::set_room_idle(&self.deps.postgres, room, since).await {
            tracing::warn!(%error, "recording a room's idleness");
        }
    }

    /// A rematch offer is off once the player who made it is gone: nobody
    /// is put into a rated game after leaving.
    pub(super) async fn withdraw_offer(&mut self, seat: Side) {
        if self.rematch_offer == Some(seat) {
            self.rematch_offer = None;
            self.emit(&ServerMessage::RematchCancelled { by: seat }, None)
                .await;
        }
    }

    pub(super) async fn leave_room_request(
        &mut self,
        seat: Side,
    ) -> Result<Vec<ByteString>, CommitError> {
        let refuse = |message: &str| Ok(vec![error_text(ErrorCode::NotAllowed, message)]);
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
            return Ok(Vec::new());
        }
        if !self.leave_room(seat).await {
            return Ok(vec![error_text(
                ErrorCode::Unavailable,
                "leaving was not saved; retry",
            )]);
        }
        Ok(Vec::new())
    }

    /// Closes the friend room on behalf of the player of `seat`, who left
    /// it for good; false when that could not be stored.
    pub(super) async fn leave_room(&mut self, seat: Side) -> bool {
        let (Some(room), Some(player)) = (
            self.live.info().room,
            self.live.info().seats[seat.index()].player,
        ) else {
            return false;
        };
        let now = timestamp(self.now());
        if let Err(error) = store::leave_room(&self.deps.postgres, room, player, now).await {
            tracing::warn!(%error, %room, "leaving a room");
            return false;
        }
        self.room_left = true;
        self.rematch_offer = None;
        self.emit(&ServerMessage::RoomLeft { seat }, None).await;
        true
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
