//! What happens with time alone, read against the injected clock on each
//! tick: a flag falls, a first move is missed, the room's life ends, a
//! player walks out after a game, nobody is left and the game unloads.

use mancala_proto::error::{CLOSE_RESTART, CLOSE_ROOM_CLOSED};
use mancala_proto::game::{EndReason, Over, ServerMessage};

use super::state::{Ask, Effect, HostState, Origin, Pending, Then};
/// Whether a game nobody has been connected to since `idle_since` has
/// waited `limit_ms` at `now`, and may unload.
fn idle_long_enough(idle_since: Option<u64>, limit_ms: u64, now: u64) -> bool {
    idle_since.is_some_and(|since| now.saturating_sub(since) >= limit_ms)
}

/// How long a finished game outside a room stays loaded once its players
/// have gone: a reload of the page finds it still here, and then it is
/// only a record, which any visitor loads back from Postgres.
const FINISHED_IDLE_MS: u64 = 10_000;

/// How long a game nobody is connected to stays loaded: a live game the
/// whole idle window (its players may be coming back), a finished one
/// whose series moved on not at all, a finished one in a room (whose
/// players may still ask for a rematch) the idle window, any other
/// finished one a few seconds.
fn unload_after_ms(over: bool, moved_on: bool, in_room: bool, idle_window_ms: u64) -> u64 {
    match (over, moved_on, in_room) {
        (false, ..) => idle_window_ms,
        (true, true, _) => 0,
        (true, false, true) => idle_window_ms,
        (true, false, false) => FINISHED_IDLE_MS.min(idle_window_ms),
    }
}

/// How long a finished game keeps its place among the instance's games
/// for the rematch its players may ask for: at capacity, the place a game
/// frees as it ends would otherwise go to whoever asks first (a queue
/// entry, a game of strangers), the rematch would be refused, and its two
/// players would join the crowd retrying at the door. Longer than a
/// rematch takes to agree between two people who want one.
const REMATCH_HOLD_MS: u64 = 10_000;

/// Whether a finished game still holds its place at `now`: until `until`,
/// while no rematch has started, the room stands and a player is there to
/// ask.
fn holds_place(now: u64, until: u64, moved_on: bool, room_left: bool, anyone_here: bool) -> bool {
    now < until && !moved_on && !room_left && anyone_here
}

impl HostState {
    /// After every input: a finished game frees its place among the
    /// instance's games once its rematch is made or can no longer be.
    pub(super) fn hold_or_free_place(&mut self) {
        if !self.holds_place || !self.live.is_over() {
            return;
        }
        let now = self.now;
        let until = *self.held_until.get_or_insert(now + REMATCH_HOLD_MS);
        let moved_on = self.live.rematch().is_some();
        let anyone_here = self.connections.iter().any(|&sockets| sockets > 0);
        if !holds_place(now, until, moved_on, self.room_left, anyone_here) {
            self.free_place();
        }
    }

    pub(super) fn free_place(&mut self) {
        if self.holds_place {
            self.holds_place = false;
            self.effect(Effect::FreePlace);
        }
    }

    /// Timers, read against the injected clock.
    pub(super) fn on_tick(&mut self) {
        let now = self.now;
        self.origin = Origin::Tick;
        if self.live.is_over() {
            if let Some(seat) = self.walked_out(now)
                && self.leave_room(seat, Pending::WalkedOut { seat })
            {
                return;
            }
            return self.after_walk_out();
        }
        if let Some(closes) = self.room_closes
            && now >= closes
        {
            return self.close_room();
        }
        let end = self
            .live
            .flag_fall(now)
            .or_else(|| self.live.first_move_missed(now, self.rules.first_move_ms));
        if let Some(over) = end {
            // A flag falls, or a first move is missed, on the side to move.
            let flow = self.end(over, self.live.turn(), Vec::new());
            return self.end_flow(flow.map(Ok));
        }
        self.idle_check();
    }

