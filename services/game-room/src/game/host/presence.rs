//! Who is here: the sockets of each seat, since when a player has been
//! away (the reconnect countdown), what the lobby counts as online and
//! playing, and what every socket of the game hears when someone comes or
//! goes.

use mancala_proto::ErrorCode;
use mancala_proto::bus::names;
use mancala_proto::game::ServerMessage;
use mancala_rules::Side;
use uuid::Uuid;

use super::{Host, Joined, REPLACED};
use crate::game::live::Refusal;

/// Each seat's countdown (ms left) at `now`, for players away since
/// `absent_since`, who have `limit_ms` to come back.
fn countdowns_at(absent_since: [Option<u64>; 2], limit_ms: u64, now: u64) -> [Option<u64>; 2] {
    absent_since.map(|since| since.map(|since| limit_ms.saturating_sub(now.saturating_sub(since))))
}

impl Host {
    /// A socket of `player` joins: their seats, or why they have none.
    pub(super) async fn join(&mut self, player: Uuid) -> Result<Joined, Refusal> {
        let seats = self.live.seats_of(player);
        if seats.is_empty() {
            return Err(if self.live.replaced(player) {
                Refusal::new(ErrorCode::NotAllowed, REPLACED)
            } else {
                Refusal::new(
                    ErrorCode::Forbidden,
                    "you hold no seat in this game; watch it instead",
                )
            });
        }
        let before = self.connected();
        for &seat in &seats {
            self.connections[seat.index()] += 1;
            self.absent_since[seat.index()] = None;
        }
        if self.idle_since.take().is_some() {
            self.room_occupied(true).await;
        }
        let joined = Joined {
            events: self.events.subscribe(),
            state: self.state(seats.first().copied()),
            seats,
        };
        self.mark_players().await;
        self.announce_presence(before).await;
        Ok(joined)
    }

    /// A socket of these seats closed.
    pub(super) async fn leave(&mut self, seats: Vec<Side>) {
        let before = self.connected();
        for seat in seats {
            let count = &mut self.connections[seat.index()];
            *count = count.saturating_sub(1);
        }
        let now = self.now();
        let counts = self.live.info().between_people();
        for (seat, was_here) in Side::BOTH.into_iter().zip(before) {
            if counts && was_here && self.connections[seat.index()] == 0 {
                self.absent_since[seat.index()] = Some(now);
                self.withdraw_offer(seat).await;
            }
        }
        // A room whose series moved on to its next game is not left empty
        // by the old game's sockets closing.
        if self.connections == [0, 0] {
            self.idle_since = Some(now);
            if self.live.rematch().is_none() {
                self.room_occupied(false).await;
            }
        }
        self.announce_presence(before).await;
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
        let limit = self.deps.settings.reconnect.as_millis() as u64;
        countdowns_at(self.absent_since, limit, self.now())
    }

    /// Counts this game's connected players as online and playing in the
    /// lobby's figures (entries expire unless refreshed, so a dead instance
    /// leaves no drift).
    pub(super) async fn mark_players(&self) {
        let until = self.now() + 30_000;
        let redis = &self.deps.redis;
        let mut pipe = redis::pipe();
        let mut marks = 0;
        for (seat, info) in self.live.info().seats.iter().enumerate() {
            let Some(player) = info.player.filter(|_| self.connections[seat] > 0) else {
                continue;
            };
            let player = player.to_string();
            marks += 1;
            pipe.zadd(redis.key(names::ONLINE), &player, until).ignore();
            if self.live.is_over() || info.ai.is_some() {
                pipe.zrem(redis.key(names::PLAYING), &player).ignore();
            } else {
                pipe.zadd(redis.key(names::PLAYING), &player, until)
                    .ignore();
            }
        }
        if marks == 0 {
            // Nobody here (Redis refuses an empty pipeline).
            return;
        }
        let marked: Result<(), _> = pipe.query_async(&mut redis.connection()).await;
        if let Err(error) = marked {
            tracing::warn!(%error, "counting players online");
        }
    }

    pub(super) async fn announce_presence(&mut self, before: [bool; 2]) {
        let now = self.connected();
        if now == before {
            return;
        }
        self.deps.hub.set_presence(self.live.id(), now).await;
        let countdowns = self.countdowns();
        for seat in Side::BOTH {
            if now[seat.index()] != before[seat.index()] {
                let message = ServerMessage::Presence {
                    seat,
                    connected: now[seat.index()],
                    countdown_ms: countdowns[seat.index()],
                };
                self.emit(&message, None).await;
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
