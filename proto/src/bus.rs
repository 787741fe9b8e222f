//! What the services say to each other through Redis, typed: every channel
//! and shared key is named here, once, and every message that crosses a
//! game's channel is a variant of [`GameBus`], with what a receiver routes
//! on (a version, a kind) carried beside the payload, so nobody parses a
//! payload to learn what it is. A player's channel carries
//! `LobbyServerMessage`s as they are.
//!
//! Names are unprefixed: each service adds its deployment's Redis prefix
//! (`mancala_platform::Redis::key`). A name's part in braces is its hash
//! tag: on a Redis Cluster it alone picks the slot, so what must live on
//! one shard shares a tag. A game's channels, lease, presence and watchers
//! carry the game's id (`{g:<id>}`), so a game touches one shard; the two
//! lobby counts share `{lobby}`, since a socket updates both at once.

/// Channel and key names.
pub mod names {
    use uuid::Uuid;

    /// A game's channel, for its watchers: its events, watcher counts and
    /// rating change.
    pub fn game_channel(game: Uuid) -> String {
        format!("game:{{g:{game}}}")
    }

    /// What a game's host hears: watcher counts and the rating change (also
    /// on [`game_channel`]). Apart from the events so that the host, which
    /// publishes every move, does not hear each one back.
    pub fn game_control_channel(game: Uuid) -> String {
        format!("game:{{g:{game}}}:control")
    }

    /// A player's channel: lobby messages for their lobby sockets
    /// (`matched`, or an error after a failed pairing), as JSON.
    pub fn player_channel(player: Uuid) -> String {
        format!("player:{player}")
    }

    /// An arena's channel: "its standings changed", for the instances
    /// whose sockets follow it.
    pub fn tournament_channel(tournament: Uuid) -> String {
        format!("tournament:{{t:{tournament}}}")
    }

    /// Wakes the rating workers: a rated game ended (the payload is its id).
    pub const RATINGS_CHANNEL: &str = "ratings";

    /// Players with a socket open, scored by when that stops counting.
    pub const ONLINE: &str = "lobby:{lobby}:online";

    /// Players in a live game, scored the same way.
    pub const PLAYING: &str = "lobby:{lobby}:playing";

    /// Live games someone is playing (a player at the board, not only an
    /// AI), scored the same way: the live lists show only these, so a game
    /// everyone has left leaves them at once, and a dead host's games
    /// within half a minute.
    pub const OCCUPIED: &str = "lobby:{lobby}:occupied";

    /// Which seats of a game have a player connected.
    pub fn presence(game: Uuid) -> String {
        format!("presence:{{g:{game}}}")
    }

    /// A game's watchers per instance.
    pub fn watchers(game: Uuid) -> String {
        format!("watchers:{{g:{game}}}")
    }

    /// The host lease of a game.
    pub fn game_lease(game: Uuid) -> String {
        format!("lease:game:{{g:{game}}}")
    }

    /// Where each game-room instance is reached.
    pub const INSTANCES: &str = "instances";
}

#[cfg(test)]
mod name_tests {
    use super::names;

    /// The hash tag of a name: what is between its first `{` and the next `}`.
    fn tag(name: &str) -> &str {
        let open = name.find('{').map_or(0, |at| at + 1);
        let close = name[open..].find('}').map_or(name.len(), |at| open + at);
        &name[open..close]
    }

    #[test]
    fn what_one_game_touches_shares_its_tag() {
        let game = uuid::Uuid::now_v7();
        let names = [
            names::game_channel(game),
            names::game_control_channel(game),
            names::presence(game),
            names::watchers(game),
            names::game_lease(game),
        ];
        assert!(
            names.iter().all(|name| tag(name) == format!("g:{game}")),
            "{names:?}"
        );
        assert_eq!(tag(names::ONLINE), tag(names::PLAYING));
    }
}

/// What crosses a game's channel. The payload is the socket message
/// itself, already serialised: receivers pass it on as it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GameBus {
    /// An event of the game (`moved`, `undone`, `taken_over`, `over`),
    /// published by its host, with its version.
    Event { version: u64, message: String },
    /// A message of the game's host that no `sync` replays (presence,
    /// rematch offers, a player leaving the room).
    Notice { message: String },
    /// How many watch the game (`watchers`), across instances.
    Watchers { count: u32, message: String },
    /// The players' rating change (`rating_change`), from the rating
    /// service.
    RatingChange { message: String },
}

