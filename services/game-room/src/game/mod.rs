//! Games in play: the pure model (`live`), the host that owns a game
//! while this instance serves it (`host`), this instance's hosted games
//! (`hosted`), and what counts for rating between games (`ranked`).
//! "Room" always means a friend room: a series of games between two
//! friends.

pub(crate) mod creation;
pub(crate) mod fair_play;
pub(crate) mod host;
pub mod hosted;
pub(crate) mod live;
pub(crate) mod ranked;
pub(crate) mod rematch;
pub(crate) mod replay;

pub use host::{GameHandle, Joined};
pub use hosted::{HostError, HostedGames};
pub use live::{GameInfo, LiveGame};
