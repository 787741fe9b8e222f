//! What the game says: each event serialised once, for this instance's
//! sockets and for watchers elsewhere, the recent versioned events kept
//! for `sync`, snapshots, and what comes back from the game's channel
//! (watcher counts, the rating change).

use bytestring::ByteString;
use mancala_proto::bus::{GameBus, Route};
use mancala_proto::game::ServerMessage;
use mancala_rules::Side;

use super::state::{Effect, HostState};
use super::{RECENT_EVENTS, encode};

impl HostState {
    /// Watcher counts come from every instance through the hub; the other
    /// events on the channel are this host's own.
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
                self.effect(Effect::Local(payload));
            }
            // From the rating service, for the players.
            Route::RatingChange => {
                self.rating_change = Some(payload.clone());
                self.effect(Effect::Local(payload));
            }
        }
    }

    /// The newest event a `sync` replays, and its version.
    pub(crate) fn latest_event(&self) -> Option<(u64, ByteString)> {
        let (version, _, text) = self.recent.back()?;
        Some((*version, text.clone()))
    }

    pub(super) fn state(&self, you: Option<Side>) -> ByteString {
        let state = self.live.state(
            you,
            self.connected(),
            self.watchers,
            self.countdowns(),
            self.now,
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

    /// An event for this instance's sockets and the other instances.
    /// `versioned` is (version, the ply of a `moved`) for events a `sync`
    /// replays.
    pub(super) fn emit(&mut self, message: &ServerMessage, versioned: Option<(u64, Option<u32>)>) {
        let text = encode(message);
        if let Some((version, ply)) = versioned {
            self.recent.push_back((version, ply, text.clone()));
            if self.recent.len() > RECENT_EVENTS {
                self.recent.pop_front();
            }
        }
        let version = versioned.map(|(version, _)| version);
        self.effect(Effect::Emit { text, version });
    }
}