/// A bus message that does not decode: another version of the code sent
/// it, or something else uses the channel.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("not a bus message: {0}")]
pub struct Undecodable(String);

impl GameBus {
    /// One line of routing, a newline, then the payload: cheap to write
    /// and to route, and the payload needs no escaping.
    pub fn encode(&self) -> String {
        let (route, message) = match self {
            GameBus::Event { version, message } => (Route::Event { version: *version }, message),
            GameBus::Notice { message } => (Route::Notice, message),
            GameBus::Watchers { count, message } => (Route::Watchers { count: *count }, message),
            GameBus::RatingChange { message } => (Route::RatingChange, message),
        };
        GameBus::encode_parts(route, message)
    }

    /// [`GameBus::encode`] from a route and a borrowed payload: what a
    /// host publishes per move, with one copy of the payload.
    pub fn encode_parts(route: Route, message: &str) -> String {
        let head = match route {
            Route::Event { version } => format!("event {version}"),
            Route::Notice => "notice".to_owned(),
            Route::Watchers { count } => format!("watchers {count}"),
            Route::RatingChange => "rating_change".to_owned(),
        };
        let mut text = String::with_capacity(head.len() + 1 + message.len());
        text.push_str(&head);
        text.push('\n');
        text.push_str(message);
        text
    }

    /// The routing line and where the payload starts in `text`: for
    /// receivers that keep the payload without copying it.
    pub fn route(text: &str) -> Result<(Route, usize), Undecodable> {
        let bad = || Undecodable(text.chars().take(40).collect());
        let (head, _) = text.split_once('\n').ok_or_else(bad)?;
        let (kind, number) = head.split_once(' ').unwrap_or((head, ""));
        let route = match kind {
            "event" => Route::Event {
                version: number.parse().map_err(|_| bad())?,
            },
            "notice" => Route::Notice,
            "watchers" => Route::Watchers {
                count: number.parse().map_err(|_| bad())?,
            },
            "rating_change" => Route::RatingChange,
            _ => return Err(bad()),
        };
        Ok((route, head.len() + 1))
    }

    pub fn decode(text: &str) -> Result<GameBus, Undecodable> {
        let (route, start) = GameBus::route(text)?;
        let message = text[start..].to_owned();
        Ok(match route {
            Route::Event { version } => GameBus::Event { version, message },
            Route::Notice => GameBus::Notice { message },
            Route::Watchers { count } => GameBus::Watchers { count, message },
            Route::RatingChange => GameBus::RatingChange { message },
        })
    }
}

/// What a [`GameBus`] message is, without its payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    Event { version: u64 },
    Notice,
    Watchers { count: u32 },
    RatingChange,
}

impl Route {
    /// Whether the game's host hears a message of this route on its own
    /// channel (`game_control_channel`): watcher counts and the rating
    /// change are for it; the events are its own.
    pub const fn for_the_host(self) -> bool {
        matches!(self, Route::Watchers { .. } | Route::RatingChange)
    }

    /// The channels a message of this route about `game` goes to.
    pub fn channels(self, game: uuid::Uuid) -> impl Iterator<Item = String> {
        let host = self
            .for_the_host()
            .then(|| names::game_control_channel(game));
        host.into_iter().chain([names::game_channel(game)])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_round_trip_and_route_without_parsing_the_payload() {
        let payload = r#"{"t":"moved","d":{"ply":3}}"#.to_owned();
        for message in [
            GameBus::Event {
                version: 7,
                message: payload.clone(),
            },
            GameBus::Watchers {
                count: 12,
                message: payload.clone(),
            },
            GameBus::Notice {
                message: payload.clone(),
            },
            GameBus::RatingChange {
                message: "line one\nline two".to_owned(),
            },
        ] {
            let text = message.encode();
            assert_eq!(GameBus::decode(&text), Ok(message.clone()));
        }
        let text = GameBus::Event {
            version: 42,
            message: payload.clone(),
        }
        .encode();
        let (route, start) = GameBus::route(&text).unwrap();
        assert_eq!(route, Route::Event { version: 42 });
        assert_eq!(&text[start..], payload);
        for bad in [
            "",
            "event\n{}",
            "event x\n{}",
            "moved 3\n{}",
            r#"{"t":"moved"}"#,
        ] {
            assert!(GameBus::decode(bad).is_err(), "{bad:?}");
        }
    }
}