    /// The rest of a finished game's tick, once a player who walked out
    /// has left its room.
    pub(super) fn after_walk_out(&mut self) {
        if self.finished_room_closed(self.now) {
            return self.stop(CLOSE_ROOM_CLOSED, "the room closed");
        }
        self.idle_check();
    }

    /// Whether this finished game's room ran out of time (or a rematch
    /// found it closed) with no next game made: it has nothing more to
    /// offer its players, who are told rather than left with a rematch
    /// button the server would refuse.
    pub(super) fn finished_room_closed(&self, now: u64) -> bool {
        self.live.is_over()
            && self.live.rematch().is_none()
            && self.room_closes.is_some_and(|closes| now >= closes)
    }

    fn idle_check(&mut self) {
        // A finished game is of little use here once its sockets closed (a
        // late visitor loads it back): kept for the idle window, a busy
        // instance would hold tens of thousands of them, each renewing its
        // lease and ticking. Those whose rematch a full instance refused
        // did, at 1.5x the knee: thousands of finished games for 2 minutes.
        let over = self.live.is_over();
        let limit = unload_after_ms(
            over,
            over && self.live.rematch().is_some(),
            self.live.info().room.is_some(),
            self.rules.idle_unload_ms,
        );
        // An AI still thinking keeps the game loaded: its move is coming.
        if idle_long_enough(self.idle_since, limit, self.now) && !self.thinking {
            self.stop(CLOSE_RESTART, "the game was unloaded");
        }
    }

    fn close_room(&mut self) {
        let over = self.live.aborted(EndReason::RoomClosed);
        let change = crate::store::Change::End {
            over,
            at_ms: self.now,
            offence: None,
            rates: self.live.would_rate(&over),
            plies: self.live.ply(),
            moved: self.live.moved(),
        };
        self.commit(change, Then::CloseRoom { over });
    }

    /// The room's game was fenced as its timer closed it: the room sweeper
    /// may have closed the room (and aborted this game) a moment before,
    /// which is the same end; otherwise another host has the game.
    pub(super) fn close_room_fenced(&mut self, over: Over) {
        match self.live.info().room {
            Some(room) => self.ask(Ask::RoomClosed { room }, Pending::RoomClosed { over }),
            None => self.moved_away(),
        }
    }

    pub(super) fn room_closed_elsewhere(&mut self, over: Over, closed: bool) {
        if !closed {
            return self.moved_away();
        }
        self.live.finish(over);
        self.emit(&ServerMessage::Over(over), Some((over.version, None)));
        self.stop(CLOSE_ROOM_CLOSED, "the room closed");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_game_unloads_once_nobody_has_been_there_long_enough() {
        assert!(!idle_long_enough(None, 1_000, 10_000), "someone is there");
        assert!(!idle_long_enough(Some(9_500), 1_000, 10_000));
        assert!(idle_long_enough(Some(9_000), 1_000, 10_000));
    }

    #[test]
    fn a_finished_game_outside_a_room_unloads_within_seconds_of_its_players_going() {
        let window = 120_000;
        assert_eq!(unload_after_ms(false, false, false, window), window, "live");
        assert_eq!(unload_after_ms(false, false, true, window), window);
        assert_eq!(unload_after_ms(true, true, false, window), 0, "moved on");
        assert_eq!(unload_after_ms(true, true, true, window), 0);
        assert_eq!(unload_after_ms(true, false, true, window), window, "a room");
        assert_eq!(
            unload_after_ms(true, false, false, window),
            FINISHED_IDLE_MS
        );
        // A shorter idle window wins.
        assert_eq!(unload_after_ms(true, false, false, 2_000), 2_000);
    }

    #[test]
    fn a_finished_game_holds_its_place_only_while_a_rematch_may_still_come() {
        let until = 10_000;
        assert!(holds_place(9_999, until, false, false, true));
        assert!(!holds_place(10_000, until, false, false, true), "too late");
        assert!(
            !holds_place(0, until, true, false, true),
            "the rematch began"
        );
        assert!(
            !holds_place(0, until, false, true, true),
            "the room is closed"
        );
        assert!(
            !holds_place(0, until, false, false, false),
            "nobody is there"
        );
    }
}
