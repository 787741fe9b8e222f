//! What the matchmaking service's parts share, built once at start-up
//! (`app.rs`) and handed down to the routes, the sockets and the pairing
//! loops, which import it from here, below them.

use std::sync::{Arc, Mutex};

use mancala_platform::pubsub::PubSub;
use mancala_platform::{Admission, Clock, Redis};
use mancala_proto::lobby::LobbyStats;
use sqlx::PgPool;

use crate::config::MatchSettings;
use crate::game_room_client::GameRoomClient;
use crate::queue::pairing::PairingRules;

/// The service's shared state; cheap to clone.
#[derive(Clone)]
pub struct Context {
    pub postgres: PgPool,
    pub redis: Redis,
    pub pubsub: PubSub,
    pub clock: Clock,
    pub settings: Arc<MatchSettings>,
    pub game_room: GameRoomClient,
    pub rules: PairingRules,
    /// Whether the instance takes new work (sign-ins, queue entries, games).
    pub admission: Admission,
    /// The process's count of sockets nobody signed in for.
    pub anonymous_sockets: mancala_platform::open_sockets::AnonymousSockets,
    /// The lobby's figures, shared by every lobby socket of the instance.
    pub figures: Figures,
}

/// The lobby's figures as last read, and when (clock ms): every socket of
/// the instance pushes them every few seconds, and one read a second
/// serves them all (`stats`).
#[derive(Clone, Default)]
pub struct Figures(pub(crate) Arc<Mutex<Option<(u64, LobbyStats)>>>);
