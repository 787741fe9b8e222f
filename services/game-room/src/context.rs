//! What the service's parts share, built once at start-up (`app.rs`) and
//! handed down: the stores, the bus, the clock, the settings, the AI
//! workers, the group commit and admission control. Defined here, at the
//! root, over types of the layers below it, so that the parts that take
//! it (the game hosts, the sockets, the routes) import downward only.

use std::sync::Arc;

use mancala_platform::{Admission, Clock, Redis};
use sqlx::PgPool;

use crate::ai::AiPool;
use crate::config::GameRoomSettings;
use crate::hub::Hub;
use crate::lease::LeaseConnection;
use crate::store::GroupCommit;

/// The service's shared state; cheap to clone.
#[derive(Clone)]
pub struct Context {
    pub postgres: PgPool,
    /// Reads that may lag the primary (records and lists): a replica's
    /// pool when one is configured, else `postgres`.
    pub reads: PgPool,
    pub redis: Redis,
    pub hub: Hub,
    pub clock: Clock,
    pub settings: Arc<GameRoomSettings>,
    /// The process's AI workers.
    pub ai: AiPool,
    /// The instance's group commit: every hosted game writes through it.
    pub(crate) writer: GroupCommit,
    /// Whether the instance takes new work (games, watchers, analyses).
    pub admission: Admission,
    /// The process's count of sockets nobody signed in for.
    pub anonymous_sockets: mancala_platform::open_sockets::AnonymousSockets,
    /// Lease renewals' own Redis connection.
    pub leases: LeaseConnection,
}
