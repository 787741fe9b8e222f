//! What the game says: each event serialised once, sent to this
//! instance's sockets and published for watchers elsewhere, the recent
//! versioned events kept for `sync`, snapshots, and what comes back from
//! the game's channel (watcher counts, the rating change).

use bytestring::ByteString;
use mancala_proto::bus::{GameBus, Route};
use mancala_proto::game::ServerMessage;
use mancala_rules::Side;

use super::{Host, Outbound, RECENT_EVENTS, encode};
use crate::store;

impl Host {
    /// Watcher counts come from every instance through the hub; the other
    /// events on the channel are this task's own.
    pub(super) fn relay(&mut self, text: ByteString) {
        let Ok((route, start)) = GameBus::route(&text) else {
            return;
        };
        let payload = text.slice_ref(&text[start..]);
        match route {
            // Not on the host's channel (they are its own).
            Route::Event { .. } | Route::Notice => {}
            Route::Watchers { count } => {
                self.watchers = count;
                let _ = self.events.send(Outbound::Text(payload));
            }
            // From the rating service, for the players.
            Route::RatingChange => {
                self.rating_change = Some(payload.clone());
                let _ = self.events.send(Outbound::Text(payload));
            }
        }
    }

    /// The rating change of a finished rated game, for a socket joining
    /// it: as heard, or read back from the rating history (a page reloaded
    /// after the host was reloaded). `None` before the rating service has
    /// applied the game; it comes on the channel then.
    pub(super) async fn known_rating_change(&mut self) -> Option<ByteString> {
        if !self.live.is_over() || !self.live.info().rated {
            return None;
        }
        if self.rating_change.is_none() {
            let players = self.live.info().seats.clone().map(|seat| seat.player);
            match store::rating_changes(&self.deps.reads, self.live.id(), players).await {
                Ok(changes) if !changes.is_empty() => {
                    self.rating_change = Some(encode(&ServerMessage::RatingChange { changes }));
                }
                Ok(_) => {}
                Err(error) => tracing::warn!(%error, "reading a game's rating change"),
            }
        }
        self.rating_change.clone()
    }

    pub(super) fn state(&self, you: Option<Side>) -> ByteString {
        let state = self.live.state(
            you,
            self.connected(),
            self.watchers,
            self.countdowns(),
            self.now(),
        );
        encode(&ServerMessage::State(Box::new(state)))
    }

    pub(super) fn since(&self, since: u64, you: Option<Side>) -> Vec<ByteString> {
        if since >= self.live.version() {
            return Vec::new();
        }
        match self.recent.front() {
            Some((oldest, _, _)) if *oldest <= since + 1 => self
                .recent
                .iter()
                .filter(|(version, _, _)| *version > since)
                .map(|(_, _, text)| text.clone())
                .collect(),
            _ => vec![self.state(you)],
        }
    }

    /// Sends an event to this instance's sockets, then to the other
    /// instances through Redis. `versioned` is (version, the ply of a
    /// `moved`) for events a `sync` replays.
    pub(super) async fn emit(
        &mut self,
        message: &ServerMessage,
        versioned: Option<(u64, Option<u32>)>,
    ) {
        let text = encode(message);
        if let Some((version, ply)) = versioned {
            self.recent.push_back((version, ply, text.clone()));
            if self.recent.len() > RECENT_EVENTS {
                self.recent.pop_front();
            }
        }
        let _ = self.events.send(Outbound::Text(text.clone()));
        let route = match versioned {
            Some((version, _)) => Route::Event { version },
            None => Route::Notice,
        };
        self.deps.hub.publish(self.live.id(), route, &text).await;
    }
}
