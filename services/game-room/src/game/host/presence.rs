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
            rating_change: self.known_rating_change().await,
        };
        self.mark_players(&[]).await;
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
        let mut gone = Vec::new();
        for (seat, was_here) in Side::BOTH.into_iter().zip(before) {
            if !was_here || self.connections[seat.index()] > 0 {
                continue;
            }
            gone.extend(self.live.info().seats[seat.index()].player);
            if counts {
                self.absent_since[seat.index()] = Some(now);
                self.withdraw_offer(seat).await;
            }
        }
        // Told at once, not at the next renewal: the lobby's lists and
        // figures must not show a game nobody is playing any more.
        self.mark_players(&gone).await;
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
    /// lobby's figures, and the game as occupied in the live lists while a
    /// player is at the board (entries expire unless refreshed, so a dead
    /// instance leaves no drift). `gone` are players whose last socket
    /// here just closed: they stop counting as playing at once. (One still
    /// at another game counts again at that game's next renewal, seconds
    /// later: a short undercount rather than a ghost.)
    pub(super) async fn mark_players(&mut self, gone: &[Uuid]) {
        let until = self.now() + 30_000;
        let redis = &self.deps.redis;
        let playing_key = redis.key(names::PLAYING);
        let mut pipe = redis::pipe();
        let mut commands = 0;
        let mut occupied = false;
        for (seat, info) in self.live.info().seats.iter().enumerate() {
            let Some(player) = info.player.filter(|_| self.connections[seat] > 0) else {
                continue;
            };
            let player = player.to_string();
            commands += 2;
            pipe.zadd(redis.key(names::ONLINE), &player, until).ignore();
            if self.live.is_over() || info.ai.is_some() {
                pipe.zrem(&playing_key, &player).ignore();
            } else {
                occupied = true;
                pipe.zadd(&playing_key, &player, until).ignore();
            }
        }
        for player in gone
            .iter()
            .filter(|&&player| !self.connected_player(player))
        {
            commands += 1;
            pipe.zrem(&playing_key, player.to_string()).ignore();
        }
        let game = self.live.id().to_string();
        if occupied {
            commands += 1;
            pipe.zadd(redis.key(names::OCCUPIED), &game, until).ignore();
        } else if self.listed {
            commands += 1;
            pipe.zrem(redis.key(names::OCCUPIED), &game).ignore();
        }
        if commands == 0 {
            // Nothing to say (Redis refuses an empty pipeline).
            return;
        }
        let marked: Result<(), _> = pipe.query_async(&mut redis.connection()).await;
        match marked {
            Ok(()) => self.listed = occupied,
            Err(error) => tracing::warn!(%error, "counting players online"),
        }
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
